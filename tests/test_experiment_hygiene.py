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
from nlgeval.experiment.app import create_app
from nlgeval.experiment.markup import render_markdown
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



# ------------------------------------------------------------------ 3. attention checks
VAS_ONLY = ('[[criteria]]\nname = "quality"\ntool = "vas"\nmin = 0\nmax = 100\n'
            'left_label = "bad"\nright_label = "good"\n')


def test_degraded_checks_are_spread_over_the_set(tmp_path: Path) -> None:
    """4 checks in a set of 12 main trials: one in each quarter of the set (before, checks
    went to a random place after a random original, piling up at the end)."""
    d = write_experiment(tmp_path / "exp", systems=3, items=12, evaluators=6, practice=0,
                         criteria=VAS_ONLY, extra="[checks]\ndegraded = 4\nspeeder_ms = 0\n")
    create_experiment(d)
    trials = pd.read_csv(d / "trials.csv", dtype=str)
    for _ev, sub in trials.groupby("evaluator"):
        sub = sub.assign(position=sub["position"].astype(int)).sort_values("position")
        is_check = sub["qc_kind"].notna().to_numpy()
        assert is_check.sum() == 4
        before = np.cumsum(~is_check)[is_check]  # main trials shown before each check
        # the room for checks (after 2..12 main trials) cut into 4 near-equal parts: one each
        parts = np.array_split(np.arange(2, 13), 4)
        assert [sum(int(b) in part for b in before) for part in parts] == [1, 1, 1, 1], before
        for r in sub[sub["qc_kind"].notna()].itertuples():  # originals come first
            of = int(re.search(r'"of_position": (\d+)', r.details).group(1))
            assert of < r.position - 1


def _exact_one_sided_wilcoxon(diffs: list[float]) -> float:
    """P(W+ >= observed) over all 2^n sign assignments (no ties, no zeros): an independent
    enumeration of the exact null distribution (Wilcoxon 1945)."""
    import itertools

    ranks = np.argsort(np.argsort(np.abs(diffs))) + 1
    w = ranks[np.asarray(diffs) > 0].sum()
    sums = [sum(r for r, s in zip(ranks, signs, strict=True) if s)
            for signs in itertools.product((0, 1), repeat=len(diffs))]
    return float(np.mean(np.asarray(sums) >= w))


def _rate_degraded(app, tok: str, degraded_scores: list[int]):  # noqa: ANN001, ANN202
    """Walk an evaluator through: originals 80, the k-th degraded copy degraded_scores[k]."""
    c = app.test_client()
    _start(c, tok)
    seen = iter(degraded_scores)

    def choose(page: str, data: dict[str, str]) -> None:
        text = re.findall(r'<div class="text" dir="auto">([^<]*)</div>', page)[-1]
        real = re.fullmatch(r"Output of S\d for i\d+\.", text)
        data.update(c0="80" if real else str(next(seen)))
    return _finish(c, tok, np.random.default_rng(0), choose)


def test_degraded_checks_judged_by_a_test_over_the_pairs(tmp_path: Path) -> None:
    """6 degraded checks: one small slip (a copy rated 1 point above its original) among five
    clearly lower copies passes the one-sided paired Wilcoxon test (exact p = 2/64), where the
    old rule failed anyone with a single pair the wrong way; copies rated like the
    originals, or a worse mix, fail."""
    from nlgeval.experiment.quality import quality_flags

    d = write_experiment(tmp_path / "exp", systems=3, items=12, evaluators=3, practice=0,
                         criteria=VAS_ONLY, questionnaire=False,
                         extra="[checks]\ndegraded = 6\nspeeder_ms = 0\n")
    made = create_experiment(d)
    app = create_app(d)
    toks = list(made.evaluators["token"])
    slip = [81, 10, 12, 14, 16, 18]      # differences -1, 70, 68, 66, 64, 62 (out of 100)
    lazy = [80] * 6                       # every copy rated like its original
    mixed = [90, 95, 10, 12, 85, 14]      # two large slips
    for tok, scores in zip(toks, (slip, lazy, mixed), strict=True):
        assert _rate_degraded(app, tok, scores) == 12 + 6
    flags = quality_flags(_store(app), app.extensions["nlgeval_experiment"]["config"])
    f = flags.set_index("evaluator")
    e = list(made.evaluators["evaluator"])
    assert (f["degraded_pairs"] == 6).all()
    for name, scores in ((e[0], slip), (e[2], mixed)):
        want = _exact_one_sided_wilcoxon([(80 - s) / 100 for s in scores])
        assert f.loc[name, "degraded_pvalue"] == pytest.approx(want)
    assert f.loc[e[0], "degraded_pvalue"] == pytest.approx(2 / 64)
    assert f.loc[e[0], "flags"] == "" and f.loc[e[0], "verdict"] == "passed"
    assert f.loc[e[0], "n_failed"] == 1  # the single slip is still counted as a check
    assert f.loc[e[1], "flags"] == "failed_degraded" and f.loc[e[1], "degraded_pvalue"] == 1
    assert f.loc[e[2], "flags"] == "failed_degraded" and f.loc[e[2], "verdict"] == "failed"
    assert list(f["passed"]) == [True, False, False]


def test_never_started_evaluators_are_not_reported_as_passed(tmp_path: Path) -> None:
    from nlgeval.experiment.quality import quality_flags

    d = write_experiment(tmp_path / "exp", practice=0, questionnaire=False,
                         extra="[checks]\nrepeats = 1\nspeeder_ms = 0\n")
    made = create_experiment(d)
    app = create_app(d)
    cfg = app.extensions["nlgeval_experiment"]["config"]
    c = app.test_client()
    toks = list(made.evaluators["token"])
    _finish(c, toks[0], np.random.default_rng(1)) if _start(c, toks[0]) else None
    c2 = app.test_client()
    page = _start(c2, toks[1])  # started, one trial answered, then left
    assert c2.post(form_action(page), data=answer_form(page, np.random.default_rng(2))
                   ).status_code == 303
    f = quality_flags(_store(app), cfg)
    assert f["verdict"].tolist()[1:] == ["in progress", "not started"]
    assert f["passed"].isna().tolist()[1:] == [True, True]
    # the dashboard's token view does not show them as passing either
    page = c.get(f"/r/{made.researcher_token}").get_data(as_text=True)
    row = re.search(r"<tr[^>]*>\s*<td[^>]*>3</td>.*?</tr>", page, re.S).group(0)
    assert "passed" not in row and "not started" in row


def test_checks_alpha_is_validated(tmp_path: Path) -> None:
    from nlgeval.errors import InputError
    from nlgeval.experiment.config import load_config

    d = write_experiment(tmp_path / "ok", extra="[checks]\ndegraded = 5\nalpha = 0.01\n")
    assert load_config(d).checks.alpha == 0.01
    d = write_experiment(tmp_path / "exp", extra="[checks]\ndegraded = 5\nalpha = 1.5\n")
    with pytest.raises(InputError, match="alpha.*between 0 and 1"):
        load_config(d)


# ------------------------------------------------------------------ 4. exports and status
def _join(c, jt: str, **params: str):  # noqa: ANN001, ANN202
    query = "&".join(f"{k}={v}" for k, v in params.items())
    page = c.get(f"/join/{jt}?{query}")
    r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page.get_data(as_text=True)), **params})
    assert r.status_code == 303, r.get_data(as_text=True)[:300]
    return r.headers["Location"].rsplit("/", 1)[1]


def test_participants_export_for_paying_and_audits(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from nlgeval.cli import app as cli_app
    from nlgeval.experiment.storage import Evaluator, Trial

    d = write_experiment(tmp_path / "exp", practice=1, questionnaire=False, extra=(
        '[crowd]\nconsent = "I agree."\ncompletion_code = "C0DE42"\nmin_trial_ms = 0\n'))
    made = create_experiment(d)
    app = create_app(d)
    jt = _store(app).meta()["join_token"]
    prolific = app.test_client()
    tok = _join(prolific, jt, PROLIFIC_PID="p1", STUDY_ID="study9", SESSION_ID="sess7")
    _start(prolific, tok, consent="1")
    _finish(prolific, tok, np.random.default_rng(1))
    mturk = app.test_client()
    tok2 = _join(mturk, jt, workerId="W1", assignmentId="A77", hitId="H5")
    _start(mturk, tok2, consent="1")  # started, nothing answered yet
    out = tmp_path / "participants.csv"
    r = CliRunner().invoke(cli_app, ["experiment", "export", str(d), "--out",
                                     str(tmp_path / "r.csv"), "--participants", str(out)])
    assert r.exit_code == 0, r.output
    t = pd.read_csv(out, dtype=str, keep_default_na=False).set_index("participant")
    assert list(t.index) == ["p1", "W1"]
    assert t.loc["p1", ["STUDY_ID", "SESSION_ID", "completion_code"]].tolist() == [
        "study9", "sess7", "C0DE42"]
    assert t.loc["W1", ["assignment_id", "hit_id", "completion_code"]].tolist() == [
        "A77", "H5", ""]  # not finished: no code yet
    assert t.loc["p1", "consent_utc"].endswith("Z") and t.loc["W1", "consent_utc"]
    # time on task = the server-side times of the answered trials, summed
    with _store(app).read() as s:
        ev_id = s.query(Evaluator.id).filter_by(participant="p1").scalar()
        trials = s.query(Trial).filter(Trial.evaluator_id == ev_id).all()
    want = sum(int(round((x.answered_at - x.available_at).total_seconds() * 1000))
               for x in trials)
    assert int(t.loc["p1", "time_on_task_ms"]) == want
    assert int(t.loc["p1", "trials_answered"]) == len(trials) == 1 + 6
    assert t.loc["W1", "time_on_task_ms"] == ""
    # the same table from the researcher's page
    csv = app.test_client().get(f"/r/{made.researcher_token}/participants.csv")
    assert csv.status_code == 200 and "study9,sess7" in csv.get_data(as_text=True)


def test_status_shows_progress_per_system_and_item(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from nlgeval.cli import app as cli_app

    d = write_experiment(tmp_path / "exp", systems=3, items=6, evaluators=3, practice=0,
                         questionnaire=False)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    shown = []
    for _ in range(4):  # four trials of the first evaluator
        m = re.search(r"Output of (S\d) for (i\d)\.", page)
        shown.append(m.groups())
        assert c.post(form_action(page), data=answer_form(page, np.random.default_rng(0))
                      ).status_code == 303
        page = _page(c, tok)
    r = CliRunner().invoke(cli_app, ["experiment", "status", str(d), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    systems = {x["system"]: x for x in out["systems"]}
    items = {x["item"]: x for x in out["items"]}
    assert set(systems) == {"S1", "S2", "S3"} and len(items) == 6
    for s in systems:  # 3 evaluators x 6 items / 3 systems = 6 trials per system
        assert systems[s]["total"] == 6
        assert systems[s]["done"] == sum(x[0] == s for x in shown)
    for i in items:  # every item judged once per evaluator
        assert items[i]["total"] == 3 and items[i]["done"] == sum(x[1] == i for x in shown)
    text = CliRunner().invoke(cli_app, ["experiment", "status", str(d)]).stdout
    assert "per system" in text and "items fully judged: 0 of 6" in text


# ------------------------------------------------------------------ 6. languages
def test_every_scale_preset_is_translated_in_every_catalogue() -> None:
    from nlgeval.experiment.i18n import CATALOGUES
    from nlgeval.experiment.i18n_scales import DEFAULT_QUESTION
    from nlgeval.experiment.scales import PRESETS

    texts = {t for p in PRESETS.values() for t in (*p.labels, *p.descriptions)}
    texts.add(DEFAULT_QUESTION)
    for lang, cat in CATALOGUES.items():
        if lang == "en":
            continue
        assert sorted(t for t in texts if t not in cat) == [], lang
        assert all(cat[t] != t for t in texts), lang
        assert "%(name)s" in cat[DEFAULT_QUESTION]


@pytest.mark.parametrize(("language", "want", "english"), [
    ("de", ["Qualität", "Sehr gut", "Mittelmäßig", "Wie bewerten Sie den Text in Bezug auf "
            "Flüssigkeit?", "Der Text ist so lesbar"],
     ["Very good", ">quality<", "The text is so"]),
    ("ar", ["الجودة", "جيد جدًا", "مقبول", "كيف تقيّم الطلاقة في هذا النص؟"],
     ["Very good", ">quality<", "How would you rate"]),
])
def test_scale_labels_and_criterion_names_in_the_interface_language(
        tmp_path: Path, language: str, want: list[str], english: list[str]) -> None:
    crit = ('[[criteria]]\nname = "quality"\ntool = "vds"\nscale = "text5"\n'
            'definition = "Readable, natural, complete."\n\n'
            '[[criteria]]\nname = "fluency"\ntool = "vas"\nleft_label = "0%"\n'
            'right_label = "100%"\n')
    d = write_experiment(tmp_path / language, practice=0, criteria=crit,
                         extra=f'language = "{language}"')
    made = create_experiment(d)
    c = create_app(d).test_client()
    tok = made.evaluators["token"].iloc[0]
    intro = _page(c, tok)
    page = _start(c, tok)
    for text in want:
        assert text in page, text
    for text in english:
        assert text not in page, text
    assert ">0%<" in page and ">100%<" in page  # the researcher's own labels, as written
    assert want[0] in intro  # the introduction lists the criteria by their shown names


def test_a_criterion_label_is_shown_and_the_name_stays_the_id(tmp_path: Path) -> None:
    crit = ('[[criteria]]\nname = "q"\nlabel = "Verständlichkeit"\ntool = "vds"\n'
            'scale = "text5"\ndefinition = "Wie gut versteht man den Text?"\n')
    d = write_experiment(tmp_path / "exp", practice=0, criteria=crit, questionnaire=False,
                         extra='language = "de"')
    made = create_experiment(d)
    c = create_app(d).test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    assert "Verständlichkeit" in page and "in Bezug auf Verständlichkeit?" in page
    r = c.post(form_action(page), data={"csrf": csrf_of(page)})  # nothing chosen
    assert "„Verständlichkeit“" in r.get_data(as_text=True)
    data = answer_form(page, np.random.default_rng(0))
    assert c.post(form_action(page), data=data).status_code == 303
    from nlgeval.experiment.export import export_ratings

    app_store = create_app(d).extensions["nlgeval_experiment"]
    assert set(export_ratings(app_store["store"], app_store["config"])["criterion"]) == {"q"}


# ------------------------------------------------------------------ 5. platforms
MTURK = "https://worker.mturk.com"


def test_frames_are_refused_unless_the_platform_is_listed(tmp_path: Path) -> None:
    plain = write_experiment(tmp_path / "plain", practice=0, extra="[crowd]\n")
    framed = write_experiment(tmp_path / "framed", practice=0, extra=(
        f'[crowd]\nframe_ancestors = ["{MTURK}", "https://*.mturk.com"]\n'))
    for d in (plain, framed):
        create_experiment(d)
    r = create_app(plain).test_client().get("/")
    assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
    assert r.headers["X-Frame-Options"] == "DENY"
    c = create_app(framed).test_client()
    r = c.get(f"/join/{_store(c.application).meta()['join_token']}")
    csp = r.headers["Content-Security-Policy"]
    assert f"frame-ancestors {MTURK} https://*.mturk.com;" in csp
    assert "X-Frame-Options" not in r.headers  # it would forbid the frame CSP allows
    cookie = r.headers["Set-Cookie"]  # a third-party context: only SameSite=None is sent
    assert "SameSite=None" in cookie and "Secure" in cookie and "Partitioned" in cookie


@pytest.mark.parametrize("bad", ["*", "'self'", "https://a.org; script-src *",
                                 "http://worker.mturk.com", "https://a.org/path"])
def test_frame_ancestors_must_be_https_origins(tmp_path: Path, bad: str) -> None:
    import json

    from nlgeval.errors import InputError
    from nlgeval.experiment.config import load_config

    d = write_experiment(tmp_path / "exp",
                         extra=f"[crowd]\nframe_ancestors = [{json.dumps(bad)}]\n")
    with pytest.raises(InputError, match="frame_ancestors.*is not an https origin"):
        load_config(d)


PLATFORM = '''[crowd]
consent = "I agree to take part."
min_trial_ms = 0
no_consent_code = "NOCONS"
no_consent_redirect_url = "https://app.prolific.com/submissions/complete?cc={code}"
screened_out_code = "SCREEN1"

[[crowd.screening]]
name = "native"
question = "Is English your first language?"
options = ["yes", "no"]
accept = ["yes"]
'''


def _crowd_app(tmp_path: Path):  # noqa: ANN202
    d = write_experiment(tmp_path / "exp", practice=0, questionnaire=False, extra=PLATFORM)
    create_experiment(d)
    app = create_app(d)
    return d, app, _store(app).meta()["join_token"]


def test_did_not_consent_gets_the_code_and_frees_the_set(tmp_path: Path) -> None:
    from nlgeval.experiment.export import participants_table
    from nlgeval.experiment.storage import Evaluator

    _d, app, jt = _crowd_app(tmp_path)
    c = app.test_client()
    tok = _join(c, jt, PROLIFIC_PID="p1", STUDY_ID="st", SESSION_ID="s1")
    intro = _page(c, tok)
    assert "I do not agree" in intro and "Is English your first language?" in intro
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(intro), "decline": "1"})
    page = r.get_data(as_text=True)
    assert r.status_code == 200 and "NOCONS" in page
    assert 'href="https://app.prolific.com/submissions/complete?cc=NOCONS"' in page
    assert c.get(f"/e/{tok}").status_code == 404  # the spent link opens nothing
    with _store(app).read() as s:
        evs = s.query(Evaluator).order_by(Evaluator.id).all()
        assert evs[0].claimed_at is None and evs[0].started_at is None  # back in the pool
        kept = [e for e in evs if e.outcome]
        assert [(e.outcome, e.participant, e.consent_at) for e in kept] == [
            ("no_consent", "p1", None)]
    t = participants_table(_store(app), app.extensions["nlgeval_experiment"]["config"])
    assert t[["participant", "outcome", "completion_code"]].values.tolist() == [
        ["p1", "no_consent", ""]]
    # the next participant gets that set
    tok2 = _join(app.test_client(), jt, PROLIFIC_PID="p2", STUDY_ID="st", SESSION_ID="s2")
    with _store(app).read() as s:
        assert s.query(Evaluator).filter_by(token=tok2).one().id == evs[0].id


def test_screening_answers_screen_out_or_let_through(tmp_path: Path) -> None:
    _d, app, jt = _crowd_app(tmp_path)
    c = app.test_client()
    tok = _join(c, jt, PROLIFIC_PID="p1", STUDY_ID="st", SESSION_ID="s1")
    intro = _page(c, tok)
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(intro), "consent": "1"})
    assert r.status_code == 422 and "Please answer this question." in r.get_data(as_text=True)
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(intro), "consent": "1",
                                        "s_native": "maybe"})
    assert r.status_code == 400  # not an option the form offers
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(intro), "consent": "1",
                                        "s_native": "no"})
    assert r.status_code == 200 and "SCREEN1" in r.get_data(as_text=True)
    c2 = app.test_client()
    tok2 = _join(c2, jt, PROLIFIC_PID="p2", STUDY_ID="st", SESSION_ID="s2")
    intro = _page(c2, tok2)
    r = c2.post(f"/e/{tok2}/start", data={"csrf": csrf_of(intro), "consent": "1",
                                          "s_native": "yes"})
    assert r.status_code == 303 and "/trial/" in _page(c2, tok2)


def test_the_kept_answers_of_a_released_set_are_not_reported_as_passed(tmp_path: Path) -> None:
    from nlgeval.experiment.quality import quality_flags
    from nlgeval.experiment.storage import utcnow
    from nlgeval.experiment.storage.leases import release_set

    d = write_experiment(tmp_path / "exp", practice=0, questionnaire=False)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    assert c.post(form_action(page), data=answer_form(page, np.random.default_rng(0))
                  ).status_code == 303
    with _store(app).write() as s:
        release_set(s, 1, utcnow())
    f = quality_flags(_store(app), app.extensions["nlgeval_experiment"]["config"])
    kept = f[f["evaluator"].str.contains("~released")]
    assert kept["verdict"].tolist() == ["released"] and kept["passed"].isna().all()
    assert f.loc[f["evaluator"] == "1", "verdict"].item() == "not started"
