"""Every charter metric estimated from one run's evidence."""

from __future__ import annotations

import pytest

from charters.models import Charter
from demo.testing.grading import fill, make_world
from enterpriseval.errors import ServiceError
from gates.services import decision_compute, grades_digest
from grading.models import Assignment
from grading.services.grades import assignment_submit
from metrics.selectors import charter_estimates
from runs.services.judging import judge_get_or_create, judge_run


@pytest.fixture
def judged_world(db):
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    for run in world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    for assignment in Assignment.objects.filter(session=world.session):
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return world, judge


def test_every_charter_metric_gets_a_record(judged_world):
    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    estimates = charter_estimates(
        charter=charter, run=world.runs[0], session=world.session, judge=judge
    )
    assert list(estimates) == list(
        charter.metrics.order_by("position", "pk").values_list("metric_id", flat=True)
    )
    for metric_id in ("hallucination_rate", "key_element_capture", "guidance_recall"):
        record = estimates[metric_id]
        assert record.has_value and record.mode == "H", (metric_id, record.reason)
        # one label per criterion: agreement is undefined, so there is no κ to report and
        # the note names the charter's rule and the verdict (not eligible)
        assert record.kappa is None
        assert any("agreement rule κ/α ≥ 0.60" in n and "not eligible" in n for n in record.notes)
    # every grader answered the first value of every field: nothing is hallucinated
    assert estimates["hallucination_rate"].point == 0
    assert not estimates["catch_rate"].has_value
    assert "oversight study" in estimates["catch_rate"].reason


def test_without_human_grades_the_unit_metrics_are_judge_only(judged_world):
    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    estimates = charter_estimates(charter=charter, run=world.runs[0], session=None, judge=judge)
    assert estimates["hallucination_rate"].mode == "J"
    assert (
        "never gated" in estimates["hallucination_rate"].reason
        or estimates["hallucination_rate"].reason
    )
    assert not estimates["guidance_recall"].has_value


def test_a_decision_computed_from_the_evidence_is_recorded_with_its_hashes(judged_world):
    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    decision = decision_compute(
        actor=world.owner, charter=charter, run=world.runs[0], session=world.session, judge=judge
    )
    assert set(decision.evidence) >= {
        "charter_sha256",
        "configuration_sha256",
        "task_set_sha256",
        "run_source_sha256",
        "judge_rubric_sha256",
        "grades_sha256",
    }
    assert decision.evidence["grades_sha256"] == grades_digest(session=world.session)
    gated = {m["id"]: m for m in decision.record["gate"]["metrics"]}
    # every grader gave the first value of every field: one label per criterion, so agreement
    # is undefined: no figure, not eligible, and the decision is Undetermined
    assert decision.status == "Undetermined"
    assert gated["hallucination_rate"]["estimate"] == 0
    assert gated["hallucination_rate"]["kappa"] is None
    assert gated["hallucination_rate"]["eligible"] is False
    assert gated["hallucination_rate"]["status"] == "Undetermined"
    estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
    assert any(
        "not eligible" in note and "undefined" in note
        for note in estimates["hallucination_rate"]["notes"]
    )


def test_without_a_grading_session_an_e2_decision_is_undetermined(judged_world):
    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    decision = decision_compute(actor=world.owner, charter=charter, run=world.runs[0], judge=judge)
    assert decision.status == "Undetermined"
    assert any("E2 needs human grading" in r for r in decision.record["gate"]["reasons"])


def test_the_value_estimate_uses_graded_hallucination_counts_and_observed_generation_times(
    judged_world,
):
    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    decision = decision_compute(
        actor=world.owner, charter=charter, run=world.runs[0], session=world.session, judge=judge
    )
    value = decision.record["value"]
    assert value["label"] == "estimated"  # the charter's manual baseline is an estimate
    assert value["lo"] <= value["point"] <= value["hi"]
    sources = value["provenance"]["sources"]
    assert "graded counts 0/" in sources["hallucination"]
    assert sources["t_gen"].startswith("observed: 12 samples")


def _stress_run(world):
    import io
    import json

    from charters.models import Task
    from runs.services.outputs import output_import

    tasks = Task.objects.filter(task_set=world.runs[0].task_set, split="stress").order_by("pk")
    lines = [
        json.dumps(
            {
                "task_id": task.external_id,
                "repeat": 0,
                "text": "Not determinable from the permitted sources. Guidance check: none.",
            }
        )
        for task in tasks
    ]
    return output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.runs[0].configuration,
        task_set=world.runs[0].task_set,
        split="stress",
        repeats=1,
        fileobj=io.BytesIO(("\n".join(lines) + "\n").encode()),
        filename="stress.jsonl",
    )


def test_the_stress_split_is_reported_beside_the_decision_not_mixed_into_it(judged_world):
    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    stress = _stress_run(world)
    decision = decision_compute(
        actor=world.owner,
        charter=charter,
        run=world.runs[0],
        session=world.session,
        judge=judge,
        stress_run=stress,
    )
    report = decision.record["stress"]
    assert report["run"] == stress.pk
    assert {e["metric_id"] for e in report["estimates"]} == {
        "guidance_precision",
        "guidance_recall",
    }
    graded = {e["metric_id"]: e for e in decision.record["estimates"]}
    assert graded["guidance_recall"]["n_clusters"] == 4  # the graded split's sampled outputs


def test_a_run_of_another_split_is_refused_as_the_stress_run(judged_world):
    world, _judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    with pytest.raises(ServiceError, match="stress-split"):
        decision_compute(
            actor=world.owner, charter=charter, run=world.runs[0], stress_run=world.runs[1]
        )


def test_oversight_metrics_and_time_reduction_come_from_the_oversight_study(judged_world):
    from grading.services.oversight import oversight_item_decide, oversight_study_create

    world, judge = judged_world
    charter = Charter.objects.get(use_case=world.use_case)
    run = world.runs[0]
    study = oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Review queue",
        runs=[run],
        reviewers=[world.graders[0]],
        items_per_reviewer=6,
        defect_share=0.5,
        seed=7,
    )
    items = list(study.items.order_by("position"))
    for n, item in enumerate(items):
        caught = item.defects and n % 2 == 0
        oversight_item_decide(
            actor=item.reviewer,
            item=item,
            decision="reject" if caught else "accept",
            flags=[item.defects[0]["target"]] if caught else [],
            elapsed_seconds=120.0 + 60 * n,
        )
    estimates = charter_estimates(
        charter=charter, run=run, session=world.session, judge=judge, oversight_study=study
    )
    seeded = [i for i in items if i.defects]
    caught = sum(1 for n, i in enumerate(items) if i.defects and n % 2 == 0)
    assert estimates["catch_rate"].point == pytest.approx(100 * caught / len(seeded))
    assert estimates["false_acceptance_rate"].point == pytest.approx(
        100 * (len(seeded) - caught) / len(seeded)
    )
    minutes = [(120.0 + 60 * n) / 60 for n in range(len(items))]
    assert estimates["review_burden"].point == pytest.approx(sum(minutes) / len(minutes))
    # Δeff = 1 − (t̄_gen + t̄_review) / t_manual, with the charter's t_manual mode of 3 h
    generation = [i.source_output.generation_seconds / 3600 for i in items]
    review = [m / 60 for m in minutes]
    expected = 100 * (1 - (sum(generation) / 6 + sum(review) / 6) / 3.0)
    reduction = estimates["net_time_reduction"]
    assert reduction.point == pytest.approx(expected)
    assert reduction.notes[0] == "baseline: estimated"


def test_the_pass_hat_k_record_is_at_the_charters_k_with_1_2_4_and_k_beside_it():
    import numpy as np

    from metrics.selectors import _pass_hat_gated
    from metrics.success import RunSuccesses

    # 20 tasks × K = 4: 7 tasks succeed twice, 13 three times
    counts = np.array([2] * 7 + [3] * 13)
    successes = RunSuccesses("recorded", "success flag imported", counts, 4, 0, "")
    record = _pass_hat_gated(successes, 2, 0.95, None)
    # pass^2 = mean C(c,2)/C(4,2) = (7·1 + 13·3) / (20·6)
    assert record.point == pytest.approx(100 * 46 / 120)
    notes = " ".join(record.notes)
    assert "gated k = 2" in notes
    assert f"pass^1 = {100 * (7 * 2 + 13 * 3) / 80:.1f}" in notes  # mean c/K
    assert "pass^4 = 0.0" in notes
