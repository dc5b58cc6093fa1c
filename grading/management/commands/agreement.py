"""``enterpriseval agreement``: a grading session's agreement per rubric field.

As the agreement page and ``GET …/grading/sessions/<id>/agreement/`` (charter owner, reviewer
or adjudicator; graders are refused): κ or α per rubric field with its bootstrap interval
against the charter's κ target, and which human-graded metrics may enter the gate under the
charter's agreement rule, with the reason (SPEC §5.1). ``--format json`` prints what that
endpoint returns, per-grader statistics included.
"""

from __future__ import annotations

from typing import Any

from charters.management.cli import table, write_json
from grading.api.agreement import AgreementOutput
from grading.management.options import SessionCommand
from grading.selectors.agreement import agreement_report

SYMBOLS = {"cohen_kappa": "κ", "krippendorff_alpha": "α"}


def interval(point: float | None, lo: float | None, hi: float | None, text: str) -> str:
    """Return ``point [lo, hi]``, or — where the statistic is undefined."""
    if point is None or point != point:
        return "—"
    if lo is None or hi is None or lo != lo or hi != hi:
        return text
    return f"{text} [{lo:.2f}, {hi:.2f}]"


class Command(SessionCommand):
    help = (
        "Print a grading session's agreement per rubric field against the κ target and which "
        "human-graded metrics may enter the gate."
    )
    who = "a charter owner, reviewer or adjudicator of the use case"

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, session = self.actor_and_session(options)
        use_case = session.use_case
        report = agreement_report(session=session)
        if options["format"] == "json":
            write_json(self.stdout, AgreementOutput(report).data)
            return
        self.stdout.write(
            f"Agreement in session {session.public_id} ({session.name}) of {use_case.key}: "
            f"{report.artefacts_complete} of {report.artefacts_total} artefacts graded by every "
            f"grader; κ target {report.kappa_target:g}, {100 * report.confidence:g}% bootstrap "
            "intervals."
        )
        rows = [
            (
                row.agreement.field,
                SYMBOLS.get(row.agreement.statistic, row.agreement.statistic),
                interval(row.agreement.point, row.agreement.lo, row.agreement.hi, row.point_text),
                row.agreement.n_units,
                "yes" if row.passes else "no",
            )
            for row in report.fields
        ]
        self.stdout.write(table(rows, ("field", "statistic", "value", "units", "≥ target")))
        eligibility = [
            (
                row.metric_id,
                {True: "eligible", False: "not eligible", None: "—"}[row.eligible],
                row.reason,
            )
            for row in report.eligibility
        ]
        self.stdout.write(table(eligibility, ("metric", "gate", "why")))
