"""Gates (lifecycle stage 6): the decision on a signed charter's metric estimates.

The two-tier gate (Reject / Conditional / Scale), ν, the Efficacy Index EI/EI_G with its
sensitivity band, the value-and-risk model, and recorded decisions (immutable, hashed with
their evidence, each an unblinding event) with their pages, plots and PDF.
"""
