// Live parts of the pages, without inline script (the CSP forbids it).
// A form with data-live-validate="URL" posts its fields to URL whenever they change and
// replaces the element named by data-live-target with the HTML the server returns; lists
// marked data-row-issues are refilled from the returned data-issues-of lists of that row.
(function () {
  "use strict";
  function csrfToken(form) {
    const field = form.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }
  // Copy the panel's per-row lists (data-issues-of) onto the form's rows (data-row-issues).
  function showRowIssues(form, panel) {
    const lists = new Map();
    panel.querySelectorAll("[data-issues-of]").forEach((list) => {
      lists.set(list.dataset.issuesOf, list.innerHTML);
    });
    form.querySelectorAll("[data-row-issues]").forEach((row) => {
      row.innerHTML = lists.get(row.dataset.rowIssues) || "";
    });
  }
  function liveValidate(form) {
    const url = form.dataset.liveValidate;
    const target = document.querySelector(form.dataset.liveTarget);
    if (!url || !target) return;
    let timer = null;
    let sequence = 0;
    const send = () => {
      const mine = ++sequence;
      fetch(url, {
        method: "POST",
        body: new FormData(form),
        headers: { "X-CSRFToken": csrfToken(form), "X-Requested-With": "fetch" },
        credentials: "same-origin",
      })
        .then((response) => response.text())
        .then((html) => {
          if (mine === sequence) {
            target.innerHTML = html;
            target.dataset.state = "fresh";
            showRowIssues(form, target);
          }
        });
    };
    form.addEventListener("input", () => {
      target.dataset.state = "stale";
      clearTimeout(timer);
      timer = setTimeout(send, 250);
    });
  }
  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("form[data-live-validate]").forEach(liveValidate);
  });
})();
