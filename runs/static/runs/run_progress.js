// Live run progress without reload (no inline script: the CSP forbids it).
// The element #run-progress carries data-progress-url (GET /api/v1/use-cases/<key>/runs/<id>/)
// and data-status; while the run is pending or running, the URL is polled every second and
// every [data-field] inside is updated, with the <progress> bar, until the run stops; then the
// page's [data-show-when-finished] elements (the judge form) show and [data-hide-when-finished]
// ones hide.
(function () {
  "use strict";
  const ACTIVE = new Set(["pending", "running"]);
  const LABELS = {
    pending: "Pending",
    running: "Running",
    completed: "Completed",
    budget_exhausted: "Stopped: cost budget reached",
    failed: "Failed",
    cancelled: "Cancelled",
  };
  const PERIOD_MS = 1000;

  function formatTime(value) {
    if (!value) return "—";
    const date = new Date(value);
    const pad = (n) => String(n).padStart(2, "0");
    return (
      `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
      `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
    );
  }

  function render(root, run) {
    const text = {
      status: LABELS[run.status] || run.status,
      stop_reason: run.stop_reason || "",
      items_done: run.items_done,
      items_total: run.items_total,
      items_failed: run.items_failed,
      cost_usd: run.cost_usd,
      cost_unknown_items: run.cost_unknown_items,
      started_at: formatTime(run.started_at),
      finished_at: formatTime(run.finished_at),
      throughput_per_second:
        run.throughput_per_second == null ? "—" : `${run.throughput_per_second.toFixed(2)} per second`,
      eta_seconds: run.eta_seconds == null ? "—" : `about ${Math.round(run.eta_seconds)} s`,
    };
    root.querySelectorAll("[data-field]").forEach((element) => {
      const name = element.dataset.field;
      if (element.tagName === "PROGRESS") {
        element.max = Math.max(run.items_total, 1);
        element.value = run.items_done;
        element.textContent = `${run.percent ?? 0}%`;
      } else if (Object.prototype.hasOwnProperty.call(text, name)) {
        element.textContent = String(text[name]);
      }
    });
    root.dataset.status = run.status;
    if (!ACTIVE.has(run.status)) {
      document.querySelectorAll("[data-show-when-finished]").forEach((e) => (e.hidden = false));
      document.querySelectorAll("[data-hide-when-finished]").forEach((e) => (e.hidden = true));
    }
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
        .then((run) => {
          render(root, run);
          if (ACTIVE.has(run.status)) window.setTimeout(poll, PERIOD_MS);
        })
        .catch(() => {
          root.dataset.state = "stale"; // keep trying: a worker restart must not end the page
          window.setTimeout(poll, PERIOD_MS * 5);
        });
    };
    window.setTimeout(poll, PERIOD_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("run-progress");
    if (root) follow(root);
  });
})();
