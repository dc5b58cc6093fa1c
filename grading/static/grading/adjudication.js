// One artefact's disputed fields, keyboard first (no inline script: the CSP forbids it).
//
// The page is a plain form that works without this file; nothing is recorded until it is
// submitted (one POST for the artefact). Here: j/k (↓/↑) move between the disputed fields,
// 1/2 take Grader 1's/2's value for the field and move on, Shift+1/Shift+2 take it for every
// remaining field without a choice, a–d choose any allowed value, Delete clears, r goes to
// the note, s or Ctrl+Enter saves, n/p go to the next/previous artefact, ? toggles the help.
// A dependent field (s2 supported, asked only of an assertive sentence) whose parent is
// pending is offered only once the parent's choice asks for it; otherwise it is skipped and
// its inputs disabled (the server refuses the contradiction anyway).
(function () {
  "use strict";

  function start(config) {
    const form = document.getElementById("adj-form");
    const helpBody = document.getElementById("adj-help-body");
    const fields = Array.from(form.querySelectorAll(".dispute.is-pending"));
    let current = null;

    document.querySelectorAll(".adj-take").forEach((element) => {
      element.hidden = false;
    });

    function parentOf(field) {
      const parent = field.dataset.dependsOn;
      if (!parent) return null;
      return fields.find(
        (each) => each.dataset.unit === field.dataset.unit && each.dataset.field === parent,
      );
    }

    function offered(field) {
      const parent = parentOf(field);
      if (!parent) return true;
      const picked = parent.querySelector("input[type=radio]:checked");
      return picked !== null && field.dataset.askedWhen.split(" ").includes(picked.value);
    }

    // Enable each dependent field only while its parent's choice asks for it.
    function sync() {
      fields.forEach((field) => {
        const parent = parentOf(field);
        if (!parent) return;
        const open = offered(field);
        const picked = parent.querySelector("input[type=radio]:checked") !== null;
        field.querySelectorAll("input, textarea").forEach((input) => {
          input.disabled = !open;
          if (!open && input.type === "radio") input.checked = false;
        });
        field.classList.toggle("is-waiting", !open);
        const moot = field.querySelector(".adj-moot");
        if (moot) moot.hidden = open || !picked;
      });
    }

    function focusField(field) {
      if (!field) return;
      fields.forEach((each) => each.classList.toggle("is-current", each === field));
      field.focus({ preventScroll: true });
      field.scrollIntoView({ block: "nearest" });
      current = field;
    }

    function chosen(field) {
      return field.querySelector("input[type=radio]:checked") !== null;
    }

    function choose(field, value) {
      const input = Array.from(field.querySelectorAll("input[type=radio]")).find(
        (each) => each.value === value,
      );
      if (!input) return false;
      input.checked = true;
      return true;
    }

    function graderValue(field, grader) {
      const given = field.querySelector(`.grader-values [data-grader="${grader}"]`);
      return given && given.dataset.value ? given.dataset.value : null;
    }

    function take(field, grader) {
      if (!offered(field)) return false;
      const value = graderValue(field, grader);
      const taken = value !== null && choose(field, value);
      sync();
      return taken;
    }

    function move(step) {
      const open = fields.filter((field) => field === current || offered(field));
      const index = current ? open.indexOf(current) + step : step > 0 ? 0 : open.length - 1;
      if (index >= 0 && index < open.length) focusField(open[index]);
    }

    function advance() {
      const index = fields.indexOf(current);
      const next = fields.slice(index + 1).find((field) => offered(field) && !chosen(field));
      if (next) focusField(next);
      else form.querySelector("button[value=save]").focus();
    }

    // In page order, so a parent is taken before the field that depends on it.
    function takeRemaining(grader) {
      fields.forEach((field) => {
        if (!chosen(field)) take(field, grader);
      });
    }

    function save() {
      const button = form.querySelector("button[value=save]");
      if (button) form.requestSubmit(button);
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
        save();
        return;
      }
      if (isTyping(event.target)) {
        if (event.key === "Escape") {
          event.preventDefault();
          event.target.blur();
          focusField(current || fields[0]);
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const digit = /^Digit([1-9])$/.exec(event.code || "");
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      let handled = true;
      if (key === "?") {
        helpBody.hidden = !helpBody.hidden;
      } else if (digit && event.shiftKey) {
        takeRemaining(Number(digit[1]));
      } else if (/^[1-9]$/.test(key) && current) {
        if (take(current, Number(key))) advance();
      } else if (key === "j" || key === "ArrowDown") {
        move(1);
      } else if (key === "k" || key === "ArrowUp") {
        move(-1);
      } else if ("abcd".includes(key) && key.length === 1 && current) {
        const input = current.querySelector(`input[data-letter="${key}"]`);
        if (input && !input.disabled) {
          input.checked = true;
          sync();
          advance();
        }
      } else if ((key === "Delete" || key === "Backspace") && current) {
        current.querySelectorAll("input[type=radio]").forEach((input) => {
          input.checked = false;
        });
        sync();
      } else if (key === "r" && current) {
        const note = current.querySelector("textarea");
        if (note) note.focus();
      } else if (key === "s") {
        save();
      } else if (key === "n" && config.next_url) {
        window.location.assign(config.next_url);
      } else if (key === "p" && config.previous_url) {
        window.location.assign(config.previous_url);
      } else {
        handled = false;
      }
      if (handled) event.preventDefault();
    }

    form.addEventListener("click", (event) => {
      const button = event.target.closest ? event.target.closest("button[data-take]") : null;
      if (!button) return;
      const field = button.closest(".dispute");
      focusField(field);
      if (take(field, Number(button.dataset.take))) advance();
    });
    form.addEventListener("focusin", (event) => {
      const field = event.target.closest ? event.target.closest(".dispute.is-pending") : null;
      if (field && field !== current) {
        fields.forEach((each) => each.classList.toggle("is-current", each === field));
        current = field;
      }
    });
    form.addEventListener("change", sync);
    document.addEventListener("keydown", onKey);
    sync();
    if (config.can_adjudicate) focusField(fields[0]);
    // The keys work from here on (a test or an assistive tool can wait for this marker).
    form.dataset.keyboard = "ready";
  }

  document.addEventListener("DOMContentLoaded", () => {
    const element = document.getElementById("adj-config");
    if (element) start(JSON.parse(element.textContent));
  });
})();
