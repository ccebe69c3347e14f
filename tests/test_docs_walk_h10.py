"""Checks from a new user's walk through the documentation: what a page says the program
prints is what it prints (docs/meta-analysis.md, docs/validate.md, docs/index.md)."""
from __future__ import annotations

import warnings

import pandas as pd
import pytest

from nlgeval.meta_analysis import meta_analyse

EFFECTS = pd.DataFrame({"study": ["a", "a", "b", "b", "c", "d"],
                        "r": [0.30, 0.25, 0.10, 0.18, 0.45, 0.20],
                        "n": [50, 50, 80, 80, 40, 120]})


@pytest.mark.parametrize("small", [False, True])
def test_rve_few_df_note_says_whether_the_small_sample_correction_was_made(small: bool) -> None:
    """docs/meta-analysis.md: ``--dependence rve --small-sample`` applies Tipton's (2015)
    corrections, so its note on few degrees of freedom must not say 'no small-sample
    correction' (it did, for both runs); without ``--small-sample`` it still does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = meta_analyse(EFFECTS, dependence="rve", small_sample=small)
    (note,) = [n for n in res.notes if "degrees of freedom" in n]
    assert note.startswith("effect / all: robust variance estimation on 3 degrees of freedom")
    assert ("no small-sample correction" in note) is not small
    assert ("with Tipton's (2015) small-sample corrections" in note) is small


def test_satterthwaite_warning_does_not_round_up_to_the_bound() -> None:
    """A Satterthwaite df of 3.9988 is below 4: the warning shows it in full, never the
    self-contradicting '4.00 < 4' that formatting with two decimals gave (3.745 stays
    '3.75 < 4', as tests/test_peer_meta_robumeta.py expects)."""
    from nlgeval.meta_analysis.robust import robust_variance

    with pytest.warns(RuntimeWarning, match="Satterthwaite") as seen:
        fit = robust_variance([0.1, 0.2, 0.3, 0.25, 0.4], [0.01, 0.01, 0.01, 0.01, 0.0105],
                              ["a", "b", "c", "d", "e"], small_sample=True)
    dfs = fit.coefficients["df"].to_numpy()
    text = str(seen[0].message)
    shown = float(text.split("freedom ")[1].split(" <")[0])
    assert shown == dfs.min() < 4
