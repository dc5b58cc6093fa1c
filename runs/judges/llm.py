"""The LLM judge: the rubric prompt, one call per output, replies checked strictly.

Calls go straight to an OpenAI-compatible ``api_base`` over one aiohttp connection pool (the
fast path of RECIPES.md "Executor throughput": litellm costs ~4.5 ms of CPU a call), and
through litellm for every other provider.

All units of one output are judged in one call: the system message is the rubric prompt
(:data:`runs.judges.rubric.RUBRIC_PROMPT`), the user message a JSON object holding the task
input, the permitted sources, the output and its units (keys and texts). The reply must be the
JSON object the prompt describes, answering every unit key exactly once with a label of the
rubric; anything else is a malformed reply. Malformed replies, HTTP 429, 5xx, timeouts and
connection failures are retried with exponential backoff and jitter (honouring Retry-After) up
to ``max_attempts`` calls; then :class:`JudgeReplyError` says what was wrong. litellm is
imported inside the calling function (it costs seconds to import).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.judges.rubric import (
    QUESTIONS_BY_KIND,
    REPLY_SECTIONS,
    RUBRIC_PROMPT,
    Answer,
    JudgeItem,
    UnitScore,
    answers_to_scores,
)

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
MAX_LISTED_PROBLEMS = 8
_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*(.*?)\s*```\s*$", re.DOTALL)


class JudgeError(Exception):
    """The judge could not score an output."""


class JudgeConfigError(JudgeError):
    """The judge is set up wrongly (e.g. its API key variable is unset); retrying won't help."""


class JudgeReplyError(JudgeError):
    """No valid reply after the last attempt, or a call refused for good (e.g. HTTP 401).

    ``problems`` lists what was wrong with the last attempt; ``attempts`` counts the calls made.
    """

    def __init__(self, message: str, *, problems: Sequence[str], attempts: int) -> None:
        super().__init__(message)
        self.problems = list(problems)
        self.attempts = attempts


class ReplyInvalid(ValueError):
    """A reply that breaks the rubric's reply format; ``problems`` says how."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class JudgeResult:
    """The scores of one output and what obtaining them cost."""

    scores: list[UnitScore]
    attempts: int
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class _Attempt:
    problems: list[str] = field(default_factory=list)
    retry_after: float | None = None


def render_item(item: JudgeItem) -> str:
    """Return the user message that presents ``item`` to the judge (JSON text)."""
    document = {
        "task_input": item.task_input,
        "permitted_sources": [{"id": key, "text": text} for key, text in item.sources.items()],
        "output": item.output_text,
        "units": {
            "sentences": [
                {"key": s.key, "text": s.text, "cites": list(s.cited_chunk_ids)}
                for s in item.sentences
            ],
            "cited_chunks": [
                {"key": c.key, "chunk_id": c.chunk_id, "cited_by_sentence": c.sentence_key}
                for c in item.cited_chunks
            ],
            "key_elements": [{"key": k.key, "text": k.text} for k in item.key_elements],
            "guidance": [{"key": g.key, "text": g.text} for g in item.guidance],
        },
    }
    return json.dumps(document, ensure_ascii=False)


def parse_reply(content: str | None, item: JudgeItem) -> list[Answer]:
    """Return the answers of a judge reply, or raise :class:`ReplyInvalid` listing its faults.

    The reply must be one JSON object (a Markdown code fence around it is tolerated) with a
    list per unit kind that ``item`` has units of; every unit key must appear exactly once in
    its list, with every question of its kind answered by one of the rubric's labels (case is
    ignored) and an optional string ``rationale``. Unknown lists, keys and fields are faults.
    """
    if content is None or not content.strip():
        raise ReplyInvalid(["the reply is empty"])
    fenced = _FENCE.match(content)
    text = fenced.group(1) if fenced else content
    try:
        reply = json.loads(text)
    except ValueError as error:
        raise ReplyInvalid([f"the reply is not JSON ({error})"]) from None
    if not isinstance(reply, dict):
        raise ReplyInvalid([f"the reply must be a JSON object, got {type(reply).__name__}"])
    problems: list[str] = []
    answers: list[Answer] = []
    sections = set(REPLY_SECTIONS.values())
    for name in sorted(set(reply) - sections):
        problems.append(f"unknown top-level field {name!r}")
    for kind, keys in item.unit_keys().items():
        section = REPLY_SECTIONS[kind]
        entries = reply.get(section)
        if entries is None:
            if keys:
                problems.append(f"{section}: missing (expected {len(keys)} unit(s))")
            continue
        if not isinstance(entries, list):
            problems.append(f"{section}: must be a list, got {type(entries).__name__}")
            continue
        answers += _section_answers(kind, section, entries, keys, problems)
    if problems:
        raise ReplyInvalid(problems)
    return answers


def _section_answers(
    kind: str, section: str, entries: list[Any], keys: list[str], problems: list[str]
) -> list[Answer]:
    questions = QUESTIONS_BY_KIND[kind]
    allowed_fields = {"key", "rationale", *(q.name for q in questions)}
    expected = set(keys)
    seen: set[str] = set()
    answers: list[Answer] = []
    for index, entry in enumerate(entries):
        where = f"{section}[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object")
            continue
        key = entry.get("key")
        if not isinstance(key, str):
            problems.append(f"{where}.key: must be a string, got {key!r}")
            continue
        where = f"{section}[{index}] (key {key!r})"
        if key not in expected:
            problems.append(f"{where}: no such {kind} unit")
            continue
        if key in seen:
            problems.append(f"{where}: answered more than once")
            continue
        seen.add(key)
        for name in sorted(set(entry) - allowed_fields):
            problems.append(f"{where}: unknown field {name!r}")
        rationale = entry.get("rationale", "")
        if not isinstance(rationale, str):
            problems.append(f"{where}.rationale: must be a string")
            rationale = ""
        for question in questions:
            value = entry.get(question.name)
            label = _label(value, question.labels)
            if label is None:
                problems.append(
                    f"{where}.{question.name}: expected one of {', '.join(question.labels)}, "
                    f"got {value!r}"
                )
                continue
            # PostgreSQL text cannot hold NUL; a model may still emit one.
            clean = rationale.replace("\x00", "").strip()[:500]
            answers.append(Answer(key, question.name, label, clean))
    missing = [key for key in keys if key not in seen]
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        problems.append(f"{section}: no answer for {shown}")
    return answers


def _label(value: Any, labels: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        return None
    folded = value.strip().casefold()
    return next((label for label in labels if label.casefold() == folded), None)


class LLMJudge:
    """Score every unit of an output with an LLM reading the rubric prompt, through litellm.

    Parameters
    ----------
    model
        litellm model string (``"gpt-4o"``, ``"anthropic/claude-sonnet-4"``). With
        ``api_base`` (an OpenAI-compatible server) it is called as ``"openai/<model>"``.
    api_base
        Base URL of an OpenAI-compatible server, e.g. ``"http://127.0.0.1:8000/v1"``.
    api_key_env
        Name of the environment variable holding the API key (keys are never stored); unset
        means litellm's provider default (or a placeholder key with ``api_base``).
    temperature
        Sampling temperature; 0 for reproducible judging.
    max_attempts
        Calls per output before :class:`JudgeReplyError` (≥ 1).
    timeout
        Seconds a call may take before it counts as failed and is retried.
    backoff_base, backoff_max
        The n-th retry waits ``min(backoff_max, backoff_base · 2ⁿ⁻¹)`` seconds times a jitter
        factor in [0.5, 1], or the server's Retry-After if longer (capped at ``backoff_max``).
    """

    kind = "llm"

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        temperature: float = 0,
        max_attempts: int = 3,
        timeout: float = 120.0,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty litellm model string, got {model!r}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be ≥ 1, got {max_attempts}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.model_ref = model.strip()
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_tokens = max_tokens
        self._random = random.Random(seed)  # noqa: S311 (backoff jitter, not a secret)
        self._session: Any = None

    @property
    def litellm_model(self) -> str:
        """Return the model string passed to litellm."""
        if self.api_base and not self.model_ref.startswith("openai/"):
            return f"openai/{self.model_ref}"
        return self.model_ref

    def score(self, item: JudgeItem) -> list[UnitScore]:
        """Return the scores of every unit of ``item`` (runs its own event loop)."""
        return asyncio.run(self.ascore(item)).scores

    async def ascore_many(
        self, items: Sequence[JudgeItem], *, concurrency: int = 8
    ) -> list[JudgeResult | JudgeError]:
        """Judge ``items`` with at most ``concurrency`` calls in flight; failures are returned."""
        if concurrency < 1:
            raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
        gate = asyncio.Semaphore(concurrency)

        async def one(item: JudgeItem) -> JudgeResult | JudgeError:
            async with gate:
                try:
                    return await self.ascore(item)
                except JudgeError as error:
                    return error

        await self.open(concurrency=concurrency)
        try:
            return list(await asyncio.gather(*(one(item) for item in items)))
        finally:
            await self.aclose()

    async def ascore(self, item: JudgeItem) -> JudgeResult:
        """Return the scores of every unit of ``item``, retrying as the class describes."""
        api_key = self._api_key()
        base_messages = [
            {"role": "system", "content": RUBRIC_PROMPT},
            {"role": "user", "content": render_item(item)},
        ]
        messages = list(base_messages)
        prompt_tokens = completion_tokens = 0
        last = _Attempt()
        for attempt in range(1, self.max_attempts + 1):
            last = _Attempt()
            try:
                response = await self._complete(messages, api_key)
            except Exception as error:  # classified below: retry or give up
                if not _retryable(error):
                    raise JudgeReplyError(
                        f"judge {self.model_ref}: call refused, not retried: {_describe(error)}",
                        problems=[_describe(error)],
                        attempts=attempt,
                    ) from error
                last.problems = [_describe(error)]
                last.retry_after = _retry_after(error)
            else:
                usage = getattr(response, "usage", None)
                prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
                completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
                content = _content(response)
                try:
                    answers = parse_reply(content, item)
                except ReplyInvalid as invalid:
                    last.problems = invalid.problems
                    messages = [*base_messages, *_correction(content, invalid.problems)]
                else:
                    return JudgeResult(
                        answers_to_scores(answers), attempt, prompt_tokens, completion_tokens
                    )
            if attempt < self.max_attempts:
                await asyncio.sleep(self._delay(attempt, last.retry_after))
        listed = last.problems[:MAX_LISTED_PROBLEMS]
        more = len(last.problems) - len(listed)
        raise JudgeReplyError(
            f"judge {self.model_ref}: no valid reply after {self.max_attempts} attempt(s); "
            f"last attempt: {'; '.join(listed)}" + (f" (and {more} more)" if more else ""),
            problems=last.problems,
            attempts=self.max_attempts,
        )

    def check_api_key(self) -> None:
        """Raise :class:`JudgeConfigError` if the API key variable is named but unset."""
        self._api_key()

    def _api_key(self) -> str | None:
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise JudgeConfigError(
                    f"judge {self.model_ref}: environment variable {self.api_key_env} is unset "
                    "or empty; set it to the API key in the worker's environment"
                )
            return key
        return "not-needed" if self.api_base else None

    async def open(self, *, concurrency: int) -> None:
        """Open one connection pool of ``concurrency`` connections for the calls made in this
        event loop until :meth:`aclose` (an OpenAI-compatible ``api_base`` only)."""
        if self.api_base:
            import aiohttp

            await self.aclose()
            connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0)
            self._session = aiohttp.ClientSession(connector=connector)

    async def aclose(self) -> None:
        """Close the pool :meth:`open` opened (a later call opens a connection of its own)."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def _complete(self, messages: list[dict[str, str]], api_key: str | None) -> Any:
        """One call: straight to an OpenAI-compatible ``api_base`` (aiohttp), else litellm."""
        if not self.api_base:
            return await _litellm().acompletion(**self._call_kwargs(messages, api_key))
        import aiohttp

        body: dict[str, Any] = {
            "model": self.litellm_model.removeprefix("openai/"),
            "messages": messages,
            "temperature": self.temperature,
            "response_format": {"type": "json_object"},
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        url = self.api_base.rstrip("/") + "/chat/completions"
        session = self._session
        own = session is None or session.closed
        if own:
            session = aiohttp.ClientSession()
        assert session is not None
        try:
            async with asyncio.timeout(self.timeout):
                async with session.post(url, json=body, headers=headers) as response:
                    raw = await response.read()
                    if response.status != 200:
                        raise HTTPStatusError(
                            response.status,
                            raw,
                            {"retry-after": response.headers.get("Retry-After")},
                        )
        except aiohttp.ClientError as error:
            raise ConnectionError(f"{type(error).__name__}: {error}") from error
        finally:
            if own:
                await session.close()
        return _OpenAIResponse(raw)

    def _call_kwargs(self, messages: list[dict[str, str]], api_key: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.litellm_model,
            "messages": messages,
            "temperature": self.temperature,
            "timeout": self.timeout,
            "max_retries": 0,  # this class retries; a second retry layer would multiply calls
            "response_format": {"type": "json_object"},
            "drop_params": True,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if api_key is not None:
            kwargs["api_key"] = api_key
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        return kwargs

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.backoff_max, self.backoff_base * 2.0 ** (attempt - 1))
        backoff *= 0.5 + 0.5 * self._random.random()
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.backoff_max))
        return backoff


class HTTPStatusError(Exception):
    """An OpenAI-compatible server answered an HTTP error status."""

    def __init__(self, status: int, raw: bytes, headers: dict[str, str | None]) -> None:
        try:
            body = json.loads(raw)
            message = body["error"]["message"] if isinstance(body.get("error"), dict) else body
        except (ValueError, TypeError, KeyError, AttributeError):
            message = raw[:300].decode("utf-8", "replace")
        super().__init__(str(message)[:300])
        self.status_code = status
        self.response = _Headers({k: v for k, v in headers.items() if v is not None})


@dataclass(frozen=True)
class _Headers:
    headers: dict[str, str]


class _OpenAIResponse:
    """A chat completion's JSON body, read as litellm's response object is read here."""

    def __init__(self, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        self.usage = _Usage(
            int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        )
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        self.content = content if isinstance(content, str) else None


@dataclass(frozen=True)
class _Usage:
    prompt_tokens: int
    completion_tokens: int


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _content(response: Any) -> str | None:
    if isinstance(response, _OpenAIResponse):
        return response.content
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    return content if isinstance(content, str) else None


def _correction(content: str | None, problems: list[str]) -> list[dict[str, str]]:
    listed = "; ".join(problems[:MAX_LISTED_PROBLEMS])
    return [
        {"role": "assistant", "content": (content or "")[:4000]},
        {
            "role": "user",
            "content": f"That reply is invalid: {listed}. Reply again with the complete JSON "
            "object only, answering every unit key exactly once.",
        },
    ]


def _status(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def _retryable(error: BaseException) -> bool:
    status = _status(error)
    if status is not None:
        return status in RETRYABLE_STATUSES or status >= 500
    return isinstance(error, TimeoutError | ConnectionError)


def _retry_after(error: BaseException) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
    except AttributeError:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None


def _describe(error: BaseException) -> str:
    status = _status(error)
    kind = type(error).__name__
    message = " ".join(str(error).split())[:300]
    return f"{kind} (HTTP {status}): {message}" if status is not None else f"{kind}: {message}"


# -- which model is it? -------------------------------------------------------------------------

#: litellm provider prefixes (and σ providers) that host another vendor's model ids.
PROVIDER_PREFIXES = frozenset(
    """
    openai azure azure_ai anthropic gemini vertex_ai vertex_ai_beta bedrock bedrock_converse
    sagemaker mistral codestral cohere cohere_chat groq together_ai fireworks_ai deepseek xai
    ollama ollama_chat huggingface hosted_vllm vllm openrouter perplexity databricks watsonx
    replicate anyscale deepinfra cerebras sambanova nvidia_nim lm_studio llamafile
    text-completion-openai custom_openai litellm_proxy meta_llama github friendliai predibase
    ai21 cloudflare clarifai baseten triton palm google dashscope moonshot novita nscale
    """.split()  # noqa: SIM905
)
_VENDOR_PREFIX = re.compile(r"^(?:anthropic|meta|amazon|mistral|cohere|ai21|google|openai)\.")
_VERSION_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")


def model_identity(model_ref: str, provider: str | None = None) -> str:
    """Return the model id of a litellm model string or σ (provider, id), host prefixes removed.

    ``"openai/gpt-4o"``, ``"gpt-4o"`` and ``("azure", "GPT-4o")`` all give ``"gpt-4o"``;
    Bedrock's ``"anthropic.claude-x-v1:0"`` and Vertex's ``"claude-x@2024"`` give the
    vendor's own spelling (``"claude-x"``, ``"claude-x-2024"``). Conservative on purpose: the
    same model served by another host is still the same model.
    """
    ref = model_ref.strip().lower()
    if provider:
        ref = f"{provider.strip().lower()}/{ref}"
    segments = ref.split("/")
    while len(segments) > 1 and segments[0] in PROVIDER_PREFIXES:
        segments = segments[1:]
    ref = "/".join(segments)
    ref = _VENDOR_PREFIX.sub("", ref)
    ref = _VERSION_SUFFIX.sub("", ref)
    return ref.replace("@", "-")


def same_model(first: str, second: str) -> bool:
    """Return whether two model references (see :func:`model_identity`) name the same model.

    Equal after normalisation, or equal in their last path segment
    (``"together_ai/meta-llama/llama-4"`` and ``"llama-4"``).
    """
    a, b = model_identity(first), model_identity(second)
    if not a or not b:
        return False
    return a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]
