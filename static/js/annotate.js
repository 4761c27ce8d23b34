// Keyboard-first rating and a draft that survives a reload.
// Works on whatever form htmx swaps in: everything is (re)bound on htmx:load.
(function () {
  "use strict";

  function groups(form) {
    return Array.from(form.querySelectorAll("[data-group]"));
  }

  function isAnswered(group) {
    return group.querySelector("input:checked") !== null;
  }

  // Only a move the annotator made scrolls: on load the page stays at its title.
  function setActive(form, group, scroll) {
    groups(form).forEach(function (g) { g.classList.toggle("active", g === group); });
    if (group && scroll) {
      group.scrollIntoView({ block: "nearest" });
    }
    form._activeGroup = group;
  }

  function move(form, step) {
    var all = groups(form);
    var index = all.indexOf(form._activeGroup);
    var next = all[Math.min(all.length - 1, Math.max(0, index + step))];
    setActive(form, next, true);
  }

  function firstUnanswered(form) {
    return groups(form).find(function (g) { return !isAnswered(g); }) || null;
  }

  // Said in words as well as shown in red, so that a screen reader announces it; empty
  // again once every row is rated.
  function noteMissing(form, missing) {
    var note = form.querySelector(".missing-note");
    if (note) { note.textContent = missing ? note.dataset.message : ""; }
  }

  // Drafts live in this browser only, keyed by the opaque item token.
  function draftKey(form) { return "chatanime-draft:" + form.dataset.draftKey; }

  function saveDraft(form) {
    var values = {};
    new FormData(form).forEach(function (value, name) {
      if (name !== "csrfmiddlewaretoken") { values[name] = value; }
    });
    try { localStorage.setItem(draftKey(form), JSON.stringify(values)); } catch (e) { /* private mode */ }
  }

  function restoreDraft(form) {
    var raw = null;
    try { raw = localStorage.getItem(draftKey(form)); } catch (e) { return; }
    if (!raw) { return; }
    var values = JSON.parse(raw);
    Object.keys(values).forEach(function (name) {
      var value = values[name];
      var fields = form.querySelectorAll('[name="' + CSS.escape(name) + '"]');
      fields.forEach(function (field) {
        if (field.type === "radio") {
          if (field.value === value && !form.querySelector('[name="' + CSS.escape(name) + '"]:checked')) {
            field.checked = true;
          }
        } else if (!field.value) {
          field.value = value;
        }
      });
    });
  }

  function noteSendFailed(form, failed) {
    var note = form.querySelector(".send-failed");
    if (note) { note.textContent = failed ? note.dataset.message : ""; }
  }

  function clearDraft(form) {
    try { localStorage.removeItem(draftKey(form)); } catch (e) { /* ignore */ }
  }

  // The comment's count, shown from 90% of its limit on: counted in characters as a
  // person counts them, like the server, which refuses a longer comment rather than cut
  // it (the field's maxlength is only a backstop; see _controls.html). Over the limit it
  // says by how much, so a pasted text is not sent to be refused.
  function countComment(form) {
    var field = form.querySelector("textarea[name=comment][data-max]");
    var counter = form.querySelector("[data-testid=comment-count]");
    if (!field || !counter) { return; }
    var max = parseInt(field.dataset.max, 10);
    var n = Array.from(field.value.trim().replace(/\r\n/g, "\n")).length;
    var over = n > max;
    counter.hidden = n < max * 0.9;
    counter.classList.toggle("over", over);
    var words = over ? counter.dataset.over : counter.dataset.message;
    counter.textContent = words
      .replace("{n}", n.toLocaleString())
      .replace("{max}", max.toLocaleString())
      .replace("{over}", (n - max).toLocaleString());
  }

  function bind(form) {
    if (form._bound) { return; }
    form._bound = true;
    restoreDraft(form);
    countComment(form);
    setActive(form, firstUnanswered(form) || groups(form)[0]);
    form.dataset.ready = "true";

    form.addEventListener("change", function (event) {
      saveDraft(form);
      if (!firstUnanswered(form)) { noteMissing(form, null); }
      var group = event.target.closest("[data-group]");
      if (group) { setActive(form, group, true); }
    });
    form.addEventListener("input", function () { saveDraft(form); countComment(form); });
    form.addEventListener("focusin", function (event) {
      var group = event.target.closest("[data-group]");
      if (group) { setActive(form, group); }
    });
    // The draft goes only once the server has said what became of the rating: saved
    // (2xx) or the item gone (409: submitted, skipped, its time ran out, the study
    // closed). A paused study's refusal says "Rating-Draft: keep": the item may come back
    // when the study reopens, with its draft. A send that never arrived (a dropped
    // connection on a phone) or failed keeps it, so a reload brings every rating back,
    // and says so.
    form.addEventListener("submit", function () { noteSendFailed(form, false); });
    form.addEventListener("htmx:afterRequest", function (event) {
      if (event.detail.elt !== form) { return; }
      var xhr = event.detail.xhr;
      var status = xhr ? xhr.status : 0;
      if (status === 409) {
        if (xhr.getResponseHeader("Rating-Draft") !== "keep") { clearDraft(form); }
      } else if (status >= 200 && status < 300) {
        clearDraft(form);
      } else if (status !== 422 && status !== 503) {
        noteSendFailed(form, true);
      }
    });
    form.addEventListener("click", function (event) {
      var group = event.target.closest("[data-group]");
      if (group) { setActive(form, group); }
    });
  }

  // Where the rating shortcuts apply: in a rating row, or when nothing has the focus
  // (right after the page loads). Everywhere else keys keep their native meaning:
  // Enter presses a focused button, follows a link, opens a definition, and types a
  // line break in the comment.
  function inRatingRow(form, target) {
    if (target === document.body || target === document.documentElement || target === form) {
      return true;
    }
    return form.contains(target) && target.tagName === "INPUT" && target.type === "radio" &&
      target.closest("[data-group]") !== null;
  }

  function jumpToSubmit(event) {
    var link = event.target.closest("a.to-submit");
    if (!link) { return; }
    var form = link.closest("form.rating-form");
    event.preventDefault();
    var missing = firstUnanswered(form);
    if (missing) { form.classList.add("show-missing"); }
    noteMissing(form, missing);
    form.querySelector("button[type=submit]").focus();
  }
  document.addEventListener("click", jumpToSubmit);

  document.addEventListener("keydown", function (event) {
    var form = document.querySelector("form.rating-form");
    if (!form || event.ctrlKey || event.metaKey || event.altKey) { return; }
    // Once every row is rated the focus waits on Submit; from there ↑ goes back into the
    // rows and digits still change the highlighted row, so a rater can correct one.
    var onSubmit = event.target === form.querySelector("button[type=submit]");
    if (!onSubmit && !inRatingRow(form, event.target)) { return; }
    var group = form._activeGroup;
    if (/^[1-9]$/.test(event.key) && group) {
      var input = group.querySelector('input[data-key="' + event.key + '"]');
      if (input) {
        event.preventDefault();
        // A digit in a row that was already rated corrects it and stays there: ↑ ↓ go on
        // from it, Enter submits. A first rating moves on to what is still missing.
        var correcting = isAnswered(group);
        var hadFocus = document.activeElement && document.activeElement.closest("form") === form;
        input.checked = true;
        input.dispatchEvent(new Event("change", { bubbles: true }));
        if (correcting) {
          setActive(form, group, true);
          if (hadFocus) { input.focus({ preventScroll: true }); }
          return;
        }
        var next = firstUnanswered(form);
        setActive(form, next || group, true);
        if (next) {
          var first = next.querySelector("input");
          if (first && document.activeElement && document.activeElement.closest("form") === form) {
            (next.querySelector("input:checked") || first).focus({ preventScroll: true });
          }
        } else {
          form.querySelector("button[type=submit]").focus({ preventScroll: true });
        }
      }
    } else if (onSubmit) {
      // Below Submit there is no row; Enter and Space press the button as usual.
      if (event.key === "ArrowUp") {
        event.preventDefault();
        var rows = groups(form);
        setActive(form, rows[rows.length - 1], true);
        var last = form._activeGroup && (form._activeGroup.querySelector("input:checked") || form._activeGroup.querySelector("input"));
        if (last) { last.focus({ preventScroll: true }); }
      }
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      move(form, event.key === "ArrowDown" ? 1 : -1);
      var focusTarget = form._activeGroup && (form._activeGroup.querySelector("input:checked") || form._activeGroup.querySelector("input"));
      if (focusTarget) { focusTarget.focus({ preventScroll: true }); }
    } else if (event.key === "Enter") {
      event.preventDefault();
      var missing = firstUnanswered(form);
      if (missing) {
        setActive(form, missing, true);
        form.classList.add("show-missing");
        noteMissing(form, missing);
        // The row itself takes the focus: a screen reader names it, and digits rate it.
        (missing.querySelector("input") || missing).focus({ preventScroll: true });
      } else {
        form.requestSubmit();
      }
    }
  });

  // The item's reservation, counted down from the seconds the server gave when it drew
  // the line (the phone's own clock may be wrong). Every few seconds the line says how
  // long is left; from the warning on it offers to keep the item, and once the time is
  // over it says that ratings sent now are refused, before they are sent.
  function countDown(line) {
    if (line._deadline) { return; }
    line._deadline = Date.now() + parseInt(line.dataset.secondsLeft, 10) * 1000;
    var warning = parseInt(line.dataset.warningSeconds, 10) * 1000;
    var text = line.querySelector(".reservation-text");
    var keep = line.querySelector("form.keep");
    function tick() {
      if (!line.isConnected) { clearInterval(line._timer); return; }
      var left = line._deadline - Date.now();
      var minutes = Math.ceil(left / 60000);
      var state = left <= 0 ? "over" : left <= warning ? "soon" : "left";
      var words = state === "over" ? line.dataset.over
        : line.dataset[state + (minutes === 1 ? "One" : "Other")].replace("{m}", minutes);
      if (state === "over") { clearInterval(line._timer); }
      if (line._state && line._state !== state) {
        // Said once for a screen reader as the line turns; the countdown itself is not.
        line.querySelector("[role=status]").textContent = words;
      }
      line._state = state;
      line.classList.toggle("soon", state !== "left");
      line.classList.toggle("over", state === "over");
      if (keep) { keep.hidden = state !== "soon"; }
      // Rewritten only when it changes (a minute's step, not every tick).
      if (text.textContent.trim() !== words) { text.textContent = words; }
    }
    tick();
    line._timer = setInterval(tick, 5000);
  }

  function init(root) {
    (root.querySelectorAll ? root : document).querySelectorAll("form.rating-form").forEach(bind);
    if (root.matches && root.matches("form.rating-form")) { bind(root); }
    (root.querySelectorAll ? root : document).querySelectorAll(".reservation[data-seconds-left]").forEach(countDown);
    if (root.matches && root.matches(".reservation[data-seconds-left]")) { countDown(root); }
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (event) { init(event.target); });
})();
