"""The agreement dashboard and the judge calibration view of a grading session."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path

from enterpriseval.errors import ServiceError
from grading.selectors.agreement import (
    AgreementReport,
    agreement_report,
    agreement_session,
    calibration_report,
)

# Geometry of the inline SVG chart (user units): one horizontal bar per rubric field.
CHART_LABEL_WIDTH = 110
CHART_PLOT_WIDTH = 460
CHART_ROW_HEIGHT = 26
CHART_TOP = 10
CHART_AXIS_HEIGHT = 28


@dataclass(frozen=True)
class ChartBar:
    field: str
    y: float
    text_y: float
    mid_y: float
    bar_x: float | None
    bar_width: float
    whisker: tuple[float, float] | None
    passes: bool
    caption: str


@dataclass(frozen=True)
class ChartTick:
    x: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: int
    plot_top: int
    plot_bottom: int
    axis_y: int
    target_x: float
    target_label: str
    bars: list[ChartBar]
    ticks: list[ChartTick]


def agreement_chart(report: AgreementReport) -> Chart:
    """Return the bars of κ/α with their bootstrap whiskers and the target line."""
    lows = [
        min(row.agreement.point, row.agreement.lo if row.agreement.has_interval else 0.0)
        for row in report.fields
        if row.agreement.defined
    ]
    axis_min = max(-1.0, min([0.0, *[math.floor(v * 5) / 5 for v in lows]]))
    span = 1.0 - axis_min

    def x(value: float) -> float:
        return round(CHART_LABEL_WIDTH + CHART_PLOT_WIDTH * (value - axis_min) / span, 1)

    bars = []
    for i, row in enumerate(report.fields):
        agreement = row.agreement
        top = CHART_TOP + i * CHART_ROW_HEIGHT
        zero, point = x(0.0), x(agreement.point) if agreement.defined else None
        bars.append(
            ChartBar(
                field=agreement.field,
                y=top + 5,
                text_y=top + 17,
                mid_y=top + 13,
                bar_x=None if point is None else min(zero, point),
                bar_width=0.0 if point is None else round(abs(point - zero), 1),
                whisker=(x(agreement.lo), x(agreement.hi)) if agreement.has_interval else None,
                passes=row.passes,
                caption=(
                    f"{agreement.field}: {agreement.symbol} = {agreement.point:.2f}"
                    if agreement.defined
                    else f"{agreement.field}: undefined"
                ),
            )
        )
    bottom = CHART_TOP + len(bars) * CHART_ROW_HEIGHT
    steps = round(span / 0.2)
    ticks = [
        ChartTick(x(axis_min + 0.2 * k), f"{axis_min + 0.2 * k:.1f}") for k in range(steps + 1)
    ]
    return Chart(
        width=CHART_LABEL_WIDTH + CHART_PLOT_WIDTH + 20,
        height=bottom + CHART_AXIS_HEIGHT,
        plot_left=CHART_LABEL_WIDTH,
        plot_top=CHART_TOP,
        plot_bottom=bottom,
        axis_y=bottom + 16,
        target_x=x(report.kappa_target),
        target_label=f"target {report.kappa_target:.2f}",
        bars=bars,
        ticks=ticks,
    )


@login_required
def agreement_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    session = agreement_session(request.user, key, public_id)
    report = agreement_report(session=session)
    return render(
        request,
        "grading/agreement.html",
        {
            "use_case": session.use_case,
            "session": session,
            "report": report,
            "chart": agreement_chart(report),
        },
    )


@login_required
def calibration_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    session = agreement_session(request.user, key, public_id)
    context = {"use_case": session.use_case, "session": session}
    try:
        report = calibration_report(session=session, judge_ref=request.GET.get("judge"))
    except ServiceError as error:
        context.update(failure=error.message, report=calibration_report(session=session))
        return render(request, "grading/calibration.html", context, status=400)
    context["report"] = report
    return render(request, "grading/calibration.html", context)


urlpatterns: list[URLPattern] = [
    path(
        "use-cases/<str:key>/grading/<str:public_id>/agreement/",
        agreement_view,
        name="grading-agreement",
    ),
    path(
        "use-cases/<str:key>/grading/<str:public_id>/calibration/",
        calibration_view,
        name="grading-calibration",
    ),
]
