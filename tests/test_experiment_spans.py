"""The error-span modes in-process (Flask test client): MQM (Freitag et al. 2021) and ESA
(Kocmi et al. 2024) -- config validation, server-side checks of the posted spans, storage and
the two exports (one score per output, one row per span), which read back into
nlgeval.human.spans."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from experiment_helpers import csrf_of, form_action, write_experiment

from nlgeval.errors import InputError
from nlgeval.experiment import create_experiment, load_config
from nlgeval.experiment.app import create_app
from nlgeval.experiment.export import export_ratings, export_spans
from nlgeval.human.spans import esa_ratings, mqm_span_ratings


def _setup(tmp_path: Path, mode: str, extra: str = ""):  # noqa: ANN202
    d = write_experiment(tmp_path / mode, mode=mode, criteria="", extra=extra, practice=0,
                         evaluators=3, questionnaire=False)
    made = create_experiment(d)
    app = create_app(d)
    app.testing = True
    c = app.test_client()
    tok = str(made.evaluators["token"].iloc[0])
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)}).status_code == 303
    return app, c, tok


def _page(c, tok: str) -> tuple[str, str]:  # noqa: ANN001
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    text = re.search(r'class="span-text[^>]*>([^<]*)<', page).group(1)
    return page, text


def _span(text: str, part: str, category: str, severity: str) -> dict:
    start = text.index(part)
    return {"start": start, "end": start + len(part), "category": category,
            "severity": severity, "quote": part}


def _store(app):  # noqa: ANN001, ANN202
    ext = app.extensions["nlgeval_experiment"]
    return ext["store"], ext["config"]


def test_mqm_spans_are_checked_stored_scored_and_exported(tmp_path: Path) -> None:
    app, c, tok = _setup(tmp_path, "mqm")
    page, text = _page(c, tok)
    base = {"csrf": csrf_of(page)}
    url = form_action(page)
    # nothing marked and "no errors" not ticked: asked again, nothing stored
    r = c.post(url, data={**base, "spans": "[]"})
    assert r.status_code == 422 and "tick the box" in r.get_data(as_text=True)
    bad = [
        [{**_span(text, "Output", "Accuracy/Mistranslation", "major"), "end": 999}],
        [_span(text, "Output", "Made-up category", "major")],
        [_span(text, "Output", "Accuracy/Mistranslation", "critical")],
        [{**_span(text, "Output", "Accuracy/Mistranslation", "major"), "quote": "Outpu"}],
        [_span(text, "Output", "Non-translation", "major"),
         _span(text, ".", "Fluency/Punctuation", "minor")],
    ]
    for spans in bad:
        assert c.post(url, data={**base, "spans": json.dumps(spans)}).status_code == 400
    assert c.post(url, data={**base, "spans": "not json"}).status_code == 400
    good = [_span(text, "Output", "Accuracy/Mistranslation", "major"),
            _span(text, ".", "Fluency/Punctuation", "minor"),
            {"start": None, "end": None, "category": "Accuracy/Omission", "severity": "minor"}]
    assert c.post(url, data={**base, "spans": json.dumps(good)}).status_code == 303
    page, text2 = _page(c, tok)
    assert c.post(form_action(page), data={"csrf": csrf_of(page), "spans": "[]",
                                           "no_errors": "1"}).status_code == 303
    store, cfg = _store(app)
    ratings = export_ratings(store, cfg)
    assert ratings["criterion"].tolist() == ["MQM", "MQM"]
    assert ratings["score"].tolist() == [-(5 + 0.1 + 1), 0.0]
    assert ratings[["n_major", "n_minor", "n_errors"]].to_numpy().tolist() == [[1, 2, 3],
                                                                                [0, 0, 0]]
    spans = export_spans(store)
    assert len(spans) == 4  # three errors, and one row for the output without errors
    first = spans.iloc[0]
    assert (first["marked"], first["category"], first["severity"]) == (
        "Output", "Accuracy/Mistranslation", "major")
    assert first["text"][first["start"]:first["end"]] == "Output"
    assert pd.isna(spans.iloc[2]["start"]) and spans.iloc[2]["severity"] == "minor"
    assert spans.iloc[3]["severity"] == "" and spans.iloc[3]["text"] == text2
    # the span export reads back into the library: the same segment scores
    again = mqm_span_ratings(spans, breakdown=True)
    mqm = again[again["criterion"] == "MQM"].sort_values("score")
    assert mqm["score"].tolist() == pytest.approx(ratings["score"].sort_values().tolist())
    assert set(again["criterion"]) >= {"MQM-Accuracy", "MQM-Fluency"}


def test_mqm_category_subset_weights_and_non_translation(tmp_path: Path) -> None:
    extra = '''[mqm]
categories = ["Accuracy/Mistranslation", "Fluency/Punctuation", "Non-translation"]
[mqm.weights]
major = 10
'''
    app, c, tok = _setup(tmp_path, "mqm", extra)
    page, text = _page(c, tok)
    assert 'value="Accuracy/Omission"' not in page and 'value="Non-translation"' in page
    base, url = {"csrf": csrf_of(page)}, form_action(page)
    omission = [{"start": None, "end": None, "category": "Accuracy/Omission",
                 "severity": "minor"}]
    assert c.post(url, data={**base, "spans": json.dumps(omission)}).status_code == 400
    whole = [{"start": 0, "end": len(text), "category": "Non-translation",
              "severity": "major", "quote": text}]
    assert c.post(url, data={**base, "spans": json.dumps(whole)}).status_code == 303
    page, text = _page(c, tok)
    major = [_span(text, "Output", "Accuracy/Mistranslation", "major")]
    assert c.post(form_action(page), data={"csrf": csrf_of(page),
                                           "spans": json.dumps(major)}).status_code == 303
    store, cfg = _store(app)
    assert export_ratings(store, cfg)["score"].tolist() == [-25.0, -10.0]


def test_esa_spans_then_a_score(tmp_path: Path) -> None:
    app, c, tok = _setup(tmp_path, "esa")
    page, text = _page(c, tok)
    assert 'type="range" name="c0"' in page and "Perfect meaning and grammar" in page
    assert 'id="span-category"' not in page  # ESA spans have no categories
    base, url = {"csrf": csrf_of(page)}, form_action(page)
    spans = [_span(text, "Output", "", "major"), _span(text, "for", "", "minor")]
    r = c.post(url, data={**base, "spans": json.dumps(spans), "c0": "40"})  # slider not moved
    assert r.status_code == 422
    assert json.dumps(spans).replace('"', "&#34;") in r.get_data(as_text=True)  # kept
    tagged = [{**spans[0], "category": "Accuracy/Mistranslation"}]
    assert c.post(url, data={**base, "spans": json.dumps(tagged), "c0": "40",
                             "c0_moved": "1"}).status_code == 400
    assert c.post(url, data={**base, "spans": json.dumps(spans), "c0": "40",
                             "c0_moved": "1"}).status_code == 303
    page, _ = _page(c, tok)
    assert c.post(form_action(page), data={"csrf": csrf_of(page), "spans": "[]",
                                           "c0": "97", "c0_moved": "1"}).status_code == 303
    store, cfg = _store(app)
    ratings = export_ratings(store, cfg)
    assert ratings["criterion"].tolist() == ["ESA", "ESA"]
    assert ratings["score"].tolist() == [40.0, 97.0]
    assert ratings["n_major"].tolist() == [1, 0] and ratings["n_minor"].tolist() == [1, 0]
    sp = export_spans(store)
    assert sp["severity"].tolist() == ["major", "minor", ""]
    both = esa_ratings(ratings, sp)
    spans_score = both[both["criterion"] == "ESA-spans"].set_index("item")["score"]
    esa = both[both["criterion"] == "ESA"].set_index("item")["score"]
    assert spans_score[esa.idxmin()] == -6.0 and spans_score[esa.idxmax()] == 0.0


@pytest.mark.parametrize(("mode", "extra", "column"), [
    ("mqm", '[[criteria]]\nname = "q"\ntool = "vds"\nscale = "text5"\n', "criteria"),
    ("absolute", '[mqm]\ncategories = ["Other"]\n', "mqm"),
    ("mqm", '[mqm]\ncategories = ["Other", "Other"]\n', "mqm.categories"),
    ("mqm", '[mqm]\nseverities = ["critical"]\n', "mqm.severities"),
    ("mqm", '[mqm.weights]\nmajor = "five"\n', "mqm.weights"),
    ("esa", '[checks]\nknown_answer = 1\n', "checks.known_answer"),
    ("esa", '[esa]\ncolour = "red"\n', "esa.colour"),
])
def test_span_mode_config_errors_name_the_key(tmp_path: Path, mode: str, extra: str,
                                               column: str) -> None:
    d = write_experiment(tmp_path / "x", mode=mode, criteria="", extra=extra)
    if mode == "absolute":
        text = (d / "experiment.toml").read_text(encoding="utf-8")
        (d / "experiment.toml").write_text(text + '\n[[criteria]]\nname = "q"\ntool = "vds"\n'
                                           'scale = "text5"\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_config(d)
    assert e.value.key == column


def test_mqm_fingerprint_follows_the_typology(tmp_path: Path) -> None:
    a = load_config(write_experiment(tmp_path / "a", mode="mqm", criteria=""))
    b = load_config(write_experiment(tmp_path / "b", mode="mqm", criteria="",
                                     extra='[mqm]\ncategories = ["Other"]\n'))
    assert a.fingerprint() != b.fingerprint()
    assert a.criterion_names == ["MQM"] and a.mode_impl.name == "mqm"
