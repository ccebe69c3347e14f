"""An evaluator in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Screenshots go to ``tmp_path/shots`` (or ``$NLGEVAL_SCREENSHOT_DIR``) so a person can look at
what evaluators see. Nothing is downloaded: Playwright launches ``/usr/bin/chromium``.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pandas as pd
import pytest
import requests
from experiment_helpers import delivered, running_server, settles, write_experiment

from nlgeval.experiment import create_experiment

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(
        reason="/usr/bin/chromium is missing (Debian package 'chromium'; `make system-deps`)"))
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("NLGEVAL_SCREENSHOT_DIR") or tmp_path / "shots")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _watch(page) -> list[str]:  # noqa: ANN001
    """Fail on any dialog (a script in an output would open one) or outside request."""
    events: list[str] = []
    page.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: None if r.url.startswith("http://127.0.0.1") or r.url.startswith(
        "data:") else events.append(f"outside request: {r.url}"))
    return events


def _current_output(page) -> tuple[str, str]:  # noqa: ANN001
    m = re.search(r"Output of (S\d) for (\w+)\.", page.inner_text("section.outputs"))
    assert m, page.inner_text("main")
    return m.group(1), m.group(2)


def test_evaluator_practice_trials_leave_resume_export(browser, tmp_path: Path,  # noqa: ANN001
                                                         shots: Path) -> None:
    evil = "<script>alert('owned')</script> Output of S2 for i2."
    d = write_experiment(tmp_path / "exp", systems=3, items=3, evaluators=3, practice=1,
                         text_of={("S2", "i2"): evil})
    made = create_experiment(d)
    token = made.evaluators["token"].iloc[0]
    with running_server(d) as srv:
        link = f"{srv.base}/e/{token}"
        chosen: dict[tuple[str, str], dict[str, float]] = {}

        # --- first sitting, desktop, with the keyboard --------------------------------
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        events = _watch(page)
        page.goto(link)
        assert "Please judge the texts." in page.inner_text("section.intro")
        page.screenshot(path=str(shots / "01-intro.png"), full_page=True)
        page.get_by_role("button", name="Start").press("Enter")
        page.wait_for_selector("text=Practice trial 1 of 1")
        page.screenshot(path=str(shots / "02-practice.png"), full_page=True)

        # submitting an empty form: shown again, missing parts marked
        page.get_by_role("button", name="Next").click()
        page.wait_for_selector("#form-error")
        assert page.locator("fieldset.invalid").count() == 2
        # choose "Good" with the keyboard, leave the slider untouched: refused, answer kept
        good = page.locator("input[name=c0][value='4']")
        good.focus()
        page.keyboard.press("Space")
        settles(page, good.is_checked, True)  # Space's click may reach the page after the read
        with page.expect_navigation():  # the form shown again has a #form-error like this one
            page.get_by_role("button", name="Next").press("Enter")
        page.wait_for_selector("#form-error")
        assert good.is_checked()
        assert page.locator("fieldset.vas.invalid").count() == 1
        page.screenshot(path=str(shots / "03-slider-untouched.png"), full_page=True)
        # move the slider with the arrow keys, submit with Enter
        key = _current_output(page)
        page.locator("input[type=range]").focus()
        for _ in range(7):
            page.keyboard.press("ArrowRight")
        chosen[key] = {"quality": 4.0, "fluency": float(settles(
            page, lambda: page.locator("input[type=range]").input_value(), "57"))}
        page.get_by_role("button", name="Next").press("Enter")
        page.wait_for_selector("text=3 items remaining")
        page.screenshot(path=str(shots / "04-trial.png"), full_page=True)

        # one real trial, by mouse
        key = _current_output(page)
        page.get_by_text("Very good", exact=True).click()
        page.locator("input[type=range]").scroll_into_view_if_needed()
        box = page.locator("input[type=range]").bounding_box()
        with delivered(page, "click"):  # where the click lands is read once it has landed
            page.mouse.click(box["x"] + box["width"] * 0.2, box["y"] + box["height"] / 2)
        chosen[key] = {"quality": 5.0,
                       "fluency": float(page.locator("input[type=range]").input_value())}
        page.get_by_role("button", name="Next").click()
        try:
            page.wait_for_selector("text=2 items remaining", timeout=30_000)
        finally:
            page.screenshot(path=str(shots / "04b-after-mouse-trial.png"), full_page=True)
        ctx.close()  # the evaluator leaves mid-way

        # --- second sitting, on a phone: resumes where they stopped ----------------------
        phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                    has_touch=True, device_scale_factor=2)
        page = phone.new_page()
        events += _watch(page)
        page.goto(link)
        page.wait_for_selector("text=2 items remaining")
        page.screenshot(path=str(shots / "05-phone-resumed.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"page scrolls sideways on a phone ({width}px)"
        for n in (2, 1):
            key = _current_output(page)
            if key == ("S2", "i2"):
                page.screenshot(path=str(shots / "06-script-as-text.png"), full_page=True)
                assert "<script>alert('owned')</script>" in page.inner_text("section.outputs")
            page.get_by_text("Fair", exact=True).tap()
            page.get_by_text("tick here to confirm").tap()  # confirm the untouched slider
            settles(page, lambda: page.locator("form.trial input:checked").count(), 2)
            chosen[key] = {"quality": 3.0, "fluency": 50.0}
            page.fill("textarea[name=comment]", f"comment {n} <b>bold?</b>")
            page.get_by_role("button", name="Next").tap()
            if n == 2:
                page.wait_for_selector("text=1 item remaining")
        page.wait_for_selector("text=Is English your first language?")
        page.screenshot(path=str(shots / "07-questionnaire.png"), full_page=True)
        page.get_by_text("yes", exact=True).tap()
        page.get_by_role("button", name="Finish").tap()
        page.wait_for_selector("text=Thank you")
        page.go_back()  # the back button cannot resubmit anything
        page.goto(link)
        assert "Thank you" in page.inner_text("main")
        page.screenshot(path=str(shots / "08-thanks.png"), full_page=True)
        phone.close()
        assert events == []

        # --- the researcher's export holds exactly this evaluator's judgements ------------
        rview = browser.new_page(viewport={"width": 1100, "height": 700})
        rview.goto(f"{srv.base}/r/{made.researcher_token}")
        rview.screenshot(path=str(shots / "09-researcher.png"), full_page=True)
        assert "3/3" in rview.inner_text("table")
        rview.close()
        csv = requests.get(f"{srv.base}/r/{made.researcher_token}/ratings.csv", timeout=30).text
    df = pd.read_csv(io.StringIO(csv), dtype={"rater": str})
    got = {(r.system, r.item, r.criterion): r.score for r in df.itertuples()}
    want = {(s, i, c): v for (s, i), cs in chosen.items() if not i.startswith("p")
            for c, v in cs.items()}
    assert got == want
    assert set(df["rater"]) == {made.evaluators["evaluator"].iloc[0]}
    assert df.loc[df["comment"].notna(), "comment"].str.startswith("comment").all()
    assert len(df) == 6


@pytest.mark.parametrize("mode", ["relative", "triangle"])
def test_relative_and_triangle_trials_render_and_submit(browser, tmp_path: Path,  # noqa: ANN001
                                                        shots: Path, mode: str) -> None:
    from nlgeval.experiment.example import write_example

    d = write_example(tmp_path / mode, mode)  # type: ignore[arg-type]
    made = create_experiment(d)
    with running_server(d) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        events = _watch(page)
        page.goto(f"{srv.base}/e/{made.evaluators['token'].iloc[0]}")
        page.get_by_role("button", name="Start").click()
        page.wait_for_selector("form.trial")
        n_texts = page.locator("article.output").count()
        assert n_texts == (2 if mode == "relative" else 3)
        page.screenshot(path=str(shots / f"10-{mode}.png"), full_page=True)
        if mode == "relative":
            page.locator("input[type=range]").focus()
            page.keyboard.press("ArrowLeft")
            page.get_by_text("B is slightly better", exact=True).click()
        else:
            page.get_by_role("radio", name="Text 2").check()
        with page.expect_navigation():  # read the page the answer leads to, not this one
            page.get_by_role("button", name="Next").click()
        assert "#form-error" not in page.content()
        assert page.locator("#form-error").count() == 0
        page.close()
        assert events == []
        csv = requests.get(f"{srv.base}/r/{made.researcher_token}/ratings.csv",
                           params={"practice": 1}, timeout=30).text
    df = pd.read_csv(io.StringIO(csv))
    assert len(df) == (2 if mode == "relative" else 1)


def test_crowd_join_consent_checks_completion_and_back(browser, tmp_path: Path,  # noqa: ANN001
                                                       shots: Path) -> None:
    """A Prolific-style participant: open link with URL parameters -> consent -> trials (with
    an attention check) -> questionnaire -> completion code; Back after the last page shows
    the thank-you page again, never a browser error; the phone layout keeps the text in view."""
    extra = '''
[crowd]
consent = "Your answers are stored anonymously."
completion_code = "DONE77"
redirect_url = "https://app.prolific.com/submissions/complete?cc={code}"
min_trial_ms = 0  # a script answers faster than a person: no code would be shown

[checks]
repeats = 1
'''
    d = write_experiment(tmp_path / "crowd", systems=3, items=3, evaluators=3, practice=0,
                         extra=extra)
    create_experiment(d)
    from nlgeval.experiment.storage import Store, default_url

    store = Store(default_url(d))
    jt = store.meta()["join_token"]
    store.dispose()
    with running_server(d) as srv:
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
        page = ctx.new_page()
        events = _watch(page)
        # the favicon is served (no 404 in the console)
        assert requests.get(f"{srv.base}/favicon.ico", timeout=30).status_code == 200
        page.goto(f"{srv.base}/join/{jt}?PROLIFIC_PID=pp1&STUDY_ID=st&SESSION_ID=se")
        page.get_by_role("button", name="Take part").tap()
        page.wait_for_selector("text=Consent")
        page.get_by_role("button", name="Start").tap()
        page.wait_for_selector("#err-consent")
        assert page.get_attribute("input[name=consent]", "aria-invalid") == "true"
        page.get_by_text("I have read the above and agree").tap()
        page.get_by_role("button", name="Start").tap()
        page.wait_for_selector("form.trial")
        n = 0
        while page.locator("form.trial").count():
            n += 1
            page.get_by_text("Good", exact=True).tap()
            page.get_by_text("tick here to confirm").tap()
            # both taps have reached the page (a late one focusing its input would scroll)
            settles(page, lambda: page.locator("form.trial input:checked").count(), 2)
            if n == 1:
                page.screenshot(path=str(shots / "20-phone-sticky.png"))
                page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
                top = page.evaluate("document.querySelector('.judged').getBoundingClientRect()"
                                    ".top")
                assert abs(top) < 2, top  # the texts stay at the top while rating
            with page.expect_navigation():
                page.get_by_role("button", name="Next").tap()
        assert n == 4  # 3 trials + 1 repeat
        page.get_by_text("no", exact=True).tap()
        page.get_by_role("button", name="Finish").tap()
        page.wait_for_selector("#completion-code")
        assert page.inner_text("#completion-code") == "DONE77"
        href = page.get_attribute("a.button", "href")
        assert href == "https://app.prolific.com/submissions/complete?cc=DONE77"
        page.screenshot(path=str(shots / "21-completion.png"), full_page=True)
        for _ in range(3):  # Back, Back, Back: never an error page
            page.go_back()
            page.wait_for_load_state()
            body = page.inner_text("body")
            assert "Thank you" in body or "Consent" in body or "Take part" in body, body[:300]
        ctx.close()
        assert events == []
        csv = requests.get(f"{srv.base}/r/{_rtoken(d)}/ratings.csv", timeout=30).text
    df = pd.read_csv(io.StringIO(csv), dtype={"rater": str, "participant": str})
    assert len(df) == 3 * 2 and set(df["participant"]) == {"pp1"}
    assert df["time_on_task_ms"].notna().all()


def _rtoken(d: Path) -> str:
    from nlgeval.experiment.storage import Store, default_url

    store = Store(default_url(d))
    try:
        return store.meta()["researcher_token"]
    finally:
        store.dispose()
