"""WSGI entry point (gunicorn ``enterpriseval.wsgi``).

In production the static files are served by WhiteNoise from ``STATIC_ROOT`` with hashed
names from its manifest; without ``manage.py collectstatic`` every page would answer 500, so
the server refuses to start instead, saying what to run (docs/operations.md).
"""

import os

from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

application = get_wsgi_application()


def _static_files_collected() -> None:
    from django.conf import settings

    if not settings.PRODUCTION:
        return
    manifest = settings.STATIC_ROOT / "staticfiles.json"
    if not manifest.exists():
        raise ImproperlyConfigured(
            f"{manifest} is missing: run `manage.py collectstatic --noinput` with the "
            "production environment before starting the server (docs/operations.md)"
        )


_static_files_collected()
