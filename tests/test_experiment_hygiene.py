"""Study hygiene of the online experiment (issue 25, "also seen"): safe researcher Markdown,
off-grid slider values, attention checks spread over the set and judged by a test over
several pairs, exports for paying and auditing, platform codes and frames, translated scales."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import answer_form, csrf_of, form_action, write_experiment

from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app, render_markdown
from nlgeval.experiment.storage import Judgement, Store


def _store(app) -> Store:  # noqa: ANN001
    return app.extensions["nlgeval_experiment"]["store"]


def _page(c, tok: str) -> str:  # noqa: ANN001
    return c.get(f"/e/{tok}").get_data(as_text=True)


def _start(c, tok: str, **extra: str) -> str:  # noqa: ANN001
    page = _page(c, tok)
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page), **extra})
    assert r.status_code == 303, r.get_data(as_text=True)[:500]
    return _page(c, tok)


def _finish(c, tok: str, rng: np.random.Generator, choose=None) -> int:  # noqa: ANN001
    page = _page(c, tok)
    n = 0
    while "/trial/" in page:
        data = answer_form(page, rng)
        if choose is not None:
            choose(page, data)
        assert c.post(form_action(page), data=data).status_code == 303
        n += 1
        page = _page(c, tok)
    return n


# ------------------------------------------------------------------ 1. researcher Markdown
@pytest.mark.parametrize("link", [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)",
    "java&#115;cript:alert(1)", "java&#x09;script:alert(1)", "java\tscript:alert(1)",
    "vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd",
])
def test_markdown_links_outside_the_allow_list_lose_their_href(link: str) -> None:
    for src in (f"Read [the guide]({link}) now.", f"Read [the guide][g] now.\n\n[g]: {link}"):
        html = str(render_markdown(src))
        assert "href" not in html, html
        assert "the guide" in html and "now." in html


def test_markdown_allowed_links_and_images() -> None:
    html = str(render_markdown("[a](https://example.org/x?a=1&b=2) [m](mailto:r@example.org) "
                               "[s](#top) <https://example.org/auto>"))
    assert html.count("<a ") == 4 and 'rel="noreferrer"' in html
    assert 'href="https://example.org/x?a=1&amp;b=2"' in html
    png = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
           "mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==")
    assert f'src="{png}"' in str(render_markdown(f"![dot]({png})"))
    # outside images (tracking, blocked by the CSP anyway), SVG (can script), other data
    for src in ("https://tracker.example/p.png", "data:image/svg+xml;base64,PHN2Zz4=",
                "javascript:alert(1)", "data:text/html,x"):
        out = str(render_markdown(f"before ![the alt text]({src}) after"))
        assert "<img" not in out and "the alt text" in out and "after" in out


def test_markdown_attributes_and_raw_html_are_text() -> None:
    out = str(render_markdown('## Head {: onclick="alert(1)" }\n\npara\n{: style="x" }\n\n'
                              "<b>bold</b> <!-- note\n\n`a < b`"))
    assert not re.search(r"<[a-z0-9]+\s[^>]*(onclick|style)=", out), out  # shown as text
    assert "<b>" not in out and "&lt;b&gt;" in out
    assert "<code>a &lt; b</code>" in out  # a code span keeps what was typed


@pytest.mark.parametrize("bad", ["*[x]:", "*[HTML]:", "[^1]:", "[^note]: see below", "```",
                                 "~~~", "{: #x }", "[x]:", "<div>", "<!--", "| a |"])
def test_a_malformed_line_never_swallows_the_following_lines(bad: str) -> None:
    src = f"First line.\n\n{bad}\nSecond line stays.\nThird line stays.\n\nLast paragraph."
    out = str(render_markdown(src))
    text = re.sub(r"<[^>]+>", "", out)
    for part in ("First line.", "Second line stays.", "Third line stays.", "Last paragraph."):
        assert part in text, (bad, out)
    # and in order: nothing was moved to the end of the page (as footnotes did)
    assert text.index("Third line stays.") < text.index("Last paragraph.")


def test_instructions_page_shows_no_script_link(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "exp", practice=0,
                         extra='[crowd]\nconsent = "[Terms](javascript:alert(document.cookie))"')
    (d / "experiment.toml").write_text(
        (d / "experiment.toml").read_text().replace(
            'instructions = "Be careful."',
            'instructions = "See [rules](https://example.org/rules).\\n\\n*[x]:\\nKeep going."'),
        encoding="utf-8")
    made = create_experiment(d)
    c = create_app(d).test_client()
    tok = made.evaluators["token"].iloc[0]
    intro = _page(c, tok)
    assert "javascript:" not in intro and "Terms" in intro
    page = _start(c, tok, consent="1")
    assert 'href="https://example.org/rules"' in page and "Keep going." in page


# ------------------------------------------------------------------ 2. slider grid
@pytest.mark.parametrize("bad", ["50.0000000001", "49.9999999999", "50.000000000001",
                                 "0.000000000001", "99.99999999999"])
def test_off_grid_slider_values_are_refused(tmp_path: Path, bad: str) -> None:
    crit = ('[[criteria]]\nname = "q"\ntool = "vas"\nmin = 0\nmax = 100\nstep = 1\n'
            'left_label = "bad"\nright_label = "good"\n')
    d = write_experiment(tmp_path / "exp", practice=0, criteria=crit)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    base = {"csrf": csrf_of(page), "c0_moved": "1"}
    r = c.post(form_action(page), data={**base, "c0": bad})
    assert r.status_code == 400
    with _store(app).read() as s:
        assert s.query(Judgement).count() == 0
    # on the grid, written as a browser writes it (also with a decimal step)
    assert c.post(form_action(page), data={**base, "c0": "50"}).status_code == 303


def test_decimal_steps_accept_every_grid_point() -> None:
    from nlgeval.experiment.config import CriterionConfig
    from nlgeval.experiment.views import BadForm, slider_value

    c = CriterionConfig("q", "?", "", "vas", min=-1, max=1, step=0.1, left_label="a",
                        right_label="b")
    for k in range(21):  # how Chromium writes -1 + k * 0.1 (decimal arithmetic)
        raw = f"{(-10 + k) / 10:g}"
        assert slider_value(raw, c) == pytest.approx(float(raw))
    with pytest.raises(BadForm):
        slider_value("0.30000000000000004", c)  # binary floating-point noise is off the grid


_ = (pd, )
