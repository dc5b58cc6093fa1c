"""HTML pages for configurations σ: list, upload with every error, version, parity diff."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from charters.models import Configuration
from charters.services.configurations import configuration_upload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
GEMINI = (EXAMPLES / "sigma-gemini-2.5.yaml").read_text()
LLAMA = (EXAMPLES / "sigma-llama-4.yaml").read_text()
KEY = "CREDIT-MEMO-B"

READERS = {
    "owner": 200,
    "model_owner": 200,
    "adjudicator": 200,
    "reviewer": 200,
    "grader": 403,
    "outsider": 404,
}
UPLOADERS = {
    "owner": 200,
    "model_owner": 200,
    "adjudicator": 403,
    "reviewer": 403,
    "grader": 403,
    "outsider": 404,
}

READ_PAGES = {
    "list": lambda: reverse("configuration-list", args=[KEY]),
    "detail": lambda: reverse("configuration-detail", args=[KEY, "gemini", 1]),
    "parity": lambda: reverse("configuration-parity", args=[KEY]) + "?a=gemini:1&b=llama:1",
}


def client_for(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def frozen(personas):
    return [
        configuration_upload(
            actor=personas.model_owner, use_case=personas.use_case, name=name, content=content
        )
        for name, content in (("gemini", GEMINI), ("llama", LLAMA))
    ]


def upload_url() -> str:
    return reverse("configuration-upload", args=[KEY])


def validate_url() -> str:
    return reverse("configuration-validate", args=[KEY])


def text(response) -> str:
    return response.content.decode()


# ----------------------------------------------------------------------------------- permissions


@pytest.mark.parametrize("page", sorted(READ_PAGES))
@pytest.mark.parametrize(("persona", "expected"), sorted(READERS.items()))
def test_reading_pages_need_a_non_grader_role(personas, frozen, page, persona, expected):
    response = client_for(personas.by_name(persona)).get(READ_PAGES[page]())
    assert response.status_code == expected
    if expected != 200:
        assert "gemini-2.5-pro" not in text(response)


@pytest.mark.parametrize(("persona", "expected"), sorted(UPLOADERS.items()))
def test_the_upload_page_needs_the_model_or_charter_owner_role(personas, persona, expected):
    client = client_for(personas.by_name(persona))
    assert client.get(upload_url()).status_code == expected
    posted = client.post(upload_url(), {"name": "gemini", "content": GEMINI})
    assert posted.status_code == (302 if expected == 200 else expected)
    assert client.post(validate_url(), {"name": "gemini", "content": GEMINI}).status_code == (
        expected
    )


@pytest.mark.parametrize(
    "url",
    [*READ_PAGES.values(), upload_url],
)
def test_anonymous_visitors_are_sent_to_the_login_page(frozen, url):
    response = client_for().get(url())
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_anonymous_uploads_are_sent_to_the_login_page(personas):
    response = client_for().post(upload_url(), {"name": "gemini", "content": GEMINI})
    assert response.status_code == 302
    assert not Configuration.objects.exists()


# ------------------------------------------------------------------------------------------ list


def test_the_list_shows_every_version_with_its_model_and_hash(
    personas, frozen, django_assert_num_queries
):
    client = client_for(personas.model_owner)
    with django_assert_num_queries(6):
        response = client.get(READ_PAGES["list"]())
    html = text(response)
    for configuration in frozen:
        assert f'title="{configuration.sha256}"' in html
        assert configuration.sha256[:16] in html
        assert (
            reverse("configuration-detail", args=[KEY, configuration.name, configuration.version])
            in html
        )
    assert "gemini/gemini-2.5-pro" in html
    assert "together_ai/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8" in html
    assert upload_url() in html
    configuration_upload(
        actor=personas.owner, use_case=personas.use_case, name="gemini", content=LLAMA
    )
    with django_assert_num_queries(6):
        assert text(client.get(READ_PAGES["list"]())).count("<tr>") == 4


def test_readers_who_cannot_upload_get_no_upload_link(personas, frozen):
    html = text(client_for(personas.reviewer).get(READ_PAGES["list"]()))
    assert upload_url() not in html
    assert "gemini/gemini-2.5-pro" in html


# ---------------------------------------------------------------------------------------- upload


def test_the_upload_page_validates_live_without_inline_script(personas):
    html = text(client_for(personas.model_owner).get(upload_url()))
    assert f'data-live-validate="{validate_url()}"' in html
    assert 'data-live-target="#sigma-check"' in html
    assert 'enctype="multipart/form-data"' in html
    assert re.findall(r"<script[^>]*>", html) == [
        '<script src="/static/enterpriseval/app.js" defer>'
    ]
    assert " style=" not in html


def test_pasting_a_valid_document_freezes_it_and_shows_the_version(personas):
    client = client_for(personas.model_owner)
    response = client.post(upload_url(), {"name": "gemini", "content": GEMINI}, follow=True)
    configuration = Configuration.objects.get()
    assert response.redirect_chain == [
        (reverse("configuration-detail", args=[KEY, "gemini", 1]), 302)
    ]
    assert f"Frozen σ gemini version 1 (sha256 {configuration.sha256})." in text(response)


def test_a_file_can_be_uploaded_instead_of_pasted(personas):
    client = client_for(personas.owner)
    upload = SimpleUploadedFile("sigma-llama-4.yaml", LLAMA.encode())
    response = client.post(upload_url(), {"name": "llama", "file": upload})
    assert response.status_code == 302
    assert Configuration.objects.get().model_ref.startswith("together_ai/")


def test_every_schema_error_is_shown_with_its_line_and_path(personas):
    bad = (
        GEMINI.replace("temperature: 0.2", "temperature: 3")
        .replace("  top_k: 8", "  top_k: 0")
        .replace("  reviewer_role: Corporate banking credit analyst\n", "")
    )
    response = client_for(personas.model_owner).post(
        upload_url(), {"name": "gemini", "content": bad}
    )
    assert response.status_code == 400
    html = text(response)
    assert "3 problems: fix them before freezing" in html
    rows = re.findall(
        r'<tr class="problem"><td>(.*?)</td><td class="mono">(.*?)</td><td>(.*?)</td></tr>', html
    )
    assert rows == [
        ("15", "model.parameters.temperature", "3 is greater than the maximum of 2"),
        ("53", "retrieval.top_k", "0 is less than the minimum of 1"),
        ("73", "oversight.reviewer_role", "is required"),
    ]
    assert not Configuration.objects.exists()
    assert "temperature: 3" in html


def test_an_identical_upload_is_refused_on_the_page(personas, frozen):
    response = client_for(personas.model_owner).post(
        upload_url(), {"name": "gemini", "content": GEMINI}
    )
    assert response.status_code == 409
    assert "σ gemini is identical to version 1" in text(response)
    assert Configuration.objects.count() == 2


def test_a_form_without_a_document_says_what_is_missing(personas):
    response = client_for(personas.model_owner).post(upload_url(), {"name": "gemini"})
    assert response.status_code == 400
    assert "Paste the σ document or choose a file." in text(response)


def test_the_live_check_reports_problems_without_writing(personas):
    response = client_for(personas.model_owner).post(
        validate_url(), {"name": "gemini", "content": "schema_version: '1'\nmodel: {}\n"}
    )
    html = text(response)
    assert "model.provider" in html and "model.id" in html and "prompts" in html
    assert "<html" not in html
    assert not Configuration.objects.exists()


def test_the_live_check_says_which_version_a_valid_document_would_become(personas, frozen):
    client = client_for(personas.model_owner)
    html = text(client.post(validate_url(), {"name": "gemini", "content": LLAMA}))
    assert "valid" in html
    assert "Would be frozen as gemini version 2." in html
    identical = text(client.post(validate_url(), {"name": "gemini", "content": GEMINI}))
    assert "Identical to gemini version 1: freezing it again would be refused." in identical
    assert Configuration.objects.count() == 2


# --------------------------------------------------------------------------------------- version


def test_the_version_page_shows_hash_canonical_json_and_components(personas, frozen):
    gemini = frozen[0]
    html = text(client_for(personas.reviewer).get(READ_PAGES["detail"]()))
    assert gemini.sha256 in html
    assert "gemini/gemini-2.5-pro" in html
    assert "Credit memo — source of repayment" in html
    for heading in (
        "M · Model",
        "P · Prompts",
        "Φ · Retrieval",
        "U · Tools",
        "Γ · Guardrails",
        "H · Human oversight",
    ):
        assert heading in html
    assert "&quot;top_k&quot;:8" in html  # canonical JSON, HTML-escaped
    assert 'name="b"' in html and "llama v1" in html


def test_an_unknown_version_page_is_404(personas, frozen):
    url = reverse("configuration-detail", args=[KEY, "gemini", 4])
    assert client_for(personas.owner).get(url).status_code == 404


def test_document_text_is_escaped_on_every_page(personas):
    hostile = GEMINI.replace(
        "    Role. You are", "    <script>alert('σ')</script> Role. You are"
    ).replace("name: Credit memo — source of repayment", "name: <b>bold</b> memo")
    configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="hostile", content=hostile
    )
    configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="gemini", content=GEMINI
    )
    client = client_for(personas.owner)
    pages = [
        reverse("configuration-detail", args=[KEY, "hostile", 1]),
        reverse("configuration-parity", args=[KEY]) + "?a=gemini:1&b=hostile:1",
    ]
    for url in pages:
        html = text(client.get(url))
        assert "<script>alert" not in html
        assert "&lt;script&gt;alert(" in html
        assert "<b>bold</b>" not in html


# ---------------------------------------------------------------------------------------- parity


def test_parity_of_the_examples_is_attributable_to_the_model_alone(personas, frozen):
    html = text(client_for(personas.owner).get(READ_PAGES["parity"]()))
    assert '<span class="badge ok">attributable to the model alone</span>' in html
    assert html.count('<span class="badge warn">differs</span>') == 1
    assert html.count('<span class="badge ok">same</span>') == 5
    assert "M · Model: what differs" in html
    assert re.search(
        r'<td class="mono">model.provider</td>\s*<td class="diff-removed"><pre>gemini</pre></td>'
        r'\s*<td class="diff-added"><pre>together_ai</pre></td>',
        html,
    )


def test_parity_with_other_changes_is_labelled_not_attributable(personas, frozen):
    changed = LLAMA.replace("  top_k: 8", "  top_k: 12").replace(
        "  citation_required: true", "  citation_required: false"
    )
    configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="llama", content=changed
    )
    url = reverse("configuration-parity", args=[KEY]) + "?a=gemini:1&b=llama:2"
    html = text(client_for(personas.reviewer).get(url))
    assert '<span class="badge error">not attributable to the model alone</span>' in html
    assert "differs in: model, retrieval, guardrails." in html
    assert html.count('<span class="badge warn">differs</span>') == 3
    assert re.search(
        r'<td class="mono">retrieval.top_k</td>\s*<td class="diff-removed"><pre>8</pre></td>'
        r'\s*<td class="diff-added"><pre>12</pre></td>',
        html,
    )


def test_identical_versions_show_that_nothing_differs(personas, frozen):
    url = reverse("configuration-parity", args=[KEY]) + "?a=gemini:1&b=gemini:1"
    html = text(client_for(personas.owner).get(url))
    assert "identical configurations" in html
    assert html.count('<span class="badge ok">same</span>') == 6


def test_the_parity_page_without_a_choice_offers_the_versions(personas, frozen):
    response = client_for(personas.owner).get(reverse("configuration-parity", args=[KEY]))
    assert response.status_code == 200
    html = text(response)
    assert '<option value="gemini:1" selected>' in html
    assert '<option value="llama:1" selected>' in html
    assert "what differs" not in html


def test_an_unknown_parity_choice_is_explained(personas, frozen):
    url = reverse("configuration-parity", args=[KEY]) + "?a=gemini:1&b=nope:3"
    response = client_for(personas.owner).get(url)
    assert response.status_code == 400
    assert "B: choose one of the σ versions of CREDIT-MEMO-B, as name:version" in text(response)
