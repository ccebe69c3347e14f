"""Error-span marking (MQM, ESA) in a real headless Chromium: a span marked and deleted with
the keyboard only, one marked with the mouse, a right-to-left (Hebrew) output marked with the
keyboard (the arrow keys follow the text's direction), and a phone viewport with touch; what
the page posts is read back from the experiment's span export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experiment_helpers import (
    running_server,
    settles,
    tab_until,
    wait_until,
    write_experiment,
)

from nlgeval.experiment import create_experiment
from nlgeval.experiment.export import export_spans
from nlgeval.experiment.storage import Store, default_url

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENGLISH = "The weather is sunny today."
HEBREW = "מזג האוויר מעונן בצפון"

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(
        reason="/usr/bin/chromium is missing (Debian package 'chromium'; `make system-deps`)"))
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _study(d: Path, mode: str, text: str) -> str:
    """A two-evaluator span study whose outputs all read ``text``; its first evaluator's token."""
    texts = {(f"S{s}", f"i{i}"): text for s in (1, 2) for i in (1, 2)}
    write_experiment(d, mode=mode, systems=2, items=2, evaluators=2, practice=0,
                     criteria="", questionnaire=False, text_of=texts)
    return str(create_experiment(d).evaluators["token"].iloc[0])


def _spans(page) -> list[dict]:  # noqa: ANN001
    return json.loads(page.input_value("input[name=spans]"))


def _start(page, url: str) -> None:  # noqa: ANN001
    page.goto(url)
    page.get_by_role("button", name="Start").click()
    page.wait_for_selector(".span-text")


def _press(page, key: str, n: int) -> None:  # noqa: ANN001
    for _ in range(n):
        page.keyboard.press(key)


def _stored(d: Path) -> list[tuple]:
    store = Store(default_url(d))
    try:
        sp = export_spans(store)
    finally:
        store.dispose()
    return [(r.start, r.end, r.category, r.severity, r.marked) for r in sp.itertuples()]


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


def test_mqm_span_marked_and_deleted_with_the_keyboard_only(tmp_path: Path, browser) -> None:  # noqa: ANN001
    d = tmp_path / "mqm"
    token = _study(d, "mqm", ENGLISH)
    with running_server(d) as srv:
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        _start(page, f"{srv.base}/e/{token}")
        # Tab from the top of the form to the text (no mouse), move, select "weather"; each
        # state read after a key press is waited for (the page may handle the key after an
        # immediate read on a loaded machine)
        tab_until(page, "document.activeElement.id === 'span-text'", limit=20)
        _press(page, "ArrowRight", 4)
        _press(page, "Shift+ArrowRight", 7)
        settles(page, lambda: page.inner_text(".span-selected"), "“weather”")
        page.keyboard.press("Enter")  # to the picker: the category list
        settles(page, lambda: page.evaluate("document.activeElement.id"), "span-category")
        page.select_option("#span-category", "Accuracy/Mistranslation")  # keyboard-selectable
        page.keyboard.press("Tab")  # the severity radios: Minor is checked, arrow to Major
        page.keyboard.press("ArrowRight")
        settles(page, lambda: page.is_checked("input[name=span_severity][value=major]"), True)
        page.keyboard.press("Enter")  # marks the error, back to the text
        settles(page, lambda: _spans(page), [{"start": 4, "end": 11, "quote": "weather",
                                              "category": "Accuracy/Mistranslation",
                                              "severity": "major"}])
        assert page.inner_text(".span-text .err.major") == "weather"
        assert page.evaluate("document.activeElement.id") == "span-text"
        page.keyboard.press("Delete")  # the caret is at the span's end: it goes
        settles(page, lambda: _spans(page), [])
        assert page.locator(".span-text .err").count() == 0
        # again with a word-wise selection, and deleted from the list with Tab + Enter
        page.keyboard.press("Home")
        _press(page, "Shift+Control+ArrowRight", 1)
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        settles(page, lambda: [s["quote"] for s in _spans(page)], ["The"])
        if page.evaluate("document.activeElement.className") != "span-del":
            tab_until(page, "document.activeElement.className === 'span-del'", limit=19)
        page.keyboard.press("Enter")
        settles(page, lambda: _spans(page), [])
        # a last one, kept, and the form sent with the keyboard
        page.focus("#span-text")
        page.keyboard.press("End")
        _press(page, "Shift+ArrowLeft", 1)
        page.keyboard.press("Enter")
        page.select_option("#span-category", "Fluency/Punctuation")
        page.check("input[name=span_severity][value=minor]")
        page.focus("#span-category")
        page.keyboard.press("Enter")
        # marked before the focus moves on (page.focus takes another channel than the keys)
        settles(page, lambda: [s["quote"] for s in _spans(page)], ["."])
        page.focus("button.primary")
        # the next trial's page has the same address and a .span-text too: wait for the
        # navigation itself, or closing the page could cancel the form's POST
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.wait_for_selector(".span-text")
        page.close()
    assert _stored(d) == [(26, 27, "Fluency/Punctuation", "minor", ".")]


def test_mqm_span_marked_with_the_mouse(tmp_path: Path, browser) -> None:  # noqa: ANN001
    d = tmp_path / "mouse"
    token = _study(d, "mqm", ENGLISH)
    with running_server(d) as srv:
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        _start(page, f"{srv.base}/e/{token}")
        box = page.evaluate("""() => {
            const t = document.querySelector('.span-text');
            const node = t.firstChild.firstChild || t.firstChild;
            const r = document.createRange();
            const s = t.textContent.indexOf('sunny');
            r.setStart(node, s); r.setEnd(node, s + 5);
            const b = r.getBoundingClientRect();
            return {x0: b.left, x1: b.right, y: b.top + b.height / 2};
        }""")
        page.mouse.move(box["x0"] + 1, box["y"])
        page.mouse.down()
        page.mouse.move(box["x1"] - 1, box["y"], steps=8)
        page.mouse.up()
        settles(page, lambda: page.inner_text(".span-selected"), "“sunny”")
        page.get_by_role("button", name="Mark error").click()
        settles(page, lambda: [(s["start"], s["end"], s["quote"]) for s in _spans(page)],
                [(15, 20, "sunny")])
        page.close()


def test_esa_right_to_left_output_marked_with_the_keyboard(tmp_path: Path, browser) -> None:  # noqa: ANN001
    d = tmp_path / "esa"
    token = _study(d, "esa", HEBREW)
    with running_server(d) as srv:
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        _start(page, f"{srv.base}/e/{token}")
        assert page.eval_on_selector(".span-text", "e => getComputedStyle(e).direction") == "rtl"
        page.focus("#span-text")
        # in right-to-left text the left arrow moves forward: the first word is selected
        _press(page, "Shift+ArrowLeft", 3)
        settles(page, lambda: page.inner_text(".span-selected"), "“מזג”")
        page.keyboard.press("Enter")  # ESA has no categories: straight to the severity
        settles(page, lambda: page.evaluate("document.activeElement.name"), "span_severity")
        page.keyboard.press("Enter")
        settles(page, lambda: _spans(page), [{"start": 0, "end": 3, "category": "",
                                              "severity": "minor", "quote": "מזג"}])
        # the marked word is drawn at the right end of the line, where the text starts
        word = page.locator(".span-text .err.minor").bounding_box()
        text = page.locator(".span-text").bounding_box()
        assert word["x"] + word["width"] > text["x"] + text["width"] / 2
        slider = page.locator("input[type=range]")
        slider.focus()
        page.keyboard.press("End")
        with page.expect_navigation():  # the next trial has a .span-text too
            page.get_by_role("button", name="Next").click()
        page.wait_for_selector(".span-text")
        page.close()
    assert _stored(d) == [(0, 3, "", "minor", "מזג")]


def test_phone_viewport_touch_selection(tmp_path: Path, browser) -> None:  # noqa: ANN001
    d = tmp_path / "phone"
    token = _study(d, "mqm", ENGLISH)
    with running_server(d) as srv:
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
        page = ctx.new_page()
        _start(page, f"{srv.base}/e/{token}")
        # nothing wider than the phone, every control a finger can hit (>= 44 px)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        for sel in (".span-add", ".span-unlocated", "#span-category", "button.primary"):
            assert page.locator(sel).bounding_box()["height"] >= 43.5, sel
        # a long press selects a word natively; the page takes the selection over
        page.evaluate("""() => {
            const t = document.querySelector('.span-text');
            const node = t.firstChild.firstChild || t.firstChild;
            const r = document.createRange();
            r.setStart(node, 15); r.setEnd(node, 20);
            const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
        }""")
        wait_until(page, "document.querySelector('.span-selected').textContent !== ''")
        page.tap("label:has(input[value=major])")
        page.tap(".span-add")  # a tap's click reaches the page after tap() returns: wait
        settles(page, lambda: [(s["quote"], s["severity"]) for s in _spans(page)],
                [("sunny", "major")])
        page.tap(".span-unlocated")  # an omission: not located in the text
        settles(page, lambda: [s["start"] for s in _spans(page)], [15, None])
        with page.expect_navigation():  # the next trial has a .span-text too
            page.tap("button.primary")
        page.wait_for_selector(".span-text")
        ctx.close()
    assert [r[:4] for r in _stored(d)] == [(15, 20, "Accuracy/Addition", "major"),
                                           (None, None, "Accuracy/Addition", "major")]
