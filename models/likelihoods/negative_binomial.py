"""The negative-binomial likelihood with the log link: over-dispersed counts, ``Var = μ + μ²/r``."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax import lax
from jax.scipy.special import digamma, gammaln

from .registry import half_tanh_ratio, masked_sum, row_mask

#: The dispersion's update searches ``log r`` in this interval (``r`` at the top is the Poisson limit).
_LOG_R_RANGE = (np.log(1e-6), np.log(1e8))
#: The dispersion's prior ``r ~ Gamma(shape, rate)`` where it is sampled (NUTS twin and Gibbs).
DISPERSION_PRIOR = (1.0, 0.1)
#: Bisection steps of the dispersion's update (the interval shrinks by ``2⁻⁶⁰``).
_BISECTIONS = 60
#: The largest start :meth:`NegativeBinomialLikelihood.init_params` gives (its docstring says why).
START_MAX = 100.0


class NegativeBinomialLogLink(dist.Distribution):
    """``t ~ NB(μ = e^η, r)`` as a NumPyro distribution whose ``log_prob`` is
    :meth:`NegativeBinomialLikelihood.log_lik` (log-gamma and ``log σ`` terms, accurate to rounding)."""

    arg_constraints = {"eta": dist.constraints.real, "dispersion": dist.constraints.positive}
    support = dist.constraints.nonnegative_integer

    def __init__(self, eta, dispersion, *, validate_args=None):
        self.eta, self.dispersion = jnp.broadcast_arrays(jnp.asarray(eta), jnp.asarray(dispersion))
        super().__init__(batch_shape=jnp.shape(self.eta), validate_args=validate_args)

    def sample(self, key, sample_shape=()):
        """A predictive draw of ``y`` at ``η``."""
        shape = sample_shape + self.batch_shape
        return NegativeBinomialLikelihood().sample(key, jnp.broadcast_to(self.eta, shape), self.dispersion)

    def log_prob(self, value):
        return NegativeBinomialLikelihood().log_lik(value, self.eta, self.dispersion)


class NegativeBinomialLikelihood(NamedTuple):
    """``t ~ NB(μ = e^η, r)``: ``P(t) = Γ(t + r)/(Γ(r) t!) (r/(r + μ))^r (μ/(r + μ))^t``, mean ``μ``,
    variance ``μ + μ²/r``; its own parameter (``params``) is the dispersion (size) ``r``.

    In ``ψ = η − log r`` the likelihood is ``∝ e^{tψ}/(1 + e^ψ)^{t + r}``, a logistic form with ``t + r``
    trials, concave in ``η``. Its Pólya-Gamma augmentation (Polson, Scott & Windle 2013, Sec. 3;
    ``ω ~ PG(t + r, ψ)``, :meth:`polya_gamma_working`) gives a Gaussian surrogate below the log
    likelihood, but one far too curved where ``r ≫ μ`` (the weight ``E[ω] ≈ r/(2|ψ|)`` against the
    curvature ``≈ μ``: near-Poisson counts, where EM on it crawls and its stopping rule is fooled), so
    EM's working weights are Newton's (:meth:`em_working`, not a bound: ``monotone_em = False``, and
    the engine's step-halving keeps its objective rising).
    """

    #: What ``y`` is: "real", "counts" (nonnegative integers), "binary" (0/1) or "categorical" (one-hot).
    support = "counts"
    #: The registry name.
    name = "negative_binomial"
    #: What its own parameter is: the dispersion r.
    param_name = "dispersion"
    #: The working weights vary by row.
    constant_weight = False
    #: Newton's quadratic is an expansion, not a bound (the engine halves steps that would descend).
    monotone_em = False
    #: Log-concave in ``η``: ``curvature`` is ``−∂²/∂η² log p``.
    curvature_kind = "observed"

    @property
    def label(self):
        """A human-readable name of the likelihood (reports, plots)."""
        return "negative binomial (log link)"

    def log_lik(self, t, eta, params=1.0):
        """``log Γ(t + r) − log Γ(r) − log t! + t log σ(ψ) + r log σ(−ψ)``, ``ψ = η − log r``."""
        r = params
        psi = eta - jnp.log(r)
        return (gammaln(t + r) - gammaln(r) - gammaln(t + 1.0) + t * jax.nn.log_sigmoid(psi)
                + r * jax.nn.log_sigmoid(-psi))

    def score(self, t, eta, params=1.0):
        """``t − (t + r) σ(ψ)``."""
        return t - (t + params) * jax.nn.sigmoid(eta - jnp.log(params))

    def curvature(self, t, eta, params=1.0):
        """``(t + r) σ(ψ)(1 − σ(ψ))``."""
        p = jax.nn.sigmoid(eta - jnp.log(params))
        return (t + params) * p * (1.0 - p)

    def mean(self, eta, params=1.0):
        """``μ = e^η``."""
        return jnp.exp(eta)

    def variance(self, eta, params=1.0):
        """``μ + μ²/r``."""
        mu = jnp.exp(eta)
        return mu + mu * mu / params

    def init_target(self, t):
        """``log(t + ½)``: the log mean of the counts, finite at a zero count."""
        return jnp.log(t + 0.5)

    def em_working(self, t, eta, params=1.0):
        """Newton's working weights and response: ``w = curvature = (t + r) σ(ψ)(1 − σ(ψ))`` (positive:
        the log likelihood is concave in ``η``) and ``z = η + score/w``."""
        w = self.curvature(t, eta, params)
        return eta + self.score(t, eta, params) / w, w

    def polya_gamma_working(self, t, eta, params=1.0):
        """The Pólya-Gamma E-step's ``(z, w)``: ``w = E[ω] = (t + r) tanh(ψ/2)/(2ψ)``, ``z = (t − r)/(2w) + log r``;
        ``−½ w (z − η')²`` is ``κψ' − ½ w ψ'²`` (``κ = (t − r)/2``) up to a constant, a minorizer of the log
        likelihood touching it at ``η`` (the augmentation a Gibbs sampler would use)."""
        log_r = jnp.log(params)
        w = (t + params) * half_tanh_ratio(eta - log_r)
        return 0.5 * (t - params) / w + log_r, w

    def init_params(self, t):
        """A start of ``r``: the moments' ``mean²/(var − mean)`` in ``[10⁻³, START_MAX]``, and
        :data:`START_MAX` (100) when the counts are not over-dispersed.

        The cap is where a start need go no further: at ``r = 100`` the negative binomial's variance
        ``μ + μ²/r`` is within 1 % of the Poisson's for means up to 1, and the dispersion prior of the
        sampled models (:data:`DISPERSION_PRIOR`, Gamma(1, 0.1), mean 10) puts ``e^{-10}`` of its mass
        above it. It keeps the Gibbs engine's first sweeps short: its Pólya-Gamma draw
        ``PG(y + r, ·)`` sums ``y + r`` Devroye variates a row (a start at the Poisson limit, 10⁸,
        stalled it). EM loses nothing by it: its dispersion update (:meth:`update_params`) searches
        the whole of ``[10⁻⁶, 10⁸]`` from its first iteration, and so goes to the Poisson limit in one
        step where the likelihood rises all the way there."""
        t = np.asarray(t, dtype=np.float64)
        m, v = float(np.mean(t)), float(np.var(t))
        return float(np.clip(m * m / (v - m), 1e-3, START_MAX)) if v > m > 0 else START_MAX

    def _dispersion_score(self, t, mu, r, mask):
        """``∂/∂r Σ log p = Σ [ψ(t + r) − ψ(r) + log(r/(r + μ)) + (μ − t)/(r + μ)]`` (digamma ψ)."""
        return jnp.sum(mask * (digamma(t + r) - digamma(r) + jnp.log(r) - jnp.log(r + mu) + (mu - t) / (r + mu)))

    def update_params(self, t, eta, params, n_obs=None):
        """The dispersion maximizing the likelihood at ``η``: bisection on its score in ``log r`` over
        ``[1e-6, 1e8]`` (the top when the score stays positive: no over-dispersion), kept only where it
        raises the likelihood above the current ``r`` (so the step is a conditional maximization)."""
        mu, mask = jnp.exp(eta), row_mask(eta, n_obs)

        def bisect(_, bounds):
            lo, hi = bounds
            mid = 0.5 * (lo + hi)
            up = self._dispersion_score(t, mu, jnp.exp(mid), mask) > 0
            return jnp.where(up, mid, lo), jnp.where(up, hi, mid)

        lo, hi = lax.fori_loop(0, _BISECTIONS, bisect, (jnp.asarray(_LOG_R_RANGE[0], eta.dtype),
                                                        jnp.asarray(_LOG_R_RANGE[1], eta.dtype)))
        r = jnp.exp(0.5 * (lo + hi))
        better = masked_sum(self.log_lik(t, eta, r) * mask, None) >= masked_sum(self.log_lik(t, eta, params) * mask, None)
        return jnp.where(better, r, params)

    def neg_log_lik(self, t, eta, params, n_obs=None):
        """``−Σ log p(t_i | η_i, r)`` over the first ``n_obs`` rows."""
        return -masked_sum(self.log_lik(t, eta, params), n_obs)

    def sample_params(self):
        """The dispersion inside a NumPyro model: ``r ~ Gamma(1, 0.1)`` (shape, rate:
        :data:`DISPERSION_PRIOR`, the prior of :meth:`gibbs_param_step`, so NUTS and Gibbs sample one
        posterior), site :attr:`param_name`."""
        return numpyro.sample(self.param_name, dist.Gamma(*DISPERSION_PRIOR))

    def observe(self, name, eta, y=None, params=1.0):
        """``t ~ NB(e^η, r)`` (:class:`NegativeBinomialLogLink`: NumPyro's ``NegativeBinomial2`` takes
        ``log B`` by ``betaln``, 1e-6 off at these counts)."""
        return numpyro.sample(name, NegativeBinomialLogLink(eta, params), obs=y)

    def sample(self, key, eta, params=1.0):
        """A Gamma-Poisson draw: ``λ ~ Gamma(r, r/μ)``, ``t ~ Poisson(λ)``."""
        k1, k2 = jax.random.split(key)
        lam = jax.random.gamma(k1, params, jnp.shape(eta)) * jnp.exp(eta) / params
        return jax.random.poisson(k2, lam).astype(jnp.result_type(float))

    def gibbs_augment(self, key, t, eta, params=1.0):
        """The Pólya-Gamma draw for a Gibbs sweep, ``ω ~ PG(t + r, η − log r)``,
        ``z = (t − r)/(2ω) + log r``: :func:`sparsebayes.inference.engines.gibbs_augment.negative_binomial_augment`."""
        from sparsebayes.inference.engines.gibbs_augment import negative_binomial_augment

        return negative_binomial_augment(key, t, eta, params)

    def gibbs_param_step(self, key, t, eta, params, omega=None):
        """The dispersion's move given ``η`` (``ω`` unused: ``r`` moves under its conditional with ``ω``
        integrated out, and ``ω`` is drawn afresh next sweep), under the Gamma(1, 0.1) prior
        (:data:`DISPERSION_PRIOR`) bounded at ``r ≤ 10³`` (prior mass ``e^{-100}`` above): a slice
        update of ``log r``, :func:`sparsebayes.inference.engines.gibbs_augment.negative_binomial_concentration_step`."""
        from sparsebayes.inference.engines.gibbs_augment import negative_binomial_concentration_step

        shape, rate = DISPERSION_PRIOR
        return negative_binomial_concentration_step(key, t, eta, params, prior_shape=shape, prior_rate=rate)[0]
