"""``enterpriseval session_create``: draw a seeded blinded sample of runs and assign graders.

As the new-session page and ``POST …/grading/sessions/``: the planned n is per σ (SPEC §5.3),
by default what the charter plans for each σ of the runs; ``--sample-size`` draws that many
outputs from each σ instead. ``--format json`` prints the session as the API returns it (a
management view: it names runs and graders; never give it to graders).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, table, write_json
from grading.api.sessions import (
    session_detail_data,
    session_judge,
    session_runs,
    session_users,
)
from grading.management.options import add_runs
from grading.models import SampleDesign, SessionMode, TauRule
from grading.selectors.sessions import session_access
from grading.services.sessions import session_create

OPTIONS = {
    "name": "--name",
    "runs": "--run",
    "graders": "--grader",
    "adjudicators": "--adjudicator",
    "design": "--design",
    "stratify_by": "--stratify-by",
    "sample_size": "--sample-size",
    "graders_per_artefact": "--graders-per-artefact",
    "seed": "--seed",
    "mode": "--mode",
    "judge": "--judge",
    "tau": "--tau",
    "tau_rule": "--tau-rule",
    "budget": "--budget",
    "agreement_size": "--agreement-size",
}


class Command(UseCaseCommand):
    help = (
        "Create a grading session: sample the runs' graded outputs (the charter's planned n "
        "per σ, or --sample-size per σ), blind them and assign each to graders."
    )
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="Shown to graders: no provenance.")
        add_runs(parser)
        parser.add_argument(
            "--grader", dest="graders", action="append", required=True, help="User (repeat)."
        )
        parser.add_argument(
            "--adjudicator",
            dest="adjudicators",
            action="append",
            required=True,
            help="User (repeat).",
        )
        parser.add_argument(
            "--design", choices=SampleDesign.values, default=SampleDesign.UNIFORM.value
        )
        parser.add_argument(
            "--stratify-by",
            default="",
            help="With --design stratified: a task metadata key whose values are strata within "
            "each run.",
        )
        parser.add_argument(
            "--sample-size", type=int, help="Outputs per σ (default: the charter's plan)."
        )
        parser.add_argument("--graders-per-artefact", type=int, default=2)
        parser.add_argument("--include-baselines", action="store_true", help="Add human baselines.")
        parser.add_argument("--seed", type=int, help="Sampling seed (default: random, recorded).")
        parser.add_argument(
            "--mode",
            choices=SessionMode.values,
            default=SessionMode.FIXED.value,
            help="sequential: grade until decided, one run (SPEC §5.5).",
        )
        parser.add_argument("--judge", type=int, help="Sequential: id of the judge to draw by.")
        parser.add_argument(
            "--tau", type=float, default=0.5, help="Sequential: uniform share τ (adaptive: floor)."
        )
        parser.add_argument(
            "--tau-rule",
            choices=TauRule.values,
            default=TauRule.FIXED.value,
            help="Sequential: fixed τ, or adaptive with --tau as the floor (τ_t kept per draw).",
        )
        parser.add_argument(
            "--budget", type=int, help="Sequential: most outputs graded (default: the plan)."
        )
        parser.add_argument(
            "--agreement-size", type=int, help="Sequential: uniform sub-sample for agreement."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, session_access, write=True)
        with refusals(OPTIONS):
            session = session_create(
                actor=actor,
                use_case=use_case,
                name=options["name"],
                runs=session_runs(use_case, options["runs"]),
                graders=session_users(options["graders"], "graders"),
                adjudicators=session_users(options["adjudicators"], "adjudicators"),
                include_baselines=options["include_baselines"],
                design=options["design"],
                sample_size=options["sample_size"],
                graders_per_artefact=options["graders_per_artefact"],
                seed=options["seed"],
                stratify_by=options["stratify_by"],
                mode=options["mode"],
                judge=session_judge(options["judge"]),
                tau=options["tau"],
                tau_rule=options["tau_rule"],
                budget=options["budget"],
                agreement_size=options["agreement_size"],
            )
        if options["format"] == "json":
            write_json(self.stdout, session_detail_data(session))
            return
        if session.is_sequential:
            share = (
                f"adaptive τ_t, floor {session.tau}"
                if session.tau_rule == TauRule.ADAPTIVE
                else f"τ = {session.tau}"
            )
            self.stdout.write(
                f"Sequential session {session.public_id} ({session.name}) of {use_case.key}: "
                f"up to {session.budget} of {session.population_size} outputs, drawn by judge "
                f"{session.judge_id}'s uncertainty ({share}, seed {session.seed}); "
                f"{len(session.agreement_sample)} uniform outputs double-graded for agreement; "
                f"{session.draws.count()} drawn so far, {session.graders_per_artefact} graders "
                "each."
            )
            return
        self.stdout.write(
            f"Session {session.public_id} ({session.name}) of {use_case.key}: "
            f"{session.sample_size} of {session.population_size} artefacts, "
            f"{session.graders_per_artefact} graders each, {session.design} design, seed "
            f"{session.seed}, charter v{session.charter.version}."
        )
        rows = [
            (
                arm["label"],
                arm["population"],
                arm["planned"],
                arm.get("planned_by") or "whole population",
                arm["sampled"],
            )
            for arm in session.arms
        ]
        self.stdout.write(table(rows, ("arm", "outputs", "planned", "planned by", "sampled")))
