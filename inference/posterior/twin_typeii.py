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

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints
from sparsebayes.models.likelihoods import GaussianLikelihood, conjugate_noise, flat_intercept, make_likelihood
from sparsebayes.models.priors import LaplacePrior, variance_of_precision

from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_augmented

#: Hierarchies of the twins: ``"laplace"`` (the exponential scale mixture) and
#: ``"gamma-precision"`` (the RVM's surrogate, ``α_i ~ Gamma(ε, ε)``).
HIERARCHIES = ("laplace", "gamma-precision")


def typeii_twin_model(H, y=None, *, hierarchy, lam=1.0, surrogate_eps=None, scaled=False, noise_var=None, c=-1.0,
                      d=0.0, intercept=True, likelihood=GaussianLikelihood()):
    """The twin (module docstring) as a NumPyro model for NUTS.

    ``hierarchy="laplace"``: ``β_i ~ Laplace(0, s/√lam)`` with ``s = σ`` when ``scaled`` (BLS)
    else 1 (FLAP), τ integrated out (the same posterior over β, without the funnel); ``"flat"``: its
    limit ``lam → 0``, a flat prior on β (the twin of a type-II fit whose λ update gave 0);
    ``"gamma-precision"``: ``precision_surrogate ~ Gamma(ε, ε)``, ``β = beta_raw / √precision``
    (non-centred). ``likelihood`` (an object, or a registered name): its ``observe`` statement is the
    data's, ``y`` given ``η = Hβ (+ intercept)``. A likelihood that states ``conjugate_noise`` (the
    Gaussian, :data:`~sparsebayes.models.likelihoods.registry.LIKELIHOOD_DECLARATIONS`) has σ²: fixed at
    ``noise_var``, else sampled under ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``; another with a parameter of
    its own has it fixed at ``noise_var`` or under the prior its ``sample_params`` states; ``scaled``
    needs σ². With ``intercept`` the site ``intercept`` has the prior the likelihood states
    (``intercept_prior``: flat, or ``N(0, 10²)``). The Bernoulli RVM's twin is ``likelihood=``
    :class:`~sparsebayes.models.likelihoods.BernoulliLogisticLikelihood`, ``intercept=False``. Sites on
    the basis: ``beta`` (and ``beta_raw``, ``precision_surrogate``).
    """
    p = H.shape[1]
    likelihood = make_likelihood(likelihood)
    sigma2 = conjugate_noise(likelihood)
    if scaled and not sigma2:
        raise ValueError(f"scaled=True (BLS: β_i | σ² ~ Laplace(0, σ/√λ)) needs a likelihood with σ² "
                         f"(conjugate_noise), got {likelihood.name!r}")
    if sigma2 and noise_var is None:
        noise_var = numpyro.sample("noise_var", dist.ImproperUniform(constraints.positive, (), ()))
        numpyro.factor("noise_var_prior", -(c + 1.0) * jnp.log(noise_var) - d / noise_var)
    elif noise_var is None and getattr(likelihood, "param_name", None) is not None:
        noise_var = likelihood.sample_params()
    if hierarchy == "laplace":
        scale = jnp.sqrt((noise_var if scaled else 1.0) / lam)
        beta = numpyro.sample("beta", dist.Laplace(0.0, scale).expand([p]).to_event(1))
    elif hierarchy == "flat":  # the Laplace prior's limit lam -> 0 (a type-II fit's lam = 0): no shrinkage
        beta = numpyro.sample("beta", dist.ImproperUniform(constraints.real, (), (p,)))
    else:
        precision = numpyro.sample("precision_surrogate",
                                   dist.Gamma(surrogate_eps, surrogate_eps).expand([p]).to_event(1))
        raw = numpyro.sample("beta_raw", dist.Normal(0.0, 1.0).expand([p]).to_event(1))
        beta = numpyro.deterministic("beta", raw * jnp.sqrt(variance_of_precision(precision)))
    eta = H @ beta
    if intercept:
        eta = eta + numpyro.sample("intercept", dist.ImproperUniform(constraints.real, (), ()) if flat_intercept(
            likelihood) else dist.Normal(0.0, hierarchy_gibbs_augmented.INTERCEPT_SCALE))
    with numpyro.plate("data", H.shape[0]):  # one site, n pointwise terms (for az.loo)
        likelihood.observe("y", eta, y, noise_var)


def LaplaceMixture(lam):
    """The Laplace hierarchy as an exponential scale mixture at a fixed rate, ``β_i | τ_i ~ N(0, τ_i)``,
    ``τ_i ~ Exp(lam/2)``: :class:`~sparsebayes.models.priors.LaplacePrior` with ``γ = lam``, which owns the
    Gibbs conditional ``1/τ_i | β_i ~ IG(√(lam/β_i²), lam)`` (Park & Casella 2008, Sec. 2; aux ``tau``).
    The BLS twin runs it ``scaled`` (``β_i | σ², τ_i ~ N(0, σ²τ_i)``), FLAP as it is."""
    return LaplacePrior(lam)


class GammaPrecision(NamedTuple):
    """The RVM's labelled surrogate, ``β_i | α_i ~ N(0, 1/α_i)``, ``α_i ~ Gamma(eps, eps)``, with its
    Gibbs conditional ``α_i | β_i ~ Gamma(eps + ½, eps + β_i²/2)`` (Tipping 2001's conjugate pair),
    for :mod:`sparsebayes.inference.engines.hierarchy_gibbs` (aux ``tau = 1/α``)."""

    eps: float

    #: The name it goes by (labels, errors).
    name = "ard-surrogate"

    def sample_beta(self, p, name="beta"):
        """The NumPyro statement (non-centred, as :func:`typeii_twin_model`'s ``"gamma-precision"``):
        ``precision_surrogate ~ Gamma(ε, ε)``, ``beta_raw ~ N(0, 1)``, ``β = beta_raw/√α`` (deterministic)."""
        precision = numpyro.sample("precision_surrogate", dist.Gamma(self.eps, self.eps).expand([p]).to_event(1))
        raw = numpyro.sample(f"{name}_raw", dist.Normal(0.0, 1.0).expand([p]).to_event(1))
        return numpyro.deterministic(name, raw * jnp.sqrt(variance_of_precision(precision)))

    def gibbs_init(self, p, dtype=jnp.float64):
        return {"tau": jnp.ones(p, dtype)}

    def gibbs_prior_variance(self, aux):
        return aux["tau"]

    def gibbs_twin_sites(self, beta, aux):
        """The NUTS statement's sites at Gibbs draws: ``precision_surrogate = 1/τ``, ``beta_raw = β/√τ``."""
        tau = np.asarray(aux["tau"])
        return {"precision_surrogate": 1.0 / tau, "beta_raw": np.asarray(beta) / np.sqrt(tau)}

    def gibbs_update(self, key, beta, aux):
        b2 = jnp.maximum(beta**2, jnp.finfo(beta.dtype).tiny)
        return {"tau": (self.eps + 0.5 * b2) / jax.random.gamma(key, self.eps + 0.5, beta.shape, dtype=beta.dtype)}


def run_typeii_gibbs(H, y, *, hierarchy, lam=1.0, surrogate_eps=None, scaled=False, noise_var=None, c=-1.0, d=0.0,
                     intercept=True, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, progress_bar=None):
    """Gibbs draws of the Gaussian twin (:func:`typeii_twin_model`'s posterior, the same arguments), by
    :func:`sparsebayes.inference.engines.hierarchy_gibbs.run` with :class:`~sparsebayes.models.priors.LaplacePrior`
    at ``γ = lam`` (``scaled`` for BLS)
    or :class:`GammaPrecision`, σ² under ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` or fixed at ``noise_var``.
    ``progress_bar``: a tqdm bar over the sweeps (``None``: when standard error is a terminal).

    Returns a dict of arrays with leading ``(chain, draw)``: ``beta``, ``noise_var``, ``intercept``
    (zeros without one), ``tau`` (the prior variances' mixing variable: ``σ²τ_i`` or ``γ_i``) or, for
    the surrogate, ``precision_surrogate`` and ``beta_raw`` (the NUTS twin's names), and ``log_lik``.
    """
    if hierarchy not in HIERARCHIES:
        raise ValueError(f"hierarchy must be one of {HIERARCHIES}, got {hierarchy!r}")
    H, y = np.asarray(H, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n, p = H.shape
    x_mean, y_mean = (H.mean(axis=0), y.mean()) if intercept else (np.zeros(p), 0.0)
    prior = LaplacePrior(float(lam)) if hierarchy == "laplace" else GammaPrecision(
        0.0 if surrogate_eps is None else float(surrogate_eps))
    states, infos = hierarchy_gibbs.run(
        H, y, prior, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
        fit_intercept=intercept, noise_prior=hierarchy_gibbs.NoisePrior(float(c), float(d)),
        noise_var=None if noise_var is None else float(noise_var), scaled=bool(scaled), progress_bar=progress_bar)
    beta, noise, tau, log_lik = states.beta, states.noise_var, states.aux["tau"], infos.log_lik
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
