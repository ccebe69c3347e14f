"""What one neural-metric computation did: sizes, time, device and truncation, reported as a
:class:`NeuralRun`, one line on stderr, and a :class:`TruncationWarning` when texts were cut."""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from nlgeval.results import Result


class TruncationWarning(UserWarning):
    """Some texts were longer than the model's maximum input length and were cut.

    Examples:
        >>> issubclass(TruncationWarning, UserWarning)
        True
    """



@dataclass(frozen=True)
class NeuralRun(Result):
    """What one computation did: sizes, time, device and truncation (``to_dict`` adds the
    throughputs ``outputs_per_second`` and ``texts_per_second``).

    Examples:
        >>> run = NeuralRun("bertscore", "roberta-large", "cpu", None, 2, 2, 4, 2, 0.5, 1.0,
        ...                 0, 0, 512)
        >>> run.to_dict()["outputs_per_second"]
        4.0
    """

    _aliases: ClassVar[Mapping[str, str]] = {"outputs_per_second": "outputs_per_second",
                                             "texts_per_second": "texts_per_second"}

    metric: str
    model: str
    device: str
    gpu: str | None
    n_outputs: int
    n_references: int
    n_texts: int
    n_pairs: int
    seconds: float
    load_seconds: float
    truncated_outputs: int
    truncated_references: int
    max_tokens: int

    @property
    def outputs_per_second(self) -> float:
        return self.n_outputs / self.seconds if self.seconds > 0 else math.inf

    @property
    def texts_per_second(self) -> float:
        return self.n_texts / self.seconds if self.seconds > 0 else math.inf

    def summary(self) -> str:
        """The one line written to stderr after a computation.

        Examples:
            >>> NeuralRun("embedding-cosine", "local:model", "cpu", None, 3, 2, 5, 6, 0.5, 0.0,
            ...           1, 0, 256).summary().split(" on ")[1]
            'CPU (no GPU used); truncated to 256 tokens: 1 outputs, 0 references'
        """
        where = f"GPU {self.gpu}" if self.gpu else "CPU (no GPU used)"
        trunc = (
            f"; truncated to {self.max_tokens} tokens: {self.truncated_outputs} outputs, "
            f"{self.truncated_references} references"
            if self.truncated_outputs or self.truncated_references
            else "; nothing truncated"
        )
        return (
            f"{self.metric}: {self.n_outputs} outputs x {self.n_pairs} reference pairs, "
            f"{self.n_texts} texts encoded in {self.seconds:.2f} s "
            f"({self.outputs_per_second:.1f} outputs/s, {self.texts_per_second:.1f} texts/s; "
            f"model load {self.load_seconds:.2f} s) on {where}{trunc}"
        )



def _say(line: str) -> None:
    """One line on stderr unless ``--quiet`` / ``NLGEVAL_QUIET``."""
    from nlgeval import progress

    if progress.quiet_requested() or os.environ.get("NLGEVAL_QUIET"):
        return
    sys.stderr.write(line + "\n")


def _warn_truncation(run: NeuralRun) -> None:
    if run.truncated_outputs or run.truncated_references:
        warnings.warn(
            f"{run.metric}: {run.truncated_outputs} output(s) and {run.truncated_references} "
            f"reference(s) are longer than {run.max_tokens} tokens and were truncated "
            f"(model {run.model})",
            TruncationWarning,
            stacklevel=4,
        )
