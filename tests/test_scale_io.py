"""Reading a large Parquet score file holds it about once (issue 31): 3 million rows of the
shape of a 20 x 1,000,000 study (system, item, three metric columns), read in a fresh process
whose peak resident memory is compared with the size of the frame it returns."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

_READER = """
import json, resource, sys
import numpy as np, pandas as pd, pyarrow.parquet
from nlgeval.io import read_table
def high_water():  # this process's own peak (ru_maxrss keeps the forking parent's across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
base = high_water()
df = read_table(sys.argv[1])
peak = high_water()
print(json.dumps({"rows": len(df), "frame": int(df.memory_usage(deep=True).sum()),
                  "base": base, "peak": peak, "first": df.iloc[0].astype(str).tolist(),
                  "dtypes": sorted({str(t) for t in df.dtypes})}))
"""


@pytest.mark.slow
def test_a_parquet_file_of_millions_of_rows_is_held_about_once(tmp_path) -> None:
    systems, items = 3, 1_000_000
    rng = np.random.default_rng(0)
    item_names = pa.array([f"i{j:07d}" for j in range(items)])
    schema = pa.schema([("system", pa.string()), ("item", pa.string())]
                       + [(f"m{k}", pa.float64()) for k in range(3)])
    path = tmp_path / "scores.parquet"
    with pq.ParquetWriter(path, schema) as writer:
        for s in range(systems):
            cols = {f"m{k}": rng.normal(size=items) for k in range(3)}
            cols["m2"][:10] = np.nan  # missing scores are empty strings
            writer.write_table(pa.table({"system": pa.array([f"s{s}"] * items),
                                         "item": item_names, **cols}, schema=schema))
    out = subprocess.run([sys.executable, "-c", _READER, str(path)], capture_output=True,
                         text=True, check=True)
    got = json.loads(out.stdout)
    assert got["rows"] == systems * items
    assert got["first"][:2] == ["s0", "i0000000"] and got["first"][4] == ""
    # the strings are Arrow-backed (no Python object per cell) ...
    assert got["dtypes"] == ["int64", "str"]
    # ... and the reader's peak stays within 3x the frame it returns (the Arrow table, the
    # strings and one column's temporaries: 1.9x measured on 2 M rows); the conversion through
    # Python objects peaked at 5.1x on the same file (10.5 GB for 20 M rows, now 3.9 GB)
    assert got["peak"] - got["base"] < 3.0 * got["frame"], got


# -- typed reading (nlgeval.io.typed): the same tidy frames, a fraction of the memory -----------

def _slow_scores(path, metric=None):
    from nlgeval.scores import tidy_scores
    from nlgeval.scores._parse import _read_maybe_gzip

    return tidy_scores(_read_maybe_gzip(path), file=path, metric=metric)


def _as_strings(df):
    import pandas as pd

    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(object)
        elif out[c].dtype != float and out[c].dtype != bool and c != "_row":
            out[c] = out[c].astype(object)
    out["higher_is_better"] = out["higher_is_better"].astype(object).where(
        out["higher_is_better"].notna(), None)
    return out.reset_index(drop=True)


_FILES = {
    "wide.csv": "system,item,m1,m2\nA,1,0.1,NA\nB, 1 ,2.5e-3,None\nA,2,-3,\nB,2,1e300,nUlL\n",
    "wide.tsv": "system\titem\tm1\nA\t1\t0.30000000000000004\nB\t1\t7\n",
    "long.csv": "system,item,metric,score\nA,1,x,0.5\nA,,x,0.7\nB,1,x,n/a\nB,none,y,1\n",
    "semicolon.csv": "system;item;m1\nA;1;0.5\nB;1;0.25\n",
    "no_item.csv": "system,score\nA,0.5\nB,0.25\n",
}
_FALLBACK = {  # read by the checking reader: the same frame or the same error
    "quoted.csv": 'system,item,m1\n"A, Inc",1,0.5\nB,1,0.25\n',
    "blank.csv": "system,item,m1\nA,1,0.5\n\nB,1,0.25\n",
    "blank_row.csv": "system,item,m1\nA,1,0.5\n,,\nB,1,0.25\n",
    "inf.csv": "system,item,m1\nA,1,inf\n",
    "nan_spelled.csv": "system,item,m1\nA,1,-nan\n",
    "padded_na.csv": "system,item,m1\nA,1, NA\n",
    "ragged.csv": "system,item,m1\nA,1,0.5,9\n",
    "criterion.csv": "system,item,metric,score,criterion\nA,1,j,0.5,q\nA,1,j,0.4,r\n",
    "dup.csv": "system,item,m1\nA,1,0.5\nA,1,0.6\n",
    "empty_system.csv": "system,item,m1\n,1,0.5\n",
}


@pytest.mark.parametrize("name", sorted(_FILES) + sorted(_FALLBACK))
def test_typed_reading_gives_the_frame_or_the_error_of_the_checking_reader(tmp_path,
                                                                            name) -> None:
    import pandas as pd

    from nlgeval.errors import InputError
    from nlgeval.scores import read_scores
    from nlgeval.scores._typed import typed_scores

    path = tmp_path / name
    path.write_text({**_FILES, **_FALLBACK}[name], encoding="utf-8")
    assert (typed_scores(path, None) is not None) == (name in _FILES)
    try:
        slow = _slow_scores(path)
    except InputError as exc:
        with pytest.raises(InputError) as got:
            read_scores(path)
        assert str(got.value) == str(exc)
        return
    fast = read_scores(path)
    pd.testing.assert_frame_equal(_as_strings(fast), _as_strings(slow), check_dtype=False)
    assert fast["score"].to_numpy().tobytes() == slow["score"].to_numpy().tobytes()


def test_typed_parquet_matches_the_string_round_trip(tmp_path) -> None:
    import pandas as pd

    from nlgeval.scores import read_scores

    rng = np.random.default_rng(3)
    x = rng.normal(size=500) * 10.0 ** rng.integers(-30, 30, size=500)
    x[::7] = np.nan
    table = pa.table({"system": pa.array(["A", "B"] * 250).dictionary_encode(),
                      "item": pa.array(np.repeat(np.arange(250), 2)),  # integer ids
                      "m1": x, "m2": pa.array(rng.integers(-5, 5, size=500), pa.int32())})
    pq.write_table(table, tmp_path / "s.parquet")
    fast = read_scores(tmp_path / "s.parquet")
    slow = _slow_scores(tmp_path / "s.parquet")
    assert isinstance(fast["item"].dtype, pd.CategoricalDtype)
    pd.testing.assert_frame_equal(_as_strings(fast), _as_strings(slow), check_dtype=False)
    assert fast["score"].to_numpy().tobytes() == slow["score"].to_numpy().tobytes()


def test_arrow_wrapping_failure_is_a_memory_error() -> None:
    from nlgeval.io.typed import arrow_memory_errors

    with pytest.raises(MemoryError, match="Wrapping i00359"):
        with arrow_memory_errors():
            raise pa.lib.ArrowException("Unknown error: Wrapping i00359 failed")
    with pytest.raises(ValueError):  # other errors pass through
        with arrow_memory_errors():
            raise ValueError("x")


_TYPED_READER = """
import json, sys
from nlgeval.scores import read_scores
def high_water():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
base = high_water()
df = read_scores(sys.argv[1])
peak = high_water()
print(json.dumps({"rows": len(df), "frame": int(df.memory_usage(deep=True).sum()),
                  "base": base, "peak": peak, "items": int(df["item"].cat.categories.size),
                  "first": [str(v) for v in df.iloc[0, :4]]}))
"""


def _peak_read(path) -> dict:
    out = subprocess.run([sys.executable, "-c", _TYPED_READER, str(path)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["wide", "long"])
def test_a_parquet_file_of_tens_of_millions_of_cells_is_read_typed(tmp_path, layout) -> None:
    """The shape of the 20 x 1,000,000 file that failed with 'ArrowException: Wrapping i00359'
    (string item ids like i00359), at 20 x 200,000 x 3 metrics (12 M score cells): read into
    categories and float64, held about once (VmHWM of a fresh process)."""
    systems, items = 20, 200_000
    rng = np.random.default_rng(0)
    item_names = pa.array([f"i{j:05d}" for j in range(items)])
    path = tmp_path / f"{layout}.parquet"
    if layout == "wide":
        schema = pa.schema([("system", pa.string()), ("item", pa.string())]
                           + [(f"m{k}", pa.float64()) for k in range(3)])
    else:
        schema = pa.schema([("system", pa.string()), ("item", pa.string()),
                            ("metric", pa.string()), ("score", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for s in range(systems):
            if layout == "wide":
                cols = {f"m{k}": rng.normal(size=items) for k in range(3)}
                writer.write_table(pa.table({"system": pa.array([f"s{s}"] * items),
                                             "item": item_names, **cols}, schema=schema))
                continue
            for k in range(3):
                writer.write_table(pa.table({
                    "system": pa.array([f"s{s}"] * items), "item": item_names,
                    "metric": pa.array([f"m{k}"] * items), "score": rng.normal(size=items)},
                    schema=schema))
    got = _peak_read(path)
    n = systems * items * 3
    assert got["rows"] == n and got["items"] == items
    assert got["first"][:3] == ["m0", "s0", "i00000"]
    # typed: about 1 + 1 + 4 + 8 + 8 (row) bytes per score and 1-byte categories
    assert got["frame"] < 32 * n, got
    # the Arrow table and the frame, once each, plus one column's temporaries and Arrow's
    # allocator slack (2.5-3.3x the frame measured: 3.2x for the long file inside the whole suite);
    # the string reader (Arrow-backed strings per cell) held 2-3x a frame of ~90 bytes per score,
    # i.e. over 2 GB here, which this bound (~1.5 GB) still refuses
    assert got["peak"] - got["base"] < 4 * got["frame"] + 200e6, got


@pytest.mark.slow
def test_a_large_csv_score_file_is_read_typed(tmp_path) -> None:
    """2 M outputs x 3 metrics of CSV, read block-wise by Arrow into typed columns: the peak
    is a small multiple of the typed frame (the csv module's strings held ~10x more)."""
    systems, items = 10, 200_000
    rng = np.random.default_rng(1)
    path = tmp_path / "scores.csv"
    with path.open("w", encoding="utf-8") as fh:
        fh.write("system,item,m0,m1,m2\n")
        ids = np.array([f"i{j:06d}" for j in range(items)], dtype=object)
        for s in range(systems):
            vals = np.round(rng.normal(size=(items, 3)), 6)
            fh.writelines(f"s{s},{i},{a},{b},{c}\n" for i, (a, b, c) in zip(ids, vals.tolist(),
                                                                             strict=True))
    got = _peak_read(path)
    n = systems * items * 3
    assert got["rows"] == n and got["first"][:3] == ["m0", "s0", "i000000"]
    assert got["frame"] < 32 * n, got
    assert got["peak"] - got["base"] < 2.5 * got["frame"] + 200e6, got
