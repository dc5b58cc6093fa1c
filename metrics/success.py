"""Task success per output by the charter's success rule, for pass^k and its kin (SPEC §4.1).

Executed and imported outputs are scored by the same rule. Producing an output is completion,
not success: an output is a success only when the rule says so, a failure when it says not (a
failed output is always a failure), and *unknown* otherwise. Unknown is never a success: a run
with an unknown success, or under a charter that states no rule, gets no success counts, and
:attr:`RunSuccesses.reason` says why, so pass^k, dispersion and cost per successful task have
no estimate instead of measuring completion.

Under ``human_acceptable`` an output's success is the final (agreed or adjudicated) value of
its "Acceptable as is?" grade in the decision's grading session; an output the session did not
grade is unknown. pass^k needs every one of the K repeats of a task, so such a run has an
estimate only when the session graded all its outputs, and the reason says how many were.

Six queries at most, whatever the number of outputs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from charters.catalogue import (
    SUCCESS_HUMAN_ACCEPTABLE,
    SUCCESS_KEY_ELEMENTS_PRESENT,
    SUCCESS_LABEL_EQUALS_GOLD,
    SUCCESS_RECORDED,
    SUCCESS_RULES,
)
from charters.models import Task
from grading.models import GradingSession
from grading.rubric import ACCEPTABLE, ACCEPTABLE_KEY, YES
from grading.selectors.artefacts import output_field_finals
from runs.models import Judge, JudgeScore, Output, OutputStatus, Run, RunMode, Unit, UnitKind

KEY_ELEMENT_CRITERION = "key_element_captured"
_SHOWN_UNKNOWN = 3


@dataclass(frozen=True)
class RunSuccesses:
    """Success counts of one run by one rule, or why there are none.

    ``successes`` holds :math:`c_i` per task the run holds outputs of (task order) over
    ``trials`` = K repeats; ``None`` when success is undetermined (``reason`` says why).
    ``by_output`` maps (task pk, repeat) to the verdict of each output when determined.
    ``method`` names how success was determined for this run, in words a reader compares
    across σ ("label parsed from the executed output = gold label"); ``unknown`` counts the
    outputs (or missing repeats) whose success is unknown.
    """

    rule: str | None
    method: str
    successes: NDArray[np.int64] | None
    trials: int
    unknown: int
    reason: str
    by_output: dict[tuple[int, int], bool] = field(default_factory=dict)

    @property
    def determined(self) -> bool:
        return self.successes is not None


def run_successes(
    *,
    run: Run,
    rule: str | None,
    judge: Judge | None = None,
    session: GradingSession | None = None,
) -> RunSuccesses:
    """Return the success counts of ``run`` under the charter's ``rule`` (SPEC §4.1).

    ``judge`` is read by ``key_elements_present``, ``session`` (the grading session whose
    final grades decide) by ``human_acceptable``.
    """
    trials = run.repeats
    method = success_method(run=run, rule=rule, judge=judge)
    if not rule:
        return RunSuccesses(
            None,
            method,
            None,
            trials,
            0,
            "the charter states no success rule (success_rule), so no output's success is "
            "known: producing an output is completion, not success",
        )
    if rule not in SUCCESS_RULES:
        raise ValueError(f"rule: expected one of {', '.join(SUCCESS_RULES)}, got {rule!r}")
    if rule == SUCCESS_HUMAN_ACCEPTABLE and session is None:
        return RunSuccesses(
            rule,
            method,
            None,
            trials,
            0,
            "success by human_acceptable reads the 'Acceptable as is?' grades of a grading "
            "session; none was chosen, so no output's success is known",
        )
    if rule == SUCCESS_KEY_ELEMENTS_PRESENT and judge is None:
        return RunSuccesses(
            rule,
            method,
            None,
            trials,
            0,
            "success by key_elements_present needs a judge's key-element scores; no judge was "
            "chosen",
        )
    tasks = list(
        Task.objects.filter(task_set_id=run.task_set_id, split=run.split)
        .order_by("line_number")
        .values_list("pk", "external_id", "gold_label")
    )
    outputs = list(
        Output.objects.filter(run=run, task__split=run.split).values_list(
            "pk", "task_id", "repeat_index", "status", "success", "label"
        )
    )
    captured: dict[int, bool | None] = {}
    if rule == SUCCESS_KEY_ELEMENTS_PRESENT:
        captured = _key_elements_captured(outputs, judge)
    elif rule == SUCCESS_HUMAN_ACCEPTABLE:
        assert session is not None
        captured = _graded_acceptable(session, run)
    gold = {pk: gold_label for pk, _external, gold_label in tasks}
    verdicts: dict[int, list[bool | None]] = defaultdict(list)
    by_output: dict[tuple[int, int], bool] = {}
    for pk, task_pk, repeat, status, flag, label in outputs:
        if repeat >= trials:
            continue
        verdict: bool | None
        if status != OutputStatus.SUCCEEDED:
            verdict = False  # a failed output is never a success
        elif rule == SUCCESS_RECORDED:
            verdict = flag
        elif rule == SUCCESS_LABEL_EQUALS_GOLD:
            expected = gold.get(task_pk)
            verdict = None if label is None or not expected else label == expected
        else:
            verdict = captured.get(pk)
        verdicts[task_pk].append(verdict)
        if verdict is not None:
            by_output[(task_pk, repeat)] = verdict
    # A task the run holds no output of is outside the run (as for every other metric, the
    # run's outputs are the sample); a missing repeat of a task it holds is unknown.
    run_tasks = [(pk, external_id) for pk, external_id, _gold in tasks if pk in verdicts]
    counts = np.zeros(len(run_tasks), dtype=np.int64)
    unknown = 0
    unknown_tasks: list[str] = []
    for index, (pk, external_id) in enumerate(run_tasks):
        given = verdicts[pk]
        missing = trials - len(given) + sum(v is None for v in given)
        if missing:
            unknown += missing
            unknown_tasks.append(external_id)
        counts[index] = sum(v is True for v in given)
    if not run_tasks:
        return RunSuccesses(rule, method, None, trials, 0, "the run holds no output")
    if unknown:
        shown = ", ".join(unknown_tasks[:_SHOWN_UNKNOWN])
        more = len(unknown_tasks) - _SHOWN_UNKNOWN
        return RunSuccesses(
            rule,
            method,
            None,
            trials,
            unknown,
            f"the success of {unknown} of {len(run_tasks) * trials} outputs is unknown "
            f"({_unknown_why(rule, run, captured)}; tasks {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "); unknown is never a success, so there is no estimate",
        )
    return RunSuccesses(rule, method, counts, trials, 0, "", by_output)


def success_method(*, run: Run, rule: str | None, judge: Judge | None = None) -> str:
    """Return how success is determined for ``run`` under ``rule``, in words."""
    executed = run.mode == RunMode.EXECUTED
    if not rule:
        return "not determined (the charter states no success rule)"
    if rule == SUCCESS_LABEL_EQUALS_GOLD:
        source = (
            "parsed from each executed output by σ's label format"
            if executed
            else "imported with each output"
        )
        return f"label {source}, compared with the gold label"
    if rule == SUCCESS_RECORDED:
        return (
            "automatic success flag (an executed run records none)"
            if executed
            else "success flag imported with each output"
        )
    if rule == SUCCESS_KEY_ELEMENTS_PRESENT:
        by = f"judge {judge.name} {judge.version}" if judge is not None else "a judge"
        return f"every key element scored captured by {by}"
    return "graded acceptable as is by humans (final grade: agreed or adjudicated)"


def _unknown_why(rule: str, run: Run, captured: Mapping[int, bool | None]) -> str:
    if rule == SUCCESS_LABEL_EQUALS_GOLD:
        if run.mode == RunMode.EXECUTED:
            return "no label could be parsed by σ's output format, or the task has no gold label"
        return "no label imported, or the task has no gold label"
    if rule == SUCCESS_RECORDED:
        if run.mode == RunMode.EXECUTED:
            return "an executed run records no success flag"
        return "no success flag imported"
    if rule == SUCCESS_KEY_ELEMENTS_PRESENT:
        return "a key element not scored by the judge, or a task without key elements"
    graded = sum(verdict is not None for verdict in captured.values())
    return (
        f"not graded 'Acceptable as is?', or a disagreement not yet adjudicated: the grading "
        f"session decided {graded} of the run's outputs, and pass^k needs all K repeats of "
        "every task graded, so grade every output of the run (sample it whole)"
    )


def _graded_acceptable(session: GradingSession, run: Run) -> dict[int, bool | None]:
    """Return per graded output whether its final "Acceptable as is?" grade is yes."""
    finals = output_field_finals(
        session=session, run=run, unit_key=ACCEPTABLE_KEY, fields=(ACCEPTABLE,)
    )
    verdicts: dict[int, bool | None] = {}
    for output, values in finals.items():
        value = values.get(ACCEPTABLE)
        verdicts[output] = None if value is None else value == YES
    return verdicts


def _key_elements_captured(
    outputs: list[tuple[int, int, int, str, bool | None, str | None]], judge: Judge | None
) -> dict[int, bool | None]:
    """Return per output whether the judge scored every key element captured (None: unknown)."""
    output_pks = [row[0] for row in outputs]
    units: dict[int, list[int]] = defaultdict(list)
    for unit_pk, output_pk in Unit.objects.filter(
        output_id__in=output_pks, kind=UnitKind.KEY_ELEMENT
    ).values_list("pk", "output_id"):
        units[output_pk].append(unit_pk)
    scores = dict(
        JudgeScore.objects.filter(
            judge=judge,
            unit_id__in=[pk for pks in units.values() for pk in pks],
            criterion=KEY_ELEMENT_CRITERION,
        ).values_list("unit_id", "score")
    )
    captured: dict[int, bool | None] = {}
    for output_pk in output_pks:
        mine = units.get(output_pk, [])
        if not mine or any(pk not in scores for pk in mine):
            captured[output_pk] = None
        else:
            captured[output_pk] = all(scores[pk] >= 1.0 for pk in mine)
    return captured
