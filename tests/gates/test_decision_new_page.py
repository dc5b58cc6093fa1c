"""The Record a decision page: the use case's own choices, errors on the field, the redirect."""

from __future__ import annotations

import pytest
from django.urls import reverse

from demo.testing.decisions import make_decidable_world
from gates.models import Decision
from grading.models import Assignment, AssignmentStatus


@pytest.fixture
def decidable(db):
    return make_decidable_world()


def url(world) -> str:
    return reverse("decision-new", args=[world.use_case.key])


def form(world, judge) -> dict[str, str]:
    return {
        "charter": "1",
        "run": str(world.runs[0].pk),
        "session": world.session.public_id,
        "judge": str(judge.pk),
        "oversight_study": "",
    }


def test_the_form_offers_the_use_cases_own_runs_sessions_and_judges(client, decidable):
    world, judge = decidable
    client.force_login(world.owner)
    page = client.get(url(world)).content.decode()
    for run in world.runs:
        assert f'value="{run.pk}"' in page
    assert world.session.public_id in page and f"{judge.name} {judge.version}" in page


def test_recording_redirects_to_the_new_decision(client, decidable):
    world, judge = decidable
    client.force_login(world.owner)
    response = client.post(url(world), form(world, judge))
    decision = Decision.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "decision-detail", args=[world.use_case.key, decision.pk]
    )


def test_a_refusal_is_shown_on_the_field_at_fault(client, decidable, triggers_lifted):
    world, judge = decidable
    # A submitted assignment cannot be reopened (audit/db_guards.py): leave work open as a
    # session that was never finished would.
    with triggers_lifted("grading_assignment"):
        Assignment.objects.filter(pk=Assignment.objects.filter(session=world.session)[0].pk).update(
            status=AssignmentStatus.IN_PROGRESS
        )
    client.force_login(world.owner)
    response = client.post(url(world), form(world, judge))
    assert response.status_code == 400
    assert "still open" in response.context["form"].errors["session"][0]
    page = response.content.decode()
    field = page[page.index('id="field-session"') :]
    assert "still open" in field[: field.index("</div>")]
    assert not Decision.objects.exists()


@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 200), ("reviewer", 200), ("model_owner", 403), ("grader", 403), ("outsider", 404)],
)
def test_each_persona_reaches_the_form_as_its_role_allows(client, decidable, persona, status):
    world, _judge = decidable
    client.force_login(world.graders[0] if persona == "grader" else getattr(world, persona))
    assert client.get(url(world)).status_code == status


def test_the_decisions_page_and_the_use_case_page_link_to_it(client, decidable):
    world, _judge = decidable
    link = f'href="{url(world)}"'
    key = world.use_case.key
    client.force_login(world.owner)
    assert link in client.get(reverse("decision-list", args=[key])).content.decode()
    assert link in client.get(reverse("use-case-detail", args=[key])).content.decode()
    # A model owner reads decisions but does not record them: the use-case page omits the link.
    client.force_login(world.model_owner)
    assert link not in client.get(reverse("use-case-detail", args=[key])).content.decode()
