"""What every stage's commands share: the acting user, the use case, refusals and output.

A command does what a page and an API endpoint do, through the same access check and the same
service; it adds no rule of its own. A refusal prints one message naming the option (or the
file, line and field) at fault and exits with status :data:`REFUSED`, writing nothing: the
service's transaction is rolled back.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO, cast
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import QuerySet
from django.http import Http404, QueryDict
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from tqdm import tqdm

from charters.models import Charter, UseCase
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, UploadTooLarge, upload_size_check

REFUSED = 2
FORMATS = ("table", "json")
#: Service fields that mean the whole file given to a command.
WHOLE = ("", "file", "content", "body")


def refusal(message: str) -> CommandError:
    """Return the error that prints ``message`` and exits with status 2."""
    return CommandError(message, returncode=REFUSED)


def add_actor(parser: CommandParser, who: str) -> None:
    """Add ``--as USERNAME``: the user the command acts as, checked like a web login."""
    parser.add_argument("--as", dest="actor", required=True, help=f"User name of {who}.")


def add_format(parser: CommandParser) -> None:
    """Add ``--format table|json`` (json: what the matching API endpoint answers)."""
    parser.add_argument("--format", choices=FORMATS, default="table", help="Output format.")


def user_named(username: str, option: str = "--as") -> Any:
    """Return the user ``username``, or refuse naming ``option``."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise refusal(f"{option}: no user {username!r}")
    return user


def use_case_named(key: str) -> UseCase:
    """Return the use case ``key``, or refuse naming ``--use-case``."""
    use_case = UseCase.objects.filter(key=key).first()
    if use_case is None:
        raise refusal(f"--use-case: no use case {key!r}")
    return use_case


def use_case_as(actor: Any, key: str, access: Callable[..., Any], **kwargs: Any) -> Any:
    """Return what ``access(actor, key, **kwargs)`` returns: the check the page and API make.

    An unknown key refuses naming ``--use-case``; a user who holds no role on it, or not the
    role needed, refuses naming ``--as``.
    """
    use_case_named(key)
    try:
        return access(actor, key, **kwargs)
    except Http404:
        raise refusal(f"--as: {actor.get_username()} holds no role on {key}") from None
    except PermissionDenied as error:
        raise refusal(f"--as: {error}") from None


class UseCaseCommand(BaseCommand):
    """A command that acts as the ``--as`` user on the use case ``--use-case``.

    It adds ``--use-case``, then the command's own options (:meth:`add_options`), then
    ``--as`` (its help names :attr:`who`) and, unless :attr:`formats` is false, ``--format
    table|json``: the order ``--help`` lists them in. The command's ``handle`` resolves the
    user and the use case with :meth:`actor_and_use_case`, naming the access check there.
    """

    #: Who the ``--as`` user must be, as its help ends: "User name of WHO."
    who: str
    #: Whether the command prints ``--format json`` as well as a table.
    formats: bool = True

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        self.add_options(parser)
        add_actor(parser, self.who)
        if self.formats:
            add_format(parser)

    def add_options(self, parser: CommandParser) -> None:
        """Add the command's own options (listed after ``--use-case``, before ``--as``)."""

    def actor_and_use_case(
        self, options: Mapping[str, Any], access: Callable[..., Any], **kwargs: Any
    ) -> tuple[Any, Any]:
        """Return the ``--as`` user and what ``access(actor, KEY, **kwargs)`` returns.

        ``access`` is the check the command's page and API make (:func:`use_case_as`).
        """
        actor = user_named(options["actor"])
        return actor, use_case_as(actor, options["use_case"], access, **kwargs)


def add_charter(parser: CommandParser, help: str = "Charter version.") -> None:
    """Add ``--charter VERSION`` (required; read as ``charter_version``)."""
    parser.add_argument("--charter", dest="charter_version", type=int, required=True, help=help)


def charter_named(use_case: UseCase, version: int) -> Charter:
    """Return charter ``version`` of ``use_case``, or refuse naming ``--charter``."""
    charter = Charter.objects.filter(use_case=use_case, version=version).first()
    if charter is None:
        raise refusal(f"--charter: {use_case.key} has no charter v{version}")
    return charter


@contextmanager
def refusals(
    options: Mapping[str, str] | None = None,
    *,
    source: str | None = None,
    stderr: Any = None,
) -> Iterator[None]:
    """Turn a service's refusal into exit status 2 with one message naming what is at fault.

    ``options`` maps a service field to the option that gave it (``{"name": "--name"}``);
    with ``source`` (a file given to the command), a refusal whose ``details`` name lines is
    printed as ``FILE:LINE: FIELD: MESSAGE``, one line each on ``stderr``.
    """
    try:
        yield
    except PermissionDenied as error:
        raise refusal(f"--as: {error}") from None
    except Http404 as error:
        raise refusal(str(error)) from None
    except ServiceError as error:
        if source is not None and stderr is not None:
            for detail in error.details:
                stderr.write(located(source, detail))
        raise refusal(service_message(error, options or {}, source=source)) from None


def service_message(
    error: ServiceError, options: Mapping[str, str], *, source: str | None = None
) -> str:
    """Return a service refusal's message led by the option, or the file and field, at fault."""
    field = error.field or ""
    message = error.message.removeprefix(f"{field}: ") if field else error.message
    if field in options:
        return f"{options[field]}: {message}"
    if source is not None and len(error.details) == 1 and error.details[0].get("line"):
        return located(source, error.details[0])
    if source is None:
        return ": ".join([*([field] if field else []), message])
    named = message.startswith((source, os.path.basename(source)))
    # The file as a whole is at fault: its name says where.
    return ": ".join(
        [*([] if named else [source]), *([field] if field not in WHOLE else []), message]
    )


def located(source: str, detail: Mapping[str, Any]) -> str:
    """Return ``FILE:LINE: FIELD: MESSAGE`` (``FILE: FIELD: MESSAGE`` without a line)."""
    line = detail.get("line")
    where = f"{source}:{line}" if line else source
    field = detail.get("field")
    return (
        f"{where}: {field}: {detail.get('message')}"
        if field
        else f"{where}: {detail.get('message')}"
    )


def read_bytes(path: str, option: str, *, kind: UploadKind | None = None) -> bytes:
    """Return the content of the file ``path``, or refuse naming ``option``.

    With ``kind``, a file over that kind's size cap (``ENTERPRISEVAL_MAX_<KIND>_BYTES``) is
    refused from its size on disk, before a byte of it is read (enterpriseval.limits).
    """
    try:
        if kind is not None:
            upload_size_check(kind=kind, filename=path, size=Path(path).stat().st_size)
        return Path(path).read_bytes()
    except OSError as error:
        raise refusal(f"{option}: {path}: {error.strerror or error}") from None
    except UploadTooLarge as error:
        raise refusal(f"{option}: {error.message}") from None


def read_text(path: str, option: str, *, kind: UploadKind | None = None) -> str:
    """Return the UTF-8 text of the file ``path``, or refuse naming ``option`` (``kind``: as
    :func:`read_bytes`)."""
    content = read_bytes(path, option, kind=kind)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise refusal(f"{option}: {path} is not UTF-8 text (byte {error.start})") from None


def write_lines(
    stdout: Any, lines: Iterable[bytes], output: str | None, *, refused: Callable[[OSError], str]
) -> int | None:
    """Write the UTF-8 ``lines`` to the file ``output`` and return how many were written.

    Without ``output`` they go to the command's standard output as they are (no line end
    added) and ``None`` is returned. A file that cannot be written refuses with the message
    ``refused(error)`` returns.
    """
    if not output:
        out = getattr(stdout, "_out", sys.stdout)
        for line in lines:
            out.write(line.decode("utf-8"))
        return None
    try:
        with open(output, "wb") as target:
            return sum(target.write(line) > 0 for line in lines)
    except OSError as error:
        raise refusal(refused(error)) from None


def write_json(out: TextIO, data: Any) -> None:
    """Write ``data`` as indented JSON (dates and decimals as the API writes them)."""
    out.write(json.dumps(data, indent=2, ensure_ascii=False, cls=DjangoJSONEncoder))


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """Return ``rows`` as a plain text table under ``header``, columns padded to fit."""
    cells = [[str(c) for c in header], *[["—" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


#: Files smaller than this import without a progress bar (they take well under a second).
PROGRESS_MIN_BYTES = 1024 * 1024


def progress_bar(stderr: Any, *, total: int, passes: Sequence[str]) -> tqdm:
    """Return a byte progress bar on the command's standard error (none for a small file)."""
    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc=passes[0],
        disable=total < PROGRESS_MIN_BYTES,
        file=getattr(stderr, "_out", sys.stderr),
    )


@contextmanager
def progress_file(
    path: str, option: str, *, stderr: Any, passes: Sequence[str]
) -> Iterator[ProgressFile]:
    """Open ``path`` for an import: its reads advance a progress bar on ``stderr``.

    A file that cannot be opened refuses naming ``option``; the bar and the file are closed
    on leaving, refused or not.
    """
    try:
        fileobj = open(path, "rb")  # noqa: SIM115 -- closed below, after the bar
    except OSError as error:
        raise refusal(f"{option}: {path}: {error.strerror or error}") from None
    with fileobj:
        bar = progress_bar(stderr, total=os.fstat(fileobj.fileno()).st_size, passes=passes)
        try:
            yield ProgressFile(fileobj, bar, passes)
        finally:
            bar.close()


class ProgressFile:
    """A binary file whose reads advance a progress bar.

    An import that reads the file twice (check every line, then write) seeks back to the
    start between the passes: the bar then starts over under the next pass's name.
    """

    def __init__(self, fileobj: BinaryIO, bar: tqdm, passes: Sequence[str]) -> None:
        self._file = fileobj
        self._bar = bar
        self._passes = list(passes)
        self._pass = 0

    def readline(self, size: int = -1) -> bytes:
        line = self._file.readline(size)
        self._bar.update(len(line))
        return line

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        self._bar.update(len(data))
        return data

    def seekable(self) -> bool:
        return self._file.seekable()

    def tell(self) -> int:
        return self._file.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        position = self._file.seek(offset, whence)
        if position == 0 and self._bar.n:
            self._pass = min(self._pass + 1, len(self._passes) - 1)
            self._bar.reset()
            self._bar.set_description(self._passes[self._pass])
        return position


class PageQuery:
    """The two things ``LimitOffsetPagination`` reads of a request: its query and its address.

    The address is the endpoint's on ``ENTERPRISEVAL_SITE_URL`` (the links in e-mails start
    there too), so ``next`` and ``previous`` are the links the API gives.
    """

    def __init__(self, path: str, params: Mapping[str, Any]) -> None:
        self.query_params = QueryDict(urlencode(params))
        query = f"?{urlencode(params)}" if params else ""
        self._url = f"{str(settings.ENTERPRISEVAL_SITE_URL).rstrip('/')}{path}{query}"

    def build_absolute_uri(self) -> str:
        return self._url


def page_of(
    queryset: QuerySet[Any], path: str, params: Mapping[str, Any]
) -> tuple[LimitOffsetPagination, list[Any]]:
    """Return the paginator and the page the API's ``limit``/``offset`` give of ``queryset``.

    ``paginator.get_paginated_response(data).data`` is then the API's page, links included.
    """
    paginator = LimitOffsetPagination()
    page = paginator.paginate_queryset(queryset, cast(Request, PageQuery(path, params)))
    return paginator, list(page or [])
