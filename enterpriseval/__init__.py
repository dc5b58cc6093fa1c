"""EnterpriseVal: use-case-level evaluation of LLM workflows for regulated firms."""

from enterpriseval.celery import app as celery_app

__all__ = ["celery_app"]
