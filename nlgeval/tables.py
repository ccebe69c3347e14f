"""Paper tables: one DataFrame written as CSV, Markdown and LaTeX (booktabs) with a caption.

pandas' ``Styler.to_latex`` can produce booktabs, but it does not escape cell text reliably for
NLG data (system names with ``_`` and ``&``) and needs jinja2 templates; a table here is small,
so the writer is a few lines of explicit code whose output we control and test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters in plain text.

    Examples
    --------
    >>> print(latex_escape("50% of R&D_2"))
    50\\% of R\\&D\\_2
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _fmt(value: object, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if v != 0 and abs(v) < 10 ** (-digits):
            return f"{v:.1e}"
        return f"{v:.{digits}f}"
    return str(value)


@dataclass(frozen=True)
class PaperTable:
    """A table for a paper: data, caption, LaTeX label, number formatting and notes.

    ``digits`` may be one number or a per-column mapping.

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"system": ["tgen_v2", "A&B"], "r": [0.8123, float("nan")]})
    >>> table = PaperTable(data, "Pearson r with quality", label="tab:r", digits=2)
    >>> print(table.to_markdown())
    **Pearson r with quality**
    <BLANKLINE>
    | system | r |
    | :--- | ---: |
    | tgen_v2 | 0.81 |
    | A&B | -- |
    <BLANKLINE>
    >>> print(table.to_latex())
    \\begin{table}[t]
    \\centering
    \\small
    \\begin{tabular}{lr}
    \\toprule
    system & r \\\\
    \\midrule
    tgen\\_v2 & 0.81 \\\\
    A\\&B & -- \\\\
    \\bottomrule
    \\end{tabular}
    \\caption{Pearson r with quality}
    \\label{tab:r}
    \\end{table}
    <BLANKLINE>
    """

    data: pd.DataFrame
    caption: str
    label: str = ""
    digits: int | Mapping[str, int] = 3
    notes: Sequence[str] = field(default=())

    def _digits(self, col: str) -> int:
        if isinstance(self.digits, Mapping):
            return int(self.digits.get(col, 3))
        return int(self.digits)

    def formatted(self) -> pd.DataFrame:
        """All cells as display strings (NaN shown as ``--``)."""
        return pd.DataFrame(self._cells(), index=self.data.index, columns=self.data.columns,
                            dtype=object)

    def _cells(self) -> list[list[str]]:
        """The display strings, row by row: built once per table (plain lists, not a frame
        assembled column by column) and shared by the Markdown, LaTeX and HTML writers."""
        cached = self.__dict__.get("_cells_cache")
        if cached is None:
            columns = [[_fmt(v, self._digits(str(col))) for v in self.data[col].tolist()]
                       for col in self.data.columns]
            cached = [list(row) for row in zip(*columns, strict=True)] if columns else \
                [[] for _ in range(len(self.data))]
            self.__dict__["_cells_cache"] = cached  # frozen: set past __setattr__
        return cached

    def to_csv(self) -> str:
        return self.data.to_csv(index=False)

    def to_markdown(self) -> str:
        header = "| " + " | ".join(map(str, self.data.columns)) + " |"
        aligns = []
        for col in self.data.columns:
            numeric = pd.api.types.is_numeric_dtype(self.data[col])
            aligns.append("---:" if numeric else ":---")
        sep = "| " + " | ".join(aligns) + " |"
        rows = ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in self._cells()]
        lines = [f"**{self.caption}**", "", header, sep, *rows]
        lines += [""] + [f"_{n}_" for n in self.notes] if self.notes else []
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        spec = "".join(
            "r" if pd.api.types.is_numeric_dtype(self.data[c]) else "l" for c in self.data.columns
        )
        lines = [
            "\\begin{table}[t]",
            "\\centering",
            "\\small",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(latex_escape(c) for c in self.data.columns) + " \\\\",
            "\\midrule",
        ]
        for r in self._cells():
            lines.append(" & ".join(latex_escape(c) for c in r) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        caption = latex_escape(self.caption)
        if self.notes:
            caption += " " + " ".join(latex_escape(n) for n in self.notes)
        lines.append(f"\\caption{{{caption}}}")
        if self.label:
            lines.append(f"\\label{{{self.label}}}")
        lines.append("\\end{table}")
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """An HTML ``<table>`` with a caption (cell text escaped)."""
        import html

        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.data.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
            for r in self._cells()
        )
        notes = "".join(f"<p class='note'>{html.escape(n)}</p>" for n in self.notes)
        return (
            f"<table><caption>{html.escape(self.caption)}</caption><thead><tr>{head}</tr>"
            f"</thead><tbody>{body}</tbody></table>{notes}"
        )

    def write(
        self, directory: str | Path, stem: str, formats: Sequence[str] = ("csv", "md", "tex")
    ) -> list[Path]:
        """Write ``stem.csv``, ``stem.md`` and ``stem.tex`` (as requested) into ``directory``.

        Examples
        --------
        >>> import pandas as pd, pathlib, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> table = PaperTable(pd.DataFrame({"system": ["A"], "r": [0.5]}), "Pearson r")
        >>> [p.name for p in table.write(pathlib.Path(tmp.name), "pearson")]
        ['pearson.csv', 'pearson.md', 'pearson.tex']
        >>> tmp.cleanup()
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        writers = {"csv": self.to_csv, "md": self.to_markdown, "tex": self.to_latex,
                   "html": self.to_html}
        paths = []
        for fmt in formats:
            if fmt not in writers:
                raise ValueError(f"unknown table format {fmt!r}; use one of {sorted(writers)}")
            p = directory / f"{stem}.{fmt}"
            p.write_text(writers[fmt](), encoding="utf-8")
            paths.append(p)
        return paths
