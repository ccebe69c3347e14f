"""The small data sets shared by docstring examples (issue #16): a corpus folder, random
ratings and a throw-away experiment."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora import load_corpus
from nlgeval.corpus import toy_ratings, write_toy_folder
from nlgeval.experiment.sandbox import example_experiment
from nlgeval.experiment.status import progress


def test_toy_folder_loads_as_a_corpus_with_one_reference_and_a_score_per_output(
    tmp_path: Path,
) -> None:
    corpus = load_corpus(write_toy_folder(tmp_path / "toy"))
    assert (corpus.name, corpus.systems, corpus.items) == ("toy", ["A", "B"], ["1", "2"])
    assert corpus.references.groupby("item").size().tolist() == [1, 1]
    scores = corpus.ratings.set_index(["system", "item"])["score"]
    assert scores.to_dict() == {("A", "1"): 5, ("B", "1"): 3, ("A", "2"): 4, ("B", "2"): 2}


def test_toy_ratings_are_fully_crossed_integers_1_to_5_and_follow_the_seed() -> None:
    df = toy_ratings(raters=3, items=5, systems=["x", "y"], seed=4)
    assert len(df) == 3 * 5 * 2
    assert not df.duplicated(["rater", "item", "system"]).any()
    assert set(df["score"]) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    expected = np.random.default_rng(4).integers(1, 6, size=30).astype(float)
    np.testing.assert_array_equal(df["score"].to_numpy(), expected)
    pd.testing.assert_frame_equal(df, toy_ratings(raters=3, items=5, systems=["x", "y"], seed=4))
    assert not df.equals(toy_ratings(raters=3, items=5, systems=["x", "y"], seed=5))


def test_example_experiment_is_fresh_and_removed_afterwards() -> None:
    with example_experiment("relative", evaluators=3) as (store, cfg):
        database = Path(str(store.engine.url).removeprefix("sqlite:///"))
        assert database.is_file()
        table = progress(store)
        assert cfg.mode == "relative"
    assert table["evaluator"].tolist() == ["1", "2", "3"]
    assert table["done"].sum() == 0
    assert not database.exists()
