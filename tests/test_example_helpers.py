"""The small data sets shared by docstring examples (issue #16): a corpus folder, random
ratings and a throw-away experiment."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora import load_corpus
from nlgeval.corpus import toy_ratings, write_toy_folder
from nlgeval.experiment.sandbox import (
    example_app,
    example_config,
    example_evaluator,
    example_experiment,
    example_folder,
    example_study_folder,
)
from nlgeval.experiment.status import progress
from nlgeval.report.study import example_study


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


def test_example_folder_and_config_are_the_written_study_and_removed_afterwards() -> None:
    with example_folder("triangle") as folder:
        names = {p.name for p in folder.iterdir()}
        assert {"context.csv", "experiment.toml", "outputs.csv"} <= names
        assert 'mode = "triangle"' in (folder / "experiment.toml").read_text()
    assert not folder.exists()
    with example_config("relative") as cfg:
        directory = cfg.directory
        assert cfg.mode == "relative"
        assert directory.is_dir()
    assert not directory.exists()


def test_example_study_folder_is_created_for_the_evaluators_asked_for() -> None:
    with example_study_folder("absolute", evaluators=6) as made:
        directory = made.directory
        assert len(made.evaluators) == 6
        assert made.evaluators["token"].is_unique
        assert (directory / "experiment.toml").is_file()
    assert not directory.exists()


def test_example_app_serves_the_study_and_closes_its_database() -> None:
    with example_app("relative", evaluators=3) as (app, made):
        store = app.extensions["nlgeval_experiment"]["store"]
        directory = made.directory
        client = app.test_client()
        token = made.evaluators["token"].iloc[0]
        assert client.get(f"/e/{token}").status_code == 200
        assert client.get("/e/not-a-token").status_code == 404
        assert store.meta()["mode"] == "relative"
        database = Path(str(store.engine.url).removeprefix("sqlite:///"))
    assert not directory.exists()
    assert not database.exists()


def test_example_evaluator_has_opened_its_link_and_forms_need_its_csrf_token() -> None:
    with example_evaluator("absolute", evaluators=3) as (client, token, csrf):
        assert client.post(f"/e/{token}/start", data={"csrf": "wrong"}).status_code == 400
        assert client.post(f"/e/{token}/start", data={"csrf": csrf}).status_code == 303
        assert "Start" not in client.get(f"/e/{token}").get_data(as_text=True)


def test_example_study_is_the_small_system_level_bleu_study() -> None:
    study = example_study()
    corpus = load_corpus("e2e")
    assert (study.corpus, study.metrics) == ("e2e", ["bleu"])
    assert list(study.config.levels) == ["system"]
    assert study.config.table9 is False and study.significant_differences is None
    # 40 inputs of the corpus, every system: the per-output frame covers exactly those items
    assert sorted(study.segments["item"].unique()) == sorted(corpus.items[:40])
