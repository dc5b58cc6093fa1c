"""``enterpriseval oversight_study_create``: seed defects into blinded reviewer queues.

As the new-study form and ``POST …/oversight/`` (charter owner only): each reviewer (a member
holding the grader role) gets ``--items-per-reviewer`` copies of succeeded graded outputs of
the runs, ``round(--defect-share · --items-per-reviewer)`` of them carrying one seeded defect,
kinds dealt round-robin, order shuffled (SPEC §4 catch_rate, false_acceptance_rate). The name
is shown to reviewers and must not reveal provenance or the design. ``--format json`` prints
the study as the API returns it (a management view: never give it to reviewers).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, user_named, write_json
from grading.api.oversight import StudyOutput
from grading.api.sessions import session_runs, session_users
from grading.management.commands.oversight_status import owner_use_case
from grading.management.options import add_runs
from grading.models import DefectKind
from grading.selectors.oversight import oversight_study_list
from grading.services.oversight import oversight_study_create

OPTIONS = {
    "name": "--name",
    "runs": "--run",
    "reviewers": "--reviewer",
    "items_per_reviewer": "--items-per-reviewer",
    "defect_share": "--defect-share",
    "kinds": "--kind",
    "seed": "--seed",
}


class Command(UseCaseCommand):
    help = (
        "Create an oversight study: copies of the runs' graded outputs, a share of them with "
        "one seeded defect, mixed blind into each reviewer's queue."
    )
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="Shown to reviewers: no provenance.")
        add_runs(parser)
        parser.add_argument(
            "--reviewer",
            dest="reviewers",
            action="append",
            required=True,
            help="User holding the grader role (repeat).",
        )
        parser.add_argument(
            "--items-per-reviewer", type=int, required=True, help="Copies in each queue."
        )
        parser.add_argument(
            "--defect-share",
            type=float,
            default=0.3,
            help="Share of each queue carrying one seeded defect (default 0.3).",
        )
        parser.add_argument(
            "--kind",
            dest="kinds",
            action="append",
            choices=DefectKind.values,
            help="Defect kind to seed (repeat; default: every kind).",
        )
        parser.add_argument("--seed", type=int, help="Seed (default: random, recorded).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = owner_use_case(actor, options["use_case"])
        with refusals(OPTIONS):
            study = oversight_study_create(
                actor=actor,
                use_case=use_case,
                name=options["name"],
                runs=session_runs(use_case, options["runs"]),
                reviewers=session_users(options["reviewers"], "reviewers"),
                items_per_reviewer=options["items_per_reviewer"],
                defect_share=options["defect_share"],
                kinds=options["kinds"],
                seed=options["seed"],
            )
        created = oversight_study_list(use_case=use_case).get(pk=study.pk)
        if options["format"] == "json":
            write_json(self.stdout, StudyOutput(created).data)
            return
        self.stdout.write(
            f"Oversight study {study.public_id} ({study.name}) of {use_case.key}: "
            f"{created.item_count} copies for {created.reviewer_count} reviewer(s), "
            f"defect share {study.defect_share}, seed {study.seed}. Reviewers find their "
            "queue under Oversight; close it with oversight_study_close."
        )
