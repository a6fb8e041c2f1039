"""Gibbs sampling for linear regression under any hierarchy with conjugate conditionals.

The model is the EM engine's (000 Sec. 3): ``y = Xβ + w``, ``w ~ N(0, σ² I)``, ``β_i | v_i ~ N(0, v_i)``
(prior variances *not* scaled by σ²), the hierarchy's prior on ``v`` through auxiliary variables,
and the papers' flat prior on σ² (000 eq. 6). With ``fit_intercept`` the intercept has a flat prior
and is integrated out (``X`` and ``y`` centred, ``n − 1`` degrees of freedom). One sweep:

* ``β | v, σ² ~ N(A⁻¹Xᵀy/σ², A⁻¹)``, ``A = XᵀX/σ² + diag(1/v)``, by a Cholesky factor of ``A``;
* ``σ² | β ~ IG(m/2 − 1, ‖y − Xβ‖²/2)`` (flat prior; ``m`` the degrees of freedom);
* the hierarchy's own conditionals for its auxiliary variables given β (``gibbs_update``), and
  ``v`` from them (``gibbs_prior_variance``): e.g. Makalic & Schmidt (2016) for the horseshoe.

The Bayesian Lasso of Park & Casella (σ²-scaled prior variances, with its own variate streams and
the Bhattacharya et al. p > n draw) stays in :mod:`sparsebayes.inference.gibbs`; this engine is the
one a new hierarchy plugs into, by the methods ``gibbs_init``, ``gibbs_prior_variance`` and
``gibbs_update`` (:data:`sparsebayes.models.priors.CAPABILITIES`).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_factor, cho_solve, solve_triangular

from sparsebayes.models.priors import require

from ._validation import check_count, check_data, check_sampler_counts


class HierarchyGibbsState(NamedTuple):
    beta: jax.Array
    noise_var: jax.Array
    aux: dict


class HierarchyGibbsInfo(NamedTuple):
    """Per sweep: the Gaussian log likelihood of the data at the state (for ``log_likelihood`` and
    diagnostics) and the log of the smallest prior variance (how deep the sweep shrank a weight)."""

    log_lik: jax.Array
    log_min_variance: jax.Array


class GibbsData(NamedTuple):
    X: jax.Array
    y: jax.Array
    gram: jax.Array
    Xty: jax.Array
    dof: jax.Array


def init(prior, X, y):
    """The start: least squares (ridge-stabilised) for β, its residual variance for σ², the
    hierarchy's own start for the auxiliary variables."""
    p = X.shape[1]
    beta = jnp.linalg.solve(X.T @ X + 1e-6 * jnp.eye(p), X.T @ y)
    noise_var = jnp.maximum(jnp.mean((y - X @ beta) ** 2), 1e-12 * jnp.mean(y**2) + 1e-300)
    return HierarchyGibbsState(beta, noise_var, prior.gibbs_init(p))


def step(key, state, data, prior):
    """One sweep of the three conditionals (module docstring); returns ``(state, info)``."""
    k_beta, k_noise, k_aux = jax.random.split(key, 3)
    tiny = jnp.finfo(data.X.dtype).tiny
    v = jnp.maximum(prior.gibbs_prior_variance(state.aux), tiny)
    A = data.gram / state.noise_var + jnp.diag(1.0 / v)
    L, lower = cho_factor(A, lower=True)
    mean = cho_solve((L, lower), data.Xty / state.noise_var)
    z = jax.random.normal(k_beta, mean.shape, dtype=mean.dtype)
    beta = mean + solve_triangular(L.T, z, lower=False)  # covariance (L Lᵀ)⁻¹
    rss = jnp.sum((data.y - data.X @ beta) ** 2)
    shape = 0.5 * data.dof - 1.0
    noise_var = (0.5 * rss) / jax.random.gamma(k_noise, shape, dtype=rss.dtype)
    aux = prior.gibbs_update(k_aux, beta, state.aux)
    log_lik = -0.5 * data.dof * jnp.log(2 * jnp.pi * noise_var) - 0.5 * rss / noise_var
    return HierarchyGibbsState(beta, noise_var, aux), HierarchyGibbsInfo(log_lik, jnp.log(jnp.min(v)))


@partial(jax.jit, static_argnames=("num_warmup", "num_samples"))
def _run_chains(keys, state, data, prior, *, num_warmup, num_samples):
    def one_chain(key, state):
        def body(s, k):
            s, info = step(k, s, data, prior)
            return s, (s, info)

        sweep_keys = jax.random.split(key, num_warmup + num_samples)
        _, (states, infos) = jax.lax.scan(body, state, sweep_keys)
        keep = lambda a: a[num_warmup:]  # noqa: E731
        return jax.tree_util.tree_map(keep, states), jax.tree_util.tree_map(keep, infos)

    return jax.vmap(one_chain, in_axes=(0, None))(keys, state)


def run(X, y, prior, *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, fit_intercept=True):
    """Draws of ``(β, σ², aux)`` and the sweeps' :class:`HierarchyGibbsInfo`, each with leading axes
    ``(chain, draw)``; ``fit_intercept`` integrates a flat-prior intercept out (its conditional
    given the rest is ``N(ȳ − x̄ᵀβ, σ²/n)``)."""
    require(prior, "gibbs")
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    X, y = check_data(X, y, min_samples=3)
    if fit_intercept:
        X, y = X - X.mean(axis=0), y - y.mean()
    dof = X.shape[0] - (1 if fit_intercept else 0)
    data = GibbsData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X), jnp.asarray(X.T @ y), jnp.float64(dof))
    keys = jax.random.split(jax.random.PRNGKey(seed), num_chains)
    states, infos = _run_chains(keys, init(prior, data.X, data.y), data, prior,
                                num_warmup=num_warmup, num_samples=num_samples)
    return jax.tree_util.tree_map(np.asarray, states), jax.tree_util.tree_map(np.asarray, infos)

