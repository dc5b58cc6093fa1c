"""Layer 1 of SPEC: what is evaluated, by whom, against which pre-registered thresholds."""

from charters.models.charters import (
    Charter,
    CharterMetric,
    Deviation,
    Signature,
    UnblindingEvent,
)
from charters.models.configurations import Configuration
from charters.models.tasks import GuidanceItem, KeyElement, SourceChunk, Task, TaskSet
from charters.models.use_cases import Membership, Role, Stage, StageEvent, UseCase

__all__ = [
    "Charter",
    "CharterMetric",
    "Configuration",
    "Deviation",
    "GuidanceItem",
    "KeyElement",
    "Membership",
    "Role",
    "Signature",
    "SourceChunk",
    "Stage",
    "StageEvent",
    "Task",
    "TaskSet",
    "UnblindingEvent",
    "UseCase",
]
