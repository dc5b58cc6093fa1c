"""Fixtures of the grading tests; the helpers live in ``demo.testing.grading``."""

from __future__ import annotations

import pytest

from demo.testing.grading import GradingWorld, make_world


@pytest.fixture
def grading_world(db) -> GradingWorld:
    return make_world()
