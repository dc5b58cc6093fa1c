"""Writes for oversight studies: seed defects into blinded review queues, record decisions.

An oversight study measures the workflow's human oversight (SPEC §4 catch_rate,
false_acceptance_rate): copies of outputs, a share of them carrying one seeded defect each
(:mod:`grading.defects`), are mixed blind into reviewers' queues; each reviewer accepts or
rejects each copy and marks the sentences (and missing key elements) at fault.
"""

from __future__ import annotations

import math
import os
import secrets
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import BinaryIO

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from audit.services import audit_record
from charters.models import KeyElement, Role, SourceChunk, UseCase
from charters.models.tasks import Split
from charters.permissions import require_role
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from enterpriseval.limits import UploadKind, upload_stream
from grading.defects import KEY_ELEMENT_PREFIX, SeededDefect, seed_defect
from grading.models import (
    DefectKind,
    OversightItem,
    OversightStudy,
    ReviewDecision,
    SessionStatus,
)
from grading.oversight_io import DecisionFileReader, ItemState
from grading.selectors.oversight import task_key_element_ids
from grading.services.sessions import MAX_SEED, checked_runs, members_holding, provenance_strings
from runs.models import Output, OutputStatus, Run
from runs.segment import split_sentences

STUDY_ROLES = (Role.CHARTER_OWNER,)
#: Most seconds one decision may add: a tab left open overnight is not review time.
MAX_SECONDS_PER_DECISION = 1800.0
MAX_ITEMS_PER_REVIEWER = 500


@transaction.atomic
def oversight_study_create(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    name: str,
    runs: Sequence[Run],
    reviewers: Sequence[AbstractBaseUser],
    items_per_reviewer: int,
    defect_share: float = 0.3,
    kinds: Sequence[str] | None = None,
    seed: int | None = None,
) -> OversightStudy:
    """Build each reviewer's blinded queue of output copies, a share of them defective.

    The copies are drawn, with the seed, from the succeeded outputs of graded tasks in
    ``runs``, distinct within a queue. ``round(defect_share · items_per_reviewer)`` copies
    of each queue carry exactly one seeded defect; the kinds are dealt round-robin across
    the whole study (so they are balanced) and the queue is shuffled, so a defective copy's
    position tells nothing. Reviewers must hold the grader role: they see the copies blind.
    """
    require_role(actor, use_case, STUDY_ROLES)
    name = name.strip()
    if not name:
        raise ServiceError("Give the study a name.", field="name")
    runs = checked_runs(use_case, runs)
    _check_blind(name, runs)
    reviewer_ids = sorted(members_holding(use_case, reviewers, Role.GRADER, "reviewers"))
    if not reviewer_ids:
        raise ServiceError("Name at least one reviewer.", field="reviewers")
    if not 1 <= items_per_reviewer <= MAX_ITEMS_PER_REVIEWER:
        raise ServiceError(
            f"items_per_reviewer must be between 1 and {MAX_ITEMS_PER_REVIEWER}, got "
            f"{items_per_reviewer}.",
            field="items_per_reviewer",
        )
    if not (isinstance(defect_share, int | float) and 0.0 <= defect_share <= 1.0):
        raise ServiceError(
            f"defect_share must be a share between 0 and 1, got {defect_share!r}.",
            field="defect_share",
        )
    kinds = _checked_kinds(kinds)
    seed = secrets.randbelow(MAX_SEED) if seed is None else seed
    if not 0 <= seed < MAX_SEED:
        raise ServiceError(f"seed must be between 0 and 2^62, got {seed}.", field="seed")
    outputs = list(
        Output.objects.filter(run__in=runs, task__split=Split.GRADED, status=OutputStatus.SUCCEEDED)
        .exclude(text="")
        .only("pk", "task_id", "text")
        .order_by("run_id", "task_id", "repeat_index")
    )
    if items_per_reviewer > len(outputs):
        raise ServiceError(
            f"items_per_reviewer must be at most the {len(outputs)} outputs available, got "
            f"{items_per_reviewer}.",
            field="items_per_reviewer",
        )
    seeded_per_queue = math.floor(defect_share * items_per_reviewer + 0.5)
    if seeded_per_queue and not kinds:
        raise ServiceError("Choose at least one kind of defect.", field="kinds")

    study = OversightStudy.objects.create(
        use_case=use_case, name=name, seed=seed, defect_share=defect_share, created_by=actor
    )
    study.runs.set(runs)
    rng = np.random.default_rng(seed)
    gold = _gold({o.task_id for o in outputs})
    rows: list[OversightItem] = []
    dealt = 0
    for reviewer_id in reviewer_ids:
        plan = [kinds[(dealt + i) % len(kinds)] for i in range(seeded_per_queue)]
        dealt += seeded_per_queue
        queue = _queue(outputs, gold, plan, items_per_reviewer, rng)
        for position, index in enumerate(rng.permutation(len(queue)), start=1):
            output, defect = queue[int(index)]
            rows.append(
                OversightItem(
                    study=study,
                    reviewer_id=reviewer_id,
                    position=position,
                    source_output=output,
                    text=output.text if defect is None else defect.text,
                    defects=[] if defect is None else [defect.as_record()],
                )
            )
    OversightItem.objects.bulk_create(rows)
    items = list(study.items.order_by("reviewer_id", "position"))
    manifest = [
        {
            "item": item.public_id,
            "reviewer": item.reviewer_id,
            "position": item.position,
            "output": item.source_output_id,
            "defects": item.defects,
        }
        for item in items
    ]
    audit_record(
        actor=actor,
        action="oversight_study.create",
        target=study,
        payload={
            "name": name,
            "runs": [r.pk for r in runs],
            "seed": str(seed),
            "defect_share": defect_share,
            "kinds": list(kinds),
            "reviewers": reviewer_ids,
            "items_per_reviewer": items_per_reviewer,
            "items": len(items),
            "seeded": dict(Counter(d["kind"] for item in items for d in item.defects)),
            "items_sha256": sha256_hex(canonical_json(manifest)),
        },
    )
    return study


@transaction.atomic
def oversight_study_close(*, actor: AbstractBaseUser, study: OversightStudy) -> OversightStudy:
    """Close the study: no decision or revision is accepted after this."""
    require_role(actor, study.use_case, STUDY_ROLES)
    locked = OversightStudy.objects.select_for_update().get(pk=study.pk)
    if locked.status == SessionStatus.CLOSED:
        raise ConflictError("The study is already closed.", field="status")
    locked.status = SessionStatus.CLOSED
    locked.closed_at = timezone.now()
    locked.save(update_fields=["status", "closed_at"])
    audit_record(actor=actor, action="oversight_study.close", target=locked)
    return locked


@transaction.atomic
def oversight_item_decide(
    *,
    actor: AbstractBaseUser,
    item: OversightItem,
    decision: str,
    flags: Sequence[str],
    comment: str = "",
    elapsed_seconds: float = 0.0,
    reason: str = "",
) -> OversightItem:
    """Record a reviewer's accept/reject of one copy and the units they marked as problems.

    ``flags`` are sentence keys of the copy (``s3``) and key elements marked missing
    (``k:ke2``). A decision is final: changing it needs a ``reason`` and is logged as a
    revision. ``elapsed_seconds`` (time on the item) is added, capped at
    :data:`MAX_SECONDS_PER_DECISION`.
    """
    locked = (
        OversightItem.objects.select_for_update()
        .select_related("study", "source_output")
        .get(pk=item.pk)
    )
    if locked.reviewer_id != actor.pk:
        raise Http404("No such item.")
    if locked.study.status == SessionStatus.CLOSED:
        raise ImmutableError("The oversight study is closed.", field="study")
    if decision not in ReviewDecision.values:
        raise ServiceError(
            f"decision must be one of {', '.join(ReviewDecision.values)}, got {decision!r}.",
            field="decision",
        )
    flags = _checked_flags(locked, flags)
    elapsed = _elapsed(elapsed_seconds)
    old = {"decision": locked.decision, "flags": list(locked.flags), "comment": locked.comment}
    revising = bool(locked.decision)
    reason = reason.strip()
    if revising and not reason:
        raise ImmutableError(
            "This item is already decided; changing the decision needs a reason.", field="reason"
        )
    now = timezone.now()
    OversightItem.objects.filter(pk=locked.pk).update(
        decision=decision,
        flags=flags,
        comment=comment.strip(),
        seconds_spent=F("seconds_spent") + elapsed,
        decided_at=now,
    )
    locked.refresh_from_db()
    payload: dict[str, object] = {
        "study": locked.study.public_id,
        "item": locked.public_id,
        "decision": decision,
        "flags": flags,
        "seconds": elapsed,
    }
    if revising:
        payload.update(previous=old, reason=reason)
    audit_record(
        actor=actor,
        action="oversight_item.revise" if revising else "oversight_item.decide",
        target=locked,
        use_case_id=locked.study.use_case_id,
        payload=payload,
    )
    return locked


@dataclass(frozen=True, slots=True)
class OversightDecisionsImportResult:
    """What an oversight decisions import recorded: counts of lines and the file's SHA-256."""

    sha256: str
    lines: int
    decided: int
    revised: int
    unchanged: int
    left_blank: int


@transaction.atomic
def oversight_decisions_import(
    *, actor: AbstractBaseUser, fileobj: BinaryIO, filename: str
) -> OversightDecisionsImportResult:
    """Import a reviewer's decisions file (docs/formats.md "Oversight decisions"), all or nothing.

    The file, capped at its upload limit before a byte is parsed, is read once, a line at a
    time, each line checked against the actor's own items as :func:`oversight_item_decide`
    checks one decision (an item of anyone else's queue is unknown); if any line is bad
    nothing is written and the ServiceError lists every bad line in ``details``. Each line
    is then recorded through :func:`oversight_item_decide` (its ``oversight_item.decide`` or
    ``.revise`` entry) and each study it touched gets one ``oversight_decisions.import``
    entry with the file's SHA-256.
    """
    filename = os.path.basename(filename or "")[:255] or "oversight-decisions.jsonl"
    fileobj = upload_stream(kind=UploadKind.OVERSIGHT_DECISIONS, fileobj=fileobj, filename=filename)
    items = {
        item.public_id: item
        for item in OversightItem.objects.select_for_update(of=("self",))
        .filter(reviewer_id=actor.pk)
        .select_related("study", "source_output")
        .order_by("pk")
    }
    elements = task_key_element_ids(
        task_ids={item.source_output.task_id for item in items.values()}
    )
    states = {
        public_id: ItemState(
            flag_keys=tuple(
                flag_keys(text=item.text, key_element_ids=elements[item.source_output.task_id])
            ),
            open=item.study.status == SessionStatus.OPEN,
            decision=item.decision,
            flags=tuple(item.flags),
            comment=item.comment,
        )
        for public_id, item in items.items()
    }
    reader = DecisionFileReader(fileobj, items=states, decisions=ReviewDecision.values)
    records = list(reader)
    report = reader.report()
    if not report.ok:
        raise ServiceError(report.refusal(filename), field="file", details=report.details())
    by_study: dict[int, list[str]] = defaultdict(list)
    for record in records:
        item = items[record.item]
        try:
            oversight_item_decide(
                actor=actor,
                item=item,
                decision=record.decision,
                flags=record.flags,
                comment=record.comment,
                elapsed_seconds=record.elapsed_seconds,
                reason=record.reason,
            )
        except ServiceError as error:
            detail = {"line": record.line, "field": error.field or "item", "message": error.message}
            raise ServiceError(
                f"{filename}:{record.line}: {error.message} Nothing was imported.",
                field="file",
                details=[detail],
            ) from error
        by_study[item.study_id].append(item.public_id)
    result = OversightDecisionsImportResult(
        sha256=report.sha256,
        lines=report.record_count + report.unchanged + report.left_blank,
        decided=report.record_count - report.revised,
        revised=report.revised,
        unchanged=report.unchanged,
        left_blank=report.left_blank,
    )
    studies = {item.study_id: item.study for item in items.values()}
    for study_id, public_ids in sorted(by_study.items()):
        audit_record(
            actor=actor,
            action="oversight_decisions.import",
            target=studies[study_id],
            payload={"filename": filename, "items": public_ids, **asdict(result)},
        )
    return result


def flag_keys(*, text: str, key_element_ids: Sequence[str]) -> list[str]:
    """Return the unit keys a reviewer may flag on a copy: its sentences, then key elements."""
    return [f"s{s.position}" for s in split_sentences(text)] + [
        f"{KEY_ELEMENT_PREFIX}{element_id}" for element_id in key_element_ids
    ]


def _checked_flags(item: OversightItem, flags: Sequence[str]) -> list[str]:
    if isinstance(flags, str):
        raise ServiceError("flags must be a list of unit keys, not a string.", field="flags")
    element_ids = list(
        KeyElement.objects.filter(task_id=item.source_output.task_id)
        .order_by("pk")
        .values_list("element_id", flat=True)
    )
    allowed = flag_keys(text=item.text, key_element_ids=element_ids)
    for n, flag in enumerate(flags):
        if flag not in allowed:
            raise ServiceError(
                f"flags[{n}]: {flag!r} is not a sentence or key element of this item; expected "
                f"one of {', '.join(allowed)}.",
                field=f"flags[{n}]",
            )
    chosen = set(flags)
    return [key for key in allowed if key in chosen]


def _elapsed(seconds: float) -> float:
    if not math.isfinite(seconds) or seconds < 0:
        raise ServiceError(
            "elapsed_seconds must be a non-negative number.", field="elapsed_seconds"
        )
    return min(float(seconds), MAX_SECONDS_PER_DECISION)


def _checked_kinds(kinds: Sequence[str] | None) -> list[str]:
    if kinds is None:
        return list(DefectKind.values)
    chosen = list(kinds)
    for n, kind in enumerate(chosen):
        if kind not in DefectKind.values:
            raise ServiceError(
                f"kinds[{n}] must be one of {', '.join(DefectKind.values)}, got {kind!r}.",
                field=f"kinds[{n}]",
            )
    if len(set(chosen)) != len(chosen):
        raise ServiceError("A kind of defect is named twice.", field="kinds")
    return chosen


def _check_blind(name: str, runs: Sequence[Run]) -> None:
    lowered = name.lower()
    for text in [*provenance_strings(runs), "defect", "seeded"]:
        if text.lower() in lowered:
            raise ServiceError(
                f"The study name is shown to reviewers and must not reveal provenance or the "
                f"study's design; it contains {text!r}.",
                field="name",
            )


Gold = dict[int, tuple[dict[str, str], dict[str, str]]]


def _gold(task_ids: set[int]) -> Gold:
    gold: Gold = {pk: ({}, {}) for pk in task_ids}
    for task_id, chunk_id, text in (
        SourceChunk.objects.filter(task_id__in=task_ids)
        .order_by("pk")
        .values_list("task_id", "chunk_id", "text")
    ):
        gold[task_id][0][chunk_id] = text
    for task_id, element_id, text in (
        KeyElement.objects.filter(task_id__in=task_ids)
        .order_by("pk")
        .values_list("task_id", "element_id", "text")
    ):
        gold[task_id][1][element_id] = text
    return gold


def _queue(
    outputs: Sequence[Output],
    gold: Gold,
    plan: Sequence[str],
    size: int,
    rng: np.random.Generator,
) -> list[tuple[Output, SeededDefect | None]]:
    """Return one reviewer's copies: a defect of each planned kind, then clean ones."""
    order = [int(i) for i in rng.permutation(len(outputs))]
    used: set[int] = set()
    queue: list[tuple[Output, SeededDefect | None]] = []
    failures: dict[str, list[str]] = defaultdict(list)
    for kind in plan:
        for index in order:
            if index in used:
                continue
            output = outputs[index]
            sources, key_elements = gold[output.task_id]
            try:
                defect = seed_defect(
                    output.text, kind, sources=sources, key_elements=key_elements, rng=rng
                )
            except ValueError as error:
                failures[kind].append(str(error))
                continue
            used.add(index)
            queue.append((output, defect))
            break
        else:
            raise ServiceError(
                f"No remaining output of the runs can carry a {DefectKind(kind).label.lower()} "
                f"({kind}); leave that kind out or add runs.",
                field="kinds",
                details=[{"kind": kind, "message": m} for m in sorted(set(failures[kind]))],
            )
    clean = [i for i in order if i not in used][: size - len(queue)]
    queue.extend((outputs[i], None) for i in clean)
    return queue
