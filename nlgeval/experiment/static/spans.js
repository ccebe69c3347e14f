// Error-span marking (MQM, Freitag et al. 2021; ESA, Kocmi et al. 2024): no framework.
// Offsets are code points into the output (as Python counts them); the server checks them
// against the text and the quoted part. Mouse and touch use the browser's own selection; the
// keyboard moves a caret in the focused text (arrows, Shift to select, Ctrl/Alt for words,
// Home/End), Enter goes to the picker, Delete removes the errors under the caret.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var box = document.querySelector("[data-spans]");
  if (!box) { return; }
  var textEl = box.querySelector(".span-text");
  var field = box.querySelector("input[name=spans]");
  var list = box.querySelector(".span-list");
  var selected = box.querySelector(".span-selected");
  var category = box.querySelector("#span-category");
  var nonTranslation = box.dataset.nonTranslation || "";
  var noErrors = document.querySelector("input[name=no_errors]");
  var chars = Array.from(textEl.textContent);
  var n = chars.length;
  var stops = [0];  // caret stops: grapheme boundaries (code point offsets)
  if (window.Intl && Intl.Segmenter) {
    var k = 0;
    for (var seg of new Intl.Segmenter(undefined, {granularity: "grapheme"}).segment(textEl.textContent)) {
      k += Array.from(seg.segment).length;
      stops.push(k);
    }
  } else {
    for (var i = 1; i <= n; i++) { stops.push(i); }
  }
  var spans = [];
  try { spans = JSON.parse(field.value || "[]"); } catch (e) { spans = []; }
  var caret = 0, anchor = null, pending = null, focused = false;

  function rtl() {
    try { return textEl.matches(":dir(rtl)"); } catch (e) {
      return getComputedStyle(textEl).direction === "rtl";
    }
  }
  function quote(s) { return s.start === null ? "" : chars.slice(s.start, s.end).join(""); }
  function keyboardSel() {
    if (anchor === null || anchor === caret) { return null; }
    return [Math.min(anchor, caret), Math.max(anchor, caret)];
  }
  function severityOf(a, b) {  // the worst severity of the spans covering [a, b)
    var worst = "";
    spans.forEach(function (s) {
      if (s.start !== null && s.start < b && a < s.end) {
        if (s.severity === "major" || worst === "") { worst = s.severity; }
      }
    });
    return worst;
  }
  function render() {
    var cuts = new Set([0, n, caret]);
    var sel = pending || keyboardSel();
    if (sel) { cuts.add(sel[0]); cuts.add(sel[1]); }
    spans.forEach(function (s) { if (s.start !== null) { cuts.add(s.start); cuts.add(s.end); } });
    var at = Array.from(cuts).sort(function (a, b) { return a - b; });
    textEl.textContent = "";
    for (var j = 0; j < at.length; j++) {
      if (focused && at[j] === caret) {
        var c = document.createElement("span");
        c.className = "caret";
        c.setAttribute("aria-hidden", "true");
        textEl.appendChild(c);
      }
      if (j + 1 >= at.length || at[j] === at[j + 1]) { continue; }
      var el = document.createElement("span");
      el.dataset.start = at[j];
      el.textContent = chars.slice(at[j], at[j + 1]).join("");
      var sev = severityOf(at[j], at[j + 1]);
      if (sev) { el.className = "err " + sev; }
      if (sel && at[j] >= sel[0] && at[j + 1] <= sel[1]) { el.classList.add("sel"); }
      textEl.appendChild(el);
    }
    var s2 = pending || keyboardSel();
    selected.textContent = s2 ? "“" + chars.slice(s2[0], s2[1]).join("") + "”" : "";
    field.value = JSON.stringify(spans);
    renderList();
  }
  function label(s) {
    var sevLabel = box.querySelector("input[name=span_severity][value=" + s.severity + "]");
    var parts = [];
    if (s.category) { parts.push(s.category); }
    parts.push(sevLabel ? sevLabel.parentNode.textContent.trim() : s.severity);
    return parts.join(" · ");
  }
  function renderList() {
    list.textContent = "";
    if (!spans.length) {
      var none = document.createElement("li");
      none.className = "none";
      none.textContent = box.dataset.msgNone;
      list.appendChild(none);
    }
    spans.forEach(function (s, idx) {
      var li = document.createElement("li");
      li.className = "err " + s.severity;
      var q = document.createElement("bdi");
      q.className = "quote";
      q.textContent = s.start === null ? "(" + box.dataset.msgUnlocated + ")" : "“" + quote(s) + "”";
      li.appendChild(q);
      li.appendChild(document.createTextNode(" " + label(s) + " "));
      var del = document.createElement("button");
      del.type = "button";
      del.className = "span-del";
      del.textContent = box.dataset.msgDelete;
      del.setAttribute("aria-label", box.dataset.msgDelete + ": " + (quote(s) || box.dataset.msgUnlocated));
      del.addEventListener("click", function () { remove(idx); });
      li.appendChild(del);
      list.appendChild(li);
    });
  }
  function remove(idx) {
    spans.splice(idx, 1);
    render();
    var dels = list.querySelectorAll(".span-del");
    (dels[Math.min(idx, dels.length - 1)] || textEl).focus();
  }
  function add(start, end) {
    var sevInput = box.querySelector("input[name=span_severity]:checked");
    var s = {start: start, end: end, category: category ? category.value : "",
             severity: sevInput ? sevInput.value : "minor"};
    if (nonTranslation && s.category === nonTranslation) {
      // a non-translation is major and replaces every other error (Freitag et al. 2021)
      spans = [{start: 0, end: n, category: s.category, severity: "major"}];
    } else {
      spans = spans.filter(function (t) { return t.category !== nonTranslation || !nonTranslation; });
      spans.push(s);
    }
    spans.forEach(function (t) { t.quote = quote(t); });
    if (noErrors) { noErrors.checked = false; }
    anchor = null;
    pending = null;
    render();
  }
  function offsetOf(node, off) {  // a DOM position inside the text -> code point offset
    if (node === textEl) {
      var kids = Array.prototype.slice.call(textEl.childNodes, 0, off);
      return kids.reduce(function (acc, c) { return acc + Array.from(c.textContent).length; }, 0);
    }
    var el = node.nodeType === 3 ? node.parentNode : node;
    if (!el.dataset || el.dataset.start === undefined) { return null; }
    return Number(el.dataset.start) + Array.from(node.textContent.slice(0, off)).length;
  }
  function snap(x) {  // the nearest caret stop at or before x
    var best = 0;
    stops.forEach(function (s) { if (s <= x) { best = s; } });
    return best;
  }
  function takeNativeSelection() {
    var sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) { return; }
    var r = sel.getRangeAt(0);
    if (!textEl.contains(r.startContainer) || !textEl.contains(r.endContainer)) { return; }
    var a = offsetOf(r.startContainer, r.startOffset);
    var b = offsetOf(r.endContainer, r.endOffset);
    if (a === null || b === null || a === b) { return; }
    pending = [snap(Math.min(a, b)), Math.max(a, b)];
    var s = pending;
    selected.textContent = "“" + chars.slice(s[0], s[1]).join("") + "”";
  }
  function move(delta, word) {
    var pos = caret;
    if (word) {  // to the end (forward) or start (back) of the next word
      var ws = function (c) { return /\s/.test(c || ""); };
      if (delta > 0) {
        while (pos < n && ws(chars[pos])) { pos++; }
        while (pos < n && !ws(chars[pos])) { pos++; }
      } else {
        while (pos > 0 && ws(chars[pos - 1])) { pos--; }
        while (pos > 0 && !ws(chars[pos - 1])) { pos--; }
      }
      return snap(pos);
    }
    var i = stops.indexOf(caret);
    return stops[Math.max(0, Math.min(stops.length - 1, i + delta))];
  }
  function goToPicker() {
    var first = category || box.querySelector("input[name=span_severity]:checked");
    if (first) { first.focus(); }
  }
  textEl.addEventListener("keydown", function (ev) {
    var k = ev.key;
    var forward = rtl() ? "ArrowLeft" : "ArrowRight";
    var back = rtl() ? "ArrowRight" : "ArrowLeft";
    if (k === forward || k === back || k === "Home" || k === "End") {
      ev.preventDefault();
      pending = null;
      if (ev.shiftKey) { if (anchor === null) { anchor = caret; } } else { anchor = null; }
      var word = ev.ctrlKey || ev.altKey || ev.metaKey;
      if (k === "Home") { caret = 0; } else if (k === "End") { caret = n; } else {
        caret = move(k === forward ? 1 : -1, word);
      }
      render();
    } else if (k === "Enter") {
      ev.preventDefault();
      if (pending || keyboardSel()) { goToPicker(); } else { selected.textContent = box.dataset.msgSelect; }
    } else if (k === "Delete" || k === "Backspace") {
      ev.preventDefault();
      var before = spans.length;
      spans = spans.filter(function (s) {
        return s.start === null || !(s.start <= caret && caret <= s.end);
      });
      if (spans.length !== before) { render(); }
    } else if (k === "Escape") {
      anchor = null;
      pending = null;
      render();
    }
  });
  var pointer = false;  // focus by mouse or touch: keep the DOM (and the selection being made)
  textEl.addEventListener("pointerdown", function () { pointer = true; });
  textEl.addEventListener("pointerup", function () { setTimeout(function () { pointer = false; }, 0); });
  textEl.addEventListener("focus", function () {
    focused = true;
    if (!pointer) { render(); }
    pointer = false;
  });
  textEl.addEventListener("blur", function () { focused = false; });
  document.addEventListener("selectionchange", takeNativeSelection);
  textEl.addEventListener("mouseup", takeNativeSelection);
  textEl.addEventListener("touchend", takeNativeSelection);
  box.querySelector(".span-add").addEventListener("click", function () {
    var sel = pending || keyboardSel();
    if (!sel) { selected.textContent = box.dataset.msgSelect; textEl.focus(); return; }
    add(sel[0], sel[1]);
    textEl.focus();
  });
  box.querySelector(".span-unlocated").addEventListener("click", function () {
    add(null, null);
  });
  box.addEventListener("keydown", function (ev) {  // in the picker: Escape back, Enter marks
    if (ev.target === textEl) { return; }
    if (ev.key === "Escape") { textEl.focus(); }
    if (ev.key === "Enter" && (ev.target === category || ev.target.name === "span_severity")) {
      ev.preventDefault();
      box.querySelector(".span-add").click();
    }
  });
  render();
});
