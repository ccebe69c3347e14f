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

The front door: the five common tasks are also reachable as ``nlgeval.<name>``, imported on
first use so that ``import nlgeval`` itself stays light (PEP 562):

- ``nlgeval.load_corpus`` -- :func:`nlgeval.corpora.load_corpus` (a published corpus or a folder);
- ``nlgeval.score_corpus`` -- :func:`nlgeval.metrics.score_corpus` (metric scores);
- ``nlgeval.validate`` -- :func:`nlgeval.report.run_validation` (the metric-validation study);
- ``nlgeval.compare_systems`` -- :func:`nlgeval.human.compare_systems` (which generator people
  prefer);
- ``nlgeval.agreement`` -- :func:`nlgeval.human.agreement_report` (agreement between raters).

>>> import nlgeval
>>> corpus = nlgeval.load_corpus("e2e")                    # Dusek et al. (2020)
>>> small = corpus.subset(items=corpus.items[:40])
>>> scores = nlgeval.score_corpus(small, ["bleu"], cache=False)
>>> study = nlgeval.validate(small, ["bleu"], levels=["system"], coefficients=["pearson"],
...                          n_resamples=20, permutations=0, table9=False)
>>> study.correlations.loc[0, ["metric", "level", "statistic"]].tolist()
['bleu', 'system', 'pearson']
>>> import pandas as pd
>>> ratings = pd.DataFrame({"rater": ["r1", "r2"] * 6, "item": list("111122223333"),
...                         "system": list("aabbaabbaabb"),
...                         "score": [4, 5, 2, 2, 5, 4, 3, 2, 4, 4, 1, 2]})
>>> nlgeval.compare_systems(ratings, method="wilcoxon", pairing="item").method
'wilcoxon'
>>> nlgeval.agreement(ratings, scale=(1, 5)).n_ratings
12

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

#: The front door (see the module docstring): name -> (module, function), imported on first use.
_FRONT_DOOR = {
    "load_corpus": ("nlgeval.corpora", "load_corpus"),
    "score_corpus": ("nlgeval.metrics", "score_corpus"),
    "validate": ("nlgeval.report", "run_validation"),
    "compare_systems": ("nlgeval.human", "compare_systems"),
    "agreement": ("nlgeval.human", "agreement_report"),
}

__all__ = ["__version__", "InputError", "NlgevalError", *_FRONT_DOOR]


def __getattr__(name: str) -> object:
    """Import a front-door function on first use (PEP 562); it is the library's function."""
    if name not in _FRONT_DOOR:
        raise AttributeError(f"module 'nlgeval' has no attribute {name!r}")
    import importlib

    module, attr = _FRONT_DOOR[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FRONT_DOOR})
