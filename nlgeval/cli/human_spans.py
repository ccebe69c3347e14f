"""``nlgeval agreement FILE --spans``: agreement of raters on error spans (MQM, ESA)."""

from __future__ import annotations

from pathlib import Path

import typer

from nlgeval.cli._common import emit_json


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
