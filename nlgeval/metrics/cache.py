"""A disk cache of segment statistics keyed by metric configuration + text content.

Key = sha256(metric config signature, hypothesis, sha256 of the reference list). The value is
the metric's sufficient-statistics vector (float64 bytes), so both segment and corpus scores can
be recomputed from it. Because the key contains the full configuration signature (library
version, tokenizer, case, smoothing...), changing a setting never returns stale numbers (a
known problem of caches keyed only by metric name).

Storage is a single SQLite file (stdlib, safe for concurrent readers, one writer at a time):
``$NLGEVAL_CACHE/scores.sqlite``, default ``~/.cache/nlgeval/scores/scores.sqlite``.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np


class Configured(Protocol):
    """What the cache needs of a metric: the signature of everything that sets its numbers.

    (A protocol rather than :class:`nlgeval.metrics.base.Metric`, which uses the cache, so the
    two modules do not import each other.)

    Examples:
        >>> from nlgeval.metrics import get_metric
        >>> isinstance(get_metric("chrf").config_signature, str)
        True
    """

    @property
    def config_signature(self) -> str: ...

_SEP = "\x1f"


def default_cache_dir() -> Path:
    """``$NLGEVAL_CACHE`` if set, else ``~/.cache/nlgeval/scores``.

    Examples:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"NLGEVAL_CACHE": "~/nlgeval-cache"}):
        ...     print(default_cache_dir().name)
        nlgeval-cache
    """
    env = os.environ.get("NLGEVAL_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "nlgeval" / "scores"


def _refs_digest(refs: Sequence[str]) -> bytes:
    """sha256 of every reference followed by the unit separator (one encode, one hash).
    Texts are UTF-8 with ``surrogatepass``: the same bytes for every valid text, and a lone
    surrogate (a JSON ``"\\ud800"`` escape) is hashed instead of failing."""
    return hashlib.sha256(("\x1f".join(refs) + "\x1f").encode("utf-8", "surrogatepass")).digest()


class StatsCache:
    """SQLite-backed cache of per-segment statistics (see module docstring).

    Examples:
        A second scoring of the same texts is read from the cache:

        >>> import tempfile
        >>> from nlgeval.metrics import get_metric
        >>> m = get_metric("bleu")
        >>> hyps, refs = ["the cat sat", "a dog"], [["the cat sat"], ["the dog"]]
        >>> with tempfile.TemporaryDirectory() as tmp, StatsCache(tmp) as cache:
        ...     first = m.segment_stats(hyps, refs, cache=cache)
        ...     again = m.segment_stats(hyps, refs, cache=cache)
        ...     print(cache.misses, cache.hits, bool((first == again).all()))
        2 2 True
    """

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        self.dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "scores.sqlite"
        self._con = sqlite3.connect(self.path, timeout=60)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS stats (key BLOB PRIMARY KEY, value BLOB NOT NULL)"
        )
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS batches (key BLOB PRIMARY KEY, n INTEGER NOT NULL, "
            "k INTEGER NOT NULL, stats BLOB NOT NULL, scores BLOB NOT NULL)"
        )
        self._con.commit()
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> StatsCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _keys(
        metric: Configured, groups: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[list[bytes]]:
        sig = metric.config_signature.encode("utf-8")
        out = []
        for refs, hyps in groups:
            rd = _refs_digest(refs)
            base = hashlib.sha256(sig + b"\x00" + rd)
            keys = []
            for h in hyps:
                k = base.copy()
                k.update(h.encode("utf-8", "surrogatepass"))
                keys.append(k.digest())
            out.append(keys)
        return out

    def lookup(
        self, metric: Configured, groups: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[list[np.ndarray | None]]:
        """Per (references, hypotheses) group: cached statistics or ``None`` per hypothesis."""
        keys = self._keys(metric, groups)
        flat = [k for ks in keys for k in ks]
        found: dict[bytes, bytes] = {}
        # Join against a temporary table: one query instead of one per key.
        cur = self._con.cursor()
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (key BLOB PRIMARY KEY)")
        cur.execute("DELETE FROM wanted")
        cur.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((k,) for k in flat))
        query = "SELECT s.key, s.value FROM stats s JOIN wanted w ON s.key = w.key"
        for k, v in cur.execute(query):
            found[bytes(k)] = v
        cur.execute("DELETE FROM wanted")
        self._con.commit()
        res: list[list[np.ndarray | None]] = []
        for ks in keys:
            row: list[np.ndarray | None] = []
            for k in ks:
                v = found.get(k)
                row.append(None if v is None else np.frombuffer(v, dtype=np.float64))
            res.append(row)
        n_hit = sum(1 for k in flat if k in found)
        self.hits += n_hit
        self.misses += len(flat) - n_hit
        return res

    def store(
        self,
        metric: Configured,
        groups: Sequence[tuple[Sequence[str], Sequence[str]]],
        stats: Sequence[np.ndarray],
    ) -> None:
        """Store freshly computed statistics (aligned with ``groups``)."""
        keys = self._keys(metric, groups)
        rows = (
            (k, np.ascontiguousarray(s, dtype=np.float64).tobytes())
            for ks, arr in zip(keys, stats, strict=True)
            for k, s in zip(ks, arr, strict=True)
        )
        self._con.executemany("INSERT OR REPLACE INTO stats VALUES (?, ?)", rows)
        self._con.commit()

    # -- whole batches: a re-run of the same scoring job is one hash and one row
    @staticmethod
    def texts_digest(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> bytes:
        """sha256 over every hypothesis and reference list, in order."""
        memo: dict[int, bytes] = {}
        digests = []
        for r in refs:
            d = memo.get(id(r))
            if d is None:
                d = memo[id(r)] = _refs_digest(r)
            digests.append(d)
        h = hashlib.sha256(b"".join(digests))
        h.update("\x1d".join(hyps).encode("utf-8", "surrogatepass"))
        h.update(len(hyps).to_bytes(8, "little"))
        return h.digest()

    @staticmethod
    def batch_key(metric: Configured, texts_digest: bytes) -> bytes:
        """Key of a whole batch: configuration signature + :meth:`texts_digest`."""
        sig = metric.config_signature.encode("utf-8")
        return hashlib.sha256(b"batch\x00" + sig + b"\x00" + texts_digest).digest()

    def get_batch(self, key: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        row = self._con.execute(
            "SELECT n, k, stats, scores FROM batches WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        n, k, stats, scores = row
        self.hits += n
        return (
            np.frombuffer(stats, dtype=np.float64).reshape(n, k),
            np.frombuffer(scores, dtype=np.float64).copy(),
        )

    def put_batch(self, key: bytes, stats: np.ndarray, scores: np.ndarray) -> None:
        stats = np.ascontiguousarray(stats, dtype=np.float64)
        self._con.execute(
            "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?)",
            (
                key,
                stats.shape[0],
                stats.shape[1],
                stats.tobytes(),
                np.ascontiguousarray(scores, dtype=np.float64).tobytes(),
            ),
        )
        self._con.commit()

    def clear(self) -> None:
        self._con.execute("DELETE FROM stats")
        self._con.execute("DELETE FROM batches")
        self._con.commit()
