"""``enterpriseval session_status``: what is still open in a grading session.

Each grader's unsubmitted assignments and each artefact's disagreements awaiting adjudication:
a decision is recorded only on a closed session (SPEC §5.2, §6.1). Exits 0 whether or not the
session is open; ``--format json`` gives the same as data.
"""

from __future__ import annotations

from typing import Any

from charters.management.cli import table, write_json
from grading.management.options import SessionCommand
from grading.selectors.adjudication import adjudication_queue
from grading.selectors.sessions import session_detail


class Command(SessionCommand):
    help = (
        "Print what is still open in a grading session: unsubmitted assignments per grader "
        "and disagreements awaiting adjudication per artefact."
    )
    who = "a charter owner, reviewer or adjudicator of the use case"

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, session = self.actor_and_session(options)
        detail = session_detail(session=session)
        graders = [
            {
                "grader": g.username,
                "assigned": g.assigned,
                "submitted": g.submitted,
                "in_progress": g.in_progress,
                "not_submitted": g.assigned - g.submitted,
            }
            for g in detail.graders
        ]
        awaiting = [
            {
                "artefact": item.public_id,
                "task": item.task_id,
                "pending": [f"{d.unit_key}.{d.field}" for d in item.disputes if d.pending],
            }
            for item in adjudication_queue(session=session)
            if item.pending
        ]
        unsubmitted = detail.progress.assignments - detail.progress.submitted
        status = {
            "session": session.public_id,
            "name": session.name,
            "open": bool(unsubmitted or detail.disputes_pending),
            "assignments": detail.progress.assignments,
            "assignments_not_submitted": unsubmitted,
            "disagreements_pending": detail.disputes_pending,
            "disagreements_adjudicated": detail.disputes_adjudicated,
            "graders": graders,
            "awaiting_adjudication": awaiting,
        }
        if options["format"] == "json":
            write_json(self.stdout, status)
            return
        self.stdout.write(
            f"Session {session.public_id} ({session.name}): "
            + ("open" if status["open"] else "closed: every assignment submitted and every")
            + (
                f": {unsubmitted} of {detail.progress.assignments} assignment(s) not submitted, "
                f"{detail.disputes_pending} disagreement(s) awaiting adjudication."
                if status["open"]
                else " disagreement adjudicated; ready for a decision."
            )
        )
        rows = [
            (g["grader"], g["assigned"], g["submitted"], g["in_progress"], g["not_submitted"])
            for g in graders
        ]
        self.stdout.write(
            table(rows, ("grader", "assigned", "submitted", "in progress", "not submitted"))
        )
        if awaiting:
            self.stdout.write(
                table(
                    [(a["artefact"], a["task"], ", ".join(a["pending"])) for a in awaiting],
                    ("artefact", "task", "fields awaiting adjudication"),
                )
            )
