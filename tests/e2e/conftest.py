"""Headless Chromium (Debian's /usr/bin/chromium) driven by Playwright against live_server."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator

import pytest
from django.core.servers.basehttp import WSGIServer
from django.test.testcases import LiveServerThread

# Playwright runs its own event loop in the test thread; pytest-django's live_server and the
# ORM calls in the test are synchronous and safe here (RECIPES.md).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class SerialWSGIServer(WSGIServer):
    """A live server that answers one request at a time.

    With SQLite the test database lives in memory and the server thread shares the test's
    connection (``connections_override``), so two requests served at once (an autosave and
    a heartbeat) would interleave their savepoints on one connection. Answering them in turn
    is what a browser page expects anyway; Django closes each connection after its response
    on a non-threaded server, so no keep-alive connection holds the others back.
    """

    def __init__(self, *args: object, connections_override: object = None, **kwargs: object):
        super().__init__(*args, **kwargs)


LiveServerThread.server_class = SerialWSGIServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Chromium for one test module.

    Module scope, not session: Playwright's sync API keeps an event loop running in the test
    thread while it is open, and code under test elsewhere (asyncio.run in the LLM judge and
    the executor) must not find one.
    """
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `make setup` (it installs Debian's chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            errors.append(f"{message.text} {message.location.get('url', '')}")
            if message.type == "error"
            else None
        ),
    )
    page.console_errors = errors
    yield page
    context.close()
    # A closing page may still send a last request (a pagehide autosave or heartbeat); the
    # serial server answers in order, so once this one is answered the server is idle and
    # the database can be flushed.
    with urllib.request.urlopen(f"{live_server.url}/healthz", timeout=10) as response:
        response.read()


@pytest.fixture
def sign_in(page):
    """Return a function that signs ``username`` in through the login form."""

    def submit(username: str, password: str) -> None:
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url("**/")

    return submit
