"""A loopback OpenAI-compatible chat-completions server for tests, benchmarks and demos.

:class:`FakeLLMServer` serves ``POST /v1/chat/completions`` (and ``GET /v1/models``) on
``127.0.0.1`` at a free port, from an aiohttp application running in a background thread, so
synchronous tests and Celery tasks can call it through litellm or any OpenAI client::

    with FakeLLMServer(responder=lambda request: {"answer": 42}) as server:
        server.script(Fault.rate_limited(retry_after=0.1), None, Fault.invalid_json())
        litellm.completion(model="openai/fake", api_base=server.base_url, api_key="x", ...)

The responder maps the request body (a dict) to the message content: a string is sent as is,
a dict or list is sent as its JSON text. Faults are scripted per call, in order, and consumed
one per request (``None`` in a script means "answer normally"); once the script is used up
every call is answered normally. A fixed or per-call latency applies to every call.
Everything the server received is counted and kept (:attr:`calls`, :attr:`requests`), and
so are the requests being answered at once (:attr:`in_flight`, :attr:`max_in_flight`).

Never used by the product: it stands in for a model provider in tests only.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

Responder = Callable[[dict[str, Any]], "str | dict[str, Any] | list[Any]"]
Latency = float | Callable[[int], float]
FaultKind = Literal["delay", "status", "hang", "invalid_json", "missing_choices", "reply"]

_STATUS_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


@dataclass(frozen=True)
class Fault:
    """What the server does to one call instead of (or before) answering normally."""

    kind: FaultKind
    seconds: float = 0.0
    status: int = 200
    retry_after: float | None = None
    content: str | dict[str, Any] | list[Any] | None = None

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Answer normally after ``seconds`` (added to the server's latency)."""
        return cls("delay", seconds=_non_negative(seconds, "seconds"))

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0) -> Fault:
        """Answer HTTP 429 with a ``Retry-After`` header (seconds; omitted if ``None``)."""
        return cls("status", status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """Answer an HTTP error status (500, 502, 503, ... or any 4xx) with an error body."""
        if not 400 <= status <= 599:
            raise ValueError(f"status must be an HTTP error status 400–599, got {status}")
        return cls("status", status=status)

    @classmethod
    def hang(cls, seconds: float | None = None) -> Fault:
        """Answer nothing for ``seconds`` (``None``: until the server stops), then HTTP 504."""
        return cls("hang", seconds=-1.0 if seconds is None else _non_negative(seconds, "seconds"))

    @classmethod
    def invalid_json(cls) -> Fault:
        """Answer HTTP 200 with a body that is not JSON."""
        return cls("invalid_json")

    @classmethod
    def missing_choices(cls) -> Fault:
        """Answer HTTP 200 with a JSON completion that has no ``choices``."""
        return cls("missing_choices")

    @classmethod
    def reply(cls, content: str | dict[str, Any] | list[Any]) -> Fault:
        """Answer normally but with ``content`` instead of the responder's."""
        return cls("reply", content=content)


def default_responder(request: dict[str, Any]) -> str:
    """Return a short reply that quotes the last user message."""
    messages = request.get("messages") or []
    last = next(
        (m.get("content") for m in reversed(messages) if isinstance(m, dict) and m.get("role")),
        "",
    )
    return f"fake reply to: {str(last)[:80]}"


class FakeLLMServer:
    """A loopback OpenAI-compatible chat-completions server in a background thread.

    Parameters
    ----------
    responder
        Maps the request body to the message content (``str``, or ``dict``/``list`` sent as
        JSON text). Defaults to :func:`default_responder`. May be replaced while running.
    latency
        Seconds to wait before every answer: a number, or a function of the 1-based call
        number. May be replaced while running.
    host
        Interface to bind; loopback by default.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: Latency = 0.0,
        host: str = "127.0.0.1",
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency: Latency = latency
        self.host = host
        self.port: int | None = None
        self._lock = threading.Lock()
        self._script: collections.deque[Fault | None] = collections.deque()
        self._calls = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._requests: list[dict[str, Any]] = []
        self._statuses: list[int] = []
        self._errors: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """Return the OpenAI-style base URL, ``http://127.0.0.1:<port>/v1``."""
        if self.port is None:
            raise RuntimeError("FakeLLMServer is not running: call start() or use `with`")
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> FakeLLMServer:
        """Start serving and return ``self`` once the port accepts connections."""
        if self._thread is not None:
            raise RuntimeError("FakeLLMServer is already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        ready = threading.Event()
        failure: list[BaseException] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready, failure), name="fakellm", daemon=True
        )
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError(f"FakeLLMServer did not start within {timeout} s")
        if failure:
            raise RuntimeError(f"FakeLLMServer failed to start: {failure[0]!r}") from failure[0]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving; hung calls are released. Safe to call twice."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        loop.close()
        self._loop = self._thread = self._runner = None
        self.port = None

    # -- scripting and inspection ----------------------------------------------------------

    def script(self, *faults: Fault | Iterable[Fault | None] | None) -> None:
        """Append faults for the next calls, one per call, in order (``None``: answer normally)."""
        flat: list[Fault | None] = []
        for fault in faults:
            if fault is None or isinstance(fault, Fault):
                flat.append(fault)
            else:
                flat.extend(fault)
        for fault in flat:
            if fault is not None and not isinstance(fault, Fault):
                raise TypeError(f"script() takes Fault or None items, got {fault!r}")
        with self._lock:
            self._script.extend(flat)

    def reset(self) -> None:
        """Forget the script and everything received."""
        with self._lock:
            self._script.clear()
            self._calls = 0
            self._max_in_flight = self._in_flight
            self._requests.clear()
            self._statuses.clear()
            self._errors.clear()

    @property
    def calls(self) -> int:
        """Return how many chat-completion requests the server has received."""
        with self._lock:
            return self._calls

    @property
    def in_flight(self) -> int:
        """Return how many chat-completion requests are being answered now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """Return the most chat-completion requests answered at one time (since reset)."""
        with self._lock:
            return self._max_in_flight

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Return the request bodies received, in order of arrival."""
        with self._lock:
            return list(self._requests)

    @property
    def statuses(self) -> list[int]:
        """Return the HTTP statuses answered (a hung call counts when it is released)."""
        with self._lock:
            return list(self._statuses)

    @property
    def responder_errors(self) -> list[str]:
        """Return the exceptions the responder raised (each answered with HTTP 500)."""
        with self._lock:
            return list(self._errors)

    @property
    def pending_faults(self) -> int:
        """Return how many scripted faults have not been consumed yet."""
        with self._lock:
            return len(self._script)

    # -- serving ---------------------------------------------------------------------------

    def _serve(
        self, sock: socket.socket, ready: threading.Event, failure: list[BaseException]
    ) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._setup(sock))
        except BaseException as error:  # reported to start()
            failure.append(error)
            ready.set()
            return
        ready.set()
        loop.run_forever()

    async def _setup(self, sock: socket.socket) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_post("/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.SockSite(self._runner, sock)
        await site.start()

    async def _shutdown(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def _next_call(self, body: dict[str, Any]) -> tuple[int, Fault | None]:
        with self._lock:
            self._calls += 1
            self._requests.append(body)
            fault = self._script.popleft() if self._script else None
            return self._calls, fault

    def _record_status(self, status: int) -> None:
        with self._lock:
            self._statuses.append(status)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            return await self._answer(request)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
        except ValueError as error:
            self._next_call({"_invalid_body": raw.decode("utf-8", "replace")})
            return self._error(400, f"request body is not a JSON object: {error}")
        number, fault = self._next_call(body)
        latency = self.latency(number) if callable(self.latency) else self.latency
        if fault is not None and fault.kind == "delay":
            latency += fault.seconds
        if fault is not None and fault.kind == "hang":
            return await self._hang(fault.seconds)
        if latency > 0:
            await asyncio.sleep(latency)
        if fault is not None and fault.kind == "status":
            return self._error(fault.status, f"scripted HTTP {fault.status}", fault.retry_after)
        if fault is not None and fault.kind == "invalid_json":
            self._record_status(200)
            return web.Response(
                status=200,
                text='{"id": "chatcmpl-broken", "choices": [',
                content_type="application/json",
            )
        content: Any
        if fault is not None and fault.kind == "reply":
            content = fault.content
        else:
            try:
                content = self.responder(body)
            except Exception as error:  # a bug in a test's responder: report it, answer 500
                with self._lock:
                    self._errors.append(repr(error))
                return self._error(500, f"responder raised {error!r}")
        text = content if isinstance(content, str) else json.dumps(content)
        completion = _completion(number, body, text)
        if fault is not None and fault.kind == "missing_choices":
            del completion["choices"]
        self._record_status(200)
        return web.json_response(completion)

    async def _hang(self, seconds: float) -> web.Response:
        assert self._stopping is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), None if seconds < 0 else seconds)
        return self._error(504, "scripted hang ended")

    def _error(self, status: int, message: str, retry_after: float | None = None) -> web.Response:
        self._record_status(status)
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        kind = _STATUS_TYPES.get(status, "server_error" if status >= 500 else "invalid_request")
        return web.json_response(
            {"error": {"message": message, "type": kind, "param": None, "code": str(status)}},
            status=status,
            headers=headers,
        )


def _completion(number: int, request: dict[str, Any], text: str) -> dict[str, Any]:
    prompt_tokens = sum(
        len(str(message.get("content", "")).split())
        for message in request.get("messages") or []
        if isinstance(message, dict)
    )
    completion_tokens = len(text.split())
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model", "fake")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _non_negative(value: float, name: str) -> float:
    if value < 0:
        raise ValueError(f"{name} must be ≥ 0, got {value}")
    return float(value)
