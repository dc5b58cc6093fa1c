// Live judging progress without reload (no inline script: the CSP forbids it).
// Each .judging-progress element carries data-progress-url (GET …/runs/<id>/judgings/<id>/)
// and data-status; while pending or running it is polled every second and every [data-field]
// inside is updated, with the <progress> bar. Once it finishes the page reloads once, so
// the judge's results per criterion show.
(function () {
  "use strict";
  const ACTIVE = new Set(["pending", "running"]);
  const LABELS = {
    pending: "Pending",
    running: "Running",
    completed: "Completed",
    incomplete: "Finished with outputs left unjudged",
    failed: "Failed",
    cancelled: "Cancelled",
  };
  const PERIOD_MS = 1000;
  const FIELDS = [
    "outputs_done",
    "outputs_total",
    "outputs_judged",
    "outputs_failed",
    "units_scored",
    "scores_written",
    "error",
  ];

  function render(root, judging) {
    root.querySelectorAll("[data-field]").forEach((element) => {
      const name = element.dataset.field;
      if (element.tagName === "PROGRESS") {
        element.max = Math.max(judging.outputs_total, 1);
        element.value = judging.outputs_done;
        element.textContent = `${judging.percent ?? 0}%`;
      } else if (name === "status") {
        element.textContent = LABELS[judging.status] || judging.status;
      } else if (FIELDS.includes(name)) {
        element.textContent = String(judging[name] ?? "");
      }
    });
    root.dataset.status = judging.status;
  }

  function follow(root) {
    const url = root.dataset.progressUrl;
    if (!url || !ACTIVE.has(root.dataset.status)) return;
    const poll = () => {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then((response) => {
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          return response.json();
        })
        .then((judging) => {
          render(root, judging);
          if (ACTIVE.has(judging.status)) window.setTimeout(poll, PERIOD_MS);
          else window.location.reload();
        })
        .catch(() => {
          root.dataset.state = "stale"; // keep trying: a worker restart must not end the page
          window.setTimeout(poll, PERIOD_MS * 5);
        });
    };
    window.setTimeout(poll, PERIOD_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll(".judging-progress").forEach(follow);
  });
})();
