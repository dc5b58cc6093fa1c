"""Events of the evaluation object that later stages react to (SPEC §7 re-evaluation).

Sent by the charters services inside their transaction, after the row exists, so a receiver's
writes commit or roll back with the change. Charters sits at the start of the pipeline and
must not import what comes after it: the scorecards app connects its receivers in
``ScorecardsConfig.ready()``.
"""

from django.dispatch import Signal

#: A new σ version was frozen. Arguments: ``configuration`` (the new row), ``actor``.
configuration_registered = Signal()

#: A charter deviation was recorded. Arguments: ``deviation`` (the new row), ``actor``.
deviation_recorded = Signal()
