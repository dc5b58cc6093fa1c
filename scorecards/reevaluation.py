"""Re-evaluation of final scorecards (SPEC §7): triggers raise flags, the owners are e-mailed.

A final scorecard is immutable, so staleness is recorded beside it: one
:class:`~scorecards.models.ReevaluationFlag` per trigger event (a new σ version of the use
case, a charter deviation, the next review date passing), which makes the scorecard read
"re-evaluation required". Raising the same event twice is a no-op (the flag's ``source`` names
the event). Draft scorecards are never flagged: they are assembled from the current state on
every read and are not yet signed.

The e-mail to the use case's charter owners, model owners and second-line reviewers is sent
by a Celery task enqueued when the flagging transaction commits, so a change that rolls back
notifies nobody; ``notified_at`` is set once it went out. The daily check re-sends any flag
whose e-mail could not be sent.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from functools import partial
from smtplib import SMTPException

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.urls import reverse
from django.utils import timezone

from audit.services import audit_record
from charters.configurations import COMPONENTS
from charters.models import Configuration, Deviation, Membership, Role
from charters.selectors.configurations import configuration_parity
from enterpriseval.errors import ConflictError
from gates.models import Decision
from scorecards.models import ReevaluationFlag, ReevaluationKind, Scorecard, ScorecardStatus

logger = logging.getLogger(__name__)

#: Who is told that a scorecard needs re-evaluation (SPEC §7 "notifies its owners").
NOTIFY_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER, Role.REVIEWER)
REASON_MAX = ReevaluationFlag._meta.get_field("reason").max_length or 400
COMPONENT_LABELS = {
    component.key: component.label[0].lower() + component.label[1:] for component in COMPONENTS
}


# --------------------------------------------------------------------------- raising flags


@transaction.atomic
def reevaluation_flag_raise(
    *,
    scorecard: Scorecard,
    kind: ReevaluationKind | str,
    source: str,
    reason: str,
    actor: AbstractBaseUser | None,
) -> ReevaluationFlag | None:
    """Mark a final scorecard "re-evaluation required"; ``None`` if ``source`` already did.

    Audits ``scorecard.reevaluation_required`` and e-mails the owners once the transaction
    commits.
    """
    if scorecard.status != ScorecardStatus.FINAL:
        raise ConflictError(
            f"Scorecard {scorecard.pk} is a draft: it reads the current evidence on every view "
            "and is not flagged for re-evaluation."
        )
    kind = ReevaluationKind(kind)
    if ReevaluationFlag.objects.filter(scorecard=scorecard, kind=kind, source=source).exists():
        return None
    reason = _clip(reason)
    try:
        # A savepoint: the same event raised concurrently loses the race on the unique
        # constraint without spoiling the caller's transaction.
        with transaction.atomic():
            flag = ReevaluationFlag.objects.create(
                scorecard=scorecard, kind=kind, source=source, reason=reason
            )
    except IntegrityError:
        return None
    audit_record(
        actor=actor,
        action="scorecard.reevaluation_required",
        target=scorecard,
        payload={"kind": str(kind), "source": source, "reason": reason},
    )
    transaction.on_commit(partial(_enqueue_notifications, [flag.pk]), robust=True)
    return flag


@transaction.atomic
def reevaluation_for_configuration(
    *, configuration: Configuration, actor: AbstractBaseUser | None
) -> list[ReevaluationFlag]:
    """Flag every final scorecard of the use case: a new σ version was registered.

    The reason says which σ components differ from the σ the scorecard's decision used.
    """
    raised = []
    for scorecard in _final_scorecards(configuration.use_case_id):
        flag = reevaluation_flag_raise(
            scorecard=scorecard,
            kind=ReevaluationKind.NEW_CONFIGURATION,
            source=f"configuration:{configuration.pk}",
            reason=configuration_reason(
                configuration=configuration, decision=scorecard.decision, actor=actor
            ),
            actor=actor,
        )
        if flag is not None:
            raised.append(flag)
    return raised


@transaction.atomic
def reevaluation_for_deviation(
    *, deviation: Deviation, actor: AbstractBaseUser | None
) -> list[ReevaluationFlag]:
    """Flag every final scorecard of the use case: a charter deviation was recorded."""
    charter = deviation.charter
    reason = (
        f"Charter deviation v{deviation.previous.version} → v{charter.version} recorded on "
        f"{_local_date(deviation.created_at)} by {_name(actor)}: {deviation.reason}"
    )
    raised = []
    for scorecard in _final_scorecards(charter.use_case_id):
        flag = reevaluation_flag_raise(
            scorecard=scorecard,
            kind=ReevaluationKind.DEVIATION,
            source=f"deviation:{deviation.pk}",
            reason=reason,
            actor=actor,
        )
        if flag is not None:
            raised.append(flag)
    return raised


@transaction.atomic
def review_dates_flag(*, today: dt.date | None = None) -> list[ReevaluationFlag]:
    """Flag every final scorecard whose next review date is before ``today``; return the flags.

    ``today`` defaults to the local date (``TIME_ZONE``). Also re-sends the e-mail of any
    earlier flag whose owners were not notified (mail server down, nobody with an address).
    """
    today = today or timezone.localdate()
    flagged = ReevaluationFlag.objects.filter(
        scorecard=OuterRef("pk"), kind=ReevaluationKind.REVIEW_DATE
    )
    due = (
        Scorecard.objects.filter(status=ScorecardStatus.FINAL, next_review_date__lt=today)
        .exclude(Exists(flagged))
        .select_related("use_case")
        .defer("pdf", "content", "canonical_json")
        .order_by("next_review_date", "pk")
    )
    raised = []
    for scorecard in due:
        review_date = scorecard.next_review_date
        if review_date is None:  # excluded by the filter; narrows the type
            continue
        flag = reevaluation_flag_raise(
            scorecard=scorecard,
            kind=ReevaluationKind.REVIEW_DATE,
            source=f"review_date:{review_date.isoformat()}",
            reason=f"Next review date {review_date.isoformat()} passed (checked on "
            f"{today.isoformat()})",
            actor=None,
        )
        if flag is not None:
            raised.append(flag)
    unsent = list(
        ReevaluationFlag.objects.filter(notified_at__isnull=True)
        .exclude(pk__in=[flag.pk for flag in raised])
        .values_list("pk", flat=True)
    )
    if unsent:
        transaction.on_commit(partial(_enqueue_notifications, unsent), robust=True)
    return raised


def review_dates_check(*, today: dt.date | None = None) -> int:
    """Flag the final scorecards whose next review date has passed; return how many."""
    return len(review_dates_flag(today=today))


def configuration_reason(
    *, configuration: Configuration, decision: Decision, actor: AbstractBaseUser | None
) -> str:
    """Return why a new σ makes the decision's scorecard stale: which components differ."""
    used = decision.configuration
    what = f"σ {configuration.name} v{configuration.version}"
    base = f"{used.name} v{used.version}, the σ of decision {decision.pk}"
    when = f"registered on {_local_date(configuration.created_at)} by {_name(actor)}"
    differing = [
        COMPONENT_LABELS[key] for key in configuration_parity(a=used, b=configuration).differing
    ]
    if configuration.name == used.name:
        if differing:
            change = f"{', '.join(differing)} changed from {base}"
        else:
            change = f"no component differs from {base} (document metadata only)"
    elif differing:
        verb = "differs" if len(differing) == 1 else "differ"
        change = f"a new configuration ({', '.join(differing)} {verb} from {base})"
    else:
        change = f"a new configuration (no component differs from {base})"
    return f"{what} {when}: {change}"


def _final_scorecards(use_case_id: int) -> list[Scorecard]:
    return list(
        Scorecard.objects.filter(use_case_id=use_case_id, status=ScorecardStatus.FINAL)
        .select_related("use_case", "decision__configuration")
        .defer("pdf", "content", "canonical_json")
        .order_by("pk")
    )


# --------------------------------------------------------------------------- notifying


def reevaluation_notify(*, flag_ids: Sequence[int]) -> int:
    """E-mail the owners about each flag not yet notified; return how many were sent.

    One e-mail per flag to the charter owners, model owners and second-line reviewers of
    the scorecard's use case who have an address. A flag whose e-mail fails, or has no one
    to go to, stays un-notified and is retried by the daily check.
    """
    sent = 0
    for flag_id in flag_ids:
        try:
            sent += _notify(flag_id)
        except (SMTPException, OSError):
            logger.exception("re-evaluation e-mail of flag %s not sent; retried daily", flag_id)
    return sent


@transaction.atomic
def _notify(flag_id: int) -> bool:
    flag = (
        ReevaluationFlag.objects.select_for_update()
        .filter(pk=flag_id, notified_at__isnull=True)
        .first()
    )
    if flag is None:
        return False
    scorecard = (
        Scorecard.objects.select_related("use_case", "decision__configuration", "signed_off_by")
        .defer("pdf", "content", "canonical_json")
        .get(pk=flag.scorecard_id)
    )
    recipients = notification_recipients(use_case_id=scorecard.use_case_id)
    if not recipients:
        logger.warning(
            "re-evaluation of scorecard %s: no charter owner, model owner or reviewer of %s "
            "has an e-mail address",
            scorecard.pk,
            scorecard.use_case.key,
        )
        return False
    subject, body = notification_message(scorecard=scorecard, flag=flag)
    send_mail(
        subject,
        body,
        settings.DEFAULT_FROM_EMAIL,
        [email for _username, email in recipients],
        fail_silently=False,
    )
    flag.notified_at = timezone.now()
    flag.save(update_fields=["notified_at"])
    audit_record(
        actor=None,
        action="scorecard.reevaluation_notified",
        target=scorecard,
        payload={
            "kind": flag.kind,
            "source": flag.source,
            "recipients": sorted(username for username, _email in recipients),
        },
    )
    return True


def notification_recipients(*, use_case_id: int) -> list[tuple[str, str]]:
    """Return (username, e-mail) of the active owners and reviewers who have an address.

    Graders are never among them: nobody may grade and own or review one use case.
    """
    rows = (
        Membership.objects.filter(
            use_case_id=use_case_id, role__in=NOTIFY_ROLES, user__is_active=True
        )
        .exclude(user__email="")
        .values_list("user__username", "user__email")
        .order_by("user__username")
        .distinct()
    )
    return list(dict.fromkeys(rows))


def notification_message(*, scorecard: Scorecard, flag: ReevaluationFlag) -> tuple[str, str]:
    """Return the subject and body of the e-mail about ``flag``."""
    use_case = scorecard.use_case
    decision = scorecard.decision
    url = _site_url() + reverse("scorecard-detail", args=[use_case.key, scorecard.pk])
    subject = f"[EnterpriseVal] {use_case.key}: scorecard {scorecard.pk} needs re-evaluation"
    signed = (
        f"signed off on {_local_date(scorecard.signed_off_at)} by {_name(scorecard.signed_off_by)}"
        if scorecard.signed_off_at
        else "signed off"
    )
    body = "\n".join(
        [
            f"Scorecard {scorecard.pk} of {use_case.key} ({use_case.name}) now reads "
            '"re-evaluation required".',
            "",
            f"Why ({flag.get_kind_display().lower()}): {flag.reason}",
            "",
            f"The scorecard was {signed} for decision {decision.pk} ({decision.status}, σ "
            f"{decision.configuration.name} v{decision.configuration.version}). It stays as "
            "signed; record a new decision on the current evidence and sign off its scorecard.",
            "",
            f"Scorecard: {url}",
            "",
            "You receive this as a charter owner, model owner or second-line reviewer of "
            f"{use_case.key}.",
        ]
    )
    return subject, body


def _enqueue_notifications(flag_ids: list[int]) -> None:
    # Imported here: the task module imports this one.
    from scorecards.tasks import reevaluation_notify_task

    reevaluation_notify_task.delay(flag_ids)


# --------------------------------------------------------------------------- helpers


def _site_url() -> str:
    return str(getattr(settings, "ENTERPRISEVAL_SITE_URL", "") or "").rstrip("/")


def _local_date(moment: dt.datetime | None) -> str:
    return timezone.localdate(moment).isoformat() if moment else "an unknown date"


def _name(user: AbstractBaseUser | None) -> str:
    return user.get_username() if user is not None else "the system"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_MAX else text[: REASON_MAX - 1].rstrip() + "…"
