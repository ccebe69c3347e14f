"""Start-up imports of a warm run (issue 29): the metric registry and the signatures of the
main job's metrics (which key the score cache) do not load RapidFuzz; ``edit_distance`` loads it
on first use and its signature still names RapidFuzz's version."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
from nlgeval.metrics.registry import get_metric
for name in ("bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rougeL", "nist"):
    get_metric(name).config_signature
print("BEFORE", "rapidfuzz" in sys.modules)
metric = get_metric("edit_distance")
scores = metric.segment_scores(["the cat sat", "a dog"], [["the cat sat"], ["the dog"]])
print("SCORES", scores.tolist())
import rapidfuzz
print("SIGNATURE", metric.config_signature.endswith("rapidfuzz-" + rapidfuzz.__version__))
"""


def test_main_job_metrics_do_not_import_rapidfuzz() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "BEFORE False"
    assert out[1] == f"SCORES {[0.0, 3 / 7]}"  # "a" -> "the": 3 edits over 7 characters
    assert out[2] == "SIGNATURE True"
