"""Plain-text rendering of a gate result for terminals and logs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gates.algorithm import GateResult, MetricResult

DIRECTION_SIGN = {"higher": ">", "lower": "<"}


def format_number(value: float | None, digits: int = 2) -> str:
    """Return ``value`` with ``digits`` decimals, or an em dash when there is none."""
    return "—" if value is None else f"{value:.{digits}f}"


def format_ci(ci: tuple[float, float] | None) -> str:
    return "—" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def metric_row(metric: MetricResult) -> list[str]:
    sign = DIRECTION_SIGN[metric.direction]
    return [
        metric.id,
        f"{sign}{metric.theta_out:g}",
        f"{sign}{metric.theta_in:g}",
        format_number(metric.estimate, 1),
        format_ci(metric.ci),
        format_number(metric.value_used, 1),
        format_number(metric.nu),
        f"{metric.weight:.3f}",
        metric.status,
    ]


def format_table(rows: list[list[str]], header: list[str]) -> str:
    """Return rows as an aligned text table with a rule under the header."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))

    return "\n".join(
        [line(header), "  ".join("─" * w for w in widths), *(line(r) for r in rows)]
    ).rstrip()


def format_gate_result(result: GateResult, title: str | None = None) -> str:
    """Return a readable report of one gate evaluation."""
    header = ["metric", "θout", "θin", "estimate", "CI", "m used", "ν", "weight", "status"]
    table = format_table([metric_row(m) for m in result.metrics], header)
    band = "—" if result.ei_band is None else f"[{result.ei_band[0]:.2f}, {result.ei_band[1]:.2f}]"
    lines = []
    if title:
        lines += [title, ""]
    lines += [
        f"mode: {result.mode}"
        + ("  (point estimates: illustration only)" if result.mode == "point" else ""),
        table,
        "",
        f"decision: {result.decision}    binding metric: {result.binding_metric or '—'}",
        f"EI: {format_number(result.ei)}    EI_G: {format_number(result.ei_g)}    "
        f"weight-sensitivity band: {band}",
    ]
    if result.reasons:
        lines += ["reasons:", *(f"  - {reason}" for reason in result.reasons)]
    if result.recommendations:
        lines += ["recommendations:", *(f"  - {r.message}" for r in result.recommendations)]
    return "\n".join(line.rstrip() for line in lines)


def format_structured(record: Mapping[str, Any]) -> str:
    """Return a decision record's success basis and classification tables (SPEC §4.1), or "".

    The per-class table gives support, given count, precision, recall and F1 in percent; the
    confusion matrix has gold labels as rows and the labels given as columns, unknown last.
    """
    lines: list[str] = []
    success = record.get("success")
    if success:
        rule = success.get("rule") or "not stated"
        lines.append(f"success rule: {rule} — {success['method']}")
        if success.get("reason"):
            lines.append(f"  no pass^k: {success['reason']}")
    classification = record.get("classification")
    if classification:
        width = max(len(label) for label in classification["columns"]) + 2
        lines.append(
            f"structured judgement: {classification['n']} tasks at their first repeat, "
            f"{classification['unknown']} without a label"
        )
        lines.append("  " + "gold label".ljust(width) + "support  given  precision  recall  F1")
        for row in classification["classes"]:
            lines.append(
                "  "
                + str(row["label"]).ljust(width)
                + f"{row['support']:>7}  {row['predicted']:>5}  "
                + f"{format_number(row['precision']):>9}  {format_number(row['recall']):>6}  "
                + format_number(row["f1"])
            )
        lines.append("  confusion (rows gold, columns given):")
        lines.append(
            "  " + "".ljust(width) + "".join(c.ljust(width) for c in classification["columns"])
        )
        for label, counts in zip(
            classification["labels"], classification["confusion"], strict=True
        ):
            lines.append("  " + label.ljust(width) + "".join(str(n).ljust(width) for n in counts))
    return "\n".join(line.rstrip() for line in lines)
