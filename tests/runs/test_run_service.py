"""Executed runs: creation, chunk execution against the fake provider, idempotency, budget."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from django.core.exceptions import PermissionDenied

from audit.models import AuditEntry
from charters.models import Stage, StageEvent, UseCase
from charters.services.configurations import configuration_upload
from demo.testing.fakellm import FakeLLMServer, Fault
from enterpriseval.errors import ConflictError, ServiceError
from runs.executor import load_litellm
from runs.models import Output, OutputStatus, Run, RunMode, RunStatus, Unit
from runs.segment import build_units
from runs.services.runs import run_create, run_execute_chunk, run_start

SIGMA_FILE = (
    Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "sigma-gemini-2.5.yaml"
)

GRADED = 65  # graded tasks in examples/credit_memo/tasks.jsonl


@pytest.fixture(autouse=True, scope="module")
def _cost_map_loaded():
    load_litellm()


def reply(request: dict) -> str:
    """Cite the first source line the prompt lists."""
    user = request["messages"][-1]["content"]
    first_id = user.split("Sources:\n", 1)[1].split("]", 1)[0].lstrip("[")
    return f"The facility is a revolving credit facility [{first_id}]. Nothing else is known."


@pytest.fixture
def server():
    with FakeLLMServer(responder=reply) as fake:
        yield fake


def fake_sigma(world, server, *, model_id="fake-model", name="fake-sigma", **model):
    document = yaml.safe_load(SIGMA_FILE.read_text())
    document["model"] = {
        "provider": "openai_compatible",
        "id": model_id,
        "api_base": server.base_url,
        "parameters": {"temperature": 0.2, "timeout_seconds": 5},
        **model,
    }
    document["prompts"]["user_template"] = "Task {task_id}: {input}\n\nSources:\n{sources}\n"
    document["retrieval"]["top_k"] = 2
    return configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name=name,
        content=json.dumps(document),
        filename="sigma.json",
    )


def create(world, configuration, **options):
    options.setdefault("repeats", 2)
    return run_create(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=configuration,
        task_set=world.task_set,
        split="graded",
        **options,
    )


def graded_pks(world):
    return [task.pk for task in world.tasks("graded")]


def test_creating_a_run_counts_tasks_times_repeats_and_audits_it(runs_world, server):
    sigma = fake_sigma(runs_world, server)
    run = create(runs_world, sigma, repeats=3, concurrency=16, cost_budget_usd="2.5")
    assert run.mode == RunMode.EXECUTED and run.status == RunStatus.PENDING
    assert run.items_total == GRADED * 3
    assert run.concurrency == 16 and run.cost_budget_usd == Decimal("2.5")
    entry = AuditEntry.objects.filter(action="run.create").get()
    assert entry.payload["items_total"] == GRADED * 3
    # Creating a run is not running it: stage 4 is entered by a completed run.
    assert UseCase.objects.get(pk=runs_world.use_case.pk).stage == Stage.GOLD_SET


def test_the_first_completed_run_enters_stage_4_and_a_failed_one_does_not(
    runs_world, server, monkeypatch
):
    monkeypatch.delenv("FAKE_RUN_KEY", raising=False)
    failing = create(
        runs_world, fake_sigma(runs_world, server, api_key_env="FAKE_RUN_KEY"), repeats=1
    )
    run_execute_chunk(run_id=failing.pk, task_pks=graded_pks(runs_world))
    assert Run.objects.get(pk=failing.pk).status == RunStatus.FAILED
    assert UseCase.objects.get(pk=runs_world.use_case.pk).stage == Stage.GOLD_SET
    assert not StageEvent.objects.filter(use_case=runs_world.use_case, stage=Stage.RUN)

    run = create(runs_world, fake_sigma(runs_world, server, name="other-sigma"), repeats=1)
    run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    assert UseCase.objects.get(pk=runs_world.use_case.pk).stage == Stage.RUN
    entry = StageEvent.objects.get(use_case=runs_world.use_case, stage=Stage.RUN)
    assert (entry.actor, entry.note) == (runs_world.model_owner, f"run {run.pk} completed")


@pytest.mark.parametrize("persona", ["grader", "reviewer", "adjudicator"])
def test_only_charter_and_model_owners_may_create_a_run(runs_world, server, persona):
    sigma = fake_sigma(runs_world, server)
    with pytest.raises(PermissionDenied):
        run_create(
            actor=runs_world.by_name(persona),
            use_case=runs_world.use_case,
            configuration=sigma,
            task_set=runs_world.task_set,
            split="graded",
            repeats=1,
        )


def bad_template_sigma(world):
    document = yaml.safe_load(SIGMA_FILE.read_text())
    document["prompts"]["user_template"] = "Borrower: {borrower_name}\n{input}\n{sources}"
    return configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name="bad-template",
        content=json.dumps(document),
        filename="sigma.json",
    )


def test_a_template_with_an_unknown_field_is_refused_naming_the_field(runs_world):
    with pytest.raises(ServiceError, match=r"unknown field \{borrower_name\}") as raised:
        create(runs_world, bad_template_sigma(runs_world))
    assert raised.value.field == "configuration"
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"cost_budget_usd": "-1"}, "cost_budget_usd"),
        ({"cost_budget_usd": "lots"}, "cost_budget_usd"),
        ({"repeats": 0}, "repeats"),
    ],
)
def test_bad_run_settings_are_refused_naming_the_field(runs_world, server, options, field):
    sigma = fake_sigma(runs_world, server)
    with pytest.raises(ServiceError) as raised:
        create(runs_world, sigma, **options)
    assert raised.value.field == field


def test_executing_a_chunk_twice_gives_exactly_n_times_k_outputs(runs_world, server):
    run = create(runs_world, fake_sigma(runs_world, server))
    first = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    calls = server.calls
    second = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    assert first.written == GRADED * 2 and first.failed == 0
    assert second.written == 0 and second.status == RunStatus.COMPLETED
    assert calls == GRADED * 2 and server.calls == calls
    assert Output.objects.filter(run=run).count() == GRADED * 2
    pairs = set(Output.objects.filter(run=run).values_list("task_id", "repeat_index"))
    assert pairs == {(pk, r) for pk in graded_pks(runs_world) for r in (0, 1)}
    run.refresh_from_db()
    assert (run.items_done, run.items_failed, run.status) == (GRADED * 2, 0, RunStatus.COMPLETED)
    assert run.cost_unknown_items == GRADED * 2 and run.cost_usd == 0  # fake-model: unknown
    assert AuditEntry.objects.filter(action="run.complete").count() == 1


def test_a_chunk_written_in_part_executes_only_the_missing_pairs(runs_world, server):
    run = create(runs_world, fake_sigma(runs_world, server))
    pks = graded_pks(runs_world)
    run_execute_chunk(run_id=run.pk, task_pks=pks[:10])
    result = run_execute_chunk(run_id=run.pk, task_pks=pks[:20])
    assert result.written == 20 and result.skipped == 20
    run.refresh_from_db()
    assert run.items_done == 40 and run.status == RunStatus.RUNNING


def test_outputs_keep_text_citations_tokens_latency_and_get_their_units(runs_world, server):
    run = create(runs_world, fake_sigma(runs_world, server), repeats=1)
    task = runs_world.tasks("graded")[0]
    run_execute_chunk(run_id=run.pk, task_pks=[task.pk])
    output = Output.objects.get(run=run)
    assert output.status == OutputStatus.SUCCEEDED and output.attempts == 1
    [cited] = output.cited_chunk_ids
    assert cited in {c.chunk_id for c in task.source_chunks.all()}
    assert output.prompt_tokens > 0 and output.completion_tokens == 12
    assert output.latency_ms is not None and output.cost_usd is None
    assert Unit.objects.filter(output=output, kind="sentence").count() == 2
    [request] = server.requests
    assert request["messages"][0]["role"] == "system"
    assert "[chunk-id]" in request["messages"][0]["content"]
    assert request["messages"][-1]["content"].startswith(f"Task {task.external_id}: ")
    assert request["messages"][-1]["content"].count("\n[") == 2  # top_k = 2


@pytest.mark.parametrize("processes", [0, 2])
def test_a_runs_units_split_in_worker_processes_are_those_split_here(
    runs_world, server, settings, monkeypatch, processes
):
    settings.SEGMENT_PROCESSES = processes
    monkeypatch.setattr("runs.services.runs.RUN_SPLIT_MIN_CHARS", 0)  # every batch to the pool
    monkeypatch.setattr("runs.services.runs.WRITE_BATCH", 7)
    run = create(runs_world, fake_sigma(runs_world, server), repeats=2)
    server.script(Fault.server_error(400))  # a failed output: no units
    result = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world)[:20])
    assert (result.written, result.failed) == (40, 1)
    run.refresh_from_db()
    assert run.items_done == 40
    for output in Output.objects.filter(run=run).select_related("task"):
        stored = sorted(
            Unit.objects.filter(output=output).values_list(
                "kind", "key", "position", "text", "ref_id", "sentence_position"
            )
        )
        if output.status == OutputStatus.FAILED:
            assert stored == []
            continue
        task = output.task
        assert stored == sorted(
            (u.kind, u.key, u.position, u.text, u.ref_id, u.sentence_position)
            for u in build_units(
                output.text,
                key_element_ids=list(
                    task.key_elements.order_by("pk").values_list("element_id", flat=True)
                ),
                guidance_item_ids=list(
                    task.guidance_items.order_by("pk").values_list("item_id", flat=True)
                ),
            )
        )


def test_failed_calls_are_recorded_as_failed_outputs_with_the_reason(runs_world, server):
    run = create(runs_world, fake_sigma(runs_world, server), repeats=1, concurrency=1)
    server.script(Fault.server_error(400), Fault.invalid_json())
    result = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    assert result.written == GRADED and result.failed == 2
    failed = Output.objects.filter(run=run, status=OutputStatus.FAILED).order_by("pk")
    assert [o.error[:18] for o in failed] == ["HTTP 400: scripted", "malformed completi"]
    assert not Unit.objects.filter(output__in=failed).exists()
    run.refresh_from_db()
    assert (run.items_done, run.items_failed) == (GRADED, 2)
    assert run.status == RunStatus.COMPLETED


def test_the_budget_stops_the_run_with_its_reason(runs_world, server):
    sigma = fake_sigma(runs_world, server, model_id="gpt-4o-mini", name="priced-sigma")
    run = create(runs_world, sigma, repeats=1, concurrency=2, cost_budget_usd="0.00005")
    result = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    run.refresh_from_db()
    assert run.status == RunStatus.BUDGET_EXHAUSTED == result.status
    assert run.cost_usd >= Decimal("0.00005")
    assert run.cost_unknown_items == 0
    written = Output.objects.filter(run=run).count()
    assert written == run.items_done < GRADED and result.not_started == GRADED - written
    assert run.stop_reason.startswith("Cost budget of 0.000050 USD reached")
    assert f"{GRADED - written} item(s) not run" in run.stop_reason
    assert AuditEntry.objects.filter(action="run.budget_exhausted").count() == 1
    # a chunk delivered later does nothing
    again = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    assert again.written == 0 and Output.objects.filter(run=run).count() == written


def test_a_missing_api_key_fails_the_run_naming_the_variable(runs_world, server, monkeypatch):
    monkeypatch.delenv("FAKE_RUN_KEY", raising=False)
    sigma = fake_sigma(runs_world, server, api_key_env="FAKE_RUN_KEY")
    run = create(runs_world, sigma, repeats=1)
    result = run_execute_chunk(run_id=run.pk, task_pks=graded_pks(runs_world))
    run.refresh_from_db()
    assert result.status == run.status == RunStatus.FAILED
    assert "FAKE_RUN_KEY" in run.stop_reason and server.calls == 0


def test_starting_a_run_enqueues_chunks_that_run_to_completion(
    runs_world, server, django_capture_on_commit_callbacks
):
    run = create(runs_world, fake_sigma(runs_world, server))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        chunks = run_start(actor=runs_world.model_owner, run=run, chunk_tasks=30)
    # 65 tasks: ¼, ½ and ¾ of a chunk of 30 first (⌈7.5⌉, 15, ⌈22.5⌉: staggered), then 19
    assert [len(c) for c in chunks] == [8, 15, 23, 19] and len(callbacks) == 4
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED and run.started_at and run.finished_at
    assert Output.objects.filter(run=run).count() == GRADED * 2
    with pytest.raises(ConflictError, match="completed"):
        run_start(actor=runs_world.model_owner, run=run)


def test_starting_a_run_again_enqueues_only_unfinished_tasks(
    runs_world, server, django_capture_on_commit_callbacks
):
    run = create(runs_world, fake_sigma(runs_world, server), repeats=1)
    pks = graded_pks(runs_world)
    run_execute_chunk(run_id=run.pk, task_pks=pks[:60])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert run_start(actor=runs_world.model_owner, run=run) == [graded_pks(runs_world)[60:]]
    assert len(callbacks) == 1


def test_a_grader_may_not_start_a_run(runs_world, server):
    run = create(runs_world, fake_sigma(runs_world, server))
    with pytest.raises(PermissionDenied):
        run_start(actor=runs_world.grader, run=run)


def test_the_run_command_executes_inline_and_prints_the_summary(runs_world, server):
    from io import StringIO

    from django.core.management import call_command

    fake_sigma(runs_world, server)
    out, err = StringIO(), StringIO()
    call_command(
        "run",
        "--use-case",
        runs_world.key,
        "--configuration",
        "fake-sigma:1",
        "--task-set",
        f"{runs_world.task_set.name}:{runs_world.task_set.version}",
        "--repeats",
        "2",
        "--inline",
        stdout=out,
        stderr=err,
    )
    run = Run.objects.get()
    assert run.status == RunStatus.COMPLETED and run.items_done == GRADED * 2
    text = out.getvalue()
    assert f"= {GRADED * 2} items in 2 chunk(s) (inline)" in text
    assert (
        f"{GRADED * 2} of {GRADED * 2} done, 0 failed; cost unknown for {GRADED * 2} item(s)"
        in text
    )
    assert "items/s" in text and f"{GRADED * 2}/{GRADED * 2}" in err.getvalue()


def test_the_run_command_names_the_option_at_fault(runs_world):
    from django.core.management import CommandError, call_command

    bad_template_sigma(runs_world)
    with pytest.raises(CommandError, match=r"--configuration: .*unknown field \{borrower_name\}"):
        call_command(
            "run",
            "--use-case",
            runs_world.key,
            "--configuration",
            "bad-template:1",
            "--task-set",
            "credit-memo:1",
            "--inline",
        )
    with pytest.raises(CommandError, match="--task-set: expected NAME:VERSION"):
        call_command(
            "run",
            "--use-case",
            runs_world.key,
            "--configuration",
            "gemini-2-5:1",
            "--task-set",
            "credit-memo",
        )


def test_the_run_command_names_pieces_when_redis_hands_them_out(settings):
    from runs.management.commands.run import _parts

    settings.RUN_SLOTS_REDIS_URL = ""
    assert _parts(False) == "chunk(s)"
    settings.RUN_SLOTS_REDIS_URL = "redis://127.0.0.1:6379/8"
    assert _parts(False) == "piece(s) for the runners"
    assert _parts(True) == "chunk(s)"  # --inline executes chunks in-process, never pieces
