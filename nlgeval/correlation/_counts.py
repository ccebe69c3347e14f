"""How often each unit was drawn in each bootstrap resample: the weights that the bootstrap's
kernels (:mod:`nlgeval.correlation._resampled_means`, :mod:`nlgeval.correlation._item_bootstrap`)
use instead of gathering resampled matrices (Deutsch, Dror & Roth 2021). A module of its own so
that both can import it without importing each other.
"""

from __future__ import annotations

import numpy as np


def resample_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """(B x n) matrix: how often each unit was drawn in each resample (vectorised bincount).

    Examples
    --------
    >>> import numpy as np
    >>> resample_counts(np.array([[0, 0, 2], [1, 2, 2]]), 3)
    array([[2., 0., 1.],
           [0., 1., 2.]])
    """
    B = idx.shape[0]
    flat = (np.asarray(idx) + (np.arange(B) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(float)
