"""Charter services: drafts, signing and freezing, stale signatures, revisions, deviations."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied

from audit.canonical import canonical_json, sha256_hex
from audit.models import AuditEntry
from charters.charter_document import document_from_text
from charters.models import Charter, CharterMetric, Deviation, Role, Signature, UnblindingEvent
from charters.selectors.charters import (
    charter_content_sha256,
    charter_deviations,
    charter_page,
    charter_signing_status,
)
from charters.services.charters import (
    charter_create,
    charter_deviation_record,
    charter_revise,
    charter_sign,
    charter_update,
    use_case_unblind,
)
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"


@pytest.fixture
def document() -> dict:
    return document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")


@pytest.fixture
def draft(personas, document) -> Charter:
    return charter_create(actor=personas.owner, use_case=personas.use_case, document=document)


def sign_all(personas, charter: Charter) -> None:
    charter_sign(actor=personas.owner, charter=charter, role=Role.CHARTER_OWNER)
    charter_sign(actor=personas.model_owner, charter=charter, role=Role.MODEL_OWNER)
    charter_sign(actor=personas.reviewer, charter=charter, role=Role.REVIEWER)


def with_theta_in(document: dict, metric_id: str, value: float) -> dict:
    changed = copy.deepcopy(document)
    for metric in changed["metrics"]:
        if metric["id"] == metric_id:
            metric["theta_in"] = value
    return changed


# --------------------------------------------------------------------------- create / update


def test_create_makes_draft_v1_with_metrics_in_file_order_and_audits_it(personas, draft, document):
    assert draft.version == 1
    assert not draft.is_frozen
    assert draft.nu_max == 3 and draft.confidence == 0.95 and draft.repeats_k == 1
    ids = list(CharterMetric.objects.filter(charter=draft).values_list("metric_id", flat=True))
    assert ids == [m["id"] for m in document["metrics"]]
    assert ids[:6] == [
        "citation_precision_lenient",
        "key_element_capture",
        "irrelevance_rate",
        "hallucination_rate",
        "guidance_precision",
        "guidance_recall",
    ]
    entry = AuditEntry.objects.get(action="charter.create")
    assert entry.payload["version"] == 1
    assert entry.payload["content_sha256"] == charter_content_sha256(charter=draft)
    assert entry.use_case_id == personas.use_case.pk


def test_create_without_document_makes_an_empty_draft_with_spec_defaults(personas):
    charter = charter_create(actor=personas.owner, use_case=personas.use_case)
    assert (charter.nu_max, charter.confidence, charter.kappa_target) == (3.0, 0.95, 0.6)
    assert charter.metrics.count() == 0


def test_create_is_refused_when_a_draft_or_a_signed_version_exists(personas, draft):
    with pytest.raises(ConflictError, match="draft charter v1"):
        charter_create(actor=personas.owner, use_case=personas.use_case)
    sign_all(personas, draft)
    with pytest.raises(ConflictError, match="revise it to start v2"):
        charter_create(actor=personas.owner, use_case=personas.use_case)


def test_only_the_charter_owner_creates_and_edits(personas, document, draft):
    with pytest.raises(PermissionDenied):
        charter_update(actor=personas.model_owner, charter=draft, document=document)
    with pytest.raises(PermissionDenied):
        charter_revise(actor=personas.reviewer, charter=draft, reason="x")


def test_a_document_for_another_use_case_or_classification_is_refused(personas, document):
    with pytest.raises(ServiceError, match="use_case") as raised:
        charter_create(
            actor=personas.owner,
            use_case=personas.use_case,
            document=document | {"use_case": "OTHER"},
        )
    assert raised.value.field == "use_case"
    with pytest.raises(ServiceError, match="autonomy") as raised:
        charter_create(
            actor=personas.owner, use_case=personas.use_case, document=document | {"autonomy": "A2"}
        )
    assert raised.value.field == "autonomy"


def test_a_structurally_broken_document_is_refused_with_every_field_path(personas):
    with pytest.raises(ServiceError) as raised:
        charter_create(
            actor=personas.owner,
            use_case=personas.use_case,
            document={
                "metrics": [{"id": "hallucination_rate", "treatment": "gated", "theta_in": "five"}],
                "nu_max": "three",
            },
        )
    fields = [d["field"] for d in raised.value.details]
    assert fields == ["metrics[0].theta_in", "nu_max"]


def test_update_replaces_fields_and_metrics_and_audits_what_changed(personas, draft, document):
    changed = with_theta_in(document, "hallucination_rate", 4)
    changed["metrics"] = changed["metrics"][:-1]  # drop review_burden
    before = charter_content_sha256(charter=draft)
    charter_update(actor=personas.owner, charter=draft, document=changed)
    hr = CharterMetric.objects.get(charter=draft, metric_id="hallucination_rate")
    assert hr.theta_in == 4
    assert not CharterMetric.objects.filter(charter=draft, metric_id="review_burden").exists()
    entry = AuditEntry.objects.get(action="charter.update")
    assert entry.payload["content_sha256_before"] == before
    assert entry.payload["content_sha256_after"] == charter_content_sha256(charter=draft)
    assert entry.payload["changed"] == [
        "metrics[hallucination_rate].theta_in",
        "metrics[review_burden]",
    ]


def test_update_with_the_same_content_writes_no_audit_entry(personas, draft, document):
    charter_update(actor=personas.owner, charter=draft, document=document)
    assert not AuditEntry.objects.filter(action="charter.update").exists()


def test_a_frozen_charter_is_immutable_through_the_service(personas, draft, document):
    sign_all(personas, draft)
    with pytest.raises(ImmutableError, match="signed and frozen") as raised:
        charter_update(
            actor=personas.owner,
            charter=draft,
            document=with_theta_in(document, "hallucination_rate", 4),
        )
    assert raised.value.status_code == 409
    assert CharterMetric.objects.get(charter=draft, metric_id="hallucination_rate").theta_in == 5


# --------------------------------------------------------------------------- signing


def test_three_distinct_signatures_freeze_the_canonical_json_and_its_hash(personas, draft):
    expected_sha = charter_content_sha256(charter=draft)
    sign_all(personas, draft)
    draft.refresh_from_db()
    assert draft.is_frozen
    assert draft.sha256 == expected_sha == sha256_hex(draft.canonical_json)
    document = json.loads(draft.canonical_json)
    assert canonical_json(document) == draft.canonical_json
    assert document["use_case"] == "CREDIT-MEMO-B" and document["intensity"] == "E2"
    assert {s.content_sha256 for s in Signature.objects.filter(charter=draft)} == {expected_sha}
    signs = AuditEntry.objects.filter(action="charter.sign").order_by("pk")
    assert [e.payload["role"] for e in signs] == ["charter_owner", "model_owner", "reviewer"]
    freeze = AuditEntry.objects.get(action="charter.freeze")
    assert freeze.payload["sha256"] == expected_sha
    assert freeze.payload["signers"] == {
        "charter_owner": "owner",
        "model_owner": "model_owner",
        "reviewer": "reviewer",
    }


def test_two_signatures_do_not_freeze(personas, draft):
    charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)
    charter_sign(actor=personas.model_owner, charter=draft, role=Role.MODEL_OWNER)
    draft.refresh_from_db()
    assert not draft.is_frozen and draft.sha256 == "" and draft.canonical_json == ""
    assert not AuditEntry.objects.filter(action="charter.freeze").exists()


def test_signing_in_a_role_the_actor_does_not_hold_is_forbidden(personas, draft):
    with pytest.raises(PermissionDenied):
        charter_sign(actor=personas.model_owner, charter=draft, role=Role.REVIEWER)
    with pytest.raises(PermissionDenied):
        charter_sign(actor=personas.grader, charter=draft, role=Role.CHARTER_OWNER)
    assert not Signature.objects.exists()


def test_a_role_that_does_not_sign_charters_is_refused(personas, draft):
    with pytest.raises(ServiceError, match="charter_owner, model_owner, reviewer") as raised:
        charter_sign(actor=personas.grader, charter=draft, role=Role.GRADER)
    assert raised.value.field == "role"


def test_one_user_cannot_sign_in_two_roles(personas, draft):
    from charters.services.use_cases import membership_grant

    membership_grant(
        actor=personas.owner,
        use_case=personas.use_case,
        user=personas.owner,
        role=Role.MODEL_OWNER,
    )
    charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)
    with pytest.raises(ConflictError, match="three different people"):
        charter_sign(actor=personas.owner, charter=draft, role=Role.MODEL_OWNER)
    assert Signature.objects.count() == 1


def test_signing_twice_in_one_role_is_refused(personas, draft):
    charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)
    with pytest.raises(ConflictError, match="already signed"):
        charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)


def test_a_draft_with_validation_errors_cannot_be_signed(personas, document):
    inverted = with_theta_in(document, "irrelevance_rate", 55)
    charter = charter_create(actor=personas.owner, use_case=personas.use_case, document=inverted)
    with pytest.raises(ServiceError, match="inverted pair") as raised:
        charter_sign(actor=personas.owner, charter=charter, role=Role.CHARTER_OWNER)
    assert raised.value.field == "metrics[irrelevance_rate].theta_in"
    assert raised.value.details[0]["level"] == "error"
    assert not Signature.objects.exists()


def test_editing_a_draft_makes_earlier_signatures_stale(personas, draft, document):
    charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)
    charter_sign(actor=personas.model_owner, charter=draft, role=Role.MODEL_OWNER)
    charter_update(
        actor=personas.owner,
        charter=draft,
        document=with_theta_in(document, "hallucination_rate", 4),
    )
    assert AuditEntry.objects.get(action="charter.update").payload["stale_signatures"] == [
        "charter_owner",
        "model_owner",
    ]
    status = charter_signing_status(
        charter=draft, content_sha256=charter_content_sha256(charter=draft)
    )
    assert [(row.role, row.status) for row in status] == [
        ("charter_owner", "stale"),
        ("model_owner", "stale"),
        ("reviewer", "missing"),
    ]
    # The reviewer's signature alone does not freeze: the stale two no longer count.
    charter_sign(actor=personas.reviewer, charter=draft, role=Role.REVIEWER)
    draft.refresh_from_db()
    assert not draft.is_frozen
    charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)
    charter_sign(actor=personas.model_owner, charter=draft, role=Role.MODEL_OWNER)
    draft.refresh_from_db()
    assert draft.is_frozen
    assert Signature.objects.filter(charter=draft).count() == 5
    assert json.loads(draft.canonical_json)["metrics"][3]["theta_in"] == 4


def test_a_signed_charter_cannot_be_signed_again(personas, draft):
    sign_all(personas, draft)
    with pytest.raises(ImmutableError):
        charter_sign(actor=personas.owner, charter=draft, role=Role.CHARTER_OWNER)


# --------------------------------------------------------------------------- revise, unblind


def test_revising_before_unblinding_copies_the_content_without_a_deviation(personas, draft):
    sign_all(personas, draft)
    revision = charter_revise(actor=personas.owner, charter=draft, reason="")
    assert (revision.version, revision.previous_id, revision.is_frozen) == (2, draft.pk, False)
    v1 = json.loads(Charter.objects.get(pk=draft.pk).canonical_json)
    page = charter_page(use_case=personas.use_case, version=2)
    assert {k: v for k, v in page.document.items() if k != "version"} == {
        k: v for k, v in v1.items() if k != "version"
    }
    assert not Deviation.objects.exists()
    assert AuditEntry.objects.get(action="charter.revise").payload["from_version"] == 1


def test_only_the_latest_signed_version_is_revised(personas, draft):
    with pytest.raises(ConflictError, match="is a draft"):
        charter_revise(actor=personas.owner, charter=draft, reason="x")
    sign_all(personas, draft)
    charter_revise(actor=personas.owner, charter=draft, reason="")
    with pytest.raises(ConflictError, match="v2 of CREDIT-MEMO-B already exists"):
        charter_revise(actor=personas.owner, charter=draft, reason="again")


def test_unblinding_needs_a_signed_charter_and_a_reason(personas, draft):
    with pytest.raises(ConflictError, match="no signed charter"):
        use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="pilot review")
    sign_all(personas, draft)
    with pytest.raises(ServiceError, match="why") as raised:
        use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="  ")
    assert raised.value.field == "reason"
    event = use_case_unblind(
        actor=personas.reviewer, use_case=personas.use_case, reason="interim results to committee"
    )
    assert event.charter_id == draft.pk
    second = use_case_unblind(
        actor=personas.owner, use_case=personas.use_case, reason="shown to the business"
    )
    entries = AuditEntry.objects.filter(action="usecase.unblind").order_by("pk")
    assert [e.payload["first"] for e in entries] == [True, False]
    assert entries[0].payload["charter_sha256"] == Charter.objects.get(pk=draft.pk).sha256
    assert UnblindingEvent.objects.count() == 2 and second.pk != event.pk


def test_outsiders_cannot_record_an_unblinding(personas, draft):
    sign_all(personas, draft)
    with pytest.raises(ServiceError, match="not a member"):
        use_case_unblind(actor=personas.outsider, use_case=personas.use_case, reason="peek")


def test_after_unblinding_a_revision_is_a_deviation_with_a_mandatory_reason(
    personas, draft, document
):
    sign_all(personas, draft)
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    with pytest.raises(ServiceError, match="needs a reason") as raised:
        charter_revise(actor=personas.owner, charter=draft, reason=" ")
    assert raised.value.field == "reason"
    revision = charter_revise(
        actor=personas.owner, charter=draft, reason="Guidance recall sample was too small."
    )
    deviation = Deviation.objects.get()
    assert (deviation.charter_id, deviation.previous_id) == (revision.pk, draft.pk)
    assert deviation.created_by == personas.owner
    entry = AuditEntry.objects.get(action="charter.deviation")
    assert entry.payload["reason"] == "Guidance recall sample was too small."
    assert not AuditEntry.objects.filter(action="charter.revise").exists()
    changed = copy.deepcopy(document)
    for metric in changed["metrics"]:
        if metric["id"] == "guidance_recall":
            metric["planned_n"] = 500
    charter_update(actor=personas.owner, charter=revision, document=changed)
    [view] = charter_deviations(use_case=personas.use_case)
    assert (view.from_version, view.to_version, view.final) == (1, 2, False)
    assert view.diff == [
        {"path": "metrics[guidance_recall].planned_n", "before": 300, "after": 500}
    ]
    sign_all(personas, revision)
    [view] = charter_deviations(use_case=personas.use_case)
    assert view.final and view.diff == [
        {"path": "metrics[guidance_recall].planned_n", "before": 300, "after": 500}
    ]


def test_a_revision_open_when_results_are_first_shown_needs_its_deviation_recorded(personas, draft):
    sign_all(personas, draft)
    revision = charter_revise(actor=personas.owner, charter=draft, reason="")
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    with pytest.raises(ConflictError, match="record its reason before signing"):
        charter_sign(actor=personas.owner, charter=revision, role=Role.CHARTER_OWNER)
    with pytest.raises(ServiceError, match="needs a reason"):
        charter_deviation_record(actor=personas.owner, charter=revision, reason="")
    charter_deviation_record(actor=personas.owner, charter=revision, reason="Late change.")
    with pytest.raises(ConflictError, match="already recorded"):
        charter_deviation_record(actor=personas.owner, charter=revision, reason="Again.")
    sign_all(personas, revision)
    revision.refresh_from_db()
    assert revision.is_frozen
    assert AuditEntry.objects.filter(action="charter.deviation").count() == 1
