"""The ``enterpriseval`` console script: the same as ``python manage.py``."""

import os
import sys


def main() -> None:
    """Run a Django management command with the project's settings."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
