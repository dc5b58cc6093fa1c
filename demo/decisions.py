"""Real decisions in the demo: both σ gated on the evidence, compared with the planted truth.

After the simulated graders and reviewers (``demo.grading``), ``make demo`` computes a
decision for each σ from its imported outputs, the offline judge, the closed grading session
and the complete oversight study, through the service the web UI, the API and the CLI call
(``decision_create``, with no way round its refusals), and prints each gated metric's
estimate beside its true value from the example's truth files. A decision is recorded once
per state of the evidence: running the demo again finds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from django.contrib.auth import get_user_model

from charters.models import Charter
from demo.loaders import DemoObjects, JudgedRun
from gates.models import Decision
from gates.services import decision_create, grades_digest
from grading.models import GradingSession, OversightStudy
from runs.services.judging import judge_get_or_create

TRUTH_METRICS = (
    "citation_precision_lenient",
    "key_element_capture",
    "irrelevance_rate",
    "hallucination_rate",
    "guidance_precision",
    "guidance_recall",
)


def true_rates(truth_path: Path) -> dict[str, float]:
    """Return the planted population value (percent) of each gated unit-level metric."""
    counts = dict.fromkeys(("sent", "halluc", "irrel", "cited", "cited_ok", "tp", "fp", "fn"), 0)
    shares: list[float] = []
    for line in truth_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for sentence in record["sentences"]:
            counts["sent"] += 1
            counts["halluc"] += sentence["assertive"] and not sentence["supported"]
            counts["irrel"] += not sentence["relevant"]
            if sentence["cited_chunk_id"]:
                counts["cited"] += 1
                counts["cited_ok"] += bool(sentence["citation_lenient"])
        elements = record["key_elements"].values()
        shares.append(sum(v == "present_correct" for v in elements) / max(len(elements), 1))
        for item in record["guidance"].values():
            counts["tp"] += item["breached"] and item["flagged"]
            counts["fp"] += (not item["breached"]) and item["flagged"]
            counts["fn"] += item["breached"] and not item["flagged"]
    return {
        "citation_precision_lenient": 100 * counts["cited_ok"] / counts["cited"],
        "key_element_capture": 100 * sum(shares) / len(shares),
        "irrelevance_rate": 100 * counts["irrel"] / counts["sent"],
        "hallucination_rate": 100 * counts["halluc"] / counts["sent"],
        "guidance_precision": 100 * counts["tp"] / max(counts["tp"] + counts["fp"], 1),
        "guidance_recall": 100 * counts["tp"] / max(counts["tp"] + counts["fn"], 1),
    }


def demo_decisions(
    *,
    objects: DemoObjects,
    runs: Sequence[JudgedRun],
    session: GradingSession,
    study: OversightStudy,
    example_dir: Path,
    log: Callable[[str], None],
) -> list[Decision]:
    """Compute (or find) the decision of each σ on the evidence, and print it against the truth."""
    owner = get_user_model().objects.get(username="demo-owner")
    charter = Charter.objects.frozen().filter(use_case=objects.use_case).order_by("-version")[0]
    judge = judge_get_or_create(kind="offline")
    digest = grades_digest(session=session)
    decisions = []
    for judged in runs:
        decision = (
            Decision.objects.filter(run=judged.run, charter=charter, session=session)
            .filter(evidence__grades_sha256=digest)
            .first()
        )
        if decision is None:
            # Exactly what the web form, the API and `enterpriseval decide` call: the session
            # is closed (demo.grading), so none of SPEC §6.1's refusals applies.
            decision = decision_create(
                actor=owner,
                charter=charter,
                run=judged.run,
                session=session,
                judge=judge,
                oversight_study=study,
            )
        decisions.append(decision)
        decision_print(decision, true_rates(example_dir / f"truth-{judged.sigma}.jsonl"), log)
    return decisions


def decision_print(decision: Decision, truth: dict[str, float], log: Callable[[str], None]) -> None:
    """Print a decision's gated metrics, each estimate beside its planted true value."""
    gate = decision.record["gate"]
    estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
    log(
        f"σ {decision.configuration.name}: {decision.status}"
        + (f" (binding {decision.binding_metric})" if decision.binding_metric else "")
        + f" — decision {decision.pk}, sha256 {decision.sha256[:16]}…"
    )
    log(f"  {'metric':<27} {'mode':<4} {'estimate':>8} {'CI':>17} {'truth':>6} {'gap':>6}  κ/α")
    for metric in gate["metrics"]:
        estimate = estimates.get(metric["id"], {})
        true = truth.get(metric["id"])
        point = estimate.get("point")
        interval = (
            f"[{estimate['lo']:.1f}, {estimate['hi']:.1f}]"
            if estimate.get("lo") is not None
            else "—"
        )
        gap = f"{point - true:+.1f}" if point is not None and true is not None else "—"
        kappa = estimate.get("kappa")
        log(
            f"  {metric['id']:<27} {estimate.get('mode', '—'):<4} "
            f"{'—' if point is None else f'{point:.1f}':>8} {interval:>17} "
            f"{'—' if true is None else f'{true:.1f}':>6} {gap:>6}  "
            f"{'—' if kappa is None else f'{kappa:.3f}'}"
        )
    for reason in gate["reasons"][:4]:
        log(f"  · {reason}")
    value = decision.record.get("value") or {}
    if "point" in value:
        code = value.get("currency") or ""
        log(
            f"  value V_annual {code} {value['point']:,.0f} per year (Monte Carlo median; "
            f"90% interval {code} "
            f"{value['lo']:,.0f} to {code} {value['hi']:,.0f}; {value['label']})"
        )
