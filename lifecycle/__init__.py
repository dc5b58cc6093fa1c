"""The roof: the use-case overview across every stage, lifecycle stages, blockers, next steps,
members.

It reads every stage (charters, runs, grading, gates, scorecards); no stage reads it.
"""
