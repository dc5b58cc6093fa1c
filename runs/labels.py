"""Read the label of an executed output by σ's label format (SPEC §4.1).

Pure: no Django import. σ's ``guardrails.output_format`` is either free text (nothing is
parsed: the label is unknown) or ``{kind: label, pattern: <regex>, description}``: the regex,
searched in multiline mode, captures the label in its named group ``label``; the capture,
stripped, is matched to the task set's label set without regard to letter case. An output
whose label cannot be read keeps label unknown and a message naming the output and why; the
run goes on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from enterpriseval.values import json_shown

LABEL_FORMAT = "label"
LABEL_GROUP = "label"
_SHOWN = 60


@dataclass(frozen=True)
class LabelRead:
    """The label read from one output (None = unknown) and, when unknown, why."""

    label: str | None
    problem: str


@dataclass(frozen=True)
class LabelReader:
    """A compiled label format and the label set it matches against."""

    pattern: re.Pattern[str]
    labels: tuple[str, ...]

    def read(self, text: str, *, task_id: str, repeat: int) -> LabelRead:
        """Return the label of the output of ``task_id`` at ``repeat`` whose text is ``text``."""
        where = f"task {task_id}, repeat {repeat}"
        match = self.pattern.search(text)
        if match is None or match.group(LABEL_GROUP) is None:
            return LabelRead(
                None,
                f"{where}: no label: σ's output format pattern {json_shown(self.pattern.pattern)} "
                "does not match the output",
            )
        given = match.group(LABEL_GROUP).strip()
        folded = given.casefold()
        for label in self.labels:
            if label.casefold() == folded:
                return LabelRead(label, "")
        shown = ", ".join(json_shown(label) for label in self.labels)
        return LabelRead(
            None,
            f"{where}: the output's label {json_shown(given, _SHOWN)} is not in the label set "
            f"[{shown}]",
        )


def label_reader(output_format: Any, label_set: Sequence[str] | None) -> LabelReader | None:
    """Return the reader of σ's label format, or None when σ's outputs carry no label.

    None when ``output_format`` is free text or absent, or the task set declares no label
    set. ``output_format`` was validated when σ was uploaded (``label_pattern_problem``).
    """
    if not isinstance(output_format, Mapping) or output_format.get("kind") != LABEL_FORMAT:
        return None
    if not label_set:
        return None
    pattern = re.compile(str(output_format["pattern"]), re.MULTILINE)
    return LabelReader(pattern, tuple(label_set))
