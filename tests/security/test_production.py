"""Issue 17 finding 11: production mode serves its pages after the documented set-up.

docs/operations.md: set the environment, run ``collectstatic``, start the WSGI server. Each
step runs here in a fresh process with production settings and its own var/ folder. Not
marked slow, so CI runs it: ``collectstatic`` costs about a minute of CPU (compression).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "eval.bank.example"

PAGES = f"""
import django
django.setup()
from django.test import Client
from django.contrib.staticfiles.storage import staticfiles_storage
from enterpriseval.wsgi import application  # refuses to start without collected files
client = Client(HTTP_HOST="{HOST}")
insecure = client.get("/accounts/login/")
page = client.get("/accounts/login/", secure=True)
css = staticfiles_storage.url("enterpriseval/app.css")
static = client.get(css, secure=True)
print(insecure.status_code, insecure.get("Location"))
print(page.status_code, page.get("Strict-Transport-Security"))
print(css, static.status_code, static.get("Cache-Control"))
print("Sign in" in page.content.decode())
"""


def production(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "ENTERPRISEVAL_", "DATABASE_URL", "SECRET_KEY"))
    }
    env.update(
        ENTERPRISEVAL_ENV="production",
        ENTERPRISEVAL_VAR_DIR=str(tmp_path / "var"),
        SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS=HOST,
        DJANGO_SETTINGS_MODULE="enterpriseval.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        **extra,
    )
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_production_pages_and_static_files_work_after_collectstatic(tmp_path):
    env = production(tmp_path)
    before = run(["-c", PAGES], env)
    assert before.returncode != 0
    assert "run `manage.py collectstatic --noinput`" in before.stderr

    collected = run(["manage.py", "collectstatic", "--noinput"], env)
    assert collected.returncode == 0, collected.stderr
    assert (tmp_path / "var" / "static" / "staticfiles.json").exists()

    checked = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no issues" in checked.stdout

    served = run(["-c", PAGES], env)
    assert served.returncode == 0, served.stderr
    redirect, page, static, signed_in_form = served.stdout.strip().splitlines()
    assert redirect == f"301 https://{HOST}/accounts/login/"
    assert page == "200 max-age=31536000; includeSubDomains; preload"
    css_url, css_status, cache = static.split(" ", 2)
    assert (
        css_url.startswith("/static/enterpriseval/app.")
        and css_url != "/static/enterpriseval/app.css"
    )
    assert css_status == "200"
    assert "immutable" in cache  # WhiteNoise's far-future caching of hashed names
    assert signed_in_form == "True"
