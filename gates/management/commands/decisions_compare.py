"""``enterpriseval decisions_compare``: two decisions side by side under one charter version.

As the comparison page and ``GET /api/v1/use-cases/<key>/decisions/compare/?a=&b=``: the same
access check, the same selector and, with ``--format json``, the API's answer. ``--decision``
is given twice, A then B (the API's ``a`` and ``b``); a decision not of the use case, the same
one twice or two charter versions are refused naming ``--decision``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusal, refusals, table, write_json
from gates.api import comparison_data
from gates.formatting import DIRECTION_SIGN, format_ci, format_number
from gates.selectors import decision_comparison, decision_use_case_for


class Command(UseCaseCommand):
    help = (
        "Compare two decisions under one charter version: each gated metric as both read it, "
        "the σ components that differ and whether the difference is the model's alone."
    )
    who = "a member of the use case who does not grade on it"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--decision",
            dest="decisions",
            type=int,
            action="append",
            required=True,
            help="Decision id; give it twice, A then B.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, use_case = self.actor_and_use_case(options, decision_use_case_for)
        decisions = options["decisions"]
        if len(decisions) != 2:
            raise refusal(
                f"--decision: give exactly two decisions, A then B (got {len(decisions)})"
            )
        if min(decisions) < 1:
            raise refusal("--decision: a decision id is a positive number")
        a, b = decisions
        with refusals({"a": "--decision", "b": "--decision"}):
            comparison = decision_comparison(use_case=use_case, a=a, b=b)
        data = comparison_data(comparison, use_case.key)
        if options["format"] == "json":
            write_json(self.stdout, data)
            return
        for side in ("a", "b"):
            d = data[side]
            self.stdout.write(
                f"{side.upper()}: decision {d['id']}  σ {d['configuration']['name']}:"
                f"{d['configuration']['version']}  run {d['run']}  {d['status']}  "
                f"binding {d['binding_metric'] or '—'}  EI {format_number(d['ei'])}"
            )
        self.stdout.write(f"charter v{data['a']['charter_version']}; verdict: {data['verdict']}")
        differing = data["parity"].get("differing_components") or []
        self.stdout.write(f"σ components that differ: {', '.join(differing) or 'none'}")
        if data["run_differences"]:
            self.stdout.write("evaluation differences: " + "; ".join(data["run_differences"]))
        rows = [
            (
                m["id"],
                f"{DIRECTION_SIGN[m['direction']]}{m['theta_out']:g}",
                f"{DIRECTION_SIGN[m['direction']]}{m['theta_in']:g}",
                *_side(m["a"]),
                *_side(m["b"]),
            )
            for m in data["metrics"]
        ]
        header = ("metric", "θout", "θin", "A estimate", "A CI", "A status")
        self.stdout.write(table(rows, (*header, "B estimate", "B CI", "B status")))


def _side(result: dict[str, Any] | None) -> tuple[str, str, str | None]:
    if result is None:
        return ("—", "—", None)
    ci = result.get("ci")
    return (
        format_number(result.get("estimate"), 1),
        format_ci(None if ci is None else (ci[0], ci[1])),
        result.get("status"),
    )
