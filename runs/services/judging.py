"""Writes for judges: registering a judge version and scoring every unit of a run's outputs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import re
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from audit.canonical import sha256_hex
from audit.services import audit_record
from charters.models import GuidanceItem, KeyElement, Role, SourceChunk
from charters.models.charters import Treatment
from charters.permissions import require_role
from enterpriseval.bulk import rows_insert_missing
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
    Judging,
    JudgingStatus,
    Output,
    OutputStatus,
    Run,
    RunStatus,
    Unit,
)
from runs.services.runs import MAX_CONCURRENCY

JUDGE_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER)
PURPOSES = tuple(Treatment.values)
PURPOSE_CHOICES = [
    (Treatment.GATED.value, "Gated metric (the judge's model must differ from σ's)"),
    (Treatment.INFORMATIONAL.value, "Informational metric only"),
]
OUTPUT_BATCH = 200
#: Seconds between writes of an LLM judge's scores at most, and once every output is loaded.
WRITE_EVERY, WRITE_EVERY_CLOSED = 1.0, 0.25
#: sys.setswitchinterval while an LLM judge's calls are in flight (Python's default: 5 ms).
SWITCH_INTERVAL = 0.001
#: Seconds between collections of an LLM judge's replies by the thread that writes them.
RESULTS_POLL = 0.05
DEFAULT_CONCURRENCY = 32
MAX_LISTED_FAILURES = 20
#: What the judge reads of a unit (:func:`_item`).
UNIT_FIELDS = ("pk", "output_id", "kind", "key", "position", "text", "ref_id", "sentence_position")
#: The columns of a judge score as :func:`_record` writes them (a row of values each).
SCORE_COLUMNS = ("judge", "unit", "criterion", "score", "label", "rationale", "created_at")
NAME_PATTERN = re.compile(r"[-a-zA-Z0-9_]{1,80}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
ACTIVE_JUDGING = (JudgingStatus.PENDING, JudgingStatus.RUNNING)
MAX_CANCEL_REASON = 300
#: The judges a user chooses from, by the name the API, the CLI and the form give them.
JUDGE_KINDS = {"offline": JudgeKind.OFFLINE, "litellm": JudgeKind.LLM}
logger = logging.getLogger(__name__)
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
    on_progress: Callable[[JudgeSummary], None] | None = None,
) -> JudgeSummary:
    """Score every unit of every succeeded output of ``run`` with ``judge``; return a summary.

    Refuses a gated purpose when the judge's model is σ's model (SPEC §2: a system never
    grades itself for a gated metric). Idempotent: outputs whose units this judge version
    has scored are skipped, so a second call only judges what the first left (new units, or
    outputs whose judging failed). An LLM judge keeps ``concurrency`` calls in flight all the
    time (default: the setting ``JUDGE_LLM_CONCURRENCY``, else 32), outputs loaded and scores
    written ``batch_size`` outputs at a time (or each second) while the calls continue
    (:func:`_judge_pipeline`); the offline judge scores ``batch_size`` outputs at a time. Each
    write is one transaction, all of an output's scores or none. No
    transaction is held open across model calls; the ``run.judge`` audit entry is written
    last, with the counts. ``api_base``/``api_key_env`` default to the settings
    ``JUDGE_LLM_API_BASE``/``JUDGE_LLM_API_KEY_ENV`` (unset: litellm's provider defaults).
    ``on_progress`` is called with the summary so far once the outputs to judge are known and
    after each write of scores; if it raises (a cancelled judging), judging stops there.
    """
    started = time.monotonic()
    if actor is not None:
        require_role(actor, run.use_case, JUDGE_ROLES)
    _check_purpose(purpose)
    if batch_size < 1:
        raise ServiceError(f"batch_size must be ≥ 1, got {batch_size}", field="batch_size")
    if concurrency is not None and concurrency < 1:
        raise ServiceError(f"concurrency must be ≥ 1, got {concurrency}", field="concurrency")
    _check_finished(run)
    self_graded = _self_graded(judge, run, purpose)
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
    if on_progress is not None:
        on_progress(summary)
    if isinstance(scorer, LLMJudge):
        _judge_pipeline(
            judge,
            scorer,
            pending,
            summary,
            concurrency=concurrency or _default_concurrency(),
            batch_size=batch_size,
            on_progress=on_progress,
        )
    else:
        for start in range(0, len(pending), batch_size):
            _judge_batch(judge, scorer, pending[start : start + batch_size], summary)
            if on_progress is not None:
                on_progress(summary)
    summary.seconds = round(time.monotonic() - started, 3)
    # Judging does not enter stage 5: grading does, with its session (SPEC §3).
    with transaction.atomic():
        audit_record(actor=actor, action="run.judge", target=run, payload=summary.audit_payload())
    return summary


# -- judging a run on the workers -----------------------------------------------------------------


@transaction.atomic
def run_judge_start(
    *,
    actor: AbstractBaseUser,
    run: Run,
    kind: str,
    purpose: str,
    model_ref: str = "",
    name: str | None = None,
    api_base: str = "",
    api_key_env: str = "",
    concurrency: int | None = None,
    rubric_version: str = RUBRIC_VERSION,
    enqueue: bool = True,
) -> Judging:
    """Register the judge, record the request and enqueue the judging of ``run``; return it.

    ``kind`` is ``"offline"`` (the built-in judge) or ``"llm"`` (``model_ref`` is the
    litellm model string, ``api_base`` an OpenAI-compatible endpoint, ``api_key_env`` the
    NAME of the workers' environment variable holding its key: keys are never taken).
    Refused before anything is enqueued: a run not finished, a judge on σ's own model for a
    gated purpose (naming both models), a rubric version this code cannot reproduce, a judging
    of the run by the same judge still in progress. ``enqueue=False`` only records it, for a
    caller that runs :func:`run_judge_execute` in-process.
    """
    from runs.tasks import run_judge_task

    require_role(actor, run.use_case, JUDGE_ROLES)
    _check_purpose(purpose)
    if rubric_version != RUBRIC_VERSION:
        raise ServiceError(
            f"rubric_version: this release judges with rubric version {RUBRIC_VERSION} only "
            f"(got {rubric_version!r}); scores under another rubric could not be reproduced",
            field="rubric_version",
        )
    if concurrency is not None and (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= MAX_CONCURRENCY
    ):
        raise ServiceError(
            f"concurrency: expected a whole number from 1 to {MAX_CONCURRENCY}, "
            f"got {concurrency!r}",
            field="concurrency",
        )
    _check_finished(run)
    judge = judge_get_or_create(kind=kind, model_ref=model_ref, name=name)
    api_base, api_key_env = _endpoint(
        judge.kind, (api_base or "").strip(), (api_key_env or "").strip()
    )
    self_graded = _self_graded(judge, run, purpose)
    busy = Judging.objects.filter(run=run, judge=judge, status__in=ACTIVE_JUDGING).first()
    if busy is not None:
        raise ConflictError(
            f"run {run.pk} is being judged by {judge.name} {judge.version} already (judging "
            f"{busy.pk}, {busy.get_status_display().lower()}); wait for it to finish",
            field="judge",
        )
    judging = Judging.objects.create(
        run=run,
        judge=judge,
        purpose=purpose,
        api_base=api_base,
        api_key_env=api_key_env,
        concurrency=concurrency,
        self_graded=self_graded,
        requested_by=actor,
    )
    audit_record(
        actor=actor,
        action="run.judge_start",
        target=judging,
        use_case_id=run.use_case_id,
        payload={
            "run": run.pk,
            "judging": judging.pk,
            "judge": judge.name,
            "judge_version": judge.version,
            "kind": judge.kind,
            "model_ref": judge.model_ref,
            "rubric_sha256": judge.rubric_sha256,
            "purpose": purpose,
            "self_graded": self_graded,
            "api_base": api_base,
            "api_key_env": api_key_env,
            "concurrency": concurrency,
            "inline": not enqueue,
        },
    )
    if enqueue:
        transaction.on_commit(lambda: run_judge_task.delay(judging.pk))
    return judging


def run_judge_execute(
    *, judging_id: int, on_progress: Callable[[dict[str, int]], None] | None = None
) -> Judging:
    """Judge the run of judging ``judging_id`` with :func:`judge_run`, recording its progress.

    Not one transaction: the counters are written after each batch (and passed to
    ``on_progress``), so the run page shows progress while the judge works. Idempotent: a
    finished judging is returned as it is, and a redelivered one resumes (judge_run skips
    what is scored). A refusal or crash marks the judging failed with its message and
    records ``run.judge_fail``.
    """
    Judging.objects.filter(pk=judging_id, status=JudgingStatus.PENDING).update(
        status=JudgingStatus.RUNNING, started_at=timezone.now()
    )
    judging = Judging.objects.select_related(
        "run__configuration", "run__use_case", "judge", "requested_by"
    ).get(pk=judging_id)
    if judging.status != JudgingStatus.RUNNING:
        return judging

    def progress(summary: JudgeSummary) -> None:
        counters = _counters(summary)
        if not Judging.objects.filter(pk=judging_id, status=JudgingStatus.RUNNING).update(
            **counters
        ):
            raise _Cancelled  # judging_cancel: stop before the next batch
        if on_progress is not None:
            on_progress(counters)

    try:
        summary = judge_run(
            actor=judging.requested_by,
            run=judging.run,
            judge=judging.judge,
            purpose=cast(Purpose, judging.purpose),
            api_base=judging.api_base or None,
            api_key_env=judging.api_key_env or None,
            concurrency=judging.concurrency,
            on_progress=progress,
        )
    except _Cancelled:
        return Judging.objects.get(pk=judging_id)
    except (ServiceError, PermissionDenied) as error:
        return _judging_fail(judging_id, str(error))
    except Exception as error:  # the judging must not stay "running" after a crash
        logger.exception("judging %s crashed", judging_id)
        return _judging_fail(judging_id, f"judging stopped: {type(error).__name__}: {error}")
    Judging.objects.filter(pk=judging_id, status=JudgingStatus.RUNNING).update(
        **_counters(summary),
        status=JudgingStatus.COMPLETED if summary.complete else JudgingStatus.INCOMPLETE,
        error=_shortfall(summary),
        finished_at=timezone.now(),
    )
    judging.refresh_from_db()
    return judging


@transaction.atomic
def judging_cancel(*, actor: AbstractBaseUser, judging: Judging, reason: str = "") -> Judging:
    """Cancel a judging that is queued or running (a stuck one, or one started by mistake).

    The worker stops before its next batch; scores already written stay (they are valid, and a
    later judging by the same judge skips them). A finished judging cannot be cancelled.
    Records ``run.judge_cancel``.
    """
    locked = Judging.objects.select_for_update().select_related("run", "judge").get(pk=judging.pk)
    require_role(actor, locked.run.use_case, JUDGE_ROLES)
    if locked.status not in ACTIVE_JUDGING:
        raise ConflictError(
            f"judging {locked.pk} of run {locked.run_id} is "
            f"{locked.get_status_display().lower()}: only a pending or running judging can be "
            "cancelled",
            field="judging",
        )
    reason = (reason or "").strip()
    if len(reason) > MAX_CANCEL_REASON:
        raise ServiceError(
            f"reason: at most {MAX_CANCEL_REASON} characters, got {len(reason)}", field="reason"
        )
    was = locked.status
    locked.status = JudgingStatus.CANCELLED
    locked.finished_at = timezone.now()
    locked.error = f"Cancelled by {actor.get_username()}" + (f": {reason}" if reason else ".")
    locked.save(update_fields=["status", "finished_at", "error"])
    audit_record(
        actor=actor,
        action="run.judge_cancel",
        target=locked,
        use_case_id=locked.run.use_case_id,
        payload={
            "run": locked.run_id,
            "judging": locked.pk,
            "judge": locked.judge.name,
            "judge_version": locked.judge.version,
            "was": was,
            "outputs_done": locked.outputs_done,
            "outputs_total": locked.outputs_total,
            "reason": reason,
        },
    )
    judging.status, judging.finished_at, judging.error = (
        locked.status,
        locked.finished_at,
        locked.error,
    )
    return locked


# -- helpers ------------------------------------------------------------------------------------


class _Cancelled(Exception):
    """The judging was cancelled while the worker was judging it."""


def _check_purpose(purpose: str) -> None:
    if purpose not in PURPOSES:
        raise ServiceError(
            f"purpose must be one of {', '.join(PURPOSES)}, got {purpose!r}", field="purpose"
        )


def _check_finished(run: Run) -> None:
    if run.status in (RunStatus.PENDING, RunStatus.RUNNING):
        raise ConflictError(
            f"run {run.pk} is {run.status}; judge it once it has finished", field="run"
        )


def _self_graded(judge: Judge, run: Run, purpose: str) -> bool:
    """Return whether ``judge`` runs on σ's own model; refuse that for a gated purpose.

    SPEC §2: a system never grades itself for a gated metric. The refusal names both models
    and what to do instead.
    """
    configuration = run.configuration
    sigma_model = configuration.document.get("model", {})
    sigma_ref = configuration.model_ref or "/".join(
        str(sigma_model.get(part, "")) for part in ("provider", "id")
    )
    self_graded = judge.kind == JudgeKind.LLM and same_model(judge.model_ref, sigma_ref)
    if self_graded and purpose == Treatment.GATED:
        raise ServiceError(
            f"judge {judge.name} {judge.version} uses model {judge.model_ref} and σ "
            f"{configuration.name} v{configuration.version} uses model {sigma_ref}: both are "
            f"{model_identity(judge.model_ref)}, and a system never grades itself for a gated "
            "metric (SPEC §2). Choose a judge on another model (or the built-in offline "
            "judge), or judge for an informational metric only.",
            field="judge",
        )
    return self_graded


def _endpoint(kind: str, api_base: str, api_key_env: str) -> tuple[str, str]:
    if kind != JudgeKind.LLM:
        for label, value in (("api_base", api_base), ("api_key_env", api_key_env)):
            if value:
                raise ServiceError(
                    f"{label}: the offline judge calls no model; leave it empty, got {value!r}",
                    field=label,
                )
        return "", ""
    if api_base:
        try:
            URLValidator(schemes=["http", "https"])(api_base)
        except ValidationError:
            raise ServiceError(
                f"api_base: expected the http(s) URL of an OpenAI-compatible endpoint, e.g. "
                f"http://127.0.0.1:8000/v1, got {api_base!r}",
                field="api_base",
            ) from None
        if len(api_base) > Judging._meta.get_field("api_base").max_length:
            raise ServiceError("api_base: longer than 300 characters", field="api_base")
    if api_key_env and not ENV_NAME.fullmatch(api_key_env):
        raise ServiceError(
            "api_key_env: give the NAME of the environment variable that holds the API key "
            "(letters, digits and underscores, not starting with a digit, e.g. "
            "JUDGE_API_KEY), never the key itself",
            field="api_key_env",
        )
    return api_base, api_key_env


def _counters(summary: JudgeSummary) -> dict[str, int]:
    return {
        "outputs_total": summary.outputs_total,
        "outputs_done": summary.outputs_skipped
        + summary.outputs_without_units
        + summary.outputs_judged
        + summary.outputs_failed,
        "outputs_judged": summary.outputs_judged,
        "outputs_failed": summary.outputs_failed,
        "outputs_without_units": summary.outputs_without_units,
        "units_scored": summary.units_scored,
        "scores_written": summary.scores_written,
    }


def _shortfall(summary: JudgeSummary) -> str:
    """Return what a finished judging left unjudged, or ``""``."""
    parts = []
    if summary.outputs_failed:
        examples = "; ".join(
            f"{f['task']} #{f['repeat_index']}: {f['error']}" for f in summary.failures[:3]
        )
        parts.append(
            f"{summary.outputs_failed} output(s) got no valid reply from the judge ({examples}); "
            "judge the run again to retry them."
        )
    if summary.outputs_without_units:
        parts.append(f"{summary.outputs_without_units} output(s) have no units to judge.")
    return " ".join(parts)


@transaction.atomic
def _judging_fail(judging_id: int, reason: str) -> Judging:
    judging = Judging.objects.select_for_update().get(pk=judging_id)
    if judging.status == JudgingStatus.CANCELLED:
        return judging  # cancelled while the judge was failing: the cancellation stands
    judging.status = JudgingStatus.FAILED
    judging.error = reason
    judging.finished_at = timezone.now()
    judging.save(update_fields=["status", "error", "finished_at"])
    audit_record(
        actor=None,
        action="run.judge_fail",
        target=judging,
        use_case_id=Run.objects.values_list("use_case_id", flat=True).get(pk=judging.run_id),
        payload={"run": judging.run_id, "judging": judging.pk, "reason": reason},
    )
    return judging


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
    scorer: OfflineJudge,
    output_ids: Sequence[int],
    summary: JudgeSummary,
) -> None:
    outputs, items, unit_ids = _load_batch(output_ids, judge)
    results: list[list[UnitScore] | JudgeError] = [scorer.score(item) for item in items]
    _record(judge, outputs, results, unit_ids, summary)


def _judge_pipeline(
    judge: Judge,
    scorer: LLMJudge,
    pending: Sequence[int],
    summary: JudgeSummary,
    *,
    concurrency: int,
    batch_size: int,
    on_progress: Callable[[JudgeSummary], None] | None,
) -> None:
    """Judge ``pending`` outputs with ``concurrency`` calls in flight all the time.

    The calls run in an event loop in a helper thread: ``concurrency`` coroutines take items
    from one queue, each starting its next call as soon as its last one is answered. This
    thread, which owns the database connection, keeps that queue ahead of them (loading
    ``concurrency`` outputs first, then ``batch_size`` at a time whenever fewer than
    ``concurrency + 2 × batch_size`` are queued or in flight) and writes the finished
    outputs' scores, all of an output's or none, once ``batch_size`` are finished or
    :data:`WRITE_EVERY` seconds have passed (:data:`WRITE_EVERY_CLOSED` once all are
    loaded), then calls ``on_progress``. If
    ``on_progress`` raises (a cancelled judging) or a write fails, no new call starts, the
    calls in flight are abandoned and the exception propagates; what was written stays.
    """
    import uvloop  # the loop of RECIPES.md "Executor throughput": a third of asyncio's CPU

    loop = uvloop.new_event_loop()
    inbox: asyncio.Queue[tuple[int, JudgeItem] | None] = asyncio.Queue()
    finished: queue.Queue[tuple[int, JudgeResult | JudgeError] | BaseException] = queue.Queue()
    started = threading.Event()
    main_task: list[asyncio.Task[Any]] = []

    async def call(output_id: int, item: JudgeItem) -> None:
        try:
            reply: JudgeResult | JudgeError = await scorer.ascore(item)
        except JudgeError as error:
            reply = error
        finished.put((output_id, reply))

    async def worker() -> None:
        while (entry := await inbox.get()) is not None:
            await call(*entry)

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        main_task.append(task)
        started.set()
        await scorer.open(concurrency=concurrency)
        try:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        finally:
            await scorer.aclose()

    def serve() -> None:
        try:
            with asyncio.Runner(loop_factory=lambda: loop) as runner:
                runner.run(main())
        except asyncio.CancelledError:
            pass
        except BaseException as error:  # a bug in the judge: fail the judging, not hang it
            finished.put(error)
        finally:
            started.set()

    context: dict[int, tuple[Output, dict[str, int]]] = {}
    done: list[tuple[int, JudgeResult | JudgeError]] = []
    position = submitted = received = 0
    closed = False

    def feed() -> None:
        nonlocal position, submitted, closed
        # Two batches queued beyond the calls in flight: the calls go on through a slow write
        # followed by a slow load (each up to a second on a loaded database).
        while position < len(pending) and submitted - received < concurrency + 2 * batch_size:
            # The first calls start after a load of ``concurrency`` outputs, not of a batch.
            ids = pending[position : position + (batch_size if position else concurrency)]
            position += len(ids)
            outputs, items, unit_ids = _load_batch(ids, judge)
            entries: list[tuple[int, JudgeItem] | None] = []
            for output, item in zip(outputs, items, strict=True):
                context[output.pk] = (output, unit_ids[output.pk])
                entries.append((output.pk, item))
            loop.call_soon_threadsafe(put_all, entries)  # one wake-up of the loop per load
            submitted += len(outputs)
        if position >= len(pending) and not closed:
            loop.call_soon_threadsafe(put_all, [None] * concurrency)
            closed = True

    def put_all(entries: list[tuple[int, JudgeItem] | None]) -> None:
        for entry in entries:
            inbox.put_nowait(entry)

    def write() -> None:
        outputs = [context[output_id][0] for output_id, _ in done]
        results = [_unpack(reply, summary) for _, reply in done]
        ids = {output_id: context.pop(output_id)[1] for output_id, _ in done}
        done.clear()
        _record(judge, outputs, results, ids, summary)
        if on_progress is not None:
            on_progress(summary)

    thread = threading.Thread(target=serve, name="judge-loop", daemon=True)
    switch_interval = sys.getswitchinterval()
    # This thread's loads and writes hold the GIL for tens of milliseconds; the event loop's
    # thread gets it back after SWITCH_INTERVAL rather than 5 ms, so replies wait less.
    sys.setswitchinterval(SWITCH_INTERVAL)
    thread.start()
    started.wait()
    completed = False
    try:
        feed()
        last_write = time.monotonic()
        while received < submitted or not closed:
            # Replies are collected RESULTS_POLL apart, not as each arrives: every wake-up of
            # this thread takes the GIL from the event loop's.
            time.sleep(RESULTS_POLL)
            entries = []
            while True:
                try:
                    entries.append(finished.get_nowait())
                except queue.Empty:
                    break
            for entry in entries:
                if isinstance(entry, BaseException):
                    raise entry
                received += 1
                done.append(entry)
            all_in = closed and received == submitted
            # Once all is loaded, written more often: less is left to write after the last call.
            every = WRITE_EVERY_CLOSED if closed else WRITE_EVERY
            due = time.monotonic() - last_write >= every
            if done and (len(done) >= batch_size or all_in or due):
                write()
                last_write = time.monotonic()
            feed()
        completed = True
    finally:
        if not completed and main_task and loop.is_running():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(main_task[0].cancel)
        thread.join()
        sys.setswitchinterval(switch_interval)


def _unpack(reply: JudgeResult | JudgeError, summary: JudgeSummary) -> list[UnitScore] | JudgeError:
    """Count one LLM reply's calls and tokens; return its scores or its error."""
    if isinstance(reply, JudgeResult):
        summary.llm_calls += reply.attempts
        summary.prompt_tokens += reply.prompt_tokens
        summary.completion_tokens += reply.completion_tokens
        return reply.scores
    summary.llm_calls += getattr(reply, "attempts", 0)
    return reply


def _record(
    judge: Judge,
    outputs: Sequence[Output],
    results: Sequence[list[UnitScore] | JudgeError],
    unit_ids: dict[int, dict[str, int]],
    summary: JudgeSummary,
) -> None:
    """Write the scores of judged outputs in one transaction and count what came of each."""
    rows: list[tuple[int, int, str, float, str, str, datetime]] = []
    now = timezone.now()
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
                (judge.pk, unit_id, score.criterion, score.score, score.label, score.rationale, now)
            )
        summary.units_scored += len(scored_units)
    if rows:
        with transaction.atomic():
            # A concurrent judge_run of the same judge may have written some rows: keep theirs.
            rows_insert_missing(model=JudgeScore, columns=SCORE_COLUMNS, rows=rows)
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
    units_by_output: dict[int, list[Any]] = defaultdict(list)
    # Rows, not model instances: a batch holds thousands of units (a third of the load's CPU).
    for unit in (
        Unit.objects.filter(output_id__in=output_ids)
        .order_by("output_id", "kind", "position", "pk")
        .values_list(*UNIT_FIELDS, named=True)
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
    units: list[Any],
    sources: dict[str, str],
    elements: dict[tuple[int, str], str],
    guidance: dict[tuple[int, str], str],
    task_id: int,
) -> JudgeItem:
    by_kind: dict[str, list[Any]] = defaultdict(list)
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
