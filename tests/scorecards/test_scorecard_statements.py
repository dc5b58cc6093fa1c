"""What the scorecard states beside the numbers (SPEC §5.3, §6.2, §6.3): the family-wise
reading, the weight-sensitivity range, the outputs graded completely and the value's point."""

from __future__ import annotations

import io
import re

import pytest
from django.test import Client
from pypdf import PdfReader

from demo.testing.grading import fill, grade_apart, make_world
from demo.testing.scorecards import final_scorecard, recorded_decision
from grading.models import Assignment, AssignmentStatus, SessionArtefact
from grading.services.grades import assignment_submit
from scorecards.selectors import assemble_content
from scorecards.services import scorecard_create


@pytest.fixture
def world(db):
    return make_world()


def _page(world, scorecard, suffix: str = "") -> bytes:
    client = Client()
    client.force_login(world.reviewer)
    url = f"/use-cases/{scorecard.use_case.key}/scorecards/{scorecard.pk}/{suffix}"
    response = client.get(url)
    assert response.status_code == 200
    return response.content


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_pdf_and_page_state_the_family_wise_reading_and_the_weight_sensitivity_range(world):
    scorecard = final_scorecard(world)
    reader = PdfReader(io.BytesIO(_page(world, scorecard, "scorecard.pdf")))
    pdf = _flat(" ".join(page.extract_text() or "" for page in reader.pages))
    html = _flat(_page(world, scorecard).decode())
    efficacy = scorecard.content["efficacy"]
    low, high = efficacy["band"]
    for text in (pdf, html):
        # SPEC §5.3: an intersection–union test; P(wrong Scale) ≤ the largest per-metric error
        assert "the conjunctive gate is an intersection–union test" in text
        assert "a wrong Scale is at most the largest per-metric unsafe-side error" in text
        assert "2.5 % for the 95 % intervals here" in text  # α/2 at the charter's 0.95
        assert "The per-metric intervals displayed are not simultaneous" in text
        # SPEC §6.2: the EI band is a weight-sensitivity range, never bracketed like a CI
        assert f"weight-sensitivity range {low:.2f} to {high:.2f}" in text
        assert "not a confidence interval" in text
        assert f"band [{low:.2f}" not in text
    assert "13. EI and EI_G with weight-sensitivity range" in pdf


def test_the_value_says_its_point_is_the_monte_carlo_median(world):
    scorecard = final_scorecard(world)
    value = scorecard.content["value"]["v_annual"]
    reader = PdfReader(io.BytesIO(_page(world, scorecard, "scorecard.pdf")))
    pdf = _flat(" ".join(page.extract_text() or "" for page in reader.pages))

    assert value["point_rule"] == "median of the Monte Carlo draws"
    assert value["lo"] < value["point"] < value["hi"]
    assert f"V_annual GBP {value['point']:,.0f} per year" in pdf
    assert "The point is the median of the Monte Carlo draws (10000 Monte Carlo draws" in pdf
    assert f"at the inputs' central values V_annual is GBP {value['central']:,.0f}" in pdf
    assert f"V_annual is GBP {value['point']:,.0f} per year (Monte Carlo median)" in pdf
    rows = {row["name"]: row for row in scorecard.content["value"]["table"]}
    assert rows["t_manual"]["kind"] == "charter range"
    assert rows["tasks_per_year"]["kind"] == "given"


def _complete_artefacts(run) -> int:
    """Count, independently of the product, the run's sampled outputs graded completely."""
    artefacts = SessionArtefact.objects.filter(output__run=run)
    open_ones = Assignment.objects.filter(artefact__in=artefacts).exclude(
        status=AssignmentStatus.SUBMITTED
    )
    return artefacts.exclude(pk__in=open_ones.values("artefact")).count()


def test_the_scorecard_counts_the_outputs_graded_completely_for_this_sigma(world):
    decision = recorded_decision(world, grade=False)
    run = decision.run
    artefacts = list(SessionArtefact.objects.filter(session=world.session, output__run=run))
    assert len(artefacts) >= 3
    # one output graded in agreement by both graders, one with a disagreement waiting for the
    # adjudicator, one with a single grader's work: only the first is complete
    for assignment in Assignment.objects.filter(artefact=artefacts[0]):
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    grade_apart(artefacts[1])
    first = Assignment.objects.filter(artefact=artefacts[2]).order_by("pk")[0]
    fill(first)
    assignment_submit(actor=first.grader, assignment=first)
    scorecard = scorecard_create(actor=world.owner, decision=decision)

    sizes = assemble_content(scorecard=scorecard)["sample_sizes"]

    # the disputed one has every assignment submitted but is not complete until adjudicated
    assert _complete_artefacts(run) == 2
    assert sizes["graded_documents"] == 1
    assert sizes["sampled_documents"] == len(artefacts)
    assert sizes["population"] == run.outputs.filter(task__split=run.split).count()
    html = _flat(_page(world, scorecard).decode())
    assert (
        f"documents graded by humans <strong>1</strong> of {sizes['population']} outputs of "
        "this σ (counted when complete: every assignment submitted and every disagreement "
        f"adjudicated; {len(artefacts)} sampled)"
    ) in html
