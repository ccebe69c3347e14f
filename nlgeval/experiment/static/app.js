// nlgeval experiment pages: no framework, no external assets; everything works without it too.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // Visual analogue scales: a slider counts as rated only once it was moved (or "confirm" ticked).
  document.querySelectorAll("input[type=range][data-moved-field]").forEach(function (slider) {
    var form = slider.form;
    var moved = form.querySelector("input[name='" + slider.dataset.movedField + "']");
    var mark = function () {
      moved.value = "1";
      slider.closest(".vas").classList.add("moved");
    };
    slider.addEventListener("input", mark);
    slider.addEventListener("change", mark);
  });
  // A best-worst tuple on a phone: the CSS cuts each text to a few lines (narrow screens
  // only) so that the whole tuple stays in view. A text that is cut gets a small toggle
  // button under its label (its accessible name is the label; Enter or Space) that shows it
  // in full and cuts it again; a tap on a cut text shows it in full too. A click or a
  // selection inside a text shown in full leaves it open (evaluators select words there),
  // only its toggle cuts it again.
  document.querySelectorAll(".judged.tuple").forEach(function (panel, p) {
    panel.classList.add("compact");
    var boxes = [];
    panel.querySelectorAll(".context, .output").forEach(function (box, k) {
      var head = box.querySelector("h2");
      var text = box.querySelector(".text");
      if (!head || !text) { return; }
      text.id = text.id || "tuple-" + p + "-text-" + k;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "toggle";
      button.hidden = true;
      button.setAttribute("aria-controls", text.id);
      button.setAttribute("aria-label", head.textContent.trim());
      box.appendChild(button);
      boxes.push({box: box, text: text, button: button});
    });
    var mark = function () {
      boxes.forEach(function (b) {
        var open = b.box.classList.contains("expanded");
        var cut = b.text.scrollHeight > b.text.clientHeight + 1;
        b.button.hidden = !(open || cut);
        b.button.setAttribute("aria-expanded", open ? "true" : "false");
        b.box.classList.toggle("cut", cut && !open);
      });
    };
    boxes.forEach(function (b) {
      b.button.addEventListener("click", function (e) {
        e.stopPropagation();
        b.box.classList.toggle("expanded");
        mark();
      });
      b.box.addEventListener("click", function () {
        var sel = window.getSelection ? window.getSelection() : null;
        if (sel && !sel.isCollapsed && b.box.contains(sel.anchorNode)) { return; }
        if (b.box.classList.contains("cut")) {  // a tap on a cut text: shown in full
          b.box.classList.add("expanded");
          mark();
        }
      });
    });
    mark();
    window.addEventListener("resize", mark);
  });
  // Focus the first problem of a re-shown form.
  var bad = document.querySelector(".invalid input, .invalid textarea");
  if (bad) { bad.focus(); }
  // One submit per page (the server is idempotent anyway).
  document.querySelectorAll("form").forEach(function (form) {
    form.addEventListener("submit", function () {
      var b = form.querySelector("button[type=submit]");
      if (b) { setTimeout(function () { b.disabled = true; }, 0); }
    });
  });
});
