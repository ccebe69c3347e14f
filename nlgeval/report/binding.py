"""Binding a metric to one human criterion: a per-criterion judge (an LLM asked about
Relevance) is correlated with its own criterion only, never with the others, so it cannot
spill into another criterion's correlations, clusters or verdict.

A binding comes from a ``criterion`` column in a long score file (:mod:`nlgeval.scores`) or
from ``--bind metric=criterion`` (``ValidationSettings.bind``, which wins); both names are
matched case-insensitively, with a "did you mean" for an unknown one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nlgeval.report.exclusions import match_name


def bind_metrics(
    from_files: Mapping[str, str], given: Mapping[str, str], metrics: Sequence[str],
    all_criteria: Sequence[str], criteria: Sequence[str], notes: list[str],
) -> dict[str, str]:
    """metric -> the criterion it is correlated with (as the corpus spells both).

    ``from_files``: the score files' ``criterion`` column; ``given``: ``--bind``. A metric
    bound to a criterion left out of the study (``criteria``) is not correlated at all
    (a note says so).

    Examples
    --------
    >>> notes = []
    >>> bind_metrics({"j_rel": "relevance"}, {"J_coh": "Coherence"}, ["j_rel", "j_coh"],
    ...              ["Relevance", "Coherence"], ["Relevance", "Coherence"], notes)
    {'j_rel': 'Relevance', 'j_coh': 'Coherence'}
    >>> notes
    ['bound to one criterion (correlated with it only): j_rel -> Relevance, j_coh -> Coherence']
    """
    bound: dict[str, str] = {}
    for m, c in from_files.items():
        bound[m] = match_name(c, list(all_criteria), "criterion", f"criterion of '{m}'")
    for m, c in given.items():
        name = match_name(m, list(metrics), "metric", "--bind")
        crit = match_name(c, list(all_criteria), "criterion", "--bind")
        if name in bound and bound[name] != crit:
            notes.append(f"--bind {name}={crit} replaces the score file's criterion "
                         f"'{bound[name]}'")
        bound[name] = crit
    if bound:
        notes.append("bound to one criterion (correlated with it only): "
                     + ", ".join(f"{m} -> {c}" for m, c in bound.items()))
    idle = [m for m, c in bound.items() if c not in criteria]
    if idle:
        notes.append(f"not correlated: {', '.join(idle)} (bound to a criterion left out of "
                     "this study)")
    return bound


def metrics_for(criterion: str, metrics: Sequence[str], bound: Mapping[str, str]) -> list[str]:
    """The metrics correlated with ``criterion``: the unbound ones and those bound to it.

    >>> metrics_for("Q", ["bleu", "j_q", "j_f"], {"j_q": "Q", "j_f": "F"})
    ['bleu', 'j_q']
    """
    return [m for m in metrics if bound.get(m, criterion) == criterion]
