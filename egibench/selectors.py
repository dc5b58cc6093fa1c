"""Reads of EGI results: the roster, one model, and the link from σ's model to its result.

Linking rule (:func:`egi_match_for_model`), first rule that finds a result wins:

1. ``exact``: the result's model id equals σ's ``model_ref`` (``gemini/gemini-2.5-pro``).
2. ``provider prefix stripped``: both names compared without their provider prefix
   (everything up to the last ``/``), case-insensitively: ``gemini/gemini-2.5-pro`` finds
   ``gemini-2.5-pro``.
3. ``alias``: the two names are in the same group of the alias table
   (``egibench/model_aliases.yaml``): ``gemini-2.5-pro`` finds ``Gemini 2.5 Pro``.

Within the winning rule, the latest result wins: greatest artifact timestamp, then the
latest stored. A published roster entry and a measured run are ranked alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Q, QuerySet, Subquery

from charters.models import Configuration
from egibench.aggregate import BUCKET_NAMES, BUCKETS
from egibench.model_names import AliasTable, default_aliases, name_key
from egibench.models import EgiResult
from egibench.plots import RosterRow, grouped_bars_svg, heatmap_svg, radar_rows, radar_svg
from enterpriseval.plotting import svg_data_uri

SHORTLIST_STATEMENT = "Benchmarks shortlist models; this evaluation decides the deployment."
EXACT = "exact"
PREFIX_STRIPPED = "provider prefix stripped"
ALIAS = "alias"
#: The JSON artifact is large; lists and the decision page read the columns only.
HEAVY_FIELDS = ("result", "canonical_json")
_LATEST = ("-run_at", "-created_at", "-pk")


@dataclass(frozen=True)
class EgiMatch:
    """The EGI result linked to a model reference, and the rule that linked it."""

    model_ref: str
    result: EgiResult
    rule: str


def egi_match_for_model(model_ref: str, *, aliases: AliasTable | None = None) -> EgiMatch | None:
    """Return the latest EGI result of ``model_ref`` by the module's linking rule (one query)."""
    ref = model_ref.strip() if isinstance(model_ref, str) else ""
    if not ref:
        return None
    key = name_key(ref)
    alias_keys = (aliases or default_aliases()).aliases_of(ref)
    candidates = list(
        EgiResult.objects.filter(
            Q(model_id=ref) | Q(model_key=key) | Q(model_key__in=sorted(alias_keys))
        )
        .defer(*HEAVY_FIELDS)
        .order_by(*_LATEST)
    )
    for rule, accepts in (
        (EXACT, lambda row: row.model_id == ref),
        (PREFIX_STRIPPED, lambda row: row.model_key == key),
        (ALIAS, lambda row: row.model_key in alias_keys),
    ):
        found = next((row for row in candidates if accepts(row)), None)
        if found is not None:
            return EgiMatch(model_ref=ref, result=found, rule=rule)
    return None


def latest_egi_for_model(model_ref: str) -> EgiResult | None:
    """Return the latest EGI result linked to ``model_ref`` (see the module's rule), or None."""
    match = egi_match_for_model(model_ref)
    return None if match is None else match.result


def release_reasons(result: EgiResult) -> list[str]:
    """Return why ``result`` is not release-ready (empty when every floor passes)."""
    reasons = []
    for bucket, row in sorted(result.floors.items()):
        if row["status"] == "below":
            reasons.append(f"{bucket} {row['score']:.2f} is below its floor {row['floor']:g}")
        elif row["status"] == "missing":
            reasons.append(f"{bucket} has no score, so its floor {row['floor']:g} is not shown")
    return reasons


def egi_evidence(match: EgiMatch) -> dict[str, Any]:
    """Return the shortlisting evidence of a linked result as JSON types."""
    result = match.result
    return {
        "statement": SHORTLIST_STATEMENT,
        "model_ref": match.model_ref,
        "match_rule": match.rule,
        "model": result.model_id,
        "display_name": result.display_name,
        "mode": result.mode,
        "timestamp": result.run_at.isoformat(),
        "egi": result.egi,
        "partial": result.partial,
        "buckets": result.bucket_scores,
        "floors": result.floors,
        "release_ready": result.release_ready,
        "release_reasons": release_reasons(result),
        "missing": result.missing,
        "source": result.source,
        "sha256": result.sha256,
        "routing_sha256": result.routing_sha256,
    }


def egi_evidence_for(configuration: Configuration) -> dict[str, Any] | None:
    """Return σ's model's latest EGI result as shortlisting evidence (JSON types), or None."""
    match = egi_match_for_model(configuration.model_ref)
    return None if match is None else egi_evidence(match)


def egi_evidence_context(configuration: Configuration) -> dict[str, Any]:
    """Return what ``egibench/egi_evidence.html`` shows for σ (the match may be None)."""
    match = egi_match_for_model(configuration.model_ref)
    return {
        "model_ref": configuration.model_ref,
        "match": match,
        "statement": SHORTLIST_STATEMENT,
        "reasons": [] if match is None else release_reasons(match.result),
    }


def egi_roster() -> list[EgiResult]:
    """Return the latest result of each model, by EGI, in one query.

    A result without an EGI but with a stated rank goes just before the first result the
    source ranks below it (seed 000 ranks GPT-5 nano 13th without stating its EGI);
    results with neither come last, by name.
    """
    latest = (
        EgiResult.objects.filter(model_id=OuterRef("model_id")).order_by(*_LATEST).values("pk")[:1]
    )
    rows = list(EgiResult.objects.filter(pk=Subquery(latest)).defer(*HEAVY_FIELDS))
    rows.sort(key=lambda row: (row.egi is None, -(row.egi or 0.0), row.name.casefold()))
    ordered = [row for row in rows if row.egi is not None]
    unscored = [row for row in rows if row.egi is None]
    for row in sorted((r for r in unscored if r.stated_rank), key=lambda r: r.stated_rank or 0):
        below = next(
            (
                i
                for i, other in enumerate(ordered)
                if (other.stated_rank or 0) > (row.stated_rank or 0)
            ),
            None,
        )
        ordered.insert(len(ordered) if below is None else below, row)
    return ordered + [row for row in unscored if not row.stated_rank]


def roster_row(result: EgiResult) -> RosterRow:
    """Return the plotted form of a result."""
    return RosterRow(
        label=result.name, egi=result.egi, partial=result.partial, scores=result.bucket_scores
    )


def egi_roster_plots(results: list[EgiResult]) -> list[dict[str, str]]:
    """Return the roster plots as ``{title, uri, alt}`` with SVG data URIs (none if empty)."""
    if not results:
        return []
    rows = [roster_row(result) for result in results]
    plots = [
        {
            "title": "M1–M6 heatmap",
            "uri": svg_data_uri(heatmap_svg(rows)),
            "alt": f"Heatmap of M1–M6 for {len(rows)} models; missing cells hatched grey.",
        },
        {
            "title": "Scores per bucket",
            "uri": svg_data_uri(grouped_bars_svg(rows)),
            "alt": f"Grouped bars: one cluster per bucket, one bar per model ({len(rows)}).",
        },
    ]
    top = radar_rows(rows)
    if top:
        plots.append(
            {
                "title": f"Profiles of the top {len(top)} by EGI (full EGI only)",
                "uri": svg_data_uri(radar_svg(top)),
                "alt": "Radar of M1–M6 for " + ", ".join(row.label for row in top) + ".",
            }
        )
    return plots


def egi_model_results(model_id: str) -> QuerySet[EgiResult]:
    """Return every stored result of ``model_id``, latest first, without the JSON."""
    return EgiResult.objects.filter(model_id=model_id).defer(*HEAVY_FIELDS).order_by(*_LATEST)


def egi_result_get(pk: int) -> EgiResult | None:
    """Return the stored result ``pk`` with its JSON, or None."""
    return EgiResult.objects.filter(pk=pk).first()


def egi_result_breakdown(result: EgiResult) -> dict[str, Any]:
    """Return the per-bucket contributors, raw values and metadata of a stored artifact."""
    data = result.result
    buckets = data.get("buckets", {})
    weights = data.get("egi_weights", {})
    rows = []
    for bucket in BUCKETS:
        entry = buckets.get(bucket, {})
        rows.append(
            {
                "bucket": bucket,
                "name": BUCKET_NAMES[bucket],
                "score": result.bucket_score(bucket),
                "floor": result.floors.get(bucket),
                "weight": weights.get(bucket),
                "contributors": list(entry.get("contributors", [])),
            }
        )
    routing = data.get("routing", {})
    return {
        "buckets": rows,
        "has_contributors": any(row["contributors"] for row in rows),
        "benchmarks": sorted(data.get("benchmarks", {}).items()),
        "missing": result.missing,
        "unrouted": data.get("unrouted", []),
        "failed": data.get("failed", []),
        "routing": routing,
        "weight_covered": data.get("egi_weight_covered"),
        "override": data.get("egi_weights_override"),
        "stated": sorted(data.get("stated", {}).items()),
        "run_mode": data.get("run_mode"),
        "reasons": release_reasons(result),
    }
