"""``enterpriseval adjudication_take``: make Grader N's values final on one artefact."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from charters.management.cli import add_actor, user_named
from enterpriseval.errors import ServiceError
from grading.management.commands.adjudications_export import adjudication_session_as
from grading.management.commands.grades_export import INVALID_INPUT
from grading.management.options import add_session
from grading.services.adjudication import ALL, adjudication_take


class Command(BaseCommand):
    help = (
        "Take Grader N's value (the number shown on the artefact's adjudication page) as the "
        "final value of disputed fields of one artefact: every pending field, or those named "
        "with --field UNIT_KEY.FIELD. All or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_session(parser)
        parser.add_argument("--artefact", required=True, help="Public id of the artefact.")
        parser.add_argument("--grader", required=True, type=int, help="1 for Grader 1, …")
        parser.add_argument(
            "--field",
            action="append",
            default=[],
            metavar="UNIT_KEY.FIELD",
            help="A field to take (repeatable), e.g. s1.relevant; default: every pending field.",
        )
        parser.add_argument("--note", default="", help="A note kept with each final value.")
        add_actor(parser, "a named adjudicator")

    def handle(self, *args: Any, **options: Any) -> None:
        # The user first, then the web's check: to an outsider the session does not exist.
        actor = user_named(options["actor"])
        session = adjudication_session_as(actor, options["session"], write=True)
        artefact = session.artefacts.filter(public_id=options["artefact"]).first()
        if artefact is None:
            raise CommandError(
                f"--artefact: no artefact {options['artefact']!r} in session {session.name}",
                returncode=INVALID_INPUT,
            )
        fields: Any = ALL
        if options["field"]:
            fields = []
            for named in options["field"]:
                unit_key, dot, field = named.rpartition(".")
                if not dot or not unit_key or not field:
                    raise CommandError(
                        f"--field: expected UNIT_KEY.FIELD (s1.relevant), got {named!r}",
                        returncode=INVALID_INPUT,
                    )
                fields.append((unit_key, field))
        try:
            outcome = adjudication_take(
                actor=actor,
                artefact=artefact,
                grader=options["grader"],
                fields=fields,
                note=options["note"].strip(),
            )
        except ServiceError as error:
            for detail in error.details[1:]:
                self.stderr.write(
                    f"{detail.get('unit_key')} {detail.get('field')}: {detail.get('message')}"
                )
            raise CommandError(error.message, returncode=INVALID_INPUT) from None
        taken = ", ".join(f"{a.unit_key} {a.field} = {a.value}" for a in outcome.recorded)
        self.stdout.write(
            f"Artefact {artefact.public_id}: Grader {options['grader']}'s value recorded for "
            f"{len(outcome.recorded)} field(s): {taken}."
        )
        if outcome.not_asked:
            listed = ", ".join(f"{k} {f}" for k, f in outcome.not_asked)
            self.stdout.write(f"Left pending (Grader {options['grader']} was not asked): {listed}.")
        if outcome.moot:
            listed = ", ".join(f"{k} {f}" for k, f in outcome.moot)
            self.stdout.write(f"No longer asked, given the final values: {listed}.")
