"""The report's figures and page: which figures are drawn, in which formats, that titles do
not overlap the panels (matplotlib bounding boxes), and that a 70-metric report stays small
and readable. No timings: speed lives in benchmarks/bench_main_job.py and bench_metric_zoo.py.
"""

from __future__ import annotations

import dataclasses
import re
from html import unescape
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nlgeval.errors import InputError  # noqa: E402
from nlgeval.report import drawing, page, writer  # noqa: E402
from nlgeval.report.paper_tables import study_tables  # noqa: E402
from nlgeval.report.settings import ValidationSettings  # noqa: E402
from nlgeval.report.study import ValidationStudy  # noqa: E402

LEVELS = ["segment", "item", "system"]


def _fake_study(n_metrics: int, n_criteria: int = 6, n_systems: int = 11, seed: int = 0,
                long_names: bool = False) -> ValidationStudy:
    """A study frame with the shape of a real one (no statistics run: the numbers are drawn
    at random; only the report's layout is under test)."""
    rng = np.random.default_rng(seed)
    stem = "a_rather_long_llm_judge_name_for_criterion_" if long_names else "m"
    metrics = [f"{stem}{k:02d}" for k in range(n_metrics)]
    criteria = [f"crit{c}" for c in range(n_criteria)]
    rows = []
    for m in metrics:
        for c in criteria:
            for lv in LEVELS:
                r = float(np.clip(rng.normal(0.4, 0.25), -0.99, 0.99))
                rows.append({"metric": m, "criterion": c, "level": lv, "statistic": "pearson",
                             "value": r, "pvalue": float(rng.uniform(0, 0.2)),
                             "pvalue_corrected": float(rng.uniform(0, 0.5)),
                             "ci_low": r - 0.15, "ci_high": r + 0.15, "n": 100})
    corr = pd.DataFrame(rows)
    systems = [f"sys{s}" for s in range(n_systems)]
    seg = pd.DataFrame({"system": np.repeat(systems, 5), "item": np.tile(range(5), n_systems)})
    for col in [*metrics, *criteria]:
        seg[col] = rng.normal(size=len(seg))
    clusters = corr[corr["level"] == "system"].assign(cluster=1, method="williams")[
        ["metric", "value", "cluster", "criterion", "level", "statistic", "method"]]
    empty = pd.DataFrame()
    config = ValidationSettings(levels=LEVELS, coefficients=["pearson"], permutations=0)
    return ValidationStudy(
        corpus="zoo", config=config, metrics=metrics, criteria=criteria, systems=systems,
        excluded_systems=[], correlations=corr, metric_system_scores=empty,
        human_system_scores=empty, comparisons=pd.DataFrame(columns=["metric_a", "metric_b",
                                                                     "pvalue"]),
        clusters=clusters, human_correlations=empty, rater_agreement=empty, segments=seg,
        signatures={}, higher_is_better=dict.fromkeys(metrics, True), missing={})


def _overlaps(a: Any, b: Any) -> bool:
    return a.overlaps(b) and a.intersection(a, b).width > 0.5 and \
        a.intersection(a, b).height > 0.5


def _draw(kind: str, data: dict[str, Any]) -> Any:
    fig = drawing.DRAW[kind](plt, data)
    fig.canvas.draw()
    return fig


@pytest.mark.parametrize("long_names", [False, True])
def test_scatter_titles_do_not_overlap_panels(long_names: bool) -> None:
    study = _fake_study(30, n_criteria=1, long_names=long_names)
    coef0, rows = writer._coef_rows(study)
    (_, kind, data), = writer._scatter_specs(study, coef0, rows)
    assert len(data["panels"]) == writer.SCATTER_PANELS  # the best-agreeing twelve of 30
    fig = _draw(kind, data)
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.axison]
    titles = [ax.title.get_window_extent(renderer) for ax in panels]
    boxes = [ax.get_tightbbox(renderer) for ax in panels]
    frames = [ax.get_window_extent(renderer) for ax in panels]
    sup = fig._suptitle.get_window_extent(renderer)
    fig_box = fig.bbox
    for box in boxes:  # tick labels and axis labels inside the figure
        assert fig_box.x0 - 1 <= box.x0 and box.x1 <= fig_box.x1 + 1
    for ax, frame in zip(panels, frames, strict=True):  # x labels no wider than their panel
        label = ax.xaxis.label.get_window_extent(renderer)
        assert frame.x0 - 2 <= label.x0 and label.x1 <= frame.x1 + 2, ax.get_xlabel()
    for i, t in enumerate(titles):
        assert fig_box.x0 <= t.x0 and t.x1 <= fig_box.x1, "title outside the figure"
        assert not _overlaps(t, sup), "a panel title runs into the figure title"
        for j, frame in enumerate(frames):
            assert not _overlaps(t, frame), f"title {i} overlaps panel {j}"
        for j, other in enumerate(titles):
            assert i == j or not _overlaps(t, other), f"titles {i} and {j} overlap"
        for j, box in enumerate(boxes):  # the x labels and ticks of the panel above
            if j != i:
                assert not _overlaps(t, box), f"title {i} overlaps the labels of panel {j}"
    plt.close(fig)


def test_heatmap_sorted_by_agreement_and_forest_layout() -> None:
    study = _fake_study(40)
    coef0, rows = writer._coef_rows(study)
    specs = writer._heatmap_specs(study, coef0, rows)
    assert [s[0] for s in specs] == [f"heatmap_{lv}" for lv in LEVELS]
    mat = specs[0][2]["r"]
    mean_r = mat.mean(axis=1).to_numpy()
    assert np.all(np.diff(mean_r) <= 1e-12)  # best agreement first
    (_, kind, data), = writer._forest_spec(study, coef0, rows)
    assert data["levels"] == LEVELS and len(data["metrics"]) == 40
    fig = _draw(kind, data)
    renderer = fig.canvas.get_renderer()
    assert len(fig.axes) == len(LEVELS) * 6
    ticks = [lab.get_window_extent(renderer) for ax in fig.axes
             for lab in ax.get_xticklabels() if lab.get_text()]
    for i, a in enumerate(ticks):  # x tick labels of neighbouring panels stay apart
        assert not any(_overlaps(a, b) for b in ticks[i + 1:])
    plt.close(fig)


def test_figure_formats_png_only_unless_asked(tmp_path: Path) -> None:
    assert writer.figure_formats(None) == ("png",)
    assert writer.figure_formats("png,pdf") == ("png", "pdf")
    assert writer.figure_formats("none") == ()
    with pytest.raises(InputError, match="unknown format"):
        writer.figure_formats("gif")
    study = _fake_study(3, n_criteria=2)
    png = writer.study_figures(study, tmp_path / "a", workers=1)
    assert sorted(png) == ["forest", "heatmap_item", "heatmap_segment", "heatmap_system",
                           "scatter_crit0", "scatter_crit1"]
    assert {p.suffix for paths in png.values() for p in paths} == {".png"}
    both = writer.study_figures(study, tmp_path / "b", workers=1, formats="pdf")
    assert {p.suffix for paths in both.values() for p in paths} == {".png", ".pdf"}
    assert writer.study_figures(study, tmp_path / "c", workers=1, formats="none") == {}


def test_large_report_is_small_collapsed_and_says_missing_clusters(tmp_path: Path) -> None:
    study = _fake_study(72)
    # no clusters at the item level (as with --permutations 0): the page must say so
    study = dataclasses.replace(study, clusters=study.clusters.iloc[0:0])
    record = writer.write_report(study, tmp_path / "rep")
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert (tmp_path / "rep" / "report.html").stat().st_size < 2 * 2**20
    assert "<details open><summary><h2>Figures</h2>" in html
    assert html.count("<details>") >= 2  # the long sections start collapsed
    assert "<details><summary><h2>Overview</h2>" in html  # 216 rows: collapsed
    assert "No significance clusters for:" in html
    assert re.search(r"crit0, item level: Williams' test does not apply", unescape(html))
    assert "tables/correlations_segment.csv" in html  # 1,296-row table left to its file
    assert all(not f.endswith(".pdf") for f in record["files"])


def test_small_tables_stay_on_the_page() -> None:
    study = _fake_study(3, n_criteria=2)
    tables = study_tables(study)
    html = page.render_html(study, tables, {}, {})
    assert "rather than on this page" not in html
    assert "<details open><summary><h2>Overview</h2>" in html  # short: open
    assert html.count("<table>") == len(tables)


def test_cli_checks_figure_formats_before_reading_data(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    from nlgeval.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["validate", "no-such-corpus", "--figures", "gif"])
    assert exc.value.code == 2
    assert "--figures: unknown format(s) gif" in capsys.readouterr().err  # not the corpus
