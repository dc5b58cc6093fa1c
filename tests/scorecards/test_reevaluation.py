"""Re-evaluation (SPEC §7): a new σ version, a charter deviation or a passed review date marks
every final scorecard of the use case "re-evaluation required" and e-mails its owners."""

from __future__ import annotations

import datetime as dt
import io
from smtplib import SMTPException

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.core import mail
from django.core.management import CommandError, call_command
from django.db import transaction
from django.utils import timezone

from audit.models import AuditEntry
from charters.models import Charter
from charters.services.charters import charter_revise
from charters.services.configurations import configuration_upload
from demo.testing.grading import EXAMPLES, fill, make_world
from demo.testing.scorecards import draft_scorecard, final_scorecard, recorded_decision
from enterpriseval.celery import app
from enterpriseval.errors import ConflictError
from scorecards.models import ReevaluationFlag, ReevaluationKind, ScorecardStatus
from scorecards.reevaluation import (
    reevaluation_flag_raise,
    reevaluation_for_configuration,
    review_dates_check,
)
from scorecards.selectors import REEVALUATION_REQUIRED, scorecard_state
from scorecards.tasks import review_dates_check_task

SITE = "https://ev.example.com"
#: The example charter's next review date (examples/credit_memo), copied to the scorecard.
REVIEW_DATE = dt.date(2027, 3, 31)


@pytest.fixture
def world(db):
    return make_world()


@pytest.fixture
def emails(world):
    """Give every member but one grader an address; return the owners' and reviewer's."""
    for user, address in (
        (world.owner, "owner@bank.example"),
        (world.model_owner, "model-owner@bank.example"),
        (world.reviewer, "reviewer@bank.example"),
        (world.graders[0], "grader@bank.example"),
        (world.adjudicator, "adjudicator@bank.example"),
    ):
        user.email = address
        user.save(update_fields=["email"])
    return ["model-owner@bank.example", "owner@bank.example", "reviewer@bank.example"]


def sigma_v2(*, temperature: str = "0.4", prompts: str = "sor-2.4") -> str:
    """Upload the Gemini σ with another temperature and prompt version, as the model owner."""
    text = (EXAMPLES / "sigma-gemini-2.5.yaml").read_text(encoding="utf-8")
    text = text.replace("temperature: 0.2", f"temperature: {temperature}")
    text = text.replace("version: sor-2.3", f"version: {prompts}")
    return text


def upload(world, text: str, name: str = "gemini-2-5"):
    return configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name=name,
        content=text,
        filename="sigma.yaml",
    )


def flags_of(scorecard) -> list[ReevaluationFlag]:
    return list(ReevaluationFlag.objects.filter(scorecard=scorecard).order_by("pk"))


# --------------------------------------------------------------------------- triggers


def test_registering_a_new_sigma_version_flips_the_final_scorecard_to_reevaluation_required(
    world,
):
    scorecard = final_scorecard(world)
    decision = scorecard.decision
    assert scorecard_state(scorecard) == "final"
    frozen = (scorecard.sha256, scorecard.canonical_json)

    configuration = upload(world, sigma_v2())

    assert (configuration.name, configuration.version) == ("gemini-2-5", 2)
    scorecard.refresh_from_db()
    assert scorecard_state(scorecard) == REEVALUATION_REQUIRED
    # The signed scorecard itself is untouched: staleness is recorded beside it.
    assert scorecard.status == ScorecardStatus.FINAL
    assert (scorecard.sha256, scorecard.canonical_json) == frozen
    (flag,) = flags_of(scorecard)
    assert flag.kind == ReevaluationKind.NEW_CONFIGURATION
    assert flag.source == f"configuration:{configuration.pk}"
    today = timezone.localdate().isoformat()
    assert flag.reason == (
        f"σ gemini-2-5 v2 registered on {today} by demo-model-owner: model, prompts changed "
        f"from gemini-2-5 v1, the σ of decision {decision.pk}"
    )
    entry = AuditEntry.objects.get(action="scorecard.reevaluation_required")
    assert entry.actor_username == "demo-model-owner"
    assert (entry.target_type, entry.target_id) == ("scorecards.scorecard", str(scorecard.pk))
    assert entry.payload == {
        "kind": "new_configuration",
        "source": flag.source,
        "reason": flag.reason,
    }


def test_a_new_sigma_name_is_reported_as_a_new_configuration_with_what_differs(world):
    scorecard = final_scorecard(world)
    text = (EXAMPLES / "sigma-llama-4.yaml").read_text(encoding="utf-8")
    configuration = upload(world, text.replace("seed: 7", "seed: 8"), name="llama-4-seed-8")
    (flag,) = flags_of(scorecard)
    # Gemini's σ and Llama's differ in the model only (examples/credit_memo); the seed is a
    # model parameter, so still only M differs.
    assert flag.reason.endswith(
        f"a new configuration (model differs from gemini-2-5 v1, the σ of decision "
        f"{scorecard.decision_id})"
    )
    assert flag.reason.startswith(f"σ llama-4-seed-8 v{configuration.version} registered on ")


def test_every_final_scorecard_of_the_use_case_is_flagged_and_drafts_are_not(world):
    gemini = final_scorecard(world)
    llama = final_scorecard(world, recorded_decision(world, "llama-4", grade=False))
    # More grades make a different decision record (one decision per record hash).
    fill(world.assignments_of(world.graders[1])[0])
    draft = draft_scorecard(world, recorded_decision(world, grade=False))

    upload(world, sigma_v2())

    assert scorecard_state(gemini) == REEVALUATION_REQUIRED
    assert scorecard_state(llama) == REEVALUATION_REQUIRED
    assert "model, prompts changed" not in flags_of(llama)[0].reason
    assert "a new configuration (model, prompts differ from llama-4 v1" in flags_of(llama)[0].reason
    assert flags_of(draft) == []
    assert scorecard_state(draft) == "draft"


def test_a_draft_cannot_be_flagged(world):
    draft = draft_scorecard(world)
    with pytest.raises(ConflictError, match="is a draft"):
        reevaluation_flag_raise(
            scorecard=draft,
            kind=ReevaluationKind.DEVIATION,
            source="deviation:1",
            reason="x",
            actor=world.owner,
        )


def test_a_charter_deviation_flips_the_final_scorecard(world):
    scorecard = final_scorecard(world)
    charter = Charter.objects.get(use_case=world.use_case, version=1)

    revision = charter_revise(
        actor=world.owner, charter=charter, reason="Hallucination θin tightened after the pilot"
    )

    (flag,) = flags_of(scorecard)
    assert flag.kind == ReevaluationKind.DEVIATION
    assert flag.source == f"deviation:{revision.deviation.pk}"
    assert flag.reason == (
        f"Charter deviation v1 → v2 recorded on {timezone.localdate().isoformat()} by "
        "demo-owner: Hallucination θin tightened after the pilot"
    )
    assert scorecard_state(scorecard) == REEVALUATION_REQUIRED


def test_a_long_reason_is_clipped_to_the_flags_field(world):
    scorecard = final_scorecard(world)
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    charter_revise(actor=world.owner, charter=charter, reason="word " * 200)
    (flag,) = flags_of(scorecard)
    assert 390 < len(flag.reason) <= 400
    assert flag.reason.endswith("…")


def test_flags_are_idempotent(world):
    scorecard = final_scorecard(world)
    configuration = upload(world, sigma_v2())
    assert reevaluation_for_configuration(configuration=configuration, actor=world.owner) == []
    assert len(flags_of(scorecard)) == 1
    assert AuditEntry.objects.filter(action="scorecard.reevaluation_required").count() == 1
    # A further σ version is a further event: a second flag.
    upload(world, sigma_v2(temperature="0.5"))
    assert [f.kind for f in flags_of(scorecard)] == [ReevaluationKind.NEW_CONFIGURATION] * 2


# --------------------------------------------------------------------------- review date


def test_the_daily_task_flags_a_passed_review_date_once(world):
    assert settings.CELERY_TASK_ALWAYS_EAGER  # the test settings run tasks in-process
    scorecard = final_scorecard(world)
    assert scorecard.next_review_date == REVIEW_DATE

    # "Passed" means strictly before today: on the review date itself nothing is due.
    assert review_dates_check_task.delay(REVIEW_DATE.isoformat()).get() == 0
    assert review_dates_check_task.delay("2027-04-01").get() == 1
    assert review_dates_check_task.delay("2027-04-02").get() == 0

    (flag,) = flags_of(scorecard)
    assert flag.kind == ReevaluationKind.REVIEW_DATE
    assert flag.source == "review_date:2027-03-31"
    assert flag.reason == "Next review date 2027-03-31 passed (checked on 2027-04-01)"
    assert scorecard_state(scorecard) == REEVALUATION_REQUIRED
    entry = AuditEntry.objects.get(action="scorecard.reevaluation_required")
    assert entry.actor_username == ""


def test_a_draft_past_its_review_date_is_not_flagged(world):
    draft = draft_scorecard(world)
    assert draft.next_review_date == REVIEW_DATE
    assert review_dates_check(today=dt.date(2027, 6, 1)) == 0
    assert flags_of(draft) == []


def test_the_beat_schedule_runs_the_review_date_check_daily():
    entry = settings.CELERY_BEAT_SCHEDULE["scorecards-review-dates"]
    assert app.conf.beat_schedule["scorecards-review-dates"] == entry
    assert entry["task"] == "scorecards.review_dates_check"
    assert entry["task"] in app.tasks
    schedule = entry["schedule"]
    assert isinstance(schedule, crontab)
    assert schedule == crontab(hour=6, minute=0)
    assert schedule.day_of_week == set(range(7))
    assert schedule.day_of_month == set(range(1, 32))
    assert schedule.month_of_year == set(range(1, 13))


def test_the_command_prints_what_it_flagged(world):
    scorecard = final_scorecard(world)
    out = io.StringIO()
    call_command("reevaluation_check", "--today", "2027-03-31", stdout=out)
    assert "Nothing to flag" in out.getvalue()
    out = io.StringIO()
    call_command("reevaluation_check", "--today", "2027-04-01", stdout=out)
    assert out.getvalue().splitlines() == [
        f"flagged scorecard {scorecard.pk} of CREDIT-MEMO-B: Next review date 2027-03-31 "
        "passed (checked on 2027-04-01)",
        "1 scorecard(s) now need re-evaluation.",
    ]


def test_the_command_names_a_bad_date(db):
    with pytest.raises(CommandError, match=r"--today: '2027-13-01' is not a date \(YYYY-MM-DD\)"):
        call_command("reevaluation_check", "--today", "2027-13-01")


# --------------------------------------------------------------------------- e-mail


def test_the_owners_are_emailed_once_the_change_commits(
    world, emails, settings, django_capture_on_commit_callbacks
):
    settings.ENTERPRISEVAL_SITE_URL = SITE + "/"
    scorecard = final_scorecard(world)
    decision = scorecard.decision

    with django_capture_on_commit_callbacks(execute=True):
        upload(world, sigma_v2())

    (message,) = mail.outbox
    (flag,) = flags_of(scorecard)
    assert sorted(message.to) == emails
    assert message.from_email == settings.DEFAULT_FROM_EMAIL
    assert message.subject == (
        f"[EnterpriseVal] CREDIT-MEMO-B: scorecard {scorecard.pk} needs re-evaluation"
    )
    assert f"Why (new configuration σ version): {flag.reason}" in message.body
    assert f"Scorecard: {SITE}/use-cases/CREDIT-MEMO-B/scorecards/{scorecard.pk}/" in message.body
    assert f"for decision {decision.pk} ({decision.status}, σ gemini-2-5 v1)" in message.body
    assert flag.notified_at is not None
    entry = AuditEntry.objects.get(action="scorecard.reevaluation_notified")
    assert entry.payload["recipients"] == ["demo-model-owner", "demo-owner", "demo-reviewer"]


def test_a_rolled_back_change_sends_nothing(world, emails, django_capture_on_commit_callbacks):
    scorecard = final_scorecard(world)
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        upload(world, sigma_v2())
        assert len(flags_of(scorecard)) == 1
        raise RuntimeError("the upload's transaction fails after the flag was raised")
    assert callbacks == []
    assert mail.outbox == []
    assert flags_of(scorecard) == []
    assert scorecard_state(scorecard) == "final"


def test_without_addresses_nobody_is_emailed_and_the_daily_check_retries(
    world, django_capture_on_commit_callbacks
):
    scorecard = final_scorecard(world)
    with django_capture_on_commit_callbacks(execute=True):
        upload(world, sigma_v2())
    (flag,) = flags_of(scorecard)
    assert mail.outbox == []
    assert flag.notified_at is None

    world.reviewer.email = "reviewer@bank.example"
    world.reviewer.save(update_fields=["email"])
    with django_capture_on_commit_callbacks(execute=True):
        assert review_dates_check(today=REVIEW_DATE) == 0
    (message,) = mail.outbox
    assert message.to == ["reviewer@bank.example"]
    flag.refresh_from_db()
    assert flag.notified_at is not None

    with django_capture_on_commit_callbacks(execute=True):
        review_dates_check(today=REVIEW_DATE)
    assert len(mail.outbox) == 1  # notified flags are not e-mailed again


def test_a_mail_server_failure_keeps_the_flag_and_leaves_it_unnotified(
    world, emails, monkeypatch, django_capture_on_commit_callbacks
):
    scorecard = final_scorecard(world)

    def refuse(*args, **kwargs):
        raise SMTPException("451 try again later")

    monkeypatch.setattr("scorecards.reevaluation.send_mail", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        configuration = upload(world, sigma_v2())
    assert configuration.pk is not None
    (flag,) = flags_of(scorecard)
    assert flag.notified_at is None
    assert not AuditEntry.objects.filter(action="scorecard.reevaluation_notified").exists()
