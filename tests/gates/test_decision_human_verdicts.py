"""A decision on human-graded classification and success by "Acceptable as is?" (SPEC §4.1).

The world of :mod:`demo.testing.verdicts`, a census session graded by two agreeing graders who
judge C-1's "compliant" wrong (right label: partially compliant) although it equals gold. The
record's classification, success basis and estimates come from their final values; the gate
reads the agreement on the verdict fields; the decision page shows them.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from demo.testing.verdicts import doubting, grade_session, make_verdict_world
from gates.services import decision_compute

pytestmark = pytest.mark.django_db


@pytest.fixture
def decision():
    world = make_verdict_world()
    session = world.sample()
    grade_session(session, doubting)
    return world, decision_compute(
        actor=world.owner, charter=world.charter, run=world.run, session=session
    )


def test_the_record_reads_the_graders_verdicts(decision):
    _world, recorded = decision
    record = recorded.record
    estimates = {e["metric_id"]: e for e in record["estimates"]}
    assert estimates["classification_accuracy"]["mode"] == "H"
    assert estimates["classification_accuracy"]["point"] == pytest.approx(60.0)
    assert estimates["pass_hat_k"]["mode"] == "H"
    assert estimates["pass_hat_k"]["point"] == pytest.approx(20.0)
    # Rows: the graders' right label (C, P, N); columns: the output's label, then unknown.
    # C-4 C→C; C-1 C (right P), C-2 P→P; C-3 N→N, C-5 C (right N).
    assert record["classification"]["confusion"] == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0]]
    assert record["success"]["method"].startswith("graded acceptable as is by humans")
    gated = {m["id"]: m for m in record["gate"]["metrics"]}
    for metric_id in ("classification_accuracy", "pass_hat_k"):
        assert gated[metric_id]["agreement"]["eligible"] is True  # κ = 1 on the verdict field


def test_the_decision_page_shows_the_human_graded_estimates(decision):
    world, recorded = decision
    client = Client()
    client.force_login(world.owner)
    page = client.get(reverse("decision-detail", args=[world.use_case.key, recorded.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "graded acceptable as is by humans" in text
    assert "60.00" in text and "20.00" in text
