"""EGI-Bench capability evidence: native benchmark results → EGI (M1–M6, floors) per model.

Routing, importers, aggregation, floors, rescoring, the ``egi-bench`` CLI, the LiteLLM proxy
and the harnesses; the stored results are linked to σ's model on the decision and scorecard.
Named ``egibench`` because the pinned pysbd installs a top-level ``benchmarks`` package.
Imports only the project package, audit and charters.
"""
