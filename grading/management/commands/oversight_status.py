"""``enterpriseval oversight_status``: an oversight study's progress and, once closed, results.

As the study's page and ``GET …/oversight/<id>/results/`` (charter owner or second-line
reviewer; graders, who review blind, are refused): each reviewer's decided and remaining
copies, and once the study is closed ρ_catch (caught / seeded) and the false acceptance rate
per defect kind and overall with their Wilson intervals at the charter's confidence, the false
alarm rate and the review burden. ``--format json`` prints what the results endpoint returns,
at any time (figures of an open study are interim).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.http import Http404

from charters.management.cli import (
    UseCaseCommand,
    refusal,
    refusals,
    table,
    use_case_as,
    write_json,
)
from charters.models import Role, UseCase
from charters.permissions import require_role, use_case_for
from grading.api.oversight import READ_ROLES, ResultsOutput
from grading.models import OversightStudy, SessionStatus
from grading.selectors.oversight import (
    OversightResults,
    Proportion,
    oversight_results,
    oversight_study_get,
)


def study_named(use_case: UseCase, public_id: str) -> OversightStudy:
    """Return the use case's study ``public_id``, or refuse naming ``--study``."""
    try:
        return oversight_study_get(use_case=use_case, public_id=public_id)
    except Http404:
        raise refusal(f"--study: no oversight study {public_id!r} in {use_case.key}") from None


def owner_use_case(actor: Any, key: str) -> UseCase:
    """Return the use case ``key`` if ``actor`` may change its studies, as the API checks:
    a reader of the studies (charter owner or reviewer) who holds the charter owner role."""
    use_case: UseCase = use_case_as(actor, key, use_case_for, roles=READ_ROLES)
    with refusals():
        require_role(actor, use_case, [Role.CHARTER_OWNER])
    return use_case


def rate(value: Proportion) -> str:
    """Return ``successes/n = p% [lo%, hi%]`` (— when nothing was decided)."""
    if value.percent is None or value.lo_percent is None or value.hi_percent is None:
        return f"{value.successes}/{value.n} —"
    return (
        f"{value.successes}/{value.n} = {value.percent:.1f}% "
        f"[{value.lo_percent:.1f}%, {value.hi_percent:.1f}%]"
    )


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} s"


class Command(UseCaseCommand):
    help = (
        "Print an oversight study's progress per reviewer and, once it is closed, its catch "
        "and false acceptance rates with their intervals."
    )
    who = "a charter owner or reviewer of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Public id of the study.")

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, use_case = self.actor_and_use_case(options, use_case_for, roles=READ_ROLES)
        study = study_named(use_case, options["study"])
        results = oversight_results(study=study)
        if options["format"] == "json":
            write_json(self.stdout, ResultsOutput(results).data)
            return
        closed = study.status == SessionStatus.CLOSED
        self.stdout.write(
            f"Oversight study {study.public_id} ({study.name}) of {use_case.key}: "
            f"{'closed' if closed else 'open'}, {results.decided} of {results.items} copies "
            "decided."
        )
        self.stdout.write(
            table(
                [(r.username, r.items, r.decided, r.items - r.decided) for r in results.reviewers],
                ("reviewer", "copies", "decided", "remaining"),
            )
        )
        if not closed:
            self.stdout.write(
                "Rates are given once the study is closed (oversight_study_close); "
                "--format json gives the interim figures, as the API does."
            )
            return
        self.write_results(results)

    def write_results(self, results: OversightResults) -> None:
        level = f"{100 * results.confidence:g}%"
        self.stdout.write(f"Rates with Wilson {level} intervals. {results.caught_rule}")
        rows = [
            (k.label, k.seeded, k.caught, rate(k.catch), rate(k.false_acceptance), k.pending)
            for k in [*results.by_kind, results.overall]
        ]
        self.stdout.write(
            table(
                rows,
                ("defect kind", "seeded", "caught", "ρ_catch", "false acceptance", "pending"),
            )
        )
        self.stdout.write(
            table(
                [
                    (
                        r.username,
                        rate(r.catch),
                        rate(r.false_acceptance),
                        rate(r.false_alarm),
                        seconds(r.mean_seconds),
                    )
                    for r in results.reviewers
                ],
                ("reviewer", "ρ_catch", "false acceptance", "false alarm", "mean time"),
            )
        )
        self.stdout.write(
            f"False alarms (clean copies rejected): {rate(results.false_alarm)}; mean review "
            f"time {seconds(results.mean_seconds)} per decided copy."
        )
