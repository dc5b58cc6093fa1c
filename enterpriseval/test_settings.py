"""Settings for the test suite: the normal settings in ``test`` mode (eager Celery tasks)."""

import os

os.environ["ENTERPRISEVAL_ENV"] = "test"

from enterpriseval.settings import *  # noqa: F403
