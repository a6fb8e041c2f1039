"""Gibbs sampling for linear regression under any hierarchy with conjugate conditionals.

The model is the EM engine's (000 Sec. 3): ``y = Xβ + w``, ``w ~ N(0, σ² I)``, ``β_i | v_i ~ N(0, v_i)``,
the hierarchy's prior on ``v`` through auxiliary variables, and the prior
``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` on σ² (:class:`NoisePrior`; ``c = −1, d = 0``: the papers'
flat prior, 000 eq. 6). With ``fit_intercept`` the intercept has a flat prior and is integrated
out (``X`` and ``y`` centred, ``m = n − 1`` degrees of freedom). One sweep:

* ``β | v, σ² ~ N(A⁻¹Xᵀy/σ², A⁻¹)``, ``A = XᵀX/σ² + diag(1/v)``, drawn as the shape calls for
  (:mod:`.gibbs_beta`): for ``p ≤ n`` by the Cholesky factor of ``A`` from the sufficient statistics
  ``XᵀX``, ``Xᵀy`` computed once (Rue 2001; a sweep then costs ``O(p³)`` whatever ``n``), for
  ``p > n`` by Bhattacharya, Chakraborty & Mallick (2016) from ``X`` (``O(n²p)``, no ``p × p`` array
  anywhere, set-up included);
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
from sparsebayes.models.priors import require

from . import gibbs_beta

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
    """What every sweep reads: on the Bhattacharya path (``p > n``) ``X`` and ``y`` and no ``stats``;
    on the Rue path the :class:`~.gibbs_beta.GaussianStats` and no ``X``, ``y`` (a sweep never reads
    the data there); the degrees of freedom ``m`` on both."""

    X: jax.Array | None
    y: jax.Array | None
    stats: gibbs_beta.GaussianStats | None
    dof: jax.Array


def gibbs_data(X, y, dof, beta_draw="auto"):
    """The :class:`GibbsData` of centred ``(X, y)``: the β draw as the shape calls for
    (:func:`~.gibbs_beta.choose_method`; ``beta_draw`` may force one), and with it what the sweeps
    read: the sufficient statistics for Rue's draw (one pass over the data, then nothing of size
    ``n``), the data alone for Bhattacharya's (nothing ``p × p`` is formed)."""
    X, y = jnp.asarray(X), jnp.asarray(y)
    if gibbs_beta.choose_method(*X.shape, beta_draw) == "rue":
        return GibbsData(None, None, gibbs_beta.gaussian_stats(X, y), jnp.float64(dof))
    return GibbsData(X, y, None, jnp.float64(dof))


class NoisePrior(NamedTuple):
    """``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``: ``c = −1, d = 0`` flat (000 eq. 6), ``c = d = 0`` ``1/σ²``."""

    c: float = -1.0
    d: float = 0.0


#: The papers' flat prior on σ², the default.
FLAT = NoisePrior()


def init(prior, data, y_power, noise_var=None):
    """The start: with more degrees of freedom than weights, the near-least-squares anchor of the
    statistics for β and its residual variance for σ²; else (``p ≥ m``, where least squares
    interpolates and would start σ² at its floor, from which a chain climbs slowly) ``β = 0`` and σ²
    the mean square ``y_power`` of ``y``. A given ``noise_var`` replaces σ² (held fixed by
    :func:`step` with ``fixed_noise``); the hierarchy's own start for the auxiliary variables."""
    floor = 1e-12 * y_power + 1e-300
    p = data.stats.gram.shape[0] if data.stats is not None else data.X.shape[1]
    if data.stats is not None and p < float(data.dof):
        beta = data.stats.anchor
        start_var = jnp.maximum(data.stats.anchor_rss / jnp.maximum(data.dof, 1.0), floor)
    else:
        beta = jnp.zeros(p, jnp.float64)
        start_var = jnp.maximum(jnp.asarray(y_power, jnp.float64), floor)
    return State(beta, jnp.asarray(start_var if noise_var is None else noise_var, jnp.float64),
                 prior.gibbs_init(beta.shape[0]))


def step(state, key, data, prior, noise=FLAT, *, scaled=False, fixed_noise=False):
    """One sweep of the three conditionals (module docstring), pure; returns ``(state, info)``."""
    k_beta, k_noise, k_aux = jax.random.split(key, 3)
    dtype = state.beta.dtype
    tiny = jnp.finfo(dtype).tiny
    hierarchy_var = prior.gibbs_prior_variance(state.aux)
    v = jnp.maximum(state.noise_var * hierarchy_var if scaled else hierarchy_var, tiny)
    p = state.beta.shape[0]
    if data.stats is not None:  # Rue's draw and the residual from the statistics: O(p³), not O(n)
        beta = gibbs_beta.rue_draw_from_stats(jax.random.normal(k_beta, (p,), dtype), data.stats, v, state.noise_var)
        rss = gibbs_beta.stats_rss(data.stats, beta)
    else:  # Bhattacharya's: O(n²p), nothing p × p
        k_p, k_n = jax.random.split(k_beta)
        beta = gibbs_beta.bhattacharya_draw(jax.random.normal(k_p, (p,), dtype),
                                            jax.random.normal(k_n, (data.X.shape[0],), dtype),
                                            data.X, data.y, None, v, state.noise_var)
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
        noise_prior=FLAT, noise_var=None, scaled=False, progress_bar=None, beta_draw="auto"):
    """Draws of ``(β, σ², aux)`` (:class:`State`) and the sweeps' :class:`Info`, each with leading
    axes ``(chain, draw)``.

    ``fit_intercept`` integrates a flat-prior intercept out (its conditional given the rest is
    ``N(ȳ − x̄ᵀβ, σ²/n)``); ``noise_prior`` is σ²'s prior, ``noise_var`` a value to hold σ² at
    instead, ``scaled`` the σ²-scaled prior variances (module docstring). ``progress_bar``: a tqdm
    bar over the sweeps (``None``: when standard error is a terminal); the sweeps then run in about
    20 compiled calls, with the same draws (every sweep's key is split from ``seed`` first).
    ``beta_draw``: ``"auto"`` (Rue's draw from sufficient statistics for ``p ≤ n``, Bhattacharya's
    for ``p > n``) or ``"rue"``, ``"bhattacharya"`` forced (:func:`gibbs_data`).
    """
    require(prior, "gibbs")
    gibbs_beta.choose_method(1, 1, beta_draw)  # a ValueError for an unknown draw, before the data checks
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
    data = gibbs_data(X, y, dof, beta_draw)
    noise = NoisePrior(*(jnp.float64(v) for v in noise_prior))
    start = init(prior, data, float(np.mean(y**2)), noise_var)
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
