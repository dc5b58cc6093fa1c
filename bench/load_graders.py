"""``make bench-load``: graders autosaving against gunicorn on PostgreSQL (issue 17, capacity).

Sets up its own PostgreSQL database (``--database-url``, default ``ev_load``: dropped, created,
migrated), the demo's credit-memo use case and one grading session over both σ's graded
outputs (4 assignments per grader for 50 graders), and ``--graders`` grader accounts. Then,
for each gunicorn configuration of ``--configs``, it starts gunicorn on 127.0.0.1 with the
production settings (``ENTERPRISEVAL_ENV=production``, DEBUG off, static files collected and
served by WhiteNoise), as behind the TLS-terminating proxy docs/operations.md describes
(``DJANGO_BEHIND_TLS_PROXY=true``; each request carries ``X-Forwarded-Proto: https`` and comes
on a new connection, as nginx opens them to its upstream by default), and measures two phases:

- realistic pace: every grader sends the workspace's autosave (``POST
  /api/v1/grading/assignments/ID/grades/`` with one change, ``X-CSRFToken`` from the cookie,
  as grading/static/grading/workspace.js sends it) once every ``--pace`` seconds for
  ``--pace-seconds``: latency p50/p95/p99 and errors. Target: p95 < 200 ms.
- saturation: every grader saves again as soon as the last save is answered, for
  ``--saturation-seconds``: throughput (saves/s) and latency.

Each grader signs in once, through the sign-in form with its CSRF token as the browser does
(django-axes counts only failures; sessions live in the database, so they outlast restarts of
gunicorn), opens its workspace page and reads its assignment from the API. After each phase
every grader's grades are read back from the API and compared with the last value it sent for
each field: a lost save is counted. Exits 1 when the first configuration (the documented
default) misses the target, or when any save fails or is lost.

Beside each phase: gunicorn's CPU time per save (its master and workers, from /proc: what a
save costs whatever else the machine runs) and the client's share of a core (one asyncio
process, aiohttp on uvloop, on the same machine), with the load average before and after,
since on a shared machine the latencies are noisy. gunicorn is stopped on exit, on Ctrl-C
and on SIGTERM; the database is dropped unless ``--keep-database``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import math
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from types import FrameType
from typing import Any

from bench.cases_pages import ms, percentile
from bench.workers import recreate_database

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/ev_load"
DEFAULT_CONFIGS = "gthread:2x8@60,gthread:2x8,sync:3"
TARGET_P95_S = 0.200
SIGN_IN_CONCURRENCY = 4  # password hashing is CPU work; signing 50 in at once proves nothing
REQUEST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ServerConfig:
    """One gunicorn configuration: ``sync:5`` (5 sync workers) or ``gthread:2x8``, with
    ``@SECONDS`` for persistent database connections (``CONN_MAX_AGE``, default 0: a new
    connection per request)."""

    worker_class: str
    workers: int
    threads: int
    conn_max_age: int = 0

    @classmethod
    def parse(cls, text: str) -> ServerConfig:
        text, _, age = text.partition("@")
        worker_class, _, size = text.partition(":")
        workers, _, threads = size.partition("x")
        if age and not age.isdigit():
            raise ValueError(f"--configs: {text!r}: @SECONDS is CONN_MAX_AGE, got {age!r}")
        if worker_class not in ("sync", "gthread") or not workers.isdigit():
            raise ValueError(f"--configs: {text!r} is not sync:WORKERS or gthread:WORKERSxTHREADS")
        if worker_class == "sync" and threads:
            raise ValueError(f"--configs: {text!r}: sync workers have one thread each")
        if worker_class == "gthread" and not threads.isdigit():
            raise ValueError(f"--configs: {text!r}: give gthread:WORKERSxTHREADS")
        return cls(worker_class, int(workers), int(threads or 1), int(age or 0))

    @property
    def label(self) -> str:
        if self.worker_class == "sync":
            shape = f"{self.workers} sync workers"
        else:
            shape = f"{self.workers} gthread workers × {self.threads} threads"
        return f"{shape}, CONN_MAX_AGE={self.conn_max_age}"

    def database_url(self, url: str) -> str:
        if not self.conn_max_age:
            return url
        joiner = "&" if "?" in url else "?"
        return f"{url}{joiner}conn_max_age={self.conn_max_age}&conn_health_checks=True"

    def argv(self, port: int, log: Path) -> list[str]:
        return [
            str(Path(sys.executable).with_name("gunicorn")),
            "enterpriseval.wsgi",
            f"--bind={HOST}:{port}",
            f"--worker-class={self.worker_class}",
            f"--workers={self.workers}",
            f"--threads={self.threads}",
            "--timeout=60",
            "--graceful-timeout=5",
            "--log-level=warning",
            f"--error-logfile={log}",
        ]


@dataclass
class Grader:
    """One signed-in grader: cookies as the browser keeps them, and what it autosaves."""

    username: str
    assignment: str
    cookies: dict[str, str] = field(default_factory=dict)
    fields: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    step: int = 0
    sent: dict[tuple[str, str], str] = field(default_factory=dict)

    def cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def keep(self, cookies: SimpleCookie) -> None:
        for name, morsel in cookies.items():
            self.cookies[name] = morsel.value

    def next_change(self) -> dict[str, str]:
        unit_key, name, values = self.fields[self.step % len(self.fields)]
        value = values[(self.step // len(self.fields) + 1) % len(values)]
        self.step += 1
        self.sent[(unit_key, name)] = value
        return {"unit_key": unit_key, "field": name, "value": value}


@dataclass
class Phase:
    """What one phase measured."""

    name: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    lost: int = 0
    client_cpu: float = 0.0
    server_cpu: float = 0.0

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def row(self) -> str:
        if not self.latencies:
            return f"{self.name:<12} no save answered; errors {dict(self.errors)}"
        q = [percentile(self.latencies, p) for p in (0.50, 0.95, 0.99)]
        errors = sum(self.errors.values())
        return (
            f"{self.name:<12} {len(self.latencies):>6} {self.throughput:>7.1f}/s "
            f"{ms(q[0])} {ms(q[1])} {ms(q[2])} {ms(max(self.latencies))} "
            f"{errors:>6} {self.lost:>5} {ms(self.server_cpu / len(self.latencies))} "
            f"{self.client_cpu / self.seconds:>6.0%}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--graders", type=int, default=50)
    parser.add_argument("--pace", type=float, default=2.0, help="seconds between one's saves")
    parser.add_argument("--pace-seconds", type=float, default=20.0)
    parser.add_argument("--saturation-seconds", type=float, default=10.0)
    parser.add_argument(
        "--configs",
        default=DEFAULT_CONFIGS,
        help="comma-separated sync:WORKERS or gthread:WORKERSxTHREADS, each with @SECONDS for "
        "persistent database connections (CONN_MAX_AGE); the first is the default held to the "
        f"target (default {DEFAULT_CONFIGS})",
    )
    parser.add_argument("--keep-database", action="store_true")
    options = parser.parse_args()
    try:
        configs = [ServerConfig.parse(text) for text in options.configs.split(",")]
    except ValueError as error:
        parser.error(str(error))
    if not options.database_url.startswith("postgres"):
        parser.error("--database-url: a postgres:// URL (the load test measures PostgreSQL)")
    if not 2 <= options.graders <= 260:
        parser.error("--graders: between 2 and 260 (the session draws at most 65 outputs per σ)")

    def stop(_signum: int, _frame: FrameType | None) -> None:
        # As Ctrl-C: asyncio.run turns SIGINT into cancelling the load and KeyboardInterrupt
        # (an exception raised in this handler would be swallowed by the event loop).
        os.kill(os.getpid(), signal.SIGINT)

    signal.signal(signal.SIGTERM, stop)
    env = production_environment(options.database_url)
    os.environ.update(env)
    print(f"{os.cpu_count()} CPUs, {uptime()}", flush=True)
    recreate_database(options.database_url)
    try:
        password, graders = build(options.graders)
        collect_static(env)
        return measure(options, configs, env, password, graders)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if not options.keep_database:
            from django.db import connections

            connections.close_all()
            drop_database(options.database_url)


def production_environment(database_url: str) -> dict[str, str]:
    """Return the environment of the server and of the set-up: production, DEBUG off."""
    var = ROOT / "var" / "bench-load"
    return {
        "DJANGO_SETTINGS_MODULE": "enterpriseval.settings",
        "ENTERPRISEVAL_ENV": "production",
        "DJANGO_DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": HOST,
        "DJANGO_BEHIND_TLS_PROXY": "true",
        "DATABASE_URL": database_url,
        "ENTERPRISEVAL_VAR_DIR": str(var),
        "CACHE_URL": f"filecache://{var / 'cache'}",
        "EMAIL_URL": "dummymail://",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def build(count: int) -> tuple[str, list[Grader]]:
    """Migrate; create the use case, ``count`` graders and a session; return their logins."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from charters.models import Role
    from charters.services.use_cases import membership_grant
    from demo.loaders import demo_evaluation_object
    from grading.models import Assignment
    from grading.services.sessions import session_create
    from runs.services.outputs import output_import

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    example = Path(settings.BASE_DIR) / "examples" / "credit_memo"
    objects = demo_evaluation_object(example_dir=example, log=lambda _line: None)
    users = get_user_model().objects
    owner, model_owner, adjudicator = (
        users.get(username=name) for name in ("demo-owner", "demo-model-owner", "demo-adjudicator")
    )
    password = secrets.token_urlsafe(16)
    hashed = make_password(password)  # one hash for all: set-up time is not what is measured
    accounts = []
    for n in range(1, count + 1):
        user = users.create(username=f"load-grader-{n:03d}", password=hashed)
        membership_grant(actor=owner, use_case=objects.use_case, user=user, role=Role.GRADER)
        accounts.append(user)
    runs = [
        output_import(
            actor=model_owner,
            use_case=objects.use_case,
            configuration=configuration,
            task_set=objects.task_set,
            split="graded",
            repeats=1,
            fileobj=io.BytesIO((example / f"outputs-{sigma}.jsonl").read_bytes()),
            filename=f"outputs-{sigma}.jsonl",
        )
        for sigma, configuration in objects.configurations.items()
    ]
    # Two σ arms and two graders per artefact: 4 × sample_size assignments, 4 per grader.
    sample_size = min(65, count)
    session = session_create(
        actor=owner,
        use_case=objects.use_case,
        name="Load test round",
        runs=runs,
        graders=accounts,
        adjudicators=[adjudicator],
        sample_size=sample_size,
        seed=17,
    )
    graders = []
    for user in accounts:
        first = Assignment.objects.filter(session=session, grader=user).order_by("position")
        graders.append(Grader(username=user.username, assignment=first[0].public_id))
    total = Assignment.objects.filter(session=session).count()
    print(
        f"set up in {time.perf_counter() - started:.1f} s: {count} graders, session of "
        f"{total} assignments ({total / count:.1f} per grader)",
        flush=True,
    )
    return password, graders


def collect_static(env: dict[str, str]) -> None:
    """Run ``collectstatic`` unless its manifest is newer than every static file of ours."""
    static = Path(env["ENTERPRISEVAL_VAR_DIR"]) / "static"
    manifest = static / "staticfiles.json"
    ours = [p for pattern in ("static/**/*", "*/static/**/*") for p in ROOT.glob(pattern)]
    newest = max((p.stat().st_mtime for p in ours if p.is_file()), default=0.0)
    if manifest.exists() and manifest.stat().st_mtime > newest:
        return
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity=0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )
    print(f"collectstatic in {time.perf_counter() - started:.1f} s", flush=True)


def measure(
    options: argparse.Namespace,
    configs: list[ServerConfig],
    env: dict[str, str],
    password: str,
    graders: list[Grader],
) -> int:
    from django.db import connections

    connections.close_all()  # the server's connections only, from here on
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    results: list[tuple[ServerConfig, list[Phase]]] = []
    signed_in = False
    for config in configs:
        with gunicorn(config, env) as (base, pid):
            if not signed_in:
                started = time.perf_counter()
                asyncio.run(sign_in_all(base, graders, password))
                print(
                    f"{len(graders)} graders signed in in {time.perf_counter() - started:.1f} s",
                    flush=True,
                )
                signed_in = True
            phases = asyncio.run(load(base, pid, graders, options))
        results.append((config, phases))
        print(f"{config.label}: done; {uptime()}", flush=True)
    return report(options, results)


@contextmanager
def gunicorn(config: ServerConfig, env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """Start gunicorn with ``config`` on a free port; yield its base URL and pid; stop it."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port = probe.getsockname()[1]
    log = Path(env["ENTERPRISEVAL_VAR_DIR"]) / "gunicorn.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    server = subprocess.Popen(
        config.argv(port, log),
        cwd=ROOT,
        env={**os.environ, **env, "DATABASE_URL": config.database_url(env["DATABASE_URL"])},
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # Ctrl-C reaches this process, which stops the server
    )
    base = f"http://{HOST}:{port}"
    try:
        wait_until_ready(server, base, log)
        yield base, server.pid
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        if server.returncode not in (0, -signal.SIGTERM):
            print(
                f"gunicorn exited {server.returncode}: {log.read_text()[-2000:]}", file=sys.stderr
            )


def wait_until_ready(server: subprocess.Popen[bytes], base: str, log: Path) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + 60
    request = urllib.request.Request(f"{base}/healthz", headers={"X-Forwarded-Proto": "https"})
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited {server.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer /healthz within 60 s: {log.read_text()[-2000:]}")


def client(base: str) -> Any:
    """An aiohttp session opening a connection per request, keeping no cookies of its own."""
    import aiohttp

    return aiohttp.ClientSession(
        base_url=base,
        connector=aiohttp.TCPConnector(limit=0, force_close=True),
        cookie_jar=aiohttp.DummyCookieJar(),
        timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
    )


def headers(base: str, grader: Grader, **extra: str) -> dict[str, str]:
    origin = base.replace("http://", "https://")
    return {
        "X-Forwarded-Proto": "https",
        "Origin": origin,
        "Referer": f"{origin}/grading/a/{grader.assignment}/",
        "Cookie": grader.cookie_header(),
        **extra,
    }


async def sign_in_all(base: str, graders: list[Grader], password: str) -> None:
    gate = asyncio.Semaphore(SIGN_IN_CONCURRENCY)
    async with client(base) as http:

        async def one(grader: Grader) -> None:
            async with gate:
                await sign_in(http, base, grader, password)

        await asyncio.gather(*(one(grader) for grader in graders))


async def sign_in(http: Any, base: str, grader: Grader, password: str) -> None:
    """Sign in through the form, open the workspace and read the assignment, as a browser."""
    import re

    async with http.get("/accounts/login/", headers=headers(base, grader)) as page:
        html = await page.text()
        grader.keep(page.cookies)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    if page.status != 200 or token is None:
        raise RuntimeError(f"{grader.username}: the sign-in page answered {page.status}")
    form = {"csrfmiddlewaretoken": token[1], "username": grader.username, "password": password}
    async with http.post(
        "/accounts/login/", data=form, headers=headers(base, grader), allow_redirects=False
    ) as answer:
        grader.keep(answer.cookies)
        if answer.status != 302 or "sessionid" not in grader.cookies:
            raise RuntimeError(f"{grader.username}: sign-in answered {answer.status}")
    async with http.get(f"/grading/a/{grader.assignment}/", headers=headers(base, grader)) as ws:
        await ws.read()
        if ws.status != 200:
            raise RuntimeError(f"{grader.username}: the workspace answered {ws.status}")
    detail = await read_assignment(http, base, grader)
    values = {spec["name"]: tuple(spec["values"]) for spec in detail["rubric"]}
    from grading.rubric import DEPENDS_ON

    linked = set(DEPENDS_ON) | set(DEPENDS_ON.values())
    grader.fields = [
        (unit["key"], name, values[name])
        for unit in detail["units"]
        for name in unit["asks"]
        if name not in linked
    ]


async def read_assignment(http: Any, base: str, grader: Grader) -> dict[str, Any]:
    url = f"/api/v1/grading/assignments/{grader.assignment}/"
    async with http.get(url, headers=headers(base, grader, Accept="application/json")) as answer:
        if answer.status != 200:
            raise RuntimeError(f"{grader.username}: {url} answered {answer.status}")
        detail: dict[str, Any] = await answer.json()
    return detail


async def save(http: Any, base: str, grader: Grader, elapsed: float, phase: Phase) -> None:
    """Send one autosave as workspace.js does; record its latency or its error."""
    import aiohttp

    body = {"changes": [grader.next_change()], "elapsed_seconds": elapsed, "reason": ""}
    extra = {"Accept": "application/json", "X-CSRFToken": grader.cookies["csrftoken"]}
    started = time.perf_counter()
    try:
        async with http.post(
            f"/api/v1/grading/assignments/{grader.assignment}/grades/",
            json=body,
            headers=headers(base, grader, **extra),
        ) as answer:
            await answer.read()
            status = answer.status
    except (aiohttp.ClientError, TimeoutError) as error:
        phase.errors[type(error).__name__] += 1
        return
    if status == 200:
        phase.latencies.append(time.perf_counter() - started)
    else:
        phase.errors[f"HTTP {status}"] += 1


async def load(
    base: str, server: int, graders: list[Grader], options: argparse.Namespace
) -> list[Phase]:
    """Warm the workers up, then run the paced phase and the saturation phase."""
    rng = random.Random(17)
    async with client(base) as http:
        warm = Phase("warm-up")
        await asyncio.gather(*(save(http, base, g, 0.0, warm) for g in graders))

        async def paced(grader: Grader, phase: Phase, until: float) -> None:
            due = time.perf_counter() + rng.uniform(0, options.pace)  # graders do not align
            while due < until:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                await save(http, base, grader, options.pace, phase)
                due = max(due + options.pace, time.perf_counter())  # one save in flight each

        async def flat_out(grader: Grader, phase: Phase, until: float) -> None:
            while time.perf_counter() < until:
                await save(http, base, grader, 0.0, phase)

        phases = []
        for phase, run, seconds in (
            (Phase("pace"), paced, options.pace_seconds),
            (Phase("saturation"), flat_out, options.saturation_seconds),
        ):
            started, cpu, served = time.perf_counter(), time.process_time(), server_cpu(server)
            until = started + seconds
            await asyncio.gather(*(run(grader, phase, until) for grader in graders))
            phase.seconds = time.perf_counter() - started
            phase.client_cpu = time.process_time() - cpu
            phase.server_cpu = server_cpu(server) - served
            phase.lost = await lost_saves(http, base, graders)
            phases.append(phase)
    return phases


async def lost_saves(http: Any, base: str, graders: list[Grader]) -> int:
    """Count fields whose stored grade is not the last value the grader sent."""
    lost = 0
    for grader in graders:
        grades = (await read_assignment(http, base, grader))["grades"]
        for (unit_key, name), value in grader.sent.items():
            lost += grades.get(unit_key, {}).get(name) != value
    return lost


def report(options: argparse.Namespace, results: list[tuple[ServerConfig, list[Phase]]]) -> int:
    print(
        f"\n{options.graders} graders; pace: one save each every {options.pace:g} s for "
        f"{options.pace_seconds:g} s; saturation: saves back to back for "
        f"{options.saturation_seconds:g} s"
    )
    print(
        f"{'phase':<12} {'saves':>6} {'rate':>9} {'p50':>9} {'p95':>9} {'p99':>9} {'max':>9} "
        f"{'errors':>6} {'lost':>5} {'CPU/save':>9} {'client':>6}"
    )
    failed = False
    for n, (config, phases) in enumerate(results):
        print(f"— {config.label}{' (default)' if n == 0 else ''}")
        for phase in phases:
            print(phase.row())
            failed |= bool(phase.errors) or phase.lost > 0
            for reason, count in phase.errors.most_common():
                print(f"    {count} × {reason}")
    pace = results[0][1][0]
    p95 = percentile(pace.latencies, 0.95) if pace.latencies else math.inf
    verdict = "met" if p95 < TARGET_P95_S else "MISSED"
    print(
        f"target: p95 < {TARGET_P95_S * 1e3:.0f} ms at the realistic pace, {verdict} by the default"
    )
    print(uptime())
    return 1 if failed or p95 >= TARGET_P95_S else 0


def server_cpu(pid: int) -> float:
    """Return the CPU seconds gunicorn's master and its live workers have used."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended
            continue
        if int(stat.parent.name) == pid or int(fields[1]) == pid:  # fields[1]: the parent
            total += int(fields[11]) + int(fields[12])  # utime, stime (proc(5))
    return total / ticks


def drop_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def uptime() -> str:
    load = os.getloadavg()
    return f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}"


if __name__ == "__main__":
    sys.exit(main())
