"""nlgeval: validate NLG metrics against human judgements, compare generators with sound
statistics, and plan and run human evaluations.

The package is organised in small modules with one job each:

- :mod:`nlgeval.corpus` -- the canonical tidy data model (:class:`~nlgeval.corpus.Corpus`).
- :mod:`nlgeval.corpora` -- loaders for real human-evaluation corpora and user corpora.
- :mod:`nlgeval.metrics` -- metric adapters (BLEU, chrF, TER, ROUGE, ...) behind one interface.
- :mod:`nlgeval.correlation` -- metric/human correlations, bootstrap CIs, metric comparison tests.
- :mod:`nlgeval.human` -- Latin-square designs, significance between generators, agreement.
- :mod:`nlgeval.triangle` -- the NLG triangle test (design, sample size, analysis).
- :mod:`nlgeval.items` -- discrete ANOVA and the number-of-items resampling study.
- :mod:`nlgeval.experiment` -- the online human-evaluation web application.
- :mod:`nlgeval.tables` -- paper tables (CSV, Markdown, LaTeX).
- :mod:`nlgeval.results` -- the result protocol every statistic follows (docs/api.md).

Each package exports its main functions (``__all__``); docs/api.md gives every import path.

>>> import numpy as np
>>> from nlgeval.correlation import pairwise_accuracy
>>> metric = np.array([[0.9, 0.8], [0.5, 0.6], [0.2, 0.3]])   # 3 systems x 2 segments
>>> human = np.array([[5.0, 4.0], [3.0, 4.0], [4.0, 2.0]])
>>> statistic, pvalue = pairwise_accuracy(metric, human)       # scipy-style unpacking
>>> statistic
1.0
"""

from __future__ import annotations

import os as _os

# numba's parallel kernels (bootstrap resamples spread over the cores) must survive the fork of
# a process backend (nlgeval.parallel) or of the figure writer. GNU OpenMP, numba's default
# layer where TBB is absent, aborts a forked child that launches a parallel region; the
# workqueue layer is fork-safe. A layer chosen by the user (NUMBA_THREADING_LAYER) is kept.
_os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")

__version__ = "0.1.0"

from nlgeval.errors import InputError, NlgevalError

__all__ = ["__version__", "InputError", "NlgevalError"]
