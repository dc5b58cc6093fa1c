"""Grade until decided: draws, IPW PPI increments and betting confidence sequences.

Checked three ways: hand-worked small cases, the ``confseq`` package (Waudby-Smith and
Ramdas's reference code; live when installed, else the values it printed, kept below), and
a plain-Python re-implementation of the capital processes from the documented formulas
(loops, no code shared with the product).
"""

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from enterpriseval.stats import (
    SequencePath,
    draw_next,
    draw_probabilities,
    expected_more,
    mean_sequence,
    ratio_sequence,
    settle,
)
from enterpriseval.stats.sequential import BettingCells, next_tau

LOG_40 = math.log(40.0)  # log(1/α) at α = 0.025


# --------------------------------------------------------------------------------------
# Draw probabilities
# --------------------------------------------------------------------------------------


def test_draw_probabilities_mix_uncertainty_and_a_uniform_floor_over_the_ungraded():
    s = [0.0, 1.0, 3.0, 4.0]
    q = draw_probabilities(s, [False, False, False, True], tau=0.5)
    # U = {0, 1, 2}, Σ_U s = 4: q = 0.5·s/4 + 0.5/3
    assert q == pytest.approx([0.5 / 3, 0.125 + 0.5 / 3, 0.375 + 0.5 / 3, 0.0], abs=1e-15)
    assert q.sum() == pytest.approx(1.0, abs=1e-15)


def test_draw_probabilities_are_uniform_when_every_uncertainty_is_zero_or_tau_is_one():
    assert draw_probabilities([0, 0, 0], [True, False, False]) == pytest.approx([0, 0.5, 0.5])
    q = draw_probabilities([5, 1, 2], [False, False, False], tau=1.0)
    assert q == pytest.approx([1 / 3] * 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"uncertainty": [1, -1], "graded_mask": [False, False]}, "uncertainty"),
        ({"uncertainty": [1, 2], "graded_mask": [False]}, "mismatched lengths"),
        ({"uncertainty": [1, 2], "graded_mask": [True, True]}, "graded_mask"),
        ({"uncertainty": [1, 2], "graded_mask": [False, False], "tau": 0.0}, "tau"),
        ({"uncertainty": [1, 2], "graded_mask": [False, False], "tau": 1.5}, "tau"),
    ],
)
def test_draw_probabilities_name_the_bad_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        draw_probabilities(**kwargs)


def test_draw_next_follows_q_and_repeats_with_the_seed():
    q = np.array([0.1, 0.0, 0.6, 0.3])
    rng = np.random.default_rng(7)
    draws = np.array([draw_next(q, rng) for _ in range(20_000)])
    frequencies = np.bincount(draws, minlength=4) / draws.size
    # binomial standard error ≤ 0.0035: 5 SE
    assert frequencies == pytest.approx(q, abs=0.018)
    assert frequencies[1] == 0.0
    again = [draw_next(q, np.random.default_rng(7)) for _ in range(3)]
    assert again == [draws[0]] * 3


@pytest.mark.parametrize(
    ("q", "rng", "message"),
    [
        ([0.5, 0.6], np.random.default_rng(0), "sum to 1"),
        ([1.5, -0.5], np.random.default_rng(0), "non-negative"),
        ([1.0], 3, "rng"),
    ],
)
def test_draw_next_names_the_bad_argument(q, rng, message):
    with pytest.raises(ValueError, match=message):
        draw_next(q, rng)


# --------------------------------------------------------------------------------------
# Hand-worked capital processes
# --------------------------------------------------------------------------------------


THREE_OUTPUTS = dict(
    n_total=3,
    replications=1,
    cell_lo=np.array([0.5]),
    cell_hi=np.array([0.6]),
    f_num_sum=np.array([0.0]),
    f_den_sum=None,
    alpha_lower=0.025,
    alpha_upper=0.025,
    tau=1.0,
)


def three_outputs_graded(bets):
    """N = 3, y = (1, 0, 1), a judge scoring 0, uniform draws (τ = 1), one cell [0.5, 0.6]."""
    engine = BettingCells(**THREE_OUTPUTS, bets=bets)
    zeros = np.zeros(1)
    z = []
    for y, q in ((1.0, 1 / 3), (0.0, 1 / 2), (1.0, 1.0)):
        zn, _ = engine.step(
            q=np.array([q]), y_num=np.array([y]), f_num=zeros, f_num_max=zeros, f_num_min=zeros
        )
        z.append(float(zn[0]))
    return engine, z


def test_three_outputs_graded_uniformly_give_the_capital_computed_by_hand():
    """N = 3, y = (1, 0, 1), a judge that scores 0 everywhere, uniform draws (τ = 1), plug-in.

    Z_1 = (1/3)·(1/(1/3)) = 1, Z_2 = (1/3)·(1 + 0) = 1/3, Z_3 = (1/3)·(1 + 0 + 1) = 2/3.
    One cell [0.5, 0.6]; K⁺ read at 0.6 (its cap is the cell's), K⁻ at 0.5.
    """
    engine, z = three_outputs_graded("plug-in")
    assert z == pytest.approx([1.0, 1 / 3, 2 / 3], abs=1e-15)
    # t = 1: σ̃² = 0.25 (prior), base bet √(2·log 40 / (0.25·1·log 2))·(3/3).
    base1 = math.sqrt(2 * LOG_40 / (0.25 * math.log(2)))
    # X range: [0 − v, 1 − v]; caps 0.75/0.6 (K⁺, at the top) and 0.75/(1 − 0.5) (K⁻).
    lam_p1, lam_m1 = min(base1, 0.75 / 0.6), min(base1, 0.75 / 0.5)
    # t = 2: residual 1 with predictable mean 0: σ̃² = (0.25 + 1)/2; ×3/2 for |U_2| = 2.
    base2 = math.sqrt(2 * LOG_40 / (0.625 * 2 * math.log(3))) * 1.5
    # c_2 = 1/3; X range [1/3 − v, 1/3 + 2/3 − v].
    lam_p2, lam_m2 = min(base2, 0.75 / (0.6 - 1 / 3)), min(base2, 0.75 / (1.0 - 0.5))
    # t = 3: residuals 1, 0; predictable means 0, 1/2: σ̃² = (0.25 + 1 + 0.25)/3; ×3.
    base3 = math.sqrt(2 * LOG_40 / (0.5 * 3 * math.log(4))) * 3.0
    lam_p3, lam_m3 = min(base3, 0.75 / (0.6 - 1 / 3)), min(base3, 0.75 / (1 / 3 + 1 / 3 - 0.5))
    k_plus = (1 + lam_p1 * (1 - 0.6)) * (1 + lam_p2 * (1 / 3 - 0.6)) * (1 + lam_p3 * (2 / 3 - 0.6))
    k_minus = (1 - lam_m1 * (1 - 0.5)) * (1 - lam_m2 * (1 / 3 - 0.5)) * (1 - lam_m3 * (2 / 3 - 0.5))
    assert engine.log_k_plus[0, 0, 1] == pytest.approx(math.log(k_plus), abs=1e-12)
    assert engine.log_k_minus[0, 0, 0] == pytest.approx(math.log(k_minus), abs=1e-12)
    assert not engine.rejected_plus[0, 0]
    assert not engine.rejected_minus[0, 0]


def test_three_outputs_with_adaptive_bets_give_the_capital_computed_by_hand():
    """The same draws with aGRAPA bets λ = g/(σ̃²(|U_t|/N)² + g²) at the cell's middle 0.55.

    g_t = (f̄ − 0.55 + Σ_{i<t} (Z_i − 0.55)) / t with f̄ = 0 (one prior draw at the judge's
    mean): g_1 = −0.55, g_2 = (−0.55 + 0.45)/2 = −0.05,
    g_3 = (−0.55 + (1 − 0.55) + (1/3 − 0.55))/3 = −0.105556. σ̃² as the plug-in test: 0.25,
    0.625, 0.5. Every g < 0, so K⁺ never bets (log K⁺ = 0) and K⁻ bets −g/(σ̃²(|U|/N)² + g²):
    t = 1: 0.55/(0.25 + 0.3025) = 0.99548 (cap 0.75/0.5 = 1.5);
    t = 2: 0.05/(0.625·4/9 + 0.0025) = 0.17839 (cap 1.5);
    t = 3: 0.105556/(0.5/9 + 0.011142) = 1.582601 (cap 0.75/(1/3 + 1/3 − 0.5) = 4.5).
    """
    engine, _ = three_outputs_graded("agrapa")
    g = [-0.55, -0.05, (-0.55 + 0.45 + (1 / 3 - 0.55)) / 3]
    spread = [0.25, 0.625 * 4 / 9, 0.5 / 9]
    lam = [-gi / (si + gi * gi) for gi, si in zip(g, spread, strict=True)]
    assert lam == pytest.approx([0.995475, 0.178394, 1.582601], abs=1e-6)  # by hand, above
    x_at_half = [1 - 0.5, 1 / 3 - 0.5, 2 / 3 - 0.5]
    k_minus = math.prod(1 - li * xi for li, xi in zip(lam, x_at_half, strict=True))
    assert engine.log_k_minus[0, 0, 0] == pytest.approx(math.log(k_minus), abs=1e-12)
    assert engine.log_k_plus[0, 0] == pytest.approx([0.0, 0.0], abs=1e-15)


def test_adaptive_bets_settle_a_clear_reject_sooner_than_plug_in_bets():
    """Kelly-sized bets exclude a candidate far from the mean in fewer draws (same draws).

    40 populations of 500 outputs with 60 % passes, a judge scoring 0, uniform draws: the
    draw at which the upper bound first reaches θout = 0.75 (a settled Reject).
    """
    rng = np.random.default_rng(8)
    n_total, steps = 500, 200
    q = 1.0 / (n_total - np.arange(steps))
    used = {"agrapa": [], "plug-in": []}
    for _ in range(40):
        y = np.zeros(n_total)
        y[rng.permutation(n_total)[:300]] = 1.0
        order = rng.permutation(n_total)[:steps]
        for bets, draws in used.items():
            path = mean_sequence(np.zeros(n_total), order, q, y[order], tau=1.0, bets=bets)
            below = np.flatnonzero(path.upper <= 0.75)
            draws.append(below[0] + 1 if below.size else steps)
    assert np.mean(used["agrapa"]) < 0.9 * np.mean(used["plug-in"])


def test_the_engine_names_a_bad_bet_rule_or_truncation():
    with pytest.raises(ValueError, match="bets must be"):
        BettingCells(**THREE_OUTPUTS, bets="kelly")
    with pytest.raises(ValueError, match="truncation must be"):
        BettingCells(**THREE_OUTPUTS, truncation=1.0)


def test_grading_every_output_closes_the_sequence_on_the_population_mean():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, size=8).astype(float)
    f = np.clip(y + rng.normal(0, 0.3, size=8), 0, 1)
    order = rng.permutation(8)
    q = 1.0 / (8 - np.arange(8))
    path = mean_sequence(f, order, q, y[order], tau=1.0)
    assert path.lower[-1] == pytest.approx(y.mean(), abs=1e-12)
    assert path.upper[-1] == pytest.approx(y.mean(), abs=1e-12)
    assert (np.diff(path.lower) >= 0).all() and (np.diff(path.upper) <= 0).all()
    assert (path.lower <= path.estimate).all() and (path.estimate <= path.upper).all()


def test_a_mean_in_percent_is_the_same_sequence_scaled():
    rng = np.random.default_rng(4)
    f = rng.random(40)
    y = (rng.random(40) < f).astype(float)
    order = rng.permutation(40)[:25]
    q = 1.0 / (40 - np.arange(25))
    unit = mean_sequence(f, order, q, y[order], tau=1.0)
    percent = mean_sequence(100 * f, order, q, 100 * y[order], tau=1.0, scale=100)
    assert percent.lower == pytest.approx(100 * unit.lower)
    assert percent.upper == pytest.approx(100 * unit.upper)


# --------------------------------------------------------------------------------------
# Against confseq (Waudby-Smith and Ramdas's package), uniform draws without replacement
# --------------------------------------------------------------------------------------

CONFSEQ_N = 12
CONFSEQ_Y = [1.0, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0]
# confseq 0.0.11, betting.betting_mart(y, m, alpha=0.025, lambdas_fn_positive/negative=the
# bets below, N=12, theta=1 (K⁺) or 0 (K⁻), trunc_scale=0.75): log of the capital.
CONFSEQ_LOG_CAPITAL = {
    (0.5, "plus"): [
        0.559615787935, -0.826678573184, -0.267062785249, 0.349749320382, 0.507800512367,
        1.119235380614, 0.754868022045, 1.324573913156, 1.970048721352,
    ],
    (0.5, "minus"): [
        -1.38629436112, -0.900786545338, -2.287080906458, -3.673375267578, -3.835894197076,
        -5.222188558196, -4.999045006881, -6.385339368001, -7.771633729121,
    ],
    (0.7, "plus"): [
        0.278713402469, -1.107580958651, -0.87368461556, -0.607721067063, -0.823944175533,
        -0.545230773064, -1.931525134184, -1.739634126374, -1.489278011535,
    ],
    (0.7, "minus"): [
        -1.38629436112, -0.453474327295, -1.12630178717, -1.712508382126, -1.497625568313,
        -1.997568237501, -1.413150304419, -1.689288510648, -2.024793792783,
    ],
}  # fmt: skip


def predictable_plug_in_bets(x, alpha):
    """WSR24 Eq. 26 bets with the product's prior: σ̃² = (1/4 + Σ (x_i − μ̃_{i−1})²)/t."""
    bets, total, squares = [], 0.0, 0.0
    for t in range(1, len(x) + 1):
        variance = max((0.25 + squares) / t, 1e-4)
        bets.append(math.sqrt(2 * math.log(1 / alpha) / (variance * t * math.log(1 + t))))
        squares += (x[t - 1] - total / t) ** 2
        total += x[t - 1]
    return np.array(bets)


def engine_log_capital(m, side, y=CONFSEQ_Y, n_total=CONFSEQ_N, with_live=False):
    """Our capital for uniform draws and a judge scoring 0: the WoR betting martingale.

    With ``with_live``, also whether the cell was still bet on at each draw: once either side
    excludes it the cell has fallen for good (running intersection) and its capital stops.
    """
    lo, hi = (m - 0.01, m) if side == "plus" else (m, m + 0.01)
    engine = BettingCells(
        n_total=n_total,
        replications=1,
        cell_lo=np.array([lo]),
        cell_hi=np.array([hi]),
        f_num_sum=np.array([0.0]),
        f_den_sum=None,
        alpha_lower=0.025,
        alpha_upper=0.025,
        tau=1.0,
        bets="plug-in",
    )
    zeros = np.zeros(1)
    out, live = [], []
    for t, value in enumerate(y):
        live.append(engine.window[1] > engine.window[0])
        engine.step(
            q=np.array([1.0 / (n_total - t)]),
            y_num=np.array([value]),
            f_num=zeros,
            f_num_max=zeros,
            f_num_min=zeros,
        )
        out.append(engine.log_k_plus[0, 0, 1] if side == "plus" else engine.log_k_minus[0, 0, 0])
    return (np.array(out), np.array(live)) if with_live else np.array(out)


@pytest.mark.parametrize(("m", "side"), sorted(CONFSEQ_LOG_CAPITAL))
def test_the_capital_matches_confseq_printed_values(m, side):
    assert engine_log_capital(m, side) == pytest.approx(CONFSEQ_LOG_CAPITAL[(m, side)], abs=1e-9)


# The live comparison: confseq runs in its own environment (``make reference-venv``; it needs
# numpy < 2 and a C++ build), called as a subprocess on the same inputs. Under CI a missing
# environment is a failure, not a skip, so the comparison cannot silently stop running.
CONFSEQ_PYTHON = Path(__file__).resolve().parents[2] / ".venv-confseq" / "bin" / "python"
CONFSEQ_SCRIPT = Path(__file__).resolve().parents[1] / "reference" / "confseq_capital.py"


def live_confseq_cases():
    """The printed cases, and seeded populations of 40 and 200 graded to 30 and 120 draws."""
    cases = [(m, side, CONFSEQ_Y, CONFSEQ_N) for m, side in sorted(CONFSEQ_LOG_CAPITAL)]
    rng = np.random.default_rng(20261206)
    for n_total, draws, truth in ((40, 30, 0.8), (200, 120, 0.6)):
        population = (rng.random(n_total) < truth).astype(float)
        population[rng.random(n_total) < 0.1] = 0.5  # a few partial credits
        y = [float(v) for v in rng.permutation(population)[:draws]]
        for m in (truth - 0.2, truth, truth + 0.15):
            for side in ("plus", "minus"):
                cases.append((round(m, 2), side, y, n_total))
    return cases


LIVE_CASES = live_confseq_cases()


@pytest.fixture(scope="module")
def confseq_log_capital():
    if not CONFSEQ_PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CONFSEQ_PYTHON} is missing: run `make reference-venv`")
        pytest.skip("the confseq environment is not built (make reference-venv)")
    payload = [
        {
            "y": y,
            "m": m,
            "bets": predictable_plug_in_bets(y, 0.025).tolist(),
            "n_total": n_total,
            "theta": 1.0 if side == "plus" else 0.0,
            "alpha": 0.025,
            "trunc_scale": 0.75,
        }
        for m, side, y, n_total in LIVE_CASES
    ]
    done = subprocess.run(
        [str(CONFSEQ_PYTHON), str(CONFSEQ_SCRIPT)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("index", range(len(LIVE_CASES)))
def test_the_capital_matches_confseq_live(index, confseq_log_capital):
    m, side, y, n_total = LIVE_CASES[index]
    expected = np.array(confseq_log_capital[index])
    ours, live = engine_log_capital(m, side, y, n_total, with_live=True)
    assert len(expected) == len(ours) == len(y)
    # confseq's capital is infinite once m is impossible: the remaining outputs' mean it
    # implies, (N·m − Σ_{i<t} y_i)/(N − t + 1), is outside [0, 1]. That is exactly m outside
    # the sure bounds, which the product intersects with separately.
    graded_before = np.concatenate([[0.0], np.cumsum(y)[:-1]])
    left = n_total - np.arange(len(y))
    possible = (graded_before / n_total <= m) & (m <= (graded_before + left) / n_total)
    assert np.array_equal(np.isfinite(expected), possible)
    # A cell stops being bet on once either side has excluded it; confseq's martingale goes on.
    compared = live & possible
    assert compared.sum() >= 9
    assert ours[compared] == pytest.approx(expected[compared], abs=1e-9)


# --------------------------------------------------------------------------------------
# Against a plain-Python re-implementation (active draws, PPI weights, ratios)
# --------------------------------------------------------------------------------------


def reference_beta(graded):
    """Weighted LS slope of y on f (weights 1/q), shrunk to 1 with 5 pseudo-outputs."""
    if not graded:
        return 1.0
    w_sum = sum(w for _, _, w in graded)
    mf = sum(w * f for f, _, w in graded) / w_sum
    my = sum(w * y for _, y, w in graded) / w_sum
    var_f = sum(w * f * f for f, _, w in graded) / w_sum - mf * mf
    cov = sum(w * f * y for f, y, w in graded) / w_sum - mf * my
    slope = cov / var_f if var_f > 1e-12 else 1.0
    n = len(graded)
    return min(1.0, max(0.0, (5.0 + n * slope) / (5.0 + n)))


def reference_capital(
    f, order, q, y, cells, tau, alpha, f_den=None, y_den=None, bets="agrapa", floor=None
):
    """Return per draw the lists of log K⁺ and log K⁻ at both ends of each cell.

    aGRAPA bets: g = (f̄n − v·f̄d + Σ_{i<t} (Zn_i − v·Zd_i)) / t at the cell's middle v,
    λ = g / (σ̃²·(|U_t|/N)² + g²), K⁺ the positive part, K⁻ the negative part, each capped.
    ``tau`` is one τ or a list of τ_t, one per draw. With ``floor``, each history entry
    also holds the τ_t the adaptive rule picks before that draw: by bisection, the smallest
    τ in [floor, 1] at which no open side's bet exceeds its cap 0.75/worst(τ).
    """
    n_total = len(f)
    past_x = []  # (Zn, Zd) of earlier draws
    ratio = f_den is not None
    graded_n, graded_d = [], []
    past_dev = []
    sum_std = [0.0, 0.0]
    log_plus = [[0.0, 0.0] for _ in cells]
    log_minus = [[0.0, 0.0] for _ in cells]
    rejected_plus = [False for _ in cells]
    rejected_minus = [False for _ in cells]
    history = []
    for t in range(1, len(order) + 1):
        i = order[t - 1]
        ungraded = [k for k in range(n_total) if k not in order[: t - 1]]
        n_left = len(ungraded)
        tau_t = tau[t - 1] if isinstance(tau, list) else tau
        if floor is not None:
            picked = reference_tau(
                f, ungraded, graded_n, graded_d, past_x, past_dev, cells, floor, t,
                f_den, rejected_plus, rejected_minus,
            )  # fmt: skip
        cap = n_left / (n_total * tau_t)
        b_n = reference_beta(graded_n)
        c_n = (
            b_n * sum(f) + sum(yy for _, yy, _ in graded_n) - b_n * sum(ff for ff, _, _ in graded_n)
        ) / n_total
        z_n = c_n + (y[t - 1] - b_n * f[i]) / (n_total * q[t - 1])
        num_low = c_n - b_n * max(f[k] for k in ungraded) * cap
        num_high = c_n + (1 - b_n * min(f[k] for k in ungraded)) * cap
        if ratio:
            b_d = reference_beta(graded_d)
            c_d = (
                b_d * sum(f_den)
                + sum(yy for _, yy, _ in graded_d)
                - b_d * sum(ff for ff, _, _ in graded_d)
            ) / n_total
            z_d = c_d + (y_den[t - 1] - b_d * f_den[i]) / (n_total * q[t - 1])
            den_low = c_d - b_d * max(f_den[k] for k in ungraded) * cap
            den_high = c_d + (1 - b_d * min(f_den[k] for k in ungraded)) * cap
        else:
            b_d, z_d, den_low, den_high = 1.0, 1.0, 1.0, 1.0
        for c, (a, b) in enumerate(cells):
            mid = (a + b) / 2
            variance = max((0.25 + sum((dn - mid * dd) ** 2 for dn, dd in past_dev)) / t, 1e-4)
            if bets == "agrapa":
                f_bar_d = sum(f_den) / n_total if ratio else 1.0
                prior = sum(f) / n_total - mid * f_bar_d
                g = (prior + sum(zn - mid * zd for zn, zd in past_x)) / t
                kelly = g / (variance * (n_left / n_total) ** 2 + g * g)
                base_p, base_m = max(kelly, 0.0), max(-kelly, 0.0)
            else:
                base = math.sqrt(2 * math.log(1 / alpha) / (variance * t * math.log(1 + t)))
                base_p = base_m = base * n_total / n_left
            worst_low = max(-(num_low - a * den_high), -(num_low - b * den_high), 1e-12)
            worst_high = max(num_high - a * den_low, num_high - b * den_low, 1e-12)
            lam_p, lam_m = min(base_p, 0.75 / worst_low), min(base_m, 0.75 / worst_high)
            for e, v in enumerate((a, b)):
                x = z_n - v * z_d
                log_plus[c][e] += math.log(1 + lam_p * x)
                log_minus[c][e] += math.log(1 - lam_m * x)
            rejected_plus[c] |= min(log_plus[c]) >= math.log(1 / alpha)
            rejected_minus[c] |= min(log_minus[c]) >= math.log(1 / alpha)
        entry = ([row[:] for row in log_plus], [row[:] for row in log_minus])
        history.append((*entry, picked) if floor is not None else entry)
        past_x.append((z_n, z_d))
        std_n = (y[t - 1] - b_n * f[i]) / (n_left * q[t - 1])
        std_d = (y_den[t - 1] - b_d * f_den[i]) / (n_left * q[t - 1]) if ratio else 0.0
        past_dev.append((std_n - sum_std[0] / t, std_d - sum_std[1] / t))
        sum_std[0] += std_n
        sum_std[1] += std_d
        graded_n.append((f[i], y[t - 1], 1 / q[t - 1]))
        if ratio:
            graded_d.append((f_den[i], y_den[t - 1], 1 / q[t - 1]))
    return history


def reference_tau(
    f, ungraded, graded_n, graded_d, past_x, past_dev, cells, floor, t, f_den, rej_p, rej_m
):
    """The adaptive τ_t before draw t, found by bisection on the caps (aGRAPA bets, c = 0.75)."""
    n_total = len(f)
    ratio = f_den is not None
    share = len(ungraded) / n_total
    b_n = reference_beta(graded_n)
    c_n = b_n * sum(f) + sum(yy for _, yy, _ in graded_n) - b_n * sum(ff for ff, _, _ in graded_n)
    c_n /= n_total
    if ratio:
        b_d = reference_beta(graded_d)
        c_d = b_d * sum(f_den) + sum(yy for _, yy, _ in graded_d)
        c_d = (c_d - b_d * sum(ff for ff, _, _ in graded_d)) / n_total
        d_max, d_min = max(f_den[k] for k in ungraded), min(f_den[k] for k in ungraded)
    else:
        b_d, c_d, d_max, d_min = 1.0, 1.0, 0.0, 1.0  # Zd ≡ 1: no spread
    f_max, f_min = max(f[k] for k in ungraded), min(f[k] for k in ungraded)
    kept_p = [c for c in range(len(cells)) if not rej_p[c]]
    kept_m = [c for c in range(len(cells)) if not rej_m[c]]
    if not kept_p or not kept_m or kept_p[0] > kept_m[-1]:
        return floor
    sides = []  # (bet, worst range as a function of τ)
    for c in range(kept_p[0], kept_m[-1] + 1):
        a, b = cells[c]
        mid = (a + b) / 2
        variance = max((0.25 + sum((dn - mid * dd) ** 2 for dn, dd in past_dev)) / t, 1e-4)
        f_bar_d = sum(f_den) / n_total if ratio else 1.0
        g = (sum(f) / n_total - mid * f_bar_d + sum(zn - mid * zd for zn, zd in past_x)) / t
        kelly = g / (variance * share**2 + g * g)

        def low(tau, a=a, b=b):  # the lowest X(v) over the cell, negated
            n_low = c_n - b_n * f_max * share / tau
            d_high = c_d + (1 - b_d * d_min) * share / tau if ratio else 1.0
            return max(-(n_low - a * d_high), -(n_low - b * d_high), 1e-12)

        def high(tau, a=a, b=b):
            n_high = c_n + (1 - b_n * f_min) * share / tau
            d_low = c_d - b_d * d_max * share / tau if ratio else 1.0
            return max(n_high - a * d_low, n_high - b * d_low, 1e-12)

        if kelly > 0 and not rej_p[c]:
            sides.append((kelly, low))
        if kelly < 0 and not rej_m[c]:
            sides.append((-kelly, high))

    def fits(tau):
        return all(bet * worst(tau) <= 0.75 * (1 + 1e-12) for bet, worst in sides)

    if fits(floor):
        return floor
    if not fits(1.0):
        return 1.0
    lo, hi = floor, 1.0
    for _ in range(80):
        lo, hi = (lo, (lo + hi) / 2) if fits((lo + hi) / 2) else ((lo + hi) / 2, hi)
    return hi


def mean_engine(f, cells, bets="agrapa"):
    """One replication's engine for the mean of y over len(f) outputs, α = 0.025 a side."""
    return BettingCells(
        n_total=len(f),
        replications=1,
        cell_lo=np.array([c[0] for c in cells]),
        cell_hi=np.array([c[1] for c in cells]),
        f_num_sum=np.array([f.sum()]),
        f_den_sum=None,
        alpha_lower=0.025,
        alpha_upper=0.025,
        tau=0.5,
        bets=bets,
    )


def test_adaptive_tau_and_the_capital_match_a_plain_python_reference():
    rng = np.random.default_rng(13)
    n_total, steps = 40, 25
    latent = rng.beta(0.6, 0.15, size=n_total)
    y = (rng.random(n_total) < latent).astype(float)
    f = latent
    s = np.sqrt(f * (1 - f))
    cells = [(0.7, 0.71), (0.76, 0.77), (0.85, 0.86)]
    engine = mean_engine(f, cells)
    graded = np.zeros(n_total, dtype=bool)
    order, q_drawn, taus, suggested = [], [], [], []
    for _ in range(steps):
        rest = ~graded
        extremes = {
            "f_num_max": f[rest].max(keepdims=True),
            "f_num_min": f[rest].min(keepdims=True),
        }
        suggested.append(float(engine.suggest_tau(0.5, **extremes)[0]))
        tau_t = max(suggested[-1], taus[-1] if taus else 0.5)  # τ_t ≥ τ_{t−1}, as the simulation
        q = draw_probabilities(s, graded, tau=tau_t)
        i = draw_next(q, rng)
        engine.step(
            q=q[i : i + 1],
            y_num=y[i : i + 1],
            f_num=f[i : i + 1],
            tau=np.array([tau_t]),
            **extremes,
        )
        order.append(i)
        q_drawn.append(float(q[i]))
        taus.append(tau_t)
        graded[i] = True
    reference = reference_capital(
        list(f), order, q_drawn, list(y[order]), cells, taus, 0.025, floor=0.5
    )
    assert [entry[2] for entry in reference] == pytest.approx(suggested, abs=1e-9)
    assert len(set(np.round(taus, 6))) > 2  # the rule moved τ_t, not only the floor or 1
    ref_plus, ref_minus, _ = reference[-1]
    assert engine.log_k_plus[0] == pytest.approx(np.array(ref_plus), abs=1e-10)
    assert engine.log_k_minus[0] == pytest.approx(np.array(ref_minus), abs=1e-10)
    path = mean_sequence(f, order, q_drawn, y[order], tau=taus)  # per-draw τ_t accepted
    assert path.lower[-1] <= y.mean() <= path.upper[-1]
    with pytest.raises(ValueError, match="floor tau"):  # q_t below τ_t/|U_t| is refused
        mean_sequence(f, order, q_drawn, y[order], tau=[1.0] * steps)


def full_grid_engine(f, f_den=None):
    """The engine mean_sequence (ratio_sequence) builds: 1,000 cells on [0, 1], α = 0.025."""
    grid = np.linspace(0.0, 1.0, 1001)
    return BettingCells(
        n_total=len(f),
        replications=1,
        cell_lo=grid[:-1],
        cell_hi=grid[1:],
        f_num_sum=np.array([f.sum()]),
        f_den_sum=None if f_den is None else np.array([f_den.sum()]),
        alpha_lower=0.025,
        alpha_upper=0.025,
        tau=0.5,
    )


def adaptive_draws(rng, f, s, steps, floor):
    """Draw ``steps`` outputs with τ_t ≥ τ_{t−1} rising by hand (any predictable τ_t will do).

    The judge's largest and smallest values come first (with the q they had), so the
    extremes over the outputs left differ from those over all outputs.
    """
    graded = np.zeros(f.size, dtype=bool)
    order, q_drawn, taus = [], [], []
    forced = [int(np.argmax(f)), int(np.argmin(f))]
    for t in range(steps):
        tau_t = min(1.0, floor + 0.02 * t)
        q = draw_probabilities(s, graded, tau=tau_t)
        i = forced[t] if t < len(forced) else draw_next(q, rng)
        order.append(i)
        q_drawn.append(float(q[i]))
        taus.append(tau_t)
        graded[i] = True
    return order, q_drawn, taus


def test_a_mean_sequence_asks_the_share_its_capital_suggests_for_the_next_draw():
    rng = np.random.default_rng(2)
    n_total, steps = 50, 20
    latent = rng.beta(0.6, 0.15, size=n_total)
    y = (rng.random(n_total) < latent).astype(float)
    f = latent
    order, q_drawn, taus = adaptive_draws(rng, f, np.sqrt(f * (1 - f)), steps, floor=0.3)
    thresholds = [0.7537, 0.8512]
    engine = full_grid_engine(f)
    for t, i in enumerate(order):
        rest = np.ones(n_total, dtype=bool)
        rest[order[:t]] = False
        engine.step(
            q=np.array([q_drawn[t]]),
            y_num=y[i : i + 1],
            f_num=f[i : i + 1],
            f_num_max=f[rest].max(keepdims=True),
            f_num_min=f[rest].min(keepdims=True),
            tau=np.array([taus[t]]),
        )
    left = np.ones(n_total, dtype=bool)
    left[order] = False
    expected = engine.suggest_tau(
        0.3,
        f_num_max=f[left].max(keepdims=True),
        f_num_min=f[left].min(keepdims=True),
        cells=np.array([753, 851]),  # the cells [0.753, 0.754) and [0.851, 0.852)
    )
    at_thresholds = mean_sequence(
        f, order, q_drawn, y[order], tau=taus, tau_floor=0.3, tau_at=thresholds
    )
    assert at_thresholds.tau_next == pytest.approx(float(expected[0]), abs=1e-12)
    assert 0.3 < at_thresholds.tau_next < 1.0  # a bet near its cap: neither floor nor uniform
    in_percent = mean_sequence(
        f * 100, order, q_drawn, y[order] * 100, scale=100.0, tau=taus, tau_floor=0.3,
        tau_at=[75.37, 85.12],
    )  # fmt: skip
    assert in_percent.tau_next == pytest.approx(at_thresholds.tau_next, abs=1e-12)
    past_the_grid = mean_sequence(
        f, order, q_drawn, y[order], tau=taus, tau_floor=0.3, tau_at=[1.5]
    )  # a value past the grid counts in its last cell
    expected = engine.suggest_tau(
        0.3,
        f_num_max=f[left].max(keepdims=True),
        f_num_min=f[left].min(keepdims=True),
        cells=np.array([999]),
    )
    assert past_the_grid.tau_next == pytest.approx(float(expected[0]), abs=1e-12)
    everywhere = mean_sequence(f, order, q_drawn, y[order], tau=taus, tau_floor=0.3)
    assert everywhere.tau_next > at_thresholds.tau_next  # more cells can only ask more
    # Asking changes nothing else; without a floor nothing is asked.
    plain = mean_sequence(f, order, q_drawn, y[order], tau=taus)
    assert plain.tau_next is None
    assert np.array_equal(plain.lower, at_thresholds.lower)
    assert np.array_equal(plain.upper, at_thresholds.upper)
    # Every output drawn: nothing is left to draw, the floor.
    census = list(order) + [k for k in range(n_total) if k not in order]
    everything = mean_sequence(
        f, census, [1.0] * n_total, y[census], tau=[1.0] * n_total, tau_floor=0.3
    )
    assert everything.tau_next == 0.3


def test_a_ratio_sequence_asks_the_share_its_capital_suggests_for_the_next_draw():
    rng = np.random.default_rng(32)
    n_total, steps = 100, 40
    den = (rng.random(n_total) < 0.7).astype(float)  # items an output holds (0 or 1)
    num = (rng.random(n_total) < 0.9).astype(float) * den
    f_den = np.clip(0.9 * den + 0.05 + rng.normal(0, 0.02, n_total), 0, 1)
    f_num = np.clip(0.9 * num + 0.05 + rng.normal(0, 0.02, n_total), 0, 1)
    order, q_drawn, taus = adaptive_draws(
        rng, f_den, np.sqrt(f_den * (1 - f_den)), steps, floor=0.2
    )
    path = ratio_sequence(
        f_num * 2, f_den * 2, order, q_drawn, num[order] * 2, den[order] * 2, scale=2.0,
        tau=taus, tau_floor=0.2, tau_at=[0.8905],
    )  # fmt: skip
    engine = full_grid_engine(f_num, f_den)
    for t, i in enumerate(order):
        rest = np.ones(n_total, dtype=bool)
        rest[order[:t]] = False
        engine.step(
            q=np.array([q_drawn[t]]),
            y_num=num[i : i + 1],
            f_num=f_num[i : i + 1],
            f_num_max=f_num[rest].max(keepdims=True),
            f_num_min=f_num[rest].min(keepdims=True),
            y_den=den[i : i + 1],
            f_den=f_den[i : i + 1],
            f_den_max=f_den[rest].max(keepdims=True),
            f_den_min=f_den[rest].min(keepdims=True),
            tau=np.array([taus[t]]),
        )
    left = np.ones(n_total, dtype=bool)
    left[order] = False
    expected = engine.suggest_tau(
        0.2,
        f_num_max=f_num[left].max(keepdims=True),
        f_num_min=f_num[left].min(keepdims=True),
        f_den_max=f_den[left].max(keepdims=True),
        f_den_min=f_den[left].min(keepdims=True),
        cells=np.array([890]),  # [0.890, 0.891): a candidate ratio, whatever the scale
    )
    assert path.tau_next == pytest.approx(float(expected[0]), abs=1e-12)
    assert 0.2 < path.tau_next < 1.0  # a bet near its cap, neither the floor nor uniform
    everywhere = ratio_sequence(
        f_num, f_den, order, q_drawn, num[order], den[order], tau=taus, tau_floor=0.2
    )
    assert everywhere.tau_next > path.tau_next


@pytest.mark.parametrize(
    ("floor", "previous", "asked", "expected"),
    [
        (0.5, None, [], 0.5),  # nothing asked yet: the floor
        (0.5, None, [0.2, 0.7], 0.7),  # the largest share asked
        (0.5, 0.9, [0.6], 0.9),  # never below τ_{t−1}
        (0.2, 0.3, [0.1], 0.3),
        (0.5, 0.6, [1.0], 1.0),
    ],
)
def test_next_tau_is_the_running_maximum_of_the_floor_and_the_shares_asked(
    floor, previous, asked, expected
):
    assert next_tau(floor, previous, asked) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [((0.0, None, []), "tau must be in"), ((0.5, 1.5, []), "tau must be in"),
     ((0.5, None, [float("nan")]), "tau must be in"), ((0.5, None, ["x"]), "tau must be a number")],
)  # fmt: skip
def test_next_tau_names_the_bad_share(args, message):
    with pytest.raises(ValueError, match=message):
        next_tau(*args)


def active_draws(rng, s, steps, tau):
    graded = np.zeros(s.size, dtype=bool)
    order, q_drawn = [], []
    for _ in range(steps):
        q = draw_probabilities(s, graded, tau=tau)
        i = draw_next(q, rng)
        order.append(i)
        q_drawn.append(float(q[i]))
        graded[i] = True
    return order, q_drawn


@pytest.mark.parametrize("bets", ["agrapa", "plug-in"])
def test_the_mean_capital_matches_a_plain_python_reference_under_active_draws(bets):
    rng = np.random.default_rng(11)
    n_total, steps = 30, 18
    latent = rng.beta(0.6, 0.2, size=n_total)
    y = (rng.random(n_total) < latent).astype(float)
    f = latent
    order, q_drawn = active_draws(rng, np.sqrt(f * (1 - f)), steps, tau=0.5)
    cells = [(0.5, 0.52), (0.7, 0.75), (0.9, 0.91)]
    engine = mean_engine(f, cells, bets)
    reference = reference_capital(
        list(f), order, q_drawn, list(y[order]), cells, 0.5, 0.025, bets=bets
    )
    for t, i in enumerate(order):
        rest = [k for k in range(n_total) if k not in order[:t]]
        engine.step(
            q=np.array([q_drawn[t]]),
            y_num=np.array([y[i]]),
            f_num=np.array([f[i]]),
            f_num_max=np.array([f[rest].max()]),
            f_num_min=np.array([f[rest].min()]),
        )
        ref_plus, ref_minus = reference[t]
        assert engine.log_k_plus[0] == pytest.approx(np.array(ref_plus), abs=1e-10)
        assert engine.log_k_minus[0] == pytest.approx(np.array(ref_minus), abs=1e-10)


@pytest.mark.parametrize("bets", ["agrapa", "plug-in"])
def test_the_ratio_capital_matches_a_plain_python_reference_under_active_draws(bets):
    rng = np.random.default_rng(12)
    n_total, steps = 25, 15
    den = rng.integers(0, 4, size=n_total).astype(float)
    num = np.array([rng.binomial(int(d), 0.7) for d in den], dtype=float)
    f_den = np.clip(den + rng.normal(0, 0.5, n_total), 0, 4) / 4
    f_num = np.clip(num + rng.normal(0, 0.5, n_total), 0, 4) / 4
    order, q_drawn = active_draws(rng, np.sqrt(f_den * (1 - f_den)), steps, tau=0.5)
    cells = [(0.3, 0.4), (0.6, 0.65), (0.8, 0.9)]
    engine = BettingCells(
        n_total=n_total,
        replications=1,
        cell_lo=np.array([c[0] for c in cells]),
        cell_hi=np.array([c[1] for c in cells]),
        f_num_sum=np.array([f_num.sum()]),
        f_den_sum=np.array([f_den.sum()]),
        alpha_lower=0.025,
        alpha_upper=0.025,
        tau=0.5,
        bets=bets,
    )
    y_num, y_den = list(num[order] / 4), list(den[order] / 4)
    reference = reference_capital(
        list(f_num),
        order,
        q_drawn,
        y_num,
        cells,
        0.5,
        0.025,
        f_den=list(f_den),
        y_den=y_den,
        bets=bets,
    )
    for t, i in enumerate(order):
        rest = [k for k in range(n_total) if k not in order[:t]]
        engine.step(
            q=np.array([q_drawn[t]]),
            y_num=np.array([num[i] / 4]),
            f_num=np.array([f_num[i]]),
            f_num_max=np.array([f_num[rest].max()]),
            f_num_min=np.array([f_num[rest].min()]),
            y_den=np.array([den[i] / 4]),
            f_den=np.array([f_den[i]]),
            f_den_max=np.array([f_den[rest].max()]),
            f_den_min=np.array([f_den[rest].min()]),
        )
        ref_plus, ref_minus = reference[t]
        assert engine.log_k_plus[0] == pytest.approx(np.array(ref_plus), abs=1e-10)
        assert engine.log_k_minus[0] == pytest.approx(np.array(ref_minus), abs=1e-10)


def test_a_ratio_over_a_denominator_of_one_is_the_mean_sequence():
    rng = np.random.default_rng(5)
    n_total = 60
    f = rng.beta(2, 1, size=n_total)
    y = (rng.random(n_total) < f).astype(float)
    order, q_drawn = active_draws(rng, np.sqrt(f * (1 - f)), 30, tau=0.5)
    ones = np.ones(n_total)
    mean_path = mean_sequence(f, order, q_drawn, y[order])
    ratio_path = ratio_sequence(f, ones, order, q_drawn, y[order], ones[order])
    # the mean's sure bounds (Σ y/N, (Σ y + |U|)/N) are the only difference
    graded = np.cumsum(y[order])
    sure_lower = graded / n_total
    sure_upper = (graded + n_total - np.arange(1, 31)) / n_total
    assert mean_path.lower == pytest.approx(np.maximum(ratio_path.lower, sure_lower))
    assert mean_path.upper == pytest.approx(np.minimum(ratio_path.upper, sure_upper))


def test_ratio_bounds_cover_the_true_ratio_in_seeded_repetitions():
    """Σnum/Σden with a graded denominator: P(ever outside) ≤ α per side, 100 sessions."""
    rng = np.random.default_rng(21)
    n_total, steps, misses_low, misses_high = 80, 40, 0, 0
    grid = np.linspace(0.0, 1.0, 101)
    for _ in range(100):
        den = rng.integers(0, 4, size=n_total).astype(float)
        num = np.array([rng.binomial(int(d), 0.75) for d in den], dtype=float)
        truth = num.sum() / den.sum()
        f_den = np.clip(den + rng.normal(0, 0.7, n_total), 0, 3)
        f_num = np.clip(num + rng.normal(0.3, 0.7, n_total), 0, 3)  # optimistic judge
        s = np.sqrt(f_den / 3 * (1 - f_den / 3))
        order, q_drawn = active_draws(rng, s, steps, tau=0.5)
        path = ratio_sequence(
            f_num,
            f_den,
            order,
            q_drawn,
            num[order],
            den[order],
            alpha_lower=0.1,
            alpha_upper=0.1,
            grid=grid,
            scale=3,
        )
        misses_low += bool((path.lower > truth).any())
        misses_high += bool((path.upper < truth).any())
    # α = 0.1 per side: 10 expected at worst; 19 is beyond 3 binomial standard errors
    assert misses_low <= 19 and misses_high <= 19


# --------------------------------------------------------------------------------------
# Settling and the expected outputs still needed
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lower", "upper", "direction", "status"),
    [
        (0.91, 0.95, 1, "scale"),
        (0.90, 0.95, 1, None),  # strict: a lower bound at θin is not above it
        (0.70, 0.80, 1, "reject"),
        (0.81, 0.90, 1, "conditional"),
        (0.80, 0.90, 1, None),
        (0.81, 0.91, 1, None),
        (0.02, 0.049, -1, "scale"),
        (0.02, 0.05, -1, None),
        (0.10, 0.20, -1, "reject"),
        (0.05, 0.09, -1, "conditional"),
    ],
)
def test_settle_reads_the_status_the_bounds_decide(lower, upper, direction, status):
    thresholds = (0.80, 0.90) if direction == 1 else (0.10, 0.05)
    assert settle(lower, upper, *thresholds, direction) == status


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.5, 0.6, 0.9, 0.8, 1), "inverted pair"),
        ((0.5, 0.6, 0.8, 0.8, 1), "inverted pair"),
        ((0.7, 0.6, 0.8, 0.9, 1), "lower"),
        ((0.5, 0.6, 0.8, 0.9, 0), "direction"),
    ],
)
def test_settle_names_the_bad_argument(args, message):
    with pytest.raises(ValueError, match=message):
        settle(*args)


def path_with_widths(estimate, half_widths):
    half = np.asarray(half_widths, dtype=float)
    est = np.full(half.size, estimate)
    return SequencePath(est, est - half, est + half, 1000, 0.025, 0.025)


def test_expected_more_follows_a_one_over_root_t_width():
    # half-width 0.2/√t: 0.05 at t = 16; Scale needs it below 0.9 − 0.875 = 0.025,
    # i.e. t = 64 if the width keeps shrinking as 1/√t: 48 more.
    t = np.arange(1, 17)
    path = path_with_widths(0.9, 0.2 / np.sqrt(t))
    assert expected_more(path, 0.8, 0.875, 1, 1000) == 48


def test_expected_more_is_zero_once_settled_and_capped_by_what_is_left():
    t = np.arange(1, 17)
    settled = path_with_widths(0.95, 0.2 / np.sqrt(t))
    assert expected_more(settled, 0.8, 0.875, 1, 1000) == 0
    on_threshold = path_with_widths(0.875, 0.2 / np.sqrt(t))
    assert expected_more(on_threshold, 0.8, 0.875, 1, 1000) == 1000 - 16
    far = path_with_widths(0.8751, 0.2 / np.sqrt(t))
    assert expected_more(far, 0.8, 0.875, 1, 100) == 100 - 16


def test_expected_more_mirrors_a_lower_is_better_metric():
    t = np.arange(1, 17)
    up = path_with_widths(0.9, 0.2 / np.sqrt(t))
    down = path_with_widths(-0.9, 0.2 / np.sqrt(t))
    assert expected_more(down, -0.8, -0.875, -1, 1000) == expected_more(up, 0.8, 0.875, 1, 1000)


# --------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"order": [0, 0]}, "repeats"),
        ({"order": [0, 9]}, "order"),
        ({"q_drawn": [0.1, 0.5]}, "q_drawn"),
        ({"y": [0.0, 1.5]}, "y must lie"),
        ({"y": [1.0]}, "mismatched lengths"),
        ({"alpha_lower": 0.0}, "alpha_lower"),
        ({"f": [0.2, 0.4, float("nan"), 0.5]}, "f"),
    ],
)
def test_mean_sequence_names_the_bad_argument(change, message):
    kwargs = {"f": [0.2, 0.4, 0.6, 0.5], "order": [1, 2], "q_drawn": [0.25, 0.5], "y": [0.0, 1.0]}
    kwargs.update(change)
    with pytest.raises(ValueError, match=message):
        mean_sequence(**kwargs)


def test_ratio_sequence_rejects_a_grid_that_does_not_increase():
    with pytest.raises(ValueError, match="grid"):
        ratio_sequence([0.5, 0.5], [1, 1], [0], [0.5], [0.5], [1.0], grid=[0.5, 0.2])
