"""The loopback OpenAI-compatible test server: replies, scripted faults, counts, lifecycle."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from demo.testing.fakellm import FakeLLMServer, Fault


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


def post(server: FakeLLMServer, body: object, *, timeout: float = 5.0) -> tuple[int, dict, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=data,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def chat(text: str = "Hello there, model") -> dict:
    return {"model": "fake", "messages": [{"role": "user", "content": text}]}


def test_it_answers_a_chat_completion_in_the_openai_shape_with_usage(fake_llm):
    status, _headers, body = post(fake_llm, chat("one two three"))
    reply = json.loads(body)
    assert status == 200
    assert reply["object"] == "chat.completion"
    assert reply["model"] == "fake"
    assert reply["choices"][0]["message"] == {
        "role": "assistant",
        "content": "fake reply to: one two three",
    }
    assert reply["choices"][0]["finish_reason"] == "stop"
    # Words of the messages in, words of the reply out: 3 and 6.
    assert reply["usage"] == {"prompt_tokens": 3, "completion_tokens": 6, "total_tokens": 9}


def test_the_responder_sees_the_request_and_a_dict_reply_is_sent_as_json_text(fake_llm):
    fake_llm.responder = lambda request: {"echo": request["messages"][0]["content"]}
    _, _, body = post(fake_llm, chat("ping"))
    content = json.loads(body)["choices"][0]["message"]["content"]
    assert json.loads(content) == {"echo": "ping"}


def test_it_counts_calls_and_keeps_the_request_bodies(fake_llm):
    for n in range(3):
        post(fake_llm, chat(f"call {n}"))
    assert fake_llm.calls == 3
    assert [r["messages"][0]["content"] for r in fake_llm.requests] == [
        "call 0",
        "call 1",
        "call 2",
    ]
    fake_llm.reset()
    assert fake_llm.calls == 0
    assert fake_llm.requests == []


def test_scripted_faults_are_consumed_one_per_call_in_order_then_calls_succeed(fake_llm):
    fake_llm.script(Fault.rate_limited(retry_after=2), None, Fault.server_error(503))
    statuses = [post(fake_llm, chat())[0] for _ in range(4)]
    assert statuses == [429, 200, 503, 200]
    assert fake_llm.statuses == [429, 200, 503, 200]
    assert fake_llm.pending_faults == 0


def test_a_rate_limited_call_carries_retry_after_and_an_openai_error_body(fake_llm):
    fake_llm.script(Fault.rate_limited(retry_after=1.5))
    status, headers, body = post(fake_llm, chat())
    assert status == 429
    assert headers["Retry-After"] == "1.5"
    assert json.loads(body)["error"]["type"] == "rate_limit_error"


def test_a_server_error_can_be_any_5xx_status(fake_llm):
    fake_llm.script(Fault.server_error(500), Fault.server_error(502))
    assert [post(fake_llm, chat())[0] for _ in range(2)] == [500, 502]
    with pytest.raises(ValueError, match="400–599"):
        Fault.server_error(200)


def test_malformed_bodies_are_invalid_json_or_lack_choices(fake_llm):
    fake_llm.script(Fault.invalid_json(), Fault.missing_choices())
    status, _, body = post(fake_llm, chat())
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)
    status, _, body = post(fake_llm, chat())
    reply = json.loads(body)
    assert status == 200
    assert "choices" not in reply
    assert reply["usage"]["total_tokens"] > 0


def test_a_scripted_reply_replaces_the_responder_for_one_call(fake_llm):
    fake_llm.script(Fault.reply("scripted"))
    first = json.loads(post(fake_llm, chat())[2])["choices"][0]["message"]["content"]
    second = json.loads(post(fake_llm, chat("x"))[2])["choices"][0]["message"]["content"]
    assert (first, second) == ("scripted", "fake reply to: x")


def test_a_hung_call_outlasts_the_client_timeout_and_stop_releases_it():
    server = FakeLLMServer().start()
    server.script(Fault.hang())
    started = time.monotonic()
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        post(server, chat(), timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 2
    assert post(server, chat())[0] == 200  # the hang holds one call only
    stopping = time.monotonic()
    server.stop()
    assert time.monotonic() - stopping < 3


def test_a_bounded_hang_ends_with_a_gateway_timeout(fake_llm):
    fake_llm.script(Fault.hang(seconds=0.1))
    assert post(fake_llm, chat())[0] == 504


def test_latency_is_fixed_or_a_function_of_the_call_number(fake_llm):
    fake_llm.latency = 0.15
    started = time.monotonic()
    post(fake_llm, chat())
    assert time.monotonic() - started >= 0.15
    fake_llm.latency = lambda number: 0.2 if number % 2 == 0 else 0.0
    timings = []
    for _ in range(2):  # calls 2 and 3
        started = time.monotonic()
        post(fake_llm, chat())
        timings.append(time.monotonic() - started)
    assert timings[0] >= 0.2
    assert timings[1] < 0.15


def test_a_scripted_delay_adds_to_one_call(fake_llm):
    fake_llm.script(Fault.delay(0.2))
    started = time.monotonic()
    assert post(fake_llm, chat())[0] == 200
    assert time.monotonic() - started >= 0.2


def test_concurrent_calls_are_all_counted_and_served_in_parallel(fake_llm):
    fake_llm.latency = 0.2
    fake_llm.script([Fault.server_error(503)] * 5)
    statuses: list[int] = []
    lock = threading.Lock()

    def call() -> None:
        status = post(fake_llm, chat())[0]
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=call) for _ in range(20)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    assert fake_llm.calls == 20
    assert sorted(statuses) == [200] * 15 + [503] * 5
    assert elapsed < 0.2 * 20 / 4  # served concurrently, not one after another


def test_a_responder_that_raises_gives_http_500_and_is_recorded(fake_llm):
    def broken(request: dict) -> str:
        raise KeyError("missing")

    fake_llm.responder = broken
    assert post(fake_llm, chat())[0] == 500
    assert fake_llm.responder_errors == ["KeyError('missing')"]


def test_a_request_body_that_is_not_json_gets_http_400(fake_llm):
    status, _, body = post(fake_llm, b"{not json")
    assert status == 400
    assert "not a JSON object" in json.loads(body)["error"]["message"]
    assert fake_llm.calls == 1


def test_two_servers_listen_on_different_free_loopback_ports():
    with FakeLLMServer() as first, FakeLLMServer() as second:
        assert first.port != second.port
        assert first.base_url.startswith("http://127.0.0.1:")
        assert post(first, chat())[0] == post(second, chat())[0] == 200


def test_the_base_url_is_refused_before_start_and_after_stop():
    server = FakeLLMServer()
    with pytest.raises(RuntimeError, match="not running"):
        server.base_url
    server.start()
    server.stop()
    server.stop()  # twice is harmless
    with pytest.raises(RuntimeError, match="not running"):
        server.base_url


def test_it_lists_a_model_for_clients_that_ask(fake_llm):
    with urllib.request.urlopen(f"{fake_llm.base_url}/models", timeout=5) as response:
        assert json.loads(response.read())["data"][0]["id"] == "fake"
