"""Pages for configurations σ: versions, upload with every schema error, one version, parity."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods, require_POST

from charters.configurations import (
    ABSENT,
    COMPONENTS,
    ConfigurationInvalid,
    LeafDifference,
    configuration_load,
)
from charters.models import Configuration, UseCase
from charters.selectors.configurations import (
    can_upload,
    configuration_access,
    configuration_get,
    configuration_latest,
    configuration_list,
    configuration_parity,
)
from charters.services.configurations import NAME_PATTERN, configuration_upload
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, UploadTooLarge, upload_limit, upload_size_check


class ConfigurationUploadForm(forms.Form):
    name = forms.RegexField(
        regex=NAME_PATTERN,
        max_length=80,
        help_text="Version series, e.g. gemini-2-5-pro. Uploading to an existing name adds "
        "its next version.",
        error_messages={"invalid": "Use letters, digits, hyphens or underscores."},
    )
    content = forms.CharField(
        required=False,
        strip=False,
        label="σ document (YAML or JSON)",
        widget=forms.Textarea(attrs={"rows": 24, "class": "mono", "spellcheck": "false"}),
    )
    file = forms.FileField(required=False, label="…or a file (.yaml, .yml, .json)")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        upload = cleaned.get("file")
        if upload is not None:
            try:
                upload_size_check(kind=UploadKind.SIGMA, filename=upload.name, size=upload.size)
            except UploadTooLarge as error:
                raise forms.ValidationError(error.message) from None
        if upload is None and not (cleaned.get("content") or "").strip():
            raise forms.ValidationError("Paste the σ document or choose a file.")
        return cleaned

    def document(self) -> tuple[str | bytes, str | None]:
        """Return the σ text and its file name (``None`` for pasted text)."""
        upload = self.cleaned_data.get("file")
        if upload is not None:
            return upload.read(), upload.name
        return self.cleaned_data["content"], None


def _problems(error: ServiceError) -> list[dict[str, Any]]:
    if error.details:
        return error.details
    return [{"field": error.field, "line": None, "message": error.message}]


@login_required
def configuration_list_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case, roles = configuration_access(request.user, key)
    configurations = list(configuration_list(use_case=use_case))
    return render(
        request,
        "charters/configuration_list.html",
        {
            "use_case": use_case,
            "configurations": configurations,
            "can_upload": can_upload(roles),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def configuration_upload_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case, _ = configuration_access(request.user, key, upload=True)
    form = ConfigurationUploadForm(request.POST or None, request.FILES or None)
    problems: list[dict[str, Any]] = []
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            content, filename = form.document()
            try:
                configuration = configuration_upload(
                    actor=request.user,
                    use_case=use_case,
                    name=form.cleaned_data["name"],
                    content=content,
                    filename=filename,
                )
            except ServiceError as error:
                problems = _problems(error)
                status = error.status_code
            else:
                messages.success(
                    request,
                    f"Frozen σ {configuration.name} version {configuration.version} "
                    f"(sha256 {configuration.sha256}).",
                )
                return redirect(
                    "configuration-detail", use_case.key, configuration.name, configuration.version
                )
    return render(
        request,
        "charters/configuration_upload.html",
        {"use_case": use_case, "form": form, "problems": problems, "checked": bool(problems)},
        status=status,
    )


@login_required
@require_POST
def configuration_validate_fragment(request: HttpRequest, key: str) -> HttpResponse:
    """Return the live check of the upload form: every problem, or what would be frozen."""
    use_case, _ = configuration_access(request.user, key, upload=True)
    form = ConfigurationUploadForm(request.POST, request.FILES or None)
    form.is_valid()
    problems = [
        {"field": "name", "line": None, "message": message}
        for message in form.errors.get("name", [])
    ]
    context: dict[str, Any] = {"use_case": use_case, "checked": True}
    content, filename = _fragment_document(form)
    if content is None:
        problems.append(
            {"field": "", "line": None, "message": "Paste the σ document or choose a file."}
        )
    else:
        try:
            parsed = configuration_load(content, filename=filename)
        except ConfigurationInvalid as error:
            problems += [problem.as_dict() for problem in error.problems]
        else:
            context["parsed"] = parsed
            name = form.cleaned_data.get("name")
            if name:
                latest = configuration_latest(use_case=use_case, name=name)
                context.update(
                    name=name,
                    latest=latest,
                    identical=latest is not None and latest.sha256 == parsed.sha256,
                )
    context["problems"] = problems
    return render(request, "charters/configuration_problems.html", context)


def _fragment_document(form: ConfigurationUploadForm) -> tuple[str | bytes | None, str | None]:
    upload = form.files.get("file")
    if upload is not None and upload.size <= upload_limit(UploadKind.SIGMA):
        return upload.read(), upload.name
    content = form.data.get("content", "")
    return (content, None) if content.strip() else (None, None)


def _version_or_404(use_case: UseCase, name: str, version: int) -> Configuration:
    configuration = configuration_get(use_case=use_case, name=name, version=version)
    if configuration is None:
        raise Http404(f"{use_case.key} has no σ {name} version {version}.")
    return configuration


@login_required
def configuration_detail_page(
    request: HttpRequest, key: str, name: str, version: int
) -> HttpResponse:
    use_case, _ = configuration_access(request.user, key)
    configuration = _version_or_404(use_case, name, version)
    components = [
        {
            "component": component,
            "present": component.key in configuration.document,
            "json": json.dumps(
                configuration.document.get(component.key), indent=2, ensure_ascii=False
            ),
        }
        for component in COMPONENTS
    ]
    return render(
        request,
        "charters/configuration_detail.html",
        {
            "use_case": use_case,
            "configuration": configuration,
            "components": components,
            "others": configuration_list(use_case=use_case).exclude(pk=configuration.pk),
        },
    )


def _display(value: Any) -> str:
    if value is ABSENT:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def _rows(differences: tuple[LeafDifference, ...]) -> list[dict[str, Any]]:
    return [
        {
            "path": difference.path,
            "a": _display(difference.a),
            "b": _display(difference.b),
            "a_present": difference.a_present,
            "b_present": difference.b_present,
        }
        for difference in differences
    ]


@login_required
def configuration_parity_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case, _ = configuration_access(request.user, key)
    versions = list(configuration_list(use_case=use_case))
    by_reference = {f"{c.name}:{c.version}": c for c in versions}
    chosen = {side: request.GET.get(side, "") for side in ("a", "b")}
    if not chosen["a"] and not chosen["b"] and len(versions) > 1:
        defaults = {"a": f"{versions[0].name}:{versions[0].version}"}
        defaults["b"] = f"{versions[1].name}:{versions[1].version}"
    else:
        defaults = chosen
    context: dict[str, Any] = {
        "use_case": use_case,
        "options": [
            {"value": reference, "label": f"{c.name} v{c.version} — {c.model_ref}"}
            for reference, c in by_reference.items()
        ],
        "chosen": defaults,
        "errors": [],
    }
    if chosen["a"] or chosen["b"]:
        for side, reference in chosen.items():
            if reference not in by_reference:
                context["errors"].append(
                    f"{side.upper()}: choose one of the σ versions of {use_case.key}, as "
                    f"name:version (got {reference!r})."
                )
    if chosen["a"] and chosen["b"] and not context["errors"]:
        a, b = by_reference[chosen["a"]], by_reference[chosen["b"]]
        report = configuration_parity(a=a, b=b)
        context.update(
            a=a,
            b=b,
            report=report,
            components=[
                {
                    "component": parity.component,
                    "differs": parity.differs,
                    "rows": _rows(parity.differences),
                }
                for parity in report.components
            ],
            metadata_rows=_rows(report.metadata_differences),
        )
    status = 400 if context["errors"] else 200
    return render(request, "charters/configuration_parity.html", context, status=status)


urlpatterns = [
    path(
        "use-cases/<str:key>/configurations/",
        configuration_list_page,
        name="configuration-list",
    ),
    path(
        "use-cases/<str:key>/configurations/upload/",
        configuration_upload_page,
        name="configuration-upload",
    ),
    path(
        "use-cases/<str:key>/configurations/validate/",
        configuration_validate_fragment,
        name="configuration-validate",
    ),
    path(
        "use-cases/<str:key>/configurations/parity/",
        configuration_parity_page,
        name="configuration-parity",
    ),
    path(
        "use-cases/<str:key>/configurations/<slug:name>/<int:version>/",
        configuration_detail_page,
        name="configuration-detail",
    ),
]
