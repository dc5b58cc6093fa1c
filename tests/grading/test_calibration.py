"""Judge calibration: κ and bias mean(f − h) of the offline judge against the humans' grades."""

from __future__ import annotations

import zlib
from collections import defaultdict

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from demo.testing.grading import fill
from grading.models import Assignment, Grade
from grading.rubric import FIELDS_BY_NAME
from grading.services.grades import assignment_submit
from runs.models import JudgeScore
from runs.services.judging import judge_get_or_create, judge_run

# The human label that implies each judge label (the judge asks "flagged?" of guidance items).
FROM_JUDGE = {"flagged": {"Y": "TP", "N": "correct"}}
FIELD_OF_CRITERION = {
    "assertive": "assertive",
    "supported": "supported",
    "relevant": "relevant",
    "citation_strict": "citation",
    "citation_lenient": "citation",
    "key_element_captured": "key_element",
    "flagged": "guidance",
}
# Written out by hand from SPEC §4 and the rubric, not through grading.rubric.criterion_scores.
HUMAN_SCORE = {
    "assertive": lambda v: v == "Y",
    "supported": lambda v: v != "not",
    "relevant": lambda v: v == "Y",
    "citation_strict": lambda v: v == "strict",
    "citation_lenient": lambda v: v != "not",
    "key_element_captured": lambda v: v == "present_correct",
    "flagged": lambda v: v in ("TP", "FP"),
}


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def page_url(world, **query) -> str:
    url = reverse("grading-calibration", args=[world.use_case.key, world.session.public_id])
    return url + ("?judge=" + query["judge"] if "judge" in query else "")


def api_url(world, **query) -> str:
    url = reverse("api-grading-calibration", args=[world.use_case.key, world.session.public_id])
    return url + ("?judge=" + query["judge"] if "judge" in query else "")


def judged(world, name="offline", runs=None):
    judge = judge_get_or_create(kind="offline", name=name)
    for run in runs or world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    return judge


def flipped(unit_key: str) -> bool:
    return zlib.crc32(unit_key.encode()) % 4 == 0


def judge_minded(judge, assignment):
    """Grade as the judge labelled each unit, except a quarter of the units, flipped."""
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    for key, question_label, criterion in JudgeScore.objects.filter(
        judge=judge, unit__output=assignment.artefact.output
    ).values_list("unit__key", "label", "criterion"):
        field = FIELD_OF_CRITERION[criterion]
        labels[key][field] = FROM_JUDGE.get(criterion, {}).get(question_label, question_label)

    def choose(unit_key: str, field: str) -> str:
        values = FIELDS_BY_NAME[field].values
        label = labels.get(unit_key, {}).get(field, values[0])
        if flipped(unit_key):
            return values[(values.index(label) + 1) % len(values)]
        return label

    return choose


def grade_like_the_judge(world, judge) -> None:
    for assignment in Assignment.objects.filter(session=world.session).select_related(
        "artefact__output", "grader"
    ):
        fill(assignment, judge_minded(judge, assignment))
        assignment_submit(actor=assignment.grader, assignment=assignment)


def hand_computed(world, judge) -> dict[str, dict[str, float]]:
    """κ, agreement and bias per criterion from the Grade and JudgeScore rows."""
    human: dict[tuple[int, str, str], str] = {}
    for output_id, unit_key, field, value in Grade.objects.filter(
        assignment__session=world.session
    ).values_list("assignment__artefact__output_id", "unit_key", "field", "value"):
        human[(output_id, unit_key, field)] = value  # both graders agree by construction
    pairs: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for output_id, unit_key, criterion, score in JudgeScore.objects.filter(judge=judge).values_list(
        "unit__output_id", "unit__key", "criterion", "score"
    ):
        value = human.get((output_id, unit_key, FIELD_OF_CRITERION.get(criterion, "")))
        if value is not None:
            pairs[criterion].append((output_id, score, float(HUMAN_SCORE[criterion](value))))
    result = {}
    for criterion, triples in pairs.items():
        outputs, f, h = (np.array(column) for column in zip(*triples, strict=True))
        result[criterion] = {
            "n_units": len(f),
            "n_artefacts": len(set(outputs)),
            "kappa": cohen_kappa_score(f, h, labels=[0.0, 1.0]),
            "percent_agreement": 100 * np.mean(f == h),
            "bias": np.mean(f - h),
        }
    return result


def test_calibration_gives_the_kappa_and_bias_of_a_hand_computation(grading_world):
    world = grading_world
    judge = judged(world)
    grade_like_the_judge(world, judge)
    data = browser(world.reviewer).get(api_url(world)).json()
    assert data["judge"] == f"offline:{judge.version}"
    assert data["output_artefacts_complete"] == 8
    rows = {row["criterion"]: row for row in data["rows"]}
    expected = hand_computed(world, judge)
    assert set(expected) <= set(rows)
    for criterion, numbers in expected.items():
        row = rows[criterion]
        assert row["n_units"] == numbers["n_units"]
        assert row["n_artefacts"] == numbers["n_artefacts"]
        assert row["percent_agreement"] == pytest.approx(numbers["percent_agreement"])
        assert row["bias"] == pytest.approx(numbers["bias"], abs=1e-12)
        if np.isfinite(numbers["kappa"]):
            assert row["kappa"] == pytest.approx(numbers["kappa"], abs=1e-12)
        if row["bias_lo"] is not None:
            assert row["bias_lo"] <= row["bias"] <= row["bias_hi"]
    relevant = rows["relevant"]
    assert 0 < relevant["percent_agreement"] < 100  # the flipped quarter disagrees
    assert relevant["kappa"] < 1.0
    html = browser(world.reviewer).get(page_url(world)).content.decode()
    assert f"{expected['relevant']['kappa']:.2f}" in html
    assert f"Judge offline:{judge.version} against the humans" in html


def test_the_default_judge_is_the_one_that_scored_last_and_another_can_be_chosen(grading_world):
    world = grading_world
    first = judged(world)
    grade_like_the_judge(world, first)
    second = judged(world, name="offline-second", runs=world.runs[:1])
    data = browser(world.owner).get(api_url(world)).json()
    assert data["judge"] == f"offline-second:{second.version}"
    assert [j["ref"] for j in data["judges"]] == [
        f"offline-second:{second.version}",
        f"offline:{first.version}",
    ]
    chosen = browser(world.owner).get(api_url(world, judge=f"offline:{first.version}")).json()
    assert chosen["judge"] == f"offline:{first.version}"
    assert {r["criterion"]: r for r in chosen["rows"]}["relevant"]["n_artefacts"] == 8


def test_an_unknown_judge_is_refused_with_the_judges_that_exist(grading_world):
    world = grading_world
    judge = judged(world)
    response = browser(world.owner).get(api_url(world, judge="gpt-judge:3"))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "judge"
    assert error["message"] == (
        f"judge gpt-judge:3 is not registered; judges with scores here: offline:{judge.version}"
    )
    page = browser(world.owner).get(page_url(world, judge="not a ref"))
    assert page.status_code == 400
    assert "judge must be &quot;name:version&quot;" in page.content.decode()


def test_without_judge_scores_or_complete_artefacts_the_page_says_so(grading_world):
    world = grading_world
    html = browser(world.owner).get(page_url(world)).content.decode()
    assert "No judge has scored the outputs in this session yet." in html
    judged(world)
    html = browser(world.owner).get(page_url(world)).content.decode()
    assert "No output artefact has all its assignments submitted yet" in html
    assert browser(world.owner).get(api_url(world)).json()["rows"][0]["n_units"] == 0


def test_only_the_sessions_managers_see_the_calibration(grading_world):
    world = grading_world
    for user, status in (
        (world.adjudicator, 200),
        (world.graders[1], 403),
        (world.model_owner, 403),
        (world.outsider, 404),
    ):
        assert browser(user).get(page_url(world)).status_code == status
        assert browser(user).get(api_url(world)).status_code == status


def test_the_calibration_page_reads_a_fixed_number_of_queries(grading_world):
    world = grading_world
    judge = judged(world)
    assignments = list(Assignment.objects.filter(session=world.session).order_by("artefact_id"))
    client = browser(world.owner)
    for assignment in assignments[:4]:
        fill(assignment, judge_minded(judge, assignment))
        assignment_submit(actor=assignment.grader, assignment=assignment)
    with CaptureQueriesContext(connection) as few:
        client.get(page_url(world))
    for assignment in assignments[4:]:
        fill(assignment, judge_minded(judge, assignment))
        assignment_submit(actor=assignment.grader, assignment=assignment)
    with CaptureQueriesContext(connection) as many:
        assert client.get(page_url(world)).status_code == 200
    assert len(many) == len(few) <= 14
