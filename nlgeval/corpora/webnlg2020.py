"""WebNLG+ 2020 English RDF-to-text human evaluation (Castro Ferreira et al., 2020).

What the loader builds, and the decisions it takes (see the corpus SOURCE.md):

* Items are the 1,779 English test inputs, with the XML's ids ``Id1`` ... ``Id1779``. Line
  ``k`` (1-based) of a system's ``primary.en`` is entry ``Id{k}``, and the human-evaluation
  ``sample_id`` ``k`` is the same entry (how the organisers' notebook joins them). 178 of the
  inputs were rated (``humaneval_ids.txt``); ``corpus.rated_outputs()`` gives those outputs.
* References are the entry's 1-5 ``<lex>`` texts (``ref_id`` ``1``..``n`` in XML order).
* The 16 systems' outputs are kept for all 1,779 inputs, so corpus-level metrics can be
  compared with the official results. Empty lines (15 in Baseline-FORGE2017) are kept as ``""``
  (see the empty-output policy in :mod:`nlgeval.corpus`).
* ``WebNLG-2020-reference`` (the human reference, rated like a system) gets as its output text
  the entry's FIRST ``<lex>`` (``lid="Id1"``): the repository does not record which reference the
  raters saw, and the first is the canonical one. Because that text is also among the item's
  references, reference-based metrics score this "system" against itself (BLEU 100 wherever
  it is the only reference): exclude ``REFERENCE_SYSTEM`` from metric-validation and metric
  system rankings (``corpus.subset(systems=...)``), and keep it for human-only analyses.
* Ratings are the raw per-rater 0-100 scores from ``per_rater/<TEAM>/primary.json``
  (``rater`` = ``en_worker_N``); a rater's free-text ``feedback`` is kept in the ``comment``
  column. Baseline-FORGE2020's sample 1124 has no rater (and is absent from the all-teams
  file), so that system has 177 rated samples. The all-teams JSON (per-output means) is not
  needed to build the corpus; :func:`read_published_means` returns it for checks.
* Extra output columns: ``category``, ``size`` (number of triples), ``input_type``
  (``type1``/``type2``/``type3`` from the test-instance-types file) and ``input`` (the modified
  triples, one ``subject | property | object`` per line).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd

from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError
from nlgeval.io import read_text_utf8

NAME = "webnlg2020"
REFERENCE_SYSTEM = "WebNLG-2020-reference"
CRITERIA = ("Correctness", "DataCoverage", "Fluency", "Relevance", "TextStructure")
TEST_XML = "test_data/rdf-to-text-generation-test-data-with-refs-en.xml"
N_TEST = 1779


def _teams() -> list[str]:
    desc = descriptor(NAME)
    return sorted(
        {f.path.split("/")[2] for f in desc.files if f.path.startswith("human_eval/per_rater/")}
    )


def read_test_set(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parse the test XML: (entries ``item, category, size, input``; references).

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("webnlg2020")).folder   # the local copy
    >>> entries, references = read_test_set(folder)
    >>> len(entries), list(references.columns)
    (1779, ['item', 'ref_id', 'text'])
    """
    path = folder / TEST_XML
    try:
        root = ET.fromstring(read_text_utf8(path).encode("utf-8"))
    except ET.ParseError as exc:
        raise InputError(f"not well-formed XML: {exc}", file=path, row=exc.position[0]) from None
    entries, refs = [], []
    for entry in root.iter("entry"):
        eid = entry.get("eid", "")
        triples = [t.text or "" for t in entry.iter("mtriple")]
        entries.append(
            {
                "item": eid,
                "category": entry.get("category", ""),
                "size": entry.get("size", ""),
                "input": "\n".join(t.strip() for t in triples),
            }
        )
        for k, lex in enumerate(entry.iter("lex"), start=1):
            refs.append({"item": eid, "ref_id": str(k), "text": (lex.text or "").strip()})
    ent = pd.DataFrame(entries)
    ent["size"] = pd.to_numeric(ent["size"], errors="raise").astype(int)
    expected = [f"Id{k}" for k in range(1, len(ent) + 1)]
    if ent["item"].tolist() != expected:
        raise InputError("entries are not numbered Id1, Id2, ... in order", file=path)
    return ent, pd.DataFrame(refs)


def _read_lines(path: Path, n: int) -> list[str]:
    text = read_text_utf8(path)
    lines = text.split("\n")  # not splitlines(): U+2028 etc. inside an output are not breaks
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != n:
        raise InputError(
            f"has {len(lines)} lines, expected one output per test input ({n})", file=path
        )
    return [ln.rstrip("\r").strip() for ln in lines]


def read_ratings(folder: Path, teams: list[str] | None = None) -> pd.DataFrame:
    """Per-rater judgements: ``rater, item, system, criterion, score, comment``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("webnlg2020")).folder   # the local copy
    >>> ratings = read_ratings(folder)
    >>> len(ratings), sorted(ratings["criterion"].unique())[:2]
    (42265, ['Correctness', 'DataCoverage'])
    """
    rows = []
    for team in teams or _teams():
        path = folder / "human_eval" / "per_rater" / team / "primary.json"
        try:
            data = json.loads(read_text_utf8(path))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", file=path, row=exc.lineno) from None
        for sample_id, workers in data.items():
            for worker, scores in workers.items():
                comment = str(scores.get("feedback", "") or "")
                for crit in CRITERIA:
                    if crit not in scores:
                        raise InputError(
                            f"sample {sample_id}, {worker}: no '{crit}' score", file=path,
                            column=crit,
                        )
                    rows.append(
                        (worker, f"Id{int(sample_id)}", team, crit, scores[crit], comment)
                    )
    return pd.DataFrame(
        rows, columns=["rater", "item", "system", "criterion", "score", "comment"]
    )


def read_published_means(folder: str | Path) -> pd.DataFrame:
    """The organisers' per-output means (``english_humeval_data_all_teams.json``), tidy.

    Columns ``system, item, criterion, score, size, domain, category``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("webnlg2020")).folder   # the local copy
    >>> means = read_published_means(folder)
    >>> means.loc[0, ["system", "item", "criterion"]].tolist()
    ['Amazon_AI_(Shanghai)', 'Id3', 'Correctness']
    >>> round(float(means.loc[0, "score"]), 2)      # mean of the item's ratings
    98.5
    """
    path = Path(folder) / "human_eval" / "english_humeval_data_all_teams.json"
    df = pd.DataFrame(json.loads(read_text_utf8(path)))
    df["item"] = "Id" + df["sample_id"].astype(int).astype(str)
    long = df.melt(
        id_vars=["submission_id", "item", "size", "domain", "category"],
        value_vars=list(CRITERIA),
        var_name="criterion",
        value_name="score",
    ).rename(columns={"submission_id": "system"})
    return long[["system", "item", "criterion", "score", "size", "domain", "category"]]


def load(folder: str | Path) -> Corpus:
    """Load WebNLG+ 2020 (English) from a folder laid out like ``webnlg2020_en_humeval``.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> corpus = load_corpus("webnlg2020")     # calls this load() on the located folder
    >>> len(corpus.systems), len(corpus.items), corpus.criteria[:2]
    (17, 1779, ['Correctness', 'DataCoverage'])
    """
    folder = Path(folder)
    desc = descriptor(NAME)
    entries, refs = read_test_set(folder)
    types_path = folder / "test_data" / "rdf-to-text-generation-test-instance-types.json"
    types = json.loads(read_text_utf8(types_path))
    entries["input_type"] = entries["item"].map(types).fillna("")
    rated_ids = read_text_utf8(folder / "test_data" / "humaneval_ids.txt").split()

    teams = _teams()
    frames = []
    for team in teams:
        if team == REFERENCE_SYSTEM:
            first = refs.groupby("item", sort=False)["text"].first()
            text = entries["item"].map(first).fillna("").tolist()
        else:
            text = _read_lines(folder / "system_outputs" / team / "primary.en", len(entries))
        frames.append(entries.assign(system=team, text=text))
    outputs = pd.concat(frames, ignore_index=True)
    outputs = outputs[["system", "item", "text", "category", "size", "input_type", "input"]]

    ratings = read_ratings(folder, teams)
    notes = [
        f"outputs for all {len(entries)} test inputs; {len(rated_ids)} were human-rated "
        "(humaneval_ids.txt): use corpus.rated_outputs()",
        f"'{REFERENCE_SYSTEM}' output = the first <lex> of each entry, which is also one of "
        "the item's references: exclude it from reference-based metric analyses",
    ]
    return Corpus.build(
        desc.info(),
        outputs,
        refs,
        ratings,
        files={
            "outputs": folder / "system_outputs",
            "references": folder / TEST_XML,
            "ratings": folder / "human_eval" / "per_rater",
        },
        empty_outputs="keep",
        notes=notes,
    )
