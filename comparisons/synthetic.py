"""The papers' synthetic generators, all seeded by a ``numpy.random.Generator`` or an int."""
from __future__ import annotations

import numpy as np


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def tibshirani_design(n, p, *, rho=0.5, seed=None):
    """Rows ``N(0, Σ)`` with ``Σ_ij = ρ^|i−j|`` (Tibshirani 1996, used by 000 Sec. 5.1)."""
    rng = _rng(seed)
    idx = np.arange(p)
    cov = rho ** np.abs(idx[:, None] - idx[None, :])
    L = np.linalg.cholesky(cov)
    return rng.standard_normal((n, p)) @ L.T


def linear_regression_data(beta, n, *, sigma=1.0, rho=0.5, seed=None):
    """``y = Xβ + σ ε`` on a Tibshirani design; returns ``(X, y)``."""
    rng = _rng(seed)
    beta = np.asarray(beta, dtype=np.float64)
    X = tibshirani_design(n, beta.size, rho=rho, seed=rng)
    return X, X @ beta + sigma * rng.standard_normal(n)


def sinc(n, *, sigma=0.1, low=-10.0, high=10.0, seed=None, uniform=True):
    """``y = sin(x)/x + σ ε`` on ``x`` uniform in [low, high] (or a regular grid)."""
    rng = _rng(seed)
    x = rng.uniform(low, high, n) if uniform else np.linspace(low, high, n)
    return x[:, None], np.sinc(x / np.pi) + sigma * rng.standard_normal(n)


def sinc_function(x):
    """The noise-free ``sin(x)/x``."""
    return np.sinc(np.asarray(x, dtype=np.float64) / np.pi)


def two_gaussians(n_per_class, d, *, seed=None):
    """Two Gaussian classes, means ``±[1/√2, 1/√2, 0, …, 0]``, identity covariance (000 Sec. 5.2.1).

    Bayes error ``Φ(−1) ≈ 0.1587`` for every ``d ≥ 2``. Labels 0/1; class 1 has the + mean.
    """
    rng = _rng(seed)
    mu = np.zeros(d)
    mu[:2] = 1.0 / np.sqrt(2.0)
    X1 = rng.standard_normal((n_per_class, d)) + mu
    X0 = rng.standard_normal((n_per_class, d)) - mu
    X = np.vstack([X1, X0])
    y = np.r_[np.ones(n_per_class, int), np.zeros(n_per_class, int)]
    perm = rng.permutation(2 * n_per_class)
    return X[perm], y[perm]
