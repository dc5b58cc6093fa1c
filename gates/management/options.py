"""What the gates commands, and those of later stages, share: the decision named, printed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charters.management.cli import refusal
from charters.models import UseCase
from gates.formatting import format_gate_result, format_structured, format_value
from gates.models import Decision
from gates.selectors import decision_get, gate_result_from_dict


def decision_named(use_case: UseCase, pk: int) -> Decision:
    """Return decision ``pk`` of ``use_case``, or refuse naming ``--decision``."""
    decision = decision_get(use_case=use_case, pk=pk)
    if decision is None:
        raise refusal(f"--decision: no decision {pk} in {use_case.key}")
    return decision


def write_decision(out: Any, record: Mapping[str, Any], *, title: str) -> None:
    """Write a decision's record as a table: the gate under ``title``, the value, the rest."""
    out.write(format_gate_result(gate_result_from_dict(record["gate"]), title=title))
    out.write(format_value(record.get("value")))
    structured = format_structured(record)
    if structured:
        out.write(structured)
