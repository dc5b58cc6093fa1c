"""The LLM judge against the loopback fake model server: replies, retries, refusals, storage."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from demo.testing.fakellm import FakeLLMServer, Fault
from enterpriseval.errors import ServiceError
from runs.judges.llm import (
    JudgeConfigError,
    JudgeReplyError,
    LLMJudge,
    ReplyInvalid,
    model_identity,
    parse_reply,
    render_item,
    same_model,
)
from runs.judges.rubric import (
    RUBRIC_PROMPT,
    CitedChunkUnit,
    GuidanceUnit,
    JudgeItem,
    KeyElementUnit,
    SentenceUnit,
    expected_criteria,
)
from runs.models import JudgeScore, Output, OutputStatus, Run, RunMode, RunStatus, Unit
from runs.segment import build_units
from runs.services.judging import judge_get_or_create, judge_run

ITEM = JudgeItem(
    output_text="Revenue was $421.3 million [income]. Leverage may rise.",
    task_input="Draft the financial summary.",
    sources={"income": "Revenue was $421.3 million."},
    sentences=(
        SentenceUnit("s1", "Revenue was $421.3 million.", ("income",)),
        SentenceUnit("s2", "Leverage may rise."),
    ),
    cited_chunks=(CitedChunkUnit("c1:income", "income", "s1"),),
    key_elements=(KeyElementUnit("k:ke1", "ke1", "Revenue of $421.3 million"),),
    guidance=(GuidanceUnit("g:CP-01", "CP-01", "State the accounting period."),),
)


def valid_reply(units: dict) -> dict:
    """Answer every unit the judge was shown, as a well-behaved model would."""
    return {
        "sentences": [
            {"key": s["key"], "assertive": "Y", "supported": "partially", "relevant": "Y"}
            for s in units["sentences"]
        ],
        "cited_chunks": [{"key": c["key"], "citation": "lenient"} for c in units["cited_chunks"]],
        "key_elements": [
            {"key": k["key"], "key_element": "present_correct", "rationale": "stated"}
            for k in units["key_elements"]
        ],
        "guidance": [{"key": g["key"], "flagged": "N"} for g in units["guidance"]],
    }


def rubric_responder(request: dict) -> dict:
    units = json.loads(request["messages"][1]["content"])["units"]
    return valid_reply(units)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=rubric_responder) as server:
        yield server


def judge_for(server: FakeLLMServer, **options) -> LLMJudge:
    options.setdefault("backoff_base", 0.01)
    options.setdefault("timeout", 2.0)
    return LLMJudge("judge-model", api_base=server.base_url, **options)


# -- replies ---------------------------------------------------------------------------------------


def test_a_valid_reply_gives_every_criterion_of_every_unit(fake_llm):
    result = asyncio.run(judge_for(fake_llm).ascore(ITEM))
    assert result.attempts == 1
    assert {(s.unit_key, s.criterion) for s in result.scores} == expected_criteria(ITEM)
    scores = {(s.unit_key, s.criterion): s for s in result.scores}
    assert scores[("s1", "supported")].label == "partially"
    assert scores[("s1", "supported")].score == 1.0
    assert scores[("c1:income", "citation_strict")].score == 0.0
    assert scores[("c1:income", "citation_lenient")].score == 1.0
    assert scores[("k:ke1", "key_element_captured")].rationale == "stated"
    assert result.prompt_tokens > 0
    assert result.completion_tokens > 0


def test_the_request_carries_the_rubric_prompt_the_units_and_a_json_reply_format(fake_llm):
    asyncio.run(judge_for(fake_llm, temperature=0).ascore(ITEM))
    (request,) = fake_llm.requests
    assert request["model"] == "judge-model"
    assert request["temperature"] == 0
    assert request["response_format"] == {"type": "json_object"}
    system, user = request["messages"]
    assert system == {"role": "system", "content": RUBRIC_PROMPT}
    shown = json.loads(user["content"])
    assert shown["permitted_sources"] == [{"id": "income", "text": "Revenue was $421.3 million."}]
    assert [s["key"] for s in shown["units"]["sentences"]] == ["s1", "s2"]
    assert shown["units"]["cited_chunks"][0]["cited_by_sentence"] == "s1"


def test_malformed_replies_are_retried_with_the_reason_then_succeed(fake_llm):
    fake_llm.script(Fault.reply("I think it is fine."), Fault.reply({"sentences": []}))
    result = asyncio.run(judge_for(fake_llm).ascore(ITEM))
    assert result.attempts == 3
    assert fake_llm.calls == 3
    correction = fake_llm.requests[2]["messages"][-1]["content"]
    assert correction.startswith("That reply is invalid: sentences: no answer for s1, s2")


def test_invalid_json_and_missing_choices_from_the_server_are_retried(fake_llm):
    fake_llm.script(Fault.invalid_json(), Fault.missing_choices())
    assert asyncio.run(judge_for(fake_llm).ascore(ITEM)).attempts == 3


def test_persistent_malformation_raises_naming_what_was_wrong(fake_llm):
    bad = valid_reply({"sentences": [], "cited_chunks": [], "key_elements": [], "guidance": []})
    bad["sentences"] = [
        {"key": "s1", "assertive": "Y", "supported": "mostly", "relevant": "Y"},
        {"key": "s9", "assertive": "Y", "supported": "fully", "relevant": "Y"},
    ]
    fake_llm.responder = lambda request: bad
    with pytest.raises(JudgeReplyError) as raised:
        asyncio.run(judge_for(fake_llm, max_attempts=2).ascore(ITEM))
    error = raised.value
    assert error.attempts == 2
    assert fake_llm.calls == 2
    assert "no valid reply after 2 attempt(s)" in str(error)
    assert (
        "sentences[0] (key 's1').supported: expected one of fully, partially, not, got 'mostly'"
        in error.problems
    )
    assert "sentences[1] (key 's9'): no such sentence unit" in error.problems
    assert "sentences: no answer for s2" in error.problems
    assert "cited_chunks: no answer for c1:income" in error.problems


def test_a_rate_limited_call_waits_for_retry_after_then_succeeds(fake_llm):
    fake_llm.script(Fault.rate_limited(retry_after=0.3))
    started = time.monotonic()
    result = asyncio.run(judge_for(fake_llm).ascore(ITEM))
    assert result.attempts == 2
    assert fake_llm.statuses == [429, 200]
    assert time.monotonic() - started >= 0.3


def test_server_errors_are_retried_with_backoff(fake_llm):
    fake_llm.script(Fault.server_error(500), Fault.server_error(503))
    result = asyncio.run(judge_for(fake_llm).ascore(ITEM))
    assert (result.attempts, fake_llm.statuses) == (3, [500, 503, 200])


def test_a_call_hanging_past_the_timeout_is_retried(fake_llm):
    fake_llm.script(Fault.hang())
    started = time.monotonic()
    result = asyncio.run(judge_for(fake_llm, timeout=0.3).ascore(ITEM))
    assert result.attempts == 2
    assert 0.3 <= time.monotonic() - started < 2


def test_retries_stop_after_max_attempts_with_the_last_error(fake_llm):
    fake_llm.script([Fault.server_error(503)] * 3)
    with pytest.raises(JudgeReplyError, match=r"after 3 attempt\(s\).*HTTP 503"):
        asyncio.run(judge_for(fake_llm).ascore(ITEM))
    assert fake_llm.calls == 3


def test_an_authentication_failure_is_not_retried(fake_llm):
    fake_llm.script(Fault.server_error(401))
    with pytest.raises(JudgeReplyError, match="not retried") as raised:
        asyncio.run(judge_for(fake_llm).ascore(ITEM))
    assert raised.value.attempts == 1
    assert fake_llm.calls == 1


def test_many_outputs_are_judged_concurrently_within_the_bound(fake_llm):
    fake_llm.latency = 0.2
    started = time.monotonic()
    results = asyncio.run(judge_for(fake_llm).ascore_many([ITEM] * 8, concurrency=4))
    elapsed = time.monotonic() - started
    assert len(results) == 8
    # Four at a time, never more: the server saw the bound reached (not eight one after
    # another, not eight at once); the calls took at least two waves of 0.2 s. No upper bound
    # on wall time: a loaded CI runner is slow, and speed is measured in `make bench`.
    assert fake_llm.max_in_flight == 4
    assert elapsed >= 0.4


def test_an_unset_api_key_variable_is_a_configuration_error(fake_llm, monkeypatch):
    monkeypatch.delenv("JUDGE_TEST_KEY", raising=False)
    judge = judge_for(fake_llm, api_key_env="JUDGE_TEST_KEY")
    with pytest.raises(JudgeConfigError, match="JUDGE_TEST_KEY is unset"):
        asyncio.run(judge.ascore(ITEM))
    assert fake_llm.calls == 0


def test_an_openai_compatible_base_url_routes_through_the_openai_provider():
    assert LLMJudge("llama-4", api_base="http://127.0.0.1:1/v1").litellm_model == "openai/llama-4"
    assert LLMJudge("openai/x", api_base="http://127.0.0.1:1/v1").litellm_model == "openai/x"
    assert LLMJudge("anthropic/claude-sonnet-4").litellm_model == "anthropic/claude-sonnet-4"


# -- strict reply parsing --------------------------------------------------------------------------


def reply_text() -> str:
    """A valid reply to ITEM, as JSON text."""
    units = json.loads(render_item(ITEM))["units"]
    return json.dumps(valid_reply(units))


def problems_of(text: str) -> list[str]:
    with pytest.raises(ReplyInvalid) as raised:
        parse_reply(text, ITEM)
    return raised.value.problems


def test_a_reply_in_a_code_fence_with_other_letter_case_is_accepted():
    reply = json.loads(reply_text())
    reply["sentences"][0]["supported"] = "Fully"
    answers = parse_reply(f"```json\n{json.dumps(reply)}\n```", ITEM)
    assert len(answers) == 2 * 3 + 1 + 1 + 1
    assert answers[1].label == "fully"


def test_a_unit_answered_twice_is_refused():
    reply = json.loads(reply_text())
    reply["guidance"].append({"key": "g:CP-01", "flagged": "Y"})
    assert problems_of(json.dumps(reply)) == [
        "guidance[1] (key 'g:CP-01'): answered more than once"
    ]


def test_unknown_fields_and_sections_are_refused():
    reply = json.loads(reply_text())
    reply["verdict"] = "ok"
    reply["key_elements"][0]["confidence"] = 0.9
    assert problems_of(json.dumps(reply)) == [
        "unknown top-level field 'verdict'",
        "key_elements[0] (key 'k:ke1'): unknown field 'confidence'",
    ]


def test_a_missing_section_a_non_list_and_a_non_object_reply_are_refused():
    reply = json.loads(reply_text())
    del reply["cited_chunks"]
    reply["guidance"] = {"g:CP-01": "N"}
    assert problems_of(json.dumps(reply)) == [
        "cited_chunks: missing (expected 1 unit(s))",
        "guidance: must be a list, got dict",
    ]
    assert problems_of("[]") == ["the reply must be a JSON object, got list"]
    assert problems_of("") == ["the reply is empty"]


def test_a_rationale_is_kept_short_and_without_nul_characters():
    reply = json.loads(reply_text())
    reply["sentences"][0]["rationale"] = "cites\u0000 the term sheet " + "x" * 600
    answers = parse_reply(json.dumps(reply), ITEM)
    assert answers[0].rationale.startswith("cites the term sheet x")
    assert len(answers[0].rationale) == 500


def test_a_section_may_be_left_out_when_the_output_has_no_such_units():
    item = JudgeItem(output_text="x", task_input="y", sentences=(SentenceUnit("s1", "x"),))
    text = json.dumps(
        {"sentences": [{"key": "s1", "assertive": "N", "supported": "not", "relevant": "N"}]}
    )
    assert [a.label for a in parse_reply(text, item)] == ["N", "not", "N"]


# -- which model is it -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("judge", "sigma", "same"),
    [
        ("openai/gpt-4o", "openai/gpt-4o", True),
        ("gpt-4o", "openai/gpt-4o", True),
        ("azure/GPT-4o", "openai/gpt-4o", True),
        ("vertex_ai/gemini-2.5-pro", "gemini/gemini-2.5-pro", True),
        ("bedrock/anthropic.claude-sonnet-4-v1:0", "anthropic/claude-sonnet-4", True),
        ("together_ai/meta-llama/llama-4-maverick", "groq/llama-4-maverick", True),
        ("gpt-4o-mini", "openai/gpt-4o", False),
        ("anthropic/claude-sonnet-4", "gemini/gemini-2.5-pro", False),
    ],
)
def test_models_are_compared_without_their_host_prefixes(judge, sigma, same):
    assert same_model(judge, sigma) is same
    assert model_identity("openai/gpt-4o") == "gpt-4o"


# -- through the service, stored -------------------------------------------------------------------


def make_run(world, *, outputs: int = 3) -> Run:
    run = Run.objects.create(
        use_case=world.use_case,
        configuration=world.configuration,
        task_set=world.task_set,
        split="graded",
        mode=RunMode.IMPORTED,
        status=RunStatus.COMPLETED,
        created_by=world.model_owner,
    )
    for task in world.tasks("graded")[:outputs]:
        sources = [chunk.chunk_id for chunk in task.source_chunks.all()]
        text = " ".join(
            f"{element.text} [{sources[n % len(sources)]}]."
            for n, element in enumerate(task.key_elements.all())
        )
        output = Output.objects.create(
            run=run, task=task, repeat_index=0, status=OutputStatus.SUCCEEDED, text=text
        )
        specs = build_units(
            text,
            key_element_ids=[e.element_id for e in task.key_elements.all()],
            guidance_item_ids=[g.item_id for g in task.guidance_items.all()],
        )
        Unit.objects.bulk_create(
            Unit(
                output=output,
                kind=s.kind,
                key=s.key,
                position=s.position,
                text=s.text,
                ref_id=s.ref_id,
                sentence_position=s.sentence_position,
            )
            for s in specs
        )
    return run


def test_valid_replies_are_stored_for_every_unit_of_every_output(runs_world, fake_llm):
    run = make_run(runs_world, outputs=3)
    judge = judge_get_or_create(kind="llm", model_ref="openai/judge-model")
    summary = judge_run(
        actor=runs_world.model_owner,
        run=run,
        judge=judge,
        purpose="gated",
        api_base=fake_llm.base_url,
        backoff_base=0.01,
    )
    units = Unit.objects.filter(output__run=run)
    assert summary.complete
    assert (summary.outputs_judged, summary.llm_calls, fake_llm.calls) == (3, 3, 3)
    assert summary.units_scored == units.count()
    stored = JudgeScore.objects.filter(judge=judge)
    assert stored.count() == summary.scores_written
    assert stored.filter(criterion="supported", label="partially", score=1.0).count() == (
        units.filter(kind="sentence").count()
    )
    assert summary.prompt_tokens > 0


def test_an_output_whose_replies_stay_malformed_is_reported_and_judged_on_the_next_call(
    runs_world, fake_llm
):
    run = make_run(runs_world, outputs=3)
    victim = Output.objects.filter(run=run).order_by("pk").first()

    def responder(request: dict) -> dict:
        shown = json.loads(request["messages"][1]["content"])
        if shown["output"] == victim.text:
            return {"sentences": []}
        return valid_reply(shown["units"])

    fake_llm.responder = responder
    judge = judge_get_or_create(kind="llm", model_ref="judge-model")
    first = judge_run(
        actor=None,
        run=run,
        judge=judge,
        purpose="informational",
        api_base=fake_llm.base_url,
        backoff_base=0.01,
        max_attempts=2,
    )
    assert (first.outputs_judged, first.outputs_failed, first.complete) == (2, 1, False)
    assert first.failures[0]["output_id"] == victim.pk
    assert "sentences: no answer for s1" in first.failures[0]["error"]
    assert not JudgeScore.objects.filter(unit__output=victim).exists()

    fake_llm.responder = rubric_responder
    fake_llm.reset()
    second = judge_run(
        actor=None,
        run=run,
        judge=judge,
        purpose="informational",
        api_base=fake_llm.base_url,
        backoff_base=0.01,
    )
    assert (second.outputs_judged, second.outputs_skipped, fake_llm.calls) == (1, 2, 1)
    assert second.complete


def test_a_judge_on_the_systems_own_model_is_refused_for_a_gated_metric(runs_world, fake_llm):
    run = make_run(runs_world, outputs=1)
    judge = judge_get_or_create(kind="llm", model_ref="vertex_ai/gemini-2.5-pro")
    with pytest.raises(ServiceError) as raised:
        judge_run(
            actor=runs_world.model_owner,
            run=run,
            judge=judge,
            purpose="gated",
            api_base=fake_llm.base_url,
        )
    message = raised.value.message
    assert "vertex_ai/gemini-2.5-pro" in message
    assert "gemini/gemini-2.5-pro" in message
    assert "never grades itself" in message
    assert raised.value.field == "judge"
    assert fake_llm.calls == 0
    assert not JudgeScore.objects.exists()


def test_a_judge_on_the_systems_own_model_may_score_an_informational_metric(runs_world, fake_llm):
    run = make_run(runs_world, outputs=1)
    judge = judge_get_or_create(kind="llm", model_ref="gemini-2.5-pro")
    summary = judge_run(
        actor=runs_world.model_owner,
        run=run,
        judge=judge,
        purpose="informational",
        api_base=fake_llm.base_url,
    )
    assert summary.self_graded
    assert summary.outputs_judged == 1
