"""judge_get_or_create and judge_run: registration, scoring every unit, idempotence, audit."""

from __future__ import annotations

import hashlib

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.models import AuditEntry
from charters.models import Stage
from enterpriseval.errors import ConflictError, ServiceError
from runs.judges.offline import OFFLINE_METHOD
from runs.judges.rubric import QUESTIONS_BY_KIND, RUBRIC_PROMPT, RUBRIC_VERSION
from runs.models import Judge, JudgeScore, Output, OutputStatus, Run, RunMode, RunStatus, Unit
from runs.segment import build_units
from runs.services import judging as judging_service
from runs.services.judging import judge_get_or_create, judge_run

CRITERIA_PER_KIND = {
    kind: sum(len(q.criteria) for q in questions) for kind, questions in QUESTIONS_BY_KIND.items()
}


def make_run(world, *, outputs: int = 3, failed: int = 0, status=RunStatus.COMPLETED) -> Run:
    """A run whose outputs restate each task's key elements, each citing a permitted chunk."""
    run = Run.objects.create(
        use_case=world.use_case,
        configuration=world.configuration,
        task_set=world.task_set,
        split="graded",
        mode=RunMode.IMPORTED,
        status=status,
        created_by=world.model_owner,
    )
    tasks = world.tasks("graded")
    for task in tasks[:outputs]:
        add_output(run, task)
    for task in tasks[outputs : outputs + failed]:
        Output.objects.create(
            run=run, task=task, repeat_index=0, status=OutputStatus.FAILED, error="timeout"
        )
    return run


def add_output(run: Run, task, *, text: str | None = None) -> Output:
    sources = [chunk.chunk_id for chunk in task.source_chunks.all()]
    if text is None:
        text = " ".join(
            f"{element.text} [{sources[n % len(sources)]}]."
            for n, element in enumerate(task.key_elements.all())
        )
    output = Output.objects.create(
        run=run, task=task, repeat_index=0, status=OutputStatus.SUCCEEDED, text=text
    )
    specs = build_units(
        text,
        key_element_ids=[e.element_id for e in task.key_elements.all()],
        guidance_item_ids=[g.item_id for g in task.guidance_items.all()],
    )
    Unit.objects.bulk_create(
        Unit(
            output=output,
            kind=s.kind,
            key=s.key,
            position=s.position,
            text=s.text,
            ref_id=s.ref_id,
            sentence_position=s.sentence_position,
        )
        for s in specs
    )
    return output


def expected_score_count(run: Run) -> int:
    units = Unit.objects.filter(output__run=run, output__status=OutputStatus.SUCCEEDED)
    return sum(CRITERIA_PER_KIND[kind] for kind in units.values_list("kind", flat=True))


# -- registering judges ----------------------------------------------------------------------------


def test_the_offline_judge_is_registered_once_with_its_rubric_and_hash(db):
    judge = judge_get_or_create(kind="offline")
    again = judge_get_or_create(kind="offline")
    assert again.pk == judge.pk
    assert (judge.name, judge.version, judge.model_ref) == ("offline", RUBRIC_VERSION, "")
    assert judge.rubric == f"{RUBRIC_PROMPT}\n\n{OFFLINE_METHOD}"
    assert judge.rubric_sha256 == hashlib.sha256(judge.rubric.encode()).hexdigest()
    registered = AuditEntry.objects.filter(action="judge.register")
    assert registered.count() == 1
    assert registered.get().payload["rubric_sha256"] == judge.rubric_sha256


def test_an_llm_judge_is_named_after_its_model_by_default(db):
    judge = judge_get_or_create(kind="llm", model_ref="anthropic/claude-sonnet-4.5")
    assert judge.name == "llm-anthropic-claude-sonnet-4-5"
    assert judge.rubric == RUBRIC_PROMPT


def test_a_name_registered_with_another_model_is_refused(db):
    judge_get_or_create(kind="llm", model_ref="openai/gpt-4o", name="house-judge")
    with pytest.raises(ConflictError, match="registered with another model"):
        judge_get_or_create(kind="llm", model_ref="openai/gpt-4.1", name="house-judge")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "oracle"}, "kind"),
        ({"kind": "offline", "model_ref": "openai/gpt-4o"}, "model_ref"),
        ({"kind": "llm"}, "model_ref"),
        ({"kind": "llm", "model_ref": "gpt-4o", "name": "has spaces"}, "name"),
    ],
)
def test_a_judge_with_bad_settings_is_refused_naming_the_field(db, kwargs, field):
    with pytest.raises(ServiceError) as raised:
        judge_get_or_create(**kwargs)
    assert raised.value.field == field


# -- judging a run ---------------------------------------------------------------------------------


def test_every_unit_of_every_succeeded_output_gets_every_criterion(runs_world):
    run = make_run(runs_world, outputs=3, failed=1)
    judge = judge_get_or_create(kind="offline")
    summary = judge_run(actor=runs_world.model_owner, run=run, judge=judge, purpose="gated")
    units = Unit.objects.filter(output__run=run)
    assert (summary.outputs_total, summary.outputs_judged, summary.outputs_failed) == (3, 3, 0)
    assert summary.complete
    assert summary.units_scored == units.count()
    scores = JudgeScore.objects.filter(judge=judge)
    assert scores.count() == summary.scores_written == expected_score_count(run)
    for unit in units.prefetch_related("judge_scores"):
        criteria = sorted(score.criterion for score in unit.judge_scores.all())
        expected = sorted(c for q in QUESTIONS_BY_KIND[unit.kind] for c in q.criteria)
        assert criteria == expected, unit.key


def test_outputs_restating_their_sources_score_as_supported_and_captured(runs_world):
    run = make_run(runs_world, outputs=2)
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=None, run=run, judge=judge, purpose="gated")
    captured = JudgeScore.objects.filter(judge=judge, criterion="key_element_captured")
    assert captured.count() == 8  # four key elements per task
    assert {s.label for s in captured} == {"present_correct"}


def test_a_fabricated_figure_is_stored_as_unsupported_with_its_rationale(runs_world):
    run = make_run(runs_world, outputs=0)
    task = runs_world.tasks("graded")[0]  # G1: EBITDA $30.9 million in G1-ar24-p41
    add_output(run, task, text="FY2024 EBITDA was $39.0 million [G1-ar24-p41].")
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=None, run=run, judge=judge, purpose="gated")
    supported = JudgeScore.objects.get(judge=judge, unit__key="s1", criterion="supported")
    assert (supported.score, supported.label) == (0.0, "not")
    assert supported.rationale == "39.0 million not in G1-ar24-p41"
    captured = JudgeScore.objects.get(
        judge=judge, unit__key="k:ke3", criterion="key_element_captured"
    )
    assert captured.label == "present_wrong"


def test_judging_again_skips_what_is_scored_and_scores_only_new_units(runs_world):
    run = make_run(runs_world, outputs=2)
    judge = judge_get_or_create(kind="offline")
    first = judge_run(actor=None, run=run, judge=judge, purpose="gated")
    second = judge_run(actor=None, run=run, judge=judge, purpose="gated")
    assert (second.outputs_judged, second.outputs_skipped, second.scores_written) == (0, 2, 0)
    assert JudgeScore.objects.count() == first.scores_written

    output = Output.objects.filter(run=run).first()
    Unit.objects.create(
        output=output,
        kind="guidance_item",
        key="g:CP-99",
        position=99,
        ref_id="CP-99",
        text="Note customer concentration.",
    )
    third = judge_run(actor=None, run=run, judge=judge, purpose="gated")
    assert (third.outputs_judged, third.units_scored, third.scores_written) == (1, 1, 1)
    assert JudgeScore.objects.count() == first.scores_written + 1


def test_scores_a_concurrent_judging_wrote_first_are_kept_and_the_rest_written(
    runs_world, monkeypatch
):
    run = make_run(runs_world, outputs=2)
    judge = judge_get_or_create(kind="offline")
    load_batch = judging_service._load_batch
    raced: list[JudgeScore] = []

    def load_then_race(output_ids, judge_):
        loaded = load_batch(output_ids, judge_)
        # Another judge_run of the same judge writes one unit's scores after this one loaded.
        unit = Unit.objects.filter(output_id=output_ids[0]).order_by("pk").first()
        for question in QUESTIONS_BY_KIND[unit.kind]:
            for criterion in question.criteria:
                raced.append(
                    JudgeScore.objects.create(
                        judge=judge_,
                        unit=unit,
                        criterion=criterion,
                        score=0.5,
                        label="theirs",
                        rationale="written by the other judging",
                    )
                )
        return loaded

    monkeypatch.setattr(judging_service, "_load_batch", load_then_race)
    summary = judge_run(actor=None, run=run, judge=judge, purpose="gated")
    assert summary.complete and summary.outputs_judged == 2
    assert JudgeScore.objects.filter(judge=judge).count() == expected_score_count(run)
    for row in raced:
        row.refresh_from_db()
        assert (row.score, row.label, row.rationale) == (
            0.5,
            "theirs",
            "written by the other judging",
        )


def test_another_judge_version_scores_the_same_units_separately(runs_world):
    run = make_run(runs_world, outputs=1)
    first = judge_get_or_create(kind="offline")
    second = judge_get_or_create(kind="offline", name="offline-shadow")
    a = judge_run(actor=None, run=run, judge=first, purpose="gated")
    b = judge_run(actor=None, run=run, judge=second, purpose="gated")
    assert a.scores_written == b.scores_written > 0


def test_an_output_without_units_is_reported_and_leaves_judging_incomplete(runs_world):
    run = make_run(runs_world, outputs=1)
    Output.objects.create(
        run=run,
        task=runs_world.tasks("graded")[5],
        repeat_index=0,
        status=OutputStatus.SUCCEEDED,
        text="Not segmented yet.",
    )
    summary = judge_run(
        actor=None, run=run, judge=judge_get_or_create(kind="offline"), purpose="gated"
    )
    assert (summary.outputs_total, summary.outputs_without_units) == (2, 1)
    assert not summary.complete


def test_judging_is_audited_with_the_judge_and_counts_and_does_not_enter_grading(
    runs_world,
):
    run = make_run(runs_world, outputs=2, failed=1)
    judge = judge_get_or_create(kind="offline")
    summary = judge_run(actor=runs_world.model_owner, run=run, judge=judge, purpose="gated")
    entry = AuditEntry.objects.get(action="run.judge")
    assert entry.actor == runs_world.model_owner
    assert entry.target_id == str(run.pk)
    assert entry.use_case_id == runs_world.use_case.pk
    assert entry.payload["judge"] == "offline"
    assert entry.payload["judge_version"] == RUBRIC_VERSION
    assert entry.payload["purpose"] == "gated"
    assert entry.payload["outputs_judged"] == 2
    assert entry.payload["scores_written"] == summary.scores_written
    assert entry.payload["complete"] is True
    # Stage 5 is grading: a grading session enters it, a judge does not (SPEC §3).
    runs_world.use_case.refresh_from_db()
    assert runs_world.use_case.stage < Stage.GRADE
    assert not runs_world.use_case.stage_events.filter(stage=Stage.GRADE).exists()


def test_the_query_count_does_not_grow_with_the_number_of_outputs(runs_world):
    judge = judge_get_or_create(kind="offline")
    # A first judging of the world warms what later ones read once.
    judge_run(actor=None, run=make_run(runs_world, outputs=1), judge=judge, purpose="gated")
    small, large = make_run(runs_world, outputs=2), make_run(runs_world, outputs=8)
    reads, inserts = [], []
    for run in (small, large):
        with CaptureQueriesContext(connection) as queries:
            judge_run(actor=None, run=run, judge=judge, purpose="gated")
        sql = [q["sql"] for q in queries.captured_queries]
        is_insert = ['INTO "runs_judgescore"' in statement for statement in sql]
        reads.append(len(sql) - sum(is_insert))
        inserts.append(sum(is_insert))
    # Reads and audit writes are the same for 2 and 8 outputs; score rows go in multi-row
    # INSERTs whose number only the database's parameter limit sets (one on PostgreSQL).
    assert reads[0] == reads[1]
    assert inserts[0] == 1
    assert inserts[1] <= 2


def test_outputs_are_written_in_batches_each_in_its_own_transaction(runs_world):
    run = make_run(runs_world, outputs=5)
    judge = judge_get_or_create(kind="offline")
    summary = judge_run(actor=None, run=run, judge=judge, purpose="gated", batch_size=2)
    assert summary.outputs_judged == 5
    assert JudgeScore.objects.count() == expected_score_count(run)


# -- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["grader", "reviewer", "outsider"])
def test_only_charter_and_model_owners_may_judge_a_run(runs_world, persona):
    run = make_run(runs_world, outputs=1)
    judge = judge_get_or_create(kind="offline")
    with pytest.raises(PermissionDenied):
        judge_run(actor=runs_world.by_name(persona), run=run, judge=judge, purpose="gated")
    assert not JudgeScore.objects.exists()


def test_a_run_still_running_is_refused(runs_world):
    run = make_run(runs_world, outputs=1, status=RunStatus.RUNNING)
    with pytest.raises(ConflictError, match="is running; judge it once it has finished"):
        judge_run(actor=None, run=run, judge=judge_get_or_create(kind="offline"), purpose="gated")


def test_an_unknown_purpose_is_refused(runs_world):
    run = make_run(runs_world, outputs=1)
    with pytest.raises(ServiceError) as raised:
        judge_run(actor=None, run=run, judge=judge_get_or_create(kind="offline"), purpose="final")
    assert raised.value.field == "purpose"


def test_the_offline_judge_never_counts_as_self_grading(runs_world):
    run = make_run(runs_world, outputs=1)
    summary = judge_run(
        actor=None, run=run, judge=judge_get_or_create(kind="offline"), purpose="gated"
    )
    assert summary.self_graded is False


def test_an_llm_judge_whose_key_variable_is_unset_is_refused_before_any_call(
    runs_world, monkeypatch
):
    monkeypatch.delenv("JUDGE_KEY_FOR_TEST", raising=False)
    run = make_run(runs_world, outputs=1)
    judge = judge_get_or_create(kind="llm", model_ref="anthropic/claude-sonnet-4")
    with pytest.raises(ServiceError, match="JUDGE_KEY_FOR_TEST is unset"):
        judge_run(
            actor=None, run=run, judge=judge, purpose="gated", api_key_env="JUDGE_KEY_FOR_TEST"
        )


def test_a_judge_registered_under_another_rubric_is_refused_before_scoring(runs_world):
    run = make_run(runs_world, outputs=1)
    judge = judge_get_or_create(kind="offline")
    Judge.objects.filter(pk=judge.pk).update(rubric_sha256="0" * 64)
    judge.refresh_from_db()
    with pytest.raises(ConflictError, match="registered with another rubric"):
        judge_run(actor=None, run=run, judge=judge, purpose="gated")
    assert not JudgeScore.objects.exists()
