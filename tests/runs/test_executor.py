"""The executor against the loopback fake provider: concurrency, retries, failures, budget."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest

from demo.testing.fakellm import FakeLLMServer, Fault
from runs.executor import (
    BudgetGuard,
    ItemResult,
    ModelCallError,
    OpenAICompatibleClient,
    WorkItem,
    backoff_delay,
    client_for,
    cost_usd,
    execute,
    load_litellm,
)


@pytest.fixture(autouse=True, scope="module")
def _cost_map_loaded():
    """Import litellm's cost map once, off the clock of the timed tests (~2.5 s)."""
    load_litellm()


MESSAGES = [{"role": "user", "content": "Draft the section."}]


class InFlight:
    """Counts the calls the server is handling at once (latency starts one, the reply ends it)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()

    def start(self, number: int) -> float:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        return self.latency

    def reply(self, request: dict) -> str:
        with self.lock:
            self.now -= 1
        return "The borrower's EBITDA was $30.9 million [G1-ar24-p41]."


def items(n: int, repeats: int = 1) -> list[WorkItem]:
    return [WorkItem(task, repeat, MESSAGES) for task in range(n) for repeat in range(repeats)]


def run(server, work, *, concurrency=4, budget=None, model="fake", **options):
    client = OpenAICompatibleClient(api_base=server.base_url, model=model, concurrency=concurrency)
    batches: list[list[ItemResult]] = []
    options.setdefault("timeout_s", 5)
    options.setdefault("base_delay", 0.01)
    summary = execute(
        work,
        client=client,
        concurrency=concurrency,
        budget=budget or BudgetGuard(),
        on_batch=batches.append,
        **options,
    )
    return summary, [result for batch in batches for result in batch], batches


def test_it_runs_every_item_in_about_n_latency_over_concurrency_and_never_exceeds_it():
    counter = InFlight(latency=0.1)
    with FakeLLMServer(responder=counter.reply, latency=counter.start) as server:
        started = time.perf_counter()
        summary, results, _ = run(server, items(40), concurrency=8)
        wall = time.perf_counter() - started
    assert len(results) == 40 and all(r.ok for r in results)
    assert sorted((r.task_pk, r.repeat) for r in results) == [(i, 0) for i in range(40)]
    assert counter.most == 8
    assert 0.5 <= wall < 1.5  # ideal 40 × 0.1 / 8 = 0.5 s
    assert all(r.latency_ms >= 100 for r in results)
    assert results[0].text == "The borrower's EBITDA was $30.9 million [G1-ar24-p41]."
    assert summary.delivered == 40 and summary.not_started == 0


def test_a_concurrency_of_one_calls_one_at_a_time():
    counter = InFlight(latency=0.01)
    with FakeLLMServer(responder=counter.reply, latency=counter.start) as server:
        run(server, items(6), concurrency=1)
    assert counter.most == 1


def test_a_429_is_retried_after_the_retry_after_the_server_asked_for():
    with FakeLLMServer() as server:
        server.script(Fault.rate_limited(retry_after=0.4))
        _, results, _ = run(server, items(1), concurrency=1)
    [result] = results
    assert result.ok and result.attempts == 2
    assert server.statuses == [429, 200]
    # full jitter alone would wait at most base_delay = 0.01 s
    assert result.generation_seconds >= 0.4


def test_a_500_is_retried_and_then_succeeds():
    with FakeLLMServer() as server:
        server.script(Fault.server_error(500), Fault.server_error(503))
        _, results, _ = run(server, items(1), concurrency=1)
    assert results[0].ok and results[0].attempts == 3
    assert server.statuses == [500, 503, 200]


def test_a_hung_call_hits_the_timeout_and_is_retried():
    with FakeLLMServer() as server:
        server.script(Fault.hang())
        _, results, _ = run(server, items(1), concurrency=1, timeout_s=0.3)
        assert server.calls == 2
    assert results[0].ok and results[0].attempts == 2
    assert results[0].generation_seconds >= 0.3


def test_a_malformed_body_fails_the_item_with_the_reason_and_is_not_retried():
    with FakeLLMServer() as server:
        server.script(Fault.invalid_json(), Fault.missing_choices())
        _, results, _ = run(server, items(2), concurrency=1)
        assert server.calls == 2
    first, second = sorted(results, key=lambda r: r.task_pk)
    assert not first.ok and first.attempts == 1
    assert first.error.startswith("malformed completion: the body is not JSON")
    assert not second.ok and "no choices[0].message.content" in second.error
    assert first.text == "" and first.cost_usd is None


def test_a_400_fails_the_item_at_once_and_the_others_still_run():
    with FakeLLMServer() as server:
        server.script(Fault.server_error(400))
        _, results, _ = run(server, items(3), concurrency=1)
        assert server.calls == 3
    failed = [r for r in results if not r.ok]
    assert len(failed) == 1 and failed[0].attempts == 1
    assert failed[0].error == "HTTP 400: scripted HTTP 400"
    assert sum(r.ok for r in results) == 2


def test_an_item_that_keeps_failing_is_recorded_after_max_attempts():
    with FakeLLMServer() as server:
        server.script([Fault.server_error(502)] * 3)
        _, results, _ = run(server, items(1), concurrency=1, max_attempts=3)
    assert not results[0].ok and results[0].attempts == 3
    assert (
        results[0].error.startswith("HTTP 502") and "gave up after 3 attempts" in results[0].error
    )


def test_a_connection_error_is_retried():
    with FakeLLMServer() as server:
        base_url = server.base_url
    client = OpenAICompatibleClient(api_base=base_url, model="fake")
    got: list[ItemResult] = []
    execute(
        items(1),
        client=client,
        concurrency=1,
        timeout_s=1,
        budget=BudgetGuard(),
        on_batch=got.extend,
        max_attempts=2,
        base_delay=0.01,
    )
    assert not got[0].ok and got[0].attempts == 2
    assert got[0].error.startswith("connection error: ClientConnectorError")


def test_the_budget_stops_scheduling_and_lets_calls_in_flight_finish():
    # gpt-4o-mini is in litellm's offline cost map; each call costs a few micro-dollars.
    one_call = cost_usd("gpt-4o-mini", "openai", 3, 12)
    assert one_call is not None and one_call > 0
    with FakeLLMServer(
        responder=lambda _: "one two three four five six seven eight nine ten eleven twelve",
        latency=0.05,
    ) as server:
        budget = BudgetGuard(limit=one_call * 5)
        summary, results, _ = run(
            server, items(100), concurrency=4, budget=budget, model="gpt-4o-mini"
        )
    # 5 calls reach the budget; up to 3 more were in flight when the fifth came back.
    assert 5 <= len(results) <= 8
    assert summary.budget_exhausted and summary.not_started == 100 - len(results)
    assert budget.spent == sum(r.cost_usd for r in results)
    assert budget.spent >= budget.limit


def test_a_model_missing_from_the_cost_map_has_unknown_cost_not_zero():
    with FakeLLMServer() as server:
        budget = BudgetGuard(limit=Decimal("0.000001"))
        summary, results, _ = run(server, items(5), budget=budget, model="no-such-model-x1")
    assert all(r.ok and r.cost_usd is None for r in results)
    assert budget.unknown_items == 5 and budget.spent == 0
    assert not summary.budget_exhausted


def test_results_arrive_in_batches_of_the_batch_size():
    with FakeLLMServer() as server:
        _, results, batches = run(server, items(25), batch_size=10)
    assert [len(b) for b in batches] == [10, 10, 5]
    assert len({(r.task_pk, r.repeat) for r in results}) == 25


def test_a_smaller_batch_is_delivered_once_its_first_result_has_waited_long_enough():
    # 12 calls of 0.2 s, 2 at a time (1.2 s): batches of 50 would deliver all 12 at the end;
    # with batch_wait_s = 0.5, a batch goes once its first result is 0.5 s old — after the
    # result that arrives 0.6 s after it (three rounds of two) — so results keep arriving.
    with FakeLLMServer(latency=0.2) as server:
        _, results, batches = run(server, items(12), concurrency=2, batch_size=50, batch_wait_s=0.5)
    assert len(results) == 12
    assert len(batches) >= 2 and all(len(b) <= 8 for b in batches), [len(b) for b in batches]


def test_an_error_in_on_batch_stops_new_calls_and_propagates():
    with FakeLLMServer(latency=0.02) as server:
        client = OpenAICompatibleClient(api_base=server.base_url, model="fake")

        def broken(batch):
            raise RuntimeError("database is down")

        with pytest.raises(RuntimeError, match="database is down"):
            execute(
                items(200),
                client=client,
                concurrency=2,
                timeout_s=5,
                budget=BudgetGuard(),
                on_batch=broken,
                batch_size=2,
            )
        assert server.calls < 20


def test_full_jitter_stays_under_the_cap_and_retry_after_is_a_floor():
    delays = [backoff_delay(4, 0.5, 3.0) for _ in range(200)]
    assert all(0 <= d <= 3.0 for d in delays) and max(delays) > 1.5
    assert backoff_delay(1, 0.5, 20, retry_after=7) == 7
    assert backoff_delay(1, 0.5, 20, retry_after=60) == 20


def test_the_api_key_comes_from_the_named_environment_variable(monkeypatch):
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-test-123")
    with FakeLLMServer(responder=lambda _: "ok") as server:
        client = client_for(
            {
                "provider": "openai",
                "id": "fake",
                "api_base": server.base_url,
                "api_key_env": "FAKE_PROVIDER_KEY",
            },
            concurrency=2,
        )
        assert isinstance(client, OpenAICompatibleClient)
        assert client._headers["Authorization"] == "Bearer sk-test-123"
    monkeypatch.delenv("FAKE_PROVIDER_KEY")
    with pytest.raises(ModelCallError, match=r"FAKE_PROVIDER_KEY .* is not set"):
        client_for(
            {"provider": "openai", "id": "x", "api_key_env": "FAKE_PROVIDER_KEY"}, concurrency=1
        )


def test_timeout_seconds_is_not_sent_to_the_provider():
    with FakeLLMServer() as server:
        client = client_for(
            {
                "provider": "openai_compatible",
                "id": "fake",
                "api_base": server.base_url,
                "parameters": {"temperature": 0.2, "timeout_seconds": 30},
            },
            concurrency=1,
        )
        execute(
            items(1),
            client=client,
            concurrency=1,
            timeout_s=5,
            budget=BudgetGuard(),
            on_batch=lambda batch: None,
        )
        [request] = server.requests
    assert request["temperature"] == 0.2 and "timeout_seconds" not in request
    assert request["model"] == "fake"
