"""``nlgeval design bws`` (tuples for a best-worst scaling study) and ``nlgeval bws score``
(scores from the judgements)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup, split_list


def design_bws(
    candidates: Annotated[str, typer.Option(
        help="Number of candidates (systems or outputs), or names 'a,b,c'.")],
    seed: Annotated[int, typer.Option(help="Seed for numpy.random.default_rng.")],
    tuple_size: Annotated[int, typer.Option(help="Outputs per tuple.")] = 4,
    appearances: Annotated[int, typer.Option(
        help="Tuples per candidate (8 with tuples of 4 gives the 2N tuples of Kiritchenko & "
        "Mohammad 2017).")] = 8,
    out: Annotated[Path | None, typer.Option(
        help="Write the tuples (tuple_id, position, candidate) as .csv, .tsv or .json.")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Best-worst scaling tuples, each candidate in the same number of tuples.

    A balanced incomplete block design when a cyclic one exists, else the Kiritchenko &
    Mohammad (2016) procedure (Louviere et al. 2015).

    \f
    Examples
    --------
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> res = CliRunner().invoke(app, ["design", "bws", "--candidates", "13", "--seed", "1",
    ...                                "--appearances", "4"])
    >>> res.exit_code, res.stdout.splitlines()[0]
    (0, 'Best-worst scaling design: 13 candidates, 13 tuples of 4, each candidate in 4 tuples')
    """
    from nlgeval.human.bws_design import bws_design
    from nlgeval.provenance import run_record

    setup(quiet)
    v = candidates.strip()
    d = bws_design(int(v) if v.isdigit() else split_list(v) or [], seed=seed, tuple_size=tuple_size,
                   appearances=appearances)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix.lower() == ".json":
            out.write_text(json.dumps(d.tuples.to_dict("records"), indent=1), encoding="utf-8")
        else:
            d.tuples.to_csv(out, index=False, sep="\t" if out.suffix == ".tsv" else ",")
    if as_json:
        emit_json({**d.to_dict(), "tuples": d.tuples.to_dict("records"),
                   "run": run_record(seed=seed, command="design bws")})
        return
    typer.echo(f"Best-worst scaling design: {len(d.candidates)} candidates, {d.n_tuples} tuples "
               f"of {d.tuple_size}, each candidate in {d.appearances} tuples")
    typer.echo(f"pairs of candidates share {d.pair_min} to {d.pair_max} tuples; "
               + ("a balanced incomplete block design" if d.bibd else "not a balanced "
                  "incomplete block design") + f" ({d.method})")
    for n in d.notes:
        typer.echo(n, err=True)
    if out is not None:
        typer.echo(f"wrote {len(d.tuples)} rows to {out}")


bws_app = typer.Typer(help="Best-worst scaling judgements: scores for 'validate --human' and "
                      "'compare'.", no_args_is_help=True)


class ModelOpt(StrEnum):
    """``bws score --model``: the utility model fitted besides counting.

    Examples
    --------
    >>> ModelOpt("sequential").value
    'sequential'
    """

    maxdiff = "maxdiff"
    sequential = "sequential"
    none = "none"


@bws_app.command("score")
def bws_score(
    file: Annotated[Path, typer.Argument(
        help="Judgements: rater, tuple_id, item, system, best, worst (0/1).")],
    criterion: Annotated[str, typer.Option(help="Criterion name of the scores.")] = "BWS",
    per_rater: Annotated[bool, typer.Option(
        "--per-rater", help="One score per rater and output (default: counted over raters).")
    ] = False,
    out: Annotated[Path | None, typer.Option(
        help="Write the counting scores (rater, item, system, criterion, score, n) as CSV.")
    ] = None,
    pairs: Annotated[Path | None, typer.Option(
        help="Write the implied pairwise wins (for compare --method bradley-terry) as CSV.")
    ] = None,
    model: Annotated[ModelOpt, typer.Option(
        help="System utilities: maxdiff or sequential logit (Marley & Louviere 2005), or none.")
    ] = ModelOpt.maxdiff,
    prior: Annotated[float, typer.Option(
        help="Gaussian prior precision on the utilities (0 = maximum likelihood).")] = 0.0,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Counting scores (best - worst) / shown per output, and a system ranking.

    \f
    Examples
    --------
    >>> import tempfile, pathlib, json
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bws.csv"
    >>> _ = path.write_text("rater,tuple_id,item,system,best,worst\\n"
    ...                     "r1,1,1,a,1,0\\nr1,1,1,b,0,1\\nr1,1,1,c,0,0\\n")
    >>> res = CliRunner().invoke(app, ["bws", "score", str(path), "--model", "none", "--json"])
    >>> [r["score"] for r in json.loads(res.stdout)["ratings"]]
    [1.0, -1.0, 0.0]
    """
    from nlgeval.human.bws import bws_counts, bws_maxdiff, bws_pairs, bws_ratings, read_bws
    from nlgeval.provenance import run_record
    from nlgeval.tables import PaperTable

    setup(quiet)
    j = read_bws(file)
    ratings = bws_ratings(j, criterion=criterion, per_rater=per_rater)
    for path, frame in ((out, ratings), (pairs, None)):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            (frame if frame is not None else bws_pairs(j, criterion=criterion)).to_csv(
                path, index=False)
    ranking = bws_counts(j, by=("system",)).sort_values("score", ascending=False)
    if model is not ModelOpt.none:
        fit = bws_maxdiff(j, prior=prior, model=model.value).ranking
        ranking = ranking.merge(fit[["label", "utility"]].rename(columns={"label": "system"}),
                                on="system").sort_values("utility", ascending=False)
    ranking = ranking.reset_index(drop=True)
    if as_json:
        emit_json({"ratings": ratings.to_dict("records"), "ranking": ranking.to_dict("records"),
                   "model": model.value, "run": run_record(command="bws score",
                                                           file=str(file))})
        return
    typer.echo(PaperTable(data=ranking, caption=f"Best-worst scaling ({criterion}): counting "
                          "score per system" + ("" if model is ModelOpt.none else
                                                f" and {model.value}-logit utility"),
                          digits=3).to_markdown())
    for path in (out, pairs):
        if path is not None:
            typer.echo(f"wrote {path}")
