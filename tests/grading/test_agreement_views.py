"""The agreement dashboard and its API: who may see it, and that it shows the right numbers."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from demo.testing.grading import fill
from enterpriseval.stats import krippendorff_alpha
from grading.agreement import ORDINAL_ORDER, compared_text
from grading.models import Assignment, AssignmentStatus, Grade, SessionArtefact
from grading.rubric import FIELDS_BY_NAME
from grading.selectors.artefacts import submitted_field_values
from grading.services.grades import adjudication_record, assignment_submit
from grading.services.sessions import session_create


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def page_url(world, session=None) -> str:
    session = session or world.session
    return reverse("grading-agreement", args=[world.use_case.key, session.public_id])


def api_url(world, session=None) -> str:
    session = session or world.session
    return reverse("api-grading-agreement", args=[world.use_case.key, session.public_id])


def truth(unit_key: str, field: str) -> str:
    """A label that varies over units, the same for every grader who agrees."""
    values = FIELDS_BY_NAME[field].values
    return values[zlib.crc32(f"{unit_key}/{field}".encode()) % len(values)]


def contrarian(unit_key: str, field: str) -> str:
    """The truth, except on about a third of the units, where it is the next label."""
    values = FIELDS_BY_NAME[field].values
    label = truth(unit_key, field)
    if zlib.crc32(unit_key.encode()) % 3:
        return label
    return values[(values.index(label) + 1) % len(values)]


def grade(world, choose_by_grader, *, assignments=None, session=None) -> None:
    session = session or world.session
    for assignment in assignments or Assignment.objects.filter(session=session).order_by("pk"):
        fill(assignment, choose_by_grader[assignment.grader.username])
        assignment_submit(actor=assignment.grader, assignment=assignment)


def disagreeing(world) -> dict:
    first, second, third = (g.username for g in world.graders)
    return {first: truth, second: truth, third: contrarian}


def expected_statistic(session, field: str) -> tuple[str, float, list]:
    """κ or α of ``field`` computed straight from the Grade rows with enterpriseval.stats."""
    complete = set(
        Assignment.objects.filter(session=session)
        .exclude(artefact__assignments__status__in=["pending", "in_progress"])
        .values_list("artefact_id", flat=True)
    )
    graders = sorted(
        set(Assignment.objects.filter(session=session).values_list("grader_id", flat=True))
    )
    units: dict[tuple[int, str], dict[int, str]] = {}
    for artefact_id, grader_id, unit_key, value in Grade.objects.filter(
        assignment__session=session, field=field, assignment__artefact_id__in=complete
    ).values_list("assignment__artefact_id", "assignment__grader_id", "unit_key", "value"):
        units.setdefault((artefact_id, unit_key), {})[grader_id] = value
    order = ORDINAL_ORDER.get(field, FIELDS_BY_NAME[field].values)
    table = [[unit.get(g) for g in graders] for unit in units.values()]
    used = [g for g, column in zip(graders, zip(*table, strict=True), strict=True) if any(column)]
    if len(used) == 2 and all(sum(v is not None for v in row) == 2 for row in table):
        pairs = [[v for v in row if v is not None] for row in table]
        return "κ", cohen_kappa_score(*zip(*pairs, strict=True)), pairs
    data = np.array([[np.nan if v is None else order.index(v) for v in row] for row in table]).T
    level = FIELDS_BY_NAME[field].level
    return "α", krippendorff_alpha(data, level=level, value_domain=range(len(order))), table


def field_cell(html: str, field: str) -> str:
    row = re.search(rf'<tr data-field="{field}">(.*?)</tr>', html, re.S)
    assert row, f"no row for {field}"
    return row.group(1)


@pytest.mark.parametrize("persona", ["owner", "reviewer", "adjudicator"])
def test_the_managers_of_the_session_see_the_dashboard(grading_world, persona):
    user = getattr(grading_world, persona)
    assert browser(user).get(page_url(grading_world)).status_code == 200
    assert browser(user).get(api_url(grading_world)).status_code == 200


def test_graders_model_owners_and_outsiders_are_refused(grading_world):
    world = grading_world
    for user, status in ((world.graders[0], 403), (world.model_owner, 403), (world.outsider, 404)):
        assert browser(user).get(page_url(world)).status_code == status
        response = browser(user).get(api_url(world))
        assert response.status_code == status
        assert set(response.json()["error"]) == {"code", "message", "field", "details"}
    assert browser().get(page_url(world)).status_code == 302
    unknown = reverse("grading-agreement", args=[world.use_case.key, "no-such-session"])
    assert browser(world.owner).get(unknown).status_code == 404


def test_before_any_artefact_is_complete_the_page_says_so(grading_world):
    world = grading_world
    first = world.assignments_of(world.graders[0])[0]
    grade(world, disagreeing(world), assignments=[first])
    response = browser(world.owner).get(page_url(world))
    assert "No artefact has all its assignments submitted yet" in response.content.decode()
    data = browser(world.owner).get(api_url(world)).json()
    assert data["artefacts_complete"] == 0 and data["artefacts_total"] == 8
    assert all(row["point"] is None and row["n_units"] == 0 for row in data["fields"])


def test_the_page_shows_the_alpha_of_graders_who_disagree_on_purpose(grading_world):
    world = grading_world
    grade(world, disagreeing(world))
    html = browser(world.reviewer).get(page_url(world)).content.decode()
    data = browser(world.reviewer).get(api_url(world)).json()
    rows = {row["field"]: row for row in data["fields"]}
    assert data["artefacts_complete"] == 8 and data["kappa_target"] == 0.6
    for field in ("relevant", "supported", "key_element", "value_add"):
        symbol, expected, table = expected_statistic(world.session, field)
        assert symbol == "α"  # three graders in rotating pairs
        row = rows[field]
        assert row["statistic"] == "krippendorff_alpha"
        assert row["point"] == pytest.approx(expected, abs=1e-12)
        assert row["n_units"] == sum(sum(v is not None for v in r) >= 2 for r in table)
        assert row["lo"] <= row["point"] <= row["hi"]
        assert row["passes"] is (expected >= 0.6)
        assert f"α = {expected:.2f}" in field_cell(html, field)
    assert rows["relevant"]["point"] < 1.0
    assert rows["relevant"]["percent_agreement"] < 100.0


def test_two_graders_on_every_artefact_get_cohens_kappa(grading_world):
    world = grading_world
    session = session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Credit memo pairs",
        runs=world.runs,
        graders=world.graders[:2],
        adjudicators=[world.adjudicator],
        design="stratified",
        sample_size=6,
        seed=11,
    )
    first, second = (g.username for g in world.graders[:2])
    grade(world, {first: truth, second: contrarian}, session=session)
    data = browser(world.owner).get(api_url(world, session)).json()
    rows = {row["field"]: row for row in data["fields"]}
    symbol, expected, pairs = expected_statistic(session, "relevant")
    assert symbol == "κ" and rows["relevant"]["statistic"] == "cohen_kappa"
    assert rows["relevant"]["point"] == pytest.approx(expected, abs=1e-12)
    agree = 100 * np.mean([a == b for a, b in pairs])
    assert rows["relevant"]["percent_agreement"] == pytest.approx(agree)
    html = browser(world.owner).get(page_url(world, session)).content.decode()
    assert f"κ = {expected:.2f}" in field_cell(html, "relevant")


def test_metrics_whose_criteria_miss_the_target_are_not_gate_eligible(grading_world):
    world = grading_world
    grade(world, disagreeing(world))
    data = browser(world.owner).get(api_url(world)).json()
    points = {row["field"]: row["point"] for row in data["fields"]}
    eligibility = {row["metric_id"]: row for row in data["eligibility"]}
    assert "citation_recall" not in eligibility  # judge-graded only (SPEC §4)
    assert eligibility["citation_precision_strict"]["treatment"] == "informational"
    for metric_id, fields in (
        ("hallucination_rate", ["assertive", "supported"]),
        ("irrelevance_rate", ["relevant"]),
        ("key_element_capture", ["key_element"]),
    ):
        row = eligibility[metric_id]
        criteria = row["criteria"]
        blocking = [c["field"] for c in criteria if c["point"] is None or c["point"] < 0.6]
        assert row["fields"] == fields == [c["field"] for c in criteria]
        assert row["blocking_fields"] == blocking
        assert row["eligible"] is (not blocking)
        assert row["rule"] == "κ/α ≥ 0.60 on each criterion"
        assert row["field_lower_bounds"] == {c["field"]: c["lo"] for c in criteria}
        for c in criteria:
            assert c["prevalence"] is not None and c["ac1"] is not None
    # supported is measured as supported (fully or partially) vs not, not on its 3 levels
    _symbol, _alpha, table = expected_statistic(world.session, "supported")
    collapsed = np.array(
        [[np.nan if v is None else float(v != "not") for v in row] for row in table]
    ).T
    supported = eligibility["hallucination_rate"]["criteria"][1]
    assert supported["criterion"] == "supported"
    assert supported["point"] == pytest.approx(
        krippendorff_alpha(collapsed, level="nominal", value_domain=[0.0, 1.0]), abs=1e-12
    )
    relevant = points["relevant"]  # a yes/no field: its criterion is the field itself
    assert eligibility["irrelevance_rate"]["criteria"][0]["point"] == pytest.approx(relevant)
    assert relevant < 0.6
    html = browser(world.owner).get(page_url(world)).content.decode()
    assert f"rubric needs revision: relevant α = {compared_text(relevant, 0.6)} &lt; 0.60" in html


def test_the_grader_table_counts_work_and_labels_per_grader(grading_world):
    world = grading_world
    grade(world, disagreeing(world))
    data = browser(world.owner).get(api_url(world)).json()
    graders = {row["grader"]: row for row in data["per_grader"]}
    assert set(graders) == {g.username for g in world.graders}
    for grader in world.graders:
        row = graders[grader.username]
        mine = Assignment.objects.filter(session=world.session, grader=grader)
        assert row["artefacts_assigned"] == row["artefacts_submitted"] == mine.count()
        assert row["mean_seconds"] == pytest.approx(30.0)
        relevant = list(
            Grade.objects.filter(assignment__in=mine, field="relevant").values_list(
                "value", flat=True
            )
        )
        assert row["label_percent"]["relevant"]["N"] == pytest.approx(
            100 * relevant.count("N") / len(relevant)
        )
    truthful = graders[world.graders[0].username]["agreement_with_final"]
    assert {item["field"]: item["percent"] for item in truthful}["relevant"] == 100.0


def test_adjudicated_values_count_as_final_in_each_graders_agreement(grading_world):
    world = grading_world
    grade(world, disagreeing(world))
    artefacts = list(SessionArtefact.objects.filter(session=world.session))
    disputes = [
        fv for fv in submitted_field_values(artefacts) if fv.field == "relevant" and not fv.agreed
    ]
    assert disputes
    by_pk = {a.pk: a for a in artefacts}
    for fv in disputes:
        adjudication_record(
            actor=world.adjudicator,
            artefact=by_pk[fv.artefact_id],
            unit_key=fv.unit_key,
            field="relevant",
            value=truth(fv.unit_key, "relevant"),
        )
    contrarian_user = world.graders[2]
    mine = Grade.objects.filter(
        assignment__session=world.session, assignment__grader=contrarian_user, field="relevant"
    ).values_list("unit_key", "value")
    agree = sum(value == truth(unit_key, "relevant") for unit_key, value in mine)
    data = browser(world.owner).get(api_url(world)).json()
    row = {r["grader"]: r for r in data["per_grader"]}[contrarian_user.username]
    final = {item["field"]: item for item in row["agreement_with_final"]}["relevant"]
    assert (final["n"], final["agree"]) == (len(mine), agree)
    assert final["percent"] == pytest.approx(100 * agree / len(mine)) and agree < len(mine)


def test_the_dashboard_reads_a_fixed_number_of_queries(grading_world):
    world = grading_world
    client = browser(world.owner)
    assignments = list(Assignment.objects.filter(session=world.session).order_by("artefact_id"))
    grade(world, disagreeing(world), assignments=assignments[:4])
    with CaptureQueriesContext(connection) as few:
        client.get(page_url(world))
    grade(world, disagreeing(world), assignments=assignments[4:])
    assert not Assignment.objects.exclude(status=AssignmentStatus.SUBMITTED).exists()
    with CaptureQueriesContext(connection) as many:
        assert client.get(page_url(world)).status_code == 200
    assert len(many) == len(few) <= 14
    with CaptureQueriesContext(connection) as api:
        client.get(api_url(world))
    assert len(api) <= 14
