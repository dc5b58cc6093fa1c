"""A session stratified within a run: its strata reach the estimators (SPEC §5.2, §5.3).

The design weights N_h/n_h enter the point and the variance. Without them a sample that
over-represents a stratum is read as if it were uniform, and the estimate is wrong without a
word; the first test shows it on a seeded population, the second checks the weighted bound's
unsafe-side error, the third follows the strata from ``session_create`` to the estimate.
"""

from __future__ import annotations

import io
import math
import zlib

import numpy as np
import pytest
from django.contrib.auth import get_user_model

from charters.models import Role
from charters.services.use_cases import membership_grant
from demo.loaders import demo_evaluation_object
from demo.testing.grading import EXAMPLES, fill, first_values
from grading.models import Assignment
from grading.services.grades import assignment_submit
from grading.services.sessions import session_create
from metrics.evidence import unit_metric_evidence
from metrics.unit_estimators import OutputUnits, estimate_unit_metric, human_only_ratio
from runs.services.outputs import output_import

# A run of 500 outputs in two strata (e.g. two sections of the task set): 100 outputs where
# hallucinations are frequent (20 %), 400 where they are rare (5 %); 8 sentences each.
SIZES = (100, 400)
RATES = (0.20, 0.05)
SENTENCES = 8


def population(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    stratum = np.repeat(["hard", "easy"], SIZES)
    rate = np.repeat(RATES, SIZES)
    return stratum, rng.binomial(SENTENCES, rate).astype(float)


def sample(rng: np.random.Generator, stratum: np.ndarray, per_stratum: int) -> np.ndarray:
    """Draw ``per_stratum`` outputs from each stratum: the hard one is over-represented."""
    labeled = np.zeros(stratum.size, dtype=bool)
    for level in ("hard", "easy"):
        where = np.flatnonzero(stratum == level)
        labeled[rng.choice(where, size=per_stratum, replace=False)] = True
    return labeled


def units(stratum, numerator, labeled, *, with_strata: bool) -> OutputUnits:
    return OutputUnits(
        output_id=np.arange(stratum.size),
        labeled=labeled,
        stratum=stratum if with_strata else None,
        d=np.full(stratum.size, float(SENTENCES)),
        h_num=np.where(labeled, numerator, np.nan),
    )


def test_the_weighted_estimate_is_consistent_where_the_unweighted_one_is_not():
    rng = np.random.default_rng(16)
    stratum, numerator = population(rng)
    truth = numerator.sum() / (SENTENCES * stratum.size)  # the run's own rate
    weighted, unweighted = [], []
    for _ in range(200):
        labeled = sample(rng, stratum, 40)
        weighted.append(human_only_ratio(units(stratum, numerator, labeled, with_strata=True)))
        unweighted.append(
            human_only_ratio(units(stratum, numerator, labeled, with_strata=False)).point
        )
    # By hand: π_hard = 40/100, π_easy = 40/400; unweighted the sample reads
    # (0.20 + 0.05)/2 = 0.125 in expectation; weighted (100·0.20 + 400·0.05)/500 = 0.08.
    assert truth == pytest.approx(0.08, abs=0.01)
    assert np.mean(unweighted) == pytest.approx(0.125, abs=0.01)
    assert np.mean([w.point for w in weighted]) == pytest.approx(truth, abs=0.004)
    assert "2 strata (weights N_h/N, i.e. 1/π_h)" in weighted[0].method


def test_the_weighted_upper_bound_errs_on_the_unsafe_side_at_most_alpha_over_two():
    """Seeded coverage check of the stratified Korn–Graubard bound (SPEC §5.3)."""
    rng = np.random.default_rng(20261202)
    reps, alpha = 400, 0.10
    misses = 0
    for _ in range(reps):
        stratum, numerator = population(rng)  # a fresh population: the superpopulation rate
        labeled = sample(rng, stratum, 20)
        estimate = human_only_ratio(
            units(stratum, numerator, labeled, with_strata=True), alpha=alpha
        )
        true_rate = (SIZES[0] * RATES[0] + SIZES[1] * RATES[1]) / sum(SIZES)
        misses += estimate.hi < true_rate  # the bound a lower-is-better gate uses
    limit = alpha / 2 + 3 * math.sqrt(alpha / 2 * (1 - alpha / 2) / reps)
    assert misses / reps <= limit, misses / reps


@pytest.fixture
def stratified_world(db):
    objects = demo_evaluation_object(example_dir=EXAMPLES, log=lambda _line: None)
    users = get_user_model().objects
    owner = users.get(username="demo-owner")
    model_owner = users.get(username="demo-model-owner")
    adjudicator = users.get(username="demo-adjudicator")
    second = users.create_user(username="grader-two", password="pw-grader-two")
    membership_grant(actor=owner, use_case=objects.use_case, user=second, role=Role.GRADER)
    text = (EXAMPLES / "outputs-gemini-2-5.jsonl").read_bytes()
    run = output_import(
        actor=model_owner,
        use_case=objects.use_case,
        configuration=objects.configurations["gemini-2-5"],
        task_set=objects.task_set,
        split="graded",
        repeats=1,
        fileobj=io.BytesIO(text),
        filename="outputs-gemini-2-5.jsonl",
    )
    session = session_create(
        actor=owner,
        use_case=objects.use_case,
        name="Within-run strata",
        runs=[run],
        graders=[users.get(username="demo-grader"), second],
        adjudicators=[adjudicator],
        design="stratified",
        stratify_by="borrower",
        sample_size=12,
        seed=11,
    )
    for assignment in Assignment.objects.filter(session=session).order_by("pk"):
        artefact = assignment.artefact_id

        def choose(key: str, field: str, artefact: int = artefact) -> str:
            # both graders of an artefact agree; about one assertive sentence in four unsupported
            if field == "supported" and zlib.crc32(f"{artefact}:{key}".encode()) % 4 == 0:
                return "not"
            return first_values(key, field)

        fill(assignment, choose)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return run, session


def test_the_sessions_strata_within_a_run_reach_the_estimate(stratified_world):
    run, session = stratified_world
    strata = sorted(set(session.artefacts.values_list("stratum", flat=True)))
    assert len(strata) == 5 and all(s.startswith(f"run:{run.pk}|borrower=") for s in strata)
    assert f"run:{run.pk}|borrower=Kestrel Logistics Group Ltd" in strata
    # 12 of 65 outputs over five borrowers of 13 each: 3, 3, 2, 2, 2 (π 3/13 and 2/13)
    pis = sorted(set(session.artefacts.values_list("inclusion_probability", flat=True)))
    assert pis == pytest.approx([2 / 13, 3 / 13])

    evidence = unit_metric_evidence(
        metric_id="hallucination_rate", run=run, session=session, judge=None
    )
    data = evidence.units
    assert sorted(set(data.stratum.tolist())) == strata
    assert data.n_labeled == 12 and data.n_outputs == 65
    # by hand: R = Σ_h W_h ȳ_h / Σ_h W_h x̄_h with W_h = N_h/N
    numerator, denominator = 0.0, 0.0
    for level in strata:
        in_h = data.stratum == level
        weight = in_h.sum() / data.n_outputs
        graded = in_h & data.labeled
        numerator += weight * data.h_num[graded].mean()
        denominator += weight * data.d[graded].mean()
    unweighted = data.h_num[data.labeled].sum() / data.d[data.labeled].sum()
    estimate = estimate_unit_metric("hallucination_rate", data, confidence=0.95)
    assert estimate.point == pytest.approx(100 * numerator / denominator, rel=1e-12)
    assert estimate.point != pytest.approx(100 * unweighted, rel=1e-6)
    assert "stratified combined ratio over 12 human-graded outputs in 5 strata" in (
        estimate.estimator
    )
