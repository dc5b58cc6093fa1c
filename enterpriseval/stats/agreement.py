"""Inter-rater agreement: Cohen's κ, Fleiss' κ and Krippendorff's α (SPEC §5.4).

All three agree with their reference implementations to ~1e-9 (scikit-learn
``cohen_kappa_score``, statsmodels ``fleiss_kappa(aggregate_raters(...)[0])`` and the
``krippendorff`` package 0.9.0) and differ from them only on degenerate input, where
these functions return NaN instead of a warning, an error or a value that carries no
information (see each function's Notes).

Labels may be numbers or strings. A missing rating is ``None``, NaN, or the string
``"nan"`` (what numpy makes of NaN in a list that also holds strings). Only
Krippendorff's α accepts missing ratings; the two κ need complete data.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from enterpriseval.stats.checks import check_same_length

KappaWeights = Literal["linear", "quadratic"] | None
AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]

_KAPPA_WEIGHTS = (None, "linear", "quadratic")
_ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
_LABEL_KINDS = {
    "b": "numbers",
    "i": "numbers",
    "u": "numbers",
    "f": "numbers",
    "U": "text",
    "S": "text",
}
# Cohen's κ and Krippendorff's α hold a few V × V float matrices; past this many distinct
# values they would need gigabytes, so we ask the caller to bin instead of failing late.
_MAX_DISTINCT_VALUES = 5_000
# Above this many unit × value cells the count matrix is built sparse.
_MAX_DENSE_CELLS = 1 << 22


def cohens_kappa(
    rater_a: ArrayLike,
    rater_b: ArrayLike,
    weights: KappaWeights = None,
    categories: ArrayLike | None = None,
) -> float:
    """Return Cohen's kappa for two raters who labelled the same items.

    Parameters
    ----------
    rater_a, rater_b : array_like, shape (n,)
        The label each rater gave to each item (numbers or strings, no missing values).
        Item ``i`` is ``rater_a[i]`` against ``rater_b[i]``.
    weights : {None, "linear", "quadratic"}, optional
        Disagreement weights. ``None`` (the default) counts every disagreement as 1.
    categories : array_like, optional
        The categories in their order. Weighted κ uses each category's position in this
        list; categories nobody used still count. If omitted, the sorted union of the
        observed labels is used, as scikit-learn and statsmodels do.

    Returns
    -------
    float
        κ ≤ 1 (1 is perfect agreement, 0 agreement at chance level); NaN when it is
        undefined (fewer than two items, or both raters used one and the same category
        throughout).

    Raises
    ------
    ValueError
        If the raters' lengths differ, either is not one-dimensional or has missing
        values, one holds numbers and the other text, ``weights`` is unknown, or a label
        is not in ``categories`` (the message names ``rater_a`` or ``rater_b``).

    Notes
    -----
    With observed proportions :math:`o_{ck}` (rater A said *c*, rater B said *k*),
    expected proportions :math:`e_{ck} = o_{c\\cdot}\\, o_{\\cdot k}` and weights
    :math:`w_{ck}` that are 0 on the diagonal,

    .. math:: \\kappa = 1 - \\frac{\\sum_{c,k} w_{ck}\\, o_{ck}}{\\sum_{c,k} w_{ck}\\, e_{ck}}

    with :math:`w_{ck} = [c \\ne k]` (Cohen 1960; this is :math:`(p_o - p_e)/(1 - p_e)`),
    :math:`|i_c - i_k|` (linear) or :math:`(i_c - i_k)^2` (quadratic) for category
    positions :math:`i` (Cohen 1968).

    Differences from scikit-learn: a single item gives NaN (scikit-learn gives 0.0 when
    the two labels differ); a label outside ``categories`` raises (scikit-learn drops
    the item silently); no warning is emitted for undefined κ.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational
       and Psychological Measurement*, 20(1), 37-46.
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement with provision for
       scaled disagreement or partial credit. *Psychological Bulletin*, 70(4), 213-220.
    """
    if weights not in _KAPPA_WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    labels_a = _complete_labels(rater_a, "rater_a", ndim=1)
    labels_b = _complete_labels(rater_b, "rater_b", ndim=1)
    n_items = check_same_length(rater_a=labels_a, rater_b=labels_b)
    _check_same_kind(labels_a, "rater_a", labels_b, "rater_b")
    if categories is None:
        domain, codes = _encode(np.concatenate((labels_a, labels_b)), "rater_a and rater_b")
        codes_a, codes_b = codes[:n_items], codes[n_items:]
    else:
        domain = _domain(categories, "categories")
        codes_a = _codes_in(labels_a, "rater_a", domain, "categories")
        codes_b = _codes_in(labels_b, "rater_b", domain, "categories")
    if n_items < 2:
        return math.nan
    n_categories = _check_distinct_count(
        len(domain), "rater_a and rater_b" if categories is None else "categories"
    )

    observed = (
        np.bincount(
            codes_a * n_categories + codes_b, minlength=n_categories * n_categories
        ).reshape(n_categories, n_categories)
        / n_items
    )
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))  # e_ck = o_c. o_.k
    position = np.arange(n_categories, dtype=np.float64)
    gap = np.abs(position[:, np.newaxis] - position[np.newaxis, :])
    if weights is None:
        weight = (gap > 0).astype(np.float64)  # Cohen (1960): every disagreement counts 1
    elif weights == "linear":
        weight = gap  # Cohen (1968)
    else:
        weight = gap**2
    expected_disagreement = float(np.vdot(weight, expected))
    if expected_disagreement == 0.0:  # both raters used one and the same category
        return math.nan
    return 1.0 - float(np.vdot(weight, observed)) / expected_disagreement  # SPEC §5.4


def fleiss_kappa(ratings: ArrayLike) -> float:
    """Return Fleiss' kappa for a fixed number of raters per unit.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        ``ratings[i, j]`` is the category (number or string) that the *j*-th rating of
        unit *i* gave. Raters need not be the same people across units, but every unit
        has the same number of ratings and none is missing.

    Returns
    -------
    float
        κ ≤ 1 (1 is perfect agreement, 0 agreement at chance level); NaN when it is
        undefined (fewer than two units or two ratings per unit, or every rating in one
        category).

    Raises
    ------
    ValueError
        If ``ratings`` is ragged, not two-dimensional, or has missing ratings.

    Notes
    -----
    With :math:`N` units, :math:`n` ratings per unit and :math:`n_{ij}` the number of
    ratings of unit *i* in category *j* (Fleiss 1971):

    .. math::

        p_j = \\frac{1}{Nn} \\sum_i n_{ij}, \\qquad
        P_i = \\frac{\\sum_j n_{ij}^2 - n}{n(n - 1)}, \\qquad
        \\kappa = \\frac{\\bar P - \\bar P_e}{1 - \\bar P_e}, \\quad
        \\bar P_e = \\sum_j p_j^2 .

    Differences from statsmodels: a single unit gives NaN (κ is then ≤ 0 by
    construction), as do one rater and a single category (statsmodels returns NaN with
    a RuntimeWarning there); ragged input raises instead of failing an assertion.

    References
    ----------
    .. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
       *Psychological Bulletin*, 76(5), 378-382.
    """
    table = _complete_labels(ratings, "ratings", ndim=2)
    n_units, n_raters = table.shape
    if table.size == 0:
        return math.nan
    domain, codes = _encode(table.reshape(-1), "ratings")
    if n_units < 2 or n_raters < 2 or len(domain) < 2:
        return math.nan
    n_categories = len(domain)
    unit_offset = np.arange(n_units, dtype=np.intp)[:, np.newaxis] * n_categories
    cells = _cell_counts((codes.reshape(n_units, n_raters) + unit_offset).reshape(-1))
    n_ratings = n_units * n_raters
    # Fleiss (1971): mean over units of P_i = (Σ_j n_ij² − n) / (n(n − 1))
    mean_agreement = (float(np.vdot(cells, cells)) - n_ratings) / (n_ratings * (n_raters - 1))
    proportion = np.bincount(codes, minlength=n_categories) / n_ratings  # p_j
    chance_agreement = float(np.vdot(proportion, proportion))  # P̄_e = Σ_j p_j²
    return float((mean_agreement - chance_agreement) / (1.0 - chance_agreement))  # SPEC §5.4


def krippendorff_alpha(
    reliability_data: ArrayLike,
    level: AlphaLevel = "nominal",
    value_domain: ArrayLike | None = None,
) -> float:
    """Return Krippendorff's alpha for any number of raters, with missing ratings.

    Parameters
    ----------
    reliability_data : array_like, shape (n_raters, n_units)
        ``reliability_data[r, u]`` is rater *r*'s value for unit *u*; ``None`` or NaN
        where the rater did not rate the unit. Numbers or strings; ``"interval"`` and
        ``"ratio"`` need numbers (``"ratio"`` non-negative ones).
    level : {"nominal", "ordinal", "interval", "ratio"}, optional
        Level of measurement, which sets the difference function δ². Default
        ``"nominal"``.
    value_domain : array_like, optional
        Every value the scale allows, in order. For ``"ordinal"`` the ranks follow this
        order and values nobody used count with frequency 0, as in the ``krippendorff``
        package; ordinal text labels need it. For the other levels it only checks that
        every rating is an allowed value. Default: the sorted observed values.

    Returns
    -------
    float
        α ≤ 1 (1 is perfect agreement, 0 agreement at chance level); NaN when it is
        undefined (fewer than two units rated by at least two raters, or all pairable
        values equal).

    Raises
    ------
    ValueError
        If ``reliability_data`` is not two-dimensional or ragged, holds text for an
        interval or ratio level, negative values for the ratio level, values outside
        ``value_domain``, or more than 5,000 distinct values; if ``level`` is unknown;
        or if ``value_domain`` has duplicates.

    Notes
    -----
    Units with fewer than two ratings are not pairable and are ignored. With
    :math:`n_{uc}` ratings of value *c* in unit *u*, :math:`m_u = \\sum_c n_{uc}`, the
    coincidences, their marginals and :math:`n = \\sum_c n_c` are (Krippendorff 2011)

    .. math::

        o_{ck} = \\sum_u \\frac{n_{uc} n_{uk} - [c = k]\\, n_{uc}}{m_u - 1}, \\qquad
        n_c = \\sum_k o_{ck}, \\qquad
        \\alpha = 1 - \\frac{D_o}{D_e}
              = 1 - (n - 1) \\frac{\\sum_{c,k} o_{ck}\\, \\delta^2_{ck}}
                                  {\\sum_{c,k} n_c n_k\\, \\delta^2_{ck}}

    with :math:`\\delta^2_{ck}` equal to :math:`[c \\ne k]` (nominal),
    :math:`(c - k)^2` (interval), :math:`((c - k)/(c + k))^2` (ratio) and
    :math:`(\\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` (ordinal), which equals
    :math:`(r_c - r_k)^2` for the mid-ranks :math:`r_g = \\sum_{h \\le g} n_h - n_g/2`.

    Differences from the ``krippendorff`` package: a single pairable unit gives NaN
    (α is then 0 by construction), as do no pairable unit or a one-value domain (the
    package raises) and all-equal pairable values (the package returns NaN with a
    RuntimeWarning).

    References
    ----------
    .. [1] Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
       Departmental Papers (ASC), University of Pennsylvania.
       https://repository.upenn.edu/asc_papers/43
    """
    if level not in _ALPHA_LEVELS:
        raise ValueError(
            f"level must be 'nominal', 'ordinal', 'interval' or 'ratio', got {level!r}"
        )
    data = _label_array(reliability_data, "reliability_data", ndim=2)
    missing = _missing_mask(data)
    unit_index = np.nonzero(~missing)[1]
    values = _reinfer(data[~missing])
    numeric = _LABEL_KINDS.get(values.dtype.kind) == "numbers"
    if level in ("interval", "ratio") and not numeric and values.size:
        raise ValueError(
            f"reliability_data must hold numbers for the {level} level, got "
            f"{values.dtype} values such as {values[0]!r}"
        )
    if value_domain is None:
        if level == "ordinal" and not numeric and values.size:
            raise ValueError(
                "value_domain is required for ordinal text labels: list the labels in "
                "their order, lowest first"
            )
        domain, codes = _encode(values, "reliability_data")
    else:
        domain = _domain(value_domain, "value_domain")
        codes = _codes_in(values, "reliability_data", domain, "value_domain")
    if level == "ratio" and numeric and np.any(values < 0):
        raise ValueError("reliability_data must be non-negative for the ratio level")

    n_units = data.shape[1]
    ratings_per_unit = np.bincount(unit_index, minlength=n_units)
    if np.count_nonzero(ratings_per_unit >= 2) < 2:
        return math.nan
    n_values = _check_distinct_count(len(domain), "reliability_data")
    coincidence = _coincidences(unit_index, codes, ratings_per_unit, n_values)
    value_totals = coincidence.sum(axis=0)  # n_c
    n_pairable = value_totals.sum()  # n
    delta = _difference_matrix(level, domain, value_totals)
    expected = float(value_totals @ delta @ value_totals)  # Σ n_c n_k δ²_ck = n(n − 1) D_e
    if expected == 0.0:  # all pairable values equal
        return math.nan
    observed = float(np.vdot(coincidence, delta))  # Σ o_ck δ²_ck = n D_o
    return float(1.0 - (n_pairable - 1.0) * observed / expected)  # Krippendorff (2011): 1 − D_o/D_e


def _coincidences(
    unit_index: NDArray[np.intp],
    codes: NDArray[np.intp],
    ratings_per_unit: NDArray[np.intp],
    n_values: int,
) -> NDArray[np.float64]:
    """Return Krippendorff's coincidence matrix o_ck from each rating's unit and value.

    With the scaled counts s_uc = n_uc / √(m_u − 1) (0 for unpairable units),
    o = SᵀS − diag(Σ_u n_uc / (m_u − 1)): one pass to build S, one matrix product.
    """
    unit_weight = np.zeros(len(ratings_per_unit))
    pairable = ratings_per_unit >= 2
    np.divide(1.0, ratings_per_unit - 1.0, out=unit_weight, where=pairable)  # 1 / (m_u − 1)
    rating_weight = unit_weight[unit_index]
    n_units = len(ratings_per_unit)
    scaled: Any  # S, dense or sparse by size
    if n_units * n_values <= _MAX_DENSE_CELLS:
        scaled = np.bincount(
            unit_index * n_values + codes,
            weights=np.sqrt(rating_weight),
            minlength=n_units * n_values,
        ).reshape(n_units, n_values)
        products = scaled.T @ scaled
    else:
        scaled = sparse.csr_array(
            (np.sqrt(rating_weight), (unit_index, codes)), shape=(n_units, n_values)
        )  # duplicate (unit, value) entries are summed
        products = (scaled.T @ scaled).toarray()
    own_pairs = np.bincount(codes, weights=rating_weight, minlength=n_values)
    # Krippendorff (2011): o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1)
    return np.asarray(products, dtype=np.float64) - np.diag(own_pairs)


def _difference_matrix(
    level: str, domain: NDArray[Any], value_totals: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Return the squared differences δ²_ck of Krippendorff (2011) for ``level``."""
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    if level == "ordinal":
        # (Σ_{g=c..k} n_g − (n_c + n_k)/2)² = (r_k − r_c)² with mid-ranks r_g
        position = np.cumsum(value_totals) - value_totals / 2.0
    else:
        position = domain.astype(np.float64)
    difference = position[:, np.newaxis] - position[np.newaxis, :]
    if level == "ratio":
        total = position[:, np.newaxis] + position[np.newaxis, :]
        np.divide(difference, total, out=difference, where=total != 0)  # 0/0 := 0 at c = k = 0
    return difference**2


def _cell_counts(keys: NDArray[np.intp]) -> NDArray[np.intp]:
    """Return how many times each key occurs (zeros allowed), without a huge dense array."""
    if keys.size and int(keys.max()) < _MAX_DENSE_CELLS:
        return np.bincount(keys)
    return np.unique(keys, return_counts=True)[1]


def _label_array(values: ArrayLike, name: str, ndim: int) -> NDArray[Any]:
    """Return ``values`` as an ``ndim``-dimensional label array, or raise naming ``name``."""
    try:
        array = np.asarray(values)
    except ValueError:
        raise ValueError(
            f"{name} must be rectangular: every row needs the same number of entries"
        ) from None
    if array.size == 0 and array.ndim < ndim:
        array = array.reshape((0,) * ndim)
    if array.ndim != ndim:
        shape = "one-dimensional" if ndim == 1 else "two-dimensional"
        raise ValueError(f"{name} must be {shape}, got shape {array.shape}")
    if array.dtype.kind not in "biufUSO":
        raise ValueError(f"{name} must hold numbers or strings, got dtype {array.dtype}")
    return array


def _complete_labels(values: ArrayLike, name: str, ndim: int) -> NDArray[Any]:
    """Return ``values`` as a label array with no missing entry, or raise naming ``name``."""
    array = _label_array(values, name, ndim)
    missing = _missing_mask(array)
    if missing.any():
        first = tuple(int(i) for i in np.argwhere(missing)[0])
        raise ValueError(
            f"{name} has {int(missing.sum())} missing rating(s), first at index "
            f"{first if ndim > 1 else first[0]}; this coefficient needs complete ratings "
            "(krippendorff_alpha accepts missing ones)"
        )
    return _reinfer(array)


def _missing_mask(array: NDArray[Any]) -> NDArray[np.bool_]:
    """Return where ``array`` is missing: None, NaN, or the string "nan"."""
    kind = array.dtype.kind
    if kind == "f":
        return np.asarray(np.isnan(array), dtype=np.bool_)
    if kind == "U":
        return np.asarray(array == "nan", dtype=np.bool_)
    if kind == "S":
        return np.asarray(array == b"nan", dtype=np.bool_)
    if kind == "O":
        return np.asarray(np.frompyfunc(_is_missing, 1, 1)(array), dtype=np.bool_)
    return np.zeros(array.shape, dtype=bool)


def _is_missing(value: object) -> bool:
    if isinstance(value, float | np.floating):
        return bool(np.isnan(value))
    return value is None or (isinstance(value, str) and value == "nan")


def _reinfer(array: NDArray[Any]) -> NDArray[Any]:
    """Return an object array as numbers or text when its entries allow (None removed)."""
    if array.dtype.kind != "O" or array.size == 0:
        return array
    return np.asarray(array.tolist())


def _check_same_kind(first: NDArray[Any], first_name: str, second: NDArray[Any], name: str) -> None:
    kinds = (
        _LABEL_KINDS.get(first.dtype.kind, "objects"),
        _LABEL_KINDS.get(second.dtype.kind, "objects"),
    )
    if first.size and second.size and kinds[0] != kinds[1]:
        raise ValueError(
            f"{first_name} holds {kinds[0]} and {name} holds {kinds[1]}; labels must be of one kind"
        )


def _encode(values: NDArray[Any], name: str) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """Return the sorted distinct values and each value's index among them."""
    if values.dtype.kind in "iuf" and values.size:
        encoded = _encode_small_integers(values)
        if encoded is not None:
            return encoded
    try:
        domain, codes = np.unique(values, return_inverse=True)
    except TypeError:
        raise ValueError(
            f"{name} mixes labels that cannot be ordered (for example numbers and text)"
        ) from None
    return domain, codes.reshape(-1).astype(np.intp, copy=False)


def _encode_small_integers(
    values: NDArray[Any],
) -> tuple[NDArray[Any], NDArray[np.intp]] | None:
    """Encode whole numbers of a narrow range by their offset from the minimum, or None.

    Grades are small integers; this is O(n) where ``np.unique`` sorts, and gives the
    same result.
    """
    low, high = values.min(), values.max()
    if not (np.isfinite(low) and np.isfinite(high)) or float(high) - float(low) > 2 * values.size:
        return None
    shifted = values - low
    offsets = shifted.astype(np.intp)
    if values.dtype.kind == "f" and not np.array_equal(offsets, shifted):
        return None
    present = np.bincount(offsets) > 0
    domain = low + np.flatnonzero(present).astype(values.dtype)
    return domain, (np.cumsum(present) - 1)[offsets]


def _domain(values: ArrayLike, name: str) -> NDArray[Any]:
    """Return a user-given ordered domain as an array, or raise naming ``name``."""
    domain = _complete_labels(values, name, ndim=1)
    if domain.size == 0:
        raise ValueError(f"{name} must list at least one value")
    try:
        distinct, counts = np.unique(domain, return_counts=True)
    except TypeError:
        raise ValueError(f"{name} mixes values that cannot be ordered") from None
    if len(distinct) < len(domain):
        raise ValueError(f"{name} has duplicates: {distinct[counts > 1].tolist()}")
    return domain


def _codes_in(
    values: NDArray[Any], name: str, domain: NDArray[Any], domain_name: str
) -> NDArray[np.intp]:
    """Return each value's position in ``domain``, or raise naming ``name``."""
    if values.size == 0:
        return np.zeros(0, dtype=np.intp)
    _check_same_kind(values, name, domain, domain_name)
    order = np.argsort(domain, kind="stable")
    ordered = domain[order]
    found_at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    known = ordered[found_at] == values
    if not np.all(known):
        unknown = np.unique(values[~known])
        raise ValueError(
            f"{name} has labels not in {domain_name}: {unknown[:5].tolist()}"
            + (" ..." if len(unknown) > 5 else "")
        )
    return order[found_at].astype(np.intp, copy=False)


def _check_distinct_count(n_values: int, name: str) -> int:
    if n_values > _MAX_DISTINCT_VALUES:
        raise ValueError(
            f"{name}: {n_values} distinct values; agreement needs a values × values "
            f"matrix, so at most {_MAX_DISTINCT_VALUES} are allowed: round or bin the values"
        )
    return n_values
