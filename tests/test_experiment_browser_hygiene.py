"""In a real headless Chromium: the researcher dashboard fits a 1400 px window and a phone
without sideways scrolling, and an Arabic definition line reads right to left with its full
stop at its end (on the left), in an Arabic and in an English interface."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from experiment_helpers import answer_form, csrf_of, form_action, running_server, write_experiment
from werkzeug.security import generate_password_hash

from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.researcher_auth import set_password

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PASSWORD = "correct horse battery"
ARABIC_DEFINITION = "مدى سهولة قراءة النص ووضوحه."

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(
        reason="/usr/bin/chromium is missing (Debian package 'chromium'; `make system-deps`)"))
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

FITS = """() => {
  const out = [];
  const doc = document.scrollingElement;
  if (doc.scrollWidth > doc.clientWidth) out.push(['page', doc.scrollWidth, doc.clientWidth]);
  for (const e of document.querySelectorAll('.table-wrap, table')) {
    if (e.scrollWidth > e.clientWidth + 1) out.push([e.className, e.scrollWidth, e.clientWidth]);
  }
  return out;
}"""


def _busy_study(tmp_path: Path) -> Path:
    """A crowd study with 12 evaluators: some finished (flags, time stamps), some started,
    long participant ids, and a password for the dashboard."""
    d = write_experiment(tmp_path / "exp", systems=3, items=6, evaluators=12, practice=1,
                         questionnaire=False,
                         extra="[checks]\nrepeats = 1\ndegraded = 1\nspeeder_ms = 60000\n"
                               "[crowd]\nmin_trial_ms = 0\n")
    made = create_experiment(d)
    app = create_app(d)
    store = app.extensions["nlgeval_experiment"]["store"]
    set_password(store, generate_password_hash(PASSWORD, "pbkdf2:sha256:1"))
    jt = store.meta()["join_token"]
    rng = np.random.default_rng(4)
    for k in range(8):
        c = app.test_client()
        pid = f"5f{k}e8c2a9b7d4e1f0a6c3b{k:04d}"  # a Prolific-length id
        page = c.get(f"/join/{jt}?PROLIFIC_PID={pid}&STUDY_ID=6543abcdef&SESSION_ID=s{k}")
        r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page.get_data(as_text=True)),
                                        "PROLIFIC_PID": pid, "STUDY_ID": "6543abcdef",
                                        "SESSION_ID": f"s{k}"})
        tok = r.headers["Location"].rsplit("/", 1)[1]
        page = c.get(f"/e/{tok}").get_data(as_text=True)
        c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)})
        page = c.get(f"/e/{tok}").get_data(as_text=True)
        for _ in range(10 if k % 2 else 3):
            if "/trial/" not in page:
                break
            data = answer_form(page, rng)
            data["comment"] = "A rather long comment about this output, " * (k % 3)
            c.post(form_action(page), data=data)
            page = c.get(f"/e/{tok}").get_data(as_text=True)
    store.dispose()
    assert len(made.evaluators) == 12
    return d


def test_dashboard_fits_a_wide_window_and_a_phone(tmp_path: Path) -> None:
    d = _busy_study(tmp_path)
    with sync_api.sync_playwright() as p, running_server(d) as srv:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for name, viewport, mobile in (("wide", {"width": 1400, "height": 900}, False),
                                           ("phone", {"width": 390, "height": 844}, True)):
                ctx = browser.new_context(viewport=viewport, is_mobile=mobile,
                                          has_touch=mobile)
                page = ctx.new_page()
                page.goto(f"{srv.base}/login")
                page.fill("input[name=password]", PASSWORD)
                page.click("button[type=submit]")
                page.wait_for_selector("table.progress")
                assert page.locator("table.progress:not(.comments) tbody tr").count() == 12
                page.screenshot(path=str(tmp_path / f"dashboard-{name}.png"), full_page=True)
                assert page.evaluate(FITS) == [], name
                # every column is still there, labelled (a card per row on the phone)
                first = page.locator("table.progress tbody tr >> nth=0")
                assert first.locator("td").count() == 12
                if mobile:
                    label = first.locator("td >> nth=10").evaluate(
                        "e => getComputedStyle(e, '::before').content")
                    assert "Personal link" in label
                ctx.close()
        finally:
            browser.close()


def _dot_and_last_letter(page) -> tuple[dict, dict]:  # noqa: ANN001
    """Boxes of the definition's full stop and of the letter before it."""
    return page.evaluate("""() => {
      const el = document.querySelector('.definition-text') ||
                 document.querySelector('.definition');
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      let node = null, n;
      while ((n = walker.nextNode())) { if (n.data.includes('.')) node = n; }
      const i = node.data.lastIndexOf('.');
      const box = (a, b) => { const r = document.createRange(); r.setStart(node, a);
                              r.setEnd(node, b); const q = r.getBoundingClientRect();
                              return {left: q.left, right: q.right}; };
      return [box(i, i + 1), box(i - 1, i)];
    }""")


@pytest.mark.parametrize("language", ["ar", "en"])
def test_arabic_definition_keeps_its_full_stop_at_its_end(tmp_path: Path,
                                                          language: str) -> None:
    crit = ('[[criteria]]\nname = "quality"\ntool = "vds"\nscale = "text5"\n'
            f'definition = "{ARABIC_DEFINITION}"\n')
    d = write_experiment(tmp_path / language, practice=0, criteria=crit, questionnaire=False,
                         extra=f'language = "{language}"')
    made = create_experiment(d)
    with sync_api.sync_playwright() as p, running_server(d) as srv:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 900})
            page.goto(f"{srv.base}/e/{made.evaluators['token'].iloc[0]}")
            page.get_by_role("button", name="ابدأ" if language == "ar" else "Start").click()
            page.wait_for_selector(".definition")
            page.locator(".definition").screenshot(path=str(tmp_path / f"def-{language}.png"))
            dot, letter = _dot_and_last_letter(page)
            # right to left: the full stop ends the sentence, so it stands left of its last
            # letter (in a left-to-right line it drifted to the far right)
            assert dot["right"] <= letter["left"] + 0.5, (dot, letter)
        finally:
            browser.close()


def test_declining_consent_in_chromium_shows_the_platform_code(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "de", practice=0, questionnaire=False, extra=(
        'language = "de"\n[crowd]\nconsent = "Ich stimme zu, dass ..."\n'
        'no_consent_code = "NOCONSENT"\n'))
    create_experiment(d)
    app = create_app(d)
    jt = app.extensions["nlgeval_experiment"]["store"].meta()["join_token"]
    app.extensions["nlgeval_experiment"]["store"].dispose()
    with sync_api.sync_playwright() as p, running_server(d) as srv:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(f"{srv.base}/join/{jt}?PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=x")
            page.get_by_role("button", name="Teilnehmen").click()
            page.get_by_role("button", name="Ich stimme nicht zu").click()
            page.wait_for_selector("#outcome-code")
            page.screenshot(path=str(tmp_path / "declined.png"))
            assert page.locator("#outcome-code").inner_text() == "NOCONSENT"
            assert "Teilnahme entschieden" in page.content()
        finally:
            browser.close()
