"""The planner of sequential grading sessions: which output is graded next (SPEC §5.5).

Pure: no Django import. This is the grading app's one door to the sequential statistics core
(:mod:`enterpriseval.stats.sequential`): the services draw through :func:`next_draw` and the
estimators read the sequences through the names re-exported here, so a change of the core's
API touches this module only.

The draw is q_t(i) = (1 − τ)·s_i/Σ_{U_t} s + τ/|U_t| over the outputs U_t not drawn yet, with
s_i = √(Σ_{j undecided} u_ij) and u_ij the judge's uncertainty about output i on gated metric
j: Σ over the metric's unit criteria of p(1 − p), p the judge's score clipped to
[``JUDGE_FLOOR``, 1 − ``JUDGE_FLOOR``] (a judge that answers with hard 0/1 labels is never
certain: each of its unit answers then counts ε(1 − ε), so an output's uncertainty grows with
the units it holds), divided by the square of the metric's mean units per output so that every
metric's uncertainty is on the scale of its per-output share. Validity does not rest on any of
this (only on q_t > 0 being recorded and known at draw time); efficiency does.

With the adaptive uniform share (``TauRule.ADAPTIVE``, issue 19) τ is a floor and draw t uses
τ_t = :func:`next_tau` (τ, τ_{t−1}, the share the undecided metrics' sequences ask for after
the final prefix known at draw time, ``SequencePath.tau_next``); τ_t is recorded with the
draw and the sequences replay each draw with its own τ_t.

References
----------
T. Zrnic and E. J. Candès, "Active statistical inference", ICML 2024 (arXiv:2403.03208):
π ∝ √E[(Y − f)² | X], mixed with a uniform floor.
I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
JRSSB 86 (2024) 1–27; "Confidence sequences for sampling without replacement", NeurIPS 2020.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from enterpriseval.stats.sequential import (
    SequencePath,
    draw_next,
    draw_probabilities,
    expected_more,
    mean_sequence,
    next_tau,
    ratio_sequence,
    settle,
)

__all__ = [
    "JUDGE_FLOOR",
    "METRIC_CRITERIA",
    "Draw",
    "SequencePath",
    "draw_seed",
    "expected_more",
    "mean_sequence",
    "metric_uncertainty",
    "next_draw",
    "next_tau",
    "ratio_sequence",
    "settle",
]

FloatArray = NDArray[np.float64]

#: The smallest judge probability counted: a hard 0/1 label is read as ε or 1 − ε.
JUDGE_FLOOR = 0.05

#: The judge criteria (``runs.judges.rubric``) each unit-level metric is computed from.
METRIC_CRITERIA: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "hallucination_rate": ("assertive", "supported"),
        "irrelevance_rate": ("relevant",),
        "citation_precision_lenient": ("citation_lenient",),
        "citation_precision_strict": ("citation_strict",),
        "citation_recall": ("assertive", "supported", "citation_lenient"),
        "key_element_capture": ("key_element_captured",),
        "guidance_precision": ("flagged", "breached"),
        "guidance_recall": ("flagged", "breached"),
    }
)


@dataclass(frozen=True, slots=True)
class Draw:
    """The output drawn (its position), its probability q_t and |U_t| at draw time."""

    position: int
    q: float
    remaining: int


def metric_uncertainty(
    *, output_index: ArrayLike, scores: ArrayLike, units_per_output: float, n_outputs: int
) -> FloatArray:
    """Return u_ij of one metric for every output: Σ p(1 − p) over its unit criteria / d̄².

    Parameters
    ----------
    output_index : array_like of int, shape (S,)
        The output (0..n_outputs − 1) of each judge score of the metric's criteria.
    scores : array_like of float, shape (S,)
        The judge's scores in [0, 1] (probabilities, or 0/1 labels).
    units_per_output : float
        The metric's mean units per output d̄ (> 0).
    n_outputs : int
        Number of outputs N.
    """
    index = np.asarray(output_index, dtype=np.intp)
    p = np.asarray(scores, dtype=np.float64)
    if index.shape != p.shape or index.ndim != 1:
        raise ValueError("scores: expected one score per output_index entry")
    if index.size and (index.min() < 0 or index.max() >= n_outputs):
        raise ValueError(f"output_index: positions must lie in 0..{n_outputs - 1}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("scores: judge scores must be numbers in [0, 1]")
    if not units_per_output > 0:
        raise ValueError(f"units_per_output: must be positive, got {units_per_output}")
    p = np.clip(p, JUDGE_FLOOR, 1.0 - JUDGE_FLOOR)
    # Zrnic & Candès (2024): the residual variance of a unit is at most p(1 − p) when the judge
    # is calibrated; an output's share sums its units, scaled by 1/d̄.
    variance = np.bincount(index, weights=p * (1.0 - p), minlength=n_outputs)
    return variance.astype(np.float64) / units_per_output**2


def draw_seed(seed: int, index: int) -> list[int]:
    """Return the generator seed of draw ``index``: the session's seed and the draw's index.

    Each draw has its own stream, so a draw can be re-checked from the session's record
    alone (seed, the recorded q_t and the outputs drawn before it).
    """
    return [int(seed), int(index)]


def next_draw(
    *,
    uncertainty: Mapping[str, ArrayLike],
    undecided: Sequence[str],
    drawn: Sequence[int],
    n_outputs: int,
    tau: float,
    seed: int,
    index: int,
) -> Draw:
    """Return the ``index``-th draw (1-based) without replacement (SPEC §5.5).

    ``uncertainty`` holds u_ij per metric (shape (N,) each); only the ``undecided`` metrics
    enter s_i. ``drawn`` are the positions drawn before. With every metric decided (or no
    judge uncertainty at all) the draw is uniform over the outputs left.
    """
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau: must be in (0, 1], got {tau}")
    graded = np.zeros(n_outputs, dtype=bool)
    graded[np.asarray(list(drawn), dtype=np.intp)] = True
    if graded.all():
        raise ValueError("drawn: every output has been drawn")
    summed = np.zeros(n_outputs, dtype=np.float64)
    for metric_id in undecided:
        summed += np.asarray(uncertainty[metric_id], dtype=np.float64)
    # SPEC §5.5: s_i = √(Σ_j u_ij), the core mixes it with the uniform floor τ.
    q = np.asarray(draw_probabilities(np.sqrt(summed), graded, tau=tau), dtype=np.float64)
    rng = np.random.default_rng(draw_seed(seed, index))
    position = int(draw_next(q, rng))
    return Draw(position, float(q[position]), int((~graded).sum()))
