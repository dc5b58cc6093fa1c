"""Oversight studies: seeded blind queues, final decisions, and ρ_catch / FAR with Wilson CIs."""

from __future__ import annotations

from collections import Counter

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404
from statsmodels.stats.proportion import proportion_confint

from audit.models import AuditEntry
from charters.models import Charter, Role
from charters.selectors.charters import charter_document_build
from charters.services.charters import charter_revise, charter_sign, charter_update
from enterpriseval.errors import ImmutableError, ServiceError
from grading.models import DefectKind, OversightItem, OversightStudy
from grading.selectors.oversight import oversight_queue, oversight_results
from grading.services.oversight import (
    MAX_SECONDS_PER_DECISION,
    oversight_item_decide,
    oversight_study_close,
    oversight_study_create,
)
from runs.segment import split_sentences

SEED = 424242


def make_study(world, *, reviewers=None, items=10, share=0.5, kinds=None, seed=SEED, name="R1"):
    return oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name=name,
        runs=world.runs,
        reviewers=world.graders if reviewers is None else reviewers,
        items_per_reviewer=items,
        defect_share=share,
        kinds=kinds,
        seed=seed,
    )


def items_of(study, reviewer=None):
    items = OversightItem.objects.filter(study=study).select_related("source_output")
    if reviewer is not None:
        items = items.filter(reviewer=reviewer)
    return list(items.order_by("reviewer_id", "position"))


def test_each_queue_mixes_the_seeded_share_of_defective_copies_in_random_order(grading_world):
    study = make_study(grading_world, items=10, share=0.3)
    for reviewer in grading_world.graders:
        queue = items_of(study, reviewer)
        assert [i.position for i in queue] == list(range(1, 11))
        assert len({i.source_output_id for i in queue}) == 10
        seeded = [i for i in queue if i.defects]
        assert len(seeded) == 3
        assert all(len(i.defects) == 1 for i in seeded)
        for item in queue:
            assert item.source_output.task.split == "graded"
            assert (item.text == item.source_output.text) == (not item.defects)
    kinds = Counter(d["kind"] for i in items_of(study) for d in i.defects)
    assert sum(kinds.values()) == 9
    assert set(kinds) <= set(DefectKind.values)
    assert max(kinds.values()) - min(kinds[k] for k in DefectKind.values) <= 1


def test_a_defect_names_the_unit_a_reviewer_would_flag(grading_world):
    study = make_study(grading_world, items=12, share=1.0)
    for item in items_of(study):
        (defect,) = item.defects
        if defect["kind"] == DefectKind.MISSED_MANDATORY:
            element_ids = set(
                item.source_output.task.key_elements.values_list("element_id", flat=True)
            )
            assert defect["target"][2:] in element_ids
        else:
            sentences = split_sentences(item.text)
            assert 1 <= int(defect["target"][1:]) <= len(sentences)


def test_the_same_seed_builds_the_same_queues(grading_world):
    def fingerprint(study):
        return [
            (i.reviewer_id, i.position, i.source_output_id, i.text, i.defects)
            for i in items_of(study)
        ]

    first = make_study(grading_world, name="A")
    second = make_study(grading_world, name="B")
    third = make_study(grading_world, name="C", seed=SEED + 1)
    assert fingerprint(first) == fingerprint(second)
    assert fingerprint(first) != fingerprint(third)


def test_kinds_are_dealt_round_robin_across_the_study(grading_world):
    study = make_study(
        grading_world, items=4, share=0.5, kinds=["citation_wrong", "changed_figure"]
    )
    kinds = Counter(d["kind"] for i in items_of(study) for d in i.defects)
    assert kinds == {"citation_wrong": 3, "changed_figure": 3}


def test_it_records_the_seed_and_counts_in_the_audit_log(grading_world):
    study = make_study(grading_world, items=10, share=0.3)
    entry = AuditEntry.objects.get(action="oversight_study.create")
    assert entry.target_id == str(study.pk)
    assert entry.payload["seed"] == str(SEED)
    assert entry.payload["items"] == 30
    assert sum(entry.payload["seeded"].values()) == 9
    assert len(entry.payload["items_sha256"]) == 64


def test_only_the_charter_owner_creates_a_study(grading_world):
    for actor in (grading_world.reviewer, grading_world.graders[0], grading_world.model_owner):
        with pytest.raises(PermissionDenied):
            oversight_study_create(
                actor=actor,
                use_case=grading_world.use_case,
                name="R1",
                runs=grading_world.runs,
                reviewers=grading_world.graders,
                items_per_reviewer=4,
            )


def test_reviewers_must_hold_the_grader_role(grading_world):
    with pytest.raises(ServiceError) as refused:
        make_study(grading_world, reviewers=[grading_world.reviewer])
    assert refused.value.field == "reviewers"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"items": 25}, "items_per_reviewer"),
        ({"share": 1.5}, "defect_share"),
        ({"kinds": ["typo"]}, "kinds[0]"),
        ({"name": "Seeded defects round"}, "name"),
    ],
)
def test_it_refuses_bad_inputs_naming_the_field(grading_world, changes, field):
    with pytest.raises(ServiceError) as refused:
        make_study(grading_world, **changes)
    assert refused.value.field == field
    assert not OversightStudy.objects.exists()


def test_it_refuses_a_name_that_reveals_the_model(grading_world):
    name = f"Review of {grading_world.provenance[-1]}"
    with pytest.raises(ServiceError) as refused:
        make_study(grading_world, name=name)
    assert refused.value.field == "name"


def test_a_reviewer_decides_only_their_own_items(grading_world):
    study = make_study(grading_world, items=3)
    mine = items_of(study, grading_world.graders[0])[0]
    with pytest.raises(Http404):
        oversight_item_decide(
            actor=grading_world.graders[1], item=mine, decision="accept", flags=[]
        )
    with pytest.raises(Http404):
        oversight_item_decide(actor=grading_world.owner, item=mine, decision="accept", flags=[])


def test_a_decision_records_flags_in_unit_order_and_capped_time(grading_world):
    study = make_study(grading_world, items=3)
    item = items_of(study, grading_world.graders[0])[0]
    decided = oversight_item_decide(
        actor=grading_world.graders[0],
        item=item,
        decision="reject",
        flags=["s2", "s1", "s2"],
        comment="  figures off  ",
        elapsed_seconds=10 * MAX_SECONDS_PER_DECISION,
    )
    assert decided.decision == "reject"
    assert decided.flags == ["s1", "s2"]
    assert decided.comment == "figures off"
    assert decided.seconds_spent == MAX_SECONDS_PER_DECISION
    assert decided.decided_at is not None
    entry = AuditEntry.objects.get(action="oversight_item.decide")
    assert entry.payload["item"] == item.public_id and entry.payload["flags"] == ["s1", "s2"]


def test_it_refuses_flags_that_are_not_units_of_the_item(grading_world):
    study = make_study(grading_world, items=3)
    item = items_of(study, grading_world.graders[0])[0]
    for bad in (["s99"], ["k:nope"], ["c1:G1-termsheet"]):
        with pytest.raises(ServiceError) as refused:
            oversight_item_decide(
                actor=grading_world.graders[0], item=item, decision="reject", flags=bad
            )
        assert refused.value.field == "flags[0]"
    with pytest.raises(ServiceError):
        oversight_item_decide(actor=grading_world.graders[0], item=item, decision="maybe", flags=[])


def test_a_decision_is_final_unless_revised_with_a_logged_reason(grading_world):
    study = make_study(grading_world, items=3)
    reviewer = grading_world.graders[0]
    item = items_of(study, reviewer)[0]
    oversight_item_decide(actor=reviewer, item=item, decision="accept", flags=[])
    with pytest.raises(ImmutableError):
        oversight_item_decide(actor=reviewer, item=item, decision="reject", flags=["s1"])
    revised = oversight_item_decide(
        actor=reviewer, item=item, decision="reject", flags=["s1"], reason="Read the source again."
    )
    assert revised.decision == "reject" and revised.flags == ["s1"]
    entry = AuditEntry.objects.get(action="oversight_item.revise")
    assert entry.payload["reason"] == "Read the source again."
    assert entry.payload["previous"]["decision"] == "accept"


def test_a_closed_study_takes_no_decision(grading_world):
    study = make_study(grading_world, items=3)
    oversight_study_close(actor=grading_world.owner, study=study)
    item = items_of(study, grading_world.graders[0])[0]
    with pytest.raises(ImmutableError):
        oversight_item_decide(
            actor=grading_world.graders[0], item=item, decision="accept", flags=[]
        )


def _decide_by_hand(world, study):
    """Decide every item by a fixed rule; return the expected counts computed independently."""
    expected = {"seeded": Counter(), "caught": Counter(), "accepted": Counter()}
    clean = Counter()
    seconds = []
    for n, item in enumerate(items_of(study)):
        spent = 20.0 + n
        if item.defects:
            (defect,) = item.defects
            kind = defect["kind"]
            # Every third defective copy accepted; of the rejected, every other flags the target.
            if n % 3 == 0:
                decision, flags = "accept", [defect["target"]] if n % 2 else []
            elif n % 2:
                decision, flags = "reject", [defect["target"]]
            else:
                decision, flags = "reject", []
            expected["seeded"][kind] += 1
            expected["caught"][kind] += decision == "reject" and defect["target"] in flags
            expected["accepted"][kind] += decision == "accept"
        else:
            decision, flags = ("reject", []) if n % 4 == 0 else ("accept", [])
            clean["n"] += 1
            clean["rejected"] += decision == "reject"
        oversight_item_decide(
            actor=item.reviewer, item=item, decision=decision, flags=flags, elapsed_seconds=spent
        )
        seconds.append(spent)
    return expected, clean, seconds


def _wilson(k, n, alpha=0.05):
    return proportion_confint(k, n, alpha=alpha, method="wilson")


def test_results_match_an_independent_count_and_statsmodels_wilson(grading_world):
    study = make_study(grading_world, items=12, share=0.75)
    expected, clean, seconds = _decide_by_hand(grading_world, study)
    results = oversight_results(study=study)
    assert results.confidence == 0.95
    assert results.items == results.decided == 36
    for row in results.by_kind:
        seeded = expected["seeded"][row.kind]
        assert row.seeded == seeded and row.caught == expected["caught"][row.kind]
        assert row.catch.point == pytest.approx(row.caught / seeded)
        assert (row.catch.lo, row.catch.hi) == pytest.approx(_wilson(row.caught, seeded))
        accepted = expected["accepted"][row.kind]
        assert row.false_acceptance.successes == accepted and row.false_acceptance.n == seeded
        assert (row.false_acceptance.lo, row.false_acceptance.hi) == pytest.approx(
            _wilson(accepted, seeded)
        )
    seeded = sum(expected["seeded"].values())
    caught = sum(expected["caught"].values())
    accepted = sum(expected["accepted"].values())
    assert (results.overall.seeded, results.overall.caught) == (seeded, caught)
    assert 0 < caught < seeded and 0 < accepted < seeded
    assert (results.overall.catch.lo, results.overall.catch.hi) == pytest.approx(
        _wilson(caught, seeded)
    )
    assert results.overall.false_acceptance.point == pytest.approx(accepted / seeded)
    assert (results.false_alarm.successes, results.false_alarm.n) == (
        clean["rejected"],
        clean["n"],
    )
    assert results.mean_seconds == pytest.approx(sum(seconds) / len(seconds))
    assert sum(r.catch.successes for r in results.reviewers) == caught
    assert sum(r.decided for r in results.reviewers) == 36
    assert sum(1 for row in results.seeded_items if row.caught) == caught


def _sign_a_new_charter_version(world, *, confidence):
    signed = Charter.objects.get(use_case=world.use_case)
    draft = charter_revise(actor=world.owner, charter=signed, reason="Tighter intervals.")
    document = charter_document_build(charter=draft)
    document["confidence"] = confidence
    draft = charter_update(actor=world.owner, charter=draft, document=document)
    for actor, role in (
        (world.owner, Role.CHARTER_OWNER),
        (world.model_owner, Role.MODEL_OWNER),
        (world.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=actor, charter=draft, role=role)


def test_intervals_use_the_charters_confidence(grading_world):
    study = make_study(grading_world, items=6, share=0.5)
    _decide_by_hand(grading_world, study)
    _sign_a_new_charter_version(grading_world, confidence=0.9)
    results = oversight_results(study=study)
    overall = results.overall
    assert results.confidence == 0.9
    assert (overall.catch.lo, overall.catch.hi) == pytest.approx(
        _wilson(overall.caught, overall.seeded, alpha=0.1)
    )


def test_a_defect_is_caught_only_when_rejected_with_its_unit_flagged(grading_world):
    study = make_study(grading_world, reviewers=grading_world.graders[:1], items=4, share=1.0)
    items = items_of(study)
    plans = [
        ("reject", True, True),  # rejected, target flagged: caught
        ("reject", False, False),  # rejected for another reason: not caught
        ("accept", True, False),  # flagged but accepted: not caught, a false acceptance
    ]
    for item, (decision, flag_target, _caught) in zip(items, plans, strict=False):
        target = item.defects[0]["target"]
        oversight_item_decide(
            actor=item.reviewer,
            item=item,
            decision=decision,
            flags=[target] if flag_target else [],
        )
    results = oversight_results(study=study)
    assert (results.overall.seeded, results.overall.caught, results.overall.pending) == (3, 1, 1)
    assert results.overall.false_acceptance.successes == 1
    caught = {row.public_id: row.caught for row in results.seeded_items}
    assert [caught[i.public_id] for i in items] == [True, False, False, None]


def test_an_undecided_study_has_no_rates(grading_world):
    results = oversight_results(study=make_study(grading_world, items=4))
    assert results.decided == 0 and results.overall.catch.point is None
    assert results.overall.catch.lo is None and results.mean_seconds is None


def test_results_and_queue_take_flat_queries(grading_world, django_assert_max_num_queries):
    small = make_study(grading_world, items=2, name="S")
    large = make_study(grading_world, items=12, name="L")
    for study in (small, large):
        _decide_by_hand(grading_world, study)
        with django_assert_max_num_queries(3):
            oversight_results(study=study)
    with django_assert_max_num_queries(1):
        assert len(oversight_queue(user=grading_world.graders[0])) == 14
