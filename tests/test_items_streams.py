"""The number-of-items study keys each cell's random stream by the distribution's NAME, method
and size (González-Corbelle et al. 2023's study; numpy ``SeedSequence`` streams, O'Neill 2015):
a distribution's curves are the same, bit for bit, alone or beside other distributions in either
order, on every backend and chunking; the stream of a name is the documented key, the same in
another process (another hash seed); names map to keys one-to-one; two distributions with one
name are refused; a checkpoint written with the earlier position-keyed streams is not resumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.items.checkpoint import FILENAME, FORMAT
from nlgeval.items.profiles import distribution_from_counts
from nlgeval.items.study import run_study

runner = CliRunner()
KW = dict(replications=80, n_resamples=60, alpha=0.1, seed=11, sizes=[2, 3, 5, 9, 14])
# names that a position- or prefix-based key would confuse: a prefix, a NUL-padded twin,
# non-ASCII, 4- and 5-byte names (one word / two words)
NAMES = ["me", "me\x00", "m", "évaluatrice 2", "abcd", "abcde"]


def _random_dists(seed: int, names: list[str]):
    rng = np.random.default_rng(seed)
    out = []
    for name in names:
        k = int(rng.integers(2, 6))
        counts = rng.integers(0, 9, size=k)
        counts[0] += 3  # at least 3 ratings, and sizes up to 14 are within 2..N
        counts[-1] += 12
        out.append(distribution_from_counts(name, counts.tolist()))
    return out


def _rows(res, name: str) -> pd.DataFrame:
    return res.curves[res.curves["distribution"] == name].reset_index(drop=True)


def _thr(res, name: str) -> pd.DataFrame:
    return res.thresholds[res.thresholds["distribution"] == name].reset_index(drop=True)


@pytest.mark.parametrize("case", range(3))
def test_a_distribution_alone_and_beside_others_in_any_order_is_bit_identical(case: int) -> None:
    rng = np.random.default_rng(100 + case)
    names = [NAMES[i] for i in rng.permutation(len(NAMES))[:3]]
    dists = _random_dists(200 + case, names)
    runs = [run_study(dists, backend="serial", **KW),
            run_study(dists[::-1], backend="serial", **KW),
            run_study([dists[1], dists[2], dists[0]], backend="serial", chunk_size=4, **KW)]
    for d in dists:
        alone = run_study([d], backend="serial", **KW)
        assert len(alone.curves) == 2 * len(KW["sizes"])
        for res in runs:
            pd.testing.assert_frame_equal(_rows(res, d.name), alone.curves, check_exact=True)
            # min_items is float when another distribution's entry is None (never)
            pd.testing.assert_frame_equal(_thr(res, d.name), alone.thresholds,
                                          check_exact=True, check_dtype=False)


def test_backends_and_chunking_do_not_change_numbers_in_either_order() -> None:
    dists = _random_dists(7, ["d", "e", "évaluatrice 2"])
    ref = run_study(dists, backend="serial", chunk_size=1, **KW)
    for order in (dists, dists[::-1]):
        for kw in (dict(backend="serial", chunk_size=7), dict(backend="process", workers=2),
                   dict(backend="process", workers=2, chunk_size=3)):
            res = run_study(order, **kw, **KW)
            for d in dists:
                pd.testing.assert_frame_equal(_rows(res, d.name), _rows(ref, d.name),
                                              check_exact=True)


def test_renaming_or_reseeding_changes_the_numbers_so_the_comparisons_can_fail() -> None:
    d = _random_dists(3, ["me"])[0]
    kw = {**KW, "replications": 200, "methods": ["bootstrap"]}
    base = run_study([d], backend="serial", **kw).curves["rejections"].tolist()
    renamed = distribution_from_counts("me ", list(d.counts))
    assert run_study([renamed], backend="serial", **kw).curves["rejections"].tolist() != base
    other_seed = run_study([d], backend="serial", **{**kw, "seed": 12})
    assert other_seed.curves["rejections"].tolist() != base


def _documented_key(name: str) -> tuple[int, ...]:
    """The mapping docs/items.md describes, written independently of ``name_key``: the UTF-8
    byte count, then the bytes four at a time as little-endian 32-bit words."""
    data = name.encode("utf-8")
    data += bytes(-len(data) % 4)
    return (len(name.encode("utf-8")),
            *(int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)))


def test_the_stream_is_the_documented_seedsequence_key() -> None:
    from nlgeval.items.cells import name_key, task_stream

    assert name_key("me") == (2, ord("m") + 256 * ord("e"))
    for name in [*NAMES, "", "positive", "x" * 41, "評価者"]:
        assert name_key(name) == _documented_key(name)
        for m, method in enumerate(("bootstrap", "rwor")):
            got = task_stream(5, name, method, 17)
            ref = np.random.SeedSequence(5, spawn_key=(*_documented_key(name), m, 17))
            assert got.generate_state(8).tolist() == ref.generate_state(8).tolist()
    # the old key (position 0) is not what a name gives
    assert (task_stream(5, "me", "rwor", 17).generate_state(4).tolist()
            != np.random.SeedSequence(5, spawn_key=(0, 1, 17)).generate_state(4).tolist())
    with pytest.raises(TypeError):
        task_stream(5, 0, "rwor", 17)  # type: ignore[arg-type]


def test_names_map_to_keys_one_to_one() -> None:
    from nlgeval.items.cells import name_key

    rng = np.random.default_rng(0)
    alphabet = ["a", "b", "\x00", "é", "評", " "]
    names = {""} | set(NAMES)
    for _ in range(3000):
        names.add("".join(rng.choice(alphabet, size=int(rng.integers(0, 7)))))
    keys = {name_key(n) for n in names}
    assert len(keys) == len(names)
    assert all(0 <= w < 2**32 for k in keys for w in k)
    # whole cell keys stay distinct too (the name key's length is fixed by its first integer)
    cells = {(*name_key(n), m, s) for n in names for m in (0, 1) for s in (2, 3, 259)}
    assert len(cells) == 6 * len(names)


def test_a_names_stream_is_the_same_in_another_process() -> None:
    from nlgeval.items.cells import task_stream

    code = ("import json, sys; from nlgeval.items.cells import task_stream; "
            "print(json.dumps([task_stream(9, n, m, 23).generate_state(4).tolist() "
            "for n in json.loads(sys.argv[1]) for m in ('bootstrap', 'rwor')]))")
    here = [task_stream(9, n, m, 23).generate_state(4).tolist()
            for n in NAMES for m in ("bootstrap", "rwor")]
    for hashseed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run([sys.executable, "-c", code, json.dumps(NAMES)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout) == here


def test_two_distributions_with_one_name_are_refused() -> None:
    d = distribution_from_counts("me", [3, 4, 5])
    twin = distribution_from_counts("me", [5, 4, 3])
    with pytest.raises(InputError) as err:
        run_study([d, twin], backend="serial", **KW)
    assert "'me'" in err.value.message
    out = runner.invoke(app, ["items", "study", "--profiles", "positive", "--counts",
                              "positive=1,2,3,4,5", "--max-size", "5", "--replications", "5",
                              "--quiet"])
    assert isinstance(out.exception, InputError) and "'positive'" in out.exception.message


def test_the_parameters_name_the_stream_scheme() -> None:
    res = run_study(_random_dists(1, ["d"]), backend="serial", **KW)
    assert res.parameters["streams"] == "by-name/2"


def test_a_checkpoint_of_the_position_keyed_streams_is_not_resumed(tmp_path: Path) -> None:
    dists = _random_dists(2, ["d", "e"])
    ck = tmp_path / FILENAME
    run_study(dists, backend="serial", checkpoint=ck, **KW)
    head, *cells = ck.read_text(encoding="utf-8").splitlines()
    old = json.loads(head)
    assert old["format"] == FORMAT
    del old["study"]["streams"]  # what a checkpoint written before the name-keyed streams holds
    ck.write_text("\n".join([json.dumps(old), *cells]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        run_study(dists, backend="serial", checkpoint=ck, resume=True, **KW)
    assert "streams" in err.value.message and "different study" in err.value.message


def test_cli_me_alone_and_beside_the_paper_profiles() -> None:
    """The case of the report: ``--counts me=...`` alone and beside the paper's six profiles
    (7 distributions, ``me`` last) gives the same curves and Table 3 for ``me``."""
    base = ["items", "study", "--counts", "me=12,30,41,80,83", "--methods", "rwor",
            "--max-size", "40", "--replications", "100", "--nboot", "100", "--seed", "1",
            "--backend", "serial", "--json", "--quiet"]
    alone = runner.invoke(app, [*base, "--profiles", "none"])
    beside = runner.invoke(app, [*base, "--profiles", "paper"])
    assert alone.exit_code == 0 and beside.exit_code == 0, alone.output + beside.output
    a, b = json.loads(alone.stdout), json.loads(beside.stdout)
    assert len(b["distributions"]) == 7
    for part in ("curves", "thresholds"):
        mine = [r for r in b[part] if r["distribution"] == "me"]
        assert mine == a[part] and len(mine) > 0


def _old_cell_with_stream(stream, counts, method, size, replications, nboot, alpha, stopping):
    """The cell computation of the code before this change (3e72fac, ``cells._run_cell``), line
    for line, given a stream: only the stream's key changed, so every cell must equal it."""
    from nlgeval.items import _kernels as K
    from nlgeval.items.cells import observed_subsamples
    from nlgeval.items.stopping import certified_schedule

    sched = certified_schedule(nboot, alpha, 1e-10 if stopping == "certified" else 0.0)
    rng = np.random.default_rng(stream)
    full = np.asarray(counts, dtype=np.int64)
    full = full[full > 0].astype(np.int64)
    sub = observed_subsamples(rng, full, size, method, replications).astype(np.int64)
    out_p, out_rej = np.empty(replications), np.zeros(replications, dtype=np.bool_)
    out_d = np.zeros(replications, dtype=np.int64)
    nmax = int(full.sum()) + size + 1
    K.two_group_bootstrap(rng, full, sub, nboot, alpha, sched.step, sched.accept_at,
                          sched.reject_at, sched.pz_min, K.log_factorial_table(nmax),
                          K.reciprocal_table(nmax), out_p, out_rej, out_d)
    return int(out_rej.sum()), float(out_d.mean())


@pytest.mark.parametrize("case", range(4))
def test_only_the_streams_key_changed_randomized(case: int) -> None:
    """Random distributions (zero categories, a near-constant one with a single rating off the
    mode, a constant one, sizes up to N): every cell of the study equals the old cell code run
    on the stream of the documented name key."""
    rng = np.random.default_rng(500 + case)
    dists = []
    for j, name in enumerate(rng.permutation(NAMES)[:3]):
        counts = rng.integers(0, 7, size=int(rng.integers(2, 7)))
        if j == 1:
            counts[:] = 0
            counts[int(rng.integers(len(counts)))] = 15 + case  # constant (case 0) or near
            if case:
                counts[(np.flatnonzero(counts)[0] + 1) % len(counts)] += 1
        else:
            counts[0] += 3
        dists.append(distribution_from_counts(str(name), counts.tolist()))
    n_min = min(d.n for d in dists)
    sizes = sorted({2, 3, int(rng.integers(4, n_min + 1)), n_min})
    stopping = "exact" if case % 2 else "certified"
    kw = dict(replications=60, n_resamples=80, alpha=0.1, seed=int(rng.integers(1000)),
              sizes=sizes, stopping=stopping)
    res = run_study(dists, backend="serial", **kw)
    for row in res.curves.itertuples():
        d = next(x for x in dists if x.name == row.distribution)
        m = ("bootstrap", "rwor").index(row.method)
        stream = np.random.SeedSequence(kw["seed"],
                                        spawn_key=(*_documented_key(d.name), m, row.size))
        rej, draws = _old_cell_with_stream(stream, d.counts, row.method, row.size, 60, 80, 0.1,
                                           stopping)
        assert (row.rejections, row.mean_draws) == (rej, draws)
