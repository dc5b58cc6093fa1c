"""``enterpriseval assignments_list``: a grader's own assignments, as the API lists them.

As ``GET /api/v1/grading/assignments/``: the same selector (only the user's own assignments,
newest session first, each session in the grader's blind order), the same serializer and, with
``--format json``, the API's page: ``count``, ``next``, ``previous`` (links on
``ENTERPRISEVAL_SITE_URL``) and ``results``, ``--limit`` and ``--offset`` read as the API reads
``limit`` and ``offset``. ``--session`` and ``--status`` keep the rows of one session or status
before the page is cut (the API's answer is then that list's). Nothing names σ, the run or why
an output came next (SPEC §5.1).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.urls import reverse

from charters.management.cli import add_actor, add_format, page_of, table, user_named
from grading.api.workspace import AssignmentOutput
from grading.management.grader_cli import terminal_json, terminal_text
from grading.models import AssignmentStatus
from grading.selectors.workspace import assignment_list


class Command(BaseCommand):
    help = (
        "List your own grading assignments (position, session, status, time spent), newest "
        "session first, as the API lists them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--session", help="Only this session's (its public id).")
        parser.add_argument(
            "--status", choices=AssignmentStatus.values, help="Only assignments in this status."
        )
        parser.add_argument(
            "--limit", type=int, help="At most this many (the API's limit; 100 if unset)."
        )
        parser.add_argument("--offset", type=int, help="Skip this many (the API's offset).")
        add_actor(parser, "the grader")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        assignments = assignment_list(user=actor)
        if options["session"]:
            assignments = assignments.filter(session__public_id=options["session"])
        if options["status"]:
            assignments = assignments.filter(status=options["status"])
        params = {name: options[name] for name in ("limit", "offset") if options[name] is not None}
        paginator, page = page_of(assignments, reverse("api-grading-assignment-list"), params)
        data = AssignmentOutput(page, many=True).data
        if options["format"] == "json":
            self.stdout.write(terminal_json(paginator.get_paginated_response(data).data))
            return
        shown = len(data)
        first = paginator.offset + 1 if shown else 0
        self.stdout.write(
            f"{paginator.count} assignment(s) of {actor.get_username()}"
            + (f"; {first}–{paginator.offset + shown} shown" if shown < paginator.count else "")
            + ", newest session first."
        )
        if not data:
            return
        rows = [
            (
                f"{a['position']}/{a['total']}",
                terminal_text(f"{a['session']} {a['session_name']} ({a['session_status']})"),
                a["status"],
                a["public_id"],
                f"{a['seconds_spent']:.0f}",
            )
            for a in data
        ]
        self.stdout.write(table(rows, ("#", "session", "status", "assignment", "seconds")))
