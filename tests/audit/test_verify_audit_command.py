"""``enterpriseval verify_audit``: exit 0 with the head hash, or exit 1 naming the broken entry."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db


def test_it_reports_an_intact_log_with_its_head_hash(record):
    entries = record(3)
    out = StringIO()
    call_command("verify_audit", stdout=out)
    head = entries[-1].entry_hash[:12]
    assert out.getvalue() == (
        f"audit log OK: 3 entries, chain intact (head {head}); 0 evidence hashes re-derived\n"
    )


def test_it_reports_an_empty_log_as_intact():
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert out.getvalue().startswith("audit log OK: 0 entries, chain intact")


def test_it_names_the_broken_entry_and_exits_1(record, triggers_lifted):
    record(4)
    with triggers_lifted(), connection.cursor() as cursor:
        cursor.execute("UPDATE audit_auditentry SET payload = %s WHERE sequence = 2", ["{}"])
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("verify_audit", stderr=err)
    assert exit_info.value.code == 1
    assert err.getvalue().startswith(
        "audit log BROKEN at entry #2: its contents do not match its hash"
    )
