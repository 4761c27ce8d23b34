// The browser words its own complaint about a box left empty in the browser's language,
// not the page's: a Chinese page in an English browser said "Please fill out this field."
// Here the complaint is the page's, in the page's language (the words are translated on
// the <body> element's data attributes). The browser still decides what is invalid.
(function () {
  "use strict";
  const words = document.body.dataset;

  function complaint(field) {
    const validity = field.validity;
    if (validity.valueMissing) {
      if (field.type === "checkbox") return words.msgTick;
      if (field.type === "radio" || field.tagName === "SELECT") return words.msgChoose;
      return words.msgFill;
    }
    if (validity.typeMismatch && field.type === "email") return words.msgEmail;
    if (validity.tooShort) return words.msgTooShort.replace("{n}", field.minLength);
    return "";
  }

  function clear(field) {
    // A radio group is valid or not as a whole: every button of it is cleared together.
    const group =
      field.type === "radio" && field.form && field.name
        ? Array.from(field.form.elements).filter((other) => other.name === field.name)
        : [field];
    group.forEach((member) => member.setCustomValidity && member.setCustomValidity(""));
  }

  document.addEventListener(
    "invalid",
    (event) => {
      const field = event.target;
      // This field alone: the browser asks each button of a radio group in turn.
      field.setCustomValidity("");
      if (!field.validity.valid) {
        const text = complaint(field);
        if (text) field.setCustomValidity(text);
      }
    },
    true,
  );
  // The language switch goes back to the page as it is now: htmx changes the address as
  // it swaps in the next rating item, after the switch's return address was written.
  document.addEventListener(
    "submit",
    (event) => {
      const form = event.target;
      const next = form.matches && form.matches("form.lang") && form.querySelector("input[name=next]");
      if (next) next.value = location.pathname + location.search;
    },
    true,
  );
  ["input", "change"].forEach((kind) =>
    document.addEventListener(kind, (event) => event.target.setCustomValidity && clear(event.target), true),
  );
})();
