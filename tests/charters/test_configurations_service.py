"""configuration_upload: immutable versions, identical uploads refused, audit, lifecycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.db import DatabaseError, transaction

from audit.models import AuditEntry
from charters.models import Configuration, Stage, StageEvent
from charters.selectors.configurations import (
    configuration_get,
    configuration_latest,
    configuration_list,
    configuration_parity,
)
from charters.services.configurations import configuration_upload
from enterpriseval.errors import ConflictError, ServiceError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
GEMINI = (EXAMPLES / "sigma-gemini-2.5.yaml").read_text()
LLAMA = (EXAMPLES / "sigma-llama-4.yaml").read_text()


def upload(personas, name="credit-memo", content=GEMINI, filename="sigma.yaml"):
    return configuration_upload(
        actor=personas.model_owner,
        use_case=personas.use_case,
        name=name,
        content=content,
        filename=filename,
    )


def test_the_first_upload_freezes_version_1_with_canonical_json_and_hash(personas):
    configuration = upload(personas)
    configuration.refresh_from_db()
    assert (configuration.name, configuration.version) == ("credit-memo", 1)
    assert configuration.model_ref == "gemini/gemini-2.5-pro"
    assert configuration.source_format == "yaml"
    assert configuration.created_by == personas.model_owner
    document = yaml.safe_load(GEMINI)
    assert configuration.document == document
    assert configuration.canonical_json == json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert len(configuration.sha256) == 64


def test_a_changed_document_becomes_the_next_version_and_names_count_separately(personas):
    first = upload(personas)
    second = upload(personas, content=LLAMA)
    other = upload(personas, name="llama-4", content=LLAMA)
    assert [first.version, second.version, other.version] == [1, 2, 1]
    assert second.sha256 != first.sha256
    assert second.sha256 == other.sha256


def test_uploading_the_latest_version_again_is_refused_even_reformatted(personas):
    upload(personas)
    upload(personas, content=LLAMA)
    as_json = json.dumps(yaml.safe_load(LLAMA), indent=2)
    with pytest.raises(ConflictError) as caught:
        upload(personas, content=as_json, filename="sigma.json")
    assert caught.value.message.startswith("σ credit-memo is identical to version 2 (sha256 ")
    assert caught.value.status_code == 409
    assert Configuration.objects.filter(use_case=personas.use_case).count() == 2


def test_returning_to_an_older_document_is_a_new_version(personas):
    upload(personas)
    upload(personas, content=LLAMA)
    third = upload(personas)
    assert third.version == 3
    assert (
        third.sha256
        == configuration_get(use_case=personas.use_case, name="credit-memo", version=1).sha256
    )


def test_an_invalid_document_reports_every_problem_and_writes_nothing(personas):
    bad = GEMINI.replace("temperature: 0.2", "temperature: 3").replace("  top_k: 8", "  top_k: 0")
    with pytest.raises(ServiceError) as caught:
        upload(personas, content=bad)
    error = caught.value
    assert error.field == "model.parameters.temperature"
    assert error.message.startswith(
        "σ has 2 problems: sigma.yaml, line 15: model.parameters.temperature: 3 is greater "
        "than the maximum of 2"
    )
    assert [(d["field"], d["line"]) for d in error.details] == [
        ("model.parameters.temperature", 15),
        ("retrieval.top_k", 53),
    ]
    assert not Configuration.objects.exists()
    assert not AuditEntry.objects.filter(action="configuration.freeze").exists()


def test_a_secret_is_refused_and_not_repeated_in_the_error(personas):
    secret = "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQ7"
    bad = GEMINI.replace("  seed: 7", f"  seed: 7\n    user: {secret}")
    with pytest.raises(ServiceError) as caught:
        upload(personas, content=bad)
    assert "looks like an API key or secret" in caught.value.message
    assert secret not in json.dumps(caught.value.as_dict())
    assert not Configuration.objects.exists()


@pytest.mark.parametrize("name", ["", "has space", "x" * 81, "σ"])
def test_the_version_name_must_be_a_slug(personas, name):
    with pytest.raises(ServiceError) as caught:
        upload(personas, name=name)
    assert caught.value.field == "name"


def test_freezing_is_audited_with_name_version_hash_and_model(personas):
    configuration = upload(personas)
    entry = AuditEntry.objects.get(action="configuration.freeze")
    assert entry.payload == {
        "name": "credit-memo",
        "version": 1,
        "sha256": configuration.sha256,
        "model_ref": "gemini/gemini-2.5-pro",
    }
    assert entry.actor == personas.model_owner
    assert entry.use_case_id == personas.use_case.pk
    assert entry.target_id == str(configuration.pk)


def test_the_first_freeze_moves_the_use_case_to_stage_2_once(personas):
    upload(personas)
    upload(personas, content=LLAMA)
    personas.use_case.refresh_from_db()
    assert personas.use_case.stage == Stage.CONFIGURE
    events = StageEvent.objects.filter(use_case=personas.use_case, stage=Stage.CONFIGURE)
    assert [event.note for event in events] == ["σ credit-memo v1 frozen"]


def test_a_frozen_version_cannot_be_updated_in_the_database(personas):
    configuration = upload(personas)
    with pytest.raises(DatabaseError), transaction.atomic():
        Configuration.objects.filter(pk=configuration.pk).update(model_ref="openai/gpt-4o")
    configuration.refresh_from_db()
    assert configuration.model_ref == "gemini/gemini-2.5-pro"


def test_selectors_list_get_latest_and_compare(personas, django_assert_num_queries):
    upload(personas)
    upload(personas, content=LLAMA)
    upload(personas, name="llama-4", content=LLAMA)
    with django_assert_num_queries(1):
        rows = [
            (c.name, c.version, c.created_by.username)
            for c in configuration_list(use_case=personas.use_case)
        ]
    assert rows == [
        ("credit-memo", 1, "model_owner"),
        ("credit-memo", 2, "model_owner"),
        ("llama-4", 1, "model_owner"),
    ]
    assert configuration_latest(use_case=personas.use_case, name="credit-memo").version == 2
    assert configuration_latest(use_case=personas.use_case, name="none") is None
    assert configuration_get(use_case=personas.use_case, name="credit-memo", version=9) is None
    a = configuration_get(use_case=personas.use_case, name="credit-memo", version=1)
    b = configuration_get(use_case=personas.use_case, name="llama-4", version=1)
    report = configuration_parity(a=a, b=b)
    assert report.attributable_to_model_alone is True
    assert report.differing == ["model"]
