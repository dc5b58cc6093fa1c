"""Fixtures of the grading tests; the helpers live in ``enterpriseval.testing.grading``."""

from __future__ import annotations

import pytest

from enterpriseval.testing.grading import GradingWorld, make_world


@pytest.fixture
def grading_world(db) -> GradingWorld:
    return make_world()
