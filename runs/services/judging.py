"""Writes for judges: registering a judge version and scoring every unit of a run's outputs."""

from __future__ import annotations

import asyncio
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from audit.canonical import sha256_hex
from audit.services import audit_record
from charters.models import GuidanceItem, KeyElement, Role, SourceChunk
from charters.models.charters import Treatment
from charters.permissions import require_role
from enterpriseval.errors import ConflictError, ServiceError
from runs.judges.llm import (
    JudgeConfigError,
    JudgeError,
    JudgeResult,
    LLMJudge,
    model_identity,
    same_model,
)
from runs.judges.offline import OFFLINE_METHOD, OfflineJudge
from runs.judges.rubric import (
    CITED_CHUNK,
    GUIDANCE_ITEM,
    KEY_ELEMENT,
    RUBRIC_PROMPT,
    RUBRIC_VERSION,
    SENTENCE,
    CitedChunkUnit,
    GuidanceUnit,
    JudgeItem,
    KeyElementUnit,
    SentenceUnit,
    UnitScore,
)
from runs.models import (
    Judge,
    JudgeKind,
    JudgeScore,
    Output,
    OutputStatus,
    Run,
    RunStatus,
    Unit,
)

JUDGE_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER)
PURPOSES = tuple(Treatment.values)
OUTPUT_BATCH = 200
DEFAULT_CONCURRENCY = 8
MAX_LISTED_FAILURES = 20
NAME_PATTERN = re.compile(r"[-a-zA-Z0-9_]{1,80}")
Purpose = Literal["gated", "informational"]


@dataclass
class JudgeSummary:
    """What one :func:`judge_run` call did.

    ``outputs_total`` counts the run's succeeded outputs; each is either judged now, skipped
    (all its units already scored by this judge version), failed (the judge gave no valid
    reply: nothing of it is stored, and judging the run again retries it) or without units
    (not segmented yet). ``complete`` is true when every unit of every succeeded output has
    this judge's scores.
    """

    run_id: int
    judge_id: int
    judge_name: str
    judge_version: str
    purpose: str
    self_graded: bool
    outputs_total: int = 0
    outputs_judged: int = 0
    outputs_skipped: int = 0
    outputs_failed: int = 0
    outputs_without_units: int = 0
    units_scored: int = 0
    scores_written: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.outputs_failed == 0 and self.outputs_without_units == 0

    def audit_payload(self) -> dict[str, Any]:
        return {
            "judge": self.judge_name,
            "judge_version": self.judge_version,
            "purpose": self.purpose,
            "self_graded": self.self_graded,
            "outputs_total": self.outputs_total,
            "outputs_judged": self.outputs_judged,
            "outputs_skipped": self.outputs_skipped,
            "outputs_failed": self.outputs_failed,
            "outputs_without_units": self.outputs_without_units,
            "units_scored": self.units_scored,
            "scores_written": self.scores_written,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "complete": self.complete,
            "failures": self.failures[:MAX_LISTED_FAILURES],
        }


@transaction.atomic
def judge_get_or_create(*, kind: str, model_ref: str = "", name: str | None = None) -> Judge:
    """Return the judge ``name`` at the current rubric version, registering it if new.

    ``kind`` is ``"offline"`` (no model) or ``"llm"`` (``model_ref`` is the litellm model
    string). The stored rubric is the LLM judge's rubric prompt (plus, for the offline judge,
    the description of its heuristics) and its SHA-256; a judge of the same name and version
    with another kind, model or rubric is refused, since its scores would be ambiguous.
    """
    if kind not in JudgeKind.values:
        raise ServiceError(
            f"kind must be one of {', '.join(JudgeKind.values)}, got {kind!r}", field="kind"
        )
    model_ref = (model_ref or "").strip()
    if kind == JudgeKind.OFFLINE and model_ref:
        raise ServiceError(
            f"the offline judge uses no model; model_ref must be empty, got {model_ref!r}",
            field="model_ref",
        )
    if kind == JudgeKind.LLM and not model_ref:
        raise ServiceError(
            "an LLM judge needs model_ref, the litellm model string (e.g. openai/gpt-4o)",
            field="model_ref",
        )
    if len(model_ref) > Judge._meta.get_field("model_ref").max_length:
        raise ServiceError("model_ref is longer than 200 characters", field="model_ref")
    name = name if name is not None else _default_name(kind, model_ref)
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ServiceError(
            f"name {name!r} must be 1–80 letters, digits, hyphens or underscores", field="name"
        )
    rubric = _rubric_text(kind)
    rubric_sha256 = sha256_hex(rubric)
    existing = Judge.objects.filter(name=name, version=RUBRIC_VERSION).first()
    if existing is None:
        try:
            with transaction.atomic():
                existing = Judge.objects.create(
                    name=name,
                    version=RUBRIC_VERSION,
                    kind=kind,
                    model_ref=model_ref,
                    rubric=rubric,
                    rubric_sha256=rubric_sha256,
                )
        except IntegrityError:
            # Registered concurrently by another process: use that one, checked below.
            existing = Judge.objects.get(name=name, version=RUBRIC_VERSION)
        else:
            audit_record(
                actor=None,
                action="judge.register",
                target=existing,
                payload={
                    "name": name,
                    "version": RUBRIC_VERSION,
                    "kind": kind,
                    "model_ref": model_ref,
                    "rubric_sha256": rubric_sha256,
                },
            )
            return existing
    mismatches = [
        label
        for label, stored, wanted in (
            ("kind", existing.kind, kind),
            ("model", existing.model_ref, model_ref),
            ("rubric sha256", existing.rubric_sha256, rubric_sha256),
        )
        if stored != wanted
    ]
    if mismatches:
        raise ConflictError(
            f"judge {name} version {RUBRIC_VERSION} is registered with another "
            f"{', '.join(mismatches)} (stored kind {existing.kind}, model "
            f"{existing.model_ref or '—'}, rubric {existing.rubric_sha256[:12]}…); choose "
            "another name, or raise RUBRIC_VERSION if the rubric changed",
            field="name",
        )
    return existing


def judge_run(
    *,
    actor: AbstractBaseUser | None,
    run: Run,
    judge: Judge,
    purpose: Purpose,
    api_base: str | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
    max_attempts: int = 3,
    timeout: float = 120.0,
    backoff_base: float = 1.0,
    batch_size: int = OUTPUT_BATCH,
) -> JudgeSummary:
    """Score every unit of every succeeded output of ``run`` with ``judge``; return a summary.

    Refuses a gated purpose when the judge's model is σ's model (SPEC §2: a system never
    grades itself for a gated metric). Idempotent: outputs whose units this judge version
    has scored are skipped, so a second call only judges what the first left (new units, or
    outputs whose judging failed). Outputs are judged in batches of ``batch_size``; an LLM
    judge's calls in a batch run concurrently (at most ``concurrency`` in flight), and each
    batch's scores are written in one transaction, all of an output's or none. No
    transaction is held open across model calls; the ``run.judge`` audit entry is written
    last, with the counts. ``api_base``/``api_key_env`` default to the settings
    ``JUDGE_LLM_API_BASE``/``JUDGE_LLM_API_KEY_ENV`` (unset: litellm's provider defaults).
    """
    started = time.monotonic()
    if actor is not None:
        require_role(actor, run.use_case, JUDGE_ROLES)
    if purpose not in PURPOSES:
        raise ServiceError(
            f"purpose must be one of {', '.join(PURPOSES)}, got {purpose!r}", field="purpose"
        )
    if batch_size < 1:
        raise ServiceError(f"batch_size must be ≥ 1, got {batch_size}", field="batch_size")
    if concurrency is not None and concurrency < 1:
        raise ServiceError(f"concurrency must be ≥ 1, got {concurrency}", field="concurrency")
    if run.status in (RunStatus.PENDING, RunStatus.RUNNING):
        raise ConflictError(
            f"run {run.pk} is {run.status}; judge it once it has finished", field="run"
        )
    configuration = run.configuration
    sigma_model = configuration.document.get("model", {})
    sigma_ref = configuration.model_ref or "/".join(
        str(sigma_model.get(part, "")) for part in ("provider", "id")
    )
    self_graded = judge.kind == JudgeKind.LLM and same_model(judge.model_ref, sigma_ref)
    if self_graded and purpose == Treatment.GATED:
        raise ServiceError(
            f"judge {judge.name} {judge.version} uses model {judge.model_ref}, the same model "
            f"({model_identity(judge.model_ref)}) as σ {configuration.name} "
            f"v{configuration.version} ({sigma_ref}): a system never grades itself for a "
            "gated metric (SPEC §2). Use a judge with another model, or judge for an "
            "informational metric.",
            field="judge",
        )
    scorer = _scorer(
        judge,
        api_base=api_base,
        api_key_env=api_key_env,
        max_attempts=max_attempts,
        timeout=timeout,
        backoff_base=backoff_base,
    )
    summary = JudgeSummary(
        run_id=run.pk,
        judge_id=judge.pk,
        judge_name=judge.name,
        judge_version=judge.version,
        purpose=purpose,
        self_graded=self_graded,
    )
    pending = _outputs_to_judge(run, judge, summary)
    # One event loop for every batch (litellm keeps clients per loop); the Runner cancels
    # litellm's background logging tasks when it closes, as asyncio.run would.
    with asyncio.Runner() as runner:
        for start in range(0, len(pending), batch_size):
            _judge_batch(
                judge,
                scorer,
                pending[start : start + batch_size],
                summary,
                runner=runner,
                concurrency=concurrency or _default_concurrency(),
            )
    summary.seconds = round(time.monotonic() - started, 3)
    # Judging does not enter stage 5: grading does, with its session (SPEC §3).
    with transaction.atomic():
        audit_record(actor=actor, action="run.judge", target=run, payload=summary.audit_payload())
    return summary


# -- helpers ------------------------------------------------------------------------------------


def _default_name(kind: str, model_ref: str) -> str:
    if kind == JudgeKind.OFFLINE:
        return "offline"
    slug = re.sub(r"[^a-z0-9]+", "-", model_ref.lower()).strip("-")
    return f"llm-{slug}"[:80].rstrip("-")


def _rubric_text(kind: str) -> str:
    if kind == JudgeKind.OFFLINE:
        return f"{RUBRIC_PROMPT}\n\n{OFFLINE_METHOD}"
    return RUBRIC_PROMPT


def _default_concurrency() -> int:
    return int(getattr(settings, "JUDGE_LLM_CONCURRENCY", DEFAULT_CONCURRENCY))


def _scorer(
    judge: Judge,
    *,
    api_base: str | None,
    api_key_env: str | None,
    max_attempts: int,
    timeout: float,
    backoff_base: float,
) -> OfflineJudge | LLMJudge:
    if judge.rubric_sha256 != sha256_hex(_rubric_text(judge.kind)):
        raise ConflictError(
            f"judge {judge.name} {judge.version} was registered with another rubric "
            f"(sha256 {judge.rubric_sha256[:12]}…) than this code's; its scores could not be "
            "reproduced. Register a new version (raise RUBRIC_VERSION).",
            field="judge",
        )
    if judge.kind == JudgeKind.OFFLINE:
        return OfflineJudge()
    try:
        scorer = LLMJudge(
            judge.model_ref,
            api_base=api_base or getattr(settings, "JUDGE_LLM_API_BASE", None),
            api_key_env=api_key_env or getattr(settings, "JUDGE_LLM_API_KEY_ENV", None),
            max_attempts=max_attempts,
            timeout=timeout,
            backoff_base=backoff_base,
        )
        scorer.check_api_key()
    except (ValueError, JudgeConfigError) as error:
        raise ServiceError(str(error), field="judge") from None
    return scorer


def _outputs_to_judge(run: Run, judge: Judge, summary: JudgeSummary) -> list[int]:
    """Return the ids of the run's succeeded outputs with a unit this judge has not scored."""
    succeeded = Output.objects.filter(run=run, status=OutputStatus.SUCCEEDED)
    summary.outputs_total = succeeded.count()
    with_units = set(
        Unit.objects.filter(output__in=succeeded)
        .order_by()
        .values_list("output_id", flat=True)
        .distinct()
    )
    summary.outputs_without_units = summary.outputs_total - len(with_units)
    scored = JudgeScore.objects.filter(judge=judge, unit=OuterRef("pk"))
    pending = sorted(
        set(
            Unit.objects.filter(output__in=succeeded)
            .exclude(Exists(scored))
            .order_by()
            .values_list("output_id", flat=True)
            .distinct()
        )
    )
    summary.outputs_skipped = len(with_units) - len(pending)
    return pending


def _judge_batch(
    judge: Judge,
    scorer: OfflineJudge | LLMJudge,
    output_ids: Sequence[int],
    summary: JudgeSummary,
    *,
    runner: asyncio.Runner,
    concurrency: int,
) -> None:
    outputs, items, unit_ids = _load_batch(output_ids, judge)
    results: list[list[UnitScore] | JudgeError]
    if isinstance(scorer, LLMJudge):
        replies = runner.run(scorer.ascore_many(items, concurrency=concurrency))
        results = []
        for reply in replies:
            if isinstance(reply, JudgeResult):
                summary.llm_calls += reply.attempts
                summary.prompt_tokens += reply.prompt_tokens
                summary.completion_tokens += reply.completion_tokens
                results.append(reply.scores)
            else:
                summary.llm_calls += getattr(reply, "attempts", 0)
                results.append(reply)
    else:
        results = [scorer.score(item) for item in items]

    rows: list[JudgeScore] = []
    for output, result in zip(outputs, results, strict=True):
        if isinstance(result, JudgeError):
            summary.outputs_failed += 1
            if len(summary.failures) < MAX_LISTED_FAILURES:
                summary.failures.append(
                    {
                        "output_id": output.pk,
                        "task": output.task.external_id,
                        "repeat_index": output.repeat_index,
                        "error": str(result)[:500],
                    }
                )
            continue
        summary.outputs_judged += 1
        keys = unit_ids[output.pk]
        scored_units: set[int] = set()
        for score in result:
            unit_id = keys.get(score.unit_key)
            if unit_id is None:  # already scored, or a key the judge invented
                continue
            scored_units.add(unit_id)
            rows.append(
                JudgeScore(
                    judge=judge,
                    unit_id=unit_id,
                    criterion=score.criterion,
                    score=score.score,
                    label=score.label,
                    rationale=score.rationale,
                )
            )
        summary.units_scored += len(scored_units)
    if rows:
        with transaction.atomic():
            # A concurrent judge_run of the same judge may have written some rows: keep theirs.
            JudgeScore.objects.bulk_create(rows, ignore_conflicts=True)
        summary.scores_written += len(rows)


def _load_batch(
    output_ids: Sequence[int], judge: Judge
) -> tuple[list[Output], list[JudgeItem], dict[int, dict[str, int]]]:
    """Return the outputs, their judge items, and per output the ids of units still to score.

    Six queries whatever the batch size: outputs with tasks, units, scored units, source
    chunks, key elements, guidance items.
    """
    outputs = list(
        Output.objects.filter(pk__in=output_ids)
        .select_related("task")
        .only("pk", "text", "repeat_index", "task__id", "task__input", "task__external_id")
        .order_by("pk")
    )
    units_by_output: dict[int, list[Unit]] = defaultdict(list)
    for unit in Unit.objects.filter(output_id__in=output_ids).order_by(
        "output_id", "kind", "position", "pk"
    ):
        units_by_output[unit.output_id].append(unit)
    already = set(
        JudgeScore.objects.filter(judge=judge, unit__output_id__in=output_ids)
        .order_by()
        .values_list("unit_id", flat=True)
        .distinct()
    )
    task_ids = {output.task_id for output in outputs}
    chunks: dict[int, dict[str, str]] = defaultdict(dict)
    for task_id, chunk_id, text in SourceChunk.objects.filter(task_id__in=task_ids).values_list(
        "task_id", "chunk_id", "text"
    ):
        chunks[task_id][chunk_id] = text
    elements = _texts(KeyElement, "element_id", task_ids)
    guidance = _texts(GuidanceItem, "item_id", task_ids)

    items: list[JudgeItem] = []
    unit_ids: dict[int, dict[str, int]] = {}
    for output in outputs:
        units = units_by_output[output.pk]
        items.append(
            _item(output, units, chunks[output.task_id], elements, guidance, output.task_id)
        )
        unit_ids[output.pk] = {u.key: u.pk for u in units if u.pk not in already}
    return outputs, items, unit_ids


def _texts(model: Any, id_field: str, task_ids: set[int]) -> dict[tuple[int, str], str]:
    return {
        (task_id, ref): text
        for task_id, ref, text in model.objects.filter(task_id__in=task_ids).values_list(
            "task_id", id_field, "text"
        )
    }


def _item(
    output: Output,
    units: list[Unit],
    sources: dict[str, str],
    elements: dict[tuple[int, str], str],
    guidance: dict[tuple[int, str], str],
    task_id: int,
) -> JudgeItem:
    by_kind: dict[str, list[Unit]] = defaultdict(list)
    for unit in units:
        by_kind[unit.kind].append(unit)
    sentence_key = {u.position: u.key for u in by_kind[SENTENCE]}
    cites: dict[int, list[str]] = defaultdict(list)
    for unit in by_kind[CITED_CHUNK]:
        if unit.sentence_position is not None:
            cites[unit.sentence_position].append(unit.ref_id)
    return JudgeItem(
        output_text=output.text,
        task_input=output.task.input,
        sources=sources,
        sentences=tuple(
            SentenceUnit(u.key, u.text, tuple(dict.fromkeys(cites[u.position])))
            for u in by_kind[SENTENCE]
        ),
        cited_chunks=tuple(
            CitedChunkUnit(
                u.key,
                u.ref_id,
                sentence_key.get(u.sentence_position) if u.sentence_position is not None else None,
            )
            for u in by_kind[CITED_CHUNK]
        ),
        key_elements=tuple(
            KeyElementUnit(u.key, u.ref_id, u.text or elements.get((task_id, u.ref_id), ""))
            for u in by_kind[KEY_ELEMENT]
        ),
        guidance=tuple(
            GuidanceUnit(u.key, u.ref_id, u.text or guidance.get((task_id, u.ref_id), ""))
            for u in by_kind[GUIDANCE_ITEM]
        ),
    )
