"""GET /api/v1/use-cases/<key>/scorecards/<id>/scorecard.pdf and evidence.zip: the downloads."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from demo.testing.grading import make_world
from demo.testing.scorecards import draft_scorecard, final_scorecard
from scorecards.evidence import evidence_verify


@pytest.fixture
def world(db):
    return make_world()


def get(world, user, scorecard, name, **headers):
    client = APIClient()
    client.force_authenticate(user)
    url = f"/api/v1/use-cases/{world.use_case.key}/scorecards/{scorecard.pk}/{name}"
    return client.get(url, **headers)


def test_the_pdf_of_a_final_scorecard_is_the_one_signed(world):
    scorecard = final_scorecard(world)
    response = get(
        world, world.model_owner, scorecard, "scorecard.pdf", HTTP_ACCEPT="application/pdf"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert hashlib.sha256(response.content).hexdigest() == scorecard.pdf_sha256
    assert f"scorecard-{world.use_case.key}-{scorecard.pk}.pdf" in response["Content-Disposition"]


def test_the_pdf_of_a_draft_is_rendered(world):
    scorecard = draft_scorecard(world)
    response = get(world, world.owner, scorecard, "scorecard.pdf")
    assert response.status_code == 200 and response.content.startswith(b"%PDF")


def test_the_evidence_pack_verifies_and_its_export_is_audited(world):
    scorecard = final_scorecard(world)
    before = AuditEntry.objects.count()
    response = get(world, world.reviewer, scorecard, "evidence.zip", HTTP_ACCEPT="application/zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as pack:
        assert "scorecard.pdf" in pack.namelist()
        assert hashlib.sha256(pack.read("scorecard.pdf")).hexdigest() == scorecard.pdf_sha256
    assert evidence_verify(response.content).ok
    assert AuditEntry.objects.count() > before


@pytest.mark.parametrize("name", ["scorecard.pdf", "evidence.zip"])
def test_graders_get_403_and_outsiders_404_as_json_errors(world, name):
    scorecard = draft_scorecard(world)
    refused = get(world, world.graders[0], scorecard, name, HTTP_ACCEPT="application/json")
    assert refused.status_code == 403 and "error" in refused.json()
    assert get(world, world.outsider, scorecard, name).status_code == 404
