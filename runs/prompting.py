"""Render σ's prompts for one task and read the chunk ids the model cited.

Pure: no Django import. σ.prompts.system and σ.prompts.user_template are Python
``str.format`` templates with three fields: ``{input}`` (the task input), ``{sources}`` (the
retrieved chunks, one ``[chunk-id] text`` line each, best first) and ``{task_id}`` (the
task's external id); ``{{`` and ``}}`` are literal braces. Any other field — a name, a
position (``{}``, ``{0}``), an attribute or an index (``{input.x}``, ``{input[0]}``) — is an
error naming the field, found when the run is created, before any model is called.

The system prompt always ends with the citation instruction :data:`CITATION_INSTRUCTION`, so
every output cites chunks in the syntax :func:`runs.segment.cited_chunk_ids` reads.
σ.prompts.few_shot examples become user/assistant turns between the system and user messages.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from runs.retrieval import RankedChunk
from runs.segment import cited_chunk_ids

FIELDS = ("input", "sources", "task_id")
CITATION_INSTRUCTION = (
    "Cite the source of every factual statement inline, right after it, with the chunk id "
    "in square brackets, e.g. [chunk-id]; cite several chunks as [id-1, id-2]. Cite only "
    "the chunk ids listed in the sources."
)

Message = dict[str, str]


class TemplateError(ValueError):
    """A σ prompt template that cannot be rendered; ``field`` names the σ field at fault."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def template_fields(template: str, *, where: str) -> list[str]:
    """Return the fields ``template`` uses; raise TemplateError for an unknown or bad one.

    ``where`` names the σ field (``prompts.user_template``) in the message.
    """
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        raise TemplateError(
            f"σ {where}: not a valid template ({error}); write literal braces as {{{{ and }}}}",
            field=where,
        ) from error
    fields = []
    for _, name, spec, _ in parsed:
        if name is None:
            continue
        if name not in FIELDS:
            shown = "{" + name + "}"
            raise TemplateError(
                f"σ {where}: unknown field {shown}; the fields are "
                + ", ".join("{" + f + "}" for f in FIELDS)
                + " (write a literal brace as {{ or }})",
                field=where,
            )
        if spec and ("{" in spec or "}" in spec):
            raise TemplateError(
                f"σ {where}: field {{{name}}} has a nested field in its format spec",
                field=where,
            )
        fields.append(name)
    return fields


def check_prompts(prompts: Mapping[str, Any]) -> None:
    """Raise TemplateError unless σ.prompts can be rendered for any task."""
    template_fields(str(prompts.get("system", "")), where="prompts.system")
    template_fields(str(prompts.get("user_template", "")), where="prompts.user_template")


def format_sources(chunks: Sequence[RankedChunk]) -> str:
    """Return the chunks as ``[chunk-id] text`` lines, in the given order."""
    return "\n".join(f"[{chunk.chunk_id}] {' '.join(chunk.text.split())}" for chunk in chunks)


def render_messages(
    prompts: Mapping[str, Any],
    *,
    task_id: str,
    task_input: str,
    chunks: Sequence[RankedChunk],
) -> list[Message]:
    """Return the chat messages for one task: system, few-shot turns, then the user prompt."""
    values = {"input": task_input, "sources": format_sources(chunks), "task_id": task_id}
    system = _render(str(prompts.get("system", "")), values, where="prompts.system")
    user = _render(str(prompts.get("user_template", "")), values, where="prompts.user_template")
    messages: list[Message] = [
        {"role": "system", "content": f"{system.rstrip()}\n\n{CITATION_INSTRUCTION}"}
    ]
    for example in prompts.get("few_shot") or []:
        messages.append({"role": "user", "content": str(example["input"])})
        messages.append({"role": "assistant", "content": str(example["output"])})
    messages.append({"role": "user", "content": user})
    return messages


def cited_ids(text: str) -> list[str]:
    """Return the chunk ids ``text`` cites, once each, in order (runs.segment.CITATION_RE)."""
    return list(cited_chunk_ids(text))


def _render(template: str, values: Mapping[str, str], *, where: str) -> str:
    template_fields(template, where=where)
    return template.format_map(values)
