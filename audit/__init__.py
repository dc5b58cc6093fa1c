"""Audit: the append-only, hash-chained log of every important change, and its verifier.

Every service that signs, freezes, unblinds, grades, adjudicates, gates or signs off writes
one entry here (``audit.services.audit_record``); ``audit.canonical`` is the one canonical-JSON
hash helper of the project; ``verify_audit`` re-walks the chain. The lowest stage: it imports
only the project package, so every stage can write to it. Who may read a use case's log is
decided by the stage that owns use-case roles (``charters``).
"""
