"""Adjudication pages: the queue of disagreements, one artefact's disputed fields, resolving."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from audit.models import AuditEntry
from charters.models import Role
from charters.services.use_cases import membership_grant
from demo.testing.grading import fill, first_values, make_world
from grading.models import Adjudication, Assignment, SessionArtefact
from grading.selectors.adjudication import adjudication_queue
from grading.services.grades import assignment_submit
from grading.services.sessions import session_close
from runs.models import Unit

DISSENT = {"relevant": "N", "citation": "not", "key_element": "absent", "value_add": "2"}


def dissent(unit_key: str, field: str) -> str:
    """Disagree with :func:`first_values` on s1, the chunks s1 cites, key elements, value-add."""
    if field in DISSENT and (unit_key in ("s1", "artefact") or unit_key.startswith(("c1:", "k:"))):
        return DISSENT[field]
    return first_values(unit_key, field)


def grade_apart(artefact, *, both_submit: bool = True) -> set[tuple[str, str]]:
    """Have the artefact's two graders disagree; return the fields they graded differently."""
    first, second = Assignment.objects.filter(artefact=artefact).order_by("public_id")
    mine, theirs = fill(first), fill(second, dissent)
    assignment_submit(actor=first.grader, assignment=first)
    if both_submit:
        assignment_submit(actor=second.grader, assignment=second)
    return {(k, f) for k, unit in mine.items() for f, v in unit.items() if theirs[k][f] != v}


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def queue_url(world) -> str:
    return reverse("grading-adjudication-queue", args=[world.use_case.key, world.session.public_id])


def item_url(world, artefact) -> str:
    return reverse(
        "grading-adjudication-item",
        args=[world.use_case.key, world.session.public_id, artefact.public_id],
    )


def artefacts(world) -> list[SessionArtefact]:
    return list(world.session.artefacts.order_by("pk"))


def disputes_shown(html: str) -> set[tuple[str, str]]:
    return set(re.findall(r'data-unit="([^"]+)" data-field="([^"]+)"', html))


def post(client, world, artefact, unit_key, field, value, note=""):
    """Record one field through the artefact's one form (``unit|field``, ``unit|field|note``)."""
    return client.post(
        item_url(world, artefact),
        {f"{unit_key}|{field}": value, f"{unit_key}|{field}|note": note},
    )


CHOICES = '<fieldset class="adj-choices">'


def test_the_queue_lists_the_disputed_fields_of_fully_submitted_artefacts_only(grading_world):
    done, half = artefacts(grading_world)[:2]
    expected = grade_apart(done)
    grade_apart(half, both_submit=False)

    [item] = adjudication_queue(session=grading_world.session)
    assert item.public_id == done.public_id
    assert {(d.unit_key, d.field) for d in item.disputes} == expected
    assert ("s1", "relevant") in expected and ("artefact", "value_add") in expected

    response = browser(grading_world.adjudicator).get(queue_url(grading_world))
    assert response.status_code == 200
    html = response.content.decode()
    assert done.public_id in html
    assert half.public_id not in html
    assert f'<strong data-field="disputed">{len(expected)}</strong>' in html
    assert '<strong data-field="resolved">0</strong>' in html
    assert "7 artefacts still wait" in html

    item_html = browser(grading_world.adjudicator).get(item_url(grading_world, done)).content
    assert disputes_shown(item_html.decode()) == expected
    assert browser(grading_world.adjudicator).get(item_url(grading_world, half)).status_code == 404


def test_the_item_shows_the_units_and_the_anonymised_grader_values(grading_world):
    artefact = artefacts(grading_world)[0]
    grade_apart(artefact)
    units = {u.key: u for u in Unit.objects.filter(output=artefact.output)}

    html = browser(grading_world.adjudicator).get(item_url(grading_world, artefact)).content
    html = html.decode()
    assert escape(artefact.task.input) in html
    assert escape(units["s1"].text) in html
    assert "Grader 1: <strong>Yes</strong>" in html  # first_values, the lower public id
    assert "Grader 2: <strong>No</strong>" in html
    assert "Grader 1: <strong>0 none</strong>" in html
    assert "Grader 2: <strong>2 substantial</strong>" in html
    cited = [key for key in units if key.startswith("c1:")]
    for key in cited:
        chunk = artefact.task.source_chunks.get(chunk_id=key.split(":", 1)[1])
        assert escape(chunk.text) in html
    element = artefact.task.key_elements.order_by("pk").first()
    assert escape(element.text) in html
    for grader in grading_world.graders:
        assert grader.get_username() not in html
    assert html.count('<form method="post" id="adj-form" class="adjudicate">') == 1
    assert html.count(CHOICES) == len(disputes_shown(html))  # a choice for each field
    assert "Record final value" in html


def test_only_named_adjudicators_resolve_and_the_owner_and_reviewer_read(grading_world):
    artefact = artefacts(grading_world)[0]
    grade_apart(artefact)
    world = grading_world
    other = get_user_model().objects.create_user(username="adj-two", password="pw-adj-two")
    membership_grant(actor=world.owner, use_case=world.use_case, user=other, role=Role.ADJUDICATOR)

    for user in (world.adjudicator,):
        assert browser(user).get(queue_url(world)).status_code == 200
        assert browser(user).get(item_url(world, artefact)).status_code == 200
    for user in (world.graders[0], world.model_owner, other):
        assert browser(user).get(queue_url(world)).status_code == 403
        assert browser(user).get(item_url(world, artefact)).status_code == 403
        assert post(browser(user), world, artefact, "s1", "relevant", "N").status_code == 403
    assert browser(world.outsider).get(queue_url(world)).status_code == 404
    assert browser(world.outsider).get(item_url(world, artefact)).status_code == 404
    assert browser().get(queue_url(world)).status_code == 302  # to the sign-in page

    for user in (world.owner, world.reviewer):
        queue = browser(user).get(queue_url(world))
        item = browser(user).get(item_url(world, artefact))
        assert queue.status_code == item.status_code == 200
        assert b'id="read-only"' in queue.content and b'id="read-only"' in item.content
        assert CHOICES.encode() not in item.content
        assert b"Awaiting the adjudicator." in item.content
        assert post(browser(user), world, artefact, "s1", "relevant", "N").status_code == 403
    assert not Adjudication.objects.exists()
    missing = reverse("grading-adjudication-queue", args=[world.use_case.key, "nosuchsession"])
    assert browser(world.adjudicator).get(missing).status_code == 404


def test_the_adjudicated_value_is_final(grading_world):
    artefact = artefacts(grading_world)[0]
    grade_apart(artefact)
    client = browser(grading_world.adjudicator)

    response = post(client, grading_world, artefact, "s1", "relevant", "N", note="restates s2")
    assert response.status_code == 302
    assert response["Location"] == item_url(grading_world, artefact)
    adjudication = Adjudication.objects.get()
    assert (adjudication.unit_key, adjudication.field, adjudication.value) == (
        "s1",
        "relevant",
        "N",
    )
    assert adjudication.adjudicator == grading_world.adjudicator
    assert adjudication.note == "restates s2"
    entry = AuditEntry.objects.get(action="adjudication.record")
    assert entry.payload["artefact"] == artefact.public_id
    assert entry.payload["value"] == "N"

    html = client.get(item_url(grading_world, artefact)).content.decode()
    section = html.split('data-unit="s1" data-field="relevant"')[1].split("</section>")[0]
    assert '<span class="badge ok">final</span>' in section
    assert '<strong data-field="final">No</strong>' in section
    assert CHOICES not in section
    assert "s1 relevant: the final value is No." in html
    assert "restates s2" in section

    again = post(client, grading_world, artefact, "s1", "relevant", "Y")
    assert again.status_code == 409
    assert "already adjudicated; the adjudicated value is final" in again.content.decode()
    assert Adjudication.objects.get().value == "N"
    assert AuditEntry.objects.filter(action="adjudication.record").count() == 1


def test_bad_posts_are_refused_with_a_message(grading_world):
    artefact = artefacts(grading_world)[0]
    grade_apart(artefact)
    client = browser(grading_world.adjudicator)

    bad = post(client, grading_world, artefact, "s1", "relevant", "maybe")
    assert bad.status_code == 400
    assert "relevant: value must be one of Y, N" in bad.content.decode()
    missing = client.post(item_url(grading_world, artefact), {"s1|relevant": ""})
    assert missing.status_code == 400
    assert "Choose a final value for at least one pending field." in missing.content.decode()
    agreed = post(client, grading_world, artefact, "s1", "assertive", "Y")
    assert agreed.status_code == 409
    assert "there is nothing to adjudicate" in agreed.content.decode()
    assert not Adjudication.objects.exists()


def test_resolving_an_artefact_moves_on_to_the_next_then_back_to_the_queue(grading_world):
    world = grading_world
    disputed = {a.public_id: (a, grade_apart(a)) for a in artefacts(world)[:2]}
    client = browser(world.adjudicator)
    order = [item.public_id for item in adjudication_queue(session=world.session)]
    assert sorted(order) == order == sorted(disputed)  # by public id, not by sample order

    first, fields = disputed[order[0]]
    for n, (unit_key, field) in enumerate(sorted(fields), start=1):
        response = post(client, world, first, unit_key, field, first_values(unit_key, field))
        assert response.status_code == 302
        if n < len(fields):
            assert response["Location"] == item_url(world, first)
    second, fields = disputed[order[1]]
    assert response["Location"] == item_url(world, second)
    assert [i.public_id for i in adjudication_queue(session=world.session)] == order[::-1]
    for unit_key, field in sorted(fields):
        response = post(client, world, second, unit_key, field, dissent(unit_key, field))
    assert response["Location"] == queue_url(world)

    html = client.get(queue_url(world)).content.decode()
    total = sum(len(f) for _a, f in disputed.values())
    assert f'<strong data-field="resolved">{total}</strong> of' in html
    assert '<strong data-field="pending">0</strong> pending' in html
    assert "Every disagreement of this session is resolved." in html
    assert Adjudication.objects.count() == total


def test_a_closed_session_shows_no_forms(grading_world):
    artefact = artefacts(grading_world)[0]
    grade_apart(artefact)
    session_close(actor=grading_world.owner, session=grading_world.session)
    client = browser(grading_world.adjudicator)
    html = client.get(item_url(grading_world, artefact)).content.decode()
    assert "The session is closed" in html and CHOICES not in html
    assert post(client, grading_world, artefact, "s1", "relevant", "N").status_code == 409
    assert not Adjudication.objects.exists()


@pytest.mark.django_db
def test_the_pages_reveal_no_provenance():
    world = make_world(include_baselines=True)
    baseline = world.session.artefacts.filter(kind="baseline").first()
    output = world.session.artefacts.filter(kind="output").first()
    assert baseline is not None and output is not None
    grade_apart(baseline)
    grade_apart(output)
    client = browser(world.adjudicator)
    pages = [client.get(queue_url(world))] + [
        client.get(item_url(world, a)) for a in (baseline, output)
    ]
    for response in pages:
        assert response.status_code == 200
        html = response.content.decode().lower()
        for text in world.provenance:
            assert text.lower() not in html, text
        for artefact in (baseline, output):
            assert artefact.stratum.lower() not in html
            assert f"/runs/{artefact.output_id}" not in html
        for grader in world.graders:
            assert grader.get_username() not in html


def test_model_text_is_escaped(grading_world, triggers_lifted):
    artefact = artefacts(grading_world)[0]
    # Units are immutable (audit/db_guards.py): plant the hostile text as a migration would.
    with triggers_lifted("runs_unit"):
        Unit.objects.filter(output=artefact.output, key="s1").update(
            text='Revenue <script>alert("x")</script> rose.'
        )
    grade_apart(artefact)
    html = browser(grading_world.adjudicator).get(item_url(grading_world, artefact)).content
    assert b'<script>alert("x")</script>' not in html
    assert b"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html


def test_the_pages_make_a_flat_number_of_queries(grading_world):
    world = grading_world
    client = browser(world.adjudicator)
    grade_apart(artefacts(world)[0])
    with CaptureQueriesContext(connection) as one:
        assert client.get(queue_url(world)).status_code == 200
    with CaptureQueriesContext(connection) as item_of_one:
        assert client.get(item_url(world, artefacts(world)[0])).status_code == 200
    for artefact in artefacts(world)[1:]:
        grade_apart(artefact)
    assert len(adjudication_queue(session=world.session)) == 8
    with CaptureQueriesContext(connection) as eight:
        assert client.get(queue_url(world)).status_code == 200
    assert len(eight) == len(one)
    with CaptureQueriesContext(connection) as item:
        assert client.get(item_url(world, artefacts(world)[0])).status_code == 200
    assert len(item) == len(item_of_one)
    # The artefact's own disputes read as the queue does, plus 4 for the previous/next links.
    assert len(item) <= len(one) + 1 + 4
