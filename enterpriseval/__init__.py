"""EnterpriseVal: use-case-level evaluation of LLM workflows for regulated firms.

Importing this package stays light: the pure statistics core (``enterpriseval.stats``)
must import without Django or Celery. The Celery app is loaded when Django starts
(``EnterpriseValConfig.ready``) and by ``celery -A enterpriseval``.
"""
