"""The validation study as one self-contained HTML page (inline CSS, figures as base64 PNG),
after the report layout of Reiter & Belz (2009); :mod:`nlgeval.report.writer` writes it."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from nlgeval.report.study import ValidationStudy
from nlgeval.tables import PaperTable

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1em}
.verdict{background:#eef6ee;border:1px solid #9c9;padding:.5em 1em;margin:1em 0}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:2em}table{border-collapse:collapse;margin:1em 0;font-size:.85em}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0;max-width:900px}
th,td{border-bottom:1px solid #e3e3e3;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}.note{color:#555;font-size:.9em}
code{background:#f4f4f4;padding:0 .3em}.wrap{overflow-x:auto}
summary{cursor:pointer}summary h2{display:inline-block;border:0;margin:1.2em 0 .3em}
details{border-bottom:1px solid #ddd}
"""


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<img alt='{html.escape(path.stem)}' src='data:image/png;base64,{data}'>"


def _verdict_html(study: ValidationStudy) -> list[str]:
    """The one-line verdict per criterion, at the top of the page."""
    from nlgeval.report.meta import verdict_line

    if not study.verdict:
        return []
    items = "".join(f"<li>{html.escape(verdict_line(v))}</li>"
                    for v in study.verdict)
    return ["<div class='verdict'><strong>Verdict</strong> (per criterion and level: the "
            "metrics that cannot be told apart from the best one, alpha = "
            f"{study.alpha}, p-values {html.escape(study.config.correction)}-corrected; "
            "withheld, with the reason, where the raters do not agree or no metric agrees "
            f"significantly):<ul>{items}</ul></div>"]


def _left_out_line(study: ValidationStudy) -> str:
    """What was left out of the metric-human correlations and why (issue 26)."""
    from nlgeval.report.exclusions import exclusion_line

    if not study.reference_check and not study.exclusions:  # a study built by hand
        return (f"Excluded: {', '.join(study.excluded_systems)}." if study.excluded_systems
                else "")
    return exclusion_line(study.exclusions, study.reference_check)


def _intro_html(study: ValidationStudy) -> list[str]:
    """What was computed, on which systems, with which external scores and notes."""
    esc = html.escape
    parts = [
        "<p>How well do automatic metrics agree with the human judgements? (After Reiter &amp; "
        "Belz 2009.) Correlations at "
        f"{esc(', '.join(study.levels))} level; coefficients {esc(', '.join(study.coefficients))}; "
        f"{study.resamples} bootstrap resamples of {esc(study.resample)} (Deutsch et al. 2021), "
        f"seed {study.seed}; human scores: mean over raters"
        f"{' of per-rater z-scores' if study.normalise == 'z' else ''}.</p>",
        f"<p class='note'>Systems: {len(study.systems)}. {esc(_left_out_line(study))} "
        "Lower-is-better metrics are "
        "negated before correlating, so larger r is always better agreement: "
        f"{esc(', '.join(m for m, h in study.higher_is_better.items() if not h) or 'none')}.</p>",
    ]
    if study.external:
        rows = "".join(
            f"<li><code>{esc(m)}</code> from {esc(e.get('source') or 'a DataFrame')}: "
            f"covers {e['coverage']:.1%} of the rated "
            f"{'systems' if e['system_level_only'] else 'outputs'}"
            f"{', system level only' if e['system_level_only'] else ''}"
            f"{', ' + str(e['n_missing']) + ' missing value(s)' if e['n_missing'] else ''}</li>"
            for m, e in study.external.items())
        parts.append("<p>Metric scores computed outside nlgeval (external scores):</p>"
                     f"<ul class='note'>{rows}</ul>")
    if study.notes:
        parts.append("<ul class='note'>" + "".join(f"<li>{esc(n)}</li>" for n in study.notes)
                     + "</ul>")
    return parts


#: Tables longer than this are left to their files (CSV, Markdown, LaTeX) instead of the page,
#: and p-value matrices wider than :data:`MAX_MATRIX_METRICS` metrics: at 70 metrics they are
#: thousands of cells that no reader scans, and they made the page tens of megabytes.
MAX_PAGE_ROWS = 300
MAX_MATRIX_METRICS = 20
OPEN_ROWS = 40

#: (section title, table stems or prefixes, open?) in page order; "Figures" holds the figures;
#: open None: open while its tables have at most :data:`OPEN_ROWS` rows.
_SECTIONS = [
    ("Metric leaderboard (WMT style)", ["leaderboard_"], True),
    ("Overview", ["correlations_overview"], None),  # open while it is short
    ("Figures", [], True),
    ("Correlations", ["correlations_"], False),
    ("Comparison with published results", ["published_comparison"], False),
    ("Which metric to trust: significance of differences",
     ["significance_clusters", "significance_"], False),
    ("Systems", ["metric_scores_by_system", "human_scores_by_system"], False),
    ("Human references", ["human_criterion_correlations", "rater_agreement"], False),
    ("Significant differences predicted by metrics", ["significant_differences"], False),
]


def _section_keys(tables: dict[str, PaperTable], keys: list[str], taken: set[str]) -> list[str]:
    """Stems of ``tables`` named by ``keys`` (exact names, or prefixes ending in ``_``), in the
    order given, each table in one section only."""
    out = []
    for key in keys:
        for k in tables if key.endswith("_") else [key]:
            if k in tables and k not in taken and (k == key or k.startswith(key)):
                taken.add(k)
                out.append(k)
    return out


def _table_html(stem: str, table: PaperTable) -> str:
    """A table inline, or a pointer to its files when it is too long to read on a page."""
    data = table.data
    matrix = stem.startswith("significance_") and stem != "significance_clusters"
    if len(data) > MAX_PAGE_ROWS or (matrix and len(data) > MAX_MATRIX_METRICS):
        return (f"<p class='note'><strong>{html.escape(table.caption)}</strong> {len(data)} "
                f"rows x {len(data.columns)} columns: in <code>tables/{html.escape(stem)}.csv"
                "</code> (and .md, .tex) rather than on this page.</p>")
    return f"<div class='wrap'>{table.to_html()}</div>"


def _sections_html(study: ValidationStudy, tables: dict[str, PaperTable],
                   figures: dict[str, list[Path]]) -> list[str]:
    """The tables and figures, section by section, each a collapsible ``<details>``."""
    parts: list[str] = []
    taken: set[str] = set()
    for title, keys, is_open in _SECTIONS:
        body = []
        if title == "Figures":
            body = [_img(p) for paths in figures.values() for p in paths[:1]
                    if p.suffix == ".png"]
        else:
            present = _section_keys(tables, keys, taken)
            body = [_table_html(k, tables[k]) for k in present]
            if is_open is None:
                is_open = sum(len(tables[k].data) for k in present) <= OPEN_ROWS
            if title.startswith("Which metric"):
                body[:0] = _cluster_notes(study)
        if body:
            parts.append(f"<details{' open' if is_open else ''}><summary><h2>"
                         f"{html.escape(title)}</h2></summary>{''.join(body)}</details>")
    return parts


def _cluster_notes(study: ValidationStudy) -> list[str]:
    """Say where no significance clusters could be computed, and why."""
    corr, cl = study.correlations, study.clusters
    coefs = set(study.coefficients)
    wanted = corr.loc[corr["statistic"].isin(coefs), ["criterion", "level"]].drop_duplicates()
    have = set() if cl.empty else set(zip(cl["criterion"], cl["level"], strict=False))
    missing = [(c, lv) for c, lv in wanted.itertuples(index=False) if (c, lv) not in have]
    if not missing or not coefs:
        return []
    per_output = len([m for m in study.metrics if m not in study.system_only])

    def why(level: str) -> str:
        if len(study.metrics) < 2:
            return "fewer than two metrics"
        if level in ("item", "system-grouped") and study.permutations <= 0:
            return ("Williams' test does not apply to averaged per-item correlations and the "
                    "PERM-BOTH test was switched off (--permutations 0)")
        if level != "system" and per_output < 2:
            return "fewer than two metrics with per-output scores"
        return "no metric comparison could be computed (see the notes above)"

    items = "".join(f"<li>{html.escape(c)}, {html.escape(lv)} level: {html.escape(why(lv))}"
                    "</li>" for c, lv in missing)
    return [f"<p class='note'>No significance clusters for:</p><ul class='note'>{items}</ul>"]


def render_html(study: ValidationStudy, tables: dict[str, PaperTable],
                figures: dict[str, list[Path]], record: dict[str, Any]) -> str:
    """One self-contained HTML page (no external assets).

    Parameters
    ----------
    study : ValidationStudy
        The study the page reports.
    tables : dict of str to PaperTable
        The paper tables (:func:`~nlgeval.report.paper_tables.study_tables`).
    figures : dict of str to list of Path
        Figure files by stem (:func:`~nlgeval.report.writer.study_figures`); may be empty.
    record : dict
        The run record (settings, timings, provenance).

    Returns
    -------
    str
        The HTML text.

    Examples
    --------
    >>> from nlgeval.report.study import example_study
    >>> study = example_study()  # BLEU on 40 E2E inputs, system level
    >>> from nlgeval.report.paper_tables import study_tables
    >>> render_html(study, study_tables(study), {}, {}).rstrip().endswith("</html>")
    True
    """
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>nlgeval validate: {esc(study.corpus)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Metric validation study: {esc(study.corpus)}</h1>",
        *_verdict_html(study),
        *_intro_html(study),
        *_sections_html(study, tables, figures),
    ]
    sig = "".join(f"<li><code>{esc(k)}</code>: <code>{esc(str(v))}</code></li>"
                  for k, v in study.signatures.items())
    parts.append(f"<h2>Reproducibility</h2><ul>{sig}</ul>")
    vers = ", ".join(f"{esc(k)} {esc(str(v))}" for k, v in record.get("versions", {}).items())
    parts.append(f"<p class='note'>Versions: {vers}. Timings (s): "
                 + esc(", ".join(f"{k} {v:.1f}" for k, v in study.timings.items()))
                 + ". Full details in run.json.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
