"""Receivers of the charters app's signals: a new σ or a deviation makes final scorecards stale.

Connected in ``ScorecardsConfig.ready()``; each calls one service (SPEC §7 re-evaluation).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from charters.models import Configuration, Deviation
from scorecards.reevaluation import reevaluation_for_configuration, reevaluation_for_deviation


def on_configuration_registered(
    sender: type, *, configuration: Configuration, actor: AbstractBaseUser | None, **kwargs: Any
) -> None:
    reevaluation_for_configuration(configuration=configuration, actor=actor)


def on_deviation_recorded(
    sender: type, *, deviation: Deviation, actor: AbstractBaseUser | None, **kwargs: Any
) -> None:
    reevaluation_for_deviation(deviation=deviation, actor=actor)
