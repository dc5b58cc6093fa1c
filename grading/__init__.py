"""Grading (lifecycle stage 5, the humans): blinded expert grading of a sample of outputs.

Seeded sampling into grading sessions, balanced assignments to ≥ 2 graders, the keyboard-first
workspace, grades and their revisions, adjudication, agreement (κ/α per rubric field) and
oversight studies with seeded defects. Graders see opaque ids only.
"""
