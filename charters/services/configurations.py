"""Writes for configurations σ: freezing a new immutable version (SPEC §2)."""

from __future__ import annotations

import re

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit.services import audit_record
from charters.configurations import ConfigurationInvalid, ParsedConfiguration, configuration_load
from charters.models import Configuration, Stage, UseCase
from charters.selectors.configurations import configuration_latest
from charters.services.use_cases import use_case_advance
from charters.signals import configuration_registered
from enterpriseval.errors import ConflictError, ServiceError
from enterpriseval.limits import UploadKind, upload_bytes

NAME_PATTERN = re.compile(r"^[-a-zA-Z0-9_]{1,80}$")


def configuration_invalid_error(error: ConfigurationInvalid) -> ServiceError:
    """Return the service error that reports every problem of an invalid σ."""
    problems = error.problems
    count = len(problems)
    first = problems[0].located(error.filename)
    message = f"σ {'has 1 problem' if count == 1 else f'has {count} problems'}: {first}"
    if count > 1:
        message += f" (and {count - 1} more, listed in details)"
    return ServiceError(
        message,
        field=problems[0].path or "content",
        details=[problem.as_dict() for problem in problems],
    )


def configuration_upload(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    name: str,
    content: str | bytes,
    filename: str | None = None,
    content_type: str | None = None,
) -> Configuration:
    """Validate a σ document and freeze it as the next version of ``name``.

    Versions are immutable: this always creates version n + 1 (1 for a new name). A document
    whose canonical hash equals the latest version's is refused, since freezing it again
    would record a change that did not happen. Moves the use case to stage 2 (configure).

    The document is size-checked and parsed before the transaction opens, so a slow parse
    holds no database lock (on SQLite, the write lock of every other writer).
    """
    if not NAME_PATTERN.match(name or ""):
        raise ServiceError(
            f"name {name!r} must be 1–80 letters, digits, hyphens or underscores "
            "(e.g. gemini-2-5-pro)",
            field="name",
        )
    upload_bytes(kind=UploadKind.SIGMA, filename=filename or "the pasted σ", content=content)
    try:
        parsed = configuration_load(content, filename=filename, content_type=content_type)
    except ConfigurationInvalid as error:
        raise configuration_invalid_error(error) from None
    return _configuration_freeze(actor=actor, use_case=use_case, name=name, parsed=parsed)


@transaction.atomic
def _configuration_freeze(
    *, actor: AbstractBaseUser, use_case: UseCase, name: str, parsed: ParsedConfiguration
) -> Configuration:
    # Lock the use case so two uploads of one name cannot both become version n + 1.
    UseCase.objects.select_for_update().filter(pk=use_case.pk).first()
    latest = configuration_latest(use_case=use_case, name=name)
    if latest is not None and latest.sha256 == parsed.sha256:
        raise ConflictError(
            f"σ {name} is identical to version {latest.version} (sha256 "
            f"{parsed.sha256[:12]}…); nothing new to freeze",
            field="content",
        )
    next_version = latest.version + 1 if latest is not None else 1
    configuration = Configuration(
        use_case=use_case,
        name=name,
        version=next_version,
        document=parsed.document,
        canonical_json=parsed.canonical_json,
        sha256=parsed.sha256,
        model_ref=parsed.model_ref,
        source_format=parsed.source_format,
        created_by=actor,
    )
    configuration.save()
    audit_record(
        actor=actor,
        action="configuration.freeze",
        target=configuration,
        payload={
            "name": name,
            "version": next_version,
            "sha256": parsed.sha256,
            "model_ref": parsed.model_ref,
        },
    )
    use_case_advance(
        actor=actor,
        use_case=use_case,
        stage=Stage.CONFIGURE,
        note=f"σ {name} v{next_version} frozen",
    )
    configuration_registered.send(sender=Configuration, configuration=configuration, actor=actor)
    return configuration
