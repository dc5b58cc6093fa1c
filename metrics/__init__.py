"""Stage 4, metrics: units, human grades and judge scores turned into estimates with valid CIs.

Task-level, reliability (pass^k), efficiency, assurance and oversight estimators, the unit-level
human-only, judge-only and PPI++ estimators, and the evidence readers that feed them.
"""
