"""``validate --human``: practice trials and attention checks of an online experiment's export
(``--include-practice`` / ``--include-checks``) are not ratings of the study. They were read as
ratings (20 instead of 18 segment pairs on the docs' example study); the reference here is the
same study written without those rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import exit_status

from nlgeval.errors import InputError
from nlgeval.scores import ratings_corpus


def _study(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ratings of 4 systems x 30 items by 2 raters, and 2 metrics' scores of the outputs."""
    systems, items = [f"s{i}" for i in range(4)], [f"i{j:02d}" for j in range(30)]
    quality = {(s, i): k + rng.normal() for k, s in enumerate(systems) for i in items}
    ratings = pd.DataFrame([{"system": s, "item": i, "criterion": "quality", "rater": f"r{r}",
                             "score": float(np.clip(round(q + 3 + rng.normal()), 1, 7))}
                            for (s, i), q in quality.items() for r in range(2)])
    scores = pd.DataFrame([{"system": s, "item": i, "m1": q + rng.normal(),
                            "m2": q + 2 * rng.normal()} for (s, i), q in quality.items()])
    return ratings, scores


def _with_extra_rows(ratings: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The ratings plus practice rows and attention-check rows (repeats with other scores, a
    degraded copy rated low), with the export's columns."""
    real = ratings.assign(practice="false", qc_check="")
    picks = real.sample(6, random_state=1)
    practice = picks.iloc[:3].assign(practice="true", score=lambda d: 8 - d["score"])
    repeat = picks.iloc[3:5].assign(qc_check="repeat", score=lambda d: 8 - d["score"])
    degraded = picks.iloc[5:].assign(qc_check="degraded", score=1.0)
    mixed = pd.concat([practice, real, repeat, degraded], ignore_index=True)
    return mixed.sample(frac=1, random_state=int(rng.integers(1000))).reset_index(drop=True)


def test_practice_and_check_rows_are_left_out_with_a_note() -> None:
    rng = np.random.default_rng(3)
    ratings, _ = _study(rng)
    plain = ratings_corpus(ratings, name="toy", scales={"quality": (1, 7)})
    mixed = ratings_corpus(_with_extra_rows(ratings, rng), name="toy",
                           scales={"quality": (1, 7)})
    key = ["system", "item", "criterion", "rater"]
    a = plain.ratings.sort_values(key).reset_index(drop=True)[[*key, "score"]]
    b = mixed.ratings.sort_values(key).reset_index(drop=True)[[*key, "score"]]
    pd.testing.assert_frame_equal(a.astype(str), b.astype(str))
    assert any("3 practice and 3 attention-check rows left out" in n for n in mixed.notes)
    assert not any("left out" in n for n in plain.notes)


def test_validate_human_gives_the_study_without_those_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    ratings, scores = _study(rng)
    scores.to_csv(tmp_path / "scores.csv", index=False)
    ratings.to_csv(tmp_path / "plain.csv", index=False)
    _with_extra_rows(ratings, rng).to_csv(tmp_path / "export.csv", index=False)
    for name in ("plain", "export"):
        assert exit_status(["validate", "--human", str(tmp_path / f"{name}.csv"), "--scores",
                            str(tmp_path / "scores.csv"), "--metrics", "none", "--resamples",
                            "200", "--permutations", "200", "--quiet",
                            "--out", str(tmp_path / f"out_{name}")]) == 0
    for table in ("correlations.csv", "comparisons.csv"):
        assert (tmp_path / "out_plain" / table).read_bytes() == \
            (tmp_path / "out_export" / table).read_bytes(), table


def test_a_practice_value_that_is_not_yes_no_is_named() -> None:
    ratings, _ = _study(np.random.default_rng(5))
    bad = ratings.assign(practice=["no"] * (len(ratings) - 1) + ["maybe"])
    with pytest.raises(InputError, match="'maybe' is not a yes/no value") as err:
        ratings_corpus(bad)
    assert err.value.column == "practice" and err.value.row == len(ratings) + 1


def test_only_practice_rows_is_an_error() -> None:
    ratings, _ = _study(np.random.default_rng(6))
    with pytest.raises(InputError, match="every row is a practice trial"):
        ratings_corpus(ratings.assign(practice="yes"))
