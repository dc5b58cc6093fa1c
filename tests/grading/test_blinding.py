"""Blinding (SPEC §5.1): no page or endpoint a grader can reach tells where an artefact came from.

Signed in as each grader of a session that samples human reference (baseline) artefacts
next to both systems' outputs, the test requests every GET route of the site with every
plausible argument (the use case, the grader's own assignments, another grader's, the
session, the artefacts, the runs, outputs, σ and task sets), then saves, submits and revises
through the workspace, and searches every response, its headers and the links in it for:

* the provenance strings of the runs (σ names and hashes, model references, "baseline");
* run, output and artefact primary keys as a path segment or a JSON ``"id"``;
* the strata, and the artefact kinds as JSON or attribute values;
* the other graders' user names;
* the text of an artefact anywhere but the grader's own assignment on it (a baseline's text
  is its task's reference: where the reference shows, the baseline is recognisable).
"""

from __future__ import annotations

import html
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.test import Client
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve, reverse

from demo.testing.grading import GradingWorld, fill, make_world
from grading.models import Assignment, SessionArtefact
from grading.selectors.artefacts import artefact_text
from grading.services.grades import assignment_submit
from runs.models import Output

pytestmark = pytest.mark.django_db

#: Routes not scanned: the sign-in machinery, the admin (staff only), and the documentation
#: (the API schema, its viewer, the σ JSON Schema): the same text for every user, no data.
UNSCANNED = ("accounts/", "admin/", "api/schema/", "api/docs/", "api/v1/schemas/", "healthz")

#: Route arguments that name a run, an output or an artefact by primary key.
PK_ARGUMENTS = {"run_id", "output_id", "artefact_pk", "pk", "id"}


#: Pages outside the grading app that reveal provenance today (reported to the lead). Each
#: is a strict xfail below: fixing a page makes its test fail until it leaves this list.
@dataclass(frozen=True)
class Forbidden:
    label: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Route:
    name: str
    template: str  # "/use-cases/<key>/runs/<run_id>/"
    params: tuple[str, ...]


def routes() -> list[Route]:
    """Return every named route of the site with the names of its arguments."""

    def walk(patterns, prefix: str) -> Iterator[Route]:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and not route.startswith(UNSCANNED):
                template = re.sub(r"<(?:\w+:)?(\w+)>", r"<\1>", route)
                params = tuple(re.findall(r"<(\w+)>", template))
                yield Route(pattern.name or route, "/" + template, params)

    return list(walk(get_resolver().url_patterns, ""))


@pytest.fixture
def blinding_world(db) -> GradingWorld:
    return make_world(include_baselines=True, sample_size=12)


def forbidden_for(world: GradingWorld, grader) -> list[Forbidden]:
    literal = [
        *((f"provenance {text!r}", text) for text in world.provenance),
        *(
            (f"stratum {stratum!r}", stratum)
            for stratum in set(world.session.artefacts.values_list("stratum", flat=True))
            if stratum
        ),
        *(
            (f"user name of grader {other.username!r}", other.username)
            for other in world.graders
            if other != grader
        ),
    ]
    found = [Forbidden(label, re.compile(re.escape(text), re.I)) for label, text in literal]
    keys = {
        "run": [run.pk for run in world.runs],
        "output": list(Output.objects.filter(run__in=world.runs).values_list("pk", flat=True)),
        "artefact": list(world.session.artefacts.values_list("pk", flat=True)),
    }
    for what, pks in keys.items():
        for pk in pks:
            found.append(
                Forbidden(
                    f"{what} pk {pk} as a path segment",
                    re.compile(rf"/(?:runs?|outputs?|artefacts?)/{pk}(?:/|\b)", re.I),
                )
            )
            found.append(
                Forbidden(f'{what} pk {pk} as a JSON "id"', re.compile(rf'"id"\s*:\s*{pk}\b'))
            )
    for kind in ("baseline", "output"):
        found.append(Forbidden(f"kind {kind!r} as a value", re.compile(rf'[:=]\s*"{kind}"', re.I)))
    return found


def texts(response) -> str:
    """Return what a response says: body (unescaped; JSON strings decoded) and headers."""
    raw = (
        b"".join(response.streaming_content)
        if getattr(response, "streaming", False)
        else response.content
    )
    body = raw.decode("utf-8", "replace")
    parts = [body, html.unescape(body)]
    if response.get("Content-Type", "").startswith("application/json"):
        parts.append("\n".join(strings(json.loads(body))))
    parts += [f"{name}: {value}" for name, value in response.headers.items()]
    return "\n".join(parts)


#: A link in a page or a URL in JSON: href, src or action attributes, and "/…" strings.
LINK = re.compile(r'(?:href|src|action)="(/[^"#?]*)|"(/[^"#?\s]*)[^"]*"')


def resolved_arguments(link: str) -> dict[str, object]:
    try:
        return resolve(link).kwargs
    except Resolver404:
        return {}


def strings(data) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)


class Scan:
    """Requests as one grader and records every leak, naming the page and the string."""

    def __init__(self, world: GradingWorld, grader) -> None:
        self.client = Client()
        self.client.force_login(grader)
        self.forbidden = forbidden_for(world, grader)
        self.own = {a.public_id: a.artefact_id for a in Assignment.objects.filter(grader=grader)}
        self.artefact_texts = {
            artefact.pk: artefact_text(artefact)
            for artefact in SessionArtefact.objects.filter(session=world.session).select_related(
                "output", "task"
            )
        }
        self.leaks: list[str] = []
        self.reachable: list[str] = []

    def check(self, label: str, response, asked: str = "") -> None:
        """Record what ``response`` leaks; ``asked`` is the path the grader typed (echoes of
        it are not leaks: the grader knew it)."""
        said = texts(response)
        for forbidden in self.forbidden:
            if asked and forbidden.pattern.search(asked):
                continue
            match = forbidden.pattern.search(said)
            if match:
                start = max(match.start() - 60, 0)
                context = said[start : match.end() + 60].replace("\n", " ")
                self.leaks.append(f"{label} reveals {forbidden.label}: …{context}…")
        for link in sorted({m.group(1) or m.group(2) for m in LINK.finditer(said)}):
            named = set(resolved_arguments(link)) & PK_ARGUMENTS
            if named:
                self.leaks.append(f"{label} links to {link}, which names {', '.join(named)}")
        visible = {pk for public_id, pk in self.own.items() if public_id in label}
        # Two artefacts may hold the same text, e.g. one output drawn in two of the grader's
        # sessions (or one text inside another): showing the grader's own artefact then shows
        # the other's too, and that reveals nothing.
        seen = [
            artefact_text(artefact)
            for artefact in SessionArtefact.objects.filter(pk__in=visible).select_related(
                "output", "task"
            )
        ]
        for pk, text in self.artefact_texts.items():
            body = text.strip()
            if pk in visible or not body or body not in said:
                continue
            if not any(body in own for own in seen):
                self.leaks.append(f"{label} shows the full text of another artefact ({pk})")

    def get(self, path: str) -> None:
        response = self.client.get(path)
        if response.status_code == 200:
            self.reachable.append(path)
        if response.status_code != 405:
            self.check(f"GET {path} ({response.status_code})", response, asked=path)

    def post(self, path: str, body: dict) -> None:
        response = self.client.post(path, body, content_type="application/json")
        self.check(f"POST {path} ({response.status_code})", response)

    def post_form(self, path: str, data: dict) -> None:
        response = self.client.post(path, data)
        self.check(f"POST form {path} ({response.status_code})", response)


def arguments(world: GradingWorld, grader) -> dict[str, list[str]]:
    """Return what a curious grader would try for each route argument."""
    mine = list(Assignment.objects.filter(grader=grader).order_by("position"))
    others = Assignment.objects.exclude(grader=grader).filter(session=world.session)
    artefacts = list(world.session.artefacts.order_by("kind", "pk"))
    kinds = {a.kind: a for a in artefacts}  # one of each kind
    outputs = Output.objects.filter(run__in=world.runs).order_by("pk")
    configurations = {run.configuration.name for run in world.runs}
    return {
        "key": [world.use_case.key],
        "public_id": [
            *(a.public_id for a in mine[:2]),
            others.first().public_id,
            world.session.public_id,
            *(a.public_id for a in kinds.values()),
        ],
        "artefact_id": [a.public_id for a in kinds.values()],
        "run_id": [str(run.pk) for run in world.runs],
        "output_id": [str(outputs.first().pk), str(outputs.last().pk)],
        "version": ["1"],
        "name": [*configurations, world.runs[0].task_set.name],
    }


def scan_gets(scan: Scan, world: GradingWorld, grader, wanted) -> None:
    values = arguments(world, grader)
    for route in routes():
        if not wanted(route.name) or not set(route.params) <= set(values):
            continue
        for combination in itertools.product(*(values[p] for p in route.params)):
            path = route.template
            for param, value in zip(route.params, combination, strict=True):
                path = path.replace(f"<{param}>", value, 1)
            scan.get(path)


def grade_and_submit(scan: Scan, world: GradingWorld, grader) -> None:
    """Drive the workspace as the grader does: autosave, heartbeat, submit, revise."""
    mine = list(Assignment.objects.filter(grader=grader).order_by("position"))
    first, second = mine[0], mine[1]
    api = "/api/v1/grading/assignments/"
    change = {"unit_key": "s1", "field": "assertive", "value": "Y"}
    scan.post(f"{api}{first.public_id}/grades/", {"changes": [change], "elapsed_seconds": 4})
    scan.post(f"{api}{first.public_id}/heartbeat/", {"elapsed_seconds": 15})
    scan.post(f"{api}{first.public_id}/submit/", {})  # refused: fields missing
    scan.post(f"{api}{first.public_id}/grades/", {"changes": [{**change, "value": "bad"}]})
    fill(first)
    scan.post(f"{api}{first.public_id}/submit/", {"elapsed_seconds": 2})
    revision = {"unit_key": "artefact", "field": "value_add", "value": "2"}
    scan.post(f"{api}{first.public_id}/grades/", {"changes": [revision]})  # no reason
    scan.post(f"{api}{first.public_id}/grades/", {"changes": [revision], "reason": "Re-read."})
    page = reverse("grading-workspace", args=[second.public_id])
    scan.post_form(page, {"s1|assertive": "N", "action": "save"})
    scan.post_form(page, {"action": "submit"})
    fill(second)
    assignment_submit(actor=grader, assignment=second)
    other = Assignment.objects.exclude(grader=grader).filter(session=world.session).first()
    scan.post(f"{api}{other.public_id}/grades/", {"changes": [change]})
    scan.post_form(reverse("grading-workspace", args=[other.public_id]), {"action": "save"})


def test_the_world_samples_baselines_and_both_systems(blinding_world):
    kinds = set(blinding_world.session.artefacts.values_list("kind", "stratum"))
    assert {k for k, _ in kinds} == {"baseline", "output"}
    assert len({s for _, s in kinds}) == 3  # both runs and the baselines


def test_no_grading_page_or_endpoint_reveals_provenance_to_a_grader(blinding_world):
    world = blinding_world
    leaks: list[str] = []
    for grader in world.graders:
        scan = Scan(world, grader)
        grade_and_submit(scan, world, grader)
        for assignment in Assignment.objects.filter(grader=grader):
            scan.get(reverse("grading-workspace", args=[assignment.public_id]))
            scan.get(f"/api/v1/grading/assignments/{assignment.public_id}/")
        scan_gets(scan, world, grader, lambda _name: True)
        assert "/grading/" in scan.reachable and "/" in scan.reachable
        leaks += [f"[{grader.username}] {leak}" for leak in scan.leaks]
    assert not leaks, "\n".join(leaks)


@pytest.mark.parametrize(
    "route_name",
    [
        "charter-detail",
        "charter-version",
        "api-charter-detail",
        "task-set-detail",
        "api-task-set-tasks",
    ],
)
def test_pages_that_would_reveal_the_baseline_refuse_graders(blinding_world, route_name):
    """The charter names the baseline workflow and a task's reference is the baseline
    artefact's text: graders get 403 there, and never a page that could leak."""
    world = blinding_world
    grader = world.graders[1]
    scan = Scan(world, grader)
    scan_gets(scan, world, grader, lambda name: name == route_name)
    assert not scan.reachable, f"{route_name} answered a grader: {sorted(scan.reachable)}"
    assert not scan.leaks, "\n".join(scan.leaks)


def test_the_scan_catches_a_leak(blinding_world):
    """The scan is not vacuous: a page naming a σ, a run or a co-grader is caught."""

    class Fake:
        def __init__(self, body: str) -> None:
            self.content = body.encode()
            self.headers = {"Content-Type": "text/html"}

        def get(self, name: str, default: str = "") -> str:
            return self.headers.get(name, default)

    world = blinding_world
    scan = Scan(world, world.graders[1])
    run = world.runs[0]
    scan.check("sigma", Fake(f"<p>{run.configuration.name}</p>"))
    scan.check("link", Fake(f'<a href="/use-cases/X/runs/{run.pk}/">run</a>'))
    scan.check("kind", Fake('<div data-kind="baseline">'))
    scan.check("co-grader", Fake(f"<td>{world.graders[2].username}</td>"))
    baseline = world.session.artefacts.filter(kind="baseline").first()
    scan.check("reference", Fake(f"<dd>{html.escape(baseline.task.reference)}</dd>"))
    assert {leak.split(" ", 1)[0] for leak in scan.leaks} == {
        "sigma",
        "link",
        "kind",
        "co-grader",
        "reference",
    }


def test_no_adjudication_page_endpoint_or_file_reveals_provenance_or_graders(blinding_world):
    """The adjudicator sees "Grader 1", "Grader 2" and each artefact's content, never whose
    grades they are nor where the artefact came from: every adjudication route (pages, API,
    the adjudications file), and the answers to taking a grader's value and to an import."""
    from demo.testing.grading import grade_apart
    from grading.adjudication_io import dump_line

    world = blinding_world
    # The artefacts arguments() tries for <artefact_id>: the last of each kind by pk.
    kinds = {a.kind: a for a in world.session.artefacts.order_by("kind", "pk")}
    baseline, output = kinds["baseline"], kinds["output"]
    for artefact in (baseline, output):
        grade_apart(artefact)
    scan = Scan(world, world.adjudicator)
    scan.forbidden += [
        Forbidden(f"user name of grader {g.username!r}", re.compile(re.escape(g.username), re.I))
        for g in world.graders
    ]
    scan.artefact_texts = {}  # the adjudicator reads the artefacts' content, by design
    scan_gets(scan, world, world.graders[0], lambda name: "adjudication" in name)
    args = [world.use_case.key, world.session.public_id]
    export = scan.client.get(reverse("grading-adjudication-export", args=args))
    body = b"".join(export.streaming_content)
    scan.check("the adjudications file", _Text(body.decode()))
    api = f"/api/v1/use-cases/{world.use_case.key}/grading/sessions/{world.session.public_id}"
    scan.post(f"{api}/adjudication/{output.public_id}/take/", {"grader": 2, "fields": "all"})
    scan.post(f"{api}/adjudication/{output.public_id}/take/", {"grader": 9, "fields": "all"})
    lines = [json.loads(raw) for raw in body.splitlines()]
    bad = b"".join(dump_line({**line, "value": "nope"}) for line in lines)
    response = scan.client.post(
        f"{api}/adjudication/import/", bad, content_type="application/x-ndjson"
    )
    scan.check("POST import (refused)", response)
    scan.post_form(
        reverse("grading-adjudication-item", args=[*args, baseline.public_id]), {"take": "1"}
    )
    for artefact in (baseline, output):
        page = reverse("grading-adjudication-item", args=[*args, artefact.public_id])
        assert page in scan.reachable, page
    assert not scan.leaks, "\n".join(scan.leaks)


class _Text:
    """A response-like holder of a downloaded file's text, for :meth:`Scan.check`."""

    def __init__(self, body: str) -> None:
        self.content = body.encode()
        self.headers = {"Content-Type": "application/x-ndjson"}

    def get(self, name: str, default: str = "") -> str:
        return self.headers.get(name, default)


@pytest.mark.parametrize("tau_rule", ["fixed", "adaptive"])
def test_no_page_or_endpoint_tells_a_grader_why_an_output_came_next(blinding_world, tau_rule):
    """A sequential session (SPEC §5.5): no grader page or response shows q_t, τ or τ_t (fixed
    or adaptive), the judge or its scores, the sequences or why a session ended; the queue
    says only that it ended."""
    from dataclasses import replace

    from grading.models import AssignmentStatus, SequentialDraw
    from grading.services.sessions import session_close, session_create
    from runs.models import JudgeScore
    from runs.services.judging import judge_get_or_create, judge_run

    world = blinding_world
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=world.model_owner, run=world.runs[0], judge=judge, purpose="gated")
    session = session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Credit memo round 2",
        runs=[world.runs[0]],
        graders=world.graders,
        adjudicators=[world.adjudicator],
        mode="sequential",
        judge=judge,
        budget=10,
        agreement_size=3,
        seed=11,
        tau_rule=tau_rule,
    )
    sequential = replace(world, session=session)
    draws = list(SequentialDraw.objects.filter(session=session))
    rationales = set(
        JudgeScore.objects.filter(judge=judge)
        .exclude(rationale="")
        .values_list("rationale", flat=True)[:50]
    )
    words = [
        "sequential",
        "q_t",
        "τ",
        "uncertaint",
        "settled",
        "decided after",
        "adaptive",
        "uniform share",
        f"{judge.name} {judge.version}",
        judge.rubric_sha256[:12],
    ]
    secret = [
        *(Forbidden(f"word {w!r}", re.compile(re.escape(w), re.I)) for w in words),
        # tau, tau_rule, tau_latest… as a word (random tokens may hold the letters)
        Forbidden("a tau field", re.compile(r"\btau(?:_[a-z]+)?\b", re.I)),
        *(Forbidden(f"q of draw {d.index}", re.compile(re.escape(repr(d.q)[:7]))) for d in draws),
        *(
            Forbidden("a judge rationale", re.compile(re.escape(r)))
            for r in rationales
            if len(r) > 20
        ),
    ]
    grader = Assignment.objects.filter(artefact=draws[0].artefact).first().grader
    scan = Scan(sequential, grader)
    scan.forbidden += secret
    for assignment in Assignment.objects.filter(grader=grader, session=session):
        scan.get(reverse("grading-workspace", args=[assignment.public_id]))
        scan.get(f"/api/v1/grading/assignments/{assignment.public_id}/")
    scan_gets(scan, sequential, grader, lambda name: "grading" in name or name == "home")
    assert "/grading/" in scan.reachable
    # Grade the first draws (the grader submitting through the API): with an adaptive share
    # τ_t moves off the floor, and no response after it may say so.
    api = "/api/v1/grading/assignments/"
    for draw in session.draws.order_by("index")[:3]:
        for assignment in Assignment.objects.filter(artefact=draw.artefact).select_related(
            "grader", "artefact", "session"
        ):
            fill(assignment)
            if assignment.grader == grader:
                scan.post(f"{api}{assignment.public_id}/submit/", {"elapsed_seconds": 2})
            else:
                assignment_submit(actor=assignment.grader, assignment=assignment)
    session.refresh_from_db()
    assert session.status == "open"
    if tau_rule == "adaptive":
        assert max(d.tau for d in session.draws.all()) > session.tau  # τ_t moved
    secret = [
        Forbidden(f"τ_t of draw {d.index}", re.compile(re.escape(repr(d.tau)[:7])))
        for d in session.draws.all()
        if d.tau not in (0.5, 1.0)  # "0.5" and "1.0" appear in any page's markup
    ]
    scan.forbidden += secret
    scan.own = {a.public_id: a.artefact_id for a in Assignment.objects.filter(grader=grader)}
    for artefact in session.artefacts.select_related("output", "task"):
        scan.artefact_texts[artefact.pk] = artefact_text(artefact)
    for assignment in Assignment.objects.filter(grader=grader, session=session):
        scan.get(reverse("grading-workspace", args=[assignment.public_id]))
        scan.get(f"/api/v1/grading/assignments/{assignment.public_id}/")
    scan.get("/grading/")
    scan.get("/api/v1/grading/assignments/")
    session_close(actor=world.owner, session=session)
    assert Assignment.objects.filter(session=session, status=AssignmentStatus.WITHDRAWN).exists()
    queue = scan.client.get("/grading/")
    scan.check("GET /grading/ after the stop", queue)
    assert "has ended" in queue.content.decode()
    scan.get("/api/v1/grading/assignments/")
    assert not scan.leaks, "\n".join(scan.leaks)
