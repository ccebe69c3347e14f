"""Random metric / human score matrices of awkward kinds, shared by the equality tests.

The tests that keep a previous code path as the reference and check that the current one gives
the same numbers bit for bit (``test_scale_weighted``, ``test_boot_scale_counts``,
``test_boot_scale_kendall``) draw their data here: one generator, so every such test sees the
same kinds of awkward input (ties, missing cells, constant and near-constant items, a constant
metric, values near 1e200 and 1e-200, continuous scores) and a new kind reaches all of them.

A case is fixed by its kind, its seed and the ranges its numbers of systems and items are drawn
from (the draws happen in the same order for every kind, so a seed gives the same shape and the
same base scores whatever the kind).
"""

from __future__ import annotations

import numpy as np

#: every kind :func:`random_case` draws; a test may use a subset.
KINDS = ("ties", "nan", "constant_items", "constant", "extreme", "continuous")


def random_case(kind: str, seed: int, *, systems: tuple[int, int], items: tuple[int, int]
                ) -> tuple[np.ndarray, np.ndarray]:
    """A metric matrix ``X`` and a human matrix ``Y`` (systems x items) of one kind.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`:

        - ``"ties"``: human scores 0..4 (many ties), metric = human + noise rounded to 0.1;
        - ``"nan"``: as ``"ties"`` with about 20 % of the metric's and 10 % of the human
          cells missing (NaN);
        - ``"constant_items"``: the first half of the items have one human score (3.0); the
          metric is constant on item 0 and near-constant (steps of 1e-15) on item 1;
        - ``"constant"``: the metric is 2.0 everywhere;
        - ``"extreme"``: metric scores near 1e200 (its first system's near 1e-200), human
          scores near 1e-200;
        - ``"continuous"``: independent standard normal metric and human scores (no ties).
    seed : int
        Seed of :func:`numpy.random.default_rng`.
    systems, items : tuple of int
        Half-open ranges ``[low, high)`` the numbers of systems and items are drawn from.

    Returns
    -------
    tuple of numpy.ndarray
        ``(X, Y)``, two float arrays of the same shape.

    Examples
    --------
    >>> X, Y = random_case("nan", 0, systems=(3, 9), items=(4, 40))
    >>> X.shape == Y.shape and bool(np.isnan(X).any())
    True
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: expected one of {KINDS}")
    rng = np.random.default_rng(seed)
    S, n_items = int(rng.integers(*systems)), int(rng.integers(*items))
    Y = rng.integers(0, 5, size=(S, n_items)).astype(float)  # many ties
    X = np.round(Y + rng.normal(size=(S, n_items)), 1)
    if kind == "nan":
        X[rng.random((S, n_items)) < 0.2] = np.nan
        Y[rng.random((S, n_items)) < 0.1] = np.nan
    elif kind == "constant_items":
        Y[:, : n_items // 2] = 3.0  # constant items
        X[:, 0] = 1.0
        X[:, 1] = 1.0 + np.arange(S) * 1e-15  # near-constant
    elif kind == "constant":
        X[:] = 2.0
    elif kind == "extreme":
        X = X * 1e200
        Y = (Y + 1.0) * 1e-200
        X[0, :] = 1e-200
    elif kind == "continuous":
        X, Y = rng.normal(size=(S, n_items)), rng.normal(size=(S, n_items))
    return X, Y
