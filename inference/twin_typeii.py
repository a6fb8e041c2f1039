"""The twins of the type-II estimators (RVM, BLS, FLAP / FLAPσ, the Bernoulli RVM): their models at
the fitted hyperparameters, for NUTS (:func:`typeii_twin_model`) and Gibbs (:func:`run_typeii_gibbs`).

A type-II fit maximizes the evidence over the hyperparameters; its twin is the posterior of the
weights (and σ², the intercept) with the hyperprior's free scale held at the fitted value:

* BLS (004 eqs. 5–9): ``w_i | σ², τ_i ~ N(0, σ²τ_i)``, ``τ_i ~ Exp(λ/2)``, so ``w_i | σ² ~
  Laplace(0, σ/√λ)``: the Bayesian Lasso (Park & Casella 2008, with their ``λ²`` = BLS's ``λ``)
  at the fitted ``λ`` (``lambda_``);
* FLAP / FLAPσ (Babacan et al. 2010): ``w_i | γ_i ~ N(0, γ_i)``, ``γ_i ~ Exp(λ/2)``, so ``w_i ~
  Laplace(0, 1/√λ)``, at the fitted ``λ``; σ² fixed (FLAP) or with its ``InvGamma(c, d)`` (FLAPσ);
* the RVM: ``w_i ~ N(0, 1/α_i)`` with a flat prior on every ``α_i``: the posterior is improper
  (it has infinite mass at ``α_i → ∞``, ``w_i = 0``), so what is sampled is the labelled proper
  surrogate ``α_i ~ Gamma(ε, ε)`` (``surrogate_eps``; DESIGN: improper posteriors only on a
  labelled surrogate), as for the Jeffreys prior.

``σ²`` has the estimators' prior ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (``c = -1, d = 0``: flat, the
RVM's default; ``c = d = 0``: ``1/σ²``, BLS's and FLAPσ's). With ``fit_intercept`` the intercept
has a flat prior, as in the fits: NUTS samples it (site ``intercept``), the Gibbs sampler draws it
from ``N(ȳ − φ̄ᵀw, σ²/n)`` after integrating it out of the other conditionals.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.linalg import cho_factor, cho_solve, solve_triangular
from numpyro.distributions import constraints
from sparsebayes.models.priors import variance_of_precision

from .gibbs import inverse_gaussian_from

#: Hierarchies of the twins: ``"laplace"`` (the exponential scale mixture) and
#: ``"gamma-precision"`` (the RVM's surrogate, ``α_i ~ Gamma(ε, ε)``).
HIERARCHIES = ("laplace", "gamma-precision")


def typeii_twin_model(H, y=None, *, hierarchy, lam=1.0, surrogate_eps=None, scaled=False, noise_var=None, c=-1.0,
                      d=0.0, intercept=True, likelihood="gaussian"):
    """The twin (module docstring) as a NumPyro model for NUTS.

    ``hierarchy="laplace"``: ``β_i ~ Laplace(0, s/√lam)`` with ``s = σ`` when ``scaled`` (BLS)
    else 1 (FLAP), τ integrated out (the same posterior over β, without the funnel);
    ``"gamma-precision"``: ``precision_surrogate ~ Gamma(ε, ε)``, ``β = beta_raw / √precision``
    (non-centred). ``likelihood="bernoulli"``: ``y ~ Bernoulli(logit = Hβ)`` (the Bernoulli RVM;
    no σ², no intercept). Sites on the basis: ``beta`` (and ``beta_raw``, ``precision_surrogate``).
    """
    p = H.shape[1]
    gaussian = likelihood == "gaussian"
    if gaussian and noise_var is None:
        noise_var = numpyro.sample("noise_var", dist.ImproperUniform(constraints.positive, (), ()))
        numpyro.factor("noise_var_prior", -(c + 1.0) * jnp.log(noise_var) - d / noise_var)
    if hierarchy == "laplace":
        scale = jnp.sqrt((noise_var if scaled else 1.0) / lam)
        beta = numpyro.sample("beta", dist.Laplace(0.0, scale).expand([p]).to_event(1))
    else:
        precision = numpyro.sample("precision_surrogate",
                                   dist.Gamma(surrogate_eps, surrogate_eps).expand([p]).to_event(1))
        raw = numpyro.sample("beta_raw", dist.Normal(0.0, 1.0).expand([p]).to_event(1))
        beta = numpyro.deterministic("beta", raw * jnp.sqrt(variance_of_precision(precision)))
    eta = H @ beta
    if gaussian and intercept:
        eta = eta + numpyro.sample("intercept", dist.ImproperUniform(constraints.real, (), ()))
    with numpyro.plate("data", H.shape[0]):  # one site, n pointwise terms (for az.loo)
        if gaussian:
            numpyro.sample("y", dist.Normal(eta, jnp.sqrt(noise_var)), obs=y)
        else:
            numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)


def _sweep(key, state, data, *, hierarchy, lam, eps, scaled, fixed_noise, c, d):
    """One Gibbs sweep on the centred data (intercept integrated out): β | τ, σ²; σ² | β, τ; τ | β, σ²."""
    beta, noise_var, tau = state
    k_beta, k_noise, k_chi, k_unif = jax.random.split(key, 4)
    v = jnp.maximum(tau * (noise_var if scaled else 1.0), jnp.finfo(jnp.float64).tiny)
    A = data["gram"] / noise_var + jnp.diag(1.0 / v)
    L, lower = cho_factor(A, lower=True)
    mean = cho_solve((L, lower), data["Xty"] / noise_var)
    beta = mean + solve_triangular(L.T, jax.random.normal(k_beta, mean.shape), lower=False)
    rss = jnp.sum((data["y"] - data["X"] @ beta) ** 2)
    if not fixed_noise:
        shape = 0.5 * data["dof"] + c + (0.5 * beta.size if scaled else 0.0)
        rate = 0.5 * rss + d + (0.5 * jnp.sum(beta**2 / tau) if scaled else 0.0)
        noise_var = rate / jax.random.gamma(k_noise, shape)
    b2 = jnp.maximum(beta**2, jnp.finfo(jnp.float64).tiny)
    if hierarchy == "laplace":  # 1/τ_i | β_i ~ IG(√(λ s²/β_i²), λ) for τ_i ~ Exp(λ/2), β_i ~ N(0, s²τ_i)
        s2 = noise_var if scaled else 1.0
        chi2 = jax.random.normal(k_chi, beta.shape) ** 2
        tau = 1.0 / inverse_gaussian_from(jnp.sqrt(lam * s2 / b2), lam, chi2, jax.random.uniform(k_unif, beta.shape))
    else:  # α_i = 1/τ_i | β_i ~ Gamma(ε + ½, ε + β_i²/2)
        tau = (eps + 0.5 * b2) / jax.random.gamma(k_chi, eps + 0.5, beta.shape)
    log_lik = -0.5 * data["dof"] * jnp.log(2 * jnp.pi * noise_var) - 0.5 * rss / noise_var
    return (beta, noise_var, tau), log_lik


@partial(jax.jit, static_argnames=("num_warmup", "num_samples", "hierarchy", "scaled", "fixed_noise"))
def _chains(keys, start, data, lam, eps, c, d, *, num_warmup, num_samples, hierarchy, scaled, fixed_noise):
    sweep = partial(_sweep, data=data, hierarchy=hierarchy, lam=lam, eps=eps, scaled=scaled,
                    fixed_noise=fixed_noise, c=c, d=d)

    def one_chain(key):
        def body(state, k):
            state, log_lik = sweep(k, state)
            return state, (state, log_lik)
        _, out = jax.lax.scan(body, start, jax.random.split(key, num_warmup + num_samples))
        return jax.tree_util.tree_map(lambda a: a[num_warmup:], out)

    return jax.vmap(one_chain)(keys)


def run_typeii_gibbs(H, y, *, hierarchy, lam=1.0, surrogate_eps=None, scaled=False, noise_var=None, c=-1.0, d=0.0,
                     intercept=True, num_warmup=1000, num_samples=1000, num_chains=4, seed=0):
    """Gibbs draws of the Gaussian twin (:func:`typeii_twin_model`'s posterior, the same arguments).

    Returns a dict of arrays with leading ``(chain, draw)``: ``beta``, ``noise_var``, ``intercept``
    (zeros without one), ``tau`` (the prior variances' mixing variable: ``σ²τ_i`` or ``γ_i``) or, for
    the surrogate, ``precision_surrogate`` and ``beta_raw`` (the NUTS twin's names), and ``log_lik``.
    """
    if hierarchy not in HIERARCHIES:
        raise ValueError(f"hierarchy must be one of {HIERARCHIES}, got {hierarchy!r}")
    H, y = np.asarray(H, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n, p = H.shape
    x_mean, y_mean = (H.mean(axis=0), y.mean()) if intercept else (np.zeros(p), 0.0)
    X, yc = H - x_mean, y - y_mean
    data = {"X": jnp.asarray(X), "y": jnp.asarray(yc), "gram": jnp.asarray(X.T @ X), "Xty": jnp.asarray(X.T @ yc),
            "dof": jnp.float64(n - (1 if intercept else 0))}
    ridge = np.linalg.solve(X.T @ X + 1e-6 * np.trace(X.T @ X) / p * np.eye(p) + 1e-12 * np.eye(p), X.T @ yc)
    s2 = float(noise_var) if noise_var is not None else max(float(np.mean((yc - X @ ridge) ** 2)), 1e-12 * np.var(y))
    start = (jnp.asarray(ridge), jnp.float64(s2), jnp.ones(p))
    eps = 0.0 if surrogate_eps is None else float(surrogate_eps)
    keys = jax.random.split(jax.random.PRNGKey(seed), num_chains)
    (beta, noise, tau), log_lik = _chains(keys, start, data, jnp.float64(lam), jnp.float64(eps), jnp.float64(c),
                                          jnp.float64(d), num_warmup=num_warmup, num_samples=num_samples,
                                          hierarchy=hierarchy, scaled=bool(scaled), fixed_noise=noise_var is not None)
    beta, noise, tau = np.asarray(beta), np.asarray(noise), np.asarray(tau)
    rng = np.random.default_rng([seed, 7])
    centre = y_mean - beta @ x_mean
    out = {"beta": beta, "noise_var": noise,
           "intercept": centre + np.sqrt(noise / n) * rng.standard_normal(noise.shape) if intercept else 0.0 * noise,
           "log_lik": np.asarray(log_lik)}
    if hierarchy == "laplace":
        out["tau"] = tau
    else:
        out["precision_surrogate"] = 1.0 / tau
        out["beta_raw"] = beta / np.sqrt(tau)
    return out
