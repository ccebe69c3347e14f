"""Right-to-left in a real headless Chromium: an Arabic interface lays the page out right to
left while English outputs keep their own direction, a Hebrew output reads right to left in an
English interface, and the slider is mirrored with its end labels over the ends they name."""

from __future__ import annotations

from pathlib import Path

import pytest
from experiment_helpers import delivered, running_server, settles, write_experiment

from nlgeval.experiment import create_experiment

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HEBREW = "מזג האוויר מעונן בצפון"

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(
        reason="/usr/bin/chromium is missing (Debian package 'chromium'; `make system-deps`)"))
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _direction(page, selector: str) -> str:  # noqa: ANN001
    return page.eval_on_selector(selector, "e => getComputedStyle(e).direction")


def _x(page, selector: str) -> float:  # noqa: ANN001
    return page.locator(selector).bounding_box()["x"]


def test_rtl_interface_and_text_directions_in_chromium(tmp_path: Path) -> None:
    texts = {(s, "p1"): HEBREW for s in ("S1", "S2", "S3")}
    ar = write_experiment(tmp_path / "ar", practice=1, extra='language = "ar"')
    en = write_experiment(tmp_path / "en", practice=1, text_of=texts)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for d, rtl in ((ar, True), (en, False)):
                made = create_experiment(d)
                with running_server(d) as srv:
                    page = browser.new_page(viewport={"width": 1000, "height": 900})
                    page.goto(f"{srv.base}/e/{made.evaluators['token'].iloc[0]}")
                    page.get_by_role("button", name="ابدأ" if rtl else "Start").click()
                    page.wait_for_selector("section.outputs")
                    assert _direction(page, "main") == ("rtl" if rtl else "ltr")
                    # the output's own direction: English LTR, Hebrew RTL, whatever the page's
                    assert _direction(page, "section.outputs .text") == (
                        "ltr" if rtl else "rtl")
                    # the interface follows the page: a scale option's radio button sits at
                    # the start of the line, the left in LTR and the right in RTL
                    opt = _x(page, "fieldset.vds .option >> nth=0")
                    radio = _x(page, "fieldset.vds .option >> nth=0 >> input")
                    assert (radio > opt + 50) if rtl else (radio < opt + 50)
                    # the slider follows the page (mirrored in RTL, minimum on the right), and
                    # the minimum's label ("not fluent") stays over the minimum's end
                    lo, hi = _x(page, ".vas .ends .left"), _x(page, ".vas .ends .right")
                    assert (lo > hi) if rtl else (lo < hi)
                    slider = page.locator("input[type=range]")
                    slider.focus()
                    page.keyboard.press("Home")
                    settles(page, slider.input_value, "0")  # the key may land after a read
                    box = slider.bounding_box()
                    with delivered(page, "click"):  # read where the click lands once it has
                        page.mouse.click(box["x"] + 3, box["y"] + box["height"] / 2)
                    at_left = float(slider.input_value())  # a click at the left end
                    assert (at_left > 90) if rtl else (at_left < 10)
                    page.close()
        finally:
            browser.close()
