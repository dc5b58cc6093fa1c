"""Oversight pages and API: blind review for reviewers, creation and results for the owner."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.models import AuditEntry
from grading.models import DefectKind, OversightItem, OversightStudy
from grading.services.oversight import oversight_item_decide, oversight_study_create

SEED = 99


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def study(grading_world):
    return oversight_study_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Memo review round",
        runs=grading_world.runs,
        reviewers=grading_world.graders[:2],
        items_per_reviewer=10,
        defect_share=0.5,
        seed=SEED,
    )


def items_of(study, reviewer):
    return list(OversightItem.objects.filter(study=study, reviewer=reviewer).order_by("position"))


def assert_blind(world, content: str) -> None:
    lowered = content.lower()
    for text in world.provenance:
        assert text.lower() not in lowered, text
    for kind, label in DefectKind.choices:
        assert kind not in lowered and label.lower() not in lowered, kind
    for word in ("seeded", "defect", "/runs/", "source_output"):
        assert word not in lowered, word


def detail_url(world, study) -> str:
    return reverse("grading-oversight-detail", args=[world.use_case.key, study.public_id])


def list_url(world) -> str:
    return reverse("grading-oversight-list", args=[world.use_case.key])


# Reviewer pages -----------------------------------------------------------------------------


def test_the_queue_lists_only_the_reviewers_own_items_blind(grading_world, study):
    reviewer, other = grading_world.graders[:2]
    response = browser(reviewer).get(reverse("grading-oversight-queue"))
    assert response.status_code == 200
    content = response.content.decode()
    assert_blind(grading_world, content)
    for item in items_of(study, reviewer):
        assert reverse("grading-oversight-item", args=[item.public_id]) in content
    for item in items_of(study, other):
        assert item.public_id not in content


def test_every_item_page_is_blind_and_shows_sentences_checklist_and_sources(grading_world, study):
    reviewer = grading_world.graders[0]
    client = browser(reviewer)
    for item in items_of(study, reviewer):
        response = client.get(reverse("grading-oversight-item", args=[item.public_id]))
        assert response.status_code == 200
        content = response.content.decode()
        assert_blind(grading_world, content)
        attributes = re.findall(r'[\w-]+="([^"]*)"', content)
        pk = str(item.source_output_id)
        assert not [a for a in attributes if a == pk or f"/{pk}/" in a or a.endswith(f"-{pk}")]
        assert 'name="flags" value="s1"' in content
        task = item.source_output.task
        for element in task.key_elements.all():
            assert f'value="k:{element.element_id}"' in content
        for chunk in task.source_chunks.all():
            assert chunk.chunk_id in content
        assert 'name="decision" value="reject"' in content


def test_another_reviewers_item_is_not_found(grading_world, study):
    item = items_of(study, grading_world.graders[1])[0]
    url = reverse("grading-oversight-item", args=[item.public_id])
    for user in (grading_world.graders[0], grading_world.owner, grading_world.outsider):
        assert browser(user).get(url).status_code == 404
        assert browser(user).post(url, {"decision": "accept"}).status_code == 404
    api = reverse("api-grading-oversight-item", args=[item.public_id])
    assert browser(grading_world.graders[0]).get(api).status_code == 404


def test_rejecting_on_the_page_records_flags_and_time_then_moves_on(grading_world, study):
    reviewer = grading_world.graders[0]
    first, second = items_of(study, reviewer)[:2]
    url = reverse("grading-oversight-item", args=[first.public_id])
    response = browser(reviewer).post(
        url,
        {
            "decision": "reject",
            "flags": ["s2", "s1"],
            "comment": "Second figure is off.",
            "started": "0",  # a forged stamp: the time recorded is capped
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("grading-oversight-item", args=[second.public_id])
    first.refresh_from_db()
    assert (first.decision, first.flags, first.comment) == (
        "reject",
        ["s1", "s2"],
        "Second figure is off.",
    )
    assert 0 < first.seconds_spent <= 1800
    again = browser(reviewer).post(url, {"decision": "accept", "started": f"{time.time():.3f}"})
    assert again.status_code == 400
    assert "needs a reason" in again.content.decode()


@pytest.mark.parametrize("started", [None, "", "soon", "nan", "inf", "9e99"])
def test_a_decision_without_a_readable_time_stamp_is_refused(grading_world, study, started):
    """Counting it as 0 s would lower the study's mean review time."""
    reviewer = grading_world.graders[0]
    item = items_of(study, reviewer)[0]
    body = {"decision": "accept"} | ({} if started is None else {"started": started})
    response = browser(reviewer).post(
        reverse("grading-oversight-item", args=[item.public_id]), body
    )
    assert response.status_code == 400
    assert "time stamp is missing or unreadable" in response.content.decode()
    item.refresh_from_db()
    assert (item.decision, item.seconds_spent, item.decided_at) == ("", 0, None)
    assert not AuditEntry.objects.filter(action__startswith="oversight_item.").exists()


def test_model_text_is_escaped_on_the_review_page(grading_world, study):
    reviewer = grading_world.graders[0]
    item = items_of(study, reviewer)[0]
    OversightItem.objects.filter(pk=item.pk).update(
        text='Revenue <script>alert("x")</script> rose [G1-ar24-p41].'
    )
    response = browser(reviewer).get(reverse("grading-oversight-item", args=[item.public_id]))
    content = response.content.decode()
    assert "<script>alert" not in content
    assert "&lt;script&gt;alert" in content


def test_the_queue_page_takes_the_same_queries_for_more_items(
    grading_world, study, django_assert_max_num_queries
):
    reviewer = grading_world.graders[0]
    client = browser(reviewer)
    with CaptureQueriesContext(connection) as few:
        client.get(reverse("grading-oversight-queue"))
    oversight_study_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Second round",
        runs=grading_world.runs,
        reviewers=[reviewer],
        items_per_reviewer=12,
        seed=SEED,
    )
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get(reverse("grading-oversight-queue"))


# Management pages ---------------------------------------------------------------------------


def test_management_pages_admit_owner_and_reviewer_refuse_graders_and_hide_from_outsiders(
    grading_world, study
):
    for url in (list_url(grading_world), detail_url(grading_world, study)):
        assert browser(grading_world.owner).get(url).status_code == 200
        assert browser(grading_world.reviewer).get(url).status_code == 200
        assert browser(grading_world.graders[0]).get(url).status_code == 403
        assert browser(grading_world.model_owner).get(url).status_code == 403
        assert browser(grading_world.outsider).get(url).status_code == 404


def test_the_owner_creates_a_study_with_the_form(grading_world):
    response = browser(grading_world.owner).post(
        list_url(grading_world),
        {
            "name": "Form round",
            "runs": [run.pk for run in grading_world.runs],
            "reviewers": [grading_world.graders[2].pk],
            "items_per_reviewer": 5,
            "defect_share": 0.4,
            "kinds": ["changed_figure", "citation_removed"],
            "seed": 5,
        },
    )
    study = OversightStudy.objects.get(name="Form round")
    assert response.status_code == 302
    assert response["Location"] == detail_url(grading_world, study)
    kinds = sorted(d["kind"] for i in study.items.all() for d in i.defects)
    assert kinds == ["changed_figure", "citation_removed"]


def test_a_reviewer_cannot_create_a_study(grading_world):
    response = browser(grading_world.reviewer).post(list_url(grading_world), {"name": "x"})
    assert response.status_code == 403
    assert not OversightStudy.objects.exists()


def test_the_results_page_states_the_rule_and_shows_caught_defects(grading_world, study):
    reviewer = grading_world.graders[0]
    seeded = [i for i in items_of(study, reviewer) if i.defects]
    oversight_item_decide(
        actor=reviewer, item=seeded[0], decision="reject", flags=[seeded[0].defects[0]["target"]]
    )
    oversight_item_decide(actor=reviewer, item=seeded[1], decision="accept", flags=[])
    response = browser(grading_world.reviewer).get(detail_url(grading_world, study))
    content = response.content.decode()
    assert "rejected the copy and marked the defect" in content
    overall = re.search(r'data-kind="overall">(.*?)</tr>', content, re.S).group(1)
    assert re.search(r'data-field="caught"><strong>1</strong>', overall)
    assert re.search(r'data-field="seeded"><strong>2</strong>', overall)
    assert "50.0 %" in overall
    assert seeded[0].defects[0]["detail"] in content.replace("&#x27;", "'").replace("&amp;", "&")


def test_the_owner_closes_a_study(grading_world, study):
    response = browser(grading_world.owner).post(detail_url(grading_world, study))
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.status == "closed"
    assert browser(grading_world.reviewer).post(detail_url(grading_world, study)).status_code == 403


def test_the_results_page_takes_flat_queries(grading_world, study, django_assert_max_num_queries):
    client = browser(grading_world.owner)
    with CaptureQueriesContext(connection) as before:
        client.get(detail_url(grading_world, study))
    for item in items_of(study, grading_world.graders[0]):
        oversight_item_decide(actor=item.reviewer, item=item, decision="reject", flags=["s1"])
    with django_assert_max_num_queries(len(before.captured_queries)):
        client.get(detail_url(grading_world, study))


# API ----------------------------------------------------------------------------------------


def test_the_api_creates_a_study_for_the_owner_only(grading_world):
    url = reverse("api-grading-oversight-list", args=[grading_world.use_case.key])
    body = {
        "name": "API round",
        "runs": [run.pk for run in grading_world.runs],
        "reviewers": [grading_world.graders[0].username],
        "items_per_reviewer": 4,
        "defect_share": 0.5,
        "seed": 3,
    }
    assert browser(grading_world.reviewer).post(url, body, "application/json").status_code == 403
    assert browser(grading_world.graders[0]).post(url, body, "application/json").status_code == 403
    assert browser(grading_world.outsider).post(url, body, "application/json").status_code == 404
    response = browser(grading_world.owner).post(url, body, "application/json")
    assert response.status_code == 201, response.content
    assert response.json()["items"] == 4 and response.json()["seed"] == "3"
    listed = browser(grading_world.reviewer).get(url).json()
    assert [s["name"] for s in listed] == ["API round"]


def test_the_api_names_the_field_at_fault(grading_world):
    url = reverse("api-grading-oversight-list", args=[grading_world.use_case.key])
    body = {
        "name": "API round",
        "runs": [run.pk for run in grading_world.runs],
        "reviewers": ["nobody"],
        "items_per_reviewer": 4,
    }
    response = browser(grading_world.owner).post(url, body, "application/json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "reviewers[0]"


def test_the_results_api_gives_counts_rates_and_wilson_intervals(grading_world, study):
    reviewer = grading_world.graders[0]
    seeded = [i for i in items_of(study, reviewer) if i.defects]
    oversight_item_decide(
        actor=reviewer, item=seeded[0], decision="reject", flags=[seeded[0].defects[0]["target"]]
    )
    url = reverse(
        "api-grading-oversight-results", args=[grading_world.use_case.key, study.public_id]
    )
    assert browser(grading_world.graders[0]).get(url).status_code == 403
    assert browser(grading_world.outsider).get(url).status_code == 404
    data = browser(grading_world.reviewer).get(url).json()
    overall = data["overall"]
    assert (overall["seeded"], overall["caught"]) == (1, 1)
    assert overall["catch_rate"]["rate"] == 1.0
    assert overall["catch_rate"]["ci_high"] == 1.0 and 0 < overall["catch_rate"]["ci_low"] < 1
    assert overall["false_acceptance_rate"]["successes"] == 0
    assert data["confidence"] == 0.95 and data["decided"] == 1
    assert "caught" in data["caught_rule"]


def test_the_reviewer_api_is_blind_and_records_decisions(grading_world, study):
    reviewer = grading_world.graders[0]
    client = browser(reviewer)
    queue = client.get(reverse("api-grading-oversight-queue"))
    assert queue.status_code == 200
    assert_blind(grading_world, queue.content.decode())
    entries = queue.json()
    assert [e["item"] for e in entries] == [i.public_id for i in items_of(study, reviewer)]
    item = items_of(study, reviewer)[0]
    detail = client.get(reverse("api-grading-oversight-item", args=[item.public_id]))
    assert_blind(grading_world, detail.content.decode())
    assert detail.json()["sentences"][0]["key"] == "s1"
    decision_url = reverse("api-grading-oversight-decision", args=[item.public_id])
    body = {"decision": "reject", "flags": ["s1"], "elapsed_seconds": 42}
    response = client.post(decision_url, body, "application/json")
    assert response.status_code == 200
    assert_blind(grading_world, response.content.decode())
    assert response.json()["decision"] == "reject"
    item.refresh_from_db()
    assert (item.decision, item.flags, item.seconds_spent) == ("reject", ["s1"], 42)
    again = client.post(
        decision_url, {"decision": "accept", "elapsed_seconds": 5}, "application/json"
    )
    assert again.status_code == 409
    assert again.json()["error"]["field"] == "reason"
    revised = client.post(
        decision_url,
        {"decision": "accept", "reason": "Misread.", "elapsed_seconds": 8},
        "application/json",
    )
    assert revised.status_code == 200
    assert AuditEntry.objects.filter(action="oversight_item.revise").count() == 1
    item.refresh_from_db()
    assert (item.decision, item.seconds_spent) == ("accept", 50)
    bad = client.post(
        decision_url,
        json.dumps({"decision": "accept", "flags": ["s99"], "reason": "x", "elapsed_seconds": 1}),
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "flags[0]"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"decision": "reject", "flags": ["s1"]}, "This field is required."),
        ({"decision": "reject", "elapsed_seconds": None}, "This field may not be null."),
        ({"decision": "reject", "elapsed_seconds": -3}, "greater than or equal to 0"),
    ],
)
def test_the_decision_api_requires_the_time_spent(grading_world, study, body, message):
    """A decision without its time would count 0 s and lower the study's mean review time."""
    reviewer = grading_world.graders[0]
    item = items_of(study, reviewer)[0]
    response = browser(reviewer).post(
        reverse("api-grading-oversight-decision", args=[item.public_id]),
        json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "elapsed_seconds" and message in error["message"]
    item.refresh_from_db()
    assert (item.decision, item.seconds_spent, item.decided_at) == ("", 0, None)
    assert not AuditEntry.objects.filter(action__startswith="oversight_item.").exists()


def test_the_api_closes_a_study_for_the_owner_only(grading_world, study):
    url = reverse("api-grading-oversight-close", args=[grading_world.use_case.key, study.public_id])
    assert browser(grading_world.outsider).post(url).status_code == 404
    for user in (grading_world.graders[0], grading_world.reviewer, grading_world.model_owner):
        assert browser(user).post(url).status_code == 403
    study.refresh_from_db()
    assert study.status == "open" and study.closed_at is None
    assert not AuditEntry.objects.filter(action="oversight_study.close").exists()
    response = browser(grading_world.owner).post(url)
    assert response.status_code == 200
    data = response.json()
    assert (data["public_id"], data["status"], data["items"]) == (study.public_id, "closed", 20)
    assert data["closed_at"] is not None
    study.refresh_from_db()
    assert study.status == "closed"
    again = browser(grading_world.owner).post(url)
    assert again.status_code == 409 and again.json()["error"]["field"] == "status"
    assert AuditEntry.objects.filter(action="oversight_study.close").count() == 1
    item = items_of(study, grading_world.graders[0])[0]
    refused = browser(grading_world.graders[0]).post(
        reverse("api-grading-oversight-decision", args=[item.public_id]),
        {"decision": "accept", "elapsed_seconds": 3},
        "application/json",
    )
    assert refused.status_code == 409 and refused.json()["error"]["field"] == "study"
