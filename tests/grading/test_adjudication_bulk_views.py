"""The artefact's one adjudication page: one POST for its fields, take a grader's values, the
adjudications file downloaded and uploaded with a line-by-line report."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from demo.testing.grading import grade_apart
from grading.adjudication_io import dump_line
from grading.models import Adjudication


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def args(world) -> list[str]:
    return [world.use_case.key, world.session.public_id]


def item_url(world, artefact) -> str:
    return reverse("grading-adjudication-item", args=[*args(world), artefact.public_id])


def ordered(world):
    return list(world.session.artefacts.order_by("public_id"))


def finals(artefact) -> dict[tuple[str, str], str]:
    return {(a.unit_key, a.field): a.value for a in Adjudication.objects.filter(artefact=artefact)}


def test_the_page_shows_every_disputed_field_with_each_graders_value_and_the_keys(grading_world):
    artefact = ordered(grading_world)[0]
    grade_apart(artefact)
    html = (
        browser(grading_world.adjudicator).get(item_url(grading_world, artefact)).content.decode()
    )
    assert html.count('class="card dispute is-pending"') == 5
    assert (
        'name="s1|relevant" value="N" data-letter="b"> <kbd>b</kbd> No '
        '<span class="badge">Grader 2</span>' in html
    )
    assert 'data-grader="2" data-value="">Grader 2: <strong>not asked</strong>' in html
    assert 'data-take="1">Take Grader 1\'s value <kbd>1</kbd>' in html
    assert 'name="take" value="2"' in html
    assert 'id="adj-help"' in html and "every remaining field without a choice" in html
    assert "grading/adjudication.js" in html


def test_one_post_records_the_chosen_fields_and_stays_while_some_are_pending(grading_world):
    artefact = ordered(grading_world)[0]
    grade_apart(artefact)
    client = browser(grading_world.adjudicator)
    response = client.post(
        item_url(grading_world, artefact),
        {"s1|relevant": "N", "s1|relevant|note": "restates s2", "artefact|value_add": "1"},
    )
    assert response.status_code == 302
    assert response["Location"] == item_url(grading_world, artefact)
    assert finals(artefact) == {("s1", "relevant"): "N", ("artefact", "value_add"): "1"}
    assert Adjudication.objects.get(unit_key="s1").note == "restates s2"


def test_a_refused_field_records_nothing(grading_world):
    artefact = ordered(grading_world)[0]
    grade_apart(artefact)
    response = browser(grading_world.adjudicator).post(
        item_url(grading_world, artefact),
        {"s1|relevant": "N", "s1|assertive": "Y", "artefact|value_add": "7"},
    )
    assert response.status_code == 409  # the first refusal: the graders agree on s1 assertive
    html = response.content.decode()
    assert "Not recorded:" in html and "Also:" in html
    assert not Adjudication.objects.exists()


def test_take_records_a_graders_value_for_every_other_field_then_moves_on(grading_world):
    first, second = ordered(grading_world)[:2]
    grade_apart(first)
    grade_apart(second)
    client = browser(grading_world.adjudicator)
    response = client.post(
        item_url(grading_world, first), {"s2|assertive": "Y", "s2|supported": "not", "take": "2"}
    )
    assert response.status_code == 302
    assert response["Location"] == item_url(grading_world, second)
    assert finals(first)[("s2", "supported")] == "not"
    assert finals(first)[("s1", "relevant")] == "N"
    page = client.get(response["Location"]).content.decode()
    assert "here is the next one with a disagreement" in page
    assert f'href="{item_url(grading_world, first)}" rel="prev"' in page
    # Grader 2 calls s2 not assertive: taking Grader 2 closes s2 supported, no longer asked.
    response = client.post(item_url(grading_world, second), {"take": "2"})
    queue = reverse("grading-adjudication-queue", args=args(grading_world))
    assert response["Location"] == queue
    page = client.get(queue).content.decode()
    assert "No longer asked, given the final values: s2 supported." in page
    assert "Every disagreement of this session is resolved." in page


def test_the_queue_links_the_file_out_and_in_and_the_next_artefact(grading_world):
    artefact = ordered(grading_world)[0]
    grade_apart(artefact)
    queue = reverse("grading-adjudication-queue", args=args(grading_world))
    html = browser(grading_world.adjudicator).get(queue).content.decode()
    assert reverse("grading-adjudication-export", args=args(grading_world)) in html
    assert reverse("grading-adjudication-import", args=args(grading_world)) in html
    assert f'href="{item_url(grading_world, artefact)}" id="adjudicate-next"' in html
    owner = browser(grading_world.owner).get(queue).content.decode()
    assert reverse("grading-adjudication-import", args=args(grading_world)) not in owner


def test_the_upload_page_reports_every_bad_line_and_imports_a_good_file(grading_world):
    artefact = ordered(grading_world)[0]
    grade_apart(artefact)
    client = browser(grading_world.adjudicator)
    exported = client.get(reverse("grading-adjudication-export", args=args(grading_world)))
    assert exported.status_code == 200
    assert "attachment" in exported["Content-Disposition"]
    lines = [json.loads(raw) for raw in b"".join(exported.streaming_content).splitlines()]
    lines[1]["value"] = "perhaps"
    lines.append(dict(lines[0]))
    url = reverse("grading-adjudication-import", args=args(grading_world))
    assert client.get(url).status_code == 200
    upload = SimpleUploadedFile("adj.jsonl", b"".join(dump_line(line) for line in lines))
    response = client.post(url, {"file": upload})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="adjudications-file-report"' in html and "Nothing was imported" in html
    assert "<td>2</td>" in html and "value must be one of" in html
    assert "<td>6</td>" in html and "duplicate: line 1" in html
    assert not Adjudication.objects.exists()
    for line in lines[:5]:
        line["value"] = line["choices"][0]
    upload = SimpleUploadedFile("adj.jsonl", b"".join(dump_line(line) for line in lines[:5]))
    response = client.post(url, {"file": upload})
    assert response.status_code == 302
    assert (
        "5 final value(s) recorded on 1 artefact(s)"
        in client.get(response["Location"]).content.decode()
    )
    assert len(finals(artefact)) == 5


def test_only_the_named_adjudicator_uploads(grading_world):
    url = reverse("grading-adjudication-import", args=args(grading_world))
    for user in (grading_world.owner, grading_world.reviewer, grading_world.graders[0]):
        assert browser(user).get(url).status_code == 403
    assert browser(grading_world.outsider).get(url).status_code == 404


def test_the_page_offers_s2_supported_only_while_s2_assertive_may_ask_it(grading_world):
    first, second = ordered(grading_world)[:2]
    grade_apart(first)
    grade_apart(second)
    client = browser(grading_world.adjudicator)
    html = client.get(item_url(grading_world, first)).content.decode()
    assert (
        'data-unit="s2" data-field="supported" data-depends-on="assertive" data-asked-when="Y"'
        in html
    )
    assert "Asked only if s2 assertive is Y" in html
    # Chosen together, contradicting each other: refused, nothing recorded, the reason shown.
    refused = client.post(
        item_url(grading_world, first), {"s2|assertive": "N", "s2|supported": "fully"}
    )
    assert refused.status_code == 409
    assert "s2 supported is not asked once s2 assertive is" in refused.content.decode()
    assert not finals(first)
    # Not assertive, chosen alone: s2 supported is closed and gone from the page.
    response = client.post(item_url(grading_world, first), {"s2|assertive": "N"})
    assert response["Location"] == item_url(grading_world, first)
    html = client.get(response["Location"]).content.decode()
    assert "No longer asked, given the final values: s2 supported." in html
    assert 'data-field="supported"' not in html
    assert html.count('class="card dispute is-pending"') == 3
