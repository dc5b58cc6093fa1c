"""Fixtures for the audit tests: personas and a few entries (trigger lifting is suite-wide)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import transaction

from audit.models import AuditEntry
from audit.services import audit_record


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="unused-password")


@pytest.fixture
def record(db) -> Callable[..., list[AuditEntry]]:
    """Return a function that appends ``count`` system entries and returns them."""

    def append(count: int, *, use_case_id: int | None = None) -> list[AuditEntry]:
        with transaction.atomic():
            return [
                audit_record(
                    actor=None, action="test.event", use_case_id=use_case_id, payload={"n": n}
                )
                for n in range(count)
            ]

    return append
