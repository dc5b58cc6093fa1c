"""Writes of the egibench app: storing EGI results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from audit.services import audit_record
from egibench.model_names import name_key
from egibench.models import EgiResult
from egibench.result_shape import ResultRecord, ResultShapeError, result_record
from enterpriseval.documents import DocumentLimitError, DocumentSyntaxError, json_decode
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, upload_size_check

#: ``source`` of the rows loaded from the bundled seed 000 roster.
PUBLISHED_ROSTER_SOURCE = "seed 000 published roster"
SOURCE_MAX_LENGTH = 300


@dataclass(frozen=True)
class StoredResult:
    """A stored result and whether this call inserted it."""

    result: EgiResult
    created: bool


def egi_result_store(
    *, result: Mapping[str, Any], source: str, actor: AbstractBaseUser | None = None
) -> EgiResult:
    """Store one EGI results artifact and return its row (the existing one if already stored).

    The artifact is what ``egi-bench`` writes (SPEC §10), checked by
    :func:`egibench.result_shape.result_record`. Rows are immutable: the same artifact
    (same canonical SHA-256) stored again returns the existing row and writes nothing.

    Raises
    ------
    ServiceError
        If the artifact's shape is wrong, naming ``source`` and the key at fault.
    """
    return egi_result_store_reporting(result=result, source=source, actor=actor).result


def egi_result_store_reporting(
    *, result: Mapping[str, Any], source: str, actor: AbstractBaseUser | None = None
) -> StoredResult:
    """Store like :func:`egi_result_store` and report whether a row was inserted."""
    if not isinstance(source, str) or not source.strip():
        raise ServiceError("source: name the file or roster the result comes from", field="source")
    source = source.strip()[:SOURCE_MAX_LENGTH]
    try:
        record = result_record(result, where=source)
    except ResultShapeError as error:
        raise ServiceError(str(error), field=_field_of(str(error))) from None
    existing = EgiResult.objects.filter(sha256=record.sha256).first()
    if existing is not None:
        return StoredResult(existing, created=False)
    try:
        return StoredResult(_insert(record=record, source=source, actor=actor), created=True)
    except IntegrityError:
        # A concurrent store of the same artifact won the unique sha256.
        existing = EgiResult.objects.filter(sha256=record.sha256).first()
        if existing is None:
            raise
        return StoredResult(existing, created=False)


@transaction.atomic
def _insert(*, record: ResultRecord, source: str, actor: AbstractBaseUser | None) -> EgiResult:
    row = EgiResult(
        model_id=record.model,
        model_key=name_key(record.model),
        display_name=record.display_name,
        mode=record.mode,
        run_at=record.timestamp,
        egi=record.egi,
        partial=record.partial,
        floors=record.floors,
        release_ready=record.release_ready,
        missing=record.missing,
        stated_rank=record.rank,
        result=record.data,
        canonical_json=record.canonical_json,
        sha256=record.sha256,
        source=source,
        routing_sha256=record.routing_sha256,
        created_by=actor,
        **{bucket.lower(): score for bucket, score in record.buckets.items()},
    )
    row.full_clean()
    row.save()
    audit_record(
        actor=actor,
        action="egi.store",
        target=row,
        payload={
            "model": row.model_id,
            "mode": row.mode,
            "timestamp": row.run_at,
            "egi": row.egi,
            "partial": row.partial,
            "stated_rank": row.stated_rank,
            "release_ready": row.release_ready,
            "sha256": row.sha256,
            "routing_sha256": row.routing_sha256,
            "source": row.source,
        },
    )
    return row


def egi_results_file_read(path: Path) -> list[tuple[str, Mapping[str, Any]]]:
    """Read a results file: one artifact, or ``{"results": [artifact, ...]}`` (a roster).

    Returns ``(where, artifact)`` pairs, ``where`` naming the file and entry for errors.

    Raises
    ------
    ServiceError
        If the file cannot be read or is not JSON (with the line), or has neither shape.
    """
    try:
        upload_size_check(kind=UploadKind.EGI_RESULT, filename=str(path), size=path.stat().st_size)
        data = json_decode(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ServiceError(f"{path}: cannot read ({error.strerror})", field=str(path)) from None
    except UnicodeDecodeError as error:
        raise ServiceError(
            f"{path}: not UTF-8 text (byte {error.start + 1} cannot be decoded)", field=str(path)
        ) from None
    except DocumentSyntaxError as error:
        kind = "refused JSON" if isinstance(error, DocumentLimitError) else "not valid JSON"
        raise ServiceError(
            f"{path}: {kind} (line {error.line}: {error.problem})", field=str(path)
        ) from None
    if isinstance(data, dict) and "results" in data:
        entries = data["results"]
        if not isinstance(entries, list) or not entries:
            raise ServiceError(f"{path}: key 'results': expected a non-empty list of artifacts")
        return [(f"{path.name}: results[{index}]", entry) for index, entry in enumerate(entries)]
    if isinstance(data, dict):
        return [(path.name, data)]
    raise ServiceError(f"{path}: expected a JSON object (an artifact or {{'results': [...]}})")


def _field_of(message: str) -> str | None:
    marker = "key '"
    if marker not in message:
        return None
    return message.split(marker, 1)[1].split("'", 1)[0]
