"""Bench cases: PPI, Wilson and cluster-robust intervals against their reference libraries.

Data are generated once, with a seeded generator, when ``cases()`` runs; only the calls
are timed. Each side returns plain numbers in the same order so the harness can check
that they agree.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import ppi_py
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from bench.harness import Case
from enterpriseval.stats import cluster_mean_ci, ppi_mean_ci, wilson_interval

SEED = 20_240_501


def _judged_outputs(
    rng: np.random.Generator, n: int, big_n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    latent = rng.beta(2.0, 5.0, size=n + big_n)
    human = np.clip(latent + rng.normal(0.0, 0.05, size=n + big_n), 0.0, 1.0)
    judge = np.clip(0.8 * latent + 0.1 + rng.normal(0.0, 0.1, size=n + big_n), 0.0, 1.0)
    return human[:n], judge[:n], judge[n:]


def _ppi_cases(rng: np.random.Generator) -> Iterator[Case]:
    y, yhat, yhat_unlabeled = _judged_outputs(rng, 10_000, 1_000_000)
    for lam, label in ((1.0, "lam=1.0"), (None, "lam=None (PPI++)")):

        def ours(lam: float | None = lam) -> tuple[float, float]:
            return ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.05, lam=lam)

        def reference(lam: float | None = lam) -> tuple[float, float]:
            lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.05, lam=lam)
            return float(np.squeeze(lo)), float(np.squeeze(hi))

        yield Case(f"ppi_mean_ci N=1,000,000 n=10,000 {label}", ours, reference)


def _wilson_case(rng: np.random.Generator) -> Case:
    trials = rng.integers(1, 2_000, size=1_000_000)
    successes = rng.binomial(trials, rng.random(trials.size))
    return Case(
        "wilson_interval vectorised 1,000,000",
        lambda: wilson_interval(successes, trials, alpha=0.05),
        lambda: proportion_confint(successes, trials, alpha=0.05, method="wilson"),
    )


def _cluster_case(rng: np.random.Generator) -> Case:
    clusters = rng.integers(0, 10_000, size=1_000_000)
    cluster_rate = rng.beta(2.0, 8.0, size=10_000)
    values = (rng.random(clusters.size) < cluster_rate[clusters]).astype(np.float64)

    def ours() -> tuple[float, float, float, float]:
        estimate = cluster_mean_ci(values, clusters, alpha=0.05)
        return estimate.point, estimate.lo, estimate.hi, estimate.se

    def reference() -> tuple[float, float, float, float]:
        fit = sm.OLS(values, np.ones_like(values)).fit(
            cov_type="cluster",
            cov_kwds={"groups": clusters, "use_correction": True, "df_correction": True},
            use_t=True,
        )
        lo, hi = fit.conf_int(0.05)[0]
        return float(fit.params[0]), float(lo), float(hi), float(fit.bse[0])

    return Case("cluster_mean_ci 1,000,000 units / 10,000 clusters", ours, reference)


def cases() -> Iterator[Case]:
    rng = np.random.default_rng(SEED)
    yield from _ppi_cases(rng)
    yield _wilson_case(rng)
    yield _cluster_case(rng)
