"""The Gaussian likelihood ``y = η + w``, ``w ~ N(0, σ²)`` (000 Sec. 3): its own parameter is σ²."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist


class GaussianLikelihood(NamedTuple):
    """``y = Hβ + w``, ``w ~ N(0, σ² I)``, flat prior on σ² (000 Sec. 3); ``params`` is σ²."""

    #: What ``y`` is: "real", "counts" (nonnegative integers), "binary" (0/1) or "categorical" (one-hot).
    support = "real"
    #: The registry name.
    name = "gaussian"
    #: What its own parameter is (EM estimates it unless fixed).
    param_name = "noise_var"
    #: EM's working weights are ``1/σ²`` on every row: the M-step keeps the precomputed Gram ``HᵀH``.
    constant_weight = True
    #: The working surrogate is the log likelihood itself (up to a constant): EM climbs its objective.
    monotone_em = True
    #: ``curvature`` is ``−∂²/∂η² log p`` (log-concave).
    curvature_kind = "observed"
    #: ``N(η, σ²)`` with σ² flat: the engines use its conjugate σ² sweep and integrate β out
    #: (:data:`~sparsebayes.models.likelihoods.registry.LIKELIHOOD_DECLARATIONS`).
    conjugate_noise = True
    #: The intercept's prior in the samplers: flat (000 Sec. 3; proper posterior from the data alone).
    intercept_prior = "flat"
    #: ``E[y | η] = η``: effects are read in units of ``y``.
    identity_link = True

    @property
    def label(self):
        """A human-readable name of the likelihood (reports, plots)."""
        return "Gaussian"

    def log_lik(self, y, eta, params=1.0):
        """``−½ log(2πσ²) − (y − η)²/(2σ²)`` per observation."""
        r = y - eta
        return -0.5 * jnp.log(2.0 * np.pi * params) - 0.5 * r * r / params

    def score(self, y, eta, params=1.0):
        """``(y − η)/σ²``."""
        return (y - eta) / params

    def curvature(self, y, eta, params=1.0):
        """``1/σ²``."""
        return jnp.ones_like(eta) / params

    def mean(self, eta, params=1.0):
        """``E[y | η] = η``."""
        return eta

    def variance(self, eta, params=1.0):
        """``Var[y | η] = σ²``."""
        return jnp.ones_like(eta) * params

    def expected_targets(self, y, eta):
        """No latent variables: the targets are the data."""
        return y

    def em_working(self, y, eta, params=1.0):
        """``(z, w) = (y, 1/σ²)``: the log likelihood is its own quadratic surrogate."""
        return self.expected_targets(y, eta), jnp.ones_like(eta) / params

    def init_params(self, y):
        """σ² at the start: the variance of ``y`` (1 where that is 0 or not finite)."""
        s2 = float(np.var(y))
        return s2 if np.isfinite(s2) and s2 > 0 else 1.0

    def noise_update(self, y, eta, n_obs=None):
        """``σ² = ‖y − Hβ‖² / n`` (000 eq. 12); padding rows have zero residuals."""
        r = y - eta
        return jnp.dot(r, r) / (y.shape[0] if n_obs is None else n_obs)

    def update_params(self, y, eta, params, n_obs=None):
        """The σ² maximizing the likelihood at ``η`` (:meth:`noise_update`)."""
        return self.noise_update(y, eta, n_obs)

    def neg_log_lik(self, y, eta, noise_var, n_obs=None):
        """``n/2 log σ² + ‖y − Hβ‖² / (2σ²)`` (constants dropped)."""
        r = y - eta
        n = y.shape[0] if n_obs is None else n_obs
        return 0.5 * n * jnp.log(noise_var) + 0.5 * jnp.dot(r, r) / noise_var

    def sample_params(self):
        """σ² inside a NumPyro model: the papers' flat (improper) prior ``p(σ²) ∝ 1`` (000 eq. 6), site
        :attr:`param_name`."""
        from numpyro.distributions import constraints

        return numpyro.sample(self.param_name, dist.ImproperUniform(constraints.positive, (), ()))

    def observe(self, name, eta, y=None, params=1.0):
        """``y ~ N(η, σ²)`` (one site, a pointwise term per row)."""
        return numpyro.sample(name, dist.Normal(eta, jnp.sqrt(params)), obs=y)

    def sample(self, key, eta, params=1.0):
        """``η + σ ε``, ``ε ~ N(0, 1)``."""
        return eta + jnp.sqrt(params) * jax.random.normal(key, jnp.shape(eta))

    def gibbs_augment(self, key, y, eta, params=1.0):
        """Nothing to augment: ``(z = y, ω = 1/σ²)``. The Gibbs engine samples this likelihood by its
        own Gaussian sweep (σ² conjugate, sufficient statistics: :attr:`conjugate_noise`), not through
        this method."""
        return jnp.asarray(y, dtype=jnp.float64), jnp.ones_like(eta) / params
