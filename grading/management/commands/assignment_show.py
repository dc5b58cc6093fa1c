"""``enterpriseval assignment_show``: one of a grader's assignments, as the workspace shows it.

As ``GET /api/v1/grading/assignments/<public_id>/``: the same access check (anyone but the
assignment's grader is told there is no such assignment, exit 2), the same selector and
serializer. The table gives the task (input, sources, key elements, guidance), the text to
grade, the rubric fields with their allowed values, each unit's fields with the values saved so
far and what is still missing; ``--format json`` the API's answer. Blind (SPEC §5.1): nothing
names σ, the run, the judge's score or why the output came next. Texts are printed with their
terminal control characters written out.
"""

from __future__ import annotations

from textwrap import indent
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import add_actor, add_format, user_named
from grading.api.workspace import AssignmentDetailOutput
from grading.management.grader_cli import own_assignment, terminal_json, terminal_text
from grading.selectors.workspace import assignment_workspace


def block(text: str) -> str:
    """Return untrusted ``text`` safe for a terminal, indented under its heading."""
    return indent(terminal_text(text) or "(empty)", "  ", lambda _line: True)


def rubric_lines(rubric: list[dict[str, Any]], label_set: list[str]) -> list[str]:
    lines = []
    for field in rubric:
        pairs = zip(field["values"], field["labels"], strict=False)
        values = ", ".join(f"{value} ({label})" for value, label in pairs)
        if not values:
            values = ", ".join(label_set) or "a label of the task set"
        lines.append(f"  {field['name']} ({field['unit_kind']}): {field['question']}")
        lines.append(f"      values: {values}")
    return [terminal_text(line) for line in lines]


def unit_lines(units: list[dict[str, Any]], grades: dict[str, dict[str, str]]) -> list[str]:
    lines = []
    for unit in units:
        saved = grades.get(unit["key"], {})
        fields = " ".join(f"{name}={saved.get(name, '—')}" for name in unit["asks"])
        lines.append(terminal_text(f"  {unit['key']} ({unit['kind']}): {fields}"))
        if unit["text"]:
            lines.append(indent(terminal_text(unit["text"]), "      ", lambda _line: True))
    return lines


class Command(BaseCommand):
    help = (
        "Show one of your assignments: the task, its sources, the text to grade, the rubric "
        "fields with their allowed values and your saved values."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--assignment", required=True, help="Public id of the assignment.")
        add_actor(parser, "the assignment's grader")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        assignment = own_assignment(actor, options["assignment"])
        workspace = assignment_workspace(assignment=assignment)
        context = {"workspace": workspace, "total": workspace.total}
        data = AssignmentDetailOutput(assignment, context=context).data
        if options["format"] == "json":
            self.stdout.write(terminal_json(data))
            return
        task = data["task"]
        missing = ", ".join(f"{m['unit_key']} {m['field']}" for m in data["missing"])
        out = [
            terminal_text(
                f"assignment {data['public_id']}: {data['position']}/{data['total']} of session "
                f"{data['session']} {data['session_name']} ({data['session_status']}); "
                f"{data['status']}, {data['seconds_spent']:.0f} s spent"
            ),
            "",
            f"Task {terminal_text(task['task_id'])}",
            block(task["input"]),
            "Sources",
            *[block(f"[{s['id']}] {s['source']}: {s['text']}") for s in task["sources"]],
            "Key elements",
            *[block(f"[{k['id']}] {k['text']}") for k in task["key_elements"]],
            "Guidance",
            *[
                block(f"[{g['id']}]{' (mandatory)' if g['mandatory'] else ''} {g['text']}")
                for g in task["guidance"]
            ],
            "",
            "Text to grade",
            block(data["text"]),
            "",
            "Rubric",
            *rubric_lines(data["rubric"], data["label_set"]),
            "",
            "Units (field=saved value, — not yet graded)",
            *unit_lines(data["units"], data["grades"]),
            "",
            f"Missing: {missing}" if missing else "Missing: nothing (ready to submit)",
        ]
        self.stdout.write("\n".join(out))
