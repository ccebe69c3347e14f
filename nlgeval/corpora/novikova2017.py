"""Novikova et al. (EMNLP 2017) "Why We Need New Evaluation Metrics for NLG".

BAGEL, SF-Hotel and SF-Restaurant outputs of TGen ("Dusek"), LOLS and RNNLG ("WEN") with the
MEDIAN of the crowd ratings (1-6, half points when the number of ratings was even) of
informativeness, naturalness and quality, and the paper's precomputed metric columns.

Decisions (see the corpus SOURCE.md):

* One item per CSV row: ``item`` = ``<dataset>-<row>``, e.g. ``BAGEL-0002``, where ``row`` is
  the 1-based line in ``emnlp_data_medians.csv`` (header = line 1). Different systems' rows are
  NOT paired (the SF datasets have different numbers of outputs per system and repeated MRs),
  so every item has exactly one output; the corpus supports per-output correlation analyses
  (the paper's), not paired system comparisons.
* ``rater`` is ``"median"``: the individual ratings are not published in the snapshot.
* ``text`` is the cased, tokenised output from the BARTScore conversion (``sys_output_tokenized``),
  whose casing matches the references; the CSV's lowercased ``sys_ref`` is kept as the column
  ``text_lowercased`` (the text the precomputed metrics were computed on). Extra output
  columns: ``dataset``, ``domain``, ``mr_type``, ``mr`` and the precomputed columns
  :data:`METRIC_COLUMNS` under their CSV names; :func:`precomputed_metrics` returns them in the
  tidy ``metric, system, item, score`` layout the metric-validation code takes.
* References come from ``references/<dataset>.jsonl`` (BARTScore's lists, exact duplicates
  removed). For SF-Hotel/SF-Restaurant these are larger than Novikova's reference sets (see
  SOURCE.md): prefer the precomputed columns when reproducing the paper. The JSONL files are
  derived and cannot be downloaded; without them the corpus loads without references (with a
  note).
* The binned rating columns (``*_bin``, ``*_bin2``) are derived from the medians and not loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError
from nlgeval.io import read_table, read_text_utf8, to_numeric

NAME = "novikova2017"
CSV = "emnlp_data_medians.csv"
DATASETS = ("BAGEL", "SFHOT", "SFRES")
CRITERIA = ("informativeness", "naturalness", "quality")
SYSTEM_NAMES = {"Dusek": "TGen", "LOLS": "LOLS", "WEN": "RNNLG"}  # CSV label -> paper name
METRIC_COLUMNS = (
    "TER", "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "ROUGE_L", "NIST", "LEPOR", "CIDEr",
    "METEOR", "sim.mr.sys", "lev.dist", "sys.read.flesch", "sys.cpw", "sys.ref.len", "sys.wps",
    "sys.sps", "sys.spw", "sys.n.poly", "sys.pspw", "n.misspel", "parser.sc.mean",
    "parser.sc.max",
)
#: Direction of each precomputed column as a quality signal (error rates and distances are
#: lower-is-better; readability/grammar features have no agreed direction and are taken as
#: computed, i.e. higher = "more", which the paper also does for its correlations).
HIGHER_IS_BETTER = {c: c not in {"TER", "lev.dist", "n.misspel"} for c in METRIC_COLUMNS}


def item_id(dataset: str, row: int) -> str:
    """The item id of row ``row`` of a data set's file: ``DATASET-NNNN``.

    Examples
    --------
    >>> item_id("bagel", 3)
    'bagel-0003'
    """
    return f"{dataset}-{row:04d}"


def _read_refs(folder: Path, items: pd.Series, outputs: pd.DataFrame) -> pd.DataFrame | None:
    frames = []
    tokenised: dict[str, str] = {}
    for ds in DATASETS:
        path = folder / "references" / f"{ds}.jsonl"
        if not path.is_file():
            return None
        for lineno, line in enumerate(read_text_utf8(path).split("\n"), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=path, row=lineno) from None
            item = item_id(ds, int(rec["csv_row"]))
            if item not in items.index:
                raise InputError(
                    f"csv_row {rec['csv_row']} is not a {ds} row of {CSV}", file=path,
                    row=lineno, column="csv_row",
                )
            for k, ref in enumerate(rec["refs"], start=1):
                frames.append((item, str(k), ref, lineno))
            tokenised[item] = rec["sys_output_tokenized"]
    outputs["text"] = outputs["item"].map(tokenised).fillna(outputs["text"])
    return pd.DataFrame(frames, columns=["item", "ref_id", "text", "_row"])


def load(folder: str | Path) -> Corpus:
    """Load the corpus from a folder laid out like the bundled ``novikova2017_emnlp`` corpus
    folder.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> corpus = load_corpus("novikova2017")   # calls this load() on the located folder
    >>> len(corpus.systems), len(corpus.items), corpus.criteria
    (3, 2460, ['informativeness', 'naturalness', 'quality'])
    """
    folder = Path(folder)
    desc = descriptor(NAME)
    path = folder / CSV
    df = read_table(path, ["dataset", "system", "mr_type", "mr", "sys_ref", "domain"]
                    + list(METRIC_COLUMNS) + list(CRITERIA))
    outputs = _outputs(df, path)
    item = outputs["item"].tolist()
    index = pd.Series(np.arange(len(outputs)), index=outputs["item"])
    notes = [
        "item = <dataset>-<CSV row>; one output per item (systems are not paired)",
        "systems renamed to the paper's names: Dusek -> TGen, WEN -> RNNLG (CSV label in "
        "column system_label)",
        "rater 'median' = the median of the crowd ratings (individual ratings not published)",
    ]
    refs = _read_refs(folder, index, outputs)
    _note_references(refs, outputs, notes)
    ratings = _ratings(df, item, outputs)
    return Corpus.build(
        desc.info(),
        outputs,
        refs,
        ratings,
        files={
            "outputs": path,
            "references": folder / "references",
            "ratings": path,
        },
        require_references=refs is not None,
        notes=notes,
    )


def _outputs(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The outputs frame (item ``<dataset>-<CSV row>``, systems renamed to the paper's names,
    the precomputed metric columns), after checking the dataset and system columns."""
    bad = ~df["dataset"].isin(DATASETS)
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"unknown dataset {df['dataset'].iloc[pos]!r} (expected {', '.join(DATASETS)})",
            file=path, row=int(df["_row"].iloc[pos]), column="dataset",
        )
    item = [item_id(d, r) for d, r in zip(df["dataset"], df["_row"], strict=True)]
    label = df["system"].str.strip()
    unknown = ~label.isin(list(SYSTEM_NAMES))
    if unknown.any():
        pos = int(np.flatnonzero(unknown.to_numpy())[0])
        raise InputError(
            f"unknown system {label.iloc[pos]!r} (expected {', '.join(SYSTEM_NAMES)})",
            file=path, row=int(df["_row"].iloc[pos]), column="system",
        )
    outputs = pd.DataFrame(
        {
            "system": label.map(SYSTEM_NAMES),
            "system_label": label,
            "item": item,
            "text": df["sys_ref"],
            "text_lowercased": df["sys_ref"],
            "dataset": df["dataset"],
            "domain": df["domain"],
            "mr_type": df["mr_type"],
            "mr": df["mr"],
            "_row": df["_row"],
        }
    )
    for col in METRIC_COLUMNS:
        outputs[col] = to_numeric(df, col, file=path)
    return outputs


def _note_references(refs: pd.DataFrame | None, outputs: pd.DataFrame, notes: list[str]
                     ) -> None:
    """A note on the tokenised references: absent, or how many outputs differ from the CSV."""
    if refs is not None:
        squash = outputs["text"].str.lower().str.replace(r"\s+", "", regex=True)
        differ = squash != outputs["text_lowercased"].str.lower().str.replace(
            r"\s+", "", regex=True
        )
        if differ.any():
            notes.append(
                f"{int(differ.sum())} tokenised outputs in references/*.jsonl differ from the "
                "CSV's sys_ref beyond case and whitespace"
            )
    else:
        notes.append(
            "references/*.jsonl not found: loaded without references (reference-based "
            "metrics need them; the precomputed metric columns are available)"
        )


def _ratings(df: pd.DataFrame, item: list[str], outputs: pd.DataFrame) -> pd.DataFrame:
    """One ``median`` rating per output and criterion."""
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "rater": "median",
                    "item": item,
                    "system": outputs["system"],
                    "criterion": crit,
                    "score": df[crit],
                    "_row": df["_row"],
                }
            )
            for crit in CRITERIA
        ],
        ignore_index=True,
    )


def precomputed_metrics(corpus: Corpus, columns: tuple[str, ...] = METRIC_COLUMNS) -> pd.DataFrame:
    """The precomputed metric columns as a tidy ``metric, system, item, score`` frame.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> scores = precomputed_metrics(load_corpus("novikova2017"))
    >>> list(scores.columns), len(scores)
    (['metric', 'system', 'item', 'score'], 56580)
    """
    missing = [c for c in columns if c not in corpus.outputs.columns]
    if missing:
        raise InputError(
            f"corpus '{corpus.name}' has no precomputed column(s) {', '.join(missing)}"
        )
    return corpus.outputs.melt(
        id_vars=["system", "item"], value_vars=list(columns), var_name="metric",
        value_name="score",
    )[["metric", "system", "item", "score"]]
