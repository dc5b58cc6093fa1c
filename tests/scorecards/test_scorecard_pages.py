"""The scorecard page, PDF, GRC export and evidence pack, as each kind of user reaches them."""

from __future__ import annotations

import io
import json
import re
import zipfile
from html import unescape
from pathlib import Path

import jsonschema
import pytest
from django.test import Client
from pypdf import PdfReader

from audit.canonical import canonical_json, sha256_hex
from demo.testing.decisions import load_example_estimates
from demo.testing.grading import make_world
from demo.testing.scorecards import (
    COMMITTEE_FIELDS,
    draft_scorecard,
    final_scorecard,
    recorded_decision,
)
from metrics.estimate import MetricEstimate
from scorecards.evidence import evidence_verify
from scorecards.fields import TABLE_11
from scorecards.models import Scorecard, ScorecardStatus

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "scorecards" / "export_schema.json").read_text()
)


@pytest.fixture
def world(db):
    return make_world()


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_url(scorecard: Scorecard, suffix: str = "") -> str:
    return f"/use-cases/{scorecard.use_case.key}/scorecards/{scorecard.pk}/{suffix}"


def api_url(scorecard: Scorecard, suffix: str = "") -> str:
    return f"/api/v1/use-cases/{scorecard.use_case.key}/scorecards/{scorecard.pk}/{suffix}"


def pdf_text(data: bytes) -> tuple[PdfReader, list[str]]:
    reader = PdfReader(io.BytesIO(data))
    return reader, [page.extract_text() or "" for page in reader.pages]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_pdf_holds_every_table_11_field_and_the_hash_and_page_number_on_every_page(world):
    scorecard = final_scorecard(world)
    response = client_for(world.reviewer).get(page_url(scorecard, "scorecard.pdf"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    reader, pages = pdf_text(response.content)
    whole = flat(" ".join(pages))
    for number, (_key, label) in enumerate(TABLE_11, 1):
        assert f"{number}. {label}" in whole, label
    assert len(pages) >= 3
    for index, text in enumerate(pages, 1):
        assert scorecard.sha256 in flat(text).replace(" ", ""), f"page {index} has no hash"
        assert f"page {index} of {len(pages)}" in text
    # The summary comes first, on a page of its own.
    assert "Three things the committee must know" in pages[0]
    assert "Use case ID; business owner" not in pages[0]
    # Tagged (accessible) PDF with real text.
    assert "/StructTreeRoot" in reader.trailer["/Root"]
    assert "Reject" in pages[0] and "Guidance recall" in pages[0]
    # The appendix prints the packs and versions it used.
    assert "Appendix: governance mapping" in whole
    squeezed = whole.replace(" ", "")
    assert len(scorecard.content["packs"]) == 6
    for pack in scorecard.content["packs"]:
        assert f"pack{pack['id']}version{pack['version']}" in squeezed


def test_the_page_shows_the_same_content_and_model_output_is_escaped(world):
    scorecard = draft_scorecard(
        world, failure_modes="<script>window.__x=1</script><img src=x onerror=alert(1)>"
    )
    response = client_for(world.owner).get(page_url(scorecard))
    assert response.status_code == 200
    body = response.content.decode()
    for number, (_key, label) in enumerate(TABLE_11, 1):
        assert f"{number}. {label}".replace("&", "&amp;").replace("'", "&#x27;") in body
    assert "<script>window.__x" not in body
    assert "&lt;script&gt;window.__x=1&lt;/script&gt;" in body
    assert "mandatory fields missing" in body
    assert "no conditions of use recorded" in body


def test_graders_get_403_and_outsiders_404(world):
    scorecard = final_scorecard(world)
    for suffix in ("", "scorecard.pdf", "evidence.zip"):
        assert client_for(world.graders[0]).get(page_url(scorecard, suffix)).status_code == 403
        assert client_for(world.outsider).get(page_url(scorecard, suffix)).status_code == 404
    assert client_for(world.graders[0]).get(api_url(scorecard)).status_code == 403
    assert client_for(world.outsider).get(api_url(scorecard)).status_code == 404


def test_drafting_filling_in_and_signing_off_through_the_pages(world):
    from demo.testing.scorecards import recorded_decision

    decision = recorded_decision(world)
    owner = client_for(world.owner)
    response = owner.post(f"/use-cases/{world.use_case.key}/decisions/{decision.pk}/scorecard/")
    scorecard = Scorecard.objects.get(decision=decision)
    assert response.status_code == 302 and response["Location"] == page_url(scorecard)
    response = owner.post(
        page_url(scorecard, "edit/"), {**COMMITTEE_FIELDS, "next_review_date": "2027-05-01"}
    )
    assert response.status_code == 302
    # The charter owner may not sign off; the reviewer may.
    assert owner.post(page_url(scorecard, "sign-off/")).status_code == 403
    response = client_for(world.reviewer).post(page_url(scorecard, "sign-off/"))
    assert response.status_code == 302
    scorecard.refresh_from_db()
    assert scorecard.status == ScorecardStatus.FINAL
    assert scorecard.content["monitoring"]["next_review_date"] == "2027-05-01"
    # Once final, the edit form is gone and an edit is refused with 409.
    page = owner.get(page_url(scorecard)).content.decode()
    assert 'name="conditions_of_use"' not in page
    response = owner.post(page_url(scorecard, "edit/"), {"conditions_of_use": "None."})
    assert response.status_code == 409
    assert "is final" in response.content.decode()


def committee_form(html: str) -> dict[str, str]:
    """Return what the committee form would post as the page shows it (textareas, inputs)."""
    form = re.search(r'<form method="post" action="[^"]*/edit/">(.*?)</form>', html, re.S)[1]
    fields = {
        name: unescape(text)
        for name, text in re.findall(
            r'<textarea[^>]*name="(\w+)"[^>]*>(.*?)</textarea>', form, re.S
        )
    }
    for tag in re.findall(r"<input[^>]*>", form):
        name, value = re.search(r'name="(\w+)"', tag), re.search(r'value="([^"]*)"', tag)
        if name and name[1] != "csrfmiddlewaretoken":
            fields[name[1]] = unescape(value[1]) if value else ""
    return fields


def test_saving_the_untouched_committee_form_keeps_the_charters_triggers(world):
    scorecard = draft_scorecard(world)
    triggers = list(scorecard.decision.charter.reevaluation_triggers)
    assert len(triggers) >= 2
    owner = client_for(world.owner)
    fields = committee_form(owner.get(page_url(scorecard)).content.decode())
    assert fields["reevaluation_triggers"].splitlines() == triggers
    assert owner.post(page_url(scorecard, "edit/"), fields).status_code == 302
    scorecard.refresh_from_db()
    assert scorecard.reevaluation_triggers == triggers
    exported = owner.get(api_url(scorecard)).json()
    assert exported["content"]["monitoring"]["triggers"] == triggers
    assert "{{" not in json.dumps(exported)


def test_bad_input_on_the_edit_page_names_the_field(world):
    scorecard = draft_scorecard(world)
    response = client_for(world.owner).post(
        page_url(scorecard, "edit/"), {"next_review_date": "soon"}
    )
    assert response.status_code == 400
    assert "next_review_date: &#x27;soon&#x27; is not a date" in response.content.decode()


def test_the_grc_export_matches_its_documented_schema_and_its_hash_is_recomputable(world):
    scorecard = final_scorecard(world)
    response = client_for(world.reviewer).get(api_url(scorecard))
    assert response.status_code == 200
    data = response.json()
    jsonschema.validate(data, SCHEMA)
    assert data["state"] == "final"
    assert data["sha256"] == scorecard.sha256 == sha256_hex(canonical_json(data["content"]))
    assert data["links"]["pdf"] == page_url(scorecard, "scorecard.pdf")


def test_a_draft_export_also_matches_the_schema_and_lists_what_is_missing(world):
    scorecard = draft_scorecard(world)
    data = client_for(world.owner).get(api_url(scorecard)).json()
    jsonschema.validate(data, SCHEMA)
    assert data["state"] == "draft"
    assert [row["why"] for row in data["missing"]] == [
        "no failure modes recorded",
        "no conditions of use recorded",
        "no compensating controls recorded",
    ]


def test_the_api_drafts_edits_and_signs_off_and_then_refuses_edits(world):
    from demo.testing.scorecards import recorded_decision

    decision = recorded_decision(world)
    owner = client_for(world.owner)
    base = f"/api/v1/use-cases/{world.use_case.key}/scorecards/"
    created = owner.post(base, {"decision": decision.pk}, content_type="application/json")
    assert created.status_code == 201
    scorecard = Scorecard.objects.get(pk=created.json()["id"])
    again = owner.post(base, {"decision": decision.pk}, content_type="application/json")
    assert again.status_code == 409
    patched = owner.patch(api_url(scorecard), COMMITTEE_FIELDS, content_type="application/json")
    assert patched.status_code == 200 and patched.json()["missing"] == []
    assert owner.post(api_url(scorecard, "sign-off/")).status_code == 403
    signed = client_for(world.reviewer).post(api_url(scorecard, "sign-off/"))
    assert signed.status_code == 200 and signed.json()["state"] == "final"
    refused = owner.patch(
        api_url(scorecard), {"conditions_of_use": "None."}, content_type="application/json"
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "immutable"
    scorecard.refresh_from_db()
    assert scorecard.conditions_of_use == COMMITTEE_FIELDS["conditions_of_use"]


def test_the_admin_shows_a_final_scorecard_but_cannot_change_it(world, django_user_model):
    scorecard = final_scorecard(world)
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root")
    client = client_for(admin)
    url = f"/admin/scorecards/scorecard/{scorecard.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="conditions_of_use"' not in page.content.decode()
    response = client.post(url, {"conditions_of_use": "None.", "status": "draft"})
    assert response.status_code == 403
    assert (
        client.post(
            f"/admin/scorecards/scorecard/{scorecard.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    scorecard.refresh_from_db()
    assert scorecard.status == ScorecardStatus.FINAL
    assert scorecard.conditions_of_use == COMMITTEE_FIELDS["conditions_of_use"]


def test_the_evidence_pack_holds_the_pdf_and_content_and_fails_on_one_changed_byte(world):
    scorecard = final_scorecard(world)
    response = client_for(world.reviewer).get(page_url(scorecard, "evidence.zip"))
    assert response.status_code == 200
    data = response.content
    assert evidence_verify(data).ok
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        content = json.loads(archive.read("scorecard.json"))
        pdf = archive.read("scorecard.pdf")
        audit = [json.loads(line) for line in archive.read("audit.jsonl").splitlines()]
    assert {"scorecard.pdf", "scorecard.json", "decision.json", "manifest.json"} <= names
    assert content["sha256"] == scorecard.sha256 and content["content"] == scorecard.content
    assert pdf.startswith(b"%PDF")
    assert audit[-1]["action"] == "scorecard.sign_off"
    # One byte changed inside the PDF member: the pack no longer verifies.
    members = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in archive.namelist():
            members[name] = archive.read(name)
    changed = bytearray(members["scorecard.pdf"])
    changed[len(changed) // 2] ^= 0x01
    members["scorecard.pdf"] = bytes(changed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, member in members.items():
            archive.writestr(name, member)
    result = evidence_verify(buffer.getvalue())
    assert not result.ok
    assert "scorecard.pdf" in result.reason


def test_the_list_page_shows_each_scorecards_state(world):
    final = final_scorecard(world)
    response = client_for(world.owner).get(f"/use-cases/{world.use_case.key}/scorecards/")
    body = response.content.decode()
    assert response.status_code == 200
    assert page_url(final) in body
    assert ">final<" in body


def test_the_evidence_pack_command_writes_a_scorecards_pack_that_verifies(world, tmp_path):
    from django.core.management import call_command

    scorecard = final_scorecard(world)
    out = tmp_path / "pack.zip"
    call_command(
        "evidence_pack",
        scorecard=scorecard.pk,
        out=str(out),
        actor="demo-reviewer",
        stdout=io.StringIO(),
    )
    assert evidence_verify(out.read_bytes()).ok
    with zipfile.ZipFile(out) as archive:
        assert "scorecard.pdf" in archive.namelist()


def test_the_signed_pdf_is_kept_and_served_as_signed_until_the_scorecard_goes_stale(world):
    import hashlib

    from audit.models import AuditEntry
    from scorecards.reevaluation import reevaluation_flag_raise

    scorecard = final_scorecard(world)
    stored = bytes(Scorecard.objects.values_list("pdf", flat=True).get(pk=scorecard.pk))
    assert hashlib.sha256(stored).hexdigest() == scorecard.pdf_sha256
    entry = AuditEntry.objects.get(action="scorecard.sign_off")
    assert entry.payload["pdf_sha256"] == scorecard.pdf_sha256
    client = client_for(world.reviewer)
    assert client.get(page_url(scorecard, "scorecard.pdf")).content == stored
    pack = client.get(page_url(scorecard, "evidence.zip")).content
    with zipfile.ZipFile(io.BytesIO(pack)) as archive:
        assert archive.read("scorecard.pdf") == stored
    # Stale: the PDF is rendered again and says why, first thing.
    reevaluation_flag_raise(
        scorecard=scorecard,
        kind="review_date",
        source="review_date:2027-03-31",
        reason="Next review date 2027-03-31 passed",
        actor=None,
    )
    fresh = client.get(page_url(scorecard, "scorecard.pdf")).content
    assert fresh != stored
    _reader, pages = pdf_text(fresh)
    assert "Re-evaluation required" in pages[0]
    assert "Next review date 2027-03-31 passed" in flat(pages[0])
    assert "re-evaluation required" in pages[0]


def test_every_amount_carries_the_charters_currency_in_the_page_pdf_and_export(world):
    scorecard = final_scorecard(world)
    value = scorecard.content["value"]
    assert value["currency"] == "GBP" and value["v_annual"] is not None
    point = f"GBP {value['v_annual']['point']:,.0f}"
    page = flat(client_for(world.reviewer).get(page_url(scorecard)).content.decode())
    assert 'Currency (ISO 4217): <strong class="mono">GBP</strong>' in page
    assert re.search(r"V_annual <strong>GBP -?[\d,]+</strong> per year", page)
    assert "charter: 95 GBP per hour" in page
    _reader, pages = pdf_text(
        client_for(world.reviewer).get(page_url(scorecard, "scorecard.pdf")).content
    )
    whole = flat(" ".join(pages))
    assert "GBP" in whole and f"V_annual is {point} per year" in whole
    data = client_for(world.reviewer).get(api_url(scorecard)).json()
    assert data["content"]["value"]["currency"] == "GBP"


def test_a_cost_carries_its_currency_and_significant_digits_in_the_page_pdf_and_export(world):
    cost = MetricEstimate(
        metric_id="cost_per_successful_task",
        point=0.000864,
        lo=0.000712,
        hi=0.00102,
        confidence=0.95,
        n=65,
        n_clusters=65,
        mode="A",
        estimator="total cost / successful tasks",
    )
    decision = recorded_decision(world, estimates=[*load_example_estimates("gemini-2.5"), cost])
    scorecard = final_scorecard(world, decision)
    page = flat(client_for(world.reviewer).get(page_url(scorecard)).content.decode())
    assert "<td>USD 0.000864</td><td>[USD 0.000712, USD 0.00102]</td>" in page
    _reader, pages = pdf_text(
        client_for(world.reviewer).get(page_url(scorecard, "scorecard.pdf")).content
    )
    whole = flat(" ".join(pages))
    assert "USD 0.000864 [USD 0.000712, USD 0.00102]" in whole
    data = client_for(world.reviewer).get(api_url(scorecard)).json()
    jsonschema.validate(data, SCHEMA)
    rows = {row["id"]: row for row in data["content"]["informational_metrics"]}
    assert rows["cost_per_successful_task"]["currency"] == "USD"
    assert rows["cost_per_successful_task"]["point"] == 0.000864
    assert rows["cost_per_successful_task"]["ci"] == [0.000712, 0.00102]
    assert {row["currency"] for row in data["content"]["gated_metrics"]} == {None}
