"""``nlgeval design bws``: tuples for a best-worst scaling study."""

from __future__ import annotations

import json
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
    d = bws_design(int(v) if v.isdigit() else split_list(v), seed=seed, tuple_size=tuple_size,
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
