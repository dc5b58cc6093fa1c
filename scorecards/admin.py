"""Admin for scorecards: visible, never changed here.

A draft's committee fields are written through the scorecard page or API (validated and
audited); a final scorecard is immutable everywhere. Re-evaluation flags are raised by the
triggers, never by hand.
"""

from __future__ import annotations

from django.contrib import admin

from charters.admin import ReadOnlyAdmin
from scorecards.models import ReevaluationFlag, Scorecard


@admin.register(Scorecard)
class ScorecardAdmin(ReadOnlyAdmin):
    list_display = ("pk", "use_case", "decision", "status", "signed_off_by", "signed_off_at")
    list_filter = ("status",)


@admin.register(ReevaluationFlag)
class ReevaluationFlagAdmin(ReadOnlyAdmin):
    list_display = ("scorecard", "kind", "reason", "raised_at", "notified_at")
