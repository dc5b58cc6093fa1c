"""The installed console scripts, run as a user runs them: from a folder outside the project.

There the project root is not on ``sys.path``, so an installed distribution's top-level
package of the same name as an app would shadow it (pysbd's ``benchmarks`` did, and
``enterpriseval egi_load_roster`` answered "Unknown command"). One command of every app that
has management commands runs for real where that is cheap, else its ``help``.

The scripts run the code their install points at: after a change of the package list or of
the entry points, reinstall (``make setup``); to try another checkout with the same venv, set
``PYTHONPATH`` to it (the subprocesses inherit it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
ROSTER_MODELS = 12
# Commands cheap enough to run for real on a new database; any other is asked for its help.
REAL_RUNS = {
    "verify_audit": [],
    "gate": [
        "--input",
        str(ROOT / "examples" / "credit_memo" / "llama-4.yaml"),
        "--format",
        "json",
    ],
    "reevaluation_check": [],
    "demo_logins": [],
}
APPS_WITH_COMMANDS = {"audit", "runs", "grading", "gates", "scorecards", "egibench"}


def script(name: str) -> Path:
    """Return the venv's console script ``name``, failing if it is missing or out of date."""
    path = Path(sys.executable).with_name(name)
    assert path.exists(), f"{path}: not installed (make setup)"
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"][name]
    installed = {e.name: e.value for e in entry_points(group="console_scripts")}.get(name)
    assert installed == declared, (
        f"{name} is installed as {installed!r} but pyproject.toml declares {declared!r}: "
        "reinstall (make setup)"
    )
    return path


@pytest.fixture
def outside(tmp_path: Path) -> dict[str, str]:
    """Return the environment of a user in ``tmp_path`` with a new SQLite database there."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'enterpriseval.sqlite3'}",
        "ENTERPRISEVAL_VAR_DIR": str(tmp_path / "var"),
        "ENTERPRISEVAL_OUT_DIR": str(tmp_path / "out"),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)  # the script's own default, as for a user
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def one_command_per_app() -> dict[str, list[str]]:
    """Return, per project app with management commands, the arguments of one of them."""
    inside = {
        config.name
        for config in apps.get_app_configs()
        if Path(config.path).resolve().is_relative_to(ROOT)
    }
    commands: dict[str, list[str]] = {}
    for command, app in sorted(get_commands().items()):
        if app in inside:
            commands.setdefault(app, []).append(command)
    chosen = {}
    for app, names in commands.items():
        real = [name for name in REAL_RUNS if name in names]
        chosen[app] = [real[0], *REAL_RUNS[real[0]]] if real else ["help", names[0]]
    return chosen


def test_enterpriseval_runs_a_command_of_every_app_from_outside_the_project(
    tmp_path: Path, outside: dict[str, str]
) -> None:
    enterpriseval = str(script("enterpriseval"))
    migrated = run([enterpriseval, "migrate", "--noinput"], outside, tmp_path)
    assert migrated.returncode == 0, migrated.stderr

    loaded = run([enterpriseval, "egi_load_roster"], outside, tmp_path)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert f"{ROSTER_MODELS} models, {ROSTER_MODELS} stored" in loaded.stdout
    counted = run(
        [
            enterpriseval,
            "shell",
            "--no-imports",
            "-c",
            "import egibench; from egibench.models import EgiResult; "
            "print(egibench.__file__); print(EgiResult.objects.count())",
        ],
        outside,
        tmp_path,
    )
    assert counted.returncode == 0, counted.stderr
    location, count = counted.stdout.split()[-2:]
    assert Path(location).resolve().is_relative_to(ROOT), (
        f"the script imports {location}, not this checkout: reinstall, or set PYTHONPATH"
    )
    assert int(count) == ROSTER_MODELS

    chosen = one_command_per_app()
    assert chosen.keys() >= APPS_WITH_COMMANDS
    del chosen["egibench"]  # egi_load_roster ran above
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(
            zip(
                chosen,
                pool.map(
                    lambda argv: run([enterpriseval, *argv], outside, tmp_path), chosen.values()
                ),
                strict=True,
            )
        )
    for app, result in done.items():
        output = result.stdout + result.stderr
        assert result.returncode == 0 and "Unknown command" not in output, (
            f"{app}: enterpriseval {' '.join(chosen[app])}: {output}"
        )
    assert json.loads(done["gates"].stdout)["decision"]
    assert "chain intact" in done["audit"].stdout


def test_egi_bench_doctor_finds_the_shipped_routing_from_outside_the_project(
    tmp_path: Path, outside: dict[str, str]
) -> None:
    result = run([str(script("egi-bench")), "doctor"], outside, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{Path('egibench', 'routing.yaml')}: well-posed" in result.stdout
