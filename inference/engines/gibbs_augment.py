"""Conjugate data augmentations: each turns one likelihood, given a latent per row, into the
Gaussian pseudo-model ``z_i ~ N(η_i, 1/ω_i)``, ``η = Xβ``, so that the Gibbs engine's β draw is
the same for every likelihood: ``β | · ~ N(A⁻¹XᵀΩz, A⁻¹)``, ``A = XᵀΩX + diag(1/v)``.

Each ``*_augment(key, y, eta, ...)`` draws the latents from their full conditional given
``(y, η)`` and the likelihood's own parameters and returns ``(z, omega)``: the pseudo-response
and the per-row precision. The likelihoods' own parameters have their own draws here
(:func:`student_t_scale2_draw`, :func:`negative_binomial_concentration_step`). All are pure JAX,
jit-able and vmap-able over chains (one key per call, one key per row inside).

* Probit (Albert & Chib 1993): ``u_i ~ N(η_i, 1)`` truncated to ``u_i > 0`` when ``y_i = 1`` and
  ``u_i ≤ 0`` when ``y_i = 0``; ``z = u``, ``ω = 1`` (:func:`probit_augment`); optionally rescaled
  by the parameter expansion of Liu & Wu (1999) before β's draw (:func:`probit_expansion_scale`).
* Logistic, binomial with ``m_i`` trials (Polson, Scott & Windle 2013, Sec. 3.1):
  ``ω_i ~ PG(m_i, η_i)``, ``z = (y − m/2)/ω`` (:func:`logistic_augment`).
* Negative binomial, NumPyro's ``NegativeBinomial2(mean μ, concentration r)``,
  ``p(y) = Γ(y + r)/(Γ(r) y!) (r/(r + μ))^r (μ/(r + μ))^y``, log link ``η = log μ = Xβ``: in
  Polson, Scott & Windle's form (Sec. 3.2) ``p(y) ∝ (e^ψ)^y/(1 + e^ψ)^{y+r}`` with the log-odds
  ``ψ = η − log r`` (an offset ``−log r``). Then ``ω_i ~ PG(y_i + r, ψ_i)`` and
  ``(y_i − r)/(2ω_i) ~ N(ψ_i, 1/ω_i)``, so for ``η``: ``z = (y − r)/(2ω) + log r``, precision ``ω``
  (:func:`negative_binomial_augment`).
* Student-t with ``ν`` degrees of freedom and scale ``s`` (a normal scale mixture, e.g. Gelman
  et al., BDA3 Sec. 17.2): ``y_i | λ_i ~ N(η_i, s²/λ_i)``, ``λ_i ~ Gamma(ν/2, ν/2)``; given
  ``(β, s)``, ``λ_i ~ Gamma((ν + 1)/2, rate (ν + (y_i − η_i)²/s²)/2)``; ``z = y``,
  ``ω = λ/s²`` (:func:`student_t_augment`).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import gammaln, log_ndtr, ndtri

from sparsebayes.inference.engines.polya_gamma import DEFAULT_TERMS, polya_gamma

#: below this standardized truncation point the truncated normal is drawn by inversion, above it by
#: Robert's (1995) exponential rejection (acceptance above 0.9 there)
_INVERSION_LIMIT = 3.0


def _concrete(x):
    return not isinstance(x, jax.core.Tracer)


def _check_binary(y, name="y"):
    if _concrete(y):
        arr = np.asarray(y)
        if not np.all((arr == 0) | (arr == 1)):
            raise ValueError(f"{name} must hold only 0 and 1 for a binary likelihood")


def _check_positive(value, name):
    if _concrete(value):
        arr = np.asarray(value, dtype=np.float64)
        if not np.all(np.isfinite(arr) & (arr > 0)):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")


def _robert_lane(key, a):
    """One ``N(0, 1)`` variate truncated to ``(a, ∞)``, ``a > 0``, by Robert's (1995) exponential
    rejection: ``x = a + E/α``, ``α = (a + √(a² + 4))/2``, accepted with probability
    ``exp(−(x − α)²/2)``. Exact for every ``a``; the acceptance rises to 1 as ``a`` grows."""
    alpha = 0.5 * (a + jnp.sqrt(a * a + 4.0))

    def cond(s):
        return ~s[2]

    def body(s):
        key, _, _ = s
        key, sub = jax.random.split(key)
        u = jax.random.uniform(sub, (2,), dtype=jnp.float64)
        x = a - jnp.log1p(-u[0]) / alpha
        return key, x, u[1] <= jnp.exp(-0.5 * (x - alpha) ** 2)

    return lax.while_loop(cond, body, (key, a, jnp.bool_(False)))[1]


def truncated_normal_above(key, a):
    """``x ~ N(0, 1)`` truncated to ``x > a``, elementwise over ``a`` (any real, also ±40).

    For ``a < 3``: inversion, ``x = −Φ⁻¹(U Φ(−a))`` (the upper tail written as a lower one, so
    ``Φ⁻¹`` works on small probabilities, where it is accurate); above: Robert's (1995)
    exponential rejection, exact and free of ``Φ(−a)``, which underflows near ``a = 38``.
    ``a = −∞``: the untruncated normal; ``a = +∞`` or NaN: NaN (never a loop that does not end).
    One key per element (``jax.random.split(key, size)``)."""
    a = jnp.asarray(a, dtype=jnp.float64)
    shape = a.shape
    af = a.reshape(-1)
    keys = jax.random.split(key, max(af.size, 1))[: af.size]

    def lane(k, ai):
        k_inv, k_rej = jax.random.split(k)
        tail = ai >= _INVERSION_LIMIT
        u = jax.random.uniform(k_inv, dtype=jnp.float64)
        p = jnp.exp(jnp.log1p(-u) + log_ndtr(-jnp.minimum(ai, _INVERSION_LIMIT)))  # (1 − U)Φ(−a) in (0, Φ(−a)]
        inverted = -ndtri(p)
        finite_tail = tail & jnp.isfinite(ai)
        rejected = _robert_lane(k_rej, jnp.where(finite_tail, ai, _INVERSION_LIMIT + 1.0))
        # the rejection loop of a lane below the limit (or at a = ∞, NaN) runs at a = 4 (an acceptance
        # above 0.9) and is discarded; a = −∞ is the untruncated normal, by inversion
        x = jnp.where(tail, rejected, jnp.maximum(inverted, ai))
        return jnp.where(jnp.isnan(ai) | (ai == jnp.inf), jnp.nan, x)

    return jax.vmap(lane)(keys, af).reshape(shape)


def probit_augment(key, y, eta):
    """Albert & Chib's (1993) latent utilities: ``u_i ~ N(η_i, 1)`` truncated to ``(0, ∞)`` where
    ``y_i = 1`` and to ``(−∞, 0]`` where ``y_i = 0`` (their eq. 3); returns ``(z = u, ω = 1)``.
    With ``s = 2y − 1``, ``s·u − s·η`` is a standard normal truncated above ``−s·η``."""
    _check_binary(y)
    eta = jnp.asarray(eta, dtype=jnp.float64)
    sign = 2.0 * jnp.asarray(y, dtype=jnp.float64) - 1.0
    u = eta + sign * truncated_normal_above(key, -sign * eta)
    return u, jnp.ones_like(eta)


def probit_expansion_scale(key, z, X, prior_var):
    """Parameter expansion of Albert & Chib's probit augmentation (Liu & Wu 1999, PX-DA; the
    generalized Gibbs move of Liu & Sabatti 2000 on the group of scalings ``z → g z``): returns the
    rescaled latents ``g z``, to be followed by the draw ``β | g z``.

    With β integrated out, ``z | v, y ~ N(0, Σ)``, ``Σ = I + X diag(v) Xᵀ`` (``v = prior_var``,
    the intercept's among them), truncated to the orthants the labels fix, which every ``g > 0``
    maps onto themselves. The group move draws ``g`` from ``p(g) ∝ g^{n−1} N(g z; 0, Σ)`` (the
    Jacobian ``gⁿ`` of the scaling against the Haar measure ``dg/g``): ``g² ~ Gamma(n/2,
    rate zᵀΣ⁻¹z/2)``. It leaves ``p(z | v, y)`` invariant, so with ``β | z, v`` drawn next (the old
    β discarded) the sweep stays exact; it moves ``(z, β)`` along the overall scale that the
    latents pin to the previous β, the direction in which Albert & Chib's sweep crawls.

    ``zᵀΣ⁻¹z`` by the smaller system: ``p ≤ n``, Woodbury on ``M = I + D XᵀX D`` (``D = diag(√v)``,
    well conditioned as any ``v_i → 0``): ``zᵀz − ‖L⁻¹ D Xᵀz‖²``; ``p > n``, ``‖L⁻¹z‖²`` with
    ``Σ = LLᵀ``. ``X`` (n, p) the design the β draw uses (with its column of ones)."""
    z = jnp.asarray(z, dtype=jnp.float64)
    X = jnp.asarray(X, dtype=jnp.float64)
    n, p = X.shape
    d = jnp.sqrt(jnp.asarray(prior_var, dtype=jnp.float64))
    if p <= n:
        M = jnp.eye(p, dtype=X.dtype) + d[:, None] * (X.T @ X) * d[None, :]
        L = jax.lax.linalg.cholesky(M, symmetrize_input=False)
        c = jax.lax.linalg.triangular_solve(L, (d * (X.T @ z))[:, None], left_side=True, lower=True)[:, 0]
        quad = z @ z - c @ c
    else:
        Xd = X * d[None, :]
        L = jax.lax.linalg.cholesky(jnp.eye(n, dtype=X.dtype) + Xd @ Xd.T, symmetrize_input=False)
        c = jax.lax.linalg.triangular_solve(L, z[:, None], left_side=True, lower=True)[:, 0]
        quad = c @ c
    quad = jnp.maximum(quad, jnp.finfo(jnp.float64).tiny)  # Σ⁻¹ ≻ 0: only rounding reaches 0
    g = jnp.sqrt(2.0 * jax.random.gamma(key, 0.5 * n, dtype=jnp.float64) / quad)
    return jnp.where(jnp.isfinite(g), g, 1.0) * z


def logistic_augment(key, y, eta, trials=1, *, method="devroye"):
    """Polson, Scott & Windle (2013, Sec. 3.1) for ``y_i ~ Binomial(m_i, logistic(η_i))``
    (``m = trials``, 1: Bernoulli): ``ω_i ~ PG(m_i, η_i)``, ``z = (y − m/2)/ω``; returns ``(z, ω)``.
    ``method``: :func:`~.polya_gamma.polya_gamma`'s (exact for integer ``m``)."""
    eta = jnp.asarray(eta, dtype=jnp.float64)
    y = jnp.asarray(y, dtype=jnp.float64)
    if _concrete(trials):
        _check_positive(trials, "trials")
        if _concrete(y) and np.any((np.asarray(y) < 0) | (np.asarray(y) > np.asarray(trials))):
            raise ValueError("y must lie in [0, trials] for the binomial likelihood")
    m = jnp.broadcast_to(jnp.asarray(trials, dtype=jnp.float64), eta.shape)
    omega = polya_gamma(key, m, eta, method=method)
    return (y - 0.5 * m) / omega, omega


def negative_binomial_augment(key, y, eta, concentration, *, method="devroye", terms=DEFAULT_TERMS):
    """Polson, Scott & Windle (2013, Sec. 3.2) for NumPyro's ``NegativeBinomial2(exp(η), r)``
    (``r = concentration``): ``ω_i ~ PG(y_i + r, η_i − log r)``,
    ``z = (y − r)/(2ω) + log r``; returns ``(z, ω)`` (module docstring: the pseudo-model
    ``z ~ N(η, 1/ω)`` is their ``κ/ω ~ N(ψ, 1/ω)`` shifted by the offset ``log r``).
    ``y + r`` is an integer only when ``r`` is; the fractional part goes by the series of
    :func:`~.polya_gamma.polya_gamma`. The exact sum loops ``max(y) + r`` times:
    ``method="gamma"`` costs ``terms`` Gamma variates per row instead, for large counts."""
    eta = jnp.asarray(eta, dtype=jnp.float64)
    y = jnp.asarray(y, dtype=jnp.float64)
    _check_positive(concentration, "concentration")
    if _concrete(y):
        arr = np.asarray(y)
        if np.any((arr < 0) | (arr != np.round(arr))):
            raise ValueError("y must hold non-negative integer counts for the negative binomial likelihood")
    r = jnp.asarray(concentration, dtype=jnp.float64)
    log_r = jnp.log(r)
    omega = polya_gamma(key, y + r, eta - log_r, method=method, terms=terms)
    return 0.5 * (y - r) / omega + log_r, omega


def negative_binomial_log_lik(y, eta, concentration):
    """Pointwise ``log NegativeBinomial2(y | exp(η), r)`` (the module docstring's density), stable
    for large ``|η|``: ``log(r/(r+μ)) = −softplus(η − log r)``."""
    y = jnp.asarray(y, dtype=jnp.float64)
    r = jnp.asarray(concentration, dtype=jnp.float64)
    psi = jnp.asarray(eta, dtype=jnp.float64) - jnp.log(r)
    return (gammaln(y + r) - gammaln(r) - gammaln(y + 1.0) + y * psi - (y + r) * jnp.logaddexp(0.0, psi))


#: the concentration moves of :func:`negative_binomial_concentration_step`
CONCENTRATION_MOVES = ("slice", "random_walk")
#: the default upper bound of the concentration ``r`` in its Gibbs move (the Pólya-Gamma draw of the
#: next sweep costs ``y + r`` Devroye variates a row); a Gamma(1, 0.1) prior puts ``e^{-100}`` above it
MAX_CONCENTRATION = 1e3


def negative_binomial_concentration_step(key, y, eta, concentration, *, prior_shape=1.0, prior_rate=0.1,
                                         method="slice", step_size=0.2, width=1.0,
                                         max_concentration=MAX_CONCENTRATION):
    """One update of the concentration ``r`` given ``η`` (``ω`` integrated out: Polson, Scott &
    Windle 2013, Sec. 3.2, have no conjugate conditional for ``r`` in the mean parametrization, the
    Pólya-Gamma shape ``y + r`` and the offset ``log r`` both move with it) that leaves its
    conditional ``p(r | y, η) ∝ Π NB(y_i | e^{η_i}, r) · Gamma(r; prior_shape, prior_rate)``
    invariant, truncated to ``r ≤ max_concentration``. Both moves work on ``x = log r``, whose
    density carries the Jacobian ``r``: ``Σ log NB + a log r − b r`` (``a = prior_shape``,
    ``b = prior_rate``).

    ``method="slice"`` (default): one univariate slice update of ``log r`` (:func:`slice_step`,
    stepping out by ``width``, Neal 2003): an exact draw-free-of-tuning move that crosses the
    conditional in one step wherever it is, where the random walk's steps of ``step_size`` took tens
    of sweeps. ``method="random_walk"``: a normal step of sd ``step_size`` on ``log r``, accepted by
    Metropolis–Hastings (the Jacobian ``r'/r`` in the ratio).

    The bound keeps the next sweep's ``PG(y + r, ·)`` draw short (its exact sum loops ``y + r``
    times, :func:`~.polya_gamma.polya_gamma`); it truncates the prior where it has the mass
    ``P(r > max_concentration)``: ``e^{-100}`` under the default ``Gamma(1, 0.1)``. A start above it
    is moved onto it first (outside the support, where no invariant move can start).
    Returns ``(r_new, moved)`` (``moved``: the random walk's acceptance; the slice's ``r_new ≠ r``)."""
    if method not in CONCENTRATION_MOVES:
        raise ValueError(f"method must be one of {CONCENTRATION_MOVES}, got {method!r}")
    _check_positive(prior_shape, "prior_shape")
    _check_positive(prior_rate, "prior_rate")
    _check_positive(step_size, "step_size")
    _check_positive(width, "width")
    _check_positive(max_concentration, "max_concentration")
    y = jnp.asarray(y, dtype=jnp.float64)
    eta = jnp.asarray(eta, dtype=jnp.float64)
    log_max = jnp.log(jnp.asarray(max_concentration, dtype=jnp.float64))
    x0 = jnp.minimum(jnp.log(jnp.asarray(concentration, dtype=jnp.float64)), log_max)

    def log_target(x):  # log posterior of log r: likelihood, Gamma prior, Jacobian r; −∞ above the bound
        rr = jnp.exp(x)
        value = jnp.sum(negative_binomial_log_lik(y, eta, rr)) + prior_shape * x - prior_rate * rr
        return jnp.where((x <= log_max) & ~jnp.isnan(value), value, -jnp.inf)  # (r = 0 underflowed: NaN)

    if method == "slice":
        x = slice_step(key, x0, log_target, width=width)
        return jnp.exp(x), x != x0
    k_step, k_acc = jax.random.split(key)
    proposal = x0 + step_size * jax.random.normal(k_step, dtype=jnp.float64)
    accepted = jnp.log(jax.random.uniform(k_acc, dtype=jnp.float64)) < log_target(proposal) - log_target(x0)
    return jnp.exp(jnp.where(accepted, proposal, x0)), accepted


def student_t_latent_scales(key, y, eta, df, scale):
    """The mixing precisions ``λ_i ~ Gamma((ν + 1)/2, rate (ν + (y_i − η_i)²/s²)/2)`` of the normal
    scale mixture ``y_i | λ_i ~ N(η_i, s²/λ_i)``, ``λ_i ~ Gamma(ν/2, ν/2)`` (``ν = df``, ``s = scale``)."""
    _check_positive(df, "df")
    _check_positive(scale, "scale")
    y = jnp.asarray(y, dtype=jnp.float64)
    resid = (y - jnp.asarray(eta, dtype=jnp.float64)) / scale
    rate = 0.5 * (df + resid * resid)
    return jax.random.gamma(key, jnp.broadcast_to(0.5 * (df + 1.0), resid.shape), dtype=jnp.float64) / rate


def student_t_augment(key, y, eta, df, scale):
    """Student-t ``(ν = df, s = scale)`` as a normal scale mixture: ``λ`` by
    :func:`student_t_latent_scales`; returns ``(z = y, ω = λ/s²)``."""
    lam = student_t_latent_scales(key, y, eta, df, scale)
    return jnp.asarray(y, dtype=jnp.float64), lam / (jnp.asarray(scale, dtype=jnp.float64) ** 2)


def student_t_scale2_draw(key, y, eta, lam, *, prior_shape=0.0, prior_rate=0.0):
    """``s² | λ, β ~ InvGamma(c + n/2, d + Σ λ_i (y_i − η_i)²/2)`` under the prior
    ``p(s²) ∝ (s²)^{−(c+1)} e^{−d/s²}`` (``c = prior_shape``, ``d = prior_rate``: ``InvGamma(c, d)``
    when both are > 0; ``c = d = 0``, the default, is Jeffreys' ``1/s²``; ``c = −1``, ``d = 0``
    the flat prior, proper posterior for ``n > 2``). Returns ``s²``."""
    if _concrete(prior_shape) and _concrete(prior_rate) and (prior_rate < 0 or not np.isfinite(prior_shape)):
        raise ValueError(f"prior_rate must be >= 0 and prior_shape finite, got {prior_shape!r}, {prior_rate!r}")
    y = jnp.asarray(y, dtype=jnp.float64)
    resid = y - jnp.asarray(eta, dtype=jnp.float64)
    shape = prior_shape + 0.5 * y.size
    if _concrete(shape) and shape <= 0:
        raise ValueError(f"the posterior shape c + n/2 = {shape} must be > 0")
    rate = prior_rate + 0.5 * jnp.sum(lam * resid * resid)
    return rate / jax.random.gamma(key, shape, dtype=jnp.float64)


def slice_step(key, x0, log_density, *, width=1.0, max_steps=32, max_shrinks=200):
    """One univariate slice-sampling update (Neal 2003, Sec. 4: stepping out, then shrinkage) of ``x0``
    under the unnormalized ``log_density``: an exact Markov move that leaves the density invariant,
    with no step size to tune (the interval grows by ``width`` up to ``max_steps`` times, split between
    the two sides at random as Neal's Fig. 3 does for the move to stay reversible). ``max_shrinks``
    bounds the shrinkage loop (each failed point halves the interval on average, so 200 is reached
    only if the density is not finite at ``x0``; the move then stays at ``x0``). Pure JAX, one key.
    Returns the new point."""
    x0 = jnp.asarray(x0, dtype=jnp.float64)
    k_level, k_place, k_split, k_shrink = jax.random.split(key, 4)
    f0 = log_density(x0)
    level = f0 - jax.random.exponential(k_level, dtype=jnp.float64)  # log of a uniform height under f(x0)
    left = x0 - width * jax.random.uniform(k_place, dtype=jnp.float64)
    right = left + width
    j = jnp.floor(max_steps * jax.random.uniform(k_split, dtype=jnp.float64))
    k = max_steps - 1 - j

    def out(edge, budget, sign):
        def cond(s):
            return (s[1] > 0) & (log_density(s[0]) > level)

        return lax.while_loop(cond, lambda s: (s[0] + sign * width, s[1] - 1), (edge, budget))[0]

    left, right = out(left, j, -1.0), out(right, k, 1.0)

    def cond(s):
        return ~s[4] & (s[5] < max_shrinks)

    def body(s):
        key, lo, hi, x, _, count = s
        key, sub = jax.random.split(key)
        x1 = lo + (hi - lo) * jax.random.uniform(sub, dtype=jnp.float64)
        accepted = log_density(x1) > level
        lo = jnp.where(~accepted & (x1 < x0), x1, lo)
        hi = jnp.where(~accepted & (x1 >= x0), x1, hi)
        return key, lo, hi, jnp.where(accepted, x1, x), accepted, count + 1

    state = lax.while_loop(cond, body, (k_shrink, left, right, x0, jnp.bool_(False), 0))
    return state[3]
