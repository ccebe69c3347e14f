"""``nlgeval agreement FILE --spans`` (agreement of raters on error spans, MQM or ESA) and
``nlgeval spans score`` (segment scores from the spans)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup
from nlgeval.errors import InputError


def span_agreement_cli(file: Path, *, out_dir: Path | None, as_json: bool) -> None:
    """Read a span file, compute :func:`nlgeval.human.span_agreement.span_agreement` and print
    it (a table of rater pairs and the overall coefficients) or its JSON.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "spans.csv"
    >>> _ = path.write_text("rater,item,system,start,end,category,severity\\n"
    ...                     "a,1,S,0,4,Fluency,Major\\nb,1,S,2,6,Fluency,Major\\n")
    >>> res = CliRunner().invoke(app, ["agreement", str(path), "--spans", "--json"])
    >>> import json
    >>> json.loads(res.stdout)["f1_micro"]
    0.5
    """
    from nlgeval.human.span_agreement import span_agreement
    from nlgeval.human.spans import read_spans
    from nlgeval.provenance import run_record
    from nlgeval.tables import PaperTable

    res = span_agreement(read_spans(file))
    table = PaperTable(data=res.pairs, caption="Span agreement per rater pair: character-overlap "
                       "precision, recall, F1 (micro, macro) and Cohen's kappa of severities on "
                       "characters both marked.", label="tab:span_agreement", digits=3)
    if out_dir is not None:
        table.write(out_dir, "span_agreement")
    if as_json:
        emit_json({**res.to_dict(), "run": run_record(command="agreement --spans",
                                                      file=str(file))})
        return
    typer.echo(table.to_markdown())
    def num(x: float) -> str:
        return "undefined" if x != x else f"{x:.3f}"

    typer.echo(f"\nF1 micro {num(res.f1_micro)}, macro {num(res.f1_macro)} ({res.n_units} "
               f"outputs judged by >= 2 raters, {res.n_pairs} rater pairs); severity: Cohen's "
               f"kappa {num(res.severity_kappa)} (characters both marked), Krippendorff's "
               f"alpha {num(res.severity_alpha)} (nominal, characters marked by anyone)")
    for n in res.notes:
        typer.echo(n, err=True)


spans_app = typer.Typer(help="Error spans (MQM, ESA): segment scores for 'validate --human' and "
                        "'compare'.", no_args_is_help=True)


def _weights(values: list[str] | None) -> dict[str, float] | None:
    """``["major=10", "minor_punctuation=0"]`` -> a mapping for MQMWeights.coerce."""
    if not values:
        return None
    out: dict[str, float] = {}
    for v in values:
        name, sep, num = v.partition("=")
        try:
            out[name.strip()] = float(num) if sep else float("nan")
        except ValueError:
            out[name.strip()] = float("nan")
        if out[name.strip()] != out[name.strip()]:
            raise InputError(f"--weight must be NAME=NUMBER (e.g. major=10), got {v!r}")
    return out


@spans_app.command("score")
def spans_score(
    file: Annotated[Path, typer.Argument(
        help="Error spans: rater, item, system, start, end, category, severity.")],
    out: Annotated[Path | None, typer.Option(
        help="Write the scores (rater, item, system, criterion, score, counts) as CSV.")] = None,
    esa_scores: Annotated[Path | None, typer.Option(
        help="ESA: the raters' 0-100 scores (rater, item, system, score); writes criteria ESA "
        "and ESA-spans instead of MQM.")] = None,
    weight: Annotated[list[str] | None, typer.Option(
        help="Change an MQM weight, e.g. --weight major=10 (repeatable).")] = None,
    breakdown: Annotated[bool, typer.Option(
        help="MQM: also the per-category criteria MQM-Accuracy, MQM-Fluency, ...")] = True,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Segment scores from error spans: MQM with the weights of Freitag et al. (2021), or ESA
    (Kocmi et al. 2024); prints the mean score per system and criterion.

    \f
    Examples
    --------
    >>> import tempfile, pathlib, json
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "spans.csv"
    >>> _ = path.write_text("rater,item,system,start,end,category,severity\\n"
    ...                     "a,1,S,0,4,Fluency/Grammar,Major\\na,2,S,,,,\\n")
    >>> res = CliRunner().invoke(app, ["spans", "score", str(path), "--json"])
    >>> [(r["item"], r["score"]) for r in json.loads(res.stdout)["ratings"]][:2]
    [('1', -5.0), ('2', 0.0)]
    """
    import pandas as pd

    from nlgeval.human.spans import esa_ratings, mqm_span_ratings, read_spans
    from nlgeval.io import read_table
    from nlgeval.provenance import run_record
    from nlgeval.tables import PaperTable

    setup(quiet)
    spans = read_spans(file)
    if esa_scores is not None:
        sc = read_table(esa_scores, ["rater", "item", "system", "score"])
        ratings = esa_ratings(sc.drop(columns=["_row"], errors="ignore"), spans)
    else:
        ratings = mqm_span_ratings(spans, weights=_weights(weight), breakdown=breakdown)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        ratings.to_csv(out, index=False)
    means = ratings.groupby(["criterion", "system"], sort=False)["score"].agg(
        ["mean", "size"]).reset_index().rename(columns={"size": "n"})
    if as_json:
        emit_json({"ratings": ratings.to_dict("records"), "means": means.to_dict("records"),
                   "run": run_record(command="spans score", file=str(file))})
        return
    table = means.pivot(index="system", columns="criterion", values="mean")
    typer.echo(PaperTable(data=pd.DataFrame(table).reset_index(), caption="Mean segment score "
                          "per system", digits=2).to_markdown())
    if out is not None:
        typer.echo(f"wrote {len(ratings)} rows to {out}")
