"""``enterpriseval assignment_grade``: save values on one of a grader's assignments, and submit.

As ``POST /api/v1/grading/assignments/<public_id>/grades/`` (autosave) and, with ``--submit``,
``…/submit/``: the same access check (anyone but the assignment's grader is told there is no
such assignment, exit 2), the same input serializers and the same services (``grades_save``,
``assignment_submit``). Each value is ``UNIT.FIELD=VALUE`` (``--value s1.assertive=Y``; an empty
value clears the field) or, with ``--file``, a JSON mapping ``{unit: {field: value}}`` (the
``grades`` of ``assignment_show --format json``). ``--elapsed-seconds`` is the time spent on the
artefact since the last save; it is required, as a missing time would count as none.

A refusal (an unknown unit or field, a value the field does not allow, a field still missing on
``--submit``, a closed session, a submitted assignment changed without ``--reason``) names what
is at fault and writes nothing: the save and the submission are one transaction.
``--format json`` prints what the autosave endpoint answers, or with ``--submit`` what the
submit endpoint answers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from charters.management.cli import (
    add_actor,
    add_format,
    read_text,
    refusal,
    service_message,
    user_named,
)
from enterpriseval.api import validated
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind
from grading.api.workspace import (
    GradeChangeInput,
    GradesInput,
    GradesSavedOutput,
    SubmittedOutput,
)
from grading.management.grader_cli import own_assignment, terminal_json, terminal_text
from grading.models import Assignment
from grading.selectors.workspace import (
    assignment_grading_state,
    assignment_list,
    assignment_siblings,
    next_open_of,
)
from grading.services.grades import GradeChange, assignment_submit, grades_save

#: A service's field → the option that gave it.
OPTIONS = {
    "elapsed": "--elapsed-seconds",
    "elapsed_seconds": "--elapsed-seconds",
    "reason": "--reason",
    "status": "--submit",
    "session": "--assignment",
}
CHANGE = re.compile(r"changes\[(\d+)\]\.?")

Given = list[tuple[str, dict[str, str]]]


def values_given(values: list[str]) -> Given:
    """Return each ``--value UNIT.FIELD=VALUE`` as (the option as given, the API's change)."""
    given = []
    for value in values:
        target, equals, chosen = value.partition("=")
        unit_key, dot, field = target.rpartition(".")
        if not (equals and dot and unit_key and field):
            raise refusal(f"--value: {value!r} is not UNIT.FIELD=VALUE (e.g. s1.assertive=Y)")
        given.append((f"--value {value}", {"unit_key": unit_key, "field": field, "value": chosen}))
    return given


def file_given(path: str) -> Given:
    """Return each value of the ``--file`` mapping ``{unit: {field: value}}``, in file order."""
    try:
        grades = json.loads(read_text(path, "--file", kind=UploadKind.GRADES))
    except json.JSONDecodeError as error:
        raise refusal(f"--file: {path}:{error.lineno}: not JSON ({error.msg})") from None
    if not isinstance(grades, dict) or not all(isinstance(v, dict) for v in grades.values()):
        raise refusal(f"--file: {path}: expected a mapping {{unit: {{field: value}}}}")
    return [
        (f"{path}: {unit_key}.{field}", {"unit_key": unit_key, "field": field, "value": value})
        for unit_key, fields in grades.items()
        for field, value in fields.items()
    ]


def refused(error: ServiceError, origins: list[str]) -> CommandError:
    """Return the refusal naming the value (as given), or the option, at fault."""
    at = CHANGE.match(error.field or "")
    if at is None:
        return refusal(service_message(error, OPTIONS))
    message = CHANGE.sub("", error.message, count=1)
    return refusal(f"{origins[int(at.group(1))]}: {message}")


class Command(BaseCommand):
    help = (
        "Save values on one of your assignments (UNIT.FIELD=VALUE or a JSON file) with the time "
        "spent, and with --submit submit it; nothing is written if any of it is refused."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--assignment", required=True, help="Public id of the assignment.")
        parser.add_argument(
            "--elapsed-seconds",
            type=float,
            required=True,
            help="Seconds spent on the artefact since the last save (capped per call).",
        )
        values = parser.add_mutually_exclusive_group()
        values.add_argument(
            "--value",
            action="append",
            default=[],
            help="UNIT.FIELD=VALUE, e.g. s1.assertive=Y (repeat; an empty VALUE clears).",
        )
        values.add_argument("--file", help="JSON mapping {unit: {field: value}}.")
        parser.add_argument(
            "--reason",
            default="",
            help="Why a submitted assignment's values change (required after submission).",
        )
        parser.add_argument(
            "--submit", action="store_true", help="Then submit (every asked field graded)."
        )
        add_actor(parser, "the assignment's grader")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        assignment = own_assignment(actor, options["assignment"], for_write=True)
        given = file_given(options["file"]) if options["file"] else values_given(options["value"])
        if not given and not options["submit"]:
            raise refusal("--value: give --value UNIT.FIELD=VALUE, --file or --submit")
        origins = [origin for origin, _change in given]
        for origin, change in given:
            try:
                validated(GradeChangeInput, change)
            except ServiceError as error:
                raise refusal(f"{origin}: {error.message}") from None
        try:
            data = validated(
                GradesInput,
                {
                    "changes": [change for _origin, change in given],
                    "elapsed_seconds": options["elapsed_seconds"],
                    "reason": options["reason"],
                },
            )
            with transaction.atomic():
                if given:
                    assignment = grades_save(
                        actor=actor,
                        assignment=assignment,
                        changes=[GradeChange(**change) for change in data["changes"]],
                        elapsed_seconds=data["elapsed_seconds"],
                        reason=data["reason"],
                    )
                if options["submit"]:
                    assignment = assignment_submit(
                        actor=actor,
                        assignment=assignment,
                        elapsed_seconds=0.0 if given else data["elapsed_seconds"],
                    )
        except ServiceError as error:
            raise refused(error, origins) from None
        if options["submit"]:
            self._submitted(actor, assignment, options["format"])
        else:
            self._saved(assignment, len(given), options["format"])

    def _saved(self, assignment: Assignment, count: int, form: str) -> None:
        grades, missing = assignment_grading_state(assignment=assignment)
        data = GradesSavedOutput(assignment, context={"grades": grades, "missing": missing}).data
        if form == "json":
            self.stdout.write(terminal_json(data))
            return
        listed = ", ".join(f"{unit_key} {field}" for unit_key, field in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        still = f"{len(missing)} missing: {listed}{more}"
        self.stdout.write(
            terminal_text(
                f"Saved {count} value(s) on assignment {assignment.public_id}: {data['status']}, "
                f"{data['seconds_spent']:.0f} s spent; "
                + (f"{still}." if missing else "nothing missing (ready to submit).")
            )
        )

    def _submitted(self, actor: Any, assignment: Assignment, form: str) -> None:
        listed = assignment_list(user=actor).get(pk=assignment.pk)
        data = SubmittedOutput(listed).data
        if form == "json":
            self.stdout.write(terminal_json(data))
            return
        following = next_open_of(assignment_siblings(listed), listed.position)
        self.stdout.write(
            f"Submitted assignment {listed.public_id} ({data['position']}/{data['total']}), "
            f"{data['seconds_spent']:.0f} s spent; "
            + (
                f"next: {following.public_id}."
                if following
                else "every assignment of this session is submitted."
            )
        )
