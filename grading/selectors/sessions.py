"""Reads for managing grading sessions: who may, the list, one session, the grades export.

These pages and files are for the charter owner, reviewer and adjudicator: they name the
graders and, per stratum, the runs the sample was drawn from. A grader never reaches them
(403, even holding another role): graders work through their own assignments only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Avg, Count, Max, Min, Q, QuerySet
from django.http import Http404

from charters.catalogue import RUBRIC_LABEL_CORRECT
from charters.models import Charter, Role, Task, UseCase
from charters.models.tasks import Split
from charters.permissions import use_case_for, user_roles
from grading.grade_io import ArtefactSpec, dump_line
from grading.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    Grade,
    GradingSession,
    SampleDesign,
    SessionArtefact,
)
from grading.selectors.artefacts import submitted_field_values, units_of
from grading.services.sessions import SamplePlan, sample_plan
from runs.models import Output, OutputStatus, Run, RunStatus

READ_ROLES = (Role.CHARTER_OWNER, Role.REVIEWER, Role.ADJUDICATOR)
WRITE_ROLES = (Role.CHARTER_OWNER,)
GRADER_REFUSAL = (
    "Graders reach their own assignments at /grading/; a session's management pages name "
    "the runs sampled and the other graders (SPEC §5.1)."
)
EXPORT_CHUNK = 500


def session_access(
    user: AbstractBaseUser | AnonymousUser, key: str, *, write: bool = False
) -> UseCase:
    """Return the use case whose sessions ``user`` may see (``write``: create, import, close).

    Outsiders get 404; members without a management role, and anyone holding the grader
    role, get 403.
    """
    use_case = use_case_for(user, key, roles=WRITE_ROLES if write else READ_ROLES)
    if Role.GRADER in user_roles(user, use_case):
        raise PermissionDenied(GRADER_REFUSAL)
    return use_case


def session_can_write(user: AbstractBaseUser | AnonymousUser, use_case: UseCase) -> bool:
    """Return whether ``user`` may create, import into and close the use case's sessions."""
    held = user_roles(user, use_case)
    return Role.GRADER not in held and bool(held & {str(role) for role in WRITE_ROLES})


def session_get(*, use_case: UseCase, public_id: str) -> GradingSession:
    """Return the use case's session ``public_id``; 404 if it has none by that id."""
    session = (
        GradingSession.objects.select_related("use_case", "charter", "task_set", "created_by")
        .filter(use_case=use_case, public_id=public_id)
        .first()
    )
    if session is None:
        raise Http404("No such grading session.")
    return session


def session_for(
    user: AbstractBaseUser | AnonymousUser, key: str, public_id: str, *, write: bool = False
) -> tuple[UseCase, GradingSession]:
    """Return the use case and its session ``public_id`` if ``user`` may see (``write``) it."""
    use_case = session_access(user, key, write=write)
    return use_case, session_get(use_case=use_case, public_id=public_id)


# The list and one session


@dataclass(frozen=True, slots=True)
class SessionProgress:
    artefacts: int
    assignments: int
    submitted: int
    in_progress: int

    @property
    def pending(self) -> int:
        return self.assignments - self.submitted - self.in_progress

    @property
    def percent(self) -> float:
        return round(100 * self.submitted / self.assignments, 1) if self.assignments else 0.0


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session: GradingSession
    progress: SessionProgress


def session_list(*, use_case: UseCase) -> list[SessionSummary]:
    """Return the use case's sessions, newest first, with their progress (three queries)."""
    sessions = list(
        GradingSession.objects.filter(use_case=use_case).select_related("use_case", "created_by")
    )
    artefacts = dict(
        SessionArtefact.objects.filter(session__use_case=use_case)
        .values("session_id")
        .annotate(n=Count("pk"))
        .values_list("session_id", "n")
    )
    by_status: dict[int, dict[str, int]] = defaultdict(dict)
    for session_id, status, n in (
        Assignment.objects.filter(session__use_case=use_case)
        .values("session_id", "status")
        .annotate(n=Count("pk"))
        .values_list("session_id", "status", "n")
    ):
        by_status[session_id][status] = n
    return [
        SessionSummary(session, _progress(artefacts.get(session.pk, 0), by_status[session.pk]))
        for session in sessions
    ]


def _progress(artefacts: int, by_status: dict[str, int]) -> SessionProgress:
    return SessionProgress(
        artefacts=artefacts,
        assignments=sum(n for s, n in by_status.items() if s != AssignmentStatus.WITHDRAWN),
        submitted=by_status.get(AssignmentStatus.SUBMITTED, 0),
        in_progress=by_status.get(AssignmentStatus.IN_PROGRESS, 0),
    )


@dataclass(frozen=True, slots=True)
class StratumSummary:
    """The sampled artefacts of one stratum and their inclusion probability π."""

    stratum: str
    label: str
    sampled: int
    pi_min: float
    pi_max: float
    population: int | None
    """N_h = n_h / π_h under a stratified design (π is n_h / N_h there); else None."""

    @property
    def weight(self) -> float:
        """The design weight 1/π of the stratum's artefacts (of the least likely one)."""
        return 1 / self.pi_min


@dataclass(frozen=True, slots=True)
class GraderProgress:
    username: str
    assigned: int
    submitted: int
    in_progress: int
    mean_minutes: float | None
    """Mean time on an artefact over the grader's submitted assignments."""


@dataclass(frozen=True)
class SessionDetail:
    session: GradingSession
    runs: list[Run]
    adjudicators: list[str]
    progress: SessionProgress
    strata: list[StratumSummary]
    graders: list[GraderProgress]
    artefacts_complete: int
    disputes_pending: int
    disputes_adjudicated: int


def session_detail(*, session: GradingSession) -> SessionDetail:
    """Return the session with its strata, per-grader progress and disputes.

    Eight queries whatever the size of the session.
    """
    runs = list(session.runs.select_related("configuration").order_by("pk"))
    graders = _grader_progress(session)
    artefacts = list(session.artefacts.only("pk", "session_id"))
    values = submitted_field_values(artefacts)
    return SessionDetail(
        session=session,
        runs=runs,
        adjudicators=sorted(session.adjudicators.values_list("username", flat=True)),
        progress=SessionProgress(
            artefacts=len(artefacts),
            assignments=sum(g.assigned for g in graders),
            submitted=sum(g.submitted for g in graders),
            in_progress=sum(g.in_progress for g in graders),
        ),
        strata=_strata(session, stratum_labels(runs)),
        graders=graders,
        artefacts_complete=len({fv.artefact_id for fv in values}),
        disputes_pending=sum(1 for fv in values if fv.pending),
        disputes_adjudicated=sum(1 for fv in values if fv.adjudicated is not None),
    )


def arms_text(arms: Sequence[dict[str, Any]]) -> str:
    """Return the sample size of each arm in words: ``12 of 65 outputs of σ x v1, …``."""
    return "; ".join(
        f"{arm['sampled']} of {arm['population']} {_arm_noun(arm)} of {arm['label']}"
        if arm["arm"] != "baseline"
        else f"{arm['sampled']} of {arm['population']} {arm['label']}"
        for arm in arms
    )


def _arm_noun(arm: dict[str, Any]) -> str:
    return "output" if arm["population"] == 1 else "outputs"


def stratum_labels(runs: Sequence[Run]) -> dict[str, str]:
    """Return a readable label per stratum key (``run:12`` → ``run 12 · σ name v1``)."""
    labels = {"baseline": "human baseline artefacts"}
    for run in runs:
        configuration = run.configuration
        labels[f"run:{run.pk}"] = f"run {run.pk} · σ {configuration.name} v{configuration.version}"
    return labels


def _strata(session: GradingSession, labels: dict[str, str]) -> list[StratumSummary]:
    stratified = session.design == SampleDesign.STRATIFIED
    rows = (
        session.artefacts.values("stratum")
        .annotate(
            n=Count("pk"),
            pi_min=Min("inclusion_probability"),
            pi_max=Max("inclusion_probability"),
        )
        .order_by("stratum")
    )
    # Runs in pk order (run 99 before run 100, which a text sort would put first), the baseline
    # first, any other stratum key (stratified designs) after them in text order.
    place = {key: i for i, key in enumerate(labels)}
    rows = sorted(
        rows, key=lambda row: (place.get(row["stratum"], len(place)), row["stratum"] or "")
    )
    return [
        StratumSummary(
            stratum=row["stratum"],
            label=labels.get(row["stratum"], row["stratum"] or "—"),
            sampled=row["n"],
            pi_min=row["pi_min"],
            pi_max=row["pi_max"],
            population=round(row["n"] / row["pi_min"]) if stratified else None,
        )
        for row in rows
    ]


def _grader_progress(session: GradingSession) -> list[GraderProgress]:
    submitted = Q(status=AssignmentStatus.SUBMITTED)
    rows = (
        session.assignments.values("grader__username")
        .annotate(
            assigned=Count("pk", filter=~Q(status=AssignmentStatus.WITHDRAWN)),
            submitted=Count("pk", filter=submitted),
            in_progress=Count("pk", filter=Q(status=AssignmentStatus.IN_PROGRESS)),
            mean_seconds=Avg("seconds_spent", filter=submitted),
        )
        .order_by("grader__username")
    )
    return [
        GraderProgress(
            username=row["grader__username"],
            assigned=row["assigned"],
            submitted=row["submitted"],
            in_progress=row["in_progress"],
            mean_minutes=None if row["mean_seconds"] is None else row["mean_seconds"] / 60,
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class AssignedGrader:
    username: str
    status: str


@dataclass(frozen=True, slots=True)
class ArtefactRow:
    """One sampled artefact as management sees it: its task, stratum, π and graders."""

    public_id: str
    task_id: str
    kind: str
    stratum: str
    inclusion_probability: float
    graders: list[AssignedGrader]


def session_artefacts(*, session: GradingSession) -> list[ArtefactRow]:
    """Return the session's artefacts in sampling order with their graders (two queries)."""
    graders: dict[int, list[AssignedGrader]] = defaultdict(list)
    for artefact_id, username, status in session.assignments.order_by(
        "artefact_id", "grader__username"
    ).values_list("artefact_id", "grader__username", "status"):
        graders[artefact_id].append(AssignedGrader(username, status))
    return [
        ArtefactRow(public_id, task_id, kind, stratum, pi, graders[pk])
        for pk, public_id, task_id, kind, stratum, pi in session.artefacts.order_by(
            "pk"
        ).values_list(
            "pk", "public_id", "task__external_id", "kind", "stratum", "inclusion_probability"
        )
    ]


# Creating a session


@dataclass(frozen=True)
class SessionChoices:
    """What the new-session form offers, and the sample size the charter plans."""

    charter: Charter | None
    runs: QuerySet[Run]
    default_runs: list[Run]
    graders: QuerySet[Any]
    adjudicators: QuerySet[Any]
    plan: SamplePlan | None
    baselines: int


def session_choices(*, use_case: UseCase) -> SessionChoices:
    """Return the completed runs, graders and adjudicators a new session may use.

    The runs checked by default are the completed runs of the task set of the newest one
    (a session compares outputs of one task set); the plan is :func:`sample_plan` for them.
    """
    charter = Charter.objects.frozen().filter(use_case=use_case).order_by("-version").first()
    runs = (
        Run.objects.filter(use_case=use_case, status=RunStatus.COMPLETED)
        .select_related("configuration", "task_set")
        .order_by("-pk")
    )
    newest = runs.first()
    default_runs = [run for run in runs if newest and run.task_set_id == newest.task_set_id]
    baselines = 0
    if newest is not None:
        baselines = (
            Task.objects.filter(task_set_id=newest.task_set_id, split=Split.GRADED)
            .exclude(reference="")
            .count()
        )
    return SessionChoices(
        charter=charter,
        runs=runs,
        default_runs=default_runs,
        graders=members_with_role(use_case=use_case, role=Role.GRADER),
        adjudicators=members_with_role(use_case=use_case, role=Role.ADJUDICATOR),
        plan=session_plan(charter=charter, runs=default_runs) if default_runs else None,
        baselines=baselines,
    )


def session_plan(*, charter: Charter | None, runs: Sequence[Run]) -> SamplePlan | None:
    """Return the charter's planned sample size for each σ of ``runs`` (SPEC §5.3)."""
    if charter is None:
        return None
    outputs = list(
        Output.objects.filter(
            run__in=list(runs), task__split=Split.GRADED, status=OutputStatus.SUCCEEDED
        ).only("pk", "run_id")
    )
    return sample_plan(charter=charter, runs=runs, outputs=outputs)


def members_with_role(*, use_case: UseCase, role: str) -> QuerySet[Any]:
    """Return the users holding ``role`` on the use case, by user name."""
    return (
        get_user_model()
        .objects.filter(memberships__use_case=use_case, memberships__role=role)
        .order_by("username")
        .distinct()
    )


# Grades files


def grade_catalogue(*, session: GradingSession) -> tuple[dict[str, ArtefactSpec], frozenset[str]]:
    """Return what a grades file is checked against: each artefact's spec, and the graders."""
    artefacts = list(session.artefacts.select_related("task", "output").order_by("pk"))
    units = units_of(artefacts)
    asking = any(a.asks and RUBRIC_LABEL_CORRECT in a.asks for a in artefacts)
    labels = tuple(session.task_set.label_set or ()) if asking else ()  # correct_label's values
    assigned: dict[int, set[str]] = defaultdict(set)
    for artefact_id, username in session.assignments.values_list("artefact_id", "grader__username"):
        assigned[artefact_id].add(username)
    specs = {
        a.public_id: ArtefactSpec(
            task_id=a.task.external_id,
            unit_keys=tuple(unit.key for unit in units[a.pk]),
            graders=frozenset(assigned[a.pk]),
            labels=labels if a.asks and RUBRIC_LABEL_CORRECT in a.asks else (),
        )
        for a in artefacts
    }
    return specs, frozenset().union(*assigned.values())


def _provenance(artefact: SessionArtefact) -> dict[str, Any]:
    output = artefact.output
    configuration = output.run.configuration if output is not None else None
    return {
        "kind": artefact.kind,
        "run": output.run_id if output is not None else None,
        "sigma": configuration.name if configuration is not None else None,
        "sigma_version": configuration.version if configuration is not None else None,
        "model_ref": configuration.model_ref if configuration is not None else None,
        "repeat": output.repeat_index if output is not None else None,
        "stratum": artefact.stratum,
        "inclusion_probability": artefact.inclusion_probability,
    }


def _related(prefix: str, provenance: bool) -> list[str]:
    related = [f"{prefix}task"]
    if provenance:
        related.append(f"{prefix}output__run__configuration")
    return related


def grades_export(*, session: GradingSession, provenance: bool = False) -> Iterator[dict[str, Any]]:
    """Yield one line per assignment of the session, in each grader's blind order.

    Two queries read in chunks, merged as they stream, so memory and queries do not grow
    with the session: the assignments (with their artefact and grader) and their grades,
    both ordered by grader and position.
    """
    assignments = (
        session.assignments.select_related("grader", *_related("artefact__", provenance))
        .defer("artefact__task__input", "artefact__task__reference")
        .order_by("grader__username", "position")
    )
    grades = (
        Grade.objects.filter(assignment__session=session)
        .order_by("assignment__grader__username", "assignment__position", "pk")
        .values_list("assignment_id", "unit_key", "field", "value")
        .iterator(chunk_size=EXPORT_CHUNK * 20)
    )
    pending = next(grades, None)
    for assignment in assignments.iterator(chunk_size=EXPORT_CHUNK):
        values: dict[str, dict[str, str]] = {}
        while pending is not None and pending[0] == assignment.pk:
            values.setdefault(pending[1], {})[pending[2]] = pending[3]
            pending = next(grades, None)
        artefact = assignment.artefact
        line: dict[str, Any] = {
            "artefact": artefact.public_id,
            "grader": assignment.grader.get_username(),
            "task_id": artefact.task.external_id,
            "grades": values,
            "seconds": round(assignment.seconds_spent, 1),
            "submitted": assignment.is_submitted,
            "submitted_at": _iso(assignment.submitted_at),
        }
        if provenance:
            line.update(_provenance(artefact))
        yield line


def grades_final_export(
    *, session: GradingSession, provenance: bool = False
) -> Iterator[dict[str, Any]]:
    """Yield one line per artefact with its final grades (SPEC §5.1).

    A field's final value is the graders' common value, or the adjudicated one where they
    disagreed; a disagreement not yet adjudicated is listed in ``disputed`` and has no final
    value. An artefact some of whose graders have not submitted is ``complete: false``.
    Five queries whatever the size of the session.
    """
    artefacts = list(
        session.artefacts.select_related(*_related("", provenance))
        .defer("task__input", "task__reference")
        .order_by("pk")
    )
    final: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    disputed: dict[int, list[list[str]]] = defaultdict(list)
    adjudicated: dict[int, list[list[str]]] = defaultdict(list)
    complete: set[int] = set()
    for fv in submitted_field_values(artefacts):
        complete.add(fv.artefact_id)
        if fv.adjudicated is not None:
            adjudicated[fv.artefact_id].append([fv.unit_key, fv.field])
        if fv.moot:
            continue
        if fv.final is None:
            disputed[fv.artefact_id].append([fv.unit_key, fv.field])
        else:
            final[fv.artefact_id].setdefault(fv.unit_key, {})[fv.field] = fv.final
    graders = dict(
        session.assignments.values("artefact_id")
        .annotate(n=Count("pk"))
        .values_list("artefact_id", "n")
    )
    for artefact in artefacts:
        line: dict[str, Any] = {
            "artefact": artefact.public_id,
            "task_id": artefact.task.external_id,
            "graders": graders.get(artefact.pk, 0),
            "complete": artefact.pk in complete,
            "grades": final.get(artefact.pk, {}),
            "disputed": disputed.get(artefact.pk, []),
            "adjudicated": adjudicated.get(artefact.pk, []),
        }
        if provenance:
            line.update(_provenance(artefact))
        yield line


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def grades_file(
    *, session: GradingSession, final: bool = False, provenance: bool = False
) -> Iterator[bytes]:
    """Yield the lines of the session's grades file (``final``: one line per artefact)."""
    lines = grades_final_export if final else grades_export
    for line in lines(session=session, provenance=provenance):
        yield dump_line(line)


def session_grade_rows(
    *, session_id: int
) -> tuple[list[tuple[str, str, str, str, str]], list[tuple[str, str, str, str, str]]]:
    """Return a session's grades and adjudications in their canonical order.

    Grades are ``(artefact public id, grader, unit key, field, value)`` and adjudications
    ``(artefact public id, unit key, field, value, adjudicator)``; both the decision's grades
    hash and the evidence pack read them from here, so they describe the same rows.
    """
    grades = list(
        Grade.objects.filter(assignment__session_id=session_id)
        .order_by(
            "assignment__artefact__public_id", "assignment__grader__username", "unit_key", "field"
        )
        .values_list(
            "assignment__artefact__public_id",
            "assignment__grader__username",
            "unit_key",
            "field",
            "value",
        )
    )
    adjudications = list(
        Adjudication.objects.filter(artefact__session_id=session_id)
        .order_by("artefact__public_id", "unit_key", "field")
        .values_list("artefact__public_id", "unit_key", "field", "value", "adjudicator__username")
    )
    return grades, adjudications
