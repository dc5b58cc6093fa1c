"""Issue 17 finding 5: wrong passwords lock sign-in (form and API token) for the cool-off time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

LIMIT = settings.AXES_FAILURE_LIMIT


def form_sign_in(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


def token_sign_in(client: APIClient, username: str, password: str):
    return client.post(
        "/api/v1/auth/token/", {"username": username, "password": password}, format="json"
    )


def cool_off_passed() -> None:
    """Move every recorded failure back past the cool-off time (as if it had elapsed)."""
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )


def test_the_limit_and_cool_off_are_set():
    assert LIMIT == 5
    assert timedelta(minutes=15) == settings.AXES_COOLOFF_TIME


def test_wrong_passwords_on_the_form_lock_the_account_until_the_cool_off_ends(personas):
    client = Client()
    for _ in range(LIMIT - 1):
        response = form_sign_in(client, "grader", "wrong")
        assert response.status_code == 200  # the form again, with its error
    locked = form_sign_in(client, "grader", "wrong")
    assert locked.status_code == 429
    right = form_sign_in(client, "grader", "pw-grader")
    assert right.status_code == 429
    body = right.content.decode()
    assert f"locked after {LIMIT} failed attempts" in body
    assert "Try again in 15 minutes" in body
    assert right["Retry-After"] == "900"
    assert "_auth_user_id" not in client.session

    cool_off_passed()
    signed_in = form_sign_in(client, "grader", "pw-grader")
    assert signed_in.status_code == 302
    assert client.session["_auth_user_id"] == str(personas.grader.pk)


def test_a_lock_on_one_account_holds_on_the_api_token_endpoint_too(personas):
    for _ in range(LIMIT):
        form_sign_in(Client(), "reviewer", "wrong")
    response = token_sign_in(APIClient(), "reviewer", "pw-reviewer")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "locked_out"
    assert "Try again in 15 minutes" in response.json()["error"]["message"]


def test_wrong_passwords_on_the_token_endpoint_lock_it_then_it_opens_after_the_cool_off(personas):
    client = APIClient()
    for _ in range(LIMIT - 1):
        assert token_sign_in(client, "owner", "wrong").status_code == 400
    assert token_sign_in(client, "owner", "wrong").status_code == 429
    refused = token_sign_in(client, "owner", "pw-owner")
    assert refused.status_code == 429
    assert "token" not in refused.json()

    cool_off_passed()
    granted = token_sign_in(client, "owner", "pw-owner")
    assert granted.status_code == 200
    assert granted.json()["token"]


def test_a_successful_sign_in_clears_the_failures_before_the_limit(personas):
    client = Client()
    for _ in range(LIMIT - 1):
        form_sign_in(client, "adjudicator", "wrong")
    assert form_sign_in(client, "adjudicator", "pw-adjudicator").status_code == 302
    client.logout()
    # The count started again: the limit's worth of failures less one still leaves sign-in open.
    for _ in range(LIMIT - 1):
        assert form_sign_in(client, "adjudicator", "wrong").status_code == 200
    assert form_sign_in(client, "adjudicator", "pw-adjudicator").status_code == 302


def test_django_password_validators_refuse_a_weak_password(personas):
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    names = {
        validator["NAME"].rsplit(".", 1)[-1] for validator in settings.AUTH_PASSWORD_VALIDATORS
    }
    assert {"MinimumLengthValidator", "CommonPasswordValidator"} <= names
    with pytest.raises(ValidationError):
        validate_password("password", user=personas.owner)
