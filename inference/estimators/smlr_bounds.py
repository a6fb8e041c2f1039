"""Generalization bounds for binary SMLR (Krishnapuram et al. 2005, Sec. 4).

Binary labels are ``y ∈ {−1, +1}`` and the point classifier is ``sign(ŵᵀx)``.  Both bounds
use a Laplacian ``q(w) ∝ exp(−Σ_i η_i |w_i − ŵ_i|)`` centred on the MAP estimate, and the
prior ``p(w) ∝ exp(−λ‖w‖₁)``:

* :func:`laplace_kl` is ``D(q‖p)`` (eq. 23); :func:`min_laplace_kl` minimizes it over
  ``η`` (eq. 24), one 1-D problem per weight (``η_i = λ`` where ``ŵ_i = 0``).
* :func:`rademacher_bound` is Theorem 1 (Meir & Zhang): it bounds the error of the Bayes
  voting classifier, which equals the point classifier for a symmetric ``q`` (Lemma 1),
  so no factor 2 enters.  The sample loss of the soft voting classifier
  ``E_q[sign(wᵀx)]`` is a Monte Carlo estimate.
* :func:`pac_bayes_bound` is Theorem 2: ``D_Ber(R_sample‖R_true) ≤ (D + ln((n+1)/δ))/n``
  inverted numerically for ``R_true``, the Gibbs classifier's error.  ``R_sample`` uses
  the Gaussian approximation of ``wᵀx`` once ``d ≥ 10`` (Sec. 4.6), Monte Carlo below.
  Lemma 2 turns it into a bound on the point classifier with a factor 2
  (``pac_bayes_point``); the paper notes that the factor is probably not needed, so
  :func:`error_bounds` reports both.

  The order of the Bernoulli KL's arguments is that of the PAC-Bayesian theorem the paper
  cites (Seeger 2002; Langford 2005: the empirical error first). Eq. 25 as printed has them
  the other way round, ``D_Ber(R_true‖R_sample)``, which is not that theorem and contradicts
  the paper's own remark that the bound is "*always* ... less than 1" (Secs. 4.6 and 6):
  ``D_Ber(r‖R_sample)`` stays finite as ``r → 1``, so the printed order gives 1 whenever the
  right side exceeds ``−ln R_sample``, and at ``R_sample = 0`` no bound at all. In the
  theorem's order ``D_Ber(R_sample‖r) → ∞`` as ``r → 1``, so the bound is below 1 whenever
  ``R_sample < 1``; for a given right side it is the larger of the two.
"""
from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from sparsebayes.inference._validation import check_count, check_number


def laplace_kl(w_hat, eta, lam):
    """``D(q_ŵ(w|η) ‖ p(w|λ)) = Σ_i [ln(η_i/(eλ)) + λ e^{−η_i|ŵ_i|}/η_i + λ|ŵ_i|]`` (eq. 23)."""
    a = np.abs(np.asarray(w_hat, dtype=np.float64))
    eta = np.asarray(eta, dtype=np.float64)
    return float(np.sum(np.log(eta / lam) - 1.0 + lam * np.exp(-eta * a) / eta + lam * a))


def optimal_eta(w_hat, lam, *, n_bisect=200):
    """Minimizer of eq. 23 per weight (eq. 24).

    ``∂D/∂η_i = 0`` is ``h(η) = η − λ e^{−aη}(1 + aη) = 0`` with ``a = |ŵ_i|``; ``h`` is
    increasing, ``h(0) = −λ < 0 ≤ h(λ)``, so bisection on ``(0, λ]`` finds the unique root
    (``η = λ`` when ``a = 0``).
    """
    a = np.abs(np.asarray(w_hat, dtype=np.float64))
    lo, hi = np.zeros_like(a), np.full_like(a, float(lam))
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        positive = mid - lam * np.exp(-a * mid) * (1.0 + a * mid) > 0
        hi = np.where(positive, mid, hi)
        lo = np.where(positive, lo, mid)
    return np.where(a == 0, float(lam), hi)


def min_laplace_kl(w_hat, lam):
    """``D_min(q‖p) = min_η D`` (eq. 24) and the minimizing ``η``; ``D_min ≤ λ‖ŵ‖₁``."""
    eta = optimal_eta(w_hat, lam)
    return laplace_kl(w_hat, eta, lam), eta


def _laplace_draws(w_hat, eta, n_draws, seed):
    rng = np.random.default_rng(seed)
    return w_hat + rng.laplace(0.0, 1.0 / eta, size=(n_draws, len(w_hat)))


def soft_vote(X, w_hat, eta, *, n_draws=2000, seed=0):
    """Monte Carlo ``f_SBVC(x) = E_q[sign(wᵀx)]`` for every row of ``X`` (Theorem 1)."""
    W = _laplace_draws(w_hat, eta, n_draws, seed)
    return np.mean(np.sign(X @ W.T), axis=1)


def rademacher_bound(X, y, w_hat, lam, *, delta=0.05, s=1.0, g=1.0, r=2.0, n_draws=2000, seed=0):
    """Theorem 1: ``R_sample[f_SBVC] + (2/s)√(2g̃/n) + √((ln log_r(r g̃/g) + ½ ln(1/δ))/n)``.

    ``g̃ = r max(D_min, g)``, ``l_s(a) = min(1, max(0, 1 − a/s))``; ``s, g > 0`` and
    ``r > 1`` are fixed before seeing the data (defaults 1, 1, 2).  Capped at 1.
    """
    for name, value, least in (("s", s, 0.0), ("g", g, 0.0), ("r", r, 1.0)):
        check_number(name, value, least, strict=True)  # log_r needs r > 1 (Theorem 1's "r > 0" is loose)
    n = len(y)
    kl, eta = min_laplace_kl(w_hat, lam)
    f = soft_vote(X, w_hat, eta, n_draws=n_draws, seed=seed)
    sample_loss = np.mean(np.clip(1.0 - y * f / s, 0.0, 1.0))
    g_tilde = r * max(kl, g)
    complexity = (2.0 / s) * np.sqrt(2.0 * g_tilde / n)
    confidence = np.sqrt((np.log(np.log(r * g_tilde / g) / np.log(r)) + 0.5 * np.log(1.0 / delta)) / n)
    return float(min(1.0, sample_loss + complexity + confidence))


def gibbs_sample_error(X, y, w_hat, eta, *, n_draws=2000, seed=0):
    """``R_sample`` of the Gibbs classifier: ``mean_j P_q(y_j wᵀx_j < 0)``.

    Gaussian approximation ``wᵀx ~ N(ŵᵀx, Σ_i 2x_i²/η_i²)`` when ``d ≥ 10`` (Sec. 4.6),
    Monte Carlo otherwise. An all-zero row has ``wᵀx = 0`` for every ``w``: not an error, as
    in the Monte Carlo count (``y wᵀx < 0``).
    """
    if X.shape[1] >= 10:
        margin = y * (X @ w_hat)
        sd = np.sqrt((X**2) @ (2.0 / eta**2))
        return float(np.mean(np.where(sd > 0, ndtr(-margin / np.where(sd > 0, sd, 1.0)), margin < 0)))
    W = _laplace_draws(w_hat, eta, n_draws, seed)
    return float(np.mean((y[:, None] * (X @ W.T)) < 0))


def bernoulli_kl(a, b):
    """``D_Ber(a‖b) = a ln(a/b) + (1−a) ln((1−a)/(1−b))`` with ``0 ln 0 = 0``."""
    a, b = np.float64(a), np.clip(np.float64(b), 1e-300, 1 - 1e-16)
    out = 0.0
    if a > 0:
        out += a * np.log(a / b)
    if a < 1:
        out += (1 - a) * np.log((1 - a) / (1 - b))
    return out


def invert_bernoulli_kl(sample_error, budget, *, n_bisect=200):
    """Largest ``r ∈ [R_sample, 1]`` with ``D_Ber(R_sample‖r) ≤ budget`` (Theorem 2 solved for
    ``R_true``; the divergence increases in ``r`` there and diverges as ``r → 1``)."""
    lo, hi = float(sample_error), 1.0
    if bernoulli_kl(sample_error, hi) <= budget:
        return 1.0
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        if bernoulli_kl(sample_error, mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def pac_bayes_bound(X, y, w_hat, lam, *, delta=0.05, n_draws=2000, seed=0):
    """Theorem 2 inverted: a bound on the Gibbs classifier's true error rate."""
    n = len(y)
    kl, eta = min_laplace_kl(w_hat, lam)
    sample = gibbs_sample_error(X, y, w_hat, eta, n_draws=n_draws, seed=seed)
    return invert_bernoulli_kl(sample, (kl + np.log((n + 1) / delta)) / n)


def error_bounds(w_hat, X, y, *, lam, delta=0.05, n_draws=2000, seed=0):
    """Both bounds for the binary point classifier ``sign(ŵᵀx)`` trained on ``(X, y)``, ``y = ±1``.

    Returns a dict: ``kl`` (``D_min``, eq. 24), ``rademacher`` (Theorem 1),
    ``pac_bayes`` (Theorem 2, Gibbs classifier; the paper's Fig. 1 does not say which bound
    it plots) and ``pac_bayes_point`` (``min(1, 2 × pac_bayes)``, Lemma 2's factor 2).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w_hat = np.asarray(w_hat, dtype=np.float64)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("the bounds of Sec. 4 take labels in {-1, +1}")
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, d) and y (n,): got X {X.shape} and y {y.shape}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta (the bounds hold with probability 1 - delta) must lie in (0, 1), got {delta!r}")
    check_count("n_draws", n_draws, 1)
    check_number("lam", lam, 0.0, strict=True)
    kl, _ = min_laplace_kl(w_hat, lam)
    pb = pac_bayes_bound(X, y, w_hat, lam, delta=delta, n_draws=n_draws, seed=seed)
    return {
        "kl": kl,
        "rademacher": rademacher_bound(X, y, w_hat, lam, delta=delta, n_draws=n_draws, seed=seed),
        "pac_bayes": pb,
        "pac_bayes_point": min(1.0, 2.0 * pb),
    }
