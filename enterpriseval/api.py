"""The API's one error shape and its one input validation, shared by every stage's API.

Every refused request answers ``{"error": {"code", "message", "field", "details": [...]}}``
(:func:`enterpriseval.errors.api_exception_handler` writes it); :data:`ErrorOutput` documents
that shape in the OpenAPI schema, and :func:`validated` turns an input serializer's
complaints into a :class:`~enterpriseval.errors.ServiceError` of that shape.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from enterpriseval.errors import ServiceError

ErrorOutput = inline_serializer(
    name="ErrorOutput",
    fields={
        "error": inline_serializer(
            name="ErrorBody",
            fields={
                "code": serializers.CharField(),
                "message": serializers.CharField(),
                "field": serializers.CharField(allow_null=True),
                "details": serializers.ListField(child=serializers.DictField()),
            },
        )
    },
)
"""The error response of every endpoint, for ``extend_schema(responses=...)``."""


def validated(
    serializer_class: type[serializers.Serializer[Any]], data: Any, *, partial: bool = False
) -> dict[str, Any]:
    """Return the validated data, or raise a ServiceError naming every field at fault.

    The error's message and ``field`` are those of the first field at fault; ``details``
    lists every field as ``{"field", "message"}``.
    """
    serializer = serializer_class(data=data, partial=partial)
    if serializer.is_valid():
        return dict(serializer.validated_data)
    details = [
        {"field": field, "message": " ".join(str(m) for m in messages)}
        for field, messages in serializer.errors.items()
    ]
    first = details[0]
    raise ServiceError(
        f"{first['field']}: {first['message']}", field=first["field"], details=details
    )
