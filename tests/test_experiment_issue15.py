"""End-to-end checks of the remaining points of the field-study checklist: the analysis side
filters on the experiment's QC flags, scale wording fit for text, slider contrast."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import answer_form, csrf_of, form_action, write_experiment
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.example import write_example

ROOT = Path(__file__).resolve().parents[1] / "nlgeval" / "experiment"
CHECKS = '''
[checks]
repeats = 1
degraded = 1
speeder_ms = 0
'''


def _walk(c, tok: str, careless: bool, rng: np.random.Generator) -> None:  # noqa: ANN001
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)}).status_code == 303
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    first: set[str] = set()
    while "/trial/" in page:
        data = answer_form(page, rng)  # c0: the 5-point scale, c1: the slider
        m = re.search(r"Output of (S\d) for (\w+)\.", page)
        if m is None:  # the degraded copy: bottom (attentive) or top (careless)
            data.update(c0="5" if careless else "1", c1="100" if careless else "0")
        elif m.group(0) in first and careless:  # the repeat contradicts the first answer
            data.update(c0="1", c1="0")
        else:  # a first answer, or an attentive repeat (the same answer again)
            data.update(c0="5" if careless else "4", c1="100" if careless else "70")
            first.add(m.group(0))
        assert c.post(form_action(page), data=data).status_code == 303
        page = c.get(f"/e/{tok}").get_data(as_text=True)


def test_export_qc_flags_filter_the_analysis(tmp_path: Path) -> None:
    """A careless evaluator fails both attention checks in the app; the CLI export carries
    that verdict, and the analysis side's ``--qc drop`` filter removes exactly that rater."""
    from nlgeval.human.qc import apply_qc

    d = write_experiment(tmp_path / "qc", systems=3, items=6, evaluators=3, practice=0,
                         extra=CHECKS, questionnaire=False)
    made = create_experiment(d)
    app = create_app(d)
    toks = list(made.evaluators["token"])
    for tok, careless in ((toks[0], False), (toks[1], True), (toks[2], False)):
        _walk(app.test_client(), tok, careless, np.random.default_rng(5))
    out = tmp_path / "ratings.csv"
    r = CliRunner().invoke(cli_app, ["experiment", "export", str(d), "--out", str(out)])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out, keep_default_na=False, dtype={"rater": str})
    assert {"qc_passed", "qc_flags", "time_on_task_ms", "speeder"} <= set(df.columns)
    bad = made.evaluators["evaluator"].iloc[1]
    verdict = df.groupby("rater")["qc_passed"].first()
    assert verdict.to_dict() == {r: r != bad for r in verdict.index}
    assert set(df.loc[df["rater"] == bad, "qc_flags"]) == {"failed_repeat;failed_degraded"}
    kept, report = apply_qc(df, "drop")
    assert report is not None and list(report.removed) == [bad]
    assert sorted(kept["rater"].unique()) == sorted(set(df["rater"]) - {bad})
    assert len(kept) == len(df) - (df["rater"] == bad).sum()


@pytest.mark.parametrize("mode", ["absolute", "relative"])
def test_default_scale_wording_talks_about_text_not_images(tmp_path: Path, mode: str) -> None:
    """The example that ``experiment init`` writes (and its default scales) describe texts;
    nothing an evaluator reads mentions images."""
    d = write_example(tmp_path / mode, mode)  # type: ignore[arg-type]
    made = create_experiment(d, evaluators=None if mode == "absolute" else 3)
    c = create_app(d).test_client()
    tok = made.evaluators["token"].iloc[0]
    pages = [c.get(f"/e/{tok}").get_data(as_text=True)]
    c.post(f"/e/{tok}/start", data={"csrf": csrf_of(pages[0])})
    pages.append(c.get(f"/e/{tok}").get_data(as_text=True))
    assert "/trial/" in pages[1] and "<legend" in pages[1]  # a criterion's question
    for page in pages:
        shown = re.sub(r"<[^>]*>", " ", page)  # what is read, not the markup (icon type)
        assert not re.search(r"\bimages?\b|\bpictures?\b", shown, re.I)


def _luminance(hex_colour: str) -> float:
    """WCAG 2.x relative luminance (sRGB, https://www.w3.org/TR/WCAG21/#dfn-relative-luminance)."""
    h = hex_colour.lstrip("#")
    h = "".join(ch * 2 for ch in h) if len(h) == 3 else h
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_slider_contrast_is_at_least_3_to_1() -> None:
    """WCAG 1.4.11 (non-text contrast): the slider, untouched and moved, against the card."""
    css = (ROOT / "static" / "style.css").read_text(encoding="utf-8")
    var = dict(re.findall(r"--(\w+):\s*(#[0-9a-fA-F]{3,6})\b", css))
    card = var["card"]
    untouched = re.search(r"\.vas input\[type=range\][^}]*accent-color:\s*(#[0-9a-fA-F]{6})",
                          css).group(1)  # type: ignore[union-attr]
    moved = re.search(r"\.vas\.moved input\[type=range\][^}]*accent-color:\s*var\(--(\w+)\)",
                      css).group(1)  # type: ignore[union-attr]
    assert _contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # WCAG's example
    assert _contrast(untouched, card) >= 3
    assert _contrast(var[moved], card) >= 3
