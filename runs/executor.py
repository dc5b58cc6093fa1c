"""Call a model for many work items at once: bounded concurrency, retries, budget, batches.

Pure asyncio, no Django import. :func:`execute` runs the asyncio loop in a helper thread and
hands the results to ``on_batch`` in the caller's thread, ``batch_size`` at a time, so the
caller may write them with the Django ORM (which refuses to run inside an event loop) while
the next calls are in flight.

Failure handling, per item:

- HTTP 429 (honouring ``Retry-After``), 408, 5xx, timeouts and connection errors are retried
  with exponential backoff and full jitter: the n-th retry waits a uniform random time in
  [0, min(max_delay, base_delay · 2^(n−1))] (Brooks 2015, "Exponential backoff and jitter"),
  or the server's ``Retry-After`` if longer (capped at ``max_delay``), up to ``max_attempts``
  attempts in all.
- Any other 4xx, and a 200 whose body is not a chat completion, fail the item at once:
  repeating the same request gives the same answer and may be billed again.
- A failed item is an :class:`ItemResult` with ``ok=False`` and the reason; nothing is dropped.

Budget: :class:`BudgetGuard` stops the scheduling of new items once the known cost reaches
the budget; items already in flight finish and are delivered. Items whose cost is unknown
(a model missing from litellm's offline cost map) add nothing to the known cost and are
counted apart: ``cost_usd`` is ``None``, never 0.

Clients: :class:`OpenAICompatibleClient` (one aiohttp session, its connector sized to the
concurrency; the fast path for ``openai``/``openai_compatible`` providers and any σ with
``model.api_base``) and :class:`LiteLLMClient` (``litellm.acompletion``, for other providers).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import queue
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol

import aiohttp

from runs.slots import SlotLimiter

Message = Mapping[str, str]
OPENAI_PROVIDERS = frozenset({"openai", "openai_compatible"})
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
DEFAULT_TIMEOUT_S = 120.0
# σ parameters that steer the harness, not the model: never sent to the provider.
HARNESS_PARAMETERS = frozenset({"timeout_seconds"})


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One model call to make: a task at one repeat, with its chat messages."""

    task_pk: int
    repeat: int
    messages: Sequence[Message]


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What came of one work item; ``cost_usd`` is ``None`` when unknown (never 0 for that)."""

    task_pk: int
    repeat: int
    ok: bool
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: Decimal | None
    latency_ms: int | None
    generation_seconds: float | None
    attempts: int
    error: str


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer to one call."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: Decimal | None


class ModelCallError(Exception):
    """A call that failed; ``retryable`` says whether trying again may help."""

    def __init__(self, reason: str, *, retryable: bool, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


class ModelClient(Protocol):
    """Something that answers chat messages; used from one event loop at a time."""

    async def complete(self, messages: Sequence[Message]) -> Completion:
        """Return the model's completion or raise ModelCallError."""
        ...

    async def aclose(self) -> None:
        """Release connections; the client may be used again afterwards."""
        ...


#: Runs a function in the thread that called :func:`execute` (where the database may be
#: used) and awaits its result from the event loop.
InCaller = Callable[[Callable[[], Any]], Awaitable[Any]]


class ItemFeed(Protocol):
    """Work items handed out on demand (a run's pieces taken as its calls need them,
    :mod:`runs.services.runs`): ``take`` returns the next item, or None when none is left,
    and may read the database through ``in_caller``; ``left`` counts the items not handed
    out. ``take`` is awaited by many calls at once, all in the event loop's thread."""

    async def take(self, in_caller: InCaller) -> WorkItem | None:
        """Return the next item, or None when none is left."""
        ...

    def left(self) -> int:
        """Return how many items were not handed out (after the calls have ended)."""
        ...


class _IterableFeed:
    """An :class:`ItemFeed` over an iterable, taken in the event loop's thread."""

    def __init__(self, items: Iterable[WorkItem]) -> None:
        self._items = iter(items)

    async def take(self, in_caller: InCaller) -> WorkItem | None:
        return next(self._items, None)

    def left(self) -> int:
        return sum(1 for _ in self._items)


@dataclass(frozen=True)
class _CallerJob:
    """A function the event loop asks the calling thread to run (:data:`InCaller`)."""

    function: Callable[[], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop

    def run(self) -> None:
        try:
            value = self.function()
        except BaseException as error:  # handed to the awaiting coroutine
            self.answer(error)
        else:
            self._post(value, None)

    def answer(self, error: BaseException) -> None:
        self._post(None, error)

    def _post(self, value: Any, error: BaseException | None) -> None:
        # The loop may have ended meanwhile (its calls cancelled): nobody awaits the answer.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._settle, value, error)

    def _settle(self, value: Any, error: BaseException | None) -> None:
        if self.future.done():  # the awaiting coroutine was cancelled
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(value)


async def _run_here(function: Callable[[], Any]) -> Any:
    """:data:`InCaller` of :func:`execute_async` called directly: run in this thread."""
    return function()


@dataclass
class BudgetGuard:
    """Known spend against an optional budget in US dollars, and the items of unknown cost."""

    limit: Decimal | None = None
    spent: Decimal = Decimal(0)
    unknown_items: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def exhausted(self) -> bool:
        """Return whether the known spend has reached the budget."""
        with self._lock:
            return self.limit is not None and self.spent >= self.limit

    def add(self, result: ItemResult) -> None:
        """Count one finished item."""
        with self._lock:
            if result.cost_usd is not None:
                self.spent += result.cost_usd
            elif result.ok:
                self.unknown_items += 1

    def sync(self, spent: Decimal) -> None:
        """Raise the known spend to ``spent`` (what other workers of the run have spent)."""
        with self._lock:
            self.spent = max(self.spent, spent)


@dataclass(frozen=True, slots=True)
class ExecutionSummary:
    """What :func:`execute` did: results delivered, items never started, whether stopped."""

    delivered: int
    not_started: int
    budget_exhausted: bool
    wall_seconds: float


# -- cost -------------------------------------------------------------------------------------

_unknown_models: set[str] = set()


def cost_usd(
    model: str, provider: str | None, prompt_tokens: int | None, completion_tokens: int | None
) -> Decimal | None:
    """Return the cost of one call from litellm's offline cost map; ``None`` when unknown.

    Unknown means: the token counts are missing or the model is not in the map. Needs
    ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (set here if unset) so no price list is fetched.
    """
    if prompt_tokens is None or completion_tokens is None:
        return None
    key = f"{provider}/{model}"
    if key in _unknown_models:
        return None
    litellm = load_litellm()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model,
            custom_llm_provider=provider,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
    except Exception:  # litellm raises a bare Exception for a model it has no price for
        _unknown_models.add(key)
        return None
    return Decimal(repr(float(prompt_cost) + float(completion_cost)))


def load_litellm() -> Any:
    """Import litellm with the offline cost map (~2.5 s the first time in a process)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def api_key_from_env(variable: str | None) -> str | None:
    """Return the API key from the environment variable σ names; ``None`` if σ names none.

    Raises ModelCallError (not retryable) when the variable is named but unset.
    """
    if not variable:
        return None
    value = os.environ.get(variable)
    if not value:
        raise ModelCallError(
            f"the environment variable {variable} (σ model.api_key_env) is not set in the "
            "process that calls the model",
            retryable=False,
        )
    return value


# -- clients ----------------------------------------------------------------------------------


class OpenAICompatibleClient:
    """POST /chat/completions through one aiohttp session (the fast path, RECIPES.md)."""

    def __init__(
        self,
        *,
        api_base: str,
        model: str,
        api_key: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        concurrency: int = 8,
        pricing_model: str | None = None,
        pricing_provider: str | None = "openai",
    ) -> None:
        self.url = api_base.rstrip("/") + "/chat/completions"
        self.model = model
        self.parameters = {
            k: v for k, v in (parameters or {}).items() if k not in HARNESS_PARAMETERS
        }
        self.concurrency = concurrency
        self.pricing_model = pricing_model or model
        self.pricing_provider = pricing_provider
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        load_litellm()  # the cost map: imported now, not on the clock of the first call

    async def complete(self, messages: Sequence[Message]) -> Completion:
        """Return the completion of ``messages`` or raise ModelCallError."""
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=0)
            self._session = aiohttp.ClientSession(connector=connector, headers=self._headers)
        body = {"model": self.model, "messages": list(messages), **self.parameters}
        try:
            async with self._session.post(self.url, json=body) as response:
                raw = await response.read()
                status = response.status
                retry_after = _retry_after(response.headers.get("Retry-After"))
        except aiohttp.ClientError as error:
            raise ModelCallError(
                f"connection error: {type(error).__name__}: {error}", retryable=True
            ) from error
        if status != 200:
            raise ModelCallError(
                f"HTTP {status}: {_error_message(raw)}",
                retryable=status in RETRYABLE_STATUSES or status >= 500,
                retry_after=retry_after,
            )
        text, prompt_tokens, completion_tokens = _parse_completion(raw)
        return Completion(
            text,
            prompt_tokens,
            completion_tokens,
            cost_usd(self.pricing_model, self.pricing_provider, prompt_tokens, completion_tokens),
        )

    async def aclose(self) -> None:
        """Close the session (a later call opens a new one)."""
        if self._session is not None:
            await self._session.close()
            self._session = None


class LiteLLMClient:
    """``litellm.acompletion`` for providers other than OpenAI-compatible endpoints."""

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        api_key: str | None = None,
        api_base: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.api_key = api_key
        self.api_base = api_base
        self.parameters = {
            k: v for k, v in (parameters or {}).items() if k not in HARNESS_PARAMETERS
        }
        load_litellm()

    async def complete(self, messages: Sequence[Message]) -> Completion:
        """Return the completion of ``messages`` or raise ModelCallError."""
        litellm = load_litellm()
        extra = {"api_key": self.api_key} if self.api_key else {}
        if self.api_base:
            extra["api_base"] = self.api_base
        try:
            response = await litellm.acompletion(
                model=f"{self.provider}/{self.model}",
                messages=list(messages),
                num_retries=0,  # the executor retries, with its own backoff
                **extra,
                **self.parameters,
            )
        except Exception as error:
            raise _litellm_error(error) from error
        try:
            text = response.choices[0].message.content or ""
            usage = getattr(response, "usage", None)
            prompt_tokens = getattr(usage, "prompt_tokens", None)
            completion_tokens = getattr(usage, "completion_tokens", None)
        except (AttributeError, IndexError, TypeError) as error:
            raise ModelCallError(
                f"malformed completion: {type(error).__name__}: {error}", retryable=False
            ) from error
        return Completion(
            text,
            prompt_tokens,
            completion_tokens,
            cost_usd(self.model, self.provider, prompt_tokens, completion_tokens),
        )

    async def aclose(self) -> None:
        """Nothing to release: litellm keeps its own connection pools."""


def client_for(model: Mapping[str, Any], *, concurrency: int) -> ModelClient:
    """Return the client for σ.model: the aiohttp fast path where the endpoint is OpenAI-like.

    Reads the API key from the environment variable σ names (``model.api_key_env``); the
    key is held in memory by the client only.
    """
    provider = str(model["provider"])
    model_id = str(model["id"])
    api_base = model.get("api_base")
    api_key = api_key_from_env(model.get("api_key_env"))
    parameters = model.get("parameters") or {}
    if provider in OPENAI_PROVIDERS or api_base:
        return OpenAICompatibleClient(
            api_base=str(api_base or "https://api.openai.com/v1"),
            model=model_id,
            api_key=api_key,
            parameters=parameters,
            concurrency=concurrency,
            pricing_provider="openai" if provider in OPENAI_PROVIDERS else provider,
        )
    return LiteLLMClient(provider=provider, model=model_id, api_key=api_key, parameters=parameters)


def timeout_for(model: Mapping[str, Any]) -> float:
    """Return σ's per-call timeout (``model.parameters.timeout_seconds``) or the default."""
    value = (model.get("parameters") or {}).get("timeout_seconds")
    return float(value) if value else DEFAULT_TIMEOUT_S


# -- the loop ---------------------------------------------------------------------------------


def execute(
    items: Iterable[WorkItem] | ItemFeed,
    *,
    client: ModelClient,
    concurrency: int,
    timeout_s: float,
    budget: BudgetGuard,
    on_batch: Callable[[list[ItemResult]], None],
    max_attempts: int = 5,
    base_delay: float = 0.5,
    max_delay: float = 20.0,
    batch_size: int = 50,
    slots: Callable[[], AbstractAsyncContextManager[SlotLimiter]] | None = None,
    batch_wait_s: float | None = None,
) -> ExecutionSummary:
    """Call the model for every item, at most ``concurrency`` at a time; deliver the results.

    ``items`` is an iterable (consumed in the event loop's thread) or an :class:`ItemFeed`
    that hands items out as the calls need them.

    ``on_batch`` runs in the calling thread with up to ``batch_size`` results each time (and,
    with ``batch_wait_s``, with fewer once the oldest has waited that long for a result to
    arrive with: slow calls still show progress and a lost worker loses little),
    while later calls are in flight. If it raises, no new item is started, the items in
    flight finish (their results are not delivered) and the exception propagates.
    ``slots``, when given, makes the limiter (entered inside the event loop) that every call
    must also take a slot from: the run's concurrency shared with other processes
    (:class:`runs.slots.RedisSlots`).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be ≥ 1, got {max_attempts}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
    batches: queue.Queue[list[ItemResult] | BaseException | _CallerJob | None] = queue.Queue()
    stop = threading.Event()
    outcome: list[ExecutionSummary] = []

    async def in_caller(function: Callable[[], Any]) -> Any:
        loop = asyncio.get_running_loop()
        job = _CallerJob(function, loop.create_future(), loop)
        batches.put(job)
        return await job.future

    def run_loop() -> None:
        try:
            outcome.append(
                asyncio.run(
                    execute_async(
                        items,
                        client=client,
                        concurrency=concurrency,
                        timeout_s=timeout_s,
                        budget=budget,
                        on_batch=batches.put,
                        max_attempts=max_attempts,
                        base_delay=base_delay,
                        max_delay=max_delay,
                        batch_size=batch_size,
                        batch_wait_s=batch_wait_s,
                        stop=stop,
                        slots=slots,
                        in_caller=in_caller,
                    )
                )
            )
        except BaseException as error:
            batches.put(error)
        finally:
            batches.put(None)

    thread = threading.Thread(target=run_loop, name="executor-loop", daemon=True)
    thread.start()
    failure: BaseException | None = None
    while (batch := batches.get()) is not None:
        if isinstance(batch, _CallerJob):
            if failure is None:
                batch.run()
            else:
                batch.answer(RuntimeError("the execution is stopping"))
        elif isinstance(batch, BaseException):
            failure = failure or batch
        elif failure is None:
            try:
                on_batch(batch)
            except BaseException as error:
                failure = error
                stop.set()
    thread.join()
    if failure is not None:
        raise failure
    return outcome[0]


async def execute_async(
    items: Iterable[WorkItem] | ItemFeed,
    *,
    client: ModelClient,
    concurrency: int,
    timeout_s: float,
    budget: BudgetGuard,
    on_batch: Callable[[list[ItemResult]], None],
    max_attempts: int = 5,
    base_delay: float = 0.5,
    max_delay: float = 20.0,
    batch_size: int = 50,
    batch_wait_s: float | None = None,
    stop: threading.Event | None = None,
    slots: Callable[[], AbstractAsyncContextManager[SlotLimiter]] | None = None,
    in_caller: InCaller = _run_here,
) -> ExecutionSummary:
    """The event-loop half of :func:`execute`; ``on_batch`` runs inside the loop here, and
    ``in_caller`` runs a feed's reads (in :func:`execute`: in the calling thread)."""
    started = time.perf_counter()
    feed: ItemFeed = items if hasattr(items, "take") else _IterableFeed(items)  # type: ignore[arg-type]
    buffer: list[ItemResult] = []
    oldest = 0.0  # when the first result in the buffer arrived
    delivered = 0
    stopped_by_budget = False

    async def next_item() -> WorkItem | None:
        nonlocal stopped_by_budget
        if stop is not None and stop.is_set():
            return None
        if budget.exhausted:
            stopped_by_budget = True
            return None
        return await feed.take(in_caller)

    def deliver(force: bool = False) -> None:
        nonlocal delivered
        if buffer and (
            force
            or len(buffer) >= batch_size
            or (batch_wait_s is not None and time.perf_counter() - oldest >= batch_wait_s)
        ):
            batch = buffer[:]
            buffer.clear()
            delivered += len(batch)
            on_batch(batch)

    async def worker(limiter: SlotLimiter | None) -> None:
        nonlocal oldest
        while (item := await next_item()) is not None:
            if limiter is None:
                result = await _call_with_retries(
                    item, client, timeout_s, max_attempts, base_delay, max_delay
                )
            else:
                await limiter.acquire()
                try:
                    result = await _call_with_retries(
                        item, client, timeout_s, max_attempts, base_delay, max_delay
                    )
                finally:
                    limiter.release()
            budget.add(result)
            if not buffer:
                oldest = time.perf_counter()
            buffer.append(result)
            deliver()

    try:
        async with contextlib.AsyncExitStack() as stack:
            limiter = await stack.enter_async_context(slots()) if slots is not None else None
            await asyncio.gather(*(worker(limiter) for _ in range(concurrency)))
    finally:
        with contextlib.suppress(Exception):
            await client.aclose()
    deliver(force=True)
    not_started = feed.left()
    return ExecutionSummary(
        delivered=delivered,
        not_started=not_started,
        budget_exhausted=stopped_by_budget and not_started > 0,
        wall_seconds=time.perf_counter() - started,
    )


async def _call_with_retries(
    item: WorkItem,
    client: ModelClient,
    timeout_s: float,
    max_attempts: int,
    base_delay: float,
    max_delay: float,
) -> ItemResult:
    first_started = time.perf_counter()
    reason = ""
    for attempt in range(1, max_attempts + 1):
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_s):
                completion = await client.complete(item.messages)
        except TimeoutError:
            error = ModelCallError(f"timed out after {timeout_s:g} s", retryable=True)
        except ModelCallError as raised:
            error = raised
        except Exception as unexpected:  # a client bug must fail the item, not the run
            error = ModelCallError(
                f"unexpected error: {type(unexpected).__name__}: {unexpected}", retryable=False
            )
        else:
            elapsed = time.perf_counter() - started
            return ItemResult(
                task_pk=item.task_pk,
                repeat=item.repeat,
                ok=True,
                text=completion.text,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                cost_usd=completion.cost_usd,
                latency_ms=round(elapsed * 1000),
                generation_seconds=time.perf_counter() - first_started,
                attempts=attempt,
                error="",
            )
        reason = error.reason
        if not error.retryable or attempt == max_attempts:
            break
        await asyncio.sleep(
            backoff_delay(attempt, base_delay, max_delay, retry_after=error.retry_after)
        )
    gave_up = f" (gave up after {attempt} attempts)" if attempt > 1 else ""
    return ItemResult(
        task_pk=item.task_pk,
        repeat=item.repeat,
        ok=False,
        text="",
        prompt_tokens=None,
        completion_tokens=None,
        cost_usd=None,
        latency_ms=None,
        generation_seconds=time.perf_counter() - first_started,
        attempts=attempt,
        error=reason + gave_up,
    )


def backoff_delay(
    attempt: int, base_delay: float, max_delay: float, *, retry_after: float | None = None
) -> float:
    """Return the wait before retry number ``attempt``: full jitter, or Retry-After if longer."""
    jittered = random.uniform(0, min(max_delay, base_delay * 2 ** (attempt - 1)))  # noqa: S311
    if retry_after is not None:
        return max(jittered, min(retry_after, max_delay))
    return jittered


# -- parsing ----------------------------------------------------------------------------------


def _retry_after(value: str | None) -> float | None:
    """Return Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _error_message(raw: bytes) -> str:
    try:
        body = json.loads(raw)
        message = body["error"]["message"] if isinstance(body.get("error"), dict) else body
    except (ValueError, TypeError, KeyError, AttributeError):
        message = raw[:300].decode("utf-8", "replace")
    return str(message)[:500]


def _parse_completion(raw: bytes) -> tuple[str, int | None, int | None]:
    try:
        body = json.loads(raw)
    except ValueError as error:
        raise ModelCallError(
            f"malformed completion: the body is not JSON ({error}): "
            f"{raw[:120].decode('utf-8', 'replace')!r}",
            retryable=False,
        ) from error
    try:
        text = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as error:
        raise ModelCallError(
            f"malformed completion: no choices[0].message.content in the body "
            f"(keys: {', '.join(sorted(body)) if isinstance(body, dict) else type(body).__name__})",
            retryable=False,
        ) from error
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return (
        text if isinstance(text, str) else "",
        _count(usage.get("prompt_tokens")),
        _count(usage.get("completion_tokens")),
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _litellm_error(error: Exception) -> ModelCallError:
    status = getattr(error, "status_code", None)
    name = type(error).__name__
    retry_after = None
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        with contextlib.suppress(Exception):
            retry_after = _retry_after(headers.get("retry-after"))
    transient_names = ("Timeout", "APIConnectionError", "ServiceUnavailable", "InternalServer")
    retryable = (
        isinstance(status, int) and (status in RETRYABLE_STATUSES or status >= 500)
    ) or any(part in name for part in transient_names)
    prefix = f"HTTP {status}: " if isinstance(status, int) else ""
    return ModelCallError(
        f"{prefix}{name}: {str(error)[:500]}", retryable=retryable, retry_after=retry_after
    )
