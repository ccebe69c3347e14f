"""One entry point for comparing systems on human ratings: :func:`compare_systems`.

It is what ``nlgeval compare`` runs (the command only parses options, calls this function and
renders the result): it detects pairwise (relative) judgements, applies quality control
(:mod:`nlgeval.human.qc`) and per-rater z-scores (Graham et al. 2013) when asked, runs the chosen
analysis and returns the documented JSON body, the paper tables and the messages to show.

Methods (each documented in its module): ``wilcoxon`` (Reiter & Belz 2009; with the Friedman
test where the design is complete), ``glm-tukey`` (the 2009 GLM + Tukey HSD), ``friedman``,
``ordinal`` (cumulative-logit model, McCullagh 1980), ``mixed`` (crossed random rater and item
effects, Baayen et al. 2008); for pairwise judgements ``sign`` (sign tests) and
``bradley-terry`` (Bradley & Terry 1952).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.human import report
from nlgeval.human.qc import RaterQC, apply_qc
from nlgeval.human.ratings import is_relative
from nlgeval.results import Result, jsonable
from nlgeval.tables import PaperTable

if TYPE_CHECKING:
    from nlgeval.human.compare import Correction, Pairing

ABSOLUTE_METHODS = ("wilcoxon", "glm-tukey", "friedman", "ordinal", "mixed")
RELATIVE_METHODS = ("bradley-terry", "sign")


@dataclass(frozen=True)
class SystemComparison(Result):
    """The outcome of :func:`compare_systems`.

    ``body`` is the documented ``--json`` object of the method (without ``criterion``), e.g.
    ``{"method": "mixed", "contrasts": [...], "variance": {...}, ...}``; ``tables`` the paper
    tables (name -> table, in display order); ``lines`` text printed after the tables;
    ``messages`` warnings for stderr in text mode (JSON carries them in ``body``); ``run``
    extra entries for the run record; ``qc`` the quality-control report, if requested.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": "r", "item": [str(i) for i in range(8) for _ in "ab"],
    ...                    "system": list("ab") * 8,
    ...                    "score": [3, 4, 2, 4, 3, 5, 1, 3, 2, 3, 3, 4, 2, 5, 3, 4]})
    >>> res = compare_systems(df, criterion="fluency")
    >>> sorted(res.to_dict())
    ['alpha', 'correction', 'criterion', 'friedman', 'method', 'pairing', 'pairs', 'warnings']
    """

    # the JSON shape differs per method and is a documented interface: to_dict returns the
    # criterion followed by the method's body (plus the QC report when requested)
    _omit: ClassVar[frozenset[str]] = frozenset({"tables", "lines", "messages", "run"})

    criterion: str
    method: str
    body: dict[str, Any]
    tables: dict[str, PaperTable] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    run: dict[str, Any] = field(default_factory=dict)
    qc: RaterQC | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"criterion", **body}`` (+ ``"qc"``: who was removed and why)."""
        out = {"criterion": self.criterion, **jsonable(self.body)}
        if self.qc is not None:
            out["qc"] = {"removed": list(self.qc.removed), "n_removed": self.qc.n_removed,
                         "reasons": dict(self.qc.reasons),
                         "raters": jsonable(self.qc.raters)}
        return out


def default_method(ratings: pd.DataFrame) -> str:
    """``bradley-terry`` for pairwise judgements (a ``system_b`` column), else ``wilcoxon``.

    Examples
    --------
    >>> import pandas as pd
    >>> default_method(pd.DataFrame({"system": ["a"], "system_b": ["b"], "score": [1]}))
    'bradley-terry'
    """
    return "bradley-terry" if is_relative(ratings) else "wilcoxon"


def _check_method(ratings: pd.DataFrame, method: str, file: str | None) -> None:
    relative = is_relative(ratings)
    if method not in ABSOLUTE_METHODS + RELATIVE_METHODS:
        raise InputError(f"unknown method {method!r}; choose one of "
                         + ", ".join(ABSOLUTE_METHODS + RELATIVE_METHODS))
    if relative and method in ABSOLUTE_METHODS:
        raise InputError(
            "the file holds pairwise (relative) judgements (system, system_b, preference), "
            f"not ratings of single outputs; --method {method} does not apply: use --method "
            "bradley-terry or --method sign", file=file)
    if not relative and method in RELATIVE_METHODS:
        raise InputError(f"--method {method} is for pairwise judgements (a system_b column); "
                         "the file holds ratings of single outputs", file=file)


def compare_systems(
    ratings: pd.DataFrame, *, criterion: str = "", method: str | None = None,
    pairing: str = "item", correction: str | None = None, alpha: float = 0.05,
    scale: tuple[float, float] | None = None, drop_incomplete: bool = False,
    zscore: bool = False, factors: Sequence[str] = ("rater", "item"),
    max_dense_bytes: float | None = None, seed: int = 0, n_resamples: int = 1000,
    resample: str = "judgements", ties: str = "half", prior: float = 0.0,
    qc: str = "keep", file: str | None = None, n_boot: int | None = None,
) -> SystemComparison:
    """Which systems do humans rate differently? Runs ``method`` on one criterion's ratings.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ratings (``rater, item, system, score``) or pairwise judgements (``system_b``).
    criterion, method : str
        The criterion's name; a method of the module docstring (default: by the data).
    pairing, correction, alpha : str, str, float
        Wilcoxon pairs (``item`` or ``lsed``); the correction over all pairs (default:
        Bonferroni for ``wilcoxon``, as Reiter & Belz 2009, else Holm 1979); the level.
    scale, drop_incomplete, zscore, qc : optional
        Declared (min, max); Friedman drops items lacking a system; per-rater z-scores;
        ``"drop"`` removes raters failing :func:`nlgeval.human.qc.rater_quality` first.
    factors, max_dense_bytes : optional
        ``glm-tukey``'s nuisance factors; the largest dense design matrix a model may build.
    seed, n_resamples, resample, ties, prior : optional
        Bradley-Terry: bootstrap seed, replicates and unit (``judgements``, ``items`` or
        ``raters``), ties (``half`` or dropped), Gaussian prior precision (0: ML).
    file, n_boot : str, int, optional
        Names the input in error messages; the deprecated name of ``n_resamples``.

    Returns
    -------
    SystemComparison
        The ``--json`` body, the paper tables, the lines and messages to show.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": list("aabbca"), "system_b": list("bccabc"),
    ...                    "item": list("112233"), "rater": "r",
    ...                    "score": [2.0, 1.0, -1.0, 2.0, 1.0, -2.0]})
    >>> res = compare_systems(df, method="sign", scale=(-2, 2))
    >>> [(p["system_a"], p["system_b"]) for p in res.to_dict()["pairs"]]
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    n_boot = renamed_keyword("compare_systems", "n_boot", n_boot, "n_resamples", n_resamples)
    m = method or default_method(ratings)
    _check_method(ratings, m, file)
    corr = correction or ("bonferroni" if m == "wilcoxon" else "holm")
    df, qc_report = apply_qc(ratings, qc, scale=scale, alpha=alpha)
    run: dict[str, Any] = {}
    messages: list[str] = []
    if qc_report is not None:
        messages.append(qc_report.summary())
        run["qc_removed_raters"] = list(qc_report.removed)
    if zscore:
        if m in RELATIVE_METHODS:
            raise InputError("--zscore applies to ratings of single outputs, not to pairwise "
                             "preferences", file=file)
        df = _zscored(df, run, messages)
    common: dict[str, Any] = {"criterion": criterion, "alpha": alpha, "correction": corr}
    if m in RELATIVE_METHODS:
        body, tables, lines, msgs = _relative(df, m, scale=scale, seed=seed, n_boot=n_boot,
                                              resample=resample, ties=ties, prior=prior,
                                              **common)
    else:
        body, tables, lines, msgs = _ABSOLUTE[m](
            df, pairing=pairing, drop_incomplete=drop_incomplete, factors=factors,
            max_dense_bytes=max_dense_bytes, run=run, **common)
    return SystemComparison(criterion=criterion, method=m, body=body, tables=tables,
                            lines=tuple(lines), messages=tuple(messages + msgs), run=run,
                            qc=qc_report)


def _zscored(df: pd.DataFrame, run: dict[str, Any], messages: list[str]) -> pd.DataFrame:
    from nlgeval.human.agreement import rater_zscores

    z = rater_zscores(df)
    dropped = z.attrs.get("dropped_raters", [])
    run["zscore_dropped_raters"] = dropped
    if dropped:
        messages.append(f"note: {len(dropped)} rater(s) without spread dropped for z-scores: "
                        + ", ".join(dropped))
    return z.assign(score=z["z"]).drop(columns=["z"])


_Out = tuple[dict[str, Any], dict[str, PaperTable], list[str], list[str]]


def _wilcoxon(df: pd.DataFrame, *, criterion: str, alpha: float, correction: Correction,
              pairing: Pairing, run: dict[str, Any], **_: Any) -> _Out:
    from nlgeval.human.compare import friedman, pairwise_wilcoxon

    pairs = pairwise_wilcoxon(df, pairing=pairing, correction=correction, alpha=alpha)
    table = report.wilcoxon_table(pairs, criterion=criterion, pairing=pairing,
                                  correction=correction, alpha=alpha)
    try:  # the Friedman test across all systems, where the design is complete
        fr = friedman(df)
    except InputError as exc:
        fr = None
        run["friedman_skipped"] = str(exc)
    body = {"method": "wilcoxon", "pairing": pairing, "correction": correction,
            "alpha": alpha, "pairs": pairs, "friedman": fr,
            "warnings": list(pairs.attrs.get("warnings", []))}
    lines = [] if fr is None else [report.friedman_table(fr, criterion=criterion).caption]
    return body, {f"wilcoxon_{criterion}": table}, lines, []


def _glm(df: pd.DataFrame, *, criterion: str, alpha: float, factors: Sequence[str],
         max_dense_bytes: float | None, **_: Any) -> _Out:
    from nlgeval.human.glm import glm_tukey

    res = glm_tukey(df, alpha=alpha, factors=tuple(factors), max_dense_bytes=max_dense_bytes)
    tables = {f"{k}_{criterion}": t for k, t in report.glm_tables(res, criterion=criterion)
              .items()}
    return ({"method": "glm-tukey", **res.to_dict()}, tables,
            [f"note: {n}" for n in res.notes], [])


def _mixed(df: pd.DataFrame, *, criterion: str, alpha: float, correction: str,
           max_dense_bytes: float | None, **_: Any) -> _Out:
    from nlgeval.human.mixed import mixed_model

    mm = mixed_model(df, alpha=alpha, correction=correction, max_dense_bytes=max_dense_bytes)
    tables = {f"mixed_{k}_{criterion}": t for k, t in report.mixed_tables(
        mm, criterion=criterion).items()}
    return mm.to_dict(), tables, [], []


def _ordinal(df: pd.DataFrame, *, criterion: str, alpha: float, correction: str,
             max_dense_bytes: float | None, **_: Any) -> _Out:
    from nlgeval.human.ordinal import ordinal_model

    om = ordinal_model(df, alpha=alpha, correction=correction, max_dense_bytes=max_dense_bytes)
    tables = report.ordinal_tables(om, criterion=criterion)
    return ({"method": "ordinal", "ordinal": om}, tables, [],
            [f"warning: {w}" for w in om.warnings])


def _friedman(df: pd.DataFrame, *, criterion: str, drop_incomplete: bool, **_: Any) -> _Out:
    from nlgeval.human.compare import friedman

    fr = friedman(df, drop_incomplete=drop_incomplete)
    warns = []
    if fr.n_blocks < 10:
        warns.append(f"only {fr.n_blocks} complete {fr.block}s: the Friedman test's "
                     "chi-square approximation is rough below about 10 blocks")
    body = {"method": "friedman", "friedman": fr, "warnings": warns}
    return (body, {f"friedman_{criterion}": report.friedman_table(fr, criterion=criterion)},
            [], [f"warning: {w}" for w in warns])


_ABSOLUTE: dict[str, Callable[..., _Out]] = {
    "wilcoxon": _wilcoxon, "glm-tukey": _glm, "mixed": _mixed, "ordinal": _ordinal,
    "friedman": _friedman}


def _relative(df: pd.DataFrame, method: str, *, criterion: str, alpha: float,
              correction: str, scale: tuple[float, float] | None, seed: int, n_boot: int,
              resample: str, ties: str, prior: float) -> _Out:
    """Pairwise judgements: sign tests per pair, and the Bradley-Terry ranking."""
    from nlgeval.human.pairwise import bradley_terry, pairwise_outcomes, sign_tests

    outcomes = pairwise_outcomes(df, scale=scale)
    pairs = sign_tests(outcomes, correction=correction, alpha=alpha)
    sign_t = report.sign_table(pairs, criterion=criterion, correction=correction, alpha=alpha)
    warns = list(pairs.attrs.get("warnings", []))
    if method == "sign":
        body = {"method": "sign", "correction": correction, "alpha": alpha, "pairs": pairs,
                "warnings": warns}
        return body, {f"sign_{criterion}": sign_t}, [], []
    bt = bradley_terry(outcomes, ties=ties, prior=prior, n_resamples=n_boot,  # type: ignore[arg-type]  # checked there
                       resample=resample, seed=seed, alpha=alpha)  # type: ignore[arg-type]  # checked there
    bt_t = report.bradley_terry_table(bt, criterion=criterion)
    body = {**bt.to_dict(), "correction": correction, "pairs": pairs,
            "warnings": warns + list(bt.warnings)}
    return body, {f"bradley_terry_{criterion}": bt_t, f"sign_{criterion}": sign_t}, [], []
