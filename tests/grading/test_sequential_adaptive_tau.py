"""The adaptive uniform share τ_t of sequential sessions (SPEC §5.5; issue 19).

With ``tau_rule="adaptive"`` the session's τ is a floor, and each draw uses
τ_t = min(1, max(τ, τ_{t−1}, the largest share the undecided gated metrics ask for)), the
share each metric asks for being ``BettingCells.suggest_tau`` over its threshold cells after
the final prefix known when the draw was made. The replay below recomputes every stored τ_t
from the betting engine directly, step by step, with the metric's per-output values taken to
the core's scale here (not through ``metrics.sequential``).
"""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from audit.models import AuditEntry
from charters.catalogue import catalogue_metric
from charters.models import Charter
from demo.testing.grading import grade_all_open, make_world, sequential_session
from enterpriseval.errors import ServiceError
from enterpriseval.stats.sequential import BettingCells
from gates.services import decision_create
from grading.models import (
    GradingSession,
    SequentialDraw,
    SessionMode,
    SessionStatus,
    StopReason,
    TauRule,
)
from grading.selectors.sequential import population_outputs
from grading.services.sessions import session_create
from metrics.evidence import unit_metrics_evidence
from metrics.unit_estimators import unit_metric
from runs.services.judging import judge_get_or_create, judge_run

SEED = 424242
FLOOR = 0.5
GRID = np.linspace(0.0, 1.0, 1001)


@pytest.fixture
def world(db):
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=world.model_owner, run=world.runs[0], judge=judge, purpose="gated")
    world.judge = judge
    return world


def graded(world, **kwargs) -> GradingSession:
    """A sequential session of the world's first run, graded (all agreeing) until it stops."""
    options = {"seed": SEED, "judge": world.judge, "budget": 12, "tau": FLOOR} | kwargs
    session = sequential_session(world, **options)
    grade_all_open(session)
    session.refresh_from_db()
    return session


def core_values(units, metric_id: str, order: np.ndarray, k: int):
    """Return (f_num, f_den, y_num, y_den, factor) of the first ``k`` draws on [0, 1].

    As SPEC §5.2 reads each metric: a pooled share with a known denominator is the mean of
    num_i / max d (× max d / d̄ to the share), a mean of shares the mean of num_i / d_i over
    every output (× N / N₊), a graded denominator a ratio of numerator and denominator, both
    divided by the largest value either takes (the judge's, or the graded first k).
    """
    spec = unit_metric(metric_id)
    size = units.output_id.size
    f_num = np.zeros(size) if units.f_num is None else np.asarray(units.f_num, dtype=float)
    h_num = np.asarray(units.h_num, dtype=float)[order[:k]]
    if spec.denominator == "graded":
        f_den = np.zeros(size) if units.f_den is None else np.asarray(units.f_den, dtype=float)
        h_den = np.asarray(units.h_den, dtype=float)[order[:k]]
        largest = max(1.0, f_num.max(), f_den.max(), h_num.max(initial=0), h_den.max(initial=0))
        return f_num / largest, f_den / largest, h_num / largest, h_den / largest, 1.0
    d = np.asarray(units.d, dtype=float)
    if spec.mean_of_shares:
        has = d > 0
        share_f = np.where(has, f_num / np.where(has, d, 1.0), 0.0)
        held = d[order[:k]]
        share_y = np.where(held > 0, h_num / np.where(held > 0, held, 1.0), 0.0)
        return share_f, None, share_y, None, size / has.sum()
    return f_num / d.max(), None, h_num / d.max(), None, d.max() / d.mean()


def asked_share(entry, units, metric_id, order, q, taus, k: int) -> float:
    """Return the share metric ``metric_id`` asks for after its first ``k`` final draws."""
    f_num, f_den, y_num, y_den, factor = core_values(units, metric_id, order, k)
    engine = BettingCells(
        n_total=f_num.size,
        replications=1,
        cell_lo=GRID[:-1],
        cell_hi=GRID[1:],
        f_num_sum=np.array([f_num.sum()]),
        f_den_sum=None if f_den is None else np.array([f_den.sum()]),
        alpha_lower=entry["alpha_lower"],
        alpha_upper=entry["alpha_upper"],
        tau=FLOOR,
    )

    def extremes(values, before: int):
        if values is None:
            return None, None
        left = np.ones(values.size, dtype=bool)
        left[order[:before]] = False
        return values[left].max(keepdims=True), values[left].min(keepdims=True)

    for t in range(k):
        i = order[t]
        num_max, num_min = extremes(f_num, t)
        den_max, den_min = extremes(f_den, t)
        engine.step(
            q=np.array([q[t]]),
            y_num=y_num[t : t + 1],
            f_num=f_num[i : i + 1],
            f_num_max=num_max,
            f_num_min=num_min,
            y_den=None if y_den is None else y_den[t : t + 1],
            f_den=None if f_den is None else f_den[i : i + 1],
            f_den_max=den_max,
            f_den_min=den_min,
            tau=np.array([taus[t]]),
        )
    percent = 100.0 if catalogue_metric(metric_id).scale == "percent" else 1.0
    thresholds = np.array([entry["theta_out"], entry["theta_in"]]) / percent / factor
    cells = np.clip(np.searchsorted(GRID, thresholds, side="right") - 1, 0, GRID.size - 2)
    num_max, num_min = extremes(f_num, k)
    den_max, den_min = extremes(f_den, k)
    asked = engine.suggest_tau(
        FLOOR,
        f_num_max=num_max,
        f_num_min=num_min,
        f_den_max=den_max,
        f_den_min=den_min,
        cells=cells,
    )
    return float(asked[0])


def recorded_evaluations(monkeypatch) -> list[dict]:
    """Keep every evaluation of the sequences the stopping rule records (a copy of each)."""
    import metrics.sequential

    seen: list[dict] = []
    record = metrics.sequential.session_sequence_record

    def keep(*, session, sequence):
        seen.append(json.loads(json.dumps(sequence)))
        return record(session=session, sequence=sequence)

    monkeypatch.setattr(metrics.sequential, "session_sequence_record", keep)
    return seen


def test_each_stored_tau_is_recomputed_from_the_betting_cells_step_by_step(world, monkeypatch):
    evaluations = recorded_evaluations(monkeypatch)
    session = graded(world, tau_rule=TauRule.ADAPTIVE)
    draws = list(SequentialDraw.objects.filter(session=session).select_related("artefact"))
    used = session.stop["grades_used"]
    outputs = population_outputs(run=world.runs[0])
    metrics = list(session.stop["metrics"])
    evidence = unit_metrics_evidence(
        metric_ids=metrics, run=world.runs[0], session=session, judge=world.judge
    )
    position = {pk: i for i, pk in enumerate(outputs)}
    order = np.array([position[d.artefact.output_id] for d in draws], dtype=np.intp)
    q = [d.q for d in draws]
    taus = [d.tau for d in draws]
    previous = None
    for draw in draws:
        k = draw.tau_grades
        assert k is not None and k < draw.index <= used  # only grades before the draw
        asked = [
            asked_share(
                session.stop["metrics"][m],
                evidence[m].units,
                m,
                order,
                q,
                taus,
                k,
            )
            for m in draw.undecided
            if k
        ]
        expected = min(1.0, max([FLOOR, *([previous] if previous else []), *asked]))
        assert draw.tau == pytest.approx(expected, abs=1e-12), draw.index
        previous = draw.tau
    # The replay means something: τ_t left the floor, on grades already in.
    assert max(taus) > FLOOR and any(d.tau_grades for d in draws)
    assert session.stop["taus"] == taus[:used]
    # Each metric's share, evaluation by evaluation (most ask less than 1: the maximum over
    # the metrics hides them in τ_t).
    checked = []
    for evaluation in evaluations:
        k = evaluation["grades_used"]
        shares = {m: e["tau_asked"] for m, e in evaluation["metrics"].items() if "tau_asked" in e}
        for metric_id, share in shares.items():
            entry = evaluation["metrics"][metric_id]
            units = evidence[metric_id].units
            again = asked_share(entry, units, metric_id, order, q, taus, k)
            assert share == pytest.approx(again, abs=1e-12), (k, metric_id)
            checked.append(share)
        if k:
            assert evaluation["tau_next"] == max(shares.values(), default=FLOOR)
    assert len(checked) > 20 and min(checked) < 1.0 and len(set(checked)) > 10


def test_tau_never_falls_below_the_last_draws_when_the_metrics_ask_for_less(world, monkeypatch):
    """τ_t ≥ τ_{t−1}: the rule the simulation validated (once a bet was held back by its
    cap the session stays that uniform)."""
    import metrics.sequential

    record = metrics.sequential.session_sequence_record
    asks = iter([0.9])

    def ask_less_later(*, session, sequence):
        asked = next(asks, 0.6) if sequence["grades_used"] else None
        return record(session=session, sequence=sequence | {"tau_next": asked})

    monkeypatch.setattr(metrics.sequential, "session_sequence_record", ask_less_later)
    session = graded(world, tau_rule=TauRule.ADAPTIVE)
    taus = [d.tau for d in session.draws.order_by("index")]
    first = next(i for i, tau in enumerate(taus) if tau != FLOOR)
    assert taus[:first] == [FLOOR] * first and len(taus) > first + 2
    assert taus[first:] == [0.9] * (len(taus) - first)


def test_every_draw_is_at_least_its_own_uniform_share_and_tau_never_falls(world):
    session = graded(world, tau_rule=TauRule.ADAPTIVE)
    draws = list(SequentialDraw.objects.filter(session=session))
    taus = np.array([d.tau for d in draws])
    assert np.all(np.diff(taus) >= 0) and taus.min() >= FLOOR and taus.max() <= 1.0
    for draw in draws:
        assert draw.q >= draw.tau / draw.remaining * (1 - 1e-12)  # q_t ≥ τ_t/|U_t|
    audited = AuditEntry.objects.filter(action="grading_session.draw", target_id=session.pk)
    by_index = {entry.payload["index"]: entry.payload for entry in audited}
    assert len(by_index) == len(draws)
    for draw in draws:
        assert by_index[draw.index]["tau"] == draw.tau
        assert by_index[draw.index]["tau_grades"] == draw.tau_grades


def test_an_adaptive_share_rises_and_decides_a_clear_case_a_fixed_one_leaves_undecided(world):
    """The credit-memo σ passes every gated metric clearly; same seed, same grades."""
    fixed = graded(world, name="Fixed share")
    adaptive = graded(world, name="Adaptive share", tau_rule=TauRule.ADAPTIVE)
    assert fixed.stop["reason"] == StopReason.BUDGET and fixed.stop["undecided_at_budget"]
    assert adaptive.stop["reason"] == StopReason.DECIDED
    assert adaptive.stop["grades_used"] <= fixed.stop["grades_used"]
    assert set(adaptive.stop["statuses"].values()) == {"Scale"}
    assert len(adaptive.stop["statuses"]) > len(fixed.stop["statuses"])
    assert {d.tau for d in fixed.draws.all()} == {FLOOR}
    assert {d.tau_grades for d in fixed.draws.all()} == {None}
    assert max(d.tau for d in adaptive.draws.all()) > FLOOR
    assert fixed.stop["tau_rule"] == TauRule.FIXED and "tau_next" not in fixed.stop


def test_the_adaptive_share_is_refused_for_fixed_n_sessions_and_bad_rules(world):
    for mode, rule in ((SessionMode.FIXED, TauRule.ADAPTIVE), (SessionMode.SEQUENTIAL, "both")):
        with pytest.raises(ServiceError) as error:
            session_create(
                actor=world.owner,
                use_case=world.use_case,
                name="Refused",
                runs=[world.runs[0]],
                graders=world.graders,
                adjudicators=[world.adjudicator],
                mode=mode,
                judge=world.judge,
                tau_rule=rule,
                sample_size=3,
            )
        assert error.value.field == "tau_rule"
    assert not GradingSession.objects.filter(name="Refused").exists()


def test_the_draws_stay_append_only_after_the_migration_that_added_tau(world):
    session = sequential_session(world, seed=SEED, judge=world.judge, tau_rule=TauRule.ADAPTIVE)
    draw = session.draws.first()
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s",
                ["grading_sequentialdraw"],
            )
        else:
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = 'grading_sequentialdraw'::regclass "
                "AND NOT tgisinternal"
            )
        names = {row[0] for row in cursor.fetchall()}
    assert {
        "ev_guard_grading_sequentialdraw_update",
        "ev_guard_grading_sequentialdraw_delete",
    } <= names
    with pytest.raises(DatabaseError), transaction.atomic():
        SequentialDraw.objects.filter(pk=draw.pk).update(tau=1.0)
    with pytest.raises(DatabaseError), transaction.atomic():
        SequentialDraw.objects.filter(pk=draw.pk).update(tau_grades=99)
    with pytest.raises(DatabaseError), transaction.atomic():
        SequentialDraw.objects.filter(pk=draw.pk).delete()
    draw.refresh_from_db()
    assert draw.tau == FLOOR


def test_the_decision_records_the_rule_and_each_draws_tau(world, client):
    session = graded(world, tau_rule=TauRule.ADAPTIVE)
    assert session.status == SessionStatus.CLOSED
    charter = Charter.objects.get(pk=session.charter_id)
    decision = decision_create(
        actor=world.reviewer, charter=charter, run=world.runs[0], session=session, judge=world.judge
    )
    grading = decision.record["grading"]
    assert grading["mode"] == "sequential" and grading["tau_rule"] == "adaptive"
    assert grading["tau"] == FLOOR
    draws = session.draws.order_by("index")
    assert grading["taus"] == [d.tau for d in draws][: grading["grades_used"]]
    estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
    note = f"adaptive τ_t from the floor {FLOOR} to {grading['taus'][-1]:.3g}"
    assert any(note in n for e in estimates.values() for n in e["notes"])


def test_the_api_takes_tau_rule_and_names_it_when_bad(world, client):
    client.force_login(world.owner)
    url = f"/api/v1/use-cases/{world.use_case.key}/grading/sessions/"
    body = {
        "name": "Round 3",
        "runs": [world.runs[0].pk],
        "graders": [g.username for g in world.graders],
        "adjudicators": [world.adjudicator.username],
        "mode": "sequential",
        "judge": world.judge.pk,
        "budget": 6,
        "agreement_size": 2,
        "seed": 7,
    }
    created = client.post(url, body | {"tau_rule": "adaptive"}, content_type="application/json")
    assert created.status_code == 201, created.json()
    assert created.json()["tau_rule"] == "adaptive" and created.json()["tau"] == 0.5
    detail = client.get(created.json()["url"]).json()
    assert detail["tau_rule"] == "adaptive" and detail["tau_latest"] == 0.5
    for bad in ({"tau_rule": "sometimes"}, {"tau_rule": "adaptive", "mode": "fixed"}):
        refused = client.post(
            url, body | {"name": "Round 4"} | bad, content_type="application/json"
        )
        assert refused.status_code == 400
        assert refused.json()["error"]["field"] == "tau_rule", refused.json()
    default = client.post(url, body | {"name": "Round 5"}, content_type="application/json")
    assert default.json()["tau_rule"] == "fixed"


def test_the_cli_takes_tau_rule_and_names_the_option_when_refused(world):
    def create(name: str, *extra: str) -> str:
        out = StringIO()
        call_command(
            "session_create",
            "--use-case", world.use_case.key,
            "--name", name,
            "--run", str(world.runs[0].pk),
            *[arg for g in world.graders for arg in ("--grader", g.username)],
            "--adjudicator", world.adjudicator.username,
            "--as", world.owner.username,
            *extra,
            stdout=out,
        )  # fmt: skip
        return out.getvalue()

    text = create(
        "Round 5", "--mode", "sequential", "--judge", str(world.judge.pk), "--tau-rule", "adaptive"
    )
    assert "adaptive τ_t, floor 0.5" in text
    assert GradingSession.objects.get(name="Round 5").tau_rule == TauRule.ADAPTIVE
    with pytest.raises(CommandError) as refused:
        create("Round 6", "--sample-size", "3", "--tau-rule", "adaptive")
    assert str(refused.value).startswith("--tau-rule: The adaptive uniform share applies")
    assert not GradingSession.objects.filter(name="Round 6").exists()


def test_the_form_offers_the_rule_for_sequential_sessions_and_the_page_shows_it(world, client):
    client.force_login(world.owner)
    new = reverse("grading-session-new", args=[world.use_case.key])
    page = client.get(new).content.decode()
    assert 'name="tau_rule" value="adaptive"' in page and "Adaptive, τ as floor" in page
    base = {
        "name": "Round 2",
        "runs": [world.runs[0].pk],
        "graders_per_artefact": "2",
        "graders": [g.pk for g in world.graders],
        "adjudicators": [world.adjudicator.pk],
        "seed": "12345",
        "design": "uniform",
        "tau_rule": "adaptive",
    }
    refused = client.post(new, base | {"mode": "fixed", "sample_size": "3"})
    assert refused.status_code == 400
    assert "adaptive uniform share applies to sequential" in refused.content.decode()
    assert refused.context["form"].errors["tau_rule"]
    created = client.post(
        new, base | {"mode": "sequential", "judge": world.judge.pk, "budget": "12"}, follow=True
    )
    session = GradingSession.objects.get(name="Round 2")
    assert session.tau_rule == TauRule.ADAPTIVE and session.tau == FLOOR
    text = created.content.decode()
    assert "uniform share: Adaptive, τ as floor, τ = 0.5; latest τ_t = 0.500" in text
    grade_all_open(session)
    latest = session.draws.order_by("-index").first().tau
    text = client.get(
        reverse("grading-session-detail", args=[world.use_case.key, session.public_id])
    ).content.decode()
    assert f"latest τ_t = {latest:.3f}" in text and latest > FLOOR
