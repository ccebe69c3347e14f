"""The meta-analysis report: tables (CSV, Markdown, LaTeX), forest plots, HTML and Markdown
pages and ``run.json``.

The page opens with one verdict per metric and construct (read from the prediction interval,
Riley et al. 2011), then the pooled table, the per-study effects with their weights, the
moderator and metric-comparison tables and one forest plot per metric and construct, and says
which correlations were not pooled and why, and how dependence between correlations was
handled.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from nlgeval.figures import save_figure
from nlgeval.meta_analysis.analysis import MetaAnalysis
from nlgeval.meta_analysis.forest import forest_plot
from nlgeval.provenance import run_record
from nlgeval.results import jsonable
from nlgeval.tables import PaperTable

__all__ = ["DEPENDENCE_NOTE", "meta_tables", "write_meta_report"]

DEPENDENCE_NOTE = (
    "Dependence: the correlations of one study share its outputs, so two criteria of one study "
    "are not independent effects; the criterion map takes one criterion per study and "
    "construct, so each pooled estimate has one effect per study; --dependence rve pools the "
    "map's related criteria too, with robust variance estimation (Hedges, Tipton & Johnson "
    "2010, without the small-sample correction of Tipton 2015). Segment-level correlations pool "
    "outputs that share items and systems, so 1/(n - 3) understates their variance; "
    "--variance bootstrap takes it from each study's bootstrap interval instead. Metric "
    "comparisons use the covariance of dependent correlations (Steiger 1980).")

_CSS = """body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.45;padding:0 1em}.verdict{background:#eef6ee;border:1px solid #9c9;
padding:.5em 1em}table{border-collapse:collapse;margin:1em 0;font-size:.85em}
caption{caption-side:top;text-align:left;font-weight:600}th,td{border-bottom:1px solid #e3e3e3;
padding:.25em .6em;text-align:right}td:first-child,th:first-child{text-align:left}
img{max-width:100%}.note{color:#555;font-size:.9em}"""


def meta_tables(result: MetaAnalysis) -> dict[str, PaperTable]:
    """The report's tables by file stem.

    Examples
    --------
    >>> import pandas as pd
    >>> from nlgeval.meta_analysis.analysis import meta_analyse
    >>> eff = pd.DataFrame({"study": ["a", "b", "c"], "r": [0.5, 0.3, 0.4], "n": [50, 80, 60]})
    >>> sorted(meta_tables(meta_analyse(eff)))
    ['effects', 'pooled']
    """
    level = f"{int(round(100 * result.settings.confidence_level))}%"
    rve = result.settings.dependence == "rve"
    cols = ["metric", "construct", "level", "k", *(["n_effects"] if rve else []), "r_pooled",
            "ci_low", "ci_high", "pi_low", "pi_high", "tau2", "i2", "q",
            *([] if rve else ["q_pvalue"])]
    pooled = result.pooled[cols].copy()
    pooled["i2"] = 100 * pooled["i2"]
    hk = ", Hartung-Knapp" if result.settings.hartung_knapp else ""
    model = (f"robust variance estimation, Hedges, Tipton & Johnson 2010, rho = "
             f"{result.settings.rho:g}" if rve else f"tau^2: {result.settings.tau2.upper()}{hk}")
    tables = {"pooled": PaperTable(
        pooled, f"Random-effects meta-analysis of Pearson correlations (Fisher z, {model}); "
                f"{level} confidence and prediction intervals; I^2 in %.",
        label="tab:meta-pooled", digits={"tau2": 4, "q": 2, "i2": 1})}
    eff_cols = [c for c in ("metric", "construct", "study", "corpus", "criterion", "task",
                            "language", "r", "n", "weight") if c in result.effects.columns]
    tables["effects"] = PaperTable(result.effects[eff_cols], "Per-study correlations pooled, "
                                   "with their random-effects weights.",
                                   label="tab:meta-effects")
    if not result.moderators.empty:
        tables["moderators"] = PaperTable(
            result.moderators, "Moderator: per-level pooled r (meta-regression, common tau^2), "
            "Q_M test and Q_between of separate subgroup models.", label="tab:meta-moderators")
    if not result.comparisons.empty:
        tables["comparisons"] = PaperTable(
            result.comparisons, "Metric A vs metric B across studies: pooled difference of "
            "Fisher z of dependent correlations (Steiger 1980); positive: A agrees better.",
            label="tab:meta-comparisons")
    return tables


def write_meta_report(result: MetaAnalysis, out: str | Path,
                      extra_record: dict[str, Any] | None = None) -> Path:
    """Write the report directory and return the path of ``report.html``.

    Parameters
    ----------
    result : MetaAnalysis
        The meta-analysis to report.
    out : str or Path
        Report directory (created).
    extra_record : dict, optional
        Extra entries for ``run.json`` (e.g. the inputs of :func:`run_meta_analysis`).

    Returns
    -------
    Path
        The path of ``report.html``.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> from nlgeval.meta_analysis.analysis import meta_analyse
    >>> eff = pd.DataFrame({"study": ["a", "b", "c"], "r": [0.5, 0.3, 0.4], "n": [50, 80, 60]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = write_meta_report(meta_analyse(eff), tmp)
    ...     sorted(p.name for p in page.parent.iterdir())
    ['effects.csv', 'figures', 'pooled.csv', 'report.html', 'report.md', 'run.json', 'tables']
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = meta_tables(result)
    for stem, table in tables.items():
        table.write(out / "tables", stem)
    result.pooled.to_csv(out / "pooled.csv", index=False)
    result.effects.drop(columns=["yi"], errors="ignore").to_csv(out / "effects.csv",
                                                                index=False)
    figures = _figures(result, out / "figures")
    (out / "report.md").write_text(_markdown(result, tables, figures), encoding="utf-8")
    page = out / "report.html"
    page.write_text(_html(result, tables, figures), encoding="utf-8")
    record = run_record(command="meta-analyse", settings=result.settings.to_dict(),
                        notes=result.notes, dependence=DEPENDENCE_NOTE,
                        studies=sorted(set(result.effects.get("study", []))),
                        **(extra_record or {}))
    (out / "run.json").write_text(json.dumps(jsonable(record), indent=2) + "\n",
                                  encoding="utf-8")
    return page


def _figures(result: MetaAnalysis, folder: Path) -> list[tuple[str, Path]]:
    out = []
    for (metric, construct), fit in result.fits.items():
        sub = result.effects[(result.effects["metric"] == metric)
                             & (result.effects["construct"] == construct)]
        if sub["study"].duplicated().any() and "criterion" in sub.columns:
            sub = sub.assign(study=sub["study"] + " / " + sub["criterion"].astype(str))
        fig = forest_plot(sub, fit, title=f"{metric}: {construct}")
        stem = f"forest_{_slug(metric)}_{_slug(construct)}"
        out.append((f"{metric}: {construct}", save_figure(fig, folder, stem)[0]))
    return out


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text))


def _markdown(result: MetaAnalysis, tables: dict[str, PaperTable],
              figures: list[tuple[str, Path]]) -> str:
    lines = ["# Meta-analysis of metric validation studies", "", "## Verdict", ""]
    lines += [f"- {v}" for v in result.pooled["verdict"]] or ["- nothing to pool"]
    lines += ["", DEPENDENCE_NOTE, ""]
    lines += [t.to_markdown() for t in tables.values()]
    lines += [f"![{label}](figures/{path.name})" for label, path in figures]
    lines += [""] + [f"- note: {n}" for n in result.notes]
    return "\n".join(lines) + "\n"


def _html(result: MetaAnalysis, tables: dict[str, PaperTable],
          figures: list[tuple[str, Path]]) -> str:
    esc = html.escape
    verdicts = "".join(f"<li>{esc(v)}</li>" for v in result.pooled["verdict"]) or \
        "<li>nothing to pool</li>"
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Meta-analysis</title>",
             f"<style>{_CSS}</style></head><body><h1>Meta-analysis of metric validation "
             "studies</h1>", f"<div class='verdict'><strong>Verdict</strong><ul>{verdicts}"
             "</ul></div>", f"<p class='note'>{esc(DEPENDENCE_NOTE)}</p>"]
    parts += [t.to_html() for t in tables.values()]
    for label, path in figures:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(f"<h3>{esc(label)}</h3><img alt='{esc(label)}' "
                     f"src='data:image/png;base64,{data}'>")
    parts += [f"<p class='note'>note: {esc(n)}</p>" for n in result.notes]
    parts.append("</body></html>")
    return "\n".join(parts)


