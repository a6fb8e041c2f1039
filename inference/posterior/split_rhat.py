"""Rank-normalized split R-hat (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021) in NumPy.

A sampler's fit checks its chains' mixing (``rhat_max``) without importing ArviZ, whose import
(and, with numba installed, the compilation of its ufuncs) costs about as much as a short fit.
The arithmetic is ArviZ's ``rhat(method="rank")``: split every chain in two halves (the middle
draw of an odd count dropped), rank-normalize the pooled draws (average ranks of ties, Blom's
``(r − 3/8)/(S + 1/4)``, the standard normal quantile), and take the larger of the classic R-hat
(Gelman et al. 2013, eq. 11.4) of the normalized draws (bulk) and of the normalized distances
from the median (tails) (Vehtari et al. 2021, Sec. 4.2).
"""
from __future__ import annotations

import numpy as np
from scipy.special import ndtri


def average_ranks(values):
    """Ranks ``1 … S`` of the flattened ``values``, ties given the mean of the ranks they span
    (``scipy.stats.rankdata(method="average")``)."""
    flat = np.ravel(values)
    order = np.argsort(flat, kind="mergesort")
    ranks = np.empty(flat.size, dtype=np.intp)
    ranks[order] = np.arange(flat.size, dtype=np.intp)
    sorted_values = flat[order]
    first = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    dense = np.cumsum(first)[ranks]
    ends = np.r_[np.nonzero(first)[0], flat.size]
    return (0.5 * (ends[dense] + ends[dense - 1] + 1)).reshape(np.shape(values))


def rank_normalize(draws):
    """The standard normal quantiles of the pooled draws' Blom-offset ranks (Vehtari et al. 2021, eq. 14):
    ``Φ⁻¹((r − 3/8)/(S + 1/4))`` for ``S`` draws."""
    ranks = average_ranks(draws)
    return ndtri((ranks - 0.375) / (ranks.size + 0.25))


def classic_rhat(chains):
    """``√((W(N − 1)/N + B/N) / W)`` of ``chains`` (chain, draw): ``W`` the mean within-chain variance,
    ``B/N`` the variance of the chain means (Gelman et al. 2013, eq. 11.4)."""
    n = chains.shape[1]
    between = n * np.var(chains.mean(axis=1), ddof=1)
    within = np.mean(np.var(chains, axis=1, ddof=1))
    return float(np.sqrt((between / within + n - 1) / n))


def split_rhat(draws):
    """Rank-normalized split R-hat of one quantity's ``draws`` (chain, draw): the larger of the bulk and
    the tail (folded) R-hat (Vehtari et al. 2021, Sec. 4.2). NaN with fewer than two chains or four
    draws, or with a non-finite draw (ArviZ's convention)."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 2:
        raise ValueError(f"draws must be a (chain, draw) array, got shape {draws.shape}")
    chains, n = draws.shape
    if chains < 2 or n < 4 or not np.all(np.isfinite(draws)):
        return float("nan")
    half = n // 2
    split = np.concatenate([draws[:, :half], draws[:, n - half:]])
    bulk = classic_rhat(rank_normalize(split))
    tail = classic_rhat(rank_normalize(np.abs(split - np.median(split))))
    return max(bulk, tail)


def max_split_rhat(draws):
    """The largest :func:`split_rhat` over the trailing axes of ``draws`` (chain, draw, …): a fit's
    mixing check over a vector of coefficients."""
    draws = np.asarray(draws, dtype=np.float64)
    flat = draws.reshape(draws.shape[0], draws.shape[1], -1)
    return float(np.max([split_rhat(flat[:, :, j]) for j in range(flat.shape[2])]))  # NaN if any is
