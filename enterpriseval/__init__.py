"""EnterpriseVal: use-case-level evaluation of LLM workflows for regulated firms.

This project package is the ground floor every stage stands on: settings, URLs, the Celery
app, the console script, errors, the pure statistics core (``enterpriseval.stats``) and the
kernels the stages share. It imports no stage app; the demo and the test doubles live in the
``demo`` app above every stage.

Importing this package stays light: the pure statistics core must import without Django or
Celery. The Celery app is loaded when Django starts (``EnterpriseValConfig.ready``) and by
``celery -A enterpriseval``.
"""
