"""Sign-in: the lockout response, the client address and the API token endpoint.

Wrong passwords are counted by django-axes (settings: ``AXES_*``, docs/operations.md) on the
login form and on ``POST /api/v1/auth/token/`` alike. Once the limit is reached the user
name (and the address) is locked out for the cool-off time: every sign-in, even with the
right password, gets HTTP 429 with a message saying when to try again — the login page for a
browser, the API's error shape for the token endpoint.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response

LOCKED_STATUS = 429


def lockout_message() -> str:
    """Return what a locked-out user reads: how many failures, and how long to wait."""
    cool_off: timedelta = settings.AXES_COOLOFF_TIME
    minutes = max(1, math.ceil(cool_off.total_seconds() / 60))
    return (
        f"Sign-in is locked after {settings.AXES_FAILURE_LIMIT} failed attempts. Try again in "
        f"{minutes} minute{'s' if minutes != 1 else ''}; until then even the right password "
        "is refused. An administrator can lift the lock sooner."
    )


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    """Return the 429 of a locked-out sign-in (django-axes' ``AXES_LOCKOUT_CALLABLE``)."""
    cool_off: timedelta = settings.AXES_COOLOFF_TIME
    retry_after = str(math.ceil(cool_off.total_seconds()))
    message = lockout_message()
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"error": {"code": "locked_out", "message": message, "field": None, "details": []}},
            status=LOCKED_STATUS,
        )
    else:
        response = render(
            request, "registration/locked.html", {"message": message}, status=LOCKED_STATUS
        )
    response["Retry-After"] = retry_after
    return response


def client_ip(request: HttpRequest) -> str:
    """Return the client's address: behind ``ENTERPRISEVAL_PROXY_COUNT`` proxies, from
    X-Forwarded-For (the address the outermost trusted proxy saw), else REMOTE_ADDR."""
    proxies: int = settings.ENTERPRISEVAL_PROXY_COUNT
    forwarded = [
        part.strip()
        for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        if part.strip()
    ]
    if proxies > 0 and len(forwarded) >= proxies:
        return forwarded[-proxies]
    return str(request.META.get("REMOTE_ADDR", ""))


class TokenObtainApi(ObtainAuthToken):
    """``POST /api/v1/auth/token/``: a user name and password for the user's API token.

    Authentication sees the Django request (not DRF's wrapper), so django-axes counts the
    failures of this endpoint, and its middleware answers a locked-out user name here with
    :func:`lockout_response` as on the login form.
    """

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.serializer_class(
            data=request.data, context={"request": request._request, "view": self}
        )
        serializer.is_valid(raise_exception=True)
        token, _created = Token.objects.get_or_create(user=serializer.validated_data["user"])
        return Response({"token": token.key})
