"""Classification graded by humans and success by "Acceptable as is?" (SPEC §4.1, §5.1).

The world of :mod:`demo.testing.verdicts`: five controls, K = 4 imported repeats, a census
session with two graders per output who agree. Hand calculation:

=====  ==========  =====================  ================================  ===
task   gold        labels at repeats      graded acceptable at repeats      c_i
=====  ==========  =====================  ================================  ===
C-1    compliant   C, C, C, C             0, 1, 2, 3                        4
C-2    partially   P, P, N, P             0, 1, 3                           3
C-3    non         N, C, N, N             0, 2                              2
C-4    compliant   C, P, P, C             none                              0
C-5    non         C, C, C, C             1                                 1
=====  ==========  =====================  ================================  ===

pass^1 = (4+3+2+0+1)/20 = 50 %; pass^2 = (6+3+1+0+0)/(5·6) = 33.33 %; pass^4 = 1/5 = 20 %.
"""

from __future__ import annotations

from math import comb

import pytest
from sklearn.metrics import f1_score

from demo.testing.verdicts import (
    ACCEPTABLE,
    GOLD,
    LABELS,
    PLAN,
    C,
    K,
    N,
    P,
    doubting,
    grade,
    grade_session,
    planted,
)
from demo.testing.verdicts import make_verdict_world as world_made
from grading.models import Assignment
from metrics.selectors import charter_estimates, reliability_estimates

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return world_made()


def counts() -> list[int]:
    return [len(ACCEPTABLE[task]) for task in PLAN]


def test_pass_k_is_read_from_the_adjudicated_acceptable_grades_by_hand(world):
    session = world.sample()
    grade_session(session)
    estimates = charter_estimates(charter=world.charter, run=world.run, session=session)
    assert counts() == [4, 3, 2, 0, 1]
    expected = {
        k: 100 * sum(comb(c, k) for c in counts()) / (len(PLAN) * comb(K, k)) for k in (1, 2, 4)
    }
    assert expected == pytest.approx({1: 50.0, 2: 100 * 10 / 30, 4: 20.0})
    gated = estimates["pass_hat_k"]
    assert gated.point == pytest.approx(expected[4])
    assert gated.mode == "H"
    assert gated.kappa == pytest.approx(1.0)  # the two graders agree on every output
    notes = " ".join(gated.notes)
    assert f"pass^1 = {expected[1]:.1f}" in notes and f"pass^2 = {expected[2]:.1f}" in notes
    assert "graded acceptable as is by humans" in notes
    records, _dispersion, why, basis = reliability_estimates(
        run=world.run, confidence=0.95, rule="human_acceptable", session=session
    )
    assert why == "" and basis.determined
    assert records[1].point == pytest.approx(expected[1])


def test_accuracy_is_read_from_the_graders_verdicts_not_from_gold(world):
    session = world.sample()
    # The graders judge C-1's "compliant" wrong although it equals the frozen gold label.
    grade_session(session, doubting)
    estimates = charter_estimates(charter=world.charter, run=world.run, session=session)
    accuracy = estimates["classification_accuracy"]
    # Per task its output at repeat 0: C-1 judged wrong, C-2..C-4 right, C-5 (C for N) wrong.
    first = {task: labels[0] for task, labels in PLAN.items()}
    by_hand = [first[t] == GOLD[t] and t != "C-1" for t in PLAN]
    assert sum(by_hand) == 3
    assert accuracy.point == pytest.approx(100 * 3 / 5)
    assert accuracy.mode == "H" and accuracy.n == 5
    assert accuracy.kappa == pytest.approx(1.0)
    assert any(note.startswith("agreement rule") for note in accuracy.notes)
    # macro-F1 of the output's label against the graders' right label (C-1: P; C-5: N)
    right = [P, P, N, C, N]
    predicted = [first[t] for t in PLAN]
    # by hand: F1(C) = 2·1/(2·1+2+0) = 1/2, F1(P) = F1(N) = 2·1/(2·1+0+1) = 2/3
    assert f1_score(right, predicted, labels=list(LABELS), average="macro") == pytest.approx(
        (1 / 2 + 2 / 3 + 2 / 3) / 3
    )
    macro = estimates["classification_macro_f1"]
    assert macro.mode == "H" and macro.n == 5
    assert macro.point == pytest.approx(100 * (1 / 2 + 2 / 3 + 2 / 3) / 3)
    assert any("class 'partially compliant'" in note for note in macro.notes)


def test_a_sample_of_outputs_leaves_pass_k_without_an_estimate_and_says_why(world):
    session = world.sample(sample_size=10)
    grade_session(session)
    gated = charter_estimates(charter=world.charter, run=world.run, session=session)["pass_hat_k"]
    assert not gated.has_value
    assert "the success of 10 of 20 outputs is unknown" in gated.reason
    assert "decided 10 of the run's outputs" in gated.reason
    assert "all K repeats of every task graded" in gated.reason
    assert "never a success" in gated.reason


def test_a_disagreement_awaiting_its_adjudicator_is_unknown_not_a_success(world):
    session = world.sample()
    target = (
        Assignment.objects.filter(session=session, artefact__output__task__external_id="C-1")
        .order_by("artefact__output__repeat_index", "pk")
        .select_related("artefact__output__task")
        .first()
    )
    assert target is not None

    def dissent(output, unit_key, field):
        if field == "acceptable" and output.pk == target.artefact.output_id:
            return "N"
        return planted(output, unit_key, field)

    for assignment in Assignment.objects.filter(session=session).order_by("pk"):
        grade(assignment, dissent if assignment.pk == target.pk else planted)
    gated = charter_estimates(charter=world.charter, run=world.run, session=session)["pass_hat_k"]
    assert not gated.has_value
    assert "the success of 1 of 20 outputs is unknown" in gated.reason
    assert "tasks C-1" in gated.reason


def test_without_a_grading_session_human_acceptable_says_none_was_chosen(world):
    estimates = charter_estimates(charter=world.charter, run=world.run)
    assert "none was chosen" in estimates["pass_hat_k"].reason
    assert estimates["pass_hat_k"].mode == "H"
    assert "no grading session" in estimates["classification_accuracy"].reason
