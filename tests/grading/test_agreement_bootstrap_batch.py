"""The batch bootstrap of κ/α on a metric's criterion equals the per-resample computation.

``binary_cluster_bootstrap`` computes every resample's statistic from tables linear in the
artefacts' multiplicities (issue 18: the agreement bootstrap was 16,000 separate κ/α calls per
decision). Checked here against ``cluster_bootstrap``, which evaluates the product's
``cohens_kappa`` / ``krippendorff_alpha`` on each resampled matrix, on the same draws: complete
two-rater designs (κ), three raters and missing ratings (α), rare and common categories, and the
undefined resamples (one category throughout) counted alike.
"""

from __future__ import annotations

import numpy as np
import pytest

from grading.agreement import (
    COHEN_KAPPA,
    KRIPPENDORFF_ALPHA,
    _statistic,
    binary_cluster_bootstrap,
    cluster_bootstrap,
)


def _design(seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 60))
    raters = 2 if seed % 2 == 0 else 3
    truth = (rng.uniform(size=n) < rng.uniform(0.01, 0.5)).astype(float)
    codes = np.column_stack(
        [np.where(rng.uniform(size=n) < 0.1, 1 - truth, truth) for _ in range(raters)]
    )
    if seed % 4 in (1, 2):  # missing ratings: α
        codes[rng.uniform(size=codes.shape) < 0.2] = np.nan
        codes = codes[(~np.isnan(codes)).sum(axis=1) >= 2]
    _, clusters = np.unique(
        np.sort(rng.integers(0, max(2, len(codes) // 3), size=len(codes))), return_inverse=True
    )
    complete = codes.shape[1] == 2 and not np.isnan(codes).any()
    return codes, clusters.astype(np.intp), COHEN_KAPPA if complete else KRIPPENDORFF_ALPHA


@pytest.mark.parametrize("seed", range(40))
def test_batch_bootstrap_equals_the_statistic_on_each_resample(seed):
    codes, clusters, statistic = _design(seed)
    if len(codes) < 2 or clusters.max() < 1:
        pytest.skip("design too small to resample")
    compute, _ = _statistic(statistic, "nominal", 2)
    expected, undefined = cluster_bootstrap(
        codes, clusters, compute, n_resamples=200, rng=np.random.default_rng(seed)
    )
    got, got_undefined = binary_cluster_bootstrap(
        codes, clusters, statistic, n_resamples=200, rng=np.random.default_rng(seed)
    )
    assert got_undefined == undefined
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_one_category_throughout_is_undefined_in_every_resample():
    codes = np.zeros((6, 2))
    clusters = np.array([0, 0, 1, 1, 2, 2], dtype=np.intp)
    values, undefined = binary_cluster_bootstrap(
        codes, clusters, COHEN_KAPPA, n_resamples=50, rng=np.random.default_rng(0)
    )
    assert values.size == 0 and undefined == 50
