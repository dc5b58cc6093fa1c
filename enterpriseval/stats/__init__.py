"""The statistics core of EnterpriseVal (SPEC §5.4).

Pure Python with numpy, scipy and statsmodels: no Django import (enforced by
import-linter and by ``tests/stats/test_purity.py``). Names and conventions are
stable; other parts of the product and outside tests call them.
"""

from enterpriseval.stats.agreement import cohens_kappa, fleiss_kappa, krippendorff_alpha
from enterpriseval.stats.cluster import Estimate, cluster_mean_ci, cluster_ratio_ci
from enterpriseval.stats.intervals import (
    clopper_pearson_interval,
    korn_graubard_interval,
    wilson_interval,
)
from enterpriseval.stats.label_bias import LabelErrorBound, label_error_bound
from enterpriseval.stats.ppi import (
    classical_mean_ci,
    ppi_lambda,
    ppi_mean_ci,
    ppi_mean_estimate,
    ppi_proportion_ci,
)
from enterpriseval.stats.reliability import pass_at_k, pass_hat_k
from enterpriseval.stats.sample_size import outputs_to_clear, required_sample_size
from enterpriseval.stats.sequential import (
    SequencePath,
    draw_next,
    draw_probabilities,
    expected_more,
    mean_sequence,
    ratio_sequence,
    settle,
)

__all__ = [
    "Estimate",
    "LabelErrorBound",
    "SequencePath",
    "classical_mean_ci",
    "clopper_pearson_interval",
    "cluster_mean_ci",
    "cluster_ratio_ci",
    "cohens_kappa",
    "draw_next",
    "draw_probabilities",
    "expected_more",
    "fleiss_kappa",
    "korn_graubard_interval",
    "krippendorff_alpha",
    "label_error_bound",
    "mean_sequence",
    "outputs_to_clear",
    "pass_at_k",
    "pass_hat_k",
    "ppi_lambda",
    "ppi_mean_ci",
    "ppi_mean_estimate",
    "ppi_proportion_ci",
    "ratio_sequence",
    "required_sample_size",
    "settle",
    "wilson_interval",
]
