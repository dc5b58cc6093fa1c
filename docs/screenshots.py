"""Take the screenshots under docs/ from a running server loaded by ``make demo``.

    ENTERPRISEVAL_DEMO_PASSWORD=... make demo
    .venv/bin/python manage.py runserver 127.0.0.1:8765 &
    ENTERPRISEVAL_DEMO_PASSWORD=... .venv/bin/python docs/screenshots.py http://127.0.0.1:8765

Signs in as the demo grader, owner, reviewer and adjudicator in Debian's Chromium and saves
the grading workspace, the agreement dashboard, the oversight results, a decision and the
comparison of both σ, a scorecard, the use-case lifecycle, the EGI-Bench roster, and the
adjudication queue and item.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

HERE = Path(__file__).resolve().parent
KEY = "CREDIT-MEMO-B"


def sign_in(page: Page, base: str, username: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", os.environ["ENTERPRISEVAL_DEMO_PASSWORD"])
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def first_link(page: Page, pattern: str) -> str:
    for href in page.eval_on_selector_all("a", "links => links.map(a => a.href)"):
        if re.search(pattern, href):
            return str(href)
    raise SystemExit(f"no link matching {pattern} on {page.url}")


def main(base: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 1000})

        sign_in(page, base, "demo-grader")
        page.goto(f"{base}/grading/")
        page.goto(first_link(page, r"/grading/a/"))
        page.keyboard.press("1")  # answer the first question by keyboard, as a grader does
        page.screenshot(path=HERE / "screenshot-grading-workspace.png", full_page=False)

        sign_in(page, base, "demo-owner")
        page.goto(f"{base}/use-cases/{KEY}/grading/")
        session = first_link(page, rf"/use-cases/{KEY}/grading/(?!new/)[^/]+/$")
        page.goto(session + "agreement/")
        page.screenshot(path=HERE / "screenshot-agreement-dashboard.png", full_page=True)
        page.goto(f"{base}/use-cases/{KEY}/oversight/")
        page.goto(first_link(page, rf"/use-cases/{KEY}/oversight/(?!new/)[^/]+/$"))
        page.screenshot(path=HERE / "screenshot-oversight-results.png", full_page=True)

        sign_in(page, base, "demo-reviewer")
        page.goto(f"{base}/use-cases/{KEY}/decisions/")
        decisions = sorted(
            {
                href
                for href in page.eval_on_selector_all("a", "links => links.map(a => a.href)")
                if re.search(r"/decisions/\d+/$", href)
            }
        )
        page.goto(decisions[0])
        page.screenshot(path=HERE / "screenshot-decision.png", full_page=True)
        ids = [href.rstrip("/").rsplit("/", 1)[-1] for href in decisions[:2]]
        page.goto(f"{base}/use-cases/{KEY}/decisions/compare/?a={ids[0]}&b={ids[1]}")
        page.screenshot(path=HERE / "screenshot-decision-comparison.png", full_page=True)
        page.goto(f"{base}/use-cases/{KEY}/scorecards/")
        page.goto(first_link(page, rf"/use-cases/{KEY}/scorecards/\d+/$"))
        page.screenshot(path=HERE / "screenshot-scorecard.png", full_page=False)
        page.goto(f"{base}/use-cases/{KEY}/")
        page.screenshot(path=HERE / "screenshot-use-case-lifecycle.png", full_page=False)
        page.goto(f"{base}/benchmarks/")
        page.screenshot(path=HERE / "screenshot-egi-roster.png", full_page=True)

        sign_in(page, base, "demo-adjudicator")
        page.goto(session + "adjudication/")
        page.screenshot(path=HERE / "screenshot-adjudication-queue.png", full_page=True)
        page.goto(first_link(page, r"/adjudication/[^/]+/$"))
        page.screenshot(path=HERE / "screenshot-adjudication-item.png", full_page=False)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8765")
