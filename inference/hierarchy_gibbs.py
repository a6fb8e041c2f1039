"""Gibbs sampling for linear regression under any hierarchy with conjugate conditionals.

The model is the EM engine's (000 Sec. 3): ``y = Xβ + w``, ``w ~ N(0, σ² I)``, ``β_i | v_i ~ N(0, v_i)``,
the hierarchy's prior on ``v`` through auxiliary variables, and the prior
``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` on σ² (:class:`NoisePrior`; ``c = −1, d = 0``: the papers'
flat prior, 000 eq. 6). With ``fit_intercept`` the intercept has a flat prior and is integrated
out (``X`` and ``y`` centred, ``m = n − 1`` degrees of freedom). One sweep:

* ``β | v, σ² ~ N(A⁻¹Xᵀy/σ², A⁻¹)``, ``A = XᵀX/σ² + diag(1/v)``, by a Cholesky factor of ``A``;
* ``σ² | β ~ IG(m/2 + c, ‖y − Xβ‖²/2 + d)`` (flat prior: ``IG(m/2 − 1, ‖y − Xβ‖²/2)``), or σ² held
  fixed;
* the hierarchy's own conditionals for its auxiliary variables given β (``gibbs_update``), and
  ``v`` from them (``gibbs_prior_variance``): e.g. Makalic & Schmidt (2016) for the horseshoe.

``scaled``: the prior variances are σ² times the hierarchy's, ``β_i | σ², v_i ~ N(0, σ² v_i)``
(Park & Casella 2008; the BLS twin, 004 eq. 5). Then ``σ² | β, v ~ IG(m/2 + c + p/2,
‖y − Xβ‖²/2 + d + Σ β_i²/(2v_i))`` and the hierarchy updates on ``β/σ``, which has its unscaled
prior.

The engine contract (DESIGN, inference/): :class:`State`, :class:`Info`, :func:`init`, the pure
:func:`step` and :func:`run_sweeps`, the jit boundary (``lax.scan`` over sweeps, chains by
``vmap``); :func:`run` checks the data and drives it, in about 20 compiled calls with a progress
bar. The Bayesian Lasso of Park & Casella (with its own variate streams and the Bhattacharya et
al. p > n draw) stays in :mod:`sparsebayes.inference.gibbs`; this engine is the one a new hierarchy
plugs into, by the methods ``gibbs_init``, ``gibbs_prior_variance`` and ``gibbs_update``
(:data:`sparsebayes.models.priors.CAPABILITIES`).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_factor, cho_solve, solve_triangular
from sparsebayes.models.priors import require

from ._progress import bar_chunk, chunk_lengths, progress, show_progress
from ._validation import check_count, check_data, check_number, check_sampler_counts


class State(NamedTuple):
    """One chain's draw: the weights, σ² and the hierarchy's auxiliary variables (a dict by name)."""

    beta: jax.Array
    noise_var: jax.Array
    aux: dict


class Info(NamedTuple):
    """Per sweep: the Gaussian log likelihood of the data at the state (for ``log_likelihood`` and
    diagnostics) and the log of the smallest prior variance (how deep the sweep shrank a weight)."""

    log_lik: jax.Array
    log_min_variance: jax.Array


class GibbsData(NamedTuple):
    """What every sweep reads: ``X``, ``y``, ``XᵀX``, ``Xᵀy`` and the degrees of freedom ``m``."""

    X: jax.Array
    y: jax.Array
    gram: jax.Array
    Xty: jax.Array
    dof: jax.Array


class NoisePrior(NamedTuple):
    """``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``: ``c = −1, d = 0`` flat (000 eq. 6), ``c = d = 0`` ``1/σ²``."""

    c: float = -1.0
    d: float = 0.0


#: The papers' flat prior on σ², the default.
FLAT = NoisePrior()


def init(prior, X, y, noise_var=None):
    """The start: least squares (ridge-stabilised) for β, its residual variance for σ² (or the
    given ``noise_var``, held fixed by :func:`step` with ``fixed_noise``), the hierarchy's own start
    for the auxiliary variables."""
    p = X.shape[1]
    beta = jnp.linalg.solve(X.T @ X + 1e-6 * jnp.eye(p), X.T @ y)
    if noise_var is None:
        noise_var = jnp.maximum(jnp.mean((y - X @ beta) ** 2), 1e-12 * jnp.mean(y**2) + 1e-300)
    return State(beta, jnp.asarray(noise_var, jnp.float64), prior.gibbs_init(p))


def step(state, key, data, prior, noise=FLAT, *, scaled=False, fixed_noise=False):
    """One sweep of the three conditionals (module docstring), pure; returns ``(state, info)``."""
    k_beta, k_noise, k_aux = jax.random.split(key, 3)
    tiny = jnp.finfo(data.X.dtype).tiny
    hierarchy_var = prior.gibbs_prior_variance(state.aux)
    v = jnp.maximum(state.noise_var * hierarchy_var if scaled else hierarchy_var, tiny)
    A = data.gram / state.noise_var + jnp.diag(1.0 / v)
    L, lower = cho_factor(A, lower=True)
    mean = cho_solve((L, lower), data.Xty / state.noise_var)
    z = jax.random.normal(k_beta, mean.shape, dtype=mean.dtype)
    beta = mean + solve_triangular(L.T, z, lower=False)  # covariance (L Lᵀ)⁻¹
    rss = jnp.sum((data.y - data.X @ beta) ** 2)
    noise_var = state.noise_var
    if not fixed_noise:
        shape = 0.5 * data.dof + noise.c
        rate = 0.5 * rss + noise.d
        if scaled:
            shape = shape + 0.5 * beta.shape[0]
            rate = rate + 0.5 * jnp.sum(beta**2 / jnp.maximum(hierarchy_var, tiny))
        noise_var = rate / jax.random.gamma(k_noise, shape, dtype=rss.dtype)
    aux = prior.gibbs_update(k_aux, beta / jnp.sqrt(noise_var) if scaled else beta, state.aux)
    log_lik = -0.5 * data.dof * jnp.log(2 * jnp.pi * noise_var) - 0.5 * rss / noise_var
    return State(beta, noise_var, aux), Info(log_lik, jnp.log(jnp.min(v)))


@partial(jax.jit, static_argnames=("scaled", "fixed_noise"))
def run_sweeps(state, keys, data, prior, noise=FLAT, *, scaled=False, fixed_noise=False):
    """The jit boundary: one sweep per key of ``keys`` (sweep, chain, 2) for every chain of
    ``state`` (chain-major), ``vmap`` inside the ``scan``; returns ``(last state, every sweep's
    state and Info (sweep, chain, …))``. Compiled once per shape and hierarchy type: data, prior
    and noise prior are arguments."""
    chains_step = jax.vmap(lambda s, k: step(s, k, data, prior, noise, scaled=scaled, fixed_noise=fixed_noise))

    def body(s, k):
        s, info = chains_step(s, k)
        return s, (s, info)

    last, (states, infos) = jax.lax.scan(body, state, keys)
    return last, states, infos


def run(X, y, prior, *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, fit_intercept=True,
        noise_prior=FLAT, noise_var=None, scaled=False, progress_bar=None):
    """Draws of ``(β, σ², aux)`` (:class:`State`) and the sweeps' :class:`Info`, each with leading
    axes ``(chain, draw)``.

    ``fit_intercept`` integrates a flat-prior intercept out (its conditional given the rest is
    ``N(ȳ − x̄ᵀβ, σ²/n)``); ``noise_prior`` is σ²'s prior, ``noise_var`` a value to hold σ² at
    instead, ``scaled`` the σ²-scaled prior variances (module docstring). ``progress_bar``: a tqdm
    bar over the sweeps (``None``: when standard error is a terminal); the sweeps then run in about
    20 compiled calls, with the same draws (every sweep's key is split from ``seed`` first).
    """
    require(prior, "gibbs")
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    for name, value in zip(("c", "d"), noise_prior):
        check_number(name, value, -1.0 if name == "c" else 0.0)
    if noise_var is not None:
        check_number("noise_var", noise_var, 0.0, strict=True)
    X, y = check_data(X, y, min_samples=3)
    if fit_intercept:
        X, y = X - X.mean(axis=0), y - y.mean()
    dof = X.shape[0] - (1 if fit_intercept else 0)
    if noise_var is None and 0.5 * dof + noise_prior.c + (0.5 * X.shape[1] if scaled else 0.0) <= 0:
        raise ValueError(f"σ²'s conditional is improper with {dof} degrees of freedom and c = {noise_prior.c}")
    data = GibbsData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X), jnp.asarray(X.T @ y), jnp.float64(dof))
    noise = NoisePrior(*(jnp.float64(v) for v in noise_prior))
    start = init(prior, data.X, data.y, noise_var)
    state = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (num_chains, *jnp.shape(a))), start)
    total = num_warmup + num_samples
    chain_keys = jax.random.split(jax.random.PRNGKey(seed), num_chains)
    keys = jnp.swapaxes(jax.vmap(lambda k: jax.random.split(k, total))(chain_keys), 0, 1)  # (sweep, chain, 2)
    show = show_progress(progress_bar)
    states, infos, done = [], [], 0
    with progress(total, "gibbs", show) as bar:
        for m in chunk_lengths(total, bar_chunk(total, show)):
            state, s, i = run_sweeps(state, keys[done:done + m], data, prior, noise, scaled=bool(scaled),
                                     fixed_noise=noise_var is not None)
            states.append(s)
            infos.append(i)
            done += m
            bar.update(m)

    def kept(parts):  # the draws after the warm-up, (chain, draw, …)
        return jax.tree_util.tree_map(lambda *a: np.swapaxes(np.concatenate(a)[num_warmup:], 0, 1), *parts)

    return kept(states), kept(infos)
