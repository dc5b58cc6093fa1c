"""``make bench`` (pages part): the decision, comparison and scorecard pages, cold and warm.

Builds the demo-size example (``make demo``'s loaders: the credit-memo use case, both σ's
runs judged offline, the simulated graders' session and the oversight study, the EGI-Bench
roster) in a scratch database, records both σ's decisions through ``decision_create``, signs
off the first decision's scorecard and drafts the second's. Then, in each of ``--repeats``
repetitions, requests every page ``--requests`` times through Django's test client (the whole
server path: middleware, session, permissions, selectors, template) in three interleaved modes:

- ``reference``: the cache disabled (a dummy backend), so every request draws its plots: the
  pages as they were before their plots were cached;
- ``cold``: the cache emptied before each request: a page's first view after it was recorded;
- ``warm``: the plots in the cache (the product's file cache, in a scratch folder).

Prints, per page and mode, the median and 95th percentile of the server time over all
requests, the range of the repetitions' medians, the process CPU time beside them (what the
page costs when the machine is not shared) and the page's query count. Target (issue 18):
the decision page and a signed scorecard's page, warm, p95 < 50 ms. Exits 1 if a warm page
misses it, or if a page's warm content differs from its reference content.

``--database-url postgres://…/NAME`` measures on PostgreSQL (a scratch ``test_NAME`` is created
and dropped); by default a scratch SQLite file.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.test_settings")

TARGET_S = 0.050
MODES = ("reference", "cold", "warm")
# Each response carries a fresh CSRF token; everything else must be byte-identical.
CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')
DUMMY_CACHE = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}


@dataclass(frozen=True)
class Page:
    name: str
    url: str
    held: bool  # held to the target (the others are reported)


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    medians: list[float] = field(default_factory=list)  # one per repetition
    queries: int = 0
    content: bytes = b""


def percentile(values: list[float], q: float) -> float:
    """Return the ``q`` quantile (linear interpolation, as numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="repetitions (≥ 3)")
    parser.add_argument("--requests", type=int, default=20, help="warm requests per page")
    parser.add_argument(
        "--cold-requests", type=int, default=4, help="reference and cold requests per page"
    )
    parser.add_argument("--database-url", default="", help="postgres://… (default: SQLite)")
    options = parser.parse_args()
    if options.repeats < 3:
        parser.error("--repeats: at least 3 repetitions")
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        os.environ["CACHE_URL"] = f"filecache://{scratch / 'cache'}?max_entries=5000"
        os.environ["ENTERPRISEVAL_VAR_DIR"] = str(scratch / "var")
        os.environ["DATABASE_URL"] = options.database_url or f"sqlite:///{scratch / 'x.sqlite3'}"
        import django

        django.setup()
        from django.db import connection

        if connection.vendor == "sqlite":
            connection.settings_dict["TEST"]["NAME"] = str(scratch / "bench.sqlite3")
        name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            return run(options, scratch)
        finally:
            connection.creation.destroy_test_db(name, verbosity=0)


def run(options: argparse.Namespace, scratch: Path) -> int:
    from django.conf import settings
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, override_settings

    pages, login = build(scratch)
    client = Client()
    client.force_login(login)
    load = os.getloadavg()
    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(
        f"{connection.vendor}, {backend} at {settings.CACHES['default']['LOCATION']}; "
        f"load average {load[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )

    def get(page: Page) -> bytes:
        response = client.get(page.url)
        if response.status_code != 200:
            raise RuntimeError(f"{page.url}: status {response.status_code}")
        return response.content

    @contextmanager
    def mode(name: str) -> Iterator[Callable[[], None]]:
        if name == "reference":
            with override_settings(CACHES=DUMMY_CACHE):
                yield lambda: None
        elif name == "cold":
            yield cache.clear
        else:
            yield lambda: None

    samples = {(page.name, name): Samples() for page in pages for name in MODES}
    for page in pages:  # warm-up: templates, matplotlib, the first file-cache write
        get(page)
    for repetition in range(options.repeats):
        for page in pages:
            for name in MODES:
                found = samples[(page.name, name)]
                count = options.requests if name == "warm" else options.cold_requests
                times = []
                with mode(name) as before:
                    for _ in range(count):
                        before()
                        started, cpu = time.perf_counter(), time.process_time()
                        content = get(page)
                        times.append(time.perf_counter() - started)
                        found.cpu.append(time.process_time() - cpu)
                    with CaptureQueriesContext(connection) as queries:
                        found.content = CSRF.sub(b"", get(page))
                found.queries = len(queries.captured_queries)
                found.wall += times
                found.medians.append(statistics.median(times))
                del content
        print(f"repetition {repetition + 1}/{options.repeats} done", flush=True)

    failed = False
    print(
        f"\n{'page':<34} {'mode':<9} {'p50':>8} {'p95':>8} {'median range':>17} "
        f"{'CPU p50':>8} {'CPU p95':>8} {'queries':>7}"
    )
    for page in pages:
        for name in MODES:
            found = samples[(page.name, name)]
            low, high = min(found.medians), max(found.medians)
            p95 = percentile(found.wall, 0.95)
            verdict = ""
            if name == "warm" and page.held:
                verdict = "  ok" if p95 < TARGET_S else "  SLOWER THAN TARGET"
                failed |= p95 >= TARGET_S
            print(
                f"{page.name:<34} {name:<9} {ms(statistics.median(found.wall))} {ms(p95)} "
                f"{ms(low)}–{ms(high).strip():>7} "
                f"{ms(statistics.median(found.cpu))} {ms(percentile(found.cpu, 0.95))} "
                f"{found.queries:>7}{verdict}"
            )
        same = samples[(page.name, "warm")].content == samples[(page.name, "reference")].content
        if not same:
            print(f"{page.name}: the warm page differs from the reference page", file=sys.stderr)
            failed = True
    for page in pages:
        if page.held:
            reference = statistics.median(samples[(page.name, "reference")].wall)
            warm = statistics.median(samples[(page.name, "warm")].wall)
            print(f"{page.name}: warm median {reference / warm:.0f}× faster than the reference")
    print(f"target: {', '.join(p.name for p in pages if p.held)} warm p95 < {ms(TARGET_S).strip()}")
    return 1 if failed else 0


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:6.1f} ms"


def build(scratch: Path) -> tuple[list[Page], object]:
    """Load the demo's example, record both decisions, sign off one scorecard, draft another."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.urls import reverse

    from demo.decisions import demo_decisions
    from demo.grading import demo_grading, demo_oversight
    from demo.loaders import demo_evaluation_object, demo_runs
    from demo.scorecards import committee_fields
    from scorecards.services import scorecard_create, scorecard_sign_off, scorecard_update

    started = time.perf_counter()
    example = Path(settings.BASE_DIR) / "examples" / "credit_memo"
    print("building the demo's example in a scratch database …", flush=True)

    def quiet(_line: str) -> None:
        pass

    objects = demo_evaluation_object(example_dir=example, log=quiet)
    runs = demo_runs(objects=objects, example_dir=example, log=quiet)
    grading = demo_grading(objects=objects, runs=runs, log=quiet)
    oversight = demo_oversight(objects=objects, runs=runs, log=quiet)
    with open(os.devnull, "w") as devnull:
        call_command("egi_load_roster", stdout=devnull)
    first, second = demo_decisions(
        objects=objects,
        runs=runs,
        session=grading.session,
        study=oversight.study,
        example_dir=example,
        log=quiet,
    )
    reviewer = get_user_model().objects.get(username="demo-reviewer")
    signed = scorecard_create(actor=reviewer, decision=first)
    signed = scorecard_update(actor=reviewer, scorecard=signed, changes=committee_fields(first))
    signed = scorecard_sign_off(actor=reviewer, scorecard=signed)
    draft = scorecard_create(actor=reviewer, decision=second)
    outputs = sum(run.run.items_done for run in runs)
    units = sum(run.units for run in runs)
    print(
        f"built in {time.perf_counter() - started:.0f} s: {outputs} outputs, {units} units; "
        f"decisions {first.pk} ({first.status}) and {second.pk} ({second.status})",
        flush=True,
    )
    key = objects.use_case.key
    compare = reverse("decision-compare", args=[key]) + f"?a={first.pk}&b={second.pk}"
    scorecard = "scorecard-detail"
    pages = [
        Page("decision page", reverse("decision-detail", args=[key, first.pk]), True),
        Page("comparison page", compare, False),
        Page("scorecard page (signed)", reverse(scorecard, args=[key, signed.pk]), True),
        Page("scorecard page (draft, live)", reverse(scorecard, args=[key, draft.pk]), False),
    ]
    return pages, reviewer


if __name__ == "__main__":
    sys.exit(main())
