"""Project-level views."""

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Report whether the web process can reach its database."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "ok"
    except Exception as error:
        database = f"error: {type(error).__name__}"
    status = 200 if database == "ok" else 503
    return JsonResponse({"database": database, "vendor": connection.vendor}, status=status)
