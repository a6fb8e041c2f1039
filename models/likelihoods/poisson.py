"""The Poisson likelihood with the log link (Tipping's SparseBayes Poisson model)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import gammaln

from .registry import neg_log_lik_of_log_lik, no_own_parameter, own_parameter_unchanged

#: ``η`` is capped here inside ``exp``: ``e^709`` is the largest finite double, and a Newton trial
#: step far out must give a finite (very low) log likelihood, not ``inf − inf``.
_MAX_LOG_RATE = 700.0


class PoissonLikelihood(NamedTuple):
    """``t ~ Poisson(e^η)``, counts ``t ∈ {0, 1, 2, …}``, the log link (Tipping's SparseBayes
    Poisson model; Tipping & Faul 2003, Sec. 5, with the Poisson log likelihood in place of the
    Bernoulli one).

    ``log p(t | η) = tη − e^η − log t!``; the mean and the curvature are both ``e^η`` (the log is
    the canonical link, so the curvature is free of ``t`` and the log posterior is concave).
    EM takes no augmentation: its working response and weights are IRLS's (Fisher scoring, the
    second-order expansion at the current ``η``), which is not a bound: the engine halves a step that
    would lower its objective.
    """

    #: What ``y`` is: "real", "counts" (nonnegative integers), "binary" (0/1) or "categorical" (one-hot).
    support = "counts"
    #: The registry name.
    name = "poisson"
    #: No parameter of its own.
    param_name = None
    #: The working weights ``e^η`` vary by row.
    constant_weight = False
    #: IRLS's quadratic is an expansion, not a bound (``e^η`` outgrows every quadratic): the engine
    #: halves steps that would descend.
    monotone_em = False
    #: The log link is canonical: ``curvature`` is ``−∂²/∂η² log p``.
    curvature_kind = "observed"

    @property
    def label(self):
        """A human-readable name of the likelihood (reports, plots)."""
        return "Poisson (log link)"

    def log_lik(self, t, eta, params=None):
        """``tη − e^η − log Γ(t + 1)`` per observation."""
        return t * eta - self.mean(eta) - gammaln(t + 1.0)

    def score(self, t, eta, params=None):
        """``t − e^η``."""
        return t - self.mean(eta)

    def mean(self, eta, params=None):
        """``E[t | η] = e^η`` (``η`` capped at :data:`_MAX_LOG_RATE`)."""
        return jnp.exp(jnp.minimum(eta, _MAX_LOG_RATE))

    def variance(self, eta, params=None):
        """``Var[t | η] = e^η``."""
        return self.mean(eta)

    def curvature(self, t, eta, params=None):
        """``−∂²/∂η² log p(t | η) = e^η``."""
        return self.mean(eta)

    def init_target(self, t):
        """``log(t + ½)``: the log rate of the counts, finite at a zero count."""
        return jnp.log(t + 0.5)

    def em_working(self, t, eta, params=None):
        """IRLS: ``w = e^η``, ``z = η + (t − e^η)/e^η`` (``e^η`` at least ``e^{−700}``: finite)."""
        mu = jnp.exp(jnp.clip(eta, -_MAX_LOG_RATE, _MAX_LOG_RATE))
        return eta + (t - mu) / mu, mu

    init_params = no_own_parameter
    update_params = own_parameter_unchanged
    neg_log_lik = neg_log_lik_of_log_lik

    def observe(self, name, eta, y=None, params=None):
        """``t ~ Poisson(e^η)``."""
        return numpyro.sample(name, dist.Poisson(self.mean(eta)), obs=y)

    def sample(self, key, eta, params=None):
        """``t ~ Poisson(e^η)``."""
        return jax.random.poisson(key, self.mean(eta)).astype(jnp.result_type(float))
