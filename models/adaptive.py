"""NumPyro models of Figueiredo's hierarchies, written as the papers state them.

Regression (000 Sec. 3): ``y = Hβ + w``, ``w ~ N(0, σ² I)``, ``β_i | τ_i ~ N(0, τ_i)``, σ² flat.
Probit (002 Sec. 2): ``z = Hβ + w``, ``w ~ N(0, 1)``, ``y = 1[z ≥ 0]``. By default the latent
``z`` is integrated out in closed form, ``P(y = 1) = Φ(hᵀβ)``, evaluated as ``log_ndtr`` for
stability; ``latent=True`` keeps ``z`` as a sampled site (the data-augmentation form that the
EM's E-step, 002 eq. 6, takes the expectation of).

Hyperpriors on τ_i (or ``prior=`` a hierarchy object of :mod:`sparsebayes.models.priors`, e.g.
:class:`~sparsebayes.models.priors.horseshoe.HorseshoePrior`, whose ``sample_beta`` is the statement):

* ``"laplace"``: ``τ_i ~ Exp(rate γ/2)`` (002 eq. 10); γ fixed, or ``γ ~ Gamma(a, b)`` when
  ``gamma_prior=(a, b)`` (a hyperprior the papers do not use; it lets NUTS learn γ).
  ``marginal=True`` samples ``β_i ~ Laplace(0, 1/√γ)`` directly (the same marginal model,
  which is what the EM objective is; without the τ funnel, NUTS mixes better on it).
* ``"jeffreys"``: ``p(τ_i) ∝ 1/τ_i``. The joint posterior is improper (``∏ 1/|β_i|`` is not
  integrable at 0), so it has a log density (:func:`jeffreys_neg_log_prior` and the model
  with ``surrogate_eps=None``, for ``log_density`` only) but no posterior to sample. For NUTS,
  ``surrogate_eps=ε`` replaces it by the labelled proper surrogate ``1/τ_i ~ Gamma(ε, ε)``
  (which tends to the Jeffreys prior as ε → 0); report draws from it as the surrogate's.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import log_ndtr
from numpyro.distributions import constraints

from .priors import LaplacePrior, is_hierarchy, require, variance_of_precision


#: The factor site of the improper Jeffreys hyperprior: a model that has it has no posterior to
#: sample (``run_nuts`` refuses it and names ``surrogate_eps``).
JEFFREYS_HYPERPRIOR_SITE = "jeffreys_hyperprior"


def _jeffreys_tau(p, surrogate_eps):
    """The Jeffreys hyperprior's ``τ`` (site ``tau``): improper, or its labelled proper surrogate."""
    if surrogate_eps is None:
        # Improper p(τ) ∝ 1/τ: for log_density evaluation only, never for sampling.
        tau = numpyro.sample("tau", dist.ImproperUniform(constraints.positive, (), (p,)))
        numpyro.factor(JEFFREYS_HYPERPRIOR_SITE, -jnp.sum(jnp.log(tau)))
        return tau
    prec = numpyro.sample("precision_surrogate", dist.Gamma(surrogate_eps, surrogate_eps).expand([p]).to_event(1))
    return numpyro.deterministic("tau", variance_of_precision(prec))


def _beta(H, prior, gamma, gamma_prior, surrogate_eps, marginal):
    p = H.shape[1]
    if is_hierarchy(prior):  # a hierarchy object owns its sampling statement
        if marginal or gamma_prior is not None or surrogate_eps is not None:
            raise ValueError("marginal, gamma_prior and surrogate_eps apply to the prior names 'laplace' and "
                             "'jeffreys'; a hierarchy object carries its own settings")
        return require(prior, "nuts").sample_beta(p)
    if prior == "laplace":  # the Laplace hierarchy's own statement (LaplacePrior.sample_beta)
        return LaplacePrior(gamma, gamma_prior).sample_beta(p, marginal=marginal)
    if prior != "jeffreys":
        raise ValueError(f"prior must be 'laplace' or 'jeffreys', got {prior!r}")
    if marginal:
        raise ValueError("marginal=True is the Laplace marginal; the Jeffreys marginal is improper")
    return jeffreys_surrogate_beta(p, surrogate_eps)


def jeffreys_surrogate_beta(p, surrogate_eps, name="beta"):
    """``β_i | τ_i ~ N(0, τ_i)`` under the Jeffreys hyperprior (improper, ``surrogate_eps=None``: for
    ``log_density`` only) or its labelled proper surrogate ``1/τ_i ~ Gamma(ε, ε)`` (module docstring)."""
    return numpyro.sample(name, dist.Normal(0.0, jnp.sqrt(_jeffreys_tau(p, surrogate_eps))).to_event(1))


def sparse_regression_model(H, y=None, *, prior="laplace", gamma=1.0, gamma_prior=None, noise_var=None,
                            surrogate_eps=None, marginal=False):
    """``y = Hβ + w`` with the hierarchical Laplace or Jeffreys prior (000 Sec. 3).

    ``noise_var=None`` puts the papers' flat (improper) prior on σ² (000 eq. 6).
    """
    beta = _beta(H, prior, gamma, gamma_prior, surrogate_eps, marginal)
    if noise_var is None:
        noise_var = numpyro.sample("noise_var", dist.ImproperUniform(constraints.positive, (), ()))
    with numpyro.plate("data", H.shape[0]):  # one site, n pointwise terms (for az.loo)
        numpyro.sample("y", dist.Normal(H @ beta, jnp.sqrt(noise_var)), obs=y)


class ProbitBernoulli(dist.Distribution):
    """``y ∈ {0, 1}`` with ``P(y = 1) = Φ(η)`` (002 eq. 2), ``log p(y) = log Φ((2y − 1)η)`` by
    ``log_ndtr`` (finite where ``Φ(η)`` rounds to 0 or 1); drawn as ``1[η + w ≥ 0]``, ``w ~ N(0, 1)``."""

    arg_constraints = {"eta": constraints.real}
    support = constraints.boolean

    def __init__(self, eta, *, validate_args=None):
        self.eta = jnp.asarray(eta)
        super().__init__(batch_shape=jnp.shape(self.eta), validate_args=validate_args)

    def sample(self, key, sample_shape=()):
        """``1[η + w ≥ 0]`` with ``w ~ N(0, 1)``: the probit model's latent-variable form (002 Sec. 2)."""
        w = jax.random.normal(key, sample_shape + self.batch_shape)
        return (self.eta + w >= 0).astype(jnp.result_type(float))

    def log_prob(self, value):
        """``log Φ((2y − 1)η)`` by ``log_ndtr``, finite where ``Φ(η)`` rounds to 0 or 1 (002 eq. 2)."""
        return log_ndtr((2.0 * value - 1.0) * self.eta)


def sparse_probit_model(H, y=None, *, prior="laplace", gamma=1.0, gamma_prior=None, surrogate_eps=None,
                        marginal=False, latent=False):
    """Probit ``P(y=1|x) = Φ(hᵀβ)`` (002 eq. 2) with the hierarchical Laplace or Jeffreys prior.

    ``latent=True`` (with ``y`` given) samples the latent ``z`` of 002 Sec. 2: ``u = s z > 0``
    with ``s = 2y − 1`` is ``N(sη, 1)`` truncated to ``(0, ∞)``, and the observations'
    ``log Φ(sη)`` (:class:`ProbitBernoulli`) restores the joint ``p(z, y | β) = N(z; η, 1)
    1[s z > 0]``; integrating ``z`` out gives the default model back.
    """
    beta = _beta(H, prior, gamma, gamma_prior, surrogate_eps, marginal)
    eta = H @ beta
    with numpyro.plate("data", H.shape[0]):  # one site, n pointwise terms (for az.loo)
        numpyro.sample("y", ProbitBernoulli(eta), obs=y)
    if latent and y is not None:
        sign = 2.0 * y - 1.0
        u = numpyro.sample("u", dist.TruncatedNormal(sign * eta, 1.0, low=0.0).to_event(1))
        numpyro.deterministic("z", sign * u)
