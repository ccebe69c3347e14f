"""Checkpoints of the resampling study: completed cells appended to a JSON-lines file as they
finish, so an interrupted study resumes where it stopped (``nlgeval items study --out DIR
--resume``) instead of restarting.

The first line identifies the study (everything that determines its numbers: distributions,
methods, sizes, replications, nboot, alpha, seed, stopping rule and the random-stream scheme,
``streams``: a checkpoint written before the streams were keyed by the distribution's name has
none and is refused on resume, as its cells came from other streams); each further line holds
the cells of one completed chunk as ``[distribution position, method, size, rejections,
replications, mean draws]`` (the position in the study's list of distributions). Every cell
has its own random stream, so cells computed before and after an interruption, on any backend
and in any chunking, give exactly the uninterrupted result.
A last line cut short by the interruption is dropped (those cells are simply run again).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nlgeval.errors import InputError

FORMAT = "nlgeval-items-checkpoint/1"
FILENAME = "checkpoint.jsonl"

Key = tuple[int, str, int]
Cell = tuple[Key, int, int, float]


def _normalise(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


class StudyCheckpoint:
    """Append-only record of completed cells for one study (see the module docstring).

    ``resume=False`` starts a new file (an existing one is replaced); ``resume=True`` keeps the
    cells of an existing file for the same study and raises :class:`InputError` when the file
    belongs to a different study.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / FILENAME
    >>> with StudyCheckpoint(path, {"seed": 1}, resume=False) as ck:
    ...     ck.append([((0, "rwor", 5), 3, 40, 12.5)])
    >>> StudyCheckpoint(path, {"seed": 1}, resume=True).done
    {(0, 'rwor', 5): ((0, 'rwor', 5), 3, 40, 12.5)}
    """

    def __init__(self, path: str | Path, study: dict[str, Any], *, resume: bool) -> None:
        self.path = Path(path)
        self.study = _normalise(study)
        self.done: dict[Key, Cell] = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines: list[str] = []
        if resume and self.path.exists():
            lines = self._read()
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps({"format": FORMAT, "study": self.study}) + "\n")
            for line in lines:
                fh.write(line + "\n")
        os.replace(tmp, self.path)
        self._fh = self.path.open("a", encoding="utf-8")

    def _read(self) -> list[str]:
        text = self.path.read_text(encoding="utf-8")
        raw = text.split("\n")
        complete = text.endswith("\n")
        rows = [r for r in raw if r.strip()]
        if not rows:
            return []
        try:
            head = json.loads(rows[0])
        except json.JSONDecodeError:
            raise InputError("not an nlgeval items checkpoint", file=self.path, row=1) from None
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise InputError("not an nlgeval items checkpoint", file=self.path, row=1)
        if head.get("study") != self.study:
            changed = sorted(k for k in set(self.study) | set(head.get("study") or {})
                             if self.study.get(k) != (head.get("study") or {}).get(k))
            raise InputError(
                "the output folder holds a checkpoint of a different study (differs in: "
                f"{', '.join(changed)}); run without --resume to start over, or use another "
                "--out", file=self.path, row=1)
        kept: list[str] = []
        for i, row in enumerate(rows[1:], start=2):
            last = i == len(rows)
            try:
                cells = json.loads(row)["cells"]
                parsed = [((int(d), str(m), int(s)), int(rej), int(r), float(dr))
                          for d, m, s, rej, r, dr in cells]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                if last and not complete:
                    break  # cut short by the interruption: run those cells again
                raise InputError("corrupt checkpoint line", file=self.path, row=i) from None
            if last and not complete:
                break  # parsed, but its newline never made it: treat as cut short
            for cell in parsed:
                self.done[cell[0]] = cell
            kept.append(row)
        return kept

    def append(self, cells: Iterable[Cell]) -> None:
        """Record completed cells (one line, flushed at once); see the class example."""
        rows = [[k[0], k[1], k[2], rej, r, dr] for k, rej, r, dr in cells]
        self._fh.write(json.dumps({"cells": rows}) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file (completed cells are already on disk)."""
        self._fh.close()

    def __enter__(self) -> StudyCheckpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
