"""Scorecards (lifecycle stage 7): the governance record a risk committee signs off.

A decision and everything it rests on assembled into seed 003's Table 11, with plots, the PDF,
the regulatory mapping packs, the GRC export, evidence packs and re-evaluation triggers.
"""
