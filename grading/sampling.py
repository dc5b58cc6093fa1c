"""Seeded samples of artefacts to grade, balanced grader assignment and blind orders.

Pure: no Django import. Everything here is a function of its inputs and a seed, so a session
can be re-drawn and checked from what it records (SPEC §5.2: "the sampler is seeded and the
seed recorded").

References
----------
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., §5.5 (proportional allocation).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

UNIFORM = "uniform"
STRATIFIED = "stratified"
DESIGNS = (UNIFORM, STRATIFIED)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One artefact that may be sampled: its id, its stratum and its arm (σ, or baselines)."""

    id: Hashable
    stratum: str = ""
    arm: str = ""


@dataclass(frozen=True, slots=True)
class Sampled:
    """A sampled artefact with its inclusion probability π (its design weight is 1/π)."""

    id: Hashable
    stratum: str
    inclusion_probability: float


def allocate(stratum_sizes: Sequence[int], n: int) -> list[int]:
    """Return the proportional allocation of ``n`` over strata (largest remainder).

    Every non-empty stratum gets at least one draw when ``n`` is at least the number of
    non-empty strata, and no stratum gets more than its size.
    """
    sizes = np.asarray(stratum_sizes, dtype=np.int64)
    if (sizes < 0).any():
        raise ValueError("stratum_sizes: sizes must be non-negative")
    total = int(sizes.sum())
    if not 0 < n <= total:
        raise ValueError(f"n: must be between 1 and the population size {total}, got {n}")
    quota = n * sizes / total
    counts = np.floor(quota).astype(np.int64)
    nonempty = sizes > 0
    if n >= int(nonempty.sum()):
        counts = np.where(nonempty & (counts == 0), 1, counts)
    # Largest remainder, then trim any excess the minimum of one created from the largest.
    while counts.sum() < n:
        room = np.where(counts < sizes, quota - counts, -np.inf)
        counts[int(np.argmax(room))] += 1
    while counts.sum() > n:
        excess = np.where(counts > 1, counts - quota, -np.inf)
        counts[int(np.argmax(excess))] -= 1
    return [int(c) for c in counts]


def draw_sample(
    candidates: Sequence[Candidate], size: int, *, seed: int, design: str = UNIFORM
) -> list[Sampled]:
    """Return a simple random sample without replacement (or stratified, proportional).

    Parameters
    ----------
    candidates
        The population, in a stable order (the draw depends on it and on ``seed``).
    size
        Number of artefacts to draw, 1 ≤ size ≤ len(candidates).
    seed
        Seed of the numpy PCG64 generator; record it to reproduce the sample.
    design
        ``"uniform"``: π = n/N for every artefact. ``"stratified"``: n_h drawn uniformly
        within stratum h by proportional allocation, π = n_h/N_h.

    Returns
    -------
    The sampled artefacts in population order.
    """
    if design not in DESIGNS:
        raise ValueError(f"design: must be one of {', '.join(DESIGNS)}, got {design!r}")
    population = len(candidates)
    if not 1 <= size <= population:
        raise ValueError(
            f"size: must be between 1 and the population size {population}, got {size}"
        )
    rng = np.random.default_rng(seed)
    return _draw(rng, candidates, size, design)


def draw_arms(
    candidates: Sequence[Candidate],
    sizes: Mapping[str, int],
    *,
    seed: int,
    design: str = UNIFORM,
) -> list[Sampled]:
    """Return an independent sample of each arm's size, drawn within the arm (SPEC §5.3).

    A session that serves two σ samples the planned n for each: the arms (one per σ, one
    for the human baselines) are strata whose sizes are fixed, not allocated. Within an arm
    the draw is :func:`draw_sample`'s (uniform, or stratified by ``stratum``), so π is the
    arm's own: n_a/N_a when uniform, n_h/N_h within the arm when stratified. The arms are
    drawn in the order they first appear in ``candidates``, from one generator seeded with
    ``seed``; with a single arm the sample is ``draw_sample(candidates, size, seed=seed)``'s.

    Parameters
    ----------
    candidates
        The population, in a stable order; ``Candidate.arm`` names each one's arm.
    sizes
        Sample size of every arm, 1 ≤ size ≤ the arm's population.
    seed, design
        As :func:`draw_sample`.

    Returns
    -------
    The sampled artefacts in population order.
    """
    if design not in DESIGNS:
        raise ValueError(f"design: must be one of {', '.join(DESIGNS)}, got {design!r}")
    members: dict[str, list[int]] = {}
    for index, candidate in enumerate(candidates):
        members.setdefault(candidate.arm, []).append(index)
    if set(sizes) != set(members):
        raise ValueError(
            f"sizes: expected a size for each arm ({', '.join(sorted(members))}), "
            f"got {', '.join(sorted(sizes)) or 'none'}"
        )
    rng = np.random.default_rng(seed)
    sample: list[tuple[int, Sampled]] = []
    for arm, indices in members.items():
        size = sizes[arm]
        if not 1 <= size <= len(indices):
            raise ValueError(
                f"sizes: arm {arm!r} must draw between 1 and its {len(indices)} artefacts, "
                f"got {size}"
            )
        drawn = _draw(rng, [candidates[i] for i in indices], size, design)
        position = {candidates[i].id: i for i in indices}
        sample.extend((position[item.id], item) for item in drawn)
    sample.sort(key=lambda pair: pair[0])
    return [item for _index, item in sample]


def _draw(
    rng: np.random.Generator,
    candidates: Sequence[Candidate],
    size: int,
    design: str,
) -> list[Sampled]:
    population = len(candidates)
    if design == UNIFORM:
        chosen = np.sort(rng.choice(population, size=size, replace=False))
        share = size / population
        return [Sampled(candidates[i].id, candidates[i].stratum, share) for i in chosen.tolist()]
    members: dict[str, list[int]] = defaultdict(list)
    for index, candidate in enumerate(candidates):
        members[candidate.stratum].append(index)
    strata = sorted(members)
    counts = allocate([len(members[s]) for s in strata], size)
    picked: list[tuple[int, float]] = []
    for stratum, count in zip(strata, counts, strict=True):
        indices = members[stratum]
        if count == 0:
            continue
        draw = rng.choice(len(indices), size=count, replace=False)
        picked.extend((indices[i], count / len(indices)) for i in draw.tolist())
    picked.sort()
    return [Sampled(candidates[i].id, candidates[i].stratum, p) for i, p in picked]


def assign_graders(
    item_count: int, graders: Sequence[Hashable], per_item: int, *, seed: int
) -> list[tuple[Hashable, ...]]:
    """Return the graders of each item: ``per_item`` distinct graders, loads balanced.

    Each item goes to the ``per_item`` graders with the fewest items so far, ties broken by
    a seeded shuffle, so loads differ by at most one and no grader is on one item twice.
    """
    if per_item < 2:
        raise ValueError(f"per_item: every item needs at least 2 graders, got {per_item}")
    if len(set(graders)) != len(graders):
        raise ValueError("graders: a grader is listed twice")
    if len(graders) < per_item:
        raise ValueError(
            f"graders: {per_item} graders per item need at least {per_item} graders, "
            f"got {len(graders)}"
        )
    rng = np.random.default_rng(seed)
    load = dict.fromkeys(graders, 0)
    assignment: list[tuple[Hashable, ...]] = []
    for _ in range(item_count):
        tiebreak = rng.permutation(len(graders))
        ranked = sorted(range(len(graders)), key=lambda i: (load[graders[i]], tiebreak[i]))
        chosen = tuple(graders[i] for i in ranked[:per_item])
        for grader in chosen:
            load[grader] += 1
        assignment.append(chosen)
    return assignment


def blind_order(item_count: int, *, seed: int, grader_key: int) -> list[int]:
    """Return a per-grader random permutation of ``range(item_count)``.

    The seed is combined with the grader so two graders see the same items in different
    orders and neither order reveals how the population was laid out.
    """
    rng = np.random.default_rng([seed, grader_key])
    return [int(i) for i in rng.permutation(item_count)]


def expected_outputs(planned_units: int, mean_units_per_output: float) -> int:
    """Return the outputs to sample so that ``planned_units`` units are expected to be graded."""
    if planned_units < 1:
        raise ValueError(f"planned_units: must be positive, got {planned_units}")
    if not mean_units_per_output > 0:
        raise ValueError(f"mean_units_per_output: must be positive, got {mean_units_per_output}")
    return math.ceil(planned_units / mean_units_per_output)


#: A stratum label holds at most this many characters (``SessionArtefact.stratum``).
STRATUM_LABEL_LENGTH = 60


def stratum_label(run_id: int, metadata: Mapping[str, object] | None = None, key: str = "") -> str:
    """Return the stratum of an output: its run, and within the run its task's ``key`` value.

    ``run:12`` without a key (one stratum per run); ``run:12|section=liquidity`` when the
    session stratifies within each run by the task metadata ``key`` (a task without it is in
    ``run:12|section=``). A value too long for the label is replaced by a short digest of it, so
    the label stays unique. The estimators recompute every output's label with this function,
    so sampled and unsampled outputs of a stratum share it.
    """
    if not key:
        return f"run:{run_id}"
    raw = (metadata or {}).get(key)
    value = "" if raw is None else str(raw)
    prefix = f"run:{run_id}|{key}="
    if len(prefix) + len(value) > STRATUM_LABEL_LENGTH:
        value = "#" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
    return prefix + value


def stratum_run(label: str) -> int:
    """Return the run id of a stratum label (``run:12|section=x`` → 12)."""
    return int(label.split("|", 1)[0].removeprefix("run:"))


def stratum_key(label: str) -> str:
    """Return the task metadata key a label stratifies by within its run, or ``""``."""
    return label.split("|", 1)[1].split("=", 1)[0] if "|" in label else ""
