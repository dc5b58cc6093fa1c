"""Reliability over repeated runs: pass^k and pass@k (SPEC §4, §5.4).

Each task is run K times; ``successes[i]`` of those runs succeed. pass^k estimates the
probability that k fresh runs of a task *all* succeed (consistency, what a bank needs
of an agent), pass@k that *at least one* of k runs succeeds (capability).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from enterpriseval.stats.checks import as_count_vector, check_same_length

IntArray = NDArray[np.int64]


def _validated(successes: ArrayLike, trials: ArrayLike, k: Any) -> tuple[IntArray, IntArray, int]:
    """Return (c, K, k) with K broadcast to one entry per task, or raise naming the fault."""
    counts = as_count_vector(successes, "successes")
    if counts.size == 0:
        raise ValueError("successes is empty; give one success count per task")
    repeats = as_count_vector(trials, "trials")
    if np.ndim(trials) == 0:
        repeats = np.broadcast_to(repeats, counts.shape)
    else:
        check_same_length(successes=counts, trials=repeats)
    try:
        draws = operator.index(k)
    except TypeError:
        raise ValueError(f"k must be a positive integer, got {k!r}") from None
    if draws < 1:
        raise ValueError(f"k must be a positive integer, got {draws}")
    if (counts > repeats).any():
        raise ValueError("successes must not exceed trials (c_i ≤ K) for every task")
    if draws > repeats.min():
        raise ValueError(
            f"k = {draws} exceeds the number of trials K = {int(repeats.min())} "
            "of at least one task; choose k ≤ K"
        )
    return counts, repeats, draws


def _comb_ratio(top: IntArray, repeats: IntArray, k: int) -> NDArray[np.float64]:
    """Return C(top, k) / C(K, k) elementwise, 0 where top < k, via log-gamma."""
    safe = np.maximum(top, k).astype(np.float64)
    total = repeats.astype(np.float64)
    # Grouped so that top = K gives exactly exp(0) = 1.
    log_ratio = (gammaln(safe + 1.0) - gammaln(total + 1.0)) + (
        gammaln(total - k + 1.0) - gammaln(safe - k + 1.0)
    )
    return np.where(top >= k, np.exp(log_ratio), 0.0)


def pass_hat_k(successes: ArrayLike, trials: ArrayLike, k: int) -> float:
    """Return pass^k, the estimated probability that k runs of a task all succeed.

    Parameters
    ----------
    successes : array_like of int, shape (n,)
        Successes :math:`c_i` of each task out of its trials.
    trials : int or array_like of int, shape (n,)
        Repeats :math:`K` per task: one number for all tasks, or one per task (when
        some repeats failed to run and were dropped).
    k : int
        Number of runs that must all succeed, ``1 <= k <= K`` for every task.

    Returns
    -------
    float
        pass^k in [0, 1]; k = 1 is the mean success rate.

    Raises
    ------
    ValueError
        If ``successes`` is empty, counts are negative or not whole numbers, lengths
        differ, :math:`c_i > K_i`, ``k < 1`` or ``k > K_i``.

    Notes
    -----
    .. math::

        \\widehat{\\mathrm{pass}^k} = \\frac{1}{n} \\sum_{i=1}^{n}
        \\frac{\\binom{c_i}{k}}{\\binom{K_i}{k}},

    the unbiased estimator of :math:`E[p_i^k]` from :math:`K_i` Bernoulli repeats
    (sampling k of the K runs without replacement), computed with log-gamma so that
    large K does not overflow.

    References
    ----------
    .. [1] S. Yao, N. Shinn, P. Razavi and K. Narasimhan, "τ-bench: A benchmark for
       tool-agent-user interaction in real-world domains", arXiv:2406.12045 (2024).
    """
    counts, repeats, draws = _validated(successes, trials, k)
    return float(np.mean(_comb_ratio(counts, repeats, draws)))  # SPEC §5.4: pass^k


def pass_at_k(successes: ArrayLike, trials: ArrayLike, k: int) -> float:
    """Return pass@k, the estimated probability that at least one of k runs succeeds.

    Parameters
    ----------
    successes : array_like of int, shape (n,)
        Successes :math:`c_i` of each task out of its trials.
    trials : int or array_like of int, shape (n,)
        Repeats :math:`K` per task: one number for all tasks, or one per task.
    k : int
        Number of runs drawn, ``1 <= k <= K`` for every task.

    Returns
    -------
    float
        pass@k in [0, 1]; k = 1 is the mean success rate.

    Raises
    ------
    ValueError
        If ``successes`` is empty, counts are negative or not whole numbers, lengths
        differ, :math:`c_i > K_i`, ``k < 1`` or ``k > K_i``.

    Notes
    -----
    .. math::

        \\widehat{\\mathrm{pass@}k} = \\frac{1}{n} \\sum_{i=1}^{n}
        \\left[1 - \\frac{\\binom{K_i - c_i}{k}}{\\binom{K_i}{k}}\\right],

    the unbiased estimator of Chen et al. (2021).

    References
    ----------
    .. [1] M. Chen et al., "Evaluating large language models trained on code",
       arXiv:2107.03374 (2021), Section 2.1.
    """
    counts, repeats, draws = _validated(successes, trials, k)
    all_fail = _comb_ratio(repeats - counts, repeats, draws)
    return float(np.mean(1.0 - all_fail))  # SPEC §5.4: pass@k, Chen et al. (2021) Eq. 1
