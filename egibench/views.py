"""EGI pages: the roster of models, one model's results, one stored result.

EGI results are model-level data (no use-case data), but the roster names the models behind
configurations σ, so graders do not read them: :func:`charters.permissions.can_read_benchmarks`
states who does (docs/operations.md, "Access").
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from charters.permissions import require_benchmark_reader
from egibench.models import EgiResult
from egibench.selectors import (
    SHORTLIST_STATEMENT,
    egi_model_results,
    egi_result_breakdown,
    egi_result_get,
    egi_roster,
    egi_roster_plots,
)


@login_required
def roster_page(request: HttpRequest) -> HttpResponse:
    require_benchmark_reader(request.user)
    results = egi_roster()
    return render(
        request,
        "egibench/roster.html",
        {"results": results, "plots": egi_roster_plots(results), "statement": SHORTLIST_STATEMENT},
    )


@login_required
def model_page(request: HttpRequest, model_id: str) -> HttpResponse:
    require_benchmark_reader(request.user)
    history = list(egi_model_results(model_id))
    if not history:
        raise Http404(f"No EGI result for model {model_id}.")
    result = egi_result_get(history[0].pk)
    return _result_page(request, result, history)


@login_required
def result_page(request: HttpRequest, pk: int) -> HttpResponse:
    require_benchmark_reader(request.user)
    result = egi_result_get(pk)
    if result is None:
        raise Http404(f"No EGI result {pk}.")
    return _result_page(request, result, list(egi_model_results(result.model_id)))


def _result_page(
    request: HttpRequest, result: EgiResult | None, history: list[EgiResult]
) -> HttpResponse:
    if result is None:
        raise Http404("No such EGI result.")
    return render(
        request,
        "egibench/result_detail.html",
        {
            "result": result,
            "latest": history[0].pk == result.pk,
            "history": history,
            "breakdown": egi_result_breakdown(result),
            "statement": SHORTLIST_STATEMENT,
        },
    )
