"""The one error type of services, and how the API reports it."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler


class ServiceError(Exception):
    """A refused operation, with a message a user can act on.

    ``field`` names the input at fault (a path such as ``metrics[2].theta_in`` or
    ``line 17: split``); ``details`` lists further problems of the same request (e.g. every
    bad line of an import).
    """

    status_code = 400
    code = "invalid"

    def __init__(
        self, message: str, *, field: str | None = None, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or []

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "details": self.details,
        }


class ImmutableError(ServiceError):
    """The object is frozen (signed, imported, recorded) and cannot change."""

    status_code = 409
    code = "immutable"


class ConflictError(ServiceError):
    """The operation conflicts with the object's current state."""

    status_code = 409
    code = "conflict"


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Report ``ServiceError`` in the API's one error shape; defer to DRF otherwise."""
    if isinstance(exc, ServiceError):
        return Response({"error": exc.as_dict()}, status=exc.status_code)
    response = exception_handler(exc, context)
    if response is not None and not (isinstance(response.data, dict) and "error" in response.data):
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        response.data = {
            "error": {
                "code": getattr(detail, "code", None) or "error",
                "message": str(detail) if detail is not None else "invalid request",
                "field": None,
                "details": [] if detail is not None else [response.data],
            }
        }
    return response
