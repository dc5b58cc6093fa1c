"""The decision page of a structured judgement shows its per-class table and confusion matrix.

A labelled task set (header label set, five graded tasks with gold labels) and an imported run
of K = 4 whose outputs carry labels are added to the example use case; the decision is
computed through the service the form uses. The owner then reads it in the browser.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from playwright.sync_api import expect

from charters.models import Charter
from demo.testing.grading import make_world
from demo.testing.structured import labelled_run, labelled_task_set
from gates.services import decision_compute

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-structured-123!"
LABELS = ["compliant", "partially compliant", "non-compliant"]
C, P, N = LABELS
GOLD = {"C-1": C, "C-2": P, "C-3": N, "C-4": C, "C-5": N}
# Labels at repeats 0–3; C-5 gives no label at repeat 0 (unknown, counted as wrong).
GIVEN = {
    "C-1": [C, C, C, C],
    "C-2": [P, P, N, P],
    "C-3": [N, C, N, N],
    "C-4": [P, P, P, C],
    "C-5": [None, C, C, C],
}


def labelled_decision():
    """Build the world in its own thread (Playwright's event loop is open in this one)."""
    try:
        world = make_world()
        run = labelled_run(world, labelled_task_set(world, labels=LABELS, gold=GOLD), GIVEN)
        charter = Charter.objects.get(use_case=world.use_case, version=1)
        decision = decision_compute(actor=world.owner, charter=charter, run=run)
        world.owner.set_password(PASSWORD)
        world.owner.save()
        return world, decision
    finally:
        connection.close()


def test_the_decision_page_shows_the_per_class_table_and_the_confusion_matrix(page, sign_in):
    with ThreadPoolExecutor(max_workers=1) as pool:
        world, decision = pool.submit(labelled_decision).result()
    sign_in(world.owner.get_username(), PASSWORD)
    page.goto(f"/use-cases/{world.use_case.key}/decisions/{decision.pk}/")
    section = page.locator("#structured-judgement")
    expect(section).to_contain_text("Structured judgement and task success")
    expect(page.locator("body")).to_contain_text(
        "5 tasks, each read at its first repeat; 1 with no label"
    )
    # Per class at repeat 0, by hand: compliant given to C-1 only (gold C-1, C-4):
    # precision 1/1, recall 1/2; partially given to C-2 and C-4: precision 1/2, recall 1/1;
    # non-compliant given to C-3: precision 1/1, recall 1/2 (C-5 unknown).
    rows = page.locator("#class-scores tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator("td")).to_have_text(
        ["compliant", "2", "1", "100.00", "50.00", "66.67"]
    )
    expect(rows.nth(1).locator("td")).to_have_text(
        ["partially compliant", "1", "2", "50.00", "100.00", "66.67"]
    )
    expect(rows.nth(2).locator("td")).to_have_text(
        ["non-compliant", "2", "1", "100.00", "50.00", "66.67"]
    )
    matrix = page.locator("#confusion-matrix")
    expect(matrix.locator("thead th")).to_have_text(
        ["Gold \\ given", "compliant", "partially compliant", "non-compliant", "unknown"]
    )
    expect(matrix.locator("tbody tr").nth(0).locator("td")).to_have_text(["1", "1", "0", "0"])
    expect(matrix.locator("tbody tr").nth(2).locator("td")).to_have_text(["0", "0", "1", "1"])
    image = page.get_by_alt_text(
        "Tasks by gold label (rows) and the label given (columns), unknown last"
    )
    expect(image.first).to_be_visible()
    # The charter's success rule (recorded) finds no imported success flag: no pass^k.
    expect(page.locator("#success-basis")).to_contain_text("recorded")
    assert page.console_errors == []
