"""Runs (lifecycle stage 4): a frozen σ executed on a task-set split, or its outputs imported.

Execution goes through Celery and litellm; outputs are segmented into units (sentences,
citations, key elements), trajectories recorded, and judges (the offline judge or an LLM judge)
score every unit.
"""
