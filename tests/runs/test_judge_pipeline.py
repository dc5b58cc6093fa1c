"""The LLM judge as a continuous pipeline: its concurrency in flight all the time, scores written
in batches beside the calls, and a stop (a cancelled judging) ending the calls at once."""

from __future__ import annotations

import time

import pytest
from test_judge_llm import make_run, rubric_responder

from demo.testing.fakellm import FakeLLMServer
from runs.models import JudgeScore, Unit
from runs.services.judging import DEFAULT_CONCURRENCY, judge_get_or_create, judge_run


@pytest.fixture
def slow_judge():
    with FakeLLMServer(responder=rubric_responder, latency=0.3) as server:
        yield server


def judge_it(run, server, **options):
    return judge_run(
        actor=None,
        run=run,
        judge=judge_get_or_create(kind="llm", model_ref="openai/judge-model"),
        purpose="gated",
        api_base=server.base_url,
        backoff_base=0.01,
        **options,
    )


def test_the_judge_keeps_its_concurrency_in_flight_across_write_batches(runs_world, slow_judge):
    run = make_run(runs_world, outputs=24)
    seen: list[int] = []
    summary = judge_it(
        run,
        slow_judge,
        concurrency=6,
        batch_size=2,
        on_progress=lambda s: seen.append(s.outputs_judged),
    )
    # Writes of 2 outputs at a time never hold back the calls: 6 are in flight at once.
    assert slow_judge.max_in_flight == 6
    assert summary.complete and summary.outputs_judged == 24 and slow_judge.calls == 24
    assert JudgeScore.objects.count() == summary.scores_written
    assert summary.units_scored == Unit.objects.filter(output__run=run).count()
    # progress after every write, ending with every output judged
    assert seen[0] == 0 and seen[-1] == 24 and seen == sorted(seen) and len(seen) >= 4


def test_a_judging_that_names_no_concurrency_keeps_32_calls_in_flight(
    runs_world, slow_judge, settings
):
    del settings.JUDGE_LLM_CONCURRENCY
    assert DEFAULT_CONCURRENCY == 32
    run = make_run(runs_world, outputs=40)
    summary = judge_it(run, slow_judge)
    assert summary.outputs_judged == 40
    assert slow_judge.max_in_flight == 32


def test_the_settings_concurrency_applies_when_the_judging_names_none(
    runs_world, slow_judge, settings
):
    settings.JUDGE_LLM_CONCURRENCY = 7
    summary = judge_it(make_run(runs_world, outputs=20), slow_judge)
    assert summary.outputs_judged == 20
    assert slow_judge.max_in_flight == 7


class Stop(Exception):
    pass


def test_a_stop_between_writes_starts_no_further_call_and_keeps_what_was_written(
    runs_world, slow_judge
):
    run = make_run(runs_world, outputs=30)
    writes = []

    def progress(summary):
        writes.append(summary.outputs_judged)
        if len(writes) == 2:  # the first write of scores done: stop (as a cancellation does)
            raise Stop

    with pytest.raises(Stop):
        judge_it(run, slow_judge, concurrency=4, batch_size=2, on_progress=progress)
    time.sleep(0.2)  # a request already on the wire when the calls were abandoned lands
    calls = slow_judge.calls
    assert calls < 12  # at most the outputs received before the stop plus those in flight
    time.sleep(0.6)
    assert slow_judge.calls == calls  # nothing runs on in the background
    written = JudgeScore.objects.values("unit__output_id").distinct().count()
    assert written == writes[-1] >= 2
    # Judging again judges only what is left.
    slow_judge.reset()
    summary = judge_it(run, slow_judge, concurrency=4)
    assert summary.outputs_skipped == writes[-1]
    assert summary.outputs_judged == 30 - writes[-1] == slow_judge.calls
