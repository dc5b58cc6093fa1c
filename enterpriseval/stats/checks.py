"""Argument checks shared by the statistics core and the estimators built on it (metrics).

Every public function validates its inputs here so that malformed input raises a
``ValueError`` that names the argument at fault, as scipy.stats does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


def check_open_unit(value: float, name: str, hint: str = "") -> float:
    """Return ``value`` as a float, or raise naming ``name`` if it is not in (0, 1)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < number < 1.0:
        suffix = f"; {hint}" if hint else ""
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}{suffix}")
    return number


def check_alpha(alpha: float) -> float:
    """Return ``alpha`` as a float, or raise if it is not in the open interval (0, 1)."""
    return check_open_unit(alpha, "alpha")


def as_float_vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """Return ``values`` as a 1-D float array, or raise naming ``name``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN; remove or impute missing values first")
    return array


def as_count_vector(values: ArrayLike, name: str) -> NDArray[np.int64]:
    """Return ``values`` as a 1-D array of non-negative integers, or raise naming ``name``."""
    array = as_float_vector(np.atleast_1d(values), name)
    if (array < 0).any():
        raise ValueError(f"{name} must be non-negative counts, got a negative value")
    if not np.all(np.isfinite(array)) or not np.all(array == np.floor(array)):
        raise ValueError(f"{name} must be whole numbers (counts)")
    return array.astype(np.int64)


def check_same_length(**arrays: NDArray[Any]) -> int:
    """Return the common length of the named arrays, or raise naming the mismatch."""
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise ValueError(f"mismatched lengths: {described}")
    return next(iter(lengths.values()))
