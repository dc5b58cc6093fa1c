"""Stage 2, runs: a frozen σ executed on a task-set split (Celery + litellm) or its outputs imported.

Outputs are segmented into units (sentences, citations, key elements), trajectories recorded,
and judges (the offline judge or an LLM judge) score every unit.
"""
