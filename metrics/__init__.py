"""Metrics (lifecycle stage 5, the estimates): evidence turned into estimates with valid CIs.

Units, human grades and judge scores go in; out come the task-level, reliability (pass^k),
efficiency, assurance and oversight estimates and the unit-level human-only, judge-only and
PPI++ estimates, read through the evidence readers of ``metrics.evidence``.
"""
