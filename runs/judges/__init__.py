"""Automatic judges f (SPEC §2 Judge): the versioned rubric, the offline judge, the LLM judge.

Pure modules: no Django import. :mod:`runs.services.judging` stores what they return.
"""
