"""Reads for oversight studies: a reviewer's blind queue and item, and the study's results.

What a reviewer reads (:func:`oversight_queue`, :func:`oversight_review`) is built into
plain records that hold no provenance and nothing about seeding: an item is known by its
``public_id`` only. The results (:func:`oversight_results`) are for the study's owner and
second-line reviewers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet
from django.http import Http404

from charters.models import Charter, GuidanceItem, KeyElement, SourceChunk, UseCase
from enterpriseval.stats import wilson_interval
from grading.defects import KEY_ELEMENT_PREFIX
from grading.models import (
    DefectKind,
    OversightItem,
    OversightStudy,
    ReviewDecision,
    SessionStatus,
)
from grading.oversight_io import dump_line
from grading.selectors.artefacts import task_context
from runs.segment import split_sentences

DEFAULT_CONFIDENCE = 0.95
CAUGHT_RULE = (
    "A seeded defect counts as caught when the reviewer rejected the copy and marked the "
    "defect's unit: the altered sentence, or the left-out key element as missing."
)


# Management reads ---------------------------------------------------------------------------


def oversight_study_list(*, use_case: UseCase) -> QuerySet[OversightStudy]:
    """Return the use case's studies, newest first, with their item and decision counts."""
    return (
        OversightStudy.objects.filter(use_case=use_case)
        .select_related("use_case", "created_by")  # the results link names the use case
        .annotate(
            item_count=Count("items"),
            decided_count=Count("items", filter=~Q(items__decision="")),
            reviewer_count=Count("items__reviewer", distinct=True),
        )
        .order_by("-created_at", "-pk")
    )


def oversight_study_get(*, use_case: UseCase, public_id: str) -> OversightStudy:
    """Return the use case's study with this public id, or 404."""
    study = (
        OversightStudy.objects.select_related("use_case", "created_by")
        .filter(use_case=use_case, public_id=public_id)
        .first()
    )
    if study is None:
        raise Http404("No such oversight study.")
    return study


@dataclass(frozen=True, slots=True)
class Proportion:
    """``successes`` of ``n`` with a Wilson interval; all ``None`` when ``n`` is 0."""

    successes: int
    n: int
    lo: float | None
    hi: float | None

    @property
    def point(self) -> float | None:
        return self.successes / self.n if self.n else None

    @property
    def percent(self) -> float | None:
        return None if self.point is None else 100.0 * self.point

    @property
    def lo_percent(self) -> float | None:
        return None if self.lo is None else 100.0 * self.lo

    @property
    def hi_percent(self) -> float | None:
        return None if self.hi is None else 100.0 * self.hi


def proportion(successes: int, n: int, *, alpha: float) -> Proportion:
    """Return ``successes``/``n`` with its Wilson interval at level 1 − ``alpha`` (SPEC §5.3)."""
    if n == 0:
        return Proportion(successes, 0, None, None)
    lo, hi = wilson_interval(successes, n, alpha)
    return Proportion(successes, n, float(lo), float(hi))


@dataclass(frozen=True, slots=True)
class KindResult:
    """Catch rate and false acceptance for one defect kind (or all, ``kind`` "overall").

    ``catch`` counts defects on decided items (ρ_catch = caught / seeded); ``false_acceptance``
    counts decided defective items (FAR = accepted / defective); ``pending`` counts defects
    on items not yet decided, which enter neither.
    """

    kind: str
    label: str
    catch: Proportion
    false_acceptance: Proportion
    pending: int

    @property
    def seeded(self) -> int:
        return self.catch.n

    @property
    def caught(self) -> int:
        return self.catch.successes


@dataclass(frozen=True, slots=True)
class ReviewerResult:
    """One reviewer's share of the study."""

    username: str
    items: int
    decided: int
    catch: Proportion
    false_acceptance: Proportion
    false_alarm: Proportion
    mean_seconds: float | None


@dataclass(frozen=True, slots=True)
class SeededItemRow:
    """A defect as seeded, and whether its reviewer caught it (for the owner only)."""

    public_id: str
    reviewer: str
    position: int
    kind: str
    label: str
    target: str
    detail: str
    decision: str
    flags: list[str]
    caught: bool | None


@dataclass(frozen=True, slots=True)
class OversightResults:
    """ρ_catch and FAR per kind and overall, false alarms, review burden, per reviewer.

    ``false_alarm`` is the share of decided clean copies that were rejected; ``mean_seconds``
    the mean time on a decided copy (review burden).
    """

    study: OversightStudy
    confidence: float
    items: int
    decided: int
    by_kind: list[KindResult]
    overall: KindResult
    false_alarm: Proportion
    mean_seconds: float | None
    reviewers: list[ReviewerResult]
    seeded_items: list[SeededItemRow] = field(default_factory=list)
    caught_rule: str = CAUGHT_RULE

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence


def is_caught(*, decision: str, flags: Iterable[str], target: str) -> bool:
    """Return whether a decision catches a defect at ``target`` (see :data:`CAUGHT_RULE`)."""
    return decision == ReviewDecision.REJECT and target in set(flags)


def study_confidence(*, use_case: UseCase) -> float:
    """Return the confidence level of the use case's current charter (signed, else latest)."""
    charters = Charter.objects.filter(use_case=use_case).order_by("-version")
    confidence = charters.frozen().values_list("confidence", flat=True).first()
    if confidence is None:
        confidence = charters.values_list("confidence", flat=True).first()
    return DEFAULT_CONFIDENCE if confidence is None else float(confidence)


def oversight_results(*, study: OversightStudy) -> OversightResults:
    """Return the study's results: two queries whatever its size.

    Per defect kind and overall, ρ_catch = caught / seeded (SPEC §4 catch_rate) and FAR =
    defective copies accepted / defective copies (false_acceptance_rate), each with a Wilson
    interval at the charter's confidence; only decided copies count.
    """
    confidence = study_confidence(use_case=study.use_case)
    alpha = 1.0 - confidence
    rows = list(
        OversightItem.objects.filter(study=study)
        .order_by("reviewer__username", "position")
        .values_list(
            "public_id",
            "reviewer__username",
            "position",
            "defects",
            "decision",
            "flags",
            "seconds_spent",
        )
    )
    labels = dict(DefectKind.choices)
    seeded: dict[str, int] = defaultdict(int)
    caught: dict[str, int] = defaultdict(int)
    defective: dict[str, int] = defaultdict(int)
    accepted: dict[str, int] = defaultdict(int)
    pending: dict[str, int] = defaultdict(int)
    per_reviewer: dict[str, _Tally] = defaultdict(_Tally)
    clean = _Tally()
    seconds: list[float] = []
    seeded_items: list[SeededItemRow] = []
    for public_id, username, position, defects, decision, flags, spent in rows:
        tally = per_reviewer[username]
        tally.items += 1
        if decision:
            tally.decided += 1
            tally.seconds.append(spent)
            seconds.append(spent)
        if not defects:
            if decision:
                for t in (tally, clean):
                    t.clean += 1
                    t.rejected_clean += decision == ReviewDecision.REJECT
            continue
        item_kinds = {d["kind"] for d in defects}
        for defect in defects:
            kind = defect["kind"]
            hit = is_caught(decision=decision, flags=flags, target=defect["target"])
            if decision:
                seeded[kind] += 1
                caught[kind] += hit
                tally.seeded += 1
                tally.caught += hit
            else:
                pending[kind] += 1
            seeded_items.append(
                SeededItemRow(
                    public_id,
                    username,
                    position,
                    kind,
                    labels.get(kind, kind),
                    defect["target"],
                    defect.get("detail", ""),
                    decision,
                    list(flags),
                    hit if decision else None,
                )
            )
        if decision:
            tally.defective += 1
            tally.accepted += decision == ReviewDecision.ACCEPT
            for kind in item_kinds:
                defective[kind] += 1
                accepted[kind] += decision == ReviewDecision.ACCEPT
    by_kind = [
        KindResult(
            kind,
            labels[kind],
            proportion(caught[kind], seeded[kind], alpha=alpha),
            proportion(accepted[kind], defective[kind], alpha=alpha),
            pending[kind],
        )
        for kind in DefectKind.values
        if seeded[kind] or pending[kind]
    ]
    total = _Tally()
    for tally in per_reviewer.values():
        total.add(tally)
    overall = KindResult(
        "overall",
        "All seeded defects",
        proportion(total.caught, total.seeded, alpha=alpha),
        proportion(total.accepted, total.defective, alpha=alpha),
        sum(pending.values()),
    )
    return OversightResults(
        study=study,
        confidence=confidence,
        items=len(rows),
        decided=len(seconds),
        by_kind=by_kind,
        overall=overall,
        false_alarm=proportion(clean.rejected_clean, clean.clean, alpha=alpha),
        mean_seconds=_mean(seconds),
        reviewers=[
            ReviewerResult(
                username,
                tally.items,
                tally.decided,
                proportion(tally.caught, tally.seeded, alpha=alpha),
                proportion(tally.accepted, tally.defective, alpha=alpha),
                proportion(tally.rejected_clean, tally.clean, alpha=alpha),
                _mean(tally.seconds),
            )
            for username, tally in sorted(per_reviewer.items())
        ],
        seeded_items=seeded_items,
    )


@dataclass
class _Tally:
    items: int = 0
    decided: int = 0
    seeded: int = 0
    caught: int = 0
    defective: int = 0
    accepted: int = 0
    clean: int = 0
    rejected_clean: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, other: _Tally) -> None:
        for name in ("seeded", "caught", "defective", "accepted"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# Reviewer reads (blind) -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One copy in a reviewer's queue, as the reviewer sees it."""

    public_id: str
    study: str
    position: int
    decision: str
    decided_at: datetime | None
    open: bool


def oversight_queue(*, user: AbstractBaseUser | AnonymousUser) -> list[QueueEntry]:
    """Return the reviewer's own copies, by study (newest first) and position: one query."""
    if not user.is_authenticated:
        return []
    rows = (
        OversightItem.objects.filter(reviewer=user)
        .order_by("-study__created_at", "-study_id", "position")
        .values_list(
            "public_id", "study__name", "position", "decision", "decided_at", "study__status"
        )
    )
    return [
        QueueEntry(public_id, study, position, decision, decided_at, status == SessionStatus.OPEN)
        for public_id, study, position, decision, decided_at, status in rows
    ]


def oversight_item_for_reviewer(
    user: AbstractBaseUser | AnonymousUser, public_id: str
) -> OversightItem:
    """Return the reviewer's own item; anyone else's (or none) is a 404 (SPEC §5.1)."""
    if not user.is_authenticated:
        raise Http404("No such item.")
    item = (
        OversightItem.objects.select_related("study", "source_output__task")
        .filter(public_id=public_id, reviewer=user)
        .first()
    )
    if item is None:
        raise Http404("No such item.")
    return item


@dataclass(frozen=True, slots=True)
class ReviewUnit:
    """A unit the reviewer may mark: a sentence of the copy or a key element of the task."""

    key: str
    text: str
    marked: bool


@dataclass(frozen=True, slots=True)
class ReviewSource:
    chunk_id: str
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class ReviewGuidance:
    item_id: str
    text: str
    mandatory: bool


@dataclass(frozen=True, slots=True)
class ReviewPage:
    """Everything a reviewer sees of one copy: nothing about where it came from."""

    public_id: str
    study: str
    position: int
    queue_size: int
    task_id: str
    task_input: str
    text: str
    sentences: list[ReviewUnit]
    key_elements: list[ReviewUnit]
    sources: list[ReviewSource]
    guidance: list[ReviewGuidance]
    decision: str
    comment: str
    open: bool
    next_public_id: str | None


def oversight_review(*, item: OversightItem) -> ReviewPage:
    """Return the blind review page of the reviewer's item."""
    context = task_context(item.source_output.task)
    flags = set(item.flags)
    siblings = list(
        OversightItem.objects.filter(study_id=item.study_id, reviewer_id=item.reviewer_id)
        .order_by("position")
        .values_list("public_id", "position", "decision")
    )
    following = [p for p, pos, d in siblings if pos > item.position and not d]
    earlier = [p for p, pos, d in siblings if pos < item.position and not d]
    return ReviewPage(
        public_id=item.public_id,
        study=item.study.name,
        position=item.position,
        queue_size=len(siblings),
        task_id=item.source_output.task.external_id,
        task_input=context.input,
        text=item.text,
        sentences=[
            ReviewUnit(f"s{s.position}", item.text[s.start : s.end], f"s{s.position}" in flags)
            for s in split_sentences(item.text)
        ],
        key_elements=[
            ReviewUnit(
                f"{KEY_ELEMENT_PREFIX}{k.element_id}",
                k.text,
                f"{KEY_ELEMENT_PREFIX}{k.element_id}" in flags,
            )
            for k in context.key_elements
        ],
        sources=[ReviewSource(c.chunk_id, c.source, c.text) for c in context.sources],
        guidance=[ReviewGuidance(g.item_id, g.text, g.mandatory) for g in context.guidance_items],
        decision=item.decision,
        comment=item.comment,
        open=item.study.status == SessionStatus.OPEN,
        next_public_id=(following or earlier or [None])[0],
    )


# A reviewer's decisions file ------------------------------------------------------------------


def reviewer_open_items(*, user: AbstractBaseUser) -> QuerySet[OversightItem]:
    """Return the reviewer's items in open studies, by study (oldest first) and position."""
    return (
        OversightItem.objects.filter(reviewer=user, study__status=SessionStatus.OPEN)
        .select_related("study", "source_output__task")
        .order_by("study__created_at", "study_id", "position")
    )


def task_key_element_ids(*, task_ids: Iterable[int]) -> dict[int, list[str]]:
    """Return each task's key element ids, in page order: one query."""
    ids: dict[int, list[str]] = defaultdict(list)
    for task_id, element_id in (
        KeyElement.objects.filter(task_id__in=set(task_ids))
        .order_by("pk")
        .values_list("task_id", "element_id")
    ):
        ids[task_id].append(element_id)
    return ids


def oversight_decisions_file(*, user: AbstractBaseUser) -> Iterator[bytes]:
    """Yield the reviewer's decisions template (docs/formats.md "Oversight decisions (JSONL)").

    One line per item of the reviewer's open studies, blind as the review page: the copy by
    sentence, the task's input, key elements, sources and guidance, and the fields to fill in
    (``decision`` null while undecided, ``elapsed_seconds`` null). Four queries whatever the
    number of items.
    """
    items = list(reviewer_open_items(user=user))
    task_ids = {item.source_output.task_id for item in items}
    sources: dict[int, list[SourceChunk]] = defaultdict(list)
    for chunk in SourceChunk.objects.filter(task_id__in=task_ids).order_by("pk"):
        sources[chunk.task_id].append(chunk)
    elements: dict[int, list[KeyElement]] = defaultdict(list)
    for element in KeyElement.objects.filter(task_id__in=task_ids).order_by("pk"):
        elements[element.task_id].append(element)
    guidance: dict[int, list[GuidanceItem]] = defaultdict(list)
    for guidance_item in GuidanceItem.objects.filter(task_id__in=task_ids).order_by("pk"):
        guidance[guidance_item.task_id].append(guidance_item)
    for item in items:
        task = item.source_output.task
        yield dump_line(
            {
                "item": item.public_id,
                "study": item.study.name,
                "position": item.position,
                "task_id": task.external_id,
                "task_input": task.input,
                "text": item.text,
                "sentences": [
                    {"key": f"s{s.position}", "text": item.text[s.start : s.end]}
                    for s in split_sentences(item.text)
                ],
                "key_elements": [
                    {"key": f"{KEY_ELEMENT_PREFIX}{k.element_id}", "text": k.text}
                    for k in elements[task.pk]
                ],
                "sources": [
                    {"chunk_id": c.chunk_id, "source": c.source, "text": c.text}
                    for c in sources[task.pk]
                ],
                "guidance": [
                    {"item_id": g.item_id, "text": g.text, "mandatory": g.mandatory}
                    for g in guidance[task.pk]
                ],
                "decision": item.decision or None,
                "flags": list(item.flags),
                "comment": item.comment,
                "elapsed_seconds": None,
                "reason": "",
            }
        )
