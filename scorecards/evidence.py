"""Evidence packs: a deterministic zip of named members with a manifest of their SHA-256s.

Pure: no Django import (SPEC §7). A pack holds its members and ``manifest.json``::

    {"files": {NAME: {"sha256": HEX, "bytes": N}, ...},
     "decision_sha256": HEX, "created_at": ISO-8601 UTC}

The manifest is written in canonical JSON (sorted keys, no spaces, UTF-8) and is the last
member. Members are written in name order with the timestamp 1980-01-01 00:00 and fixed
attributes, so the same members, hash and time give byte-identical zips. A third party can
check a pack with ``zipfile``, ``hashlib`` and ``json`` alone: :func:`evidence_verify`.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from audit.canonical import canonical_json

__all__ = [
    "DECISION_MEMBER",
    "MANIFEST_MEMBER",
    "EvidenceVerification",
    "evidence_manifest",
    "evidence_verify",
    "evidence_zip",
]

MANIFEST_MEMBER = "manifest.json"
DECISION_MEMBER = "decision.json"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# Regular file, rw-r--r--, as written by a Unix host: fixed so the host does not show.
MEMBER_ATTRIBUTES = 0o100644 << 16
UNIX_HOST = 3


@dataclass(frozen=True)
class EvidenceVerification:
    """The outcome of :func:`evidence_verify`.

    ``checked`` lists the members whose hash and size matched the manifest, in manifest
    order; ``member`` names the member at fault when ``ok`` is false (``manifest.json`` for
    a manifest that is missing or does not parse, ``None`` for a file that is not a zip).
    """

    ok: bool
    checked: tuple[str, ...] = field(default=())
    member: str | None = None
    reason: str | None = None


def evidence_manifest(
    members: Mapping[str, bytes],
    *,
    decision_sha256: str,
    created_at: str,
    audit_head: Mapping[str, Any] | None = None,
) -> bytes:
    """Return the canonical JSON manifest of ``members`` (SHA-256 and size of each).

    ``audit_head`` (the sequence and hash of the audit log's last entry the pack covers)
    anchors the log: ``verify_audit --against`` finds that entry, with that hash, in the
    database's intact chain.
    """
    files = {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for name, data in sorted(members.items())
    }
    document: dict[str, Any] = {
        "files": files,
        "decision_sha256": decision_sha256,
        "created_at": created_at,
    }
    if audit_head is not None:
        document["audit_head"] = dict(audit_head)
    return canonical_json(document).encode("utf-8")


def evidence_zip(
    members: Mapping[str, bytes],
    *,
    decision_sha256: str,
    created_at: str,
    audit_head: Mapping[str, Any] | None = None,
) -> bytes:
    """Return the pack of ``members`` and their manifest as deterministic zip bytes.

    Raises
    ------
    ValueError
        If a member is named ``manifest.json``, or a name is empty, absolute or has ``..``.
    """
    for name in members:
        parts = name.split("/")
        if name == MANIFEST_MEMBER or not name or name.startswith("/") or ".." in parts:
            raise ValueError(f"members: {name!r} is not allowed as a member name")
    manifest = evidence_manifest(
        members, decision_sha256=decision_sha256, created_at=created_at, audit_head=audit_head
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in [*sorted(members.items()), (MANIFEST_MEMBER, manifest)]:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = MEMBER_ATTRIBUTES
            info.create_system = UNIX_HOST
            archive.writestr(info, data)
    return buffer.getvalue()


MAX_MANIFEST_BYTES = 16 * 1024 * 1024
"""The largest manifest.json read: a pack of thousands of members has one of a few hundred KB."""
MAX_PACK_BYTES = 1024 * 1024 * 1024
"""The largest total of member sizes (uncompressed) checked; larger packs are refused unread."""
_READ_CHUNK = 1024 * 1024


def evidence_verify(data: bytes, *, max_bytes: int = MAX_PACK_BYTES) -> EvidenceVerification:
    """Check a pack offline: every member listed, present, of the listed size and SHA-256.

    Fails on the first problem, in this order: not a zip; a duplicated member name; no
    manifest, one larger than :data:`MAX_MANIFEST_BYTES`, or one that does not parse or
    lacks ``files``/``decision_sha256``; a member the manifest lists but the zip lacks; a
    member the zip holds but the manifest does not list; a member whose size in the zip's
    directory is not the manifest's, or members totalling more than ``max_bytes`` — both
    found before anything is decompressed, so a small zip that inflates to gigabytes costs
    nothing; a member whose bytes do not match (SHA-256, or the zip's own CRC), hashed a
    chunk at a time; and ``decision.json`` whose hash is not the manifest's
    ``decision_sha256``.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        return EvidenceVerification(False, reason=f"not a zip file: {error}")
    with archive:
        names = archive.namelist()
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            return _failed(duplicated[0], "appears more than once in the zip")
        manifest, problem = _manifest(archive, names)
        if manifest is None:
            return _failed(MANIFEST_MEMBER, problem)
        files, decision_sha256 = manifest
        missing = [name for name in files if name not in names]
        if missing:
            return _failed(missing[0], "is listed in manifest.json but missing from the zip")
        extra = [name for name in names if name != MANIFEST_MEMBER and name not in files]
        if extra:
            return _failed(extra[0], "is in the zip but not listed in manifest.json")
        total = 0
        for name, expected in files.items():
            declared = archive.getinfo(name).file_size
            if declared != expected["bytes"]:
                return _failed(name, f"has {declared} bytes, the manifest says {expected['bytes']}")
            total += declared
        if total > max_bytes:
            return _failed(
                MANIFEST_MEMBER,
                f"lists {total:,} bytes of members, more than the {max_bytes:,} a pack may hold",
            )
        checked: list[str] = []
        for name, expected in files.items():
            try:
                digest, size = _member_digest(archive, name)
            except (zipfile.BadZipFile, OSError, EOFError) as error:
                return _failed(name, f"cannot be read: {error}", checked)
            if digest != expected["sha256"]:
                return _failed(
                    name,
                    f"SHA-256 {digest} differs from the manifest's {expected['sha256']}",
                    checked,
                )
            if size != expected["bytes"]:
                return _failed(
                    name, f"has {size} bytes, the manifest says {expected['bytes']}", checked
                )
            checked.append(name)
        if DECISION_MEMBER in files and files[DECISION_MEMBER]["sha256"] != decision_sha256:
            return _failed(
                DECISION_MEMBER,
                f"SHA-256 {files[DECISION_MEMBER]['sha256']} is not the manifest's "
                f"decision_sha256 {decision_sha256}",
                checked,
            )
    return EvidenceVerification(True, tuple(checked))


def _member_digest(archive: zipfile.ZipFile, name: str) -> tuple[str, int]:
    """Return the SHA-256 and size of a member, read a chunk at a time."""
    digest, size = hashlib.sha256(), 0
    with archive.open(name) as member:
        while chunk := member.read(_READ_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _failed(member: str, reason: str, checked: list[str] | None = None) -> EvidenceVerification:
    return EvidenceVerification(False, tuple(checked or ()), member, f"{member} {reason}")


def _manifest(
    archive: zipfile.ZipFile, names: list[str]
) -> tuple[tuple[dict[str, dict[str, object]], str] | None, str]:
    if MANIFEST_MEMBER not in names:
        return None, "is missing from the zip"
    size = archive.getinfo(MANIFEST_MEMBER).file_size
    if size > MAX_MANIFEST_BYTES:
        return None, f"is {size:,} bytes, more than the {MAX_MANIFEST_BYTES:,} a manifest may be"
    try:
        document = json.loads(archive.read(MANIFEST_MEMBER).decode("utf-8"))
    except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError, ValueError) as error:
        return None, f"does not parse: {error}"
    if not isinstance(document, dict):
        return None, "does not parse: expected a JSON object"
    files = document.get("files")
    decision_sha256 = document.get("decision_sha256")
    if not isinstance(files, dict) or not isinstance(decision_sha256, str):
        return None, "does not parse: expected 'files' (an object) and 'decision_sha256' (a text)"
    for name, entry in files.items():
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("sha256"), str)
            or not isinstance(entry.get("bytes"), int)
        ):
            return None, f"does not parse: files[{name!r}] needs 'sha256' (text) and 'bytes' (int)"
    return (files, decision_sha256), ""
