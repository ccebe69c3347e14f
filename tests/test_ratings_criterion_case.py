"""``compare``/``agreement --criterion``: a criterion named in another case than the ratings
file spells it is found when just one criterion matches so, as ``validate --criteria`` finds it
(``nlgeval.report.exclusions.match_name``); the reference is the call with the file's own
spelling."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run_cli

from nlgeval.errors import InputError
from nlgeval.human.ratings import validate_ratings


def _ratings(criteria: tuple[str, ...]) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = [{"system": f"s{k}", "item": f"i{j}", "rater": f"r{r}", "criterion": c,
             "score": int(rng.integers(1, 6)) + (k > 1)}
            for c in criteria for k in range(3) for j in range(12) for r in range(2)]
    return pd.DataFrame(rows)


def test_another_case_selects_the_criterion() -> None:
    df = _ratings(("fluency", "adequacy"))
    pd.testing.assert_frame_equal(validate_ratings(df, criterion="Fluency"),
                                  validate_ratings(df, criterion="fluency"))


def test_two_criteria_in_one_case_fold_need_the_exact_name() -> None:
    df = _ratings(("fluency", "Fluency"))
    assert (validate_ratings(df, criterion="Fluency")["criterion"] == "Fluency").all()
    with pytest.raises(InputError, match="criterion 'FLUENCY' not found"):
        validate_ratings(df, criterion="FLUENCY")


def test_compare_cli_with_the_readme_spelling(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _ratings(("fluency",)).to_csv(tmp_path / "ratings.csv", index=False)
    outs = []
    for name in ("Fluency", "fluency"):
        code, out, err = run_cli(["compare", str(tmp_path / "ratings.csv"), "--criterion", name,
                                  "--method", "wilcoxon", "--json"], capsys)
        assert code == 0, err
        result = json.loads(out)
        result["run"].pop("created_utc")
        outs.append(result)
    assert outs[0] == outs[1] and outs[0]["criterion"] == "fluency"
