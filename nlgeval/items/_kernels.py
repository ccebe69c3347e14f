"""Compiled (numba) samplers for the resampling study: exact binomial / multinomial draws and the
sequential discrete-ANOVA bootstrap for two groups.

Why hand-written: numpy's ``Generator.multinomial`` costs ~0.6 us per K=5 draw on this class of
machine because every binomial in the conditional chain re-does its set-up, and the study needs
~10^9 such draws. Here each binomial is drawn by

* inversion (sequential search, Kemp's BINV) when ``n * min(p, 1-p) < 10``, and
* BTRS, the transformed-rejection sampler with squeeze of Hormann (1993), "The generation of
  binomial random variates", J. Statist. Comput. Simul. 46:101-110, otherwise, with exact
  log-factorials from a table instead of Stirling series.

Both are exact samplers (the accept/reject test uses the exact pmf ratio); tests compare their
output with scipy.stats.binom by chi-square goodness of fit.

Uniforms come from the caller's ``numpy.random.Generator`` (numba supports passing Generators),
so every stream is seeded from a ``SeedSequence`` and results do not depend on the worker count.

(Longer than 400 lines only through the runnable examples in the kernels' docstrings.)
"""

# shape: over 400 lines only through the runnable examples in the kernels' docstrings

from __future__ import annotations

import math

import numpy as np
from numba import njit

_BTRS_MIN_NPQ = 10.0


def log_factorial_table(nmax: int) -> np.ndarray:
    """``log(k!)`` for ``k = 0..nmax`` (float64).

    Examples
    --------
    >>> import math
    >>> table = log_factorial_table(5)
    >>> round(float(table[5]), 6) == round(math.log(120), 6)
    True
    """
    from scipy.special import gammaln

    return gammaln(np.arange(nmax + 1, dtype=np.float64) + 1.0)


@njit(cache=True)
def _binom_inversion(rng, n, p):
    # BINV (Kachitvichyanukul & Schmeiser 1988, sequential search from 0); p <= 0.5, n*p < 10.
    q = 1.0 - p
    s = p / q
    a = (n + 1) * s
    while True:
        r = math.exp(n * math.log(q))
        u = rng.random()
        x = 0
        while u > r:
            u -= r
            x += 1
            if x > n:
                break
            r *= a / x - s
        if x <= n:
            return x


@njit(cache=True)
def _binom_btrs(rng, n, p, logfact):
    # BTRS (Hormann 1993), p <= 0.5 and n*p >= 10; exact log-factorials from ``logfact``.
    q = 1.0 - p
    spq = math.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = math.log(p / q)
    m = int(math.floor((n + 1) * p))
    h = logfact[m] + logfact[n - m]
    while True:
        u = rng.random() - 0.5
        v = rng.random()
        us = 0.5 - abs(u)
        k = int(math.floor((2.0 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= vr:
            return k
        v = v * alpha / (a / (us * us) + b)
        if math.log(v) <= h - logfact[k] - logfact[n - k] + (k - m) * lpq:
            return k


@njit(cache=True)
def binomial(rng, n, p, logfact):
    """One exact Binomial(n, p) draw.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> 0 <= binomial(rng, 40, 0.3, logfact) <= 40    # BTRS (n p >= 10) or inversion
    True
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    flip = p > 0.5
    pp = 1.0 - p if flip else p
    if n * pp < _BTRS_MIN_NPQ:
        x = _binom_inversion(rng, n, pp)
    else:
        x = _binom_btrs(rng, n, pp, logfact)
    return n - x if flip else x


@njit(cache=True)
def binomial_mode_search(rng, n, p, lp, lq, logfact, recip):
    """Exact Binomial(n, p) by inversion with the search started at the mode (Kemp 1986,
    "A modal method for generating binomial variables", Commun. Statist. Theory Meth. 15:805-813):
    outcomes are visited in the order m, m+1, m-1, m+2, m-2, ... and a single uniform is inverted
    against their cumulative probabilities. The mode's probability comes from the exact
    log-factorial table; neighbours follow from the pmf ratio with a reciprocal table, so the
    expected cost is one ``exp`` plus ~1.6 standard deviations of multiply-adds.
    ``lp = log p``, ``lq = log(1 - p)`` are passed in because the study reuses each p many times.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> import math
    >>> k = binomial_mode_search(rng, 40, 0.3, math.log(0.3), math.log(0.7), logfact, recip)
    >>> 0 <= k <= 40
    True
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    pq = math.exp(lp - lq)
    qp = 1.0 / pq
    m = int((n + 1) * p)
    if m > n:
        m = n
    pm = math.exp(logfact[n] - logfact[m] - logfact[n - m] + m * lp + (n - m) * lq)
    while True:
        u = rng.random() - pm
        if u <= 0.0:
            return m
        lo = m
        hi = m
        plo = pm
        phi = pm
        while lo > 0 or hi < n:
            if hi < n:
                phi *= (n - hi) * recip[hi + 1] * pq
                hi += 1
                u -= phi
                if u <= 0.0:
                    return hi
            if lo > 0:
                plo *= lo * recip[n - lo + 1] * qp
                lo -= 1
                u -= plo
                if u <= 0.0:
                    return lo
        # only reached through rounding (total mass computed as < u); draw again


@njit(cache=True)
def multinomial_into(rng, n, cond, out, logfact):
    """Multinomial(n, h) counts into ``out`` by the conditional-binomial chain.

    ``cond[k] = h[k] / (h[k] + ... + h[K-1])`` (the last entry is 1).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> out = np.empty(3, dtype=np.int64)
    >>> multinomial_into(rng, 20, conditional_probs(np.array([0.2, 0.5, 0.3])), out, logfact)
    >>> int(out.sum())
    20
    """
    K = out.shape[0]
    rem = n
    for k in range(K - 1):
        if rem == 0:
            out[k] = 0
            continue
        x = binomial(rng, rem, cond[k], logfact)
        out[k] = x
        rem -= x
    out[K - 1] = rem


@njit(cache=True)
def multinomial_fast(rng, n, cond, lp, lq, out, logfact, recip):
    """Like :func:`multinomial_into` with the mode-search binomial and cached logs.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> cond = conditional_probs(np.array([0.2, 0.5, 0.3]))
    >>> lp, lq = chain_logs(cond)
    >>> out = np.empty(3, dtype=np.int64)
    >>> multinomial_fast(rng, 20, cond, lp, lq, out, logfact, recip)
    >>> int(out.sum())
    20
    """
    K = out.shape[0]
    rem = n
    for k in range(K - 1):
        if rem == 0:
            out[k] = 0
            continue
        x = binomial_mode_search(rng, rem, cond[k], lp[k], lq[k], logfact, recip)
        out[k] = x
        rem -= x
    out[K - 1] = rem


@njit(cache=True)
def conditional_probs(h):
    """``h[k] / sum(h[k:])`` for the conditional-binomial chain (last entry 1).

    Examples
    --------
    >>> import numpy as np
    >>> conditional_probs(np.array([0.2, 0.5, 0.3])).round(4)    # 0.2/1, 0.5/0.8, 1
    array([0.2  , 0.625, 1.   ])
    """
    K = h.shape[0]
    cond = np.empty(K)
    tail = 0.0
    for k in range(K - 1, -1, -1):
        tail += h[k]
        cond[k] = h[k] / tail if tail > 0.0 else 0.0
    cond[K - 1] = 1.0
    return cond


@njit(cache=True)
def chain_logs(cond):
    """``log p`` and ``log(1 - p)`` of the chain's conditional probabilities (-inf allowed).

    Examples
    --------
    >>> import numpy as np
    >>> lp, lq = chain_logs(np.array([0.5, 1.0]))
    >>> lp.round(4), lq
    (array([-0.6931,  0.    ]), array([-0.69314718,        -inf]))
    """
    K = cond.shape[0]
    lp = np.empty(K)
    lq = np.empty(K)
    for k in range(K):
        lp[k] = math.log(cond[k]) if cond[k] > 0.0 else -np.inf
        lq[k] = math.log1p(-cond[k]) if cond[k] < 1.0 else -np.inf
    return lp, lq


def reciprocal_table(nmax: int) -> np.ndarray:
    """``1 / k`` for ``k = 0..nmax`` (entry 0 unused).

    Examples
    --------
    >>> reciprocal_table(4)
    array([0.  , 1.  , 0.5 , 0.33333333, 0.25 ])
    """
    out = np.zeros(nmax + 1)
    out[1:] = 1.0 / np.arange(1, nmax + 1)
    return out


@njit(cache=True)
def multinomial_draws_fast(rng, n, h, size, logfact, recip):
    """``size`` Multinomial(n, h) draws with the mode-search sampler (for testing).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> h = np.array([0.2, 0.5, 0.3])
    >>> draws = multinomial_draws_fast(rng, 20, h, 1000, logfact, recip)
    >>> draws.shape, bool((draws.sum(axis=1) == 20).all()), draws.mean(axis=0).round(0)
    ((1000, 3), True, array([ 4., 10.,  6.]))
    """
    K = h.shape[0]
    cond = conditional_probs(h)
    lp, lq = chain_logs(cond)
    out = np.empty((size, K), dtype=np.int64)
    row = np.empty(K, dtype=np.int64)
    for i in range(size):
        multinomial_fast(rng, n, cond, lp, lq, row, logfact, recip)
        for k in range(K):
            out[i, k] = row[k]
    return out


@njit(cache=True)
def binomial_draws_fast(rng, n, p, size, logfact, recip):
    """``size`` Binomial(n, p) draws with the mode-search sampler (for testing).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> draws = binomial_draws_fast(rng, 40, 0.3, 2000, logfact, recip)
    >>> bool(abs(draws.mean() - 12) < 0.5)               # E = n p = 12
    True
    """
    lp = math.log(p) if p > 0.0 else -np.inf
    lq = math.log1p(-p) if p < 1.0 else -np.inf
    out = np.empty(size, dtype=np.int64)
    for i in range(size):
        out[i] = binomial_mode_search(rng, n, p, lp, lq, logfact, recip)
    return out


@njit(cache=True)
def multinomial_draws(rng, n, h, size, logfact):
    """``size`` independent Multinomial(n, h) count vectors (for testing the sampler).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> draws = multinomial_draws(rng, 20, np.array([0.2, 0.5, 0.3]), 1000, logfact)
    >>> bool((draws.sum(axis=1) == 20).all()), draws.mean(axis=0).round(0)
    (True, array([ 4., 10.,  6.]))
    """
    K = h.shape[0]
    cond = conditional_probs(h)
    out = np.empty((size, K), dtype=np.int64)
    row = np.empty(K, dtype=np.int64)
    for i in range(size):
        multinomial_into(rng, n, cond, row, logfact)
        for k in range(K):
            out[i, k] = row[k]
    return out


@njit(cache=True)
def binomial_draws(rng, n, p, size, logfact):
    """``size`` independent Binomial(n, p) draws (for testing the sampler).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> logfact, recip = log_factorial_table(50), reciprocal_table(50)
    >>> draws = binomial_draws(rng, 40, 0.3, 2000, logfact)
    >>> bool(abs(draws.mean() - 12) < 0.5)               # E = n p = 12
    True
    """
    out = np.empty(size, dtype=np.int64)
    for i in range(size):
        out[i] = binomial(rng, n, p, logfact)
    return out


@njit(cache=True)
def null_moments(h, N, s):
    """Exact ``E[Q]`` and ``E[Q^2]`` of ``Q = sum_k (s X_k - N Y_k)^2`` with independent
    ``X ~ Mult(N, h)``, ``Y ~ Mult(s, h)``.

    ``D = sX - NY`` is a sum of ``N + s`` independent zero-mean vectors ``s (e_i - h)`` and
    ``-N (e_j - h)``; for such sums ``E||D||^4 = sum_a (E||V_a||^4 - (E||V_a||^2)^2
    - 2 tr S_a^2) + (sum_a tr S_a)^2 + 2 tr (sum_a S_a)^2`` with ``S_a = Cov V_a``. For one
    categorical draw ``e - h``: ``E||.||^2 = mu = 1 - sum h^2``, ``E||.||^4 = sum_c h_c
    (1 - 2 h_c + sum h^2)^2`` and ``tr S^2 = sum h^2 - 2 sum h^3 + (sum h^2)^2``.

    Examples
    --------
    >>> import numpy as np
    >>> eq, eq2 = null_moments(np.array([0.5, 0.5]), 4, 2)
    >>> eq, eq2      # enumerating the 5 x 3 outcomes of Bin(4, 1/2), Bin(2, 1/2) gives the same
    (24.0, 1440.0)
    """
    K = h.shape[0]
    s2 = 0.0
    s3 = 0.0
    for k in range(K):
        s2 += h[k] * h[k]
        s3 += h[k] * h[k] * h[k]
    mu = 1.0 - s2
    m4 = 0.0
    for k in range(K):
        r = 1.0 - 2.0 * h[k] + s2
        m4 += h[k] * r * r
    t2 = s2 - 2.0 * s3 + s2 * s2
    c = float(N) * s * (N + s)
    eq = c * mu
    n4 = float(N) * s**4 + float(s) * N**4
    eq2 = n4 * (m4 - mu * mu - 2.0 * t2) + eq * eq + 2.0 * c * c * t2
    return eq, eq2


@njit(cache=True)
def _observed(full, sub_r, N, h):
    """Subsample size ``s`` and integer-scaled observed statistic ``Q``; fills the pooled
    null proportions ``h = (full/N + sub/s) / 2``."""
    K = full.shape[0]
    s = 0
    for k in range(K):
        s += sub_r[k]
    q_obs = 0
    for k in range(K):
        d = s * full[k] - N * sub_r[k]
        q_obs += d * d
        h[k] = 0.5 * (full[k] / N + sub_r[k] / s)
    return s, q_obs


@njit(cache=True)
def _cantelli_accepts(h, N, s, q_obs, pz_min):
    """Cantelli's one-sided inequality with the exact null moments: True when
    ``P(Q_b > Q) >= lam^2 / (var + lam^2) >= pz_min`` for ``lam = E Q_b - Q > 0``."""
    if pz_min > 1.0:
        return False
    eq, eq2 = null_moments(h, N, s)
    lam = eq - q_obs
    var = eq2 - eq * eq
    return lam > 0.0 and lam * lam / (var + lam * lam) >= pz_min


@njit(cache=True)
def _draws(rng, N, s, q_obs, cond, lp, lq, x, y, logfact, recip, nboot, alpha, step,
           acc_thr, rej_thr):
    """Bootstrap draws for one row until ``nboot`` or an early decision; returns
    ``(greater, equal, draws, decided, reject)`` (see :func:`two_group_bootstrap`)."""
    K = x.shape[0]
    nchk = acc_thr.shape[0]
    greater = 0
    equal = 0
    b = 0
    while b < nboot:
        multinomial_fast(rng, N, cond, lp, lq, x, logfact, recip)
        multinomial_fast(rng, s, cond, lp, lq, y, logfact, recip)
        qb = 0
        for k in range(K):
            d = s * x[k] - N * y[k]
            qb += d * d
        if qb > q_obs:
            greater += 1
        elif qb == q_obs:
            equal += 1
        b += 1
        if (greater + 0.5 * equal) / nboot >= alpha:
            return greater, equal, b, True, False
        if b % step == 0:
            i = b // step - 1
            if i < nchk:
                if greater >= acc_thr[i]:
                    return greater, equal, b, True, False
                if greater + equal <= rej_thr[i]:
                    return greater, equal, b, True, True
    return greater, equal, b, False, False


@njit(cache=True)
def two_group_bootstrap(
    rng, full, sub, nboot, alpha, step, acc_thr, rej_thr, pz_min, logfact, recip, out_p,
    out_reject, out_draws
):
    """Discrete-ANOVA parametric bootstrap for (full set, subsample) pairs, one per row of ``sub``.

    ``full``: (K,) category counts of the full set (size N); ``sub``: (R, K) counts of R
    subsamples (size s each). For each row it draws ``X ~ Mult(N, h)``, ``Y ~ Mult(s, h)`` with
    ``h = (full/N + sub/s) / 2`` and compares the integer-scaled statistic
    ``Q = sum_k (s X_k - N Y_k)^2`` (``T = Q / (2 N^2 s^2)``) with the observed one exactly, so
    ties are detected in exact arithmetic. Mid-p: ``(#{T_b > T} + 0.5 #{T_b = T}) / nboot``.

    Stopping: a row stops as soon as ``p >= alpha`` is certain (the count only grows: exact).
    At every ``step`` draws it also stops when the certified schedule says so (``acc_thr[i]``:
    accept when the number of strict exceedances reaches it; ``rej_thr[i]``: reject when the
    number of exceedances-or-ties is at most it); pass empty arrays to disable. Before any draw,
    a row is accepted when Cantelli's one-sided inequality with the exact null moments
    (:func:`null_moments`) proves ``P(T_b > T) >= pz_min`` (pass ``pz_min > 1`` to disable).
    ``out_p`` is the
    mid-p value when all ``nboot`` draws ran and NaN otherwise; ``out_reject`` the decision
    ``p < alpha``; ``out_draws`` the number of draws used.

    Examples
    --------
    >>> import numpy as np
    >>> full = np.array([10, 20, 10]); sub = np.array([[2, 4, 2], [8, 0, 0]])
    >>> p = np.empty(2); reject = np.empty(2, dtype=np.bool_); draws = np.empty(2, dtype=np.int64)
    >>> none = np.empty(0, dtype=np.int64)
    >>> two_group_bootstrap(np.random.default_rng(1), full, sub, 200, 0.05, 10, none, none, 2.0,
    ...                     log_factorial_table(50), reciprocal_table(50), p, reject, draws)
    >>> reject.tolist()              # the subset (2, 4, 2) matches; (8, 0, 0) does not
    [False, True]
    """
    K = full.shape[0]
    N = 0
    for k in range(K):
        N += full[k]
    h = np.empty(K)
    x = np.empty(K, dtype=np.int64)
    y = np.empty(K, dtype=np.int64)
    for r in range(sub.shape[0]):
        s, q_obs = _observed(full, sub[r], N, h)
        if _cantelli_accepts(h, N, s, q_obs, pz_min):
            out_p[r] = np.nan
            out_reject[r] = False
            out_draws[r] = 0
            continue
        cond = conditional_probs(h)
        lp, lq = chain_logs(cond)
        greater, equal, b, decided, reject = _draws(
            rng, N, s, q_obs, cond, lp, lq, x, y, logfact, recip, nboot, alpha, step,
            acc_thr, rej_thr)
        if decided:
            out_p[r] = np.nan
            out_reject[r] = reject
        else:
            p = (greater + 0.5 * equal) / nboot
            out_p[r] = p
            out_reject[r] = p < alpha
        out_draws[r] = b
