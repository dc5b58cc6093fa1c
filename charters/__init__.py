"""The charter (lifecycle stages 1–3): what is evaluated, by whom, against which thresholds.

Use cases and their per-use-case roles (memberships, permissions), the metric catalogue the
charter picks from, charters (thresholds, weights, signatures, deviations; frozen when signed),
configurations σ (immutable versions, SHA-256, parity) and task sets (splits, labels). Also
the use case's audit-log page, since this stage owns who may read it. Imports only the project
package, audit and pure modules of later stages.
"""
