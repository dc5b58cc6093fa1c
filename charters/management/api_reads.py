"""Read commands answer as the REST API: they run its view in-process for the acting user.

One call, :func:`api_read`, resolves the endpoint, builds a ``GET`` request authenticated as
``--as`` and addressed to ``ENTERPRISEVAL_SITE_URL`` (so ``next``/``previous`` links are the
ones ``decisions_list`` prints) and returns the JSON the API renders: the same access check,
serializer, blinding and paging, with nothing re-implemented. A refused request becomes a
refusal (exit status 2) naming what is at fault: a 404 names ``--as`` when the user holds no
role on the use case (``--use-case`` when it does not exist) or else the option of the object
asked for; a 403 names ``--as`` with the API's message; a 400 names the option given as the
query parameter at fault.

Throttling: DRF's throttles meter requests that arrive over HTTP. An in-process read is the
operator's own command on the server, so its view is built with no throttle classes: it is
never refused with 429 and records nothing in a web user's throttle history.
"""

from __future__ import annotations

import json
from abc import ABCMeta, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from django.conf import settings
from django.core.handlers.wsgi import WSGIRequest
from django.core.management.base import BaseCommand, CommandParser
from django.urls import resolve, reverse
from rest_framework.test import APIRequestFactory, force_authenticate

from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    service_message,
    table,
    use_case_named,
    user_named,
    write_json,
)
from charters.permissions import held_roles
from enterpriseval.errors import ServiceError


class SiteRequest(WSGIRequest):
    """A request addressed to ``ENTERPRISEVAL_SITE_URL``.

    Its host comes from the settings, not from a client, so it is not checked against
    ``ALLOWED_HOSTS`` (a CLI may run where the site's name is not among them).
    """

    def get_host(self) -> str:
        return str(self.META["HTTP_HOST"])


def api_read(
    actor: Any,
    url_name: str,
    *,
    use_case: str | None = None,
    args: Sequence[Any] = (),
    query: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
    missing: str | None = None,
) -> Any:
    """Return the JSON the API answers ``actor`` for ``GET <url_name>``, or refuse.

    Parameters
    ----------
    actor:
        The user of ``--as``.
    url_name:
        The endpoint's URL name (``api-membership-list``).
    use_case:
        The key of ``--use-case``, the endpoint's first argument; an unknown key refuses
        naming ``--use-case``, a key the actor holds no role on naming ``--as``.
    args:
        The endpoint's further arguments (a version, an id).
    query:
        Query parameters; ``None`` values are left out.
    options:
        Query parameter (or API field) → the option that gave it, for a 400.
    missing:
        The option naming the object asked for, which leads the API's message when the
        actor does hold a role and the API answers 404 (``--run``).
    """
    path_args = [*([use_case] if use_case is not None else []), *args]
    known = use_case_named(use_case) if use_case is not None else None
    path = reverse(url_name, args=path_args)
    site = urlsplit(str(settings.ENTERPRISEVAL_SITE_URL))
    params = {name: value for name, value in (query or {}).items() if value is not None}
    built = APIRequestFactory().get(
        path,
        params,
        HTTP_HOST=site.netloc,
        HTTP_ACCEPT="application/json",
        SCRIPT_NAME=site.path.rstrip("/"),
        secure=site.scheme == "https",
    )
    request = SiteRequest(built.environ)
    force_authenticate(request, user=actor)
    match = resolve(path)
    view_class = match.func.cls
    view = view_class.as_view(**match.func.initkwargs, throttle_classes=())
    response = view(request, *match.args, **match.kwargs)
    data = json.loads(response.rendered_content) if response.rendered_content else None
    if response.status_code < 400:
        return data
    error = (data or {}).get("error") or {}
    message = str(error.get("message") or f"the API answered {response.status_code}")
    if response.status_code == 404:
        if known is not None and not held_roles(actor, known):
            raise refusal(f"--as: {actor.get_username()} holds no role on {known.key}")
        raise refusal(f"{missing}: {message}" if missing else message)
    if response.status_code == 403:
        raise refusal(f"--as: {message}")
    refused = ServiceError(message, field=error.get("field"), details=error.get("details"))
    raise refusal(service_message(refused, options or {}))


#: The query parameters of a paged list and the options that give them.
PAGING = {"limit": "--limit", "offset": "--offset"}


def add_paging(parser: CommandParser, what: str) -> None:
    """Add ``--limit`` and ``--offset``, read as the API reads ``limit`` and ``offset``."""
    parser.add_argument(
        "--limit", type=int, help=f"At most this many {what} (the API's limit; 100 if unset)."
    )
    parser.add_argument("--offset", type=int, help="Skip this many (the API's offset).")


def page_title(page: Mapping[str, Any], offset: int | None, what: str) -> str:
    """Return ``"N WHAT"`` for an API page, with ``"; A–B shown"`` when it is a part."""
    shown = len(page["results"])
    if shown == page["count"]:
        return f"{page['count']} {what}"
    first = (offset or 0) + 1 if shown else 0
    return f"{page['count']} {what}; {first}–{first + shown - 1 if shown else 0} shown"


class ApiReadCommand(BaseCommand, metaclass=ABCMeta):
    """A command that prints what one ``GET`` endpoint answers the user of ``--as``.

    A subclass names the endpoint and what its arguments are; it turns the API's JSON into a
    title and table rows. ``--format json`` prints the JSON as the API renders it.
    """

    #: The endpoint's URL name.
    url_name: ClassVar[str]
    #: Who may run it, for the help of ``--as``.
    who: ClassVar[str] = "a member of the use case"
    #: Whether the endpoint is under ``use-cases/<key>/`` (adds ``--use-case``).
    scoped: ClassVar[bool] = True
    #: The object's option, type and help (``("--run", int, "Run id.")``): the next URL argument.
    target: ClassVar[tuple[str, type, str] | None] = None
    #: Query parameter → the option (of :meth:`add_options`) that gives it.
    queries: ClassVar[Mapping[str, str]] = {}
    #: What a page lists, for an endpoint that pages (adds ``--limit`` and ``--offset``).
    paged: ClassVar[str | None] = None
    #: The table's columns.
    header: ClassVar[Sequence[str]] = ("field", "value")

    def add_arguments(self, parser: CommandParser) -> None:
        if self.scoped:
            parser.add_argument("--use-case", required=True, help="Use-case key.")
        if self.target is not None:
            option, kind, help_text = self.target
            parser.add_argument(option, type=kind, required=True, help=help_text)
        self.add_options(parser)
        if self.paged is not None:
            add_paging(parser, self.paged)
        add_actor(parser, self.who)
        add_format(parser)

    def add_options(self, parser: CommandParser) -> None:
        """Add the options of :attr:`queries`."""

    def url_args(self, options: Mapping[str, Any]) -> list[Any]:
        """Return the URL arguments after the use case (the value of :attr:`target`)."""
        return [options[dest(self.target[0])]] if self.target is not None else []

    def handle(self, *args: Any, **options: Any) -> None:
        self.actor = user_named(options["actor"])
        queries = {**self.queries, **(PAGING if self.paged is not None else {})}
        data = api_read(
            self.actor,
            self.url_name,
            use_case=options["use_case"] if self.scoped else None,
            args=self.url_args(options),
            query={name: options[dest(option)] for name, option in queries.items()},
            options=queries,
            missing=self.target[0] if self.target is not None else None,
        )
        if options["format"] == "json":
            write_json(self.stdout, data)
            return
        self.stdout.write(self.title(data, options))
        rows = list(self.rows(data))
        if rows:
            self.stdout.write(table(rows, self.header))
        after = self.after(data)
        if after:
            self.stdout.write(after)

    @abstractmethod
    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        """Return the line printed over the table."""

    @abstractmethod
    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        """Return the table's rows."""

    def after(self, data: Any) -> str | None:
        """Return what is printed under the table, if anything."""
        return None


def dest(option: str) -> str:
    """Return the name under which argparse stores ``option`` (``--use-case``: ``use_case``)."""
    return option.lstrip("-").replace("-", "_")
