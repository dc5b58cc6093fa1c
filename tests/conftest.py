"""Suite-wide fixtures and markers."""

import pytest

DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "live_server"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that touches the database (``-m database`` selects them)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("django_db") or fixtures & DATABASE_FIXTURES:
            item.add_marker(pytest.mark.database)
