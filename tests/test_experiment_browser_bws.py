"""Best-worst scaling in a real headless Chromium on a phone: the best and the worst text
chosen with the keyboard only (Tab into a radio group, arrow keys / Space to choose, Enter on
Next), a missing choice refused with the answer kept, and the export holds the choices.
Nothing is downloaded: Playwright launches ``/usr/bin/chromium``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from experiment_helpers import running_server, wait_until, write_experiment
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.experiment import create_experiment

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(
        reason="/usr/bin/chromium is missing (Debian package 'chromium'; `make system-deps`)"))
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _tab_to(page, name: str) -> None:  # noqa: ANN001
    """Press Tab until the focus is in the radio group ``name`` (keyboard only)."""
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == name:
            return
    raise AssertionError(f"Tab never reached the {name!r} choices")


def _shown(page) -> list[str]:  # noqa: ANN001
    """The systems of the texts shown, in order (each text names its system)."""
    return re.findall(r"Output of (S\d) for", page.inner_text("section.outputs"))


def test_bws_keyboard_only_on_a_phone(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "bws", mode="bws", systems=4, items=2, evaluators=1,
                         practice=0, criteria="", questionnaire=False,
                         extra="[bws]\nquestion = \"Best and worst?\"\n")
    made = create_experiment(d)
    token = made.evaluators["token"].iloc[0]
    picks: list[tuple[str, str]] = []
    with sync_api.sync_playwright() as p, running_server(d) as srv:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                    has_touch=True, device_scale_factor=2)
        page = phone.new_page()
        page.goto(f"{srv.base}/e/{token}")
        page.get_by_role("button", name="Start").press("Enter")  # focused on arrival
        page.wait_for_selector("text=Best and worst?")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"page scrolls sideways on a phone ({width}px)"
        page.screenshot(path=str(tmp_path / "bws-phone.png"), full_page=True)
        # only a best text: refused, the missing part marked, the choice kept
        _tab_to(page, "best")
        page.keyboard.press("Space")  # the first text is the best
        page.keyboard.press("Enter")
        page.wait_for_selector("#form-error")
        assert page.locator("fieldset.invalid").count() == 1
        assert page.locator("input[name=best][value='1']").is_checked()
        assert page.evaluate("document.activeElement.name") == "worst"  # focus on the gap
        page.keyboard.press("ArrowDown")  # the second text ...
        page.keyboard.press("ArrowDown")  # ... no: the third is the worst
        shown = _shown(page)
        picks.append((shown[0], shown[2]))
        page.keyboard.press("Enter")
        page.wait_for_selector("text=remaining")
        n_tuples = 1 + int(re.search(r"(\d+) items? remaining",
                                     page.inner_text("header")).group(1))
        for _ in range(n_tuples - 1):
            shown = _shown(page)
            _tab_to(page, "best")
            page.keyboard.press("ArrowDown")  # focus on text 1, ArrowDown: text 2 is best
            _tab_to(page, "worst")
            page.keyboard.press("Space")  # text 1 is the worst
            picks.append((shown[1], shown[0]))
            page.keyboard.press("Enter")
            page.wait_for_load_state()
        page.wait_for_selector("text=Thank you")
        browser.close()
    out = tmp_path / "x"
    r = CliRunner().invoke(cli_app, ["experiment", "export", str(d), "--out", str(out)])
    assert r.exit_code == 0, r.output
    choices = pd.read_csv(out / "choices.csv")
    got = sorted((g.loc[g["best"] == 1, "system"].item(), g.loc[g["worst"] == 1, "system"].item())
                 for _t, g in choices.groupby("tuple_id"))
    assert got == sorted(picks)
    assert len(picks) == choices["tuple_id"].nunique() == n_tuples


FORECAST = ("The weather will be dry and sunny in the morning with light winds from the south "
            "west, becoming cloudy later with a chance of showers in the north by the evening")


def _boxes(page) -> list[dict]:  # noqa: ANN001
    """Each shown text's place on screen, whether it is cut (its text taller than shown) and
    the state of its toggle button (None when it has none or it is hidden)."""
    return page.evaluate("""() => [...document.querySelectorAll('article.output')].map(a => {
        const r = a.getBoundingClientRect(), t = a.querySelector('.text'),
              b = a.querySelector('button.toggle');
        return {top: r.top, bottom: r.bottom, cut: t.scrollHeight > t.clientHeight + 1,
                expanded: b && !b.hidden ? b.getAttribute('aria-expanded') : null}; })""")


def _after_toggle(page, expanded: list[str]) -> list[dict]:  # noqa: ANN001
    """The boxes once the toggles' states are ``expanded``: a tap or key press reaches the
    page's click handler asynchronously, so on a loaded machine the state read at once could
    still be the old one (CI saw Space's click arrive after the read). Times out with an
    ``AssertionError`` when the state never comes."""
    want = "[" + ",".join(f"'{e}'" for e in expanded) + "]"
    wait_until(page, f"""JSON.stringify([...document.querySelectorAll('article.output')].map(
        a => {{ const b = a.querySelector('button.toggle');
               return b && !b.hidden ? b.getAttribute('aria-expanded') : null; }}))
        === JSON.stringify({want})""")
    return _boxes(page)


@contextmanager
def _bws_on_phone(tmp_path: Path) -> Iterator[tuple[Any, Any, Any, str]]:
    """A best-worst study of four 28-word texts per tuple, served and opened on a 375 x 667
    touch phone at its first tuple: yields the browser, the page, the server and the token."""
    texts = {(f"S{k}", i): f"S{k}: {FORECAST}" for k in range(1, 5) for i in ("i1", "i2")}
    d = write_experiment(tmp_path / "bws", mode="bws", systems=4, items=2, evaluators=1,
                         practice=0, criteria="", questionnaire=False, text_of=texts,
                         extra="[bws]\nquestion = \"Best and worst?\"\n")
    token = create_experiment(d).evaluators["token"].iloc[0]
    with sync_api.sync_playwright() as p, running_server(d) as srv:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        phone = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True,
                                    has_touch=True)
        page = phone.new_page()
        page.goto(f"{srv.base}/e/{token}")
        page.get_by_role("button", name="Start").tap()
        page.wait_for_selector("text=Best and worst?")
        yield browser, page, srv, token
        browser.close()


def test_bws_whole_tuple_in_view_on_a_small_phone(tmp_path: Path) -> None:
    """On a 375 x 667 phone the four texts of a tuple (28 words each) are all in view, on
    arrival and while the choices below are scrolled to (the panel is sticky): each is cut to
    a few lines and a tap shows it in full; a desktop window, and a phone without
    JavaScript, show every text whole as before."""
    with _bws_on_phone(tmp_path) as (browser, page, srv, token):
        for where in ("top", "scrolled to the choices"):
            boxes = _boxes(page)
            assert len(boxes) == 4
            assert all(b["top"] >= 0 and b["bottom"] <= 667 for b in boxes), (where, boxes)
            assert all(b["cut"] and b["expanded"] == "false" for b in boxes), boxes
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            wait_until(page, "window.scrollY > 0")
        page.screenshot(path=str(tmp_path / "bws-small-phone.png"))
        cut = _boxes(page)
        page.locator("article.output").nth(1).tap()  # text 2 in full ...
        opened = _after_toggle(page, ["false", "true", "false", "false"])
        assert not opened[1]["cut"] and opened[1]["bottom"] > cut[1]["bottom"] + 30
        toggle = page.locator("article.output").nth(1).locator("button.toggle")
        assert toggle.get_attribute("aria-label") == "Text 2"
        toggle.press("Enter")  # ... and cut again (keyboard, on its toggle)
        assert _after_toggle(page, ["false"] * 4) == cut
        page.locator("input[name=best][value='2']").check()
        page.locator("input[name=worst][value='4']").check()
        page.get_by_role("button", name="Next").tap()
        page.wait_for_selector("text=1 item remaining")
        for ctx in (browser.new_context(viewport={"width": 1280, "height": 900}),
                    browser.new_context(viewport={"width": 375, "height": 667},
                                        is_mobile=True, java_script_enabled=False)):
            page = ctx.new_page()
            page.goto(f"{srv.base}/e/{token}")
            boxes = _boxes(page)
            assert len(boxes) == 4 and not any(b["cut"] or b["expanded"] for b in boxes)
            ctx.close()


def test_bws_text_shown_in_full_stays_open_while_words_are_selected(tmp_path: Path) -> None:
    """On a phone, a text shown in full stays open when the evaluator taps inside it or
    selects words in it (a tap used to cut it again); only its toggle cuts it, and a tap on a
    cut text (or its toggle) shows it in full."""
    with _bws_on_phone(tmp_path) as (browser, page, srv, token):
        box = page.locator("article.output").nth(2)
        text, toggle = box.locator(".text"), box.locator("button.toggle")
        text.tap()  # a cut text: shown in full
        _after_toggle(page, ["false", "false", "true", "false"])
        for _ in range(3):  # taps inside the open text leave it open
            text.tap(position={"x": 40, "y": 30})
            assert _boxes(page)[2]["expanded"] == "true" and not _boxes(page)[2]["cut"]
        r = text.bounding_box()
        assert r is not None
        page.evaluate("""() => { window.selectedAtClick = []; document.addEventListener(
            'click', () => window.selectedAtClick.push(String(window.getSelection())), true);
            }""")
        for x0, y0, x1, y1 in ((30, 8, 200, 8), (10, 10, 150, 45)):  # words selected by
            page.mouse.move(r["x"] + x0, r["y"] + y0)                # dragging over them
            page.mouse.down()
            page.mouse.move(r["x"] + x1, r["y"] + y1, steps=10)
            page.mouse.up()
            assert _boxes(page)[2]["expanded"] == "true"
        chosen = [c.strip() for c in page.evaluate("window.selectedAtClick") if c.strip()]
        assert chosen and all(c in text.inner_text() for c in chosen), chosen
        page.evaluate("window.getSelection().removeAllRanges()")
        toggle.tap()  # the toggle cuts it again ...
        assert _after_toggle(page, ["false"] * 4)[2]["cut"]
        toggle.tap()  # ... and shows it in full
        _after_toggle(page, ["false", "false", "true", "false"])
        # ... and by keyboard: the focus on the toggle first (waited for), then Enter, which a
        # button acts on at keydown. Space acts at keyup, and CI once saw a Space press leave
        # the text open for 15 s; that is the browser's own button behaviour, not this page's
        # (the first test presses Enter on a toggle too)
        toggle.focus()
        wait_until(page, "document.activeElement === document.querySelectorAll("
                         "'article.output')[2].querySelector('button.toggle')")
        page.keyboard.press("Enter")
        _after_toggle(page, ["false"] * 4)
