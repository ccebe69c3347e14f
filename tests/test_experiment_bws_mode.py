"""The best-worst scaling mode of the web app: allocation (every output in the same number of
tuples, the copies of a tuple with different evaluators), the form's checks, and the export's
counting scores against values worked out by hand (Kiritchenko & Mohammad 2017: times best
minus times worst over times shown)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from experiment_helpers import write_experiment

from nlgeval.errors import InputError
from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.config import load_config
from nlgeval.experiment.modes.bws import BWS, BWSOptions
from nlgeval.experiment.trials import load_materials


def _study(tmp: Path, systems: int = 5, evaluators: int = 3, extra: str = "") -> Path:
    return write_experiment(tmp / "bws", mode="bws", systems=systems, items=3,
                            evaluators=evaluators, practice=0, criteria="",
                            questionnaire=False, extra=extra)


@pytest.mark.parametrize(("systems", "raters", "evaluators"), [(5, 2, 3), (4, 1, 2), (6, 3, 4)])
def test_allocation_is_balanced(tmp_path: Path, systems: int, raters: int,
                                evaluators: int) -> None:
    d = _study(tmp_path, systems, evaluators, extra=f"[bws]\nraters = {raters}\n")
    cfg = load_config(d)
    trials, summary = BWS().allocate(cfg, load_materials(cfg), evaluators=None, seed=3)
    assert "best-worst scaling" in summary
    shown = [(t["details"]["tuple_id"], s, i) for t in trials.to_dict("records")
             for s, i in zip(t["details"]["sources"], t["details"]["items"], strict=True)]
    per_output = pd.DataFrame(shown, columns=["tuple", "system", "item"]).groupby(
        ["item", "system"]).size()
    assert len(per_output) == systems * 3 and per_output.nunique() == 1
    tuples = trials["details"].map(lambda x: x["tuple_id"])
    assert (tuples.value_counts() == raters).all()  # each tuple judged `raters` times
    # ... by different evaluators, and the sets differ in size by at most one
    assert not trials.assign(t=tuples).duplicated(["evaluator", "t"]).any()
    sizes = trials.groupby("evaluator").size()
    assert sizes.max() - sizes.min() <= 1 and len(sizes) == evaluators
    assert all(len(x["sources"]) == 4 == len(set(x["sources"])) for x in trials["details"])
    for _e, g in trials.groupby("evaluator"):
        assert sorted(g["position"]) == list(range(1, len(g) + 1))


def test_config_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="at least 4"):
        create_experiment(_study(tmp_path / "a", systems=3))
    with pytest.raises(InputError, match="raters = 4"):
        create_experiment(_study(tmp_path / "b", extra="[bws]\nraters = 4\n"))
    with pytest.raises(InputError, match="no rating criteria"):
        load_config(write_experiment(tmp_path / "c", mode="bws", systems=4, practice=0,
                                     questionnaire=False))
    with pytest.raises(InputError, match="unknown|tuple_sise"):
        load_config(_study(tmp_path / "d", extra="[bws]\ntuple_sise = 3\n"))


def test_form_checks(tmp_path: Path) -> None:
    d = _study(tmp_path)
    made = create_experiment(d)
    app = create_app(d)
    try:
        c = app.test_client()
        token = made.evaluators["token"].iloc[0]
        c.get(f"/e/{token}")
        with c.session_transaction() as s:
            csrf = s["csrf"]
        c.post(f"/e/{token}/start", data={"csrf": csrf})
        page = c.get(f"/e/{token}").get_data(as_text=True)
        tid = page.split("/trial/")[1].split('"')[0]
        url = f"/e/{token}/trial/{tid}"
        r = c.post(url, data={"csrf": csrf, "best": "2", "worst": "2"})
        assert r.status_code == 422 and "must be different" in r.get_data(as_text=True)
        assert c.post(url, data={"csrf": csrf, "best": "1"}).status_code == 422
        assert c.post(url, data={"csrf": csrf, "best": "5", "worst": "1"}).status_code == 400
        assert c.post(url, data={"csrf": csrf, "best": "x", "worst": "1"}).status_code == 400
        assert c.post(url, data={"csrf": csrf, "best": "4", "worst": "1"}).status_code == 303
    finally:
        app.extensions["nlgeval_experiment"]["store"].dispose()


def _rows(rater: str, tuple_id: str, sources: list[str], best: int, worst: int) -> list:
    d = {"tuple_id": tuple_id, "sources": sources, "items": ["i1"] * len(sources),
         "criterion": "quality"}
    return [SimpleNamespace(name=rater, criterion="best", response=float(best), details=d),
            SimpleNamespace(name=rater, criterion="worst", response=float(worst), details=d)]


def test_counting_scores_by_hand() -> None:
    """Two tuples of rater r1 and one of r2 (all of item i1):
    r1, t1 = (A, B, C, D): best B, worst D;  r1, t2 = (A, B, C, E): best A, worst B;
    r2, t1 = (A, B, C, D): best A, worst D.
    r1: A (1 - 0) / 2 = 0.5, B (1 - 1) / 2 = 0, C 0 / 2 = 0, D (0 - 1) / 1 = -1, E 0;
    r2: A 1, B 0, C 0, D -1; over both raters A (2 - 0) / 3, D -2 / 2 = -1."""
    rows = (_rows("r1", "t1", list("ABCD"), 2, 4) + _rows("r1", "t2", list("ABCE"), 1, 2)
            + _rows("r2", "t1", list("ABCD"), 1, 4))
    mode = BWS()
    recs = []
    for r, cells in mode.export_rows(rows, {}, {}):
        recs.append({"rater": r.name, **cells})
    export = pd.DataFrame(recs)
    assert len(export) == 12 and export["criterion"].eq("quality").all()
    tidy = mode.tidy(export).set_index(["rater", "system"])["score"]
    want = {("r1", "A"): 0.5, ("r1", "B"): 0.0, ("r1", "C"): 0.0, ("r1", "D"): -1.0,
            ("r1", "E"): 0.0, ("r2", "A"): 1.0, ("r2", "B"): 0.0, ("r2", "C"): 0.0,
            ("r2", "D"): -1.0}
    assert tidy.to_dict() == pytest.approx(want)
    tables = mode.export_tables(export, logit_prior=0.5)
    overall = tables["bws_scores"].set_index("system")["score"]
    assert overall["A"] == pytest.approx(2 / 3) and overall["D"] == -1.0
    assert tables["bws_logit"]["label"].iloc[0] == "A"  # most often best, never worst
    assert BWSOptions().tuple_size == 4
