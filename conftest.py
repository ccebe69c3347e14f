"""Session set-up shared by the tests and the docstring examples (doctests).

Docstring examples load published corpora by name; when the read-only corpora folder sits next
to the checkout (as in CI) and ``NLGEVAL_DATA`` is unset, point it there so no download is tried.
"""

from __future__ import annotations

import os
from pathlib import Path

_CORPORA = Path(__file__).resolve().parent.parent / "shared" / "corpora"
if "NLGEVAL_DATA" not in os.environ and _CORPORA.is_dir():
    os.environ["NLGEVAL_DATA"] = str(_CORPORA)
os.environ.setdefault("MPLBACKEND", "Agg")
