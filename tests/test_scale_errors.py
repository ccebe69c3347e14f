"""Failures the size of the data can cause end in one line and exit status 2 (issue 31): a study
estimated not to fit is refused before the statistics, and a ``MemoryError`` anywhere becomes one
line instead of a traceback."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from nlgeval.cli import main
from nlgeval.errors import InputError
from nlgeval.parallel.memory import (
    BYTES_PER_VALUE,
    LARGE_BYTES_PER_VALUE,
    check_study_memory,
    estimate_study_memory,
    format_bytes,
    parse_bytes,
)


@pytest.fixture
def study_files(tmp_path):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    q = rng.normal(size=(4, 30))
    system = np.repeat([f"s{i}" for i in range(4)], 30)
    item = np.tile([f"i{j}" for j in range(30)], 4)
    h, s = tmp_path / "ratings.csv", tmp_path / "scores.csv"
    pd.DataFrame({"system": system, "item": item, "criterion": "quality",
                  "score": (q + rng.normal(size=q.shape)).ravel()}).to_csv(h, index=False)
    pd.DataFrame({"system": system, "item": item, "m1": (q + rng.normal(size=q.shape)).ravel(),
                  "m2": rng.normal(size=q.size)}).to_csv(s, index=False)
    return h, s, tmp_path / "report"


def _validate(files, capsys) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    h, s, out = files
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--human", str(h), "--scores", str(s), "--metrics", "none", "--quiet",
              "--resamples", "20", "--permutations", "0", "--out", str(out)])
    return int(exc.value.code), capsys.readouterr().err


def test_a_study_over_the_memory_limit_is_refused_in_one_line(study_files, capsys,
                                                               monkeypatch) -> None:
    monkeypatch.setenv("NLGEVAL_MEMORY_LIMIT", "100MB")
    code, err = _validate(study_files, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "needs an estimated 0.5 GB of memory (4 systems x 30 items x 2 metrics" in lines[0]
    assert "0.1 GB are available" in lines[0] and "sample of at most" not in lines[0]
    assert not (study_files[2] / "run.json").exists()


def test_a_memory_error_is_one_line_and_exit_2(study_files, capsys, monkeypatch) -> None:
    import nlgeval.report.study as study

    def exhausted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise MemoryError("Unable to allocate 9.31 GiB for an array with shape (1000, 1250000)")

    monkeypatch.setattr(study, "_start_correlations", exhausted)
    code, err = _validate(study_files, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: out of memory (Unable to allocate 9.31 GiB")


def test_the_estimate_is_linear_in_the_scores_and_not_in_resamples() -> None:
    # two lines (small and large studies), each linear in the scored outputs: past a million
    # outputs the estimate grows by the large line's slope, below by the small line's
    a = estimate_study_memory(20, 250_000, 3, 1).bytes - estimate_study_memory(20, 150_000, 3,
                                                                               1).bytes
    b = estimate_study_memory(20, 350_000, 3, 1).bytes - estimate_study_memory(20, 250_000, 3,
                                                                               1).bytes
    assert a == b == 20 * 100_000 * 4 * LARGE_BYTES_PER_VALUE
    small = estimate_study_memory(20, 2_000, 3, 1).bytes - estimate_study_memory(20, 1_000, 3,
                                                                                 1).bytes
    assert small == 20 * 1_000 * 4 * BYTES_PER_VALUE
    check_study_memory(estimate_study_memory(10, 100, 3, 1), available=2**30)  # fits
    for free in (2**30, 4 * 2**30):
        with pytest.raises(InputError, match="sample of at most") as err:
            check_study_memory(estimate_study_memory(20, 500_000, 3, 1), available=free)
        # the sample it suggests is the largest that fits
        n = int(re.search(r"at most ([0-9,]+) items", str(err.value)).group(1).replace(",", ""))
        assert estimate_study_memory(20, n, 3, 1).bytes <= free < \
            estimate_study_memory(20, n + 1, 3, 1).bytes
    with pytest.raises(InputError, match="expected an amount"):
        parse_bytes("lots")


#: peak resident memory (VmHWM, bytes) of `nlgeval validate --human H --scores S --metrics none
#: --json` on the synthetic studies of benchmarks/bench_scale_memory.py (20 systems, 1 criterion,
#: default statistics), measured on the 2-core machine on 2026-11-26 at 09:20-09:46 with
#: `bench_scale_memory.py --sizes 20x2000,20x10000,20x50000,20x125000,20x250000` and
#: `--sizes 20x10000,20x25000 --metrics 10` (peak = the printed bytes per output x outputs;
#: docs/scale.md, "The memory model refitted")
MEASURED_PEAKS = {
    (20, 2_000, 3): 12_408 * 40_000,
    (20, 10_000, 3): 3_469 * 200_000,
    (20, 50_000, 3): 1_273 * 1_000_000,
    (20, 125_000, 3): 869 * 2_500_000,
    (20, 250_000, 3): 684 * 5_000_000,     # 11 min 15 s wall at load 1.4-4.8, 633 s CPU
    (20, 10_000, 10): 4_410 * 200_000,
    (20, 25_000, 10): 3_067 * 500_000,
}


def test_the_estimate_is_above_every_measured_peak_and_not_far() -> None:
    for (systems, items, metrics), peak in MEASURED_PEAKS.items():
        est = estimate_study_memory(systems, items, metrics, 1).bytes
        assert 1.05 * peak <= est <= 1.35 * peak, (systems, items, metrics, est, peak)


def test_a_5m_study_is_refused_in_one_line_below_its_estimate(capsys, monkeypatch) -> None:
    """The exit-2 path of a study of 5 M outputs (the check needs only the counts)."""
    est = estimate_study_memory(20, 250_000, 3, 1)
    with pytest.raises(InputError) as err:
        check_study_memory(est, available=est.bytes - 1)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"this study needs an estimated {format_bytes(est.bytes)} of memory "
                          "(20 systems x 250,000 items x 3 metrics x 1 criteria)")
    check_study_memory(est, available=est.bytes)  # exactly enough: no error


_MEASURE = """
import resource, sys
from nlgeval.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert not exc.code, exc.code
# VmHWM: this process's own peak; ru_maxrss would carry over the forking parent's (pytest's)
# peak across exec on Linux
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(int(hwm[0].split()[1]) * 1024 if hwm else
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


@pytest.mark.slow
def test_the_estimate_against_a_measured_study(tmp_path) -> None:
    # 20 x 5,000 outputs, 3 metrics, 1 criterion, default statistics: a size the fit did not
    # use (MEASURED_PEAKS); peak RSS of a fresh process
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    q = rng.normal(size=20)[:, None] + rng.normal(size=(20, 5_000))
    system = np.repeat([f"s{i}" for i in range(20)], 5_000)
    item = np.tile([f"i{j:05d}" for j in range(5_000)], 20)
    h, s = tmp_path / "ratings.csv", tmp_path / "scores.csv"
    human = np.round((q + rng.normal(size=q.shape)).ravel(), 3)
    pd.DataFrame({"system": system, "item": item, "criterion": "c0",
                  "score": human}).to_csv(h, index=False)
    pd.DataFrame({"system": system, "item": item,
                  **{f"m{m}": np.round((q + (m + 1) * rng.normal(size=q.shape)).ravel(), 4)
                     for m in range(3)}}).to_csv(s, index=False)
    command = [sys.executable, "-c", _MEASURE, "validate", "--human", str(h), "--scores",
               str(s), "--metrics", "none", "--json", "--quiet", "--out", str(tmp_path / "report")]
    # a first run fills numba's on-disk cache: in a fresh checkout compiling the kernels (LLVM)
    # peaks at several times the study's own memory, which the estimate does not model
    subprocess.run(command, capture_output=True, text=True, check=True)
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    measured = int(out.stdout.strip().splitlines()[-1])
    estimate = estimate_study_memory(20, 5_000, 3, 1).bytes
    assert 0.75 < estimate / measured < 1.33, (estimate, measured)


def test_the_memory_check_comes_before_the_scores_are_read(study_files, capsys,
                                                           monkeypatch) -> None:
    """The estimate needs only the ratings (systems x items x criteria) and the score file's
    header (its metric columns): a study that will not fit is refused before the scores are
    read and prepared (~45 s at 5 M scored outputs)."""
    import nlgeval.scores as scores

    def unread(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the score file was read before the memory check")

    monkeypatch.setattr(scores, "read_scores", unread)
    monkeypatch.setenv("NLGEVAL_MEMORY_LIMIT", "100MB")
    code, err = _validate(study_files, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "needs an estimated 0.5 GB of memory (4 systems x 30 items x 2 metrics x 1 " \
           "criteria)" in lines[0]
    # the same study with enough memory reads the scores
    monkeypatch.setenv("NLGEVAL_MEMORY_LIMIT", "100GB")
    with pytest.raises(AssertionError, match="the score file was read"):
        _validate(study_files, capsys)


def test_metric_count_reads_the_header_only(tmp_path) -> None:
    from nlgeval.scores import metric_count

    wide = tmp_path / "wide.tsv"
    wide.write_text("system\titem\tm1\tm2\tm3\tcriterion\nA\t1\t1\t2\t3\tq\n", encoding="utf-8")
    long = tmp_path / "long.csv"
    long.write_text("system,item,metric,score\nA,1,m1,0.5\nA,1,m2,0.5\n", encoding="utf-8")
    assert metric_count(wide) == 3 and metric_count(long) == 1
    assert metric_count(tmp_path / "missing.csv") == 1  # read_scores names the problem
