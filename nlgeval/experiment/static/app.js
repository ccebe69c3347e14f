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
  // only) so that the whole tuple stays in view; a text that is cut becomes a toggle (tap,
  // Enter or Space) that shows it in full and cuts it again.
  document.querySelectorAll(".judged.tuple").forEach(function (panel) {
    panel.classList.add("compact");
    var boxes = panel.querySelectorAll(".context, .output");
    var mark = function () {
      boxes.forEach(function (box) {
        var text = box.querySelector(".text");
        var open = box.classList.contains("expanded");
        if (open || (text && text.scrollHeight > text.clientHeight + 1)) {
          box.setAttribute("role", "button");
          box.setAttribute("tabindex", "0");
          box.setAttribute("aria-expanded", open ? "true" : "false");
        } else {
          box.removeAttribute("role");
          box.removeAttribute("tabindex");
          box.removeAttribute("aria-expanded");
        }
      });
    };
    boxes.forEach(function (box) {
      var toggle = function () {
        if (!box.hasAttribute("aria-expanded")) { return; }
        box.classList.toggle("expanded");
        mark();
      };
      box.addEventListener("click", toggle);
      box.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); }
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
