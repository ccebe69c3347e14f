"""The longest commands of the CLI (``validate``, ``meta-analyse``, ``plan power``, ``compare``)
stay short as read from their ``def`` line, their option declarations included, and the options
objects that carry their parameters into named steps hold every parameter and pass each one on.

(``tests/test_code_shape.py`` measures a command from the end of its signature; these four
were 91-173 lines long from the ``def`` line until their options became named aliases and their
bodies named steps.)
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _cli import exit_status
from _validate_synth import synthetic_corpus

from nlgeval.cli.meta_analysis import MetaAnalyseOptions, meta_analyse
from nlgeval.cli.validate import ValidateOptions, validate
from nlgeval.errors import InputError
from nlgeval.report import ValidationSettings

CLI = Path(__file__).resolve().parent.parent / "nlgeval" / "cli"
MAX_LINES = 80


@pytest.mark.parametrize(("module", "name"), [
    ("validate.py", "validate"), ("meta_analysis.py", "meta_analyse"),
    ("human_plan.py", "plan_power"), ("human.py", "compare")])
def test_command_is_short_from_its_def_line(module: str, name: str) -> None:
    tree = ast.parse((CLI / module).read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    lines = (node.end_lineno or node.lineno) - node.lineno + 1
    assert lines <= MAX_LINES, f"{module}:{node.lineno} {name}: {lines} lines"


@pytest.mark.parametrize(("options", "command"), [
    (ValidateOptions, validate), (MetaAnalyseOptions, meta_analyse)])
def test_options_hold_every_parameter_in_order(options: Any, command: Any) -> None:
    fields = [f.name for f in dataclasses.fields(options)]
    assert fields == list(inspect.signature(command).parameters)
    assert options.__dataclass_params__.frozen


def _validate_defaults(**changed: Any) -> dict[str, Any]:
    values = {name: p.default for name, p in inspect.signature(validate).parameters.items()}
    assert set(changed) <= set(values)
    return {**values, **changed}


def test_validate_options_pass_each_option_to_its_setting() -> None:
    opts = ValidateOptions(**_validate_defaults(
        criteria="fluency, quality", levels="item,system", statistics="kendall,acc_eq",
        spa_permutations=7, epsilon="comet=0.02,bleu=0.5", resamples=11, resample="items",
        permutations=13, normalise="z", confidence=0.9, alpha=0.01,
        keep_reference_systems=True, exclude_systems="ref_a,ref_b", bind="m=Quality",
        correction=" BH ", seed=5, backend="serial", workers=2, no_cache=True,
        lower_is_better="ter_like", min_coverage=0.7))
    # the same settings built by hand: each value differs from its default, so a swapped or
    # dropped option changes the result
    want = ValidationSettings(
        criteria=("fluency", "quality"), levels=("item", "system"),
        statistics=("kendall", "acc_eq"), spa_permutations=7,
        epsilon={"comet": 0.02, "bleu": 0.5}, n_resamples=11, resample="items", normalise="z",
        seed=5, confidence_level=0.9, alpha=0.01, permutations=13,
        exclude_systems=("ref_a", "ref_b"), keep_reference_systems=True,
        bind={"m": "Quality"}, correction="bh", cache=False, lower_is_better=("ter_like",),
        min_coverage=0.7, backend="serial", workers=2, scheduler=None)
    assert opts.settings() == want
    assert ValidateOptions(**_validate_defaults()).settings() != want
    defaults = ValidateOptions(**_validate_defaults()).settings()
    assert defaults.statistics == ("pearson", "spearman", "kendall")
    assert defaults.levels == ("segment", "system") and defaults.cache


@pytest.mark.parametrize(("changed", "start"), [
    ({"alpha": 2.0}, "--alpha "), ({"resamples": -1}, "--resamples "),
    ({"confidence": 1.5}, "--confidence "), ({"epsilon": "comet"}, "--epsilon expects"),
    ({"bind": "m"}, "--bind expects")])
def test_validate_options_errors_name_the_option(changed: dict[str, Any], start: str) -> None:
    with pytest.raises(InputError) as err:
        ValidateOptions(**_validate_defaults(**changed)).settings()
    assert str(err.value).startswith(start), str(err.value)




def _study_without_texts(tmp_path: Path) -> tuple[Path, Path]:
    """Ratings and long metric scores of the synthetic corpus, ``ter_like`` lower-is-better."""
    corpus, seg = synthetic_corpus(n_systems=5, n_items=12, with_reference_system=False)
    ratings, scores = tmp_path / "ratings.csv", tmp_path / "scores.csv"
    corpus.ratings.to_csv(ratings, index=False)
    seg.to_csv(scores, index=False)
    return ratings, scores


@pytest.mark.parametrize("flags", [[], ["--quiet"], ["--json"]])
def test_validate_prints_each_warning_once_unless_quiet(tmp_path: Path, flags: list[str],
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    ratings, scores = _study_without_texts(tmp_path)
    code = exit_status(["validate", "--human", str(ratings), "--scores", str(scores),
                 "--metrics", "none", "--resamples", "0", "--permutations", "0",
                 "--figures", "none", "--backend", "serial", "--out", str(tmp_path / "r"),
                 *flags])
    assert code == 0, capsys.readouterr().err
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning: ")]
    # ter_like falls as the ratings rise: the study asks whether lower is better, in one line
    negative = [ln for ln in lines if "'ter_like' correlates significantly negatively" in ln]
    assert len(negative) == (0 if "--quiet" in flags else 1), lines
    assert len(lines) == len(set(lines))


def test_meta_analyse_prints_warnings_unless_quiet_or_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    effects = tmp_path / "effects.csv"
    # three studies of two effects each: robust variance estimation on 2 degrees of freedom
    # warns (Tipton 2015)
    pd.DataFrame({"study": list("aabbcc"), "r": [0.3, 0.35, 0.6, 0.5, 0.4, 0.45],
                  "n": [40, 40, 60, 60, 50, 50]}).to_csv(effects, index=False)
    shown = {}
    for flags in ([], ["--quiet"], ["--json"]):
        assert exit_status(["meta-analyse", "--effects", str(effects), "--dependence", "rve",
                     *flags]) == 0
        shown[tuple(flags)] = [ln for ln in capsys.readouterr().err.splitlines()
                               if ln.startswith("warning: ")]
    assert len(shown[()]) == 1 and "2 degrees of freedom" in shown[()][0], shown
    assert shown[("--quiet",)] == [] and shown[("--json",)] == []
