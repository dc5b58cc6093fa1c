"""Charter pages: the charter, the editor and its live validation, upload, signing, revision."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from charters.charter_document import document_from_text
from charters.models import Charter, Deviation, Role, Signature, UnblindingEvent
from charters.services.charters import (
    charter_create,
    charter_revise,
    charter_sign,
    use_case_unblind,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"
MEMBERS = ("owner", "model_owner", "adjudicator", "reviewer")
NOT_OWNERS = ("model_owner", "grader", "adjudicator", "reviewer")
KEY = "CREDIT-MEMO-B"


def client_for(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def url(name: str, **kwargs) -> str:
    return reverse(name, kwargs={"key": KEY, **kwargs})


@pytest.fixture
def document() -> dict:
    return document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")


@pytest.fixture
def draft(personas, document) -> Charter:
    return charter_create(actor=personas.owner, use_case=personas.use_case, document=document)


def sign_all(personas, charter: Charter) -> Charter:
    for user, role in (
        (personas.owner, Role.CHARTER_OWNER),
        (personas.model_owner, Role.MODEL_OWNER),
        (personas.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=charter, role=role)
    charter.refresh_from_db()
    return charter


@pytest.fixture
def signed(personas, draft) -> Charter:
    return sign_all(personas, draft)


def editor_form(document: dict, **overrides) -> dict:
    """Return the editor's POST data for ``document`` (every catalogue row, as the page sends)."""
    from charters.catalogue import catalogue

    data: dict = {"metric": list(catalogue())}
    for metric in document["metrics"]:
        for name in (
            "treatment",
            "theta_out",
            "theta_in",
            "weight",
            "harm_statement",
            "planned_n",
            "reason",
        ):
            value = metric.get(name)
            data[f"{name}-{metric['id']}"] = "" if value is None else str(value)
    for name in (
        "nu_max",
        "confidence",
        "kappa_target",
        "repeats_k",
        "baseline",
        "measurement_mode",
        "next_review_date",
    ):
        data[name] = str(document.get(name) or "")
    data["reevaluation_triggers"] = "\n".join(document["reevaluation_triggers"])
    data["alternative_weights"] = (
        "fidelity_heavy: {hallucination_rate: 0.3, citation_precision_lenient: 0.25}"
    )
    data["value_inputs"] = (
        "currency: GBP\ntasks_per_year: 2600\nhourly_cost: 95\nt_manual: 3\nt_gen: 0.05\n"
        "t_review: 1\ninference_cost_per_task: 0.4\n"
    )
    return data | overrides


# --------------------------------------------------------------------------- permissions


@pytest.mark.parametrize("name", ["charter-detail", "charter-edit", "charter-revise"])
def test_anonymous_visitors_are_sent_to_sign_in(personas, draft, name):
    response = client_for().get(url(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_anonymous_posts_are_sent_to_sign_in(personas, draft):
    for name, kwargs in (
        ("charter-validate", {}),
        ("charter-sign", {"version": 1}),
        ("charter-unblind", {}),
        ("charter-upload", {}),
    ):
        response = client_for().post(url(name, **kwargs), {})
        assert response.status_code == 302, name


@pytest.mark.parametrize(
    ("name", "kwargs", "method"),
    [
        ("charter-detail", {}, "get"),
        ("charter-version", {"version": 1}, "get"),
        ("charter-edit", {}, "get"),
        ("charter-validate", {}, "post"),
        ("charter-upload", {}, "post"),
        ("charter-sign", {"version": 1}, "get"),
        ("charter-deviation", {"version": 1}, "post"),
        ("charter-revise", {}, "get"),
        ("charter-unblind", {}, "post"),
    ],
)
def test_an_outsider_gets_404_on_every_charter_page(personas, draft, name, kwargs, method):
    response = getattr(client_for(personas.outsider), method)(url(name, **kwargs))
    assert response.status_code == 404


@pytest.mark.parametrize("name", MEMBERS)
def test_every_member_sees_the_charter_page(personas, draft, name):
    response = client_for(personas.by_name(name)).get(url("charter-detail"))
    assert response.status_code == 200
    assert "Charter v1" in response.content.decode()


@pytest.mark.parametrize("name", NOT_OWNERS)
def test_only_the_charter_owner_reaches_the_editor_upload_revise_and_deviation(
    personas, draft, name
):
    client = client_for(personas.by_name(name))
    assert client.get(url("charter-edit")).status_code == 403
    assert client.post(url("charter-validate"), {}).status_code == 403
    assert client.post(url("charter-upload"), {}).status_code == 403
    assert client.get(url("charter-revise")).status_code == 403
    assert client.post(url("charter-deviation", version=1), {"reason": "x"}).status_code == 403


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("owner", 200),
        ("model_owner", 200),
        ("reviewer", 200),
        ("grader", 403),
        ("adjudicator", 403),
    ],
)
def test_the_signing_page_is_for_the_three_signing_roles(personas, draft, name, status):
    assert (
        client_for(personas.by_name(name)).get(url("charter-sign", version=1)).status_code == status
    )


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("owner", True),
        ("reviewer", True),
        ("model_owner", False),
        ("grader", False),
        ("adjudicator", False),
    ],
)
def test_unblinding_from_the_page_is_for_the_charter_owner_and_the_reviewer(
    personas, signed, name, allowed
):
    response = client_for(personas.by_name(name)).post(
        url("charter-unblind"), {"reason": "committee pack"}
    )
    assert response.status_code == (302 if allowed else 403)
    assert UnblindingEvent.objects.count() == (1 if allowed else 0)


# --------------------------------------------------------------------------- charter page


def test_the_charter_page_without_a_charter_invites_the_owner_to_write_it(personas):
    owner_page = client_for(personas.owner).get(url("charter-detail")).content.decode()
    assert "Write the charter" in owner_page
    other_page = client_for(personas.adjudicator).get(url("charter-detail")).content.decode()
    assert "Write the charter" not in other_page and "charter owner writes it" in other_page


def test_the_charter_page_shows_status_hash_metrics_and_deviations(personas, signed):
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    charter_revise(actor=personas.owner, charter=signed, reason="Grade more guidance items.")
    page = client_for(personas.adjudicator).get(url("charter-version", version=1)).content.decode()
    assert "signed" in page and signed.sha256 in page
    assert "superseded by v2" in page
    assert "Irrelevance rate" in page and "0.1667" in page
    assert "v1 → v2" in page and "Grade more guidance items." in page
    assert "Results were first shown" in page


def test_user_text_is_escaped_on_the_charter_page(personas, document):
    document["metrics"][0]["harm_statement"] = "<script>alert(1)</script>"
    charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    page = client_for(personas.owner).get(url("charter-detail")).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_charter_page_has_a_flat_query_count(personas, signed, django_assert_num_queries):
    client = client_for(personas.reviewer)
    # session, user, use case, membership (use_case_for), charters, signatures, metrics,
    # first unblinding, roles.
    with django_assert_num_queries(10):
        assert client.get(url("charter-detail")).status_code == 200
    revision = charter_revise(actor=personas.owner, charter=signed, reason="")
    charter_sign(actor=personas.owner, charter=revision, role=Role.CHARTER_OWNER)
    with django_assert_num_queries(10):
        assert client.get(url("charter-detail")).status_code == 200


# --------------------------------------------------------------------------- editor


def test_the_editor_has_one_row_per_catalogue_metric_and_live_validation(personas, draft):
    page = client_for(personas.owner).get(url("charter-edit")).content.decode()
    assert page.count('name="metric"') == 23
    assert f'data-live-validate="{url("charter-validate")}"' in page
    assert 'data-live-target="#validation-panel"' in page
    assert "<script>" not in page.split("</head>")[1]  # no inline script (CSP)


def test_live_validation_returns_the_panel_for_the_printed_irrelevance_pair(
    personas, draft, document
):
    data = editor_form(document, **{"theta_in-irrelevance_rate": "55"})
    response = client_for(personas.owner).post(url("charter-validate"), data)
    assert response.status_code == 200
    fragment = response.content.decode()
    assert "<html" not in fragment
    assert "irrelevance_rate: inverted pair" in fragment
    assert "Normalised gate weights" in fragment and "0.1667" in fragment
    assert "E2: human grading" in fragment
    assert Charter.objects.get().metrics.get(metric_id="irrelevance_rate").theta_in == 45


def row_of(page: str, metric_id: str) -> str:
    """Return the editor's table row of ``metric_id``."""
    return page.split(f'name="metric" value="{metric_id}"', 1)[1].split("</tr>", 1)[0]


def test_the_editor_shows_an_inverted_pair_on_its_metrics_row_and_in_the_summary(
    personas, draft, document
):
    owner = client_for(personas.owner)
    data = editor_form(document, **{"theta_in-irrelevance_rate": "55"})
    response = owner.post(url("charter-edit"), data)
    page = owner.get(url("charter-edit")) if response.status_code == 302 else response
    page = page.content.decode()
    row = row_of(page, "irrelevance_rate")
    assert 'data-row-issues="irrelevance_rate"' in row
    assert '<li class="error"><strong>error</strong> irrelevance_rate: inverted pair' in row
    assert "inverted pair" not in row_of(page, "hallucination_rate")
    panel = page.split('id="validation-panel"', 1)[1]
    assert "irrelevance_rate: inverted pair" in panel


def test_live_validation_returns_each_metrics_issues_for_its_row(personas, draft, document):
    data = editor_form(document, **{"theta_in-irrelevance_rate": "55"})
    fragment = client_for(personas.owner).post(url("charter-validate"), data).content.decode()
    rows = fragment.split("<div hidden>", 1)[1].split("</div>", 1)[0]
    listed = rows.split('<ul data-issues-of="irrelevance_rate">', 1)[1].split("</ul>", 1)[0]
    assert "irrelevance_rate: inverted pair" in listed


def test_live_validation_shows_the_sample_size_that_would_suffice(personas, draft, document):
    data = editor_form(document, **{"planned_n-irrelevance_rate": "200"})
    fragment = client_for(personas.owner).post(url("charter-validate"), data).content.decode()
    assert "about n = 381 units would suffice" in fragment


def test_saving_the_editor_updates_the_draft(personas, draft, document):
    data = editor_form(document, **{"theta_in-hallucination_rate": "4", "nu_max": "2.5"})
    response = client_for(personas.owner).post(url("charter-edit"), data)
    assert response.status_code == 302
    assert response["Location"] == url("charter-version", version=1)
    charter = Charter.objects.get()
    assert charter.nu_max == 2.5
    assert charter.metrics.get(metric_id="hallucination_rate").theta_in == 4
    assert charter.metrics.count() == 13


def test_the_editor_asks_the_optional_rubric_fields_by_checkbox(personas, draft, document):
    page = client_for(personas.owner).get(url("charter-edit")).content.decode()
    assert 'name="rubric_field_label_correct"' in page and 'name="rubric_field_acceptable"' in page
    data = editor_form(document, rubric_field_acceptable="on")
    response = client_for(personas.owner).post(url("charter-edit"), data)
    assert response.status_code == 302
    assert Charter.objects.get().rubric_fields == ["acceptable"]
    again = client_for(personas.owner).get(url("charter-edit")).content.decode()
    assert re.search(r'name="rubric_field_acceptable"\s+checked', again)
    assert not re.search(r'name="rubric_field_label_correct"\s+checked', again)
    detail = client_for(personas.owner).get(url("charter-version", version=1)).content.decode()
    assert '<span class="mono">acceptable</span>' in detail


def test_the_editor_creates_v1_when_there_is_no_charter(personas, document):
    response = client_for(personas.owner).post(url("charter-edit"), editor_form(document))
    assert response.status_code == 302
    assert Charter.objects.get().version == 1


def test_unreadable_editor_input_is_not_saved_and_is_shown(personas, draft, document):
    data = editor_form(document, **{"theta_out-hallucination_rate": "ten"})
    response = client_for(personas.owner).post(url("charter-edit"), data)
    assert response.status_code == 400
    assert "expected a number, got &#x27;ten&#x27;" in response.content.decode()
    assert Charter.objects.get().metrics.get(metric_id="hallucination_rate").theta_out == 10


def test_the_editor_of_a_signed_charter_sends_the_owner_to_revise(personas, signed):
    response = client_for(personas.owner).get(url("charter-edit"))
    assert response.status_code == 302 and response["Location"] == url("charter-revise")


def test_uploading_the_example_file_creates_the_draft(personas):
    upload = SimpleUploadedFile("charter.yaml", EXAMPLE.read_bytes(), "application/yaml")
    response = client_for(personas.owner).post(url("charter-upload"), {"file": upload})
    assert response.status_code == 302
    charter = Charter.objects.get()
    assert charter.metrics.count() == 13 and charter.next_review_date.year == 2027


def test_a_bad_upload_names_the_file_line_and_field(personas, draft):
    upload = SimpleUploadedFile("bad.yaml", b"metrics: []\nnu_max: three\n", "application/yaml")
    response = client_for(personas.owner).post(url("charter-upload"), {"file": upload})
    assert response.status_code == 400
    assert (
        "bad.yaml, line 2, nu_max: expected a number, got &#x27;three&#x27;"
        in response.content.decode()
    )


# --------------------------------------------------------------------------- signing, revising


def test_signing_from_the_page_and_the_third_signature_freezes(personas, draft):
    for name, role in (
        ("owner", "charter_owner"),
        ("model_owner", "model_owner"),
        ("reviewer", "reviewer"),
    ):
        response = client_for(personas.by_name(name)).post(
            url("charter-sign", version=1), {"role": role}
        )
        assert response.status_code == 302
    charter = Charter.objects.get()
    assert charter.is_frozen and Signature.objects.count() == 3
    page = client_for(personas.reviewer).get(url("charter-sign", version=1)).content.decode()
    assert "signed and frozen" in page and charter.sha256 in page


def test_the_signing_page_offers_only_the_roles_the_user_holds(personas, draft):
    page = client_for(personas.model_owner).get(url("charter-sign", version=1)).content.decode()
    assert 'value="model_owner"' in page
    assert 'value="reviewer"' not in page and 'value="charter_owner"' not in page


def test_signing_a_role_not_held_from_the_page_is_403(personas, draft):
    response = client_for(personas.model_owner).post(
        url("charter-sign", version=1), {"role": "reviewer"}
    )
    assert response.status_code == 403
    assert not Signature.objects.exists()


def test_the_signing_page_shows_stale_signatures(personas, draft, document):
    charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)
    data = editor_form(document, **{"nu_max": "2"})
    client_for(personas.owner).post(url("charter-edit"), data)
    page = client_for(personas.owner).get(url("charter-sign", version=1)).content.decode()
    assert "stale" in page and "(earlier content)" in page
    assert 'value="charter_owner"' in page  # the owner can sign the new content


def test_revising_after_unblinding_requires_a_reason_on_the_page(personas, signed):
    use_case_unblind(actor=personas.owner, use_case=personas.use_case, reason="committee")
    client = client_for(personas.owner)
    page = client.get(url("charter-revise")).content.decode()
    assert "This change is a deviation" in page
    refused = client.post(url("charter-revise"), {"reason": ""})
    assert refused.status_code == 400 and "needs a reason" in refused.content.decode()
    response = client.post(url("charter-revise"), {"reason": "Thresholds agreed with risk."})
    assert response.status_code == 302 and response["Location"] == url("charter-edit")
    assert Deviation.objects.get().reason == "Thresholds agreed with risk."


def test_the_signing_page_asks_for_a_deviation_reason_when_results_were_shown_meanwhile(
    personas, signed
):
    charter_revise(actor=personas.owner, charter=signed, reason="")
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    client = client_for(personas.owner)
    page = client.get(url("charter-sign", version=2)).content.decode()
    assert "Record the deviation" in page and 'value="charter_owner"' not in page
    response = client.post(
        url("charter-deviation", version=2), {"reason": "Late threshold change."}
    )
    assert response.status_code == 302
    assert Deviation.objects.get().reason == "Late threshold change."
    page = client.get(url("charter-sign", version=2)).content.decode()
    assert 'value="charter_owner"' in page
