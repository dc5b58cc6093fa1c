// The grading workspace, keyboard first (no inline script: the CSP forbids it).
//
// The page is a plain form that works without this file. Here: j/k (↓/↑) move between units,
// ←/→ (Tab) between fields, digits and the letters shown pick an answer and move on, s or
// Ctrl+Enter submits, r goes to the reason for a revision, ? toggles the help. Every change is saved at once by POST to the API;
// changes not yet acknowledged wait in localStorage (keyed by the assignment's public id) and
// are retried until the server has them, so neither a reload nor a dropped connection loses
// one. Time on the artefact is sent with each save and by a heartbeat while the tab is visible
// and the grader active. Text from the server is only ever set with textContent.
(function () {
  "use strict";

  const HEARTBEAT_MS = 15000;
  const IDLE_MS = 120000; // no key or pointer for this long: the grader is not grading
  const RETRY_MIN_MS = 1000;
  const RETRY_MAX_MS = 30000;
  const SEPARATOR = "|"; // input names are "unit_key|field"

  function start(config) {
    const form = document.getElementById("ws-form");
    const saveStatus = document.getElementById("ws-save");
    const answered = document.getElementById("ws-answered");
    const reasonInput = document.getElementById("ws-reason");
    const errorBox = document.getElementById("ws-error");
    const missingBox = document.getElementById("ws-missing-box");
    const missingList = document.getElementById("ws-missing");
    const helpBody = document.getElementById("ws-help-body");
    const submitButton = document.getElementById("ws-submit");
    const storageKey = `enterpriseval.grading.${config.public_id}`;
    const reserved = new Set(config.reserved_keys);

    const allFields = Array.from(form.querySelectorAll(".ws-field"));
    const byName = new Map(allFields.map((fieldset) => [nameOf(fieldset), fieldset]));
    const units = Array.from(form.querySelectorAll(".ws-unit"));

    // ---- state shown on the page -------------------------------------------------------
    function setStatus(state, text) {
      saveStatus.dataset.state = state;
      saveStatus.textContent = text;
    }

    function nameOf(fieldset) {
      return `${fieldset.dataset.unit}${SEPARATOR}${fieldset.dataset.field}`;
    }

    function valueOf(fieldset) {
      const checked = fieldset.querySelector("input:checked");
      return checked ? checked.value : "";
    }

    function setValue(fieldset, value) {
      fieldset.querySelectorAll("input").forEach((input) => {
        input.checked = input.value === value;
      });
    }

    // Mirrors grading.rubric.is_asked: supported only of assertive sentences, severity only
    // of breached guidance items, the right label only of a label graded not correct.
    function isAsked(field, values) {
      if (field === "supported") return values.assertive !== "N";
      if (field === "severity") return values.guidance === "TP" || values.guidance === "FN";
      if (field === "correct_label") return values.label_correct === "N";
      return true;
    }

    function refreshUnit(unit) {
      const fieldsets = Array.from(unit.querySelectorAll(".ws-field"));
      const values = {};
      fieldsets.forEach((fieldset) => {
        values[fieldset.dataset.field] = valueOf(fieldset);
      });
      fieldsets.forEach((fieldset) => {
        const asked = isAsked(fieldset.dataset.field, values);
        fieldset.hidden = !asked;
        fieldset.disabled = !asked || config.closed;
      });
    }

    function refreshCount() {
      const asked = visibleFields(form);
      const done = asked.filter((fieldset) => valueOf(fieldset) !== "").length;
      answered.dataset.asked = String(asked.length);
      answered.textContent = `${done} of ${asked.length} answers given`;
    }

    // ---- changes waiting for the server --------------------------------------------------
    const pending = loadPending();

    function loadPending() {
      try {
        const stored = JSON.parse(window.localStorage.getItem(storageKey) || "null");
        if (stored && typeof stored.changes === "object" && stored.changes !== null) {
          return { changes: stored.changes };
        }
      } catch (error) {
        // Unreadable storage: start empty; the server still has every acknowledged change.
      }
      return { changes: {} };
    }

    function storePending() {
      try {
        if (Object.keys(pending.changes).length) {
          window.localStorage.setItem(storageKey, JSON.stringify(pending));
        } else {
          window.localStorage.removeItem(storageKey);
        }
      } catch (error) {
        // Storage refused (private mode, quota): the copy in memory is still retried.
      }
    }

    function hasPending() {
      return Object.keys(pending.changes).length > 0;
    }

    function record(fieldset, value) {
      pending.changes[nameOf(fieldset)] = value;
      storePending();
      refreshUnit(fieldset.closest(".ws-unit"));
      refreshCount();
      flush();
    }

    // ---- time on the artefact ------------------------------------------------------------
    let elapsed = 0;
    let since = document.hidden ? null : performance.now();
    let lastActivity = performance.now();

    function tick() {
      const now = performance.now();
      if (since !== null) {
        const until = Math.min(now, lastActivity + IDLE_MS);
        if (until > since) elapsed += (until - since) / 1000;
      }
      since = document.hidden ? null : now;
    }

    function takeElapsed() {
      tick();
      const seconds = elapsed;
      elapsed = 0;
      return Math.round(seconds * 10) / 10;
    }

    function active() {
      tick();
      lastActivity = performance.now();
    }

    ["keydown", "pointerdown", "wheel", "scroll"].forEach((type) =>
      window.addEventListener(type, active, { passive: true, capture: true }),
    );

    // ---- talking to the server -----------------------------------------------------------
    function csrfToken() {
      const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
      if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
      const input = form.querySelector("input[name=csrfmiddlewaretoken]");
      return input ? input.value : "";
    }

    function post(url, body, keepalive) {
      return fetch(url, {
        method: "POST",
        credentials: "same-origin",
        keepalive: Boolean(keepalive),
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "X-CSRFToken": csrfToken(),
        },
        body: JSON.stringify(body),
      });
    }

    function errorMessage(body, status) {
      const error = body && body.error;
      return error && error.message ? error.message : `the server answered ${status}`;
    }

    function changesOf(entries) {
      return entries.map(([name, value]) => {
        const cut = name.lastIndexOf(SEPARATOR);
        return { unit_key: name.slice(0, cut), field: name.slice(cut + 1), value };
      });
    }

    function forget(sent) {
      Object.entries(sent).forEach(([name, value]) => {
        if (pending.changes[name] === value) delete pending.changes[name];
      });
      storePending();
    }

    let running = null;
    let again = false;
    let retryMs = RETRY_MIN_MS;
    let retryTimer = null;

    function scheduleRetry() {
      if (retryTimer !== null) return;
      retryTimer = window.setTimeout(() => {
        retryTimer = null;
        flush();
      }, retryMs);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }

    // Send what is pending; resolve once nothing is in flight (never rejects).
    function flush() {
      if (running) {
        again = true;
        return running;
      }
      running = sendPending().finally(() => {
        running = null;
        if (again) {
          again = false;
          return flush();
        }
        return undefined;
      });
      return running;
    }

    async function sendPending() {
      if (config.closed || !hasPending()) return;
      const reason = reasonInput ? reasonInput.value.trim() : "";
      if (config.submitted && !reason) {
        setStatus("waiting", "Not saved yet: press r, give a reason for the revision, then Enter");
        return;
      }
      const entries = Object.entries(pending.changes);
      const sent = Object.fromEntries(entries);
      const seconds = takeElapsed();
      setStatus("saving", "Saving…");
      let response;
      try {
        response = await post(config.grades_url, {
          changes: changesOf(entries),
          elapsed_seconds: seconds,
          reason,
        });
      } catch (error) {
        elapsed += seconds;
        setStatus("offline", "Offline — will retry");
        scheduleRetry();
        return;
      }
      const body = await response.json().catch(() => null);
      if (response.ok) {
        forget(sent);
        retryMs = RETRY_MIN_MS;
        hideFailure();
        setStatus("saved", hasPending() ? "Saving…" : "Saved");
        if (hasPending()) again = true;
        return;
      }
      if (response.status === 400 || response.status === 409) {
        // Refused on its merits (a bad value, a closed session): retrying cannot help.
        forget(sent);
        setStatus("error", `Not saved: ${errorMessage(body, response.status)}`);
        await resync();
        return;
      }
      elapsed += seconds;
      setStatus("offline", `Not saved (${errorMessage(body, response.status)}) — will retry`);
      scheduleRetry();
    }

    async function resync() {
      try {
        const response = await fetch(config.detail_url, {
          credentials: "same-origin",
          headers: { Accept: "application/json" },
        });
        if (!response.ok) return;
        const detail = await response.json();
        allFields.forEach((fieldset) => {
          if (Object.prototype.hasOwnProperty.call(pending.changes, nameOf(fieldset))) return;
          const unit = detail.grades[fieldset.dataset.unit] || {};
          setValue(fieldset, unit[fieldset.dataset.field] || "");
        });
        units.forEach(refreshUnit);
        refreshCount();
      } catch (error) {
        // Offline: the page keeps what the grader sees; the next save will tell.
      }
    }

    function heartbeat() {
      if (document.hidden || config.closed || running) return;
      if (hasPending()) {
        flush();
        return;
      }
      const seconds = takeElapsed();
      if (seconds < 1) {
        elapsed += seconds;
        return;
      }
      post(config.heartbeat_url, { elapsed_seconds: seconds })
        .then((response) => {
          if (response.status >= 500) elapsed += seconds;
        })
        .catch(() => {
          elapsed += seconds;
        });
    }

    // The page is going away: send what is left without waiting for the answer. The copy in
    // localStorage stays until a page load sees it acknowledged (a resend changes nothing).
    function farewell() {
      if (config.closed) return;
      const seconds = takeElapsed();
      const reason = reasonInput ? reasonInput.value.trim() : "";
      if (hasPending() && (!config.submitted || reason)) {
        post(
          config.grades_url,
          { changes: changesOf(Object.entries(pending.changes)), elapsed_seconds: seconds, reason },
          true,
        ).catch(() => undefined);
      } else if (seconds >= 1) {
        post(config.heartbeat_url, { elapsed_seconds: seconds }, true).catch(() => undefined);
      }
    }

    // ---- submitting ----------------------------------------------------------------------
    let submitting = false;

    function hideFailure() {
      errorBox.hidden = true;
      missingBox.hidden = true;
    }

    function showFailure(message, missing) {
      errorBox.textContent = message;
      errorBox.hidden = false;
      missingList.replaceChildren();
      missing.forEach((item) => {
        const fieldset = byName.get(`${item.unit_key}${SEPARATOR}${item.field}`);
        const entry = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.className = "link";
        const legend = fieldset ? fieldset.querySelector("legend") : null;
        button.textContent = `${item.unit_key} · ${legend ? legend.textContent : item.field}`;
        button.addEventListener("click", () => focusField(fieldset));
        entry.appendChild(button);
        missingList.appendChild(entry);
      });
      missingBox.hidden = missing.length === 0;
      if (missing.length) focusField(byName.get(`${missing[0].unit_key}${SEPARATOR}${missing[0].field}`));
    }

    async function submitAssignment() {
      if (config.closed || submitting) return;
      if (config.submitted) {
        setStatus("saved", "Already submitted: changes are revisions");
        return;
      }
      submitting = true;
      await flush();
      if (hasPending()) {
        setStatus("offline", "Offline — submit again once saved");
        submitting = false;
        return;
      }
      const seconds = takeElapsed();
      setStatus("saving", "Submitting…");
      try {
        const response = await post(config.submit_url, { elapsed_seconds: seconds });
        const body = await response.json().catch(() => null);
        if (response.ok) {
          setStatus("saved", "Submitted");
          window.location.assign(body.next_page);
          return;
        }
        elapsed += seconds;
        const details = (body && body.error && body.error.details) || [];
        setStatus("error", "Not submitted");
        showFailure(
          errorMessage(body, response.status),
          details.filter((item) => item.unit_key),
        );
      } catch (error) {
        elapsed += seconds;
        setStatus("offline", "Offline — submit again once saved");
      }
      submitting = false;
    }

    // ---- focus and keys ------------------------------------------------------------------
    let lastField = null;

    function visibleFields(root) {
      return Array.from(root.querySelectorAll(".ws-field")).filter((fieldset) => !fieldset.hidden);
    }

    function markCurrent(unit) {
      units.forEach((each) => each.classList.toggle("is-current", each === unit));
    }

    function focusField(fieldset) {
      if (!fieldset || fieldset.disabled) return;
      const input = fieldset.querySelector("input:checked") || fieldset.querySelector("input");
      const unit = fieldset.closest(".ws-unit");
      input.focus({ preventScroll: true });
      unit.scrollIntoView({ block: "nearest" });
      markCurrent(unit);
      lastField = fieldset;
    }

    function currentField() {
      const element = document.activeElement;
      return element && element.closest ? element.closest(".ws-field") : null;
    }

    function currentUnit() {
      const field = currentField() || lastField;
      return field ? field.closest(".ws-unit") : null;
    }

    function moveField(step) {
      const list = visibleFields(form);
      const current = currentField() || lastField;
      const index = current ? list.indexOf(current) + step : step > 0 ? 0 : list.length - 1;
      if (index >= 0 && index < list.length) focusField(list[index]);
    }

    function moveUnit(step) {
      const list = units.filter((unit) => visibleFields(unit).length);
      const current = currentUnit();
      const index = current ? list.indexOf(current) + step : step > 0 ? 0 : list.length - 1;
      if (index >= 0 && index < list.length) focusField(visibleFields(list[index])[0]);
    }

    function advance(fieldset) {
      const list = visibleFields(form);
      const index = list.indexOf(fieldset);
      if (index + 1 < list.length) focusField(list[index + 1]);
      else if (submitButton) submitButton.focus();
    }

    function pick(fieldset, input) {
      if (input.disabled) return;
      if (!input.checked) {
        input.checked = true;
        record(fieldset, input.value);
      }
      advance(fieldset);
    }

    function choiceFor(fieldset, key) {
      const inputs = Array.from(fieldset.querySelectorAll("input"));
      return (
        inputs.find((input) => input.dataset.digit === key) ||
        inputs.find((input) => input.dataset.letter && input.dataset.letter === key) ||
        null
      );
    }

    function clear(fieldset) {
      if (!fieldset || fieldset.disabled || valueOf(fieldset) === "") return;
      setValue(fieldset, "");
      record(fieldset, "");
    }

    function isTyping(target) {
      if (!(target instanceof HTMLElement)) return false;
      if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") {
        return true;
      }
      return target.tagName === "INPUT" && target.type !== "radio";
    }

    function onKey(event) {
      if (event.defaultPrevented || event.isComposing) return;
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submitAssignment();
        return;
      }
      if (isTyping(event.target)) {
        if (event.key === "Escape") {
          event.preventDefault();
          event.target.blur();
          focusField(lastField || visibleFields(form)[0]);
        } else if (event.key === "Enter" && event.target === reasonInput) {
          event.preventDefault();
          flush();
          focusField(lastField);
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      const field = currentField();
      let handled = true;
      if (key === "?") {
        helpBody.hidden = !helpBody.hidden;
      } else if (key === "j" || key === "ArrowDown") {
        moveUnit(1);
      } else if (key === "k" || key === "ArrowUp") {
        moveUnit(-1);
      } else if (key === "ArrowRight") {
        moveField(1);
      } else if (key === "ArrowLeft") {
        moveField(-1);
      } else if (key === "s") {
        submitAssignment();
      } else if (key === "r" && reasonInput) {
        reasonInput.focus();
      } else if (key === "Delete" || key === "Backspace") {
        clear(field);
      } else if (field && key.length === 1 && !reserved.has(key)) {
        const input = choiceFor(field, key);
        if (input) pick(field, input);
        else handled = false;
      } else {
        handled = false;
      }
      if (handled) event.preventDefault();
    }

    // ---- wiring --------------------------------------------------------------------------
    // Changes still pending from an earlier visit are newer than the page: show them, send them.
    Object.entries(pending.changes).forEach(([name, value]) => {
      const fieldset = byName.get(name);
      if (fieldset) setValue(fieldset, value);
      else delete pending.changes[name];
    });
    units.forEach(refreshUnit);
    refreshCount();

    form.addEventListener("change", (event) => {
      const input = event.target;
      if (!(input instanceof HTMLInputElement) || input.type !== "radio") return;
      record(input.closest(".ws-field"), input.value);
    });
    form.addEventListener("focusin", (event) => {
      const fieldset = event.target.closest ? event.target.closest(".ws-field") : null;
      if (fieldset) {
        lastField = fieldset;
        markCurrent(fieldset.closest(".ws-unit"));
      }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (event.submitter && event.submitter.value === "submit") submitAssignment();
      else flush();
    });
    if (reasonInput) {
      reasonInput.addEventListener("change", () => flush());
    }
    document.addEventListener("keydown", onKey);
    document.addEventListener("visibilitychange", () => {
      tick();
      if (document.hidden) farewell();
    });
    window.addEventListener("pagehide", farewell);
    window.addEventListener("online", () => flush());
    window.setInterval(heartbeat, HEARTBEAT_MS);

    if (hasPending()) flush();
    if (!config.closed) {
      const missing = visibleFields(form).find((fieldset) => valueOf(fieldset) === "");
      focusField(missing || visibleFields(form)[0]);
    }
    // The keys work from here on (a test or an assistive tool can wait for this marker).
    form.dataset.keyboard = "ready";
  }

  document.addEventListener("DOMContentLoaded", () => {
    const element = document.getElementById("ws-config");
    if (element) start(JSON.parse(element.textContent));
  });
})();
