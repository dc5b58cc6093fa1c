"""Take the README's screenshots (docs/screenshot-*.png) from the product as it is.

    ENTERPRISEVAL_DEMO_PASSWORD=... make demo
    ENTERPRISEVAL_DEMO_PASSWORD=... make docs-screenshots

``make docs-screenshots`` starts ``manage.py runserver`` on the demo database and runs this
script against it; by hand: ``.venv/bin/python docs/screenshots.py http://127.0.0.1:8765``.
Debian's headless Chromium (RECIPES.md: /usr/bin/chromium, no browser download) signs in as the
demo users with the password ``make demo`` was given, and walks the lifecycle in the order the
README's "The web app" section tells it: the use-case page, the charter, starting and judging a
run, the grading workspace, the adjudication page, agreement, the oversight results, recording
a decision, the decision and the comparison of both σ, the scorecard, and the EGI-Bench roster.
The grader and the adjudicator are shown on the practice session the demo leaves open for a
person (no decision rests on it); the agreement dashboard on the closed session the decisions
rest on.
"""

from __future__ import annotations

import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

HERE = Path(__file__).resolve().parent
KEY = "CREDIT-MEMO-B"
SESSION_NAME = "Credit memo blind review, round 1"  # demo.grading.SESSION_NAME
PRACTICE_SESSION_NAME = "Credit memo practice round (no decision rests on it)"
STUDY_NAME = "Credit memo review queue, round 1"
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
PASSWORD_VARIABLE = "ENTERPRISEVAL_DEMO_PASSWORD"  # noqa: S105 - a variable name


def wait_for(base: str, seconds: float = 60.0) -> None:
    """Wait until the server answers its sign-in page, or exit saying it never did."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{base}/accounts/login/", timeout=5):  # noqa: S310
                return
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise SystemExit(f"no server answered at {base} within {seconds:.0f} s") from None
            time.sleep(0.5)


def sign_in(page: Page, base: str, username: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", os.environ[PASSWORD_VARIABLE])
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    if "/accounts/login/" in page.url:
        raise SystemExit(
            f"could not sign in as {username}: set {PASSWORD_VARIABLE} to the value "
            "`make demo` ran with"
        )


def links(page: Page) -> list[str]:
    return [str(h) for h in page.eval_on_selector_all("a", "links => links.map(a => a.href)")]


def first_link(page: Page, pattern: str) -> str:
    for href in links(page):
        if re.search(pattern, href):
            return href
    raise SystemExit(f"no link matching {pattern} on {page.url}")


def link_named(page: Page, text: str) -> str:
    href = page.locator("a", has_text=text).first.get_attribute("href")
    if not href:
        raise SystemExit(f"no link named {text!r} on {page.url}")
    return str(page.evaluate("href => new URL(href, document.baseURI).href", href))


def shot(page: Page, name: str, *, full_page: bool = True, height: int | None = None) -> None:
    """Save the page (whole, the viewport, or its top ``height`` pixels) as docs/screenshot-…"""
    page.wait_for_load_state("networkidle")
    path = HERE / f"screenshot-{name}.png"
    if height is not None:
        clip = {"x": 0, "y": 0, "width": page.viewport_size["width"], "height": height}
        page.screenshot(path=path, full_page=True, clip=clip)  # type: ignore[arg-type]
    else:
        page.screenshot(path=path, full_page=full_page)
    print(f"wrote {path.relative_to(HERE.parent)}")


def main(base: str) -> None:
    if not os.environ.get(PASSWORD_VARIABLE):
        raise SystemExit(f"set {PASSWORD_VARIABLE} to the value `make demo` ran with")
    wait_for(base)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        use_case = f"{base}/use-cases/{KEY}/"

        # 1–3. The use case with its lifecycle, and its signed charter (charter owner).
        sign_in(page, base, "demo-owner")
        page.goto(use_case)
        shot(page, "use-case-lifecycle", full_page=False)
        page.goto(use_case + "charter/")
        shot(page, "charter", full_page=False)

        # 4–5. Starting a run, and a run's page with "Judge this run".
        page.goto(use_case + "runs/new/")
        shot(page, "run-start", full_page=False)
        page.goto(use_case + "runs/")
        runs = {href for href in links(page) if re.search(rf"/use-cases/{KEY}/runs/\d+/$", href)}
        page.goto(min(runs, key=lambda href: int(href.rstrip("/").rsplit("/", 1)[-1])))
        shot(page, "run-judge", height=2000)  # progress, its judging and "Judge this run"

        # 6. Grading: agreement on the closed session, the oversight study's results.
        page.goto(use_case + "grading/")
        session = link_named(page, SESSION_NAME)
        practice = link_named(page, PRACTICE_SESSION_NAME)
        page.goto(session + "agreement/")
        shot(page, "agreement-dashboard")
        page.goto(use_case + "oversight/")
        page.goto(link_named(page, STUDY_NAME))
        shot(page, "oversight-results")

        # 7. Recording a decision.
        page.goto(use_case + "decisions/new/")
        shot(page, "decision-new", full_page=False)

        # 6. The grader's workspace on the practice session, answering by keyboard.
        sign_in(page, base, "demo-grader")
        page.goto(f"{base}/grading/")
        row = page.locator("tr", has_text=PRACTICE_SESSION_NAME).locator("a.gr-continue")
        page.goto(str(page.evaluate("a => a.href", row.first.element_handle())))
        page.wait_for_load_state("networkidle")
        page.keyboard.press("1")  # "Yes" to the first question: the next one is asked
        page.wait_for_timeout(500)
        shot(page, "grading-workspace", full_page=False)

        # 6. The adjudicator's queue and one artefact's disputed fields on one page.
        sign_in(page, base, "demo-adjudicator")
        page.goto(practice + "adjudication/")
        shot(page, "adjudication-queue")
        page.goto(first_link(page, r"/adjudication/[^/]+/$"))
        page.set_viewport_size({"width": 1280, "height": 1300})
        page.wait_for_load_state("networkidle")
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, "adjudication-item", full_page=False)
        page.set_viewport_size({"width": 1280, "height": 900})

        # 7–8. The decisions, their comparison and a signed scorecard (second-line reviewer).
        sign_in(page, base, "demo-reviewer")
        page.goto(use_case + "decisions/")
        decisions = sorted(
            {href for href in links(page) if re.search(r"/decisions/\d+/$", href)},
            key=lambda href: int(href.rstrip("/").rsplit("/", 1)[-1]),
        )
        if len(decisions) < 2:
            raise SystemExit(f"expected the demo's two decisions on {page.url}")
        page.goto(decisions[0])
        shot(page, "decision", height=1700)  # status, reasons, gated metrics, how estimated
        ids = [href.rstrip("/").rsplit("/", 1)[-1] for href in decisions[:2]]
        page.goto(f"{use_case}decisions/compare/?a={ids[0]}&b={ids[1]}")
        shot(page, "decision-comparison")
        page.goto(use_case + "scorecards/")
        page.goto(first_link(page, rf"/use-cases/{KEY}/scorecards/\d+/$"))
        shot(page, "scorecard", full_page=False)

        # Capability evidence.
        page.goto(f"{base}/benchmarks/")
        shot(page, "egi-roster")
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8765")
