"""Agreement coefficients against scikit-learn, statsmodels and the krippendorff package."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from bench.harness import Case
from enterpriseval.stats import cohens_kappa, fleiss_kappa, krippendorff_alpha

N_PAIRS = 100_000
N_UNITS = 100_000
N_LABELS = 5


def cases() -> Iterator[Case]:
    rng = np.random.default_rng(20_240_611)

    rater_a = rng.integers(0, N_LABELS, N_PAIRS)
    rater_b = np.where(rng.random(N_PAIRS) < 0.6, rater_a, rng.integers(0, N_LABELS, N_PAIRS))
    yield Case(
        name="cohens_kappa, 100,000 pairs, 5 labels (sklearn)",
        ours=lambda: cohens_kappa(rater_a, rater_b),
        reference=lambda: cohen_kappa_score(rater_a, rater_b),
    )

    truth = rng.integers(1, N_LABELS + 1, N_UNITS)
    noise = rng.integers(-1, 2, (3, N_UNITS)) * (rng.random((3, N_UNITS)) < 0.4)
    reliability_data = np.clip(truth + noise, 1, N_LABELS).astype(np.float64)
    reliability_data[rng.random(reliability_data.shape) < 0.1] = np.nan
    for level in ("nominal", "interval"):
        yield Case(
            name=f"krippendorff_alpha {level}, 3 raters x 100,000 units (krippendorff)",
            ours=partial(krippendorff_alpha, reliability_data, level=level),
            reference=partial(
                krippendorff.alpha, reliability_data=reliability_data, level_of_measurement=level
            ),
        )

    ratings = np.where(
        rng.random((N_UNITS, 5)) < 0.5,
        truth[:, np.newaxis],
        rng.integers(1, N_LABELS + 1, (N_UNITS, 5)),
    )
    yield Case(
        name="fleiss_kappa, 100,000 units x 5 raters (statsmodels)",
        ours=lambda: fleiss_kappa(ratings),
        reference=lambda: statsmodels_fleiss_kappa(aggregate_raters(ratings)[0]),
    )
