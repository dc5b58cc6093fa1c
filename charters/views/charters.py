"""Charter pages: the charter, its editor with live validation, signing, revision, unblinding."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from charters.catalogue import OPTIONAL_RUBRIC_FIELDS, catalogue
from charters.charter_document import (
    CharterDocumentError,
    document_from_form,
    document_from_text,
    document_line_finder,
    issues_with_lines,
)
from charters.models import Charter, Role, UseCase
from charters.models.charters import SIGNING_ROLES
from charters.permissions import use_case_for, use_case_for_unblinded, user_roles
from charters.selectors.charters import (
    CharterPage,
    charter_current,
    charter_document_build,
    charter_page,
    use_case_first_unblinding,
)
from charters.selectors.task_sets import task_set_supply
from charters.services.charters import (
    charter_create,
    charter_deviation_record,
    charter_revise,
    charter_sign,
    charter_update,
    use_case_unblind,
)
from charters.validation import Issue, ValidationReport, charter_validate
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, upload_limit, upload_too_large

SIGNERS = [role.value for role in SIGNING_ROLES]
OWNER = [Role.CHARTER_OWNER]
UNBLINDERS = [Role.CHARTER_OWNER, Role.REVIEWER]


@dataclass(frozen=True)
class EditorRow:
    """One catalogue metric in the editor: its catalogue facts and the form's values."""

    id: str
    name: str
    family: str
    direction: str
    unit: str
    grading: str
    level: str
    scale: str
    required: bool
    treatment: str
    theta_out: str
    theta_in: str
    weight: str
    harm_statement: str
    planned_n: str
    reason: str
    agreement_rule: str = ""
    agreement_threshold: str = ""
    human_graded: bool = False
    k: str = ""
    issues: tuple[Issue, ...] = ()


@dataclass(frozen=True)
class MetricRow:
    """One charter metric as the charter page shows it."""

    id: str
    name: str
    treatment: str
    direction: str
    theta_out: str
    theta_in: str
    weight: str
    normalised_weight: str
    harm_statement: str
    planned_n: str
    reason: str


# --------------------------------------------------------------------------- pages


@login_required
def charter_detail(request: HttpRequest, key: str, version: int | None = None) -> HttpResponse:
    use_case = use_case_for_unblinded(request.user, key, what="the charter")
    page = charter_page(use_case=use_case, version=version, today=timezone.localdate())
    if page is None and version is not None:
        raise Http404(f"{use_case.key} has no charter v{version}.")
    roles = user_roles(request.user, use_case)
    context: dict[str, Any] = {"use_case": use_case, "page": page, "roles": roles}
    if page is not None:
        context |= _page_context(page, roles)
    return render(request, "charters/charter_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def charter_edit(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=OWNER)
    latest = charter_current(use_case=use_case)
    if latest is not None and latest.is_frozen:
        messages.info(
            request,
            f"Charter v{latest.version} is signed and cannot change: revise it to start "
            f"v{latest.version + 1}.",
        )
        return redirect("charter-revise", key=use_case.key)
    if request.method == "POST":
        document, form_issues = document_from_form(request.POST, request.POST.getlist("metric"))
        if not form_issues:
            try:
                charter = _save(request, use_case, latest, document)
            except ServiceError as error:
                form_issues = _service_issues(error)
            else:
                return redirect("charter-version", key=use_case.key, version=charter.version)
        return _editor(request, use_case, latest, document, form_issues, posted=request.POST)
    document = charter_document_build(charter=latest) if latest else _starter()
    return _editor(request, use_case, latest, document, [])


@login_required
@require_POST
def charter_validate_panel(request: HttpRequest, key: str) -> HttpResponse:
    """Return the validation panel for the editor's current form (live validation)."""
    use_case = use_case_for(request.user, key, roles=OWNER)
    document, form_issues = document_from_form(request.POST, request.POST.getlist("metric"))
    report = _report(use_case, document, form_issues)
    return render(
        request,
        "charters/charter_validation_panel.html",
        {"report": report, "weights": _weights(report), "row_issues": report.by_metric()},
    )


@login_required
@require_POST
def charter_upload(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=OWNER)
    latest = charter_current(use_case=use_case)
    if latest is not None and latest.is_frozen:
        messages.error(request, f"Charter v{latest.version} is signed: revise it first.")
        return redirect("charter-revise", key=use_case.key)
    upload = request.FILES.get("file")
    issues: list[Issue] = []
    status = 400
    if upload is None:
        issues = [Issue("error", "file", "choose a YAML or JSON charter file")]
    elif upload.size is not None and upload.size > upload_limit(UploadKind.CHARTER):
        too_large = upload_too_large(
            kind=UploadKind.CHARTER, filename=upload.name, size=upload.size
        )
        issues = [Issue("error", "file", too_large.message)]
        status = too_large.status_code
    else:
        name = upload.name or "charter"
        fmt = "json" if name.lower().endswith(".json") else "yaml"
        try:
            text = upload.read().decode("utf-8")
            document = document_from_text(
                text, fmt=fmt, source=name, max_bytes=upload_limit(UploadKind.CHARTER)
            )
        except UnicodeDecodeError:
            issues = [Issue("error", "file", f"{name} is not UTF-8 text")]
        except CharterDocumentError as error:
            issues = [_in_file(name, issue) for issue in error.issues]
        else:
            try:
                charter = _save(request, use_case, latest, document)
            except ServiceError as error:
                issues = [_in_file(name, issue) for issue in _service_issues(error)]
            else:
                report = _report(use_case, document, [])
                located = issues_with_lines(report.errors, document_line_finder(text))
                for issue in located[:10]:
                    messages.warning(request, _in_file(name, issue).message)
                return redirect("charter-version", key=use_case.key, version=charter.version)
    document = charter_document_build(charter=latest) if latest else _starter()
    return _editor(request, use_case, latest, document, [], upload_issues=issues, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def charter_sign_page(request: HttpRequest, key: str, version: int) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=SIGNERS)
    page = charter_page(use_case=use_case, version=version, today=timezone.localdate())
    if page is None:
        raise Http404(f"{use_case.key} has no charter v{version}.")
    if request.method == "POST":
        role = request.POST.get("role", "")
        try:
            charter_sign(actor=request.user, charter=page.charter, role=role)
        except ServiceError as error:
            messages.error(request, error.message)
        else:
            page.charter.refresh_from_db(fields=["frozen_at", "sha256"])
            if page.charter.is_frozen:
                messages.success(
                    request,
                    f"Charter v{version} is signed by all three and frozen "
                    f"(SHA-256 {page.charter.sha256}).",
                )
            else:
                messages.success(request, f"Signed charter v{version} as {Role(role).label}.")
        return redirect("charter-sign", key=use_case.key, version=version)
    roles = user_roles(request.user, use_case)
    context = {"use_case": use_case, "page": page, "roles": roles} | _page_context(page, roles)
    return render(request, "charters/charter_sign.html", context)


@login_required
@require_POST
def charter_deviation(request: HttpRequest, key: str, version: int) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=OWNER)
    charter = _charter(use_case, version)
    try:
        charter_deviation_record(
            actor=request.user, charter=charter, reason=request.POST.get("reason", "")
        )
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Deviation of charter v{version} recorded.")
    return redirect("charter-sign", key=use_case.key, version=version)


@login_required
@require_http_methods(["GET", "POST"])
def charter_revise_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=OWNER)
    latest = charter_current(use_case=use_case)
    if latest is None:
        return redirect("charter-edit", key=use_case.key)
    if not latest.is_frozen:
        messages.info(request, f"Charter v{latest.version} is a draft: edit it.")
        return redirect("charter-edit", key=use_case.key)
    first = use_case_first_unblinding(use_case=use_case)
    error = None
    if request.method == "POST":
        try:
            revision = charter_revise(
                actor=request.user, charter=latest, reason=request.POST.get("reason", "")
            )
        except ServiceError as failure:
            error = failure.message
        else:
            kind = "deviation recorded" if first else "revision started"
            messages.success(request, f"Charter v{revision.version} is a draft ({kind}).")
            return redirect("charter-edit", key=use_case.key)
    page = charter_page(use_case=use_case, today=timezone.localdate())
    return render(
        request,
        "charters/charter_revise.html",
        {
            "use_case": use_case,
            "latest": latest,
            "first_unblinding": first,
            "error": error,
            "reason": request.POST.get("reason", ""),
            "page": page,
        },
        status=400 if error else 200,
    )


@login_required
@require_POST
def charter_unblind(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=UNBLINDERS)
    try:
        use_case_unblind(
            actor=request.user, use_case=use_case, reason=request.POST.get("reason", "")
        )
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(
            request, "Unblinding recorded: from now on every charter change is a deviation."
        )
    return redirect("charter-detail", key=use_case.key)


# --------------------------------------------------------------------------- helpers


def _save(
    request: HttpRequest, use_case: UseCase, latest: Charter | None, document: dict[str, Any]
) -> Charter:
    if latest is None:
        charter = charter_create(actor=request.user, use_case=use_case, document=document)
        messages.success(request, f"Charter v{charter.version} created as a draft.")
    else:
        charter = charter_update(actor=request.user, charter=latest, document=document)
        messages.success(request, f"Draft charter v{charter.version} saved.")
    return charter


def _editor(
    request: HttpRequest,
    use_case: UseCase,
    latest: Charter | None,
    document: dict[str, Any],
    form_issues: list[Issue],
    *,
    posted: Mapping[str, Any] | None = None,
    upload_issues: list[Issue] | None = None,
    status: int = 200,
) -> HttpResponse:
    report = _report(use_case, document, form_issues)
    rows = _editor_rows(use_case, document, posted, report.by_metric())
    return render(
        request,
        "charters/charter_edit.html",
        {
            "use_case": use_case,
            "charter": latest,
            "rows": rows,
            "scalars": _scalars(document, posted),
            "report": report,
            "weights": _weights(report),
            "upload_issues": upload_issues or [],
            "unknown_metrics": [
                m["id"] for m in document.get("metrics", []) if m["id"] not in catalogue()
            ],
            "form_issues": form_issues,
        },
        status=400 if form_issues else status,
    )


def _report(use_case: UseCase, document: dict[str, Any], extra: list[Issue]) -> ValidationReport:
    report = charter_validate(
        document,
        autonomy=use_case.autonomy,
        consequence=use_case.consequence,
        today=timezone.localdate(),
        task_sets=task_set_supply(use_case=use_case),
    )
    report.issues = list(extra) + report.issues
    return report


def _page_context(page: CharterPage, roles: set[str]) -> dict[str, Any]:
    charter = page.charter
    latest = page.latest
    has_frozen = any(c.is_frozen for c in page.versions)
    deviation_missing = (
        not charter.is_frozen
        and charter.previous_id is not None
        and page.deviation is None
        and page.first_unblinding is not None
    )
    return {
        "metric_rows": _metric_rows(page.document, page.validation),
        "weights": _weights(page.validation),
        "can_edit": "charter_owner" in roles and not latest.is_frozen,
        "can_revise": "charter_owner" in roles and latest.is_frozen,
        "can_sign": bool(roles & set(SIGNERS)),
        "can_unblind": bool(roles & {r.value for r in UNBLINDERS}) and has_frozen,
        "sign_roles": [row for row in page.signing if row.role in roles and row.status != "signed"],
        "deviation_missing": deviation_missing,
        "value_inputs_yaml": _yaml(page.document.get("value_inputs")),
        "alternative_yaml": _yaml(page.document.get("alternative_weights")),
    }


def _metric_rows(document: dict[str, Any], report: ValidationReport) -> list[MetricRow]:
    known = catalogue()
    rows = []
    for metric in document.get("metrics", []):
        entry = known.get(metric["id"])
        weight = report.normalised_weights.get(metric["id"])
        rows.append(
            MetricRow(
                id=metric["id"],
                name=entry.name if entry else metric["id"],
                treatment=metric["treatment"],
                direction=metric.get("direction") or "",
                theta_out=_show(metric.get("theta_out")),
                theta_in=_show(metric.get("theta_in")),
                weight=_show(metric.get("weight")),
                normalised_weight="" if weight is None else f"{weight:.4f}",
                harm_statement=metric.get("harm_statement") or "",
                planned_n=_show(metric.get("planned_n")),
                reason=metric.get("reason") or "",
            )
        )
    return rows


def _editor_rows(
    use_case: UseCase,
    document: dict[str, Any],
    posted: Mapping[str, Any] | None,
    issues: Mapping[str, list[Issue]],
) -> list[EditorRow]:
    known = catalogue()
    in_charter = {m["id"]: m for m in document.get("metrics", [])}
    if posted is not None:
        order = [m for m in posted.getlist("metric") if m in known]  # type: ignore[attr-defined]
    else:
        order = [m for m in in_charter if m in known]
    order += [m for m in known if m not in order]
    rows = []
    for metric_id in order:
        entry = known[metric_id]
        metric = in_charter.get(metric_id, {})

        def value(name: str, metric: dict[str, Any] = metric, metric_id: str = metric_id) -> str:
            if posted is not None:
                return str(posted.get(f"{name}-{metric_id}", ""))
            return _show(metric.get(name))

        rows.append(
            EditorRow(
                id=metric_id,
                name=entry.name,
                family=entry.family,
                direction=entry.direction,
                unit=entry.unit,
                grading=", ".join(entry.grading),
                level=entry.level_label,
                scale=entry.scale,
                required=entry.level <= use_case.autonomy,
                treatment=value("treatment"),
                theta_out=value("theta_out"),
                theta_in=value("theta_in"),
                weight=value("weight"),
                harm_statement=value("harm_statement"),
                planned_n=value("planned_n"),
                reason=value("reason"),
                agreement_rule=str(posted.get(f"agreement_rule-{metric_id}", ""))
                if posted is not None
                else str((metric.get("agreement") or {}).get("rule", "")),
                agreement_threshold=str(posted.get(f"agreement_threshold-{metric_id}", ""))
                if posted is not None
                else _show(
                    (metric.get("agreement") or {}).get("threshold")
                    or (metric.get("agreement") or {}).get("fraction")
                ),
                human_graded=bool(entry.criteria),
                k=value("k"),
                issues=tuple(issues.get(metric_id, ())),
            )
        )
    return rows


def _scalars(document: dict[str, Any], posted: Mapping[str, Any] | None) -> dict[str, str]:
    names = (
        "nu_max",
        "confidence",
        "kappa_target",
        "repeats_k",
        "success_rule",
        "baseline",
        "measurement_mode",
        "next_review_date",
        "reevaluation_triggers",
        "alternative_weights",
        "value_inputs",
    )
    asked_names = [f"rubric_field_{name}" for name in OPTIONAL_RUBRIC_FIELDS]
    if posted is not None:
        return {name: str(posted.get(name, "")) for name in (*names, *asked_names)}
    return {
        "nu_max": _show(document.get("nu_max")),
        "confidence": _show(document.get("confidence")),
        "kappa_target": _show(document.get("kappa_target")),
        "repeats_k": _show(document.get("repeats_k")),
        "success_rule": document.get("success_rule") or "",
        "baseline": document.get("baseline") or "",
        "measurement_mode": document.get("measurement_mode") or "estimated",
        "next_review_date": document.get("next_review_date") or "",
        "reevaluation_triggers": "\n".join(document.get("reevaluation_triggers") or []),
        "alternative_weights": _yaml(document.get("alternative_weights")),
        "value_inputs": _yaml(document.get("value_inputs")),
        **{
            f"rubric_field_{name}": "on" if name in (document.get("rubric_fields") or []) else ""
            for name in OPTIONAL_RUBRIC_FIELDS
        },
    }


def _weights(report: ValidationReport) -> list[tuple[str, str]]:
    return [(metric_id, f"{weight:.4f}") for metric_id, weight in report.normalised_weights.items()]


def _starter() -> dict[str, Any]:
    return {
        "metrics": [],
        "nu_max": 3.0,
        "confidence": 0.95,
        "kappa_target": 0.6,
        "repeats_k": 1,
        "measurement_mode": "estimated",
    }


def _show(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _yaml(value: Any) -> str:
    if not value:
        return ""
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=None)


def _service_issues(error: ServiceError) -> list[Issue]:
    if error.details:
        return [
            Issue("error", d.get("field") or "", d.get("message") or "", d.get("line"))
            for d in error.details
        ]
    return [Issue("error", error.field or "", error.message)]


def _in_file(name: str, issue: Issue) -> Issue:
    where = ", ".join(
        p for p in (name, f"line {issue.line}" if issue.line else "", issue.field) if p
    )
    return Issue(issue.level, issue.field, f"{where}: {issue.message}", issue.line)


def _charter(use_case: UseCase, version: int) -> Charter:
    charter = Charter.objects.filter(use_case=use_case, version=version).first()
    if charter is None:
        raise Http404(f"{use_case.key} has no charter v{version}.")
    return charter


urlpatterns = [
    path("use-cases/<str:key>/charter/", charter_detail, name="charter-detail"),
    path("use-cases/<str:key>/charter/v<int:version>/", charter_detail, name="charter-version"),
    path("use-cases/<str:key>/charter/edit/", charter_edit, name="charter-edit"),
    path(
        "use-cases/<str:key>/charter/edit/validate/",
        charter_validate_panel,
        name="charter-validate",
    ),
    path("use-cases/<str:key>/charter/upload/", charter_upload, name="charter-upload"),
    path(
        "use-cases/<str:key>/charter/v<int:version>/sign/",
        charter_sign_page,
        name="charter-sign",
    ),
    path(
        "use-cases/<str:key>/charter/v<int:version>/deviation/",
        charter_deviation,
        name="charter-deviation",
    ),
    path("use-cases/<str:key>/charter/revise/", charter_revise_page, name="charter-revise"),
    path("use-cases/<str:key>/charter/unblind/", charter_unblind, name="charter-unblind"),
]
