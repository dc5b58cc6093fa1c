"""Plots drawn once per content: rendered plots kept in the site's cache, keyed by what they show.

A recorded decision never changes and a signed scorecard's content is frozen, so their plots
never change either: they are drawn on the first view and read from the cache (``CACHES``;
by default a file cache under ``var/`` that survives restarts and that every web and worker
process on the host shares) on every view after. An entry is keyed by the SHA-256 of the
content the plots are drawn from and by a digest of the drawing code and matplotlib's version,
so a draft whose content changes gets new plots and a release that draws differently never
shows the old picture; nothing is ever invalidated.

A cache that fails (an unwritable folder, a damaged entry) costs the page its speed, not its
plots: the failure is logged and the plots are drawn.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import matplotlib
from django.core.cache import cache

from enterpriseval import plotting

PLOT_CACHE_SECONDS = 30 * 24 * 3600
T = TypeVar("T")

logger = logging.getLogger(__name__)


def plots_cached(
    *, kind: str, content_sha256: str, code: Sequence[ModuleType], draw: Callable[[], T]
) -> T:
    """Return ``draw()`` for this content, from the cache when it was drawn before.

    Parameters
    ----------
    kind
        What the plots are of (``"decision"``, ``"pass-k"``): contents of two kinds never
        share an entry.
    content_sha256
        The SHA-256 of everything the plots are drawn from.
    code
        The modules whose source decides how they are drawn (plot functions, titles).
    draw
        Draws the plots; called only on a miss. Its result must pickle.
    """
    if len(content_sha256) != 64:
        raise ValueError(f"content_sha256: expected 64 hex digits, got {content_sha256!r}")
    key = f"plots:{kind}:{code_digest(tuple(code))}:{content_sha256}"
    try:
        found = cache.get(key)
    except Exception:
        logger.warning("plot cache: reading %s failed; drawing the plots", key, exc_info=True)
        found = None
    if found is not None:
        return found  # type: ignore[no-any-return]
    drawn = draw()
    try:
        cache.set(key, drawn, PLOT_CACHE_SECONDS)
    except Exception:
        logger.warning("plot cache: writing %s failed", key, exc_info=True)
    return drawn


@functools.cache
def code_digest(modules: tuple[ModuleType, ...]) -> str:
    """Return a digest of the modules' source files (and of :mod:`enterpriseval.plotting`'s,
    which every plot draws through) with matplotlib's version: 16 hex digits."""
    digest = hashlib.sha256(f"matplotlib {matplotlib.__version__}".encode())
    for module in (plotting, *modules):
        if module.__file__ is None:
            raise ValueError(f"modules: {module.__name__} has no source file to digest")
        digest.update(module.__name__.encode() + b"\0" + Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]
