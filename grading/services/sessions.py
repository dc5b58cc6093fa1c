"""Writes for grading sessions: draw the blinded sample and assign it (SPEC §5.1, §5.2)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from audit.services import audit_record
from charters.catalogue import catalogue
from charters.models import Charter, Membership, Role, Stage, Task, UseCase
from charters.models.charters import Treatment
from charters.models.tasks import Split
from charters.permissions import require_role
from charters.services.use_cases import use_case_advance
from enterpriseval.errors import ConflictError, ServiceError
from grading.models import (
    ArtefactKind,
    Assignment,
    GradingSession,
    SampleDesign,
    SessionArtefact,
    SessionMode,
    SessionStatus,
    TauRule,
)
from grading.sampling import (
    Candidate,
    Sampled,
    assign_graders,
    blind_order,
    draw_arms,
    expected_outputs,
    stratum_label,
    stratum_run,
)
from grading.services.sequential import (
    DEFAULT_TAU,
    sequential_close,
    sequential_session_create,
)
from runs.models import Judge, Output, OutputStatus, Run, RunStatus, Unit

SESSION_ROLES = (Role.CHARTER_OWNER,)
MAX_SEED = 2**62
#: A task metadata key to stratify by within each run ("" for none).
STRATUM_KEY = re.compile(r"[A-Za-z0-9_]{0,20}")


BASELINE_ARM = "baseline"


def sigma_arm(configuration_id: int) -> str:
    """Return the arm key of a σ: a session samples the planned n for each (SPEC §5.3)."""
    return f"sigma:{configuration_id}"


@dataclass(frozen=True, slots=True)
class ArmPlan:
    """The sample size planned for one arm (a σ, or the human baselines), and what sets it."""

    arm: str
    label: str
    population: int
    size: int
    metric_id: str | None
    planned_units: int | None
    mean_units_per_output: float | None

    @property
    def capped(self) -> bool:
        return self.metric_id is not None and self.size == self.population


@dataclass(frozen=True, slots=True)
class SamplePlan:
    """The sample size a charter plans for each arm a session serves: the planned n per σ."""

    arms: tuple[ArmPlan, ...]

    @property
    def size(self) -> int:
        return sum(arm.size for arm in self.arms)

    @property
    def population(self) -> int:
        return sum(arm.population for arm in self.arms)


def sample_plan(
    *, charter: Charter, runs: Sequence[Run], outputs: Sequence[Output], baselines: int = 0
) -> SamplePlan:
    """Return how many artefacts to sample from each σ so each reaches the charter's planned n.

    The planned n is per σ (SPEC §5.3): for each σ and each gated metric graded by humans
    (catalogue grading H) with a planned n in units, the σ needs ⌈planned n / mean units per
    output⌉ outputs, the mean taken over that σ's candidate outputs; the largest wins, capped
    at the σ's outputs. Without such a metric a σ's whole population is planned. The human
    baselines (``baselines`` artefacts) form an arm of their own, planned at the largest σ's
    size, capped at their number.
    """
    configuration_of = {run.pk: run.configuration for run in runs}
    by_sigma: dict[int, list[Output]] = {}
    for output in outputs:
        by_sigma.setdefault(configuration_of[output.run_id].pk, []).append(output)
    unit_counts = {
        (row["output_id"], row["kind"]): row["n"]
        for row in Unit.objects.filter(output__in=[o.pk for o in outputs])
        .values("output_id", "kind")
        .annotate(n=Count("pk"))
    }
    gated = [
        metric
        for metric in charter.metrics.filter(treatment=Treatment.GATED, planned_n__isnull=False)
        if (spec := catalogue().get(metric.metric_id)) is not None
        and spec.human_graded_when(charter.rubric_fields or ())
    ]
    arms: list[ArmPlan] = []
    for configuration_id, members in by_sigma.items():
        configuration = next(c for c in configuration_of.values() if c.pk == configuration_id)
        label = f"σ {configuration.name} v{configuration.version}"
        arms.append(_arm_plan(sigma_arm(configuration_id), label, members, gated, unit_counts))
    if baselines:
        largest = max((arm.size for arm in arms), default=baselines)
        arms.append(
            ArmPlan(
                BASELINE_ARM,
                "human baseline artefacts",
                baselines,
                min(largest, baselines),
                None,
                None,
                None,
            )
        )
    return SamplePlan(tuple(arms))


def _arm_plan(
    arm: str,
    label: str,
    outputs: Sequence[Output],
    gated: Sequence[Any],
    unit_counts: Mapping[tuple[int, str], int],
) -> ArmPlan:
    population = len(outputs)
    best = ArmPlan(arm, label, population, population, None, None, None)
    best_needed = 0
    metrics = catalogue()
    for metric in gated:
        kind = metrics[metric.metric_id].unit.replace(" ", "_")
        total = sum(unit_counts.get((o.pk, kind), 0) for o in outputs)
        if total == 0:
            continue
        mean = total / population
        needed = expected_outputs(metric.planned_n, mean)
        if needed > best_needed:
            best_needed = needed
            best = ArmPlan(
                arm,
                label,
                population,
                min(needed, population),
                metric.metric_id,
                metric.planned_n,
                mean,
            )
    return best


@transaction.atomic
def session_create(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    name: str,
    runs: Sequence[Run],
    graders: Sequence[AbstractBaseUser],
    adjudicators: Sequence[AbstractBaseUser],
    include_baselines: bool = False,
    design: str = SampleDesign.UNIFORM,
    sample_size: int | None = None,
    graders_per_artefact: int = 2,
    seed: int | None = None,
    stratify_by: str = "",
    mode: str = SessionMode.FIXED,
    judge: Judge | None = None,
    tau: float = DEFAULT_TAU,
    tau_rule: str = TauRule.FIXED,
    budget: int | None = None,
    agreement_size: int | None = None,
) -> GradingSession:
    """Draw a seeded blinded sample of the runs' graded outputs and assign it to graders.

    The population is every succeeded output of the graded split in ``runs`` (and, with
    ``include_baselines``, the human reference artefact of every graded task that has one).
    The planned n is per σ (SPEC §5.3): each σ of ``runs`` (and the baselines) is an arm
    sampled on its own, ``sample_size`` outputs for each σ, by default what the charter plans
    for it (:func:`sample_plan`). Within a σ, stratified samples use one stratum per run, so
    each run is represented in proportion, and with ``stratify_by`` (a task metadata key) one
    stratum per value of that key within each run (:func:`grading.sampling.stratum_label`;
    the estimators weight each stratum by N_h/n_h); neither arm nor stratum reaches a grader.

    ``mode="sequential"`` (SPEC §5.5) draws one run's outputs one at a time while grading
    proceeds, by the ``judge``'s uncertainty with uniform share ``tau`` (with ``tau_rule``
    "adaptive": the floor of a share τ_t chosen before each draw), up to ``budget``
    outputs (default: the charter's plan for the σ), beside a uniform sub-sample of
    ``agreement_size`` outputs for agreement (:mod:`grading.services.sequential`).
    """
    require_role(actor, use_case, SESSION_ROLES)
    charter = Charter.objects.frozen().filter(use_case=use_case).order_by("-version").first()
    if charter is None:
        raise ConflictError(
            "A grading session needs a signed charter: the sample size and κ target are "
            "pre-registered in it.",
            field="charter",
        )
    name = name.strip()
    if not name:
        raise ServiceError("Give the session a name.", field="name")
    if mode not in SessionMode.values:
        raise ServiceError(
            f"mode must be one of {', '.join(SessionMode.values)}, got {mode!r}", field="mode"
        )
    if design not in SampleDesign.values:
        raise ServiceError(
            f"design must be one of {', '.join(SampleDesign.values)}, got {design!r}",
            field="design",
        )
    if tau_rule not in TauRule.values:
        raise ServiceError(
            f"tau_rule must be one of {', '.join(TauRule.values)}, got {tau_rule!r}",
            field="tau_rule",
        )
    if tau_rule == TauRule.ADAPTIVE and mode != SessionMode.SEQUENTIAL:
        raise ServiceError(
            "The adaptive uniform share applies to sequential sessions: a fixed-n session "
            "draws its whole sample at creation (SPEC §5.5).",
            field="tau_rule",
        )
    stratify_by = stratify_by.strip()
    if stratify_by and mode == SessionMode.SEQUENTIAL:
        raise ServiceError(
            "stratify_by applies to fixed-n sessions: a sequential session draws by the "
            "judge's uncertainty (SPEC §5.5).",
            field="stratify_by",
        )
    if stratify_by and design != SampleDesign.STRATIFIED:
        raise ServiceError(
            "stratify_by needs the stratified design: a uniform sample has no strata.",
            field="stratify_by",
        )
    if not STRATUM_KEY.fullmatch(stratify_by):
        raise ServiceError(
            f"stratify_by must be a task metadata key of letters, digits and _ (at most 20), "
            f"got {stratify_by!r}",
            field="stratify_by",
        )
    runs = checked_runs(use_case, runs)
    task_set = runs[0].task_set
    _check_name_is_blind(name, runs)
    grader_ids = members_holding(use_case, graders, Role.GRADER, "graders")
    adjudicator_ids = members_holding(use_case, adjudicators, Role.ADJUDICATOR, "adjudicators")
    if not adjudicator_ids:
        raise ServiceError("Name at least one adjudicator.", field="adjudicators")
    if set(grader_ids) & set(adjudicator_ids):
        raise ServiceError(
            "An adjudicator must be a third person, not one of the session's graders.",
            field="adjudicators",
        )
    if graders_per_artefact < 2:
        raise ServiceError(
            "Each artefact needs at least 2 graders (SPEC §5.1).", field="graders_per_artefact"
        )
    if len(grader_ids) < graders_per_artefact:
        raise ServiceError(
            f"{graders_per_artefact} graders per artefact need at least "
            f"{graders_per_artefact} graders; {len(grader_ids)} named.",
            field="graders",
        )

    outputs = list(
        Output.objects.filter(run__in=runs, task__split=Split.GRADED, status=OutputStatus.SUCCEEDED)
        .select_related("task")
        .order_by("run_id", "task_id", "repeat_index")
    )
    baselines: list[Task] = []
    if include_baselines:
        baselines = list(
            Task.objects.filter(task_set=task_set, split=Split.GRADED)
            .exclude(reference="")
            .order_by("line_number")
        )
    configuration_of = {run.pk: run.configuration_id for run in runs}
    candidates = [
        Candidate(
            ("output", o.pk),
            stratum_label(o.run_id, o.task.metadata, stratify_by),
            sigma_arm(configuration_of[o.run_id]),
        )
        for o in outputs
    ]
    candidates += [Candidate(("baseline", t.pk), BASELINE_ARM, BASELINE_ARM) for t in baselines]
    if not candidates:
        raise ServiceError(
            "The runs have no succeeded outputs of graded tasks to sample.", field="runs"
        )
    plan = sample_plan(charter=charter, runs=runs, outputs=outputs, baselines=len(baselines))
    seed = secrets.randbelow(MAX_SEED) if seed is None else seed
    if not 0 <= seed < MAX_SEED:
        raise ServiceError(f"seed must be between 0 and 2^62, got {seed}.", field="seed")
    if mode == SessionMode.SEQUENTIAL:
        if len(runs) != 1 or include_baselines:
            raise ServiceError(
                "A sequential session decides one σ's run: choose one run and no baselines.",
                field="runs",
            )
        return sequential_session_create(
            actor=actor,
            use_case=use_case,
            charter=charter,
            name=name,
            run=runs[0],
            grader_ids=grader_ids,
            adjudicator_ids=adjudicator_ids,
            graders_per_artefact=graders_per_artefact,
            seed=seed,
            judge=judge,
            tau=tau,
            tau_rule=tau_rule,
            budget=budget if budget is not None else sample_size,
            planned=plan.arms[0].size,
            agreement_size=agreement_size,
        )
    sizes = _arm_sizes(plan, sample_size)
    sample = draw_arms(candidates, sizes, seed=seed, design=design)
    size = len(sample)
    arms = _arm_records(plan, sizes, sample, runs, configuration_of)

    session = GradingSession.objects.create(
        use_case=use_case,
        name=name,
        charter=charter,
        task_set=task_set,
        include_baselines=include_baselines,
        design=design,
        seed=seed,
        population_size=len(candidates),
        sample_size=size,
        arms=arms,
        graders_per_artefact=graders_per_artefact,
        created_by=actor,
    )
    session.runs.set(runs)
    session.adjudicators.set(adjudicator_ids)
    session.graders.set(grader_ids)
    output_task = {o.pk: o.task_id for o in outputs}
    artefacts = SessionArtefact.objects.bulk_create(
        [
            SessionArtefact(
                session=session,
                kind=ArtefactKind.OUTPUT if item.id[0] == "output" else ArtefactKind.BASELINE,
                output_id=item.id[1] if item.id[0] == "output" else None,
                task_id=output_task[item.id[1]] if item.id[0] == "output" else item.id[1],
                stratum=item.stratum,
                inclusion_probability=item.inclusion_probability,
                asks=charter.rubric_fields or None,
            )
            for item in sample
        ]
    )
    artefacts = list(SessionArtefact.objects.filter(session=session).order_by("pk"))
    _assign(session, artefacts, grader_ids, graders_per_artefact, seed)
    manifest = [
        {
            "artefact": a.public_id,
            "kind": a.kind,
            "output": a.output_id,
            "task": a.task_id,
            "stratum": a.stratum,
            "pi": a.inclusion_probability,
        }
        for a in artefacts
    ]
    audit_record(
        actor=actor,
        action="grading_session.create",
        target=session,
        payload={
            "name": name,
            "charter_version": charter.version,
            "runs": [r.pk for r in runs],
            "design": design,
            "stratify_by": stratify_by,
            "seed": str(seed),
            "population": len(candidates),
            "sample_size": size,
            "arms": arms,
            "graders_per_artefact": graders_per_artefact,
            "graders": sorted(grader_ids),
            "adjudicators": sorted(adjudicator_ids),
            "sample_sha256": sha256_hex(canonical_json(manifest)),
        },
    )
    use_case_advance(
        actor=actor, use_case=use_case, stage=Stage.GRADE, note=f"grading session {name}"
    )
    return session


def _arm_sizes(plan: SamplePlan, sample_size: int | None) -> dict[str, int]:
    """Return each arm's size: the plan's, or ``sample_size`` for every σ (baselines capped)."""
    if sample_size is None:
        return {arm.arm: arm.size for arm in plan.arms}
    sizes: dict[str, int] = {}
    for arm in plan.arms:
        if arm.arm == BASELINE_ARM:
            sizes[arm.arm] = min(max(sample_size, 1), arm.population)
        elif not 1 <= sample_size <= arm.population:
            raise ServiceError(
                f"sample_size is drawn for each σ and must be between 1 and the "
                f"{arm.population} outputs of {arm.label}, got {sample_size}.",
                field="sample_size",
            )
        else:
            sizes[arm.arm] = sample_size
    return sizes


def _arm_records(
    plan: SamplePlan,
    sizes: Mapping[str, int],
    sample: Sequence[Sampled],
    runs: Sequence[Run],
    configuration_of: Mapping[int, int],
) -> list[dict[str, Any]]:
    """Return the design of each arm as the session records it: sizes, π per stratum."""
    pi: dict[str, dict[str, float]] = {}
    for item in sample:
        arm = (
            BASELINE_ARM
            if item.stratum == BASELINE_ARM
            else sigma_arm(configuration_of[stratum_run(item.stratum)])
        )
        pi.setdefault(arm, {})[item.stratum] = item.inclusion_probability
    return [
        {
            "arm": arm.arm,
            "label": arm.label,
            "runs": [r.pk for r in runs if sigma_arm(r.configuration_id) == arm.arm],
            "population": arm.population,
            "planned": arm.size,
            "planned_by": arm.metric_id or "",
            "planned_units": arm.planned_units,
            "sampled": sizes[arm.arm],
            "inclusion_probabilities": dict(sorted(pi.get(arm.arm, {}).items())),
        }
        for arm in plan.arms
    ]


@transaction.atomic
def session_close(*, actor: AbstractBaseUser, session: GradingSession) -> GradingSession:
    """Close the session: no grade, revision or adjudication is accepted after this."""
    require_role(actor, session.use_case, SESSION_ROLES)
    locked = GradingSession.objects.select_for_update().get(pk=session.pk)
    if locked.status == SessionStatus.CLOSED:
        raise ConflictError("The session is already closed.", field="status")
    if locked.is_sequential:
        closed = sequential_close(actor=actor, session=locked)
        if closed.status == SessionStatus.CLOSED:
            return closed
    locked.status = SessionStatus.CLOSED
    locked.closed_at = timezone.now()
    locked.save(update_fields=["status", "closed_at"])
    audit_record(actor=actor, action="grading_session.close", target=locked)
    return locked


def checked_runs(use_case: UseCase, runs: Sequence[Run]) -> list[Run]:
    runs = list(runs)
    if not runs:
        raise ServiceError("Choose at least one run to sample outputs from.", field="runs")
    for run in runs:
        if run.use_case_id != use_case.pk:
            raise ServiceError(f"Run {run.pk} belongs to another use case.", field="runs")
        if run.status != RunStatus.COMPLETED:
            raise ConflictError(
                f"Run {run.pk} is {run.get_status_display().lower()}; only completed runs are "
                "graded.",
                field="runs",
            )
    if len({run.task_set_id for run in runs}) > 1:
        raise ServiceError(
            "The runs use different task sets; a session compares outputs of one task set.",
            field="runs",
        )
    return sorted(runs, key=lambda r: r.pk)


def provenance_strings(runs: Sequence[Run]) -> list[str]:
    """Return the strings that would reveal an artefact's provenance to a grader."""
    strings: set[str] = {"baseline"}
    for run in runs:
        configuration = run.configuration
        strings.update(
            {
                configuration.name,
                configuration.sha256,
                configuration.model_ref,
                configuration.model_ref.rsplit("/", 1)[-1],
            }
        )
    return sorted(s for s in strings if s)


def _check_name_is_blind(name: str, runs: Sequence[Run]) -> None:
    lowered = name.lower()
    for text in provenance_strings(runs):
        if text.lower() in lowered:
            raise ServiceError(
                f"The session name is shown to graders and must not reveal provenance; it "
                f"contains {text!r}.",
                field="name",
            )


def members_holding(
    use_case: UseCase, users: Sequence[AbstractBaseUser], role: Role, field: str
) -> list[int]:
    ids = [user.pk for user in users]
    if len(set(ids)) != len(ids):
        raise ServiceError(f"A user is named twice among the {field}.", field=field)
    holding = set(
        Membership.objects.filter(use_case=use_case, role=role, user_id__in=ids).values_list(
            "user_id", flat=True
        )
    )
    for user in users:
        if user.pk not in holding:
            raise ServiceError(
                f"{user.get_username()} does not hold the {role.label.lower()} role on "
                f"{use_case.key}.",
                field=field,
            )
    return ids


def _assign(
    session: GradingSession,
    artefacts: Sequence[SessionArtefact],
    grader_ids: Sequence[int],
    per_artefact: int,
    seed: int,
) -> None:
    chosen = assign_graders(len(artefacts), list(grader_ids), per_artefact, seed=seed)
    by_grader: dict[int, list[SessionArtefact]] = {g: [] for g in grader_ids}
    for artefact, graders in zip(artefacts, chosen, strict=True):
        for grader in graders:
            by_grader[int(grader)].append(artefact)  # type: ignore[call-overload]
    rows: list[Assignment] = []
    for grader_id, items in by_grader.items():
        order = blind_order(len(items), seed=seed, grader_key=grader_id)
        rows.extend(
            Assignment(session=session, artefact=items[i], grader_id=grader_id, position=p + 1)
            for p, i in enumerate(order)
        )
    Assignment.objects.bulk_create(rows)
