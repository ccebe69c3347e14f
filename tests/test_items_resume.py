"""Checkpoints and ``--resume`` of the number-of-items study, and execution options that must
never change a number (chunking, backend choice). The reference is always the same study run
uninterrupted in one piece, compared bit for bit; no dask needed here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.items.backends import SerialBackend, get_backend, parse_scheduler
from nlgeval.items.checkpoint import FILENAME
from nlgeval.items.profiles import distribution_from_counts
from nlgeval.items.study import run_study

runner = CliRunner()
DISTS = [distribution_from_counts("d", [3, 5, 4, 8]),
         distribution_from_counts("e", [6, 2, 2, 0, 10])]
KW = dict(replications=60, n_resamples=50, alpha=0.1, seed=3, sizes=[2, 3, 5, 8, 12])
N_CELLS = 2 * 2 * 5


class Interrupted(Exception):
    pass


class StopAfter(SerialBackend):
    """Serial, but the run is interrupted after ``n`` chunks (as a kill or Ctrl-C would)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def imap_unordered(self, fn, tasks):
        for i, out in enumerate(super().imap_unordered(fn, tasks)):
            if i == self.n:
                raise Interrupted
            yield out


class Counting(SerialBackend):
    """Serial, counting the cells it is asked to run."""

    def __init__(self) -> None:
        self.cells = 0

    def imap_unordered(self, fn, tasks):
        for t in tasks:
            self.cells += len(t.keys)
            yield fn(t)


@pytest.fixture(scope="module")
def reference():
    return run_study(DISTS, backend="serial", **KW)


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.curves, b.curves, check_exact=True)
    pd.testing.assert_frame_equal(a.thresholds, b.thresholds, check_exact=True)


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 100])
def test_chunking_never_changes_a_number(reference, chunk_size: int) -> None:
    _same(reference, run_study(DISTS, backend="serial", chunk_size=chunk_size, **KW))


def test_interrupted_study_resumes_to_the_uninterrupted_result(reference, tmp_path: Path) -> None:
    ck = tmp_path / FILENAME
    with pytest.raises(Interrupted):
        run_study(DISTS, backend=StopAfter(2), chunk_size=3, checkpoint=ck, **KW)
    lines = ck.read_text().splitlines()
    assert len(lines) == 1 + 2  # header + the two completed chunks
    done = sum(len(json.loads(x)["cells"]) for x in lines[1:])
    assert done == 6
    counting = Counting()
    res = run_study(DISTS, backend=counting, chunk_size=4, checkpoint=ck, resume=True, **KW)
    _same(reference, res)
    assert counting.cells == N_CELLS - done  # only the missing cells were run
    assert res.run["execution"]["resumed_cells"] == done
    # a finished study resumes without any work; without resume it starts over
    again = Counting()
    _same(reference, run_study(DISTS, backend=again, checkpoint=ck, resume=True, **KW))
    assert again.cells == 0
    fresh = Counting()
    _same(reference, run_study(DISTS, backend=fresh, checkpoint=ck, **KW))
    assert fresh.cells == N_CELLS


def test_a_line_cut_short_is_run_again(reference, tmp_path: Path) -> None:
    ck = tmp_path / FILENAME
    with pytest.raises(Interrupted):
        run_study(DISTS, backend=StopAfter(3), chunk_size=2, checkpoint=ck, **KW)
    text = ck.read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    ck.write_text(text[: len(text) - len(last) // 2 - 1])  # the last chunk's line half-written
    counting = Counting()
    _same(reference, run_study(DISTS, backend=counting, checkpoint=ck, resume=True, **KW))
    assert counting.cells == N_CELLS - 4  # chunks 1-2 kept, chunk 3 run again
    # the file was repaired: one header and whole lines only
    for line in ck.read_text().splitlines():
        json.loads(line)


def test_resume_refuses_a_different_study(tmp_path: Path) -> None:
    ck = tmp_path / FILENAME
    run_study(DISTS, backend="serial", checkpoint=ck, **KW)
    with pytest.raises(InputError) as err:
        run_study(DISTS, backend="serial", checkpoint=ck, resume=True, **{**KW, "nboot": 51})
    assert "nboot" in err.value.message and err.value.file == ck
    bad = tmp_path / "other.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(InputError):
        run_study(DISTS, backend="serial", checkpoint=bad, resume=True, **KW)
    with pytest.raises(InputError):
        run_study(DISTS, backend="serial", resume=True, **KW)


def test_backend_selection() -> None:
    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler(None) == ("local", None)
    assert parse_scheduler("tcp://127.0.0.1:8786") == ("address", "tcp://127.0.0.1:8786")
    for bad in ("local:x", "local:0"):
        with pytest.raises(InputError):
            parse_scheduler(bad)
    assert get_backend(None, 1).name == "serial"
    assert get_backend(None, 2).name == "process"
    with pytest.raises(InputError):
        get_backend("serial", scheduler="local:2")
    with pytest.raises(InputError):
        get_backend("ray")


def _study_cli(*extra: str) -> list[str]:
    return ["items", "study", "--profiles", "none", "--counts", "d=3,5,4,8", "--counts",
            "e=6,2,2,0,10", "--replications", "60", "--nboot", "50", "--seed", "3",
            "--max-size", "12", "--json", "--quiet", *extra]


def test_cli_resume(tmp_path: Path) -> None:
    res = runner.invoke(app, _study_cli("--resume", "--backend", "serial"))
    assert isinstance(res.exception, InputError) and "--out" in res.exception.message
    first = runner.invoke(app, _study_cli("--backend", "serial", "--out", str(tmp_path)))
    assert first.exit_code == 0, first.output
    assert (tmp_path / FILENAME).exists()
    again = runner.invoke(app, _study_cli("--backend", "process", "--workers", "2",
                                          "--chunk-size", "5", "--out", str(tmp_path),
                                          "--resume"))
    assert again.exit_code == 0, again.output
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["curves"] == b["curves"] and a["thresholds"] == b["thresholds"]
    assert a["parameters"] == b["parameters"]
    assert b["run"]["execution"]["resumed_cells"] == 2 * 2 * 11
    changed = runner.invoke(app, _study_cli("--nboot", "60", "--out", str(tmp_path),
                                            "--resume", "--workers", "1"))
    assert isinstance(changed.exception, InputError)
    assert "different study" in changed.exception.message
