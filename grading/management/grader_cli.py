"""What the grader's commands share: their own assignment and safe text.

A grader reaches an assignment only as the API does (``assignment_for_grader``): anyone else
is told there is no such assignment, exactly like the API's 404. Model outputs and task texts
are untrusted: a command prints them with every terminal control character made visible
(``\\x1b`` for ESC), so an output cannot move the cursor, recolour or retitle the grader's
terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404

from charters.management.cli import refusal
from grading.models import Assignment
from grading.selectors.artefacts import assignment_for_grader

#: C0 controls but newline and tab, DEL, C1 controls (U+009B is a one-character CSI) and the
#: bidirectional overrides and isolates that reorder what a terminal shows.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: In JSON: what :func:`json.dumps` leaves raw of :data:`CONTROL` (it escapes C0 itself).
JSON_CONTROL = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """Return ``text`` with each terminal control character written out (ESC as ``\\x1b``)."""
    return CONTROL.sub(visible, text)


def terminal_json(data: Any) -> str:
    """Return ``data`` as indented JSON (as ``write_json``) with no raw control character.

    The escapes are JSON's own (``\\u001b``): a parser reads back exactly ``data``.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False, cls=DjangoJSONEncoder)
    return JSON_CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def own_assignment(
    actor: AbstractBaseUser, public_id: str, *, for_write: bool = False
) -> Assignment:
    """Return ``actor``'s own assignment ``public_id``; refuse anyone else as the API's 404."""
    try:
        return assignment_for_grader(actor, public_id, for_write=for_write)
    except Http404:
        raise refusal(f"--assignment: no assignment {public_id!r}") from None
