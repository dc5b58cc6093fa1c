"""What the signed charter needs of a structured judgement is checked before signing, at run
start and at import, each refusal naming the missing field (SPEC §4.1)."""

from __future__ import annotations

import io
import json

import pytest

from charters.charter_document import document_content
from charters.models import Charter, Role
from charters.selectors.charters import charter_document_build
from charters.services.charters import charter_revise, charter_sign, charter_update
from demo.testing.grading import first_tasks_file, make_world
from demo.testing.structured import labelled_task_set
from enterpriseval.errors import ServiceError
from runs.models import Run
from runs.services.outputs import output_import
from runs.services.runs import run_create

LABELS = ["compliant", "non-compliant"]


@pytest.fixture
def world(db):
    return make_world()


def controls(world):
    return labelled_task_set(
        world, labels=LABELS, gold={f"C-{n}": g for n, g in enumerate(LABELS * 2)}
    )


def revise_to_label_rule(world) -> Charter:
    signed = Charter.objects.get(use_case=world.use_case, version=1)
    draft = charter_revise(actor=world.owner, charter=signed, reason="success by label")
    document = document_content(charter_document_build(charter=draft))
    return charter_update(
        actor=world.owner, charter=draft, document={**document, "success_rule": "label_equals_gold"}
    )


def sign(world, charter):
    for user, role in (
        (world.owner, Role.CHARTER_OWNER),
        (world.model_owner, Role.MODEL_OWNER),
        (world.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=charter, role=role)


def test_signing_a_label_rule_needs_a_task_set_with_a_label_set(world):
    draft = revise_to_label_rule(world)
    with pytest.raises(ServiceError) as raised:
        charter_sign(actor=world.owner, charter=draft, role=Role.CHARTER_OWNER)
    assert raised.value.field == "success_rule"
    assert "label_equals_gold needs a label_set" in raised.value.message
    assert "(credit-memo-tasks v1)" in raised.value.message  # the task set it looked at
    controls(world)
    sign(world, draft)
    assert Charter.objects.get(pk=draft.pk).is_frozen


def test_under_a_label_rule_runs_need_labels_and_an_executed_sigma_a_label_format(world):
    labelled = controls(world)
    sign(world, revise_to_label_rule(world))
    sigma = world.runs[0].configuration  # its output_format is free text
    with pytest.raises(ServiceError) as raised:
        run_create(
            actor=world.model_owner,
            use_case=world.use_case,
            configuration=sigma,
            task_set=labelled,
            split="graded",
            repeats=1,
        )
    assert raised.value.field == "configuration"
    assert "gives no label" in raised.value.message
    assert "guardrails.output_format" in raised.value.message
    with pytest.raises(ServiceError) as raised:
        output_import(
            actor=world.model_owner,
            use_case=world.use_case,
            configuration=sigma,
            task_set=world.runs[0].task_set,  # the credit-memo set: no label set
            split="graded",
            repeats=1,
            fileobj=first_tasks_file("gemini-2-5", 2),
            filename="outputs.jsonl",
        )
    assert raised.value.field == "task_set"
    assert "declares no label_set" in raised.value.message
    runs_before = Run.objects.count()
    run = output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=sigma,
        task_set=labelled,
        split="graded",
        repeats=1,
        fileobj=io.BytesIO(
            json.dumps({"task_id": "C-0", "text": "Compliant.", "label": "compliant"}).encode()
        ),
        filename="labelled.jsonl",
    )
    assert Run.objects.count() == runs_before + 1
    assert run.outputs.get().label == "compliant"
