"""Personas for Layer-1 tests: one use case and a user for each role, plus an outsider."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model

from charters.models import Role, UseCase
from charters.services.use_cases import membership_grant, use_case_create


@dataclass
class Personas:
    owner: object
    model_owner: object
    grader: object
    adjudicator: object
    reviewer: object
    outsider: object
    use_case: UseCase

    def by_name(self, name: str) -> object:
        return getattr(self, name)


PERSONA_NAMES = ("owner", "model_owner", "grader", "adjudicator", "reviewer", "outsider")


def make_user(username: str):
    return get_user_model().objects.create_user(username=username, password="pw-" + username)


@pytest.fixture
def personas(db) -> Personas:
    users = {name: make_user(name) for name in PERSONA_NAMES}
    use_case = use_case_create(
        actor=users["owner"],
        key="CREDIT-MEMO-B",
        name="Credit-memo drafting",
        business_outcome="Analysts draft credit-memo sections faster without losing fidelity.",
        value_hypothesis="Drafting time falls by half with no rise in unsupported statements.",
        autonomy=1,
        consequence=3,
    )
    for name, role in (
        ("model_owner", Role.MODEL_OWNER),
        ("grader", Role.GRADER),
        ("adjudicator", Role.ADJUDICATOR),
        ("reviewer", Role.REVIEWER),
    ):
        membership_grant(actor=users["owner"], use_case=use_case, user=users[name], role=role)
    return Personas(use_case=use_case, **users)
