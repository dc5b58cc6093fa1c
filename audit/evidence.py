"""Re-deriving the evidence the audit log covers (``verify_audit``).

An entry that records a hash of evidence (a σ's canonical JSON, a signed charter, a decision
record, a submitted assignment's grades, a final scorecard) is checked against the evidence
as it is stored now: each app registers, in its ``AppConfig.ready()``, a check per action
(:func:`register`). A check receives the entry's target id and payload and returns ``None``
when the evidence still hashes to what the log recorded, or a sentence saying what differs.
The audit app imports no other app: the checks come to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: ``check(target_id, payload) -> None | reason``
EvidenceCheck = Callable[[str, Mapping[str, Any]], "str | None"]
#: ``check() -> None | reason``: state re-derived from the whole log (memberships).
StateCheck = Callable[[], "str | None"]

_CHECKS: dict[str, EvidenceCheck] = {}
_STATE_CHECKS: dict[str, StateCheck] = {}


def register(action: str, check: EvidenceCheck) -> None:
    """Have ``verify_audit`` re-derive the evidence of every ``action`` entry with ``check``."""
    if action in _CHECKS and _CHECKS[action] is not check:
        raise ValueError(f"register: action {action!r} already has an evidence check")
    _CHECKS[action] = check


def registered() -> dict[str, EvidenceCheck]:
    """Return the registered checks by action."""
    return dict(_CHECKS)


def register_state(name: str, check: StateCheck) -> None:
    """Have ``verify_audit`` compare state replayed from the log with the tables (``check``)."""
    if name in _STATE_CHECKS and _STATE_CHECKS[name] is not check:
        raise ValueError(f"register_state: {name!r} already has a state check")
    _STATE_CHECKS[name] = check


def registered_state() -> dict[str, StateCheck]:
    """Return the registered state checks by name."""
    return dict(_STATE_CHECKS)
