"""The Bernoulli-logistic likelihood ``P(t = 1 | η) = σ(η)`` (Tipping 2001, Sec. 4), with the
Pólya-Gamma EM (Polson, Scott & Windle 2013)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from .registry import half_tanh_ratio, neg_log_lik_of_log_lik, no_own_parameter, own_parameter_unchanged


class BernoulliLogisticLikelihood(NamedTuple):
    """``P(t = 1 | η) = σ(η)``, ``σ(η) = 1/(1 + e^{−η})``, labels ``t ∈ {0, 1}`` (Tipping 2001, Sec. 4).

    The Laplace path of the type-II engine needs the log likelihood (in the stable ``log σ`` form),
    the mean ``σ(η)`` (the log posterior's gradient is ``Φᵀ(t − σ(η)) − V⁻¹w``) and the curvature
    ``b = σ(η)(1 − σ(η))`` (the diagonal of ``B`` in its Hessian ``−(ΦᵀBΦ + V⁻¹)``; Tipping 2001,
    Sec. 4). EM takes the Pólya-Gamma augmentation: ``p(t | η) ∝ e^{κη} ∫ e^{−ωη²/2} PG(ω | 1, 0) dω``
    with ``κ = t − ½`` (Polson, Scott & Windle 2013, Thm. 1), whose E-step ``E[ω | η] = tanh(η/2)/(2η)``
    gives a Gaussian surrogate in ``η`` below the log likelihood, touching it at the current ``η``
    (the Jaakkola-Jordan bound): EM on it is monotone.
    """

    #: What ``y`` is: "real", "counts" (nonnegative integers), "binary" (0/1) or "categorical" (one-hot).
    support = "binary"
    #: The registry name.
    name = "bernoulli_logistic"
    #: No parameter of its own.
    param_name = None
    #: The working weights ``E[ω_i]`` vary by row: EM forms ``HᵀWH`` each step.
    constant_weight = False
    #: The Pólya-Gamma surrogate minorizes the log likelihood: EM climbs its objective.
    monotone_em = True
    #: ``log σ`` is concave: ``curvature`` is ``−∂²/∂η² log p``.
    curvature_kind = "observed"

    @property
    def label(self):
        """A human-readable name of the likelihood (reports, plots)."""
        return "Bernoulli (logistic link)"

    def log_lik(self, t, eta, params=None):
        """``t log σ(η) + (1 − t) log σ(−η)`` per observation."""
        return t * jax.nn.log_sigmoid(eta) + (1.0 - t) * jax.nn.log_sigmoid(-eta)

    def score(self, t, eta, params=None):
        """``t − σ(η)``."""
        return t - jax.nn.sigmoid(eta)

    def mean(self, eta, params=None):
        """``E[t | η] = σ(η)``."""
        return jax.nn.sigmoid(eta)

    def variance(self, eta, params=None):
        """``σ(η)(1 − σ(η))``."""
        p = jax.nn.sigmoid(eta)
        return p * (1.0 - p)

    def curvature(self, t, eta, params=None):
        """``−∂²/∂η² log p(t | η) = σ(η)(1 − σ(η))``, free of ``t`` (canonical link)."""
        y = jax.nn.sigmoid(eta)
        return y * (1.0 - y)

    def init_target(self, t):
        """The logit of the labels smoothed into ``[0.05, 0.95]`` (finite where ``t`` is 0 or 1)."""
        p = 0.9 * t + 0.05
        return jnp.log(p / (1.0 - p))

    def em_working(self, t, eta, params=None):
        """``w = E[ω | η] = tanh(η/2)/(2η)`` and ``z = (t − ½)/w``: the surrogate ``−½ w (z − η')²`` is
        ``κη' − ½ w η'²`` up to a constant, below ``log p(t | η')`` and equal to it at ``η' = η``."""
        w = half_tanh_ratio(eta)
        return (t - 0.5) / w, w

    init_params = no_own_parameter
    update_params = own_parameter_unchanged
    neg_log_lik = neg_log_lik_of_log_lik

    def observe(self, name, eta, y=None, params=None):
        """``t ~ Bernoulli(σ(η))`` (logits)."""
        return numpyro.sample(name, dist.Bernoulli(logits=eta), obs=y)

    def sample(self, key, eta, params=None):
        """``t ~ Bernoulli(σ(η))``."""
        return jax.random.bernoulli(key, jax.nn.sigmoid(eta)).astype(jnp.result_type(float))

    def gibbs_augment(self, key, t, eta, params=None):
        """Polson, Scott & Windle's (2013) Pólya-Gamma draw for a Gibbs sweep, ``ω ~ PG(1, η)``,
        ``z = (t − ½)/ω``: :func:`sparsebayes.inference.engines.gibbs_augment.logistic_augment`."""
        from sparsebayes.inference.engines.gibbs_augment import logistic_augment

        return logistic_augment(key, t, eta)
