"""Paired permutation tests between two metrics (PERM-BOTH): one concept, one package.

Under H0 two metrics are exchangeable, so each cell's two scores are swapped with probability
1/2 (PERM-BOTH; PERM-SYS / PERM-INPUT swap whole systems / items) and the statistic of both
recomputed (Deutsch, Dror & Roth 2021); p = (1 + #)/(1 + K) (Phipson & Smyth 2010). The
Kendall variants, acc_eq and the pairwise accuracies run their own tests on these masks and
return the same :class:`PermutationComparison`.

=====================  ======================================================================
module                 what it holds
=====================  ======================================================================
``draws``              the result, the swap masks, the permutation loop, standardisation
``compare``            correlations: ``permutation_test`` and ``comparison_matrix``
``_pearson_swaps``     Pearson's r of every swap from sufficient statistics
``_pair_swaps``        the same for every metric pair of a study in one product per block
``_pair_kernels``      numba kernels of the pair draws (all three levels; einsum-order sums)
``_pair_stream``       ``comparison_matrix``'s pairs prepared once, the masks streamed by chunk
``_stream_kernels``    numba kernels of the streamed draws' swap masks
=====================  ======================================================================

Examples
--------
>>> import numpy as np
>>> from nlgeval.correlation.permutation import permutation_test
>>> rng = np.random.default_rng(0)
>>> H = rng.normal(size=(6, 20))
>>> A = H + rng.normal(scale=0.5, size=H.shape)
>>> B = H + rng.normal(scale=2.0, size=H.shape)
>>> res = permutation_test(A, B, H, "segment", "pearson", n_resamples=199, seed=0)
>>> bool(res.statistic > 0)
True
"""

from nlgeval.correlation.permutation.compare import comparison_matrix, permutation_test
from nlgeval.correlation.permutation.draws import (
    PermutationComparison,
    comparison_from_draws,
    iter_swap_masks,
    standardise,
    swap_draws,
    swap_masks,
)

__all__ = [
    "PermutationComparison", "comparison_from_draws", "comparison_matrix", "iter_swap_masks",
    "permutation_test", "standardise", "swap_draws", "swap_masks",
]
