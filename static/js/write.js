// Writing in character: a draft that survives a reload, a character count, pastes
// reported to the server (staff see them as a flag), a paste too long for the field
// announced and kept to copy from, Ctrl/⌘+Enter sends.
// Bound on htmx:load as well, like annotate.js, although writing forms are full pages.
(function () {
  "use strict";

  function key(form) { return "chatanime-draft:" + form.dataset.draftKey; }

  function draft(form) {
    var values = {};
    form.querySelectorAll("textarea[name]").forEach(function (field) { values[field.name] = field.value; });
    return JSON.stringify(values);
  }

  function save(form) {
    try { localStorage.setItem(key(form), draft(form)); } catch (e) { /* private mode, full */ }
  }

  function restore(form) {
    var raw = null;
    // A draft sent but never confirmed (the connection dropped, the server was down) is
    // kept for this tab: coming back to the task brings the text back.
    try { raw = localStorage.getItem(key(form)) || sessionStorage.getItem(key(form)); } catch (e) { return; }
    if (!raw) { return; }
    var values = null;
    try { values = JSON.parse(raw); } catch (e) { return; }
    if (!values || typeof values !== "object") { return; }
    form.querySelectorAll("textarea[name]").forEach(function (field) {
      // Text the server sent back (a refused submission) wins over the draft.
      if (!field.value && values[field.name]) { field.value = values[field.name]; }
    });
  }

  function count(form) {
    var field = form.querySelector("textarea[name=answer], textarea[name=question]");
    var counter = form.querySelector("[data-count]");
    if (!field || !counter) { return; }
    // Characters as a person counts them (code points), like the server's limits.
    var n = Array.from(field.value.trim()).length;
    counter.textContent = String(n);
    var guidance = parseInt(form.dataset.guidance || "0", 10);
    var max = parseInt(form.dataset.max || "0", 10);
    counter.classList.toggle("over", (guidance > 0 && n > guidance * 2) || (max > 0 && n > max));
  }

  function codePoints(text) { return Array.from(text).length; }

  // A paste longer than the room left would go in whole (the field's maxlength is only a
  // backstop) and be refused on sending. Put in what fits ourselves, counted in code
  // points as the server counts, say so, and show the whole paste (in a field that is
  // never sent).
  function pasteTooLong(form, event) {
    var field = event.target;
    var max = parseInt(form.dataset.max || "0", 10);
    if (!field || field.tagName !== "TEXTAREA" || !field.name || !(max > 0)) { return; }
    if (!event.clipboardData) { return; }
    var text = event.clipboardData.getData("text/plain");
    var start = field.selectionStart;
    var end = field.selectionEnd;
    var others = field.value.slice(0, start) + field.value.slice(end);
    var room = max - codePoints(others);
    if (codePoints(text) <= room) { return; }
    var notice = form.querySelector("[data-paste-cut]");
    if (!notice) { return; }
    event.preventDefault();
    var kept = Array.from(text).slice(0, Math.max(0, room)).join("");
    field.setRangeText(kept, start, end, "end");
    field.dispatchEvent(new Event("input", { bubbles: true }));
    notice.querySelector("[data-paste-message]").textContent = notice.dataset.message
      .replace("{pasted}", String(codePoints(text)))
      .replace("{kept}", String(codePoints(kept)))
      .replace("{max}", String(max));
    notice.querySelector("[data-pasted]").value = text;
    notice.hidden = false;
  }

  function bind(form) {
    if (form._bound) { return; }
    form._bound = true;
    restore(form);
    count(form);
    var pastes = form.querySelector("[data-pastes]");
    form.addEventListener("input", function () { save(form); count(form); });
    form.addEventListener("paste", function (event) {
      if (pastes) { pastes.value = String(parseInt(pastes.value || "0", 10) + 1); }
      pasteTooLong(form, event);
    });
    form.addEventListener("click", function (event) {
      var dismiss = event.target.closest("[data-paste-dismiss]");
      if (dismiss) { dismiss.closest("[data-paste-cut]").hidden = true; }
    });
    form.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", function () {
      // The draft is dropped once sent; a refused submission comes back with the text.
      // Until this tab is closed a copy stays, for a submission that never arrived.
      try {
        sessionStorage.setItem(key(form), draft(form));
        localStorage.removeItem(key(form));
      } catch (e) { /* ignore */ }
    });
    form.dataset.ready = "true";
  }

  function bindAll(root) {
    (root || document).querySelectorAll("form.writing-form").forEach(bind);
  }

  document.addEventListener("DOMContentLoaded", function () { bindAll(document); });
  document.addEventListener("htmx:load", function (event) { bindAll(event.target); });
})();
