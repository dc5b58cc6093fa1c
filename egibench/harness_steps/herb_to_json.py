"""Convert HERB's scored result pickles to plain JSON, inside HERB's own environment.

A harness step of the EGI-Bench registry (``egibench/harnesses.yaml``, benchmark ``herb``),
run with HERB's interpreter after ``evaluate.py``::

    {python} {steps}/herb_to_json.py --out-dir {output_dir} output/<emb>-<model>-<n>-ans.pk ...

HERB's ``rag.py`` pickles its answers as llama-index ``Response`` objects (or None), and
``evaluate.py`` rewrites the same pickle with its scores. ``egi-bench`` reads pickles only
through an unpickler that refuses every class, so it cannot read a real HERB pickle. This
script runs where llama-index is installed, loads each pickle with the standard unpickler
(the harness's own output, in the harness's own environment), and writes ``<stem>.json``
into ``--out-dir`` with the same keys, every value plain:

- an object with a ``response`` attribute (llama-index ``Response``) becomes that
  attribute, a string or null;
- a tuple becomes a list; dict keys become strings; a numpy-style scalar (``.item()``)
  becomes its Python number;
- a NaN or infinite float becomes the string ``"nan"``/``"inf"`` (JSON has no such
  number; the importer then refuses it naming the key instead of reading a wrong number);
- any other object becomes ``str(object)``.

Each output also records ``egi_converted_from``: the pickle's file name and SHA-256.
Nothing is written unless every given pickle converts; each file is written to a temporary
name and renamed into place. Standard library only: HERB's environment need not hold
egibench. Exit status 0 on success, 2 on an error, printed as one line naming the file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

MAX_DEPTH = 64


class ConversionError(ValueError):
    """A pickle that cannot be converted; the message names the file and the key."""


def plain(value: Any, *, where: str = "(root)", depth: int = 0) -> Any:
    """Return ``value`` as JSON types (see the module docstring for each rule)."""
    if depth > MAX_DEPTH:
        raise ConversionError(f"key {where}: nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {
            str(key): plain(item, where=f"{where}.{key}", depth=depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [
            plain(item, where=f"{where}[{index}]", depth=depth + 1)
            for index, item in enumerate(value)
        ]
    if hasattr(value, "response"):  # llama-index Response: the answer text, or None
        return plain(value.response, where=f"{where}.response", depth=depth + 1)
    item = getattr(value, "item", None)
    if callable(item):  # a numpy scalar
        try:
            return plain(item(), where=where, depth=depth + 1)
        except (TypeError, ValueError):
            pass
    return str(value)


def convert(pickle_path: Path) -> dict[str, Any]:
    """Load one scored HERB pickle and return its plain-JSON form."""
    try:
        data = pickle_path.read_bytes()
    except OSError as exc:
        raise ConversionError(f"{pickle_path}: cannot read the file ({exc})") from exc
    try:
        loaded = pickle.loads(data)  # noqa: S301 - the harness's own output, in its own env
    except Exception as exc:  # a truncated file or a class this environment lacks
        raise ConversionError(f"{pickle_path}: not a readable pickle ({exc!r})") from exc
    if not isinstance(loaded, dict):
        raise ConversionError(
            f"{pickle_path}: expected a dict of lists (rag.py / evaluate.py), "
            f"got {type(loaded).__name__}"
        )
    try:
        result: dict[str, Any] = plain(loaded)
    except ConversionError as exc:
        raise ConversionError(f"{pickle_path}: {exc}") from exc
    result["egi_converted_from"] = {
        "file": pickle_path.name,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    return result


def convert_all(pickles: list[Path], out_dir: Path) -> list[Path]:
    """Convert every pickle, then write ``out_dir/<stem>.json`` for each; return the paths."""
    stems = [p.stem for p in pickles]
    duplicated = sorted({s for s in stems if stems.count(s) > 1})
    if duplicated:
        raise ConversionError(f"two pickles would write the same file: {', '.join(duplicated)}")
    converted = [(p, convert(p)) for p in pickles]
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[tuple[Path, Path]] = []
    try:
        for source, document in converted:
            handle, name = tempfile.mkstemp(dir=out_dir, prefix=f".{source.stem}.")
            written.append((Path(name), out_dir / f"{source.stem}.json"))
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(document, stream, ensure_ascii=False, allow_nan=False)
    except BaseException:
        for partial, _ in written:
            partial.unlink(missing_ok=True)
        raise
    for partial, target in written:
        os.replace(partial, target)
    return [target for _, target in written]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="herb_to_json.py",
        description="Convert HERB's scored result pickles to plain JSON for egi-bench.",
    )
    parser.add_argument("--out-dir", type=Path, required=True, help="where <stem>.json goes")
    parser.add_argument("pickles", nargs="+", type=Path, metavar="PICKLE")
    args = parser.parse_args(argv)
    try:
        paths = convert_all(args.pickles, args.out_dir)
    except (ConversionError, OSError) as exc:
        print(f"herb_to_json.py: error: {exc}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
