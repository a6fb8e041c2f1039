"""Likelihoods: Gaussian regression and probit classification for the EM engine; the
Bernoulli-logistic and Poisson (log link) likelihoods for the type-II engine's Laplace path.

For EM each likelihood gives the E-step on the latent targets (``expected_targets``), the noise
update (``noise_update``) and ``neg_log_lik``, so the engine is likelihood-agnostic.

For the sequential type-II engine's Laplace path (:mod:`sparsebayes.inference.typeii_laplace`)
a likelihood of a generalized linear model with canonical link gives what the Gaussian
linearization at the posterior mode needs (Tipping 2001, Sec. 4; Tipping & Faul 2003, Sec. 5):
``log_lik(t, eta)`` per observation, the mean ``mean(eta)`` (the gradient of the log likelihood
in ``η`` is ``t − mean(η)``), the curvature weights ``curvature(t, eta) = −∂²/∂η² log p(t | η)``
(the diagonal of ``B``), and ``init_target(t)``, a finite stand-in for ``η`` from which the engine
picks its first basis function.

Each likelihood is one object with a registry ``name`` in :data:`LIKELIHOODS` (the multinomial
logistic one, :class:`~sparsebayes.models.multinomial.MultinomialLogisticLikelihood`, lives with
its bound); an engine says the pieces it needs in :data:`LIKELIHOOD_CAPABILITIES` and checks them
once with :func:`require_likelihood`, which names the likelihood and the missing piece.

``n_obs`` (optional, may be traced): only the first ``n_obs`` rows are data. The engine pads
the rest to a shared array size (:func:`sparsebayes.inference.em.fit_em`) with zero rows of the
design, so ``η = 0`` and ``y = 0`` there; those rows must add nothing to the noise update or to
the likelihood.
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import jax
from jax import lax
from jax.scipy.special import gammaln, log_ndtr
from scipy import special

from ._registry import able, missing_pieces, registrar

#: ``exp(z²) erfc(z)`` is taken directly up to here and by its asymptotic series above. erfc
#: underflows near z = 26.55, before exp(z²) overflows (26.64); ``jax.scipy.special.erfcx``
#: switches at 26.64 and returns 0 in between (JAX 0.10), so the switch here comes earlier.
_ERFCX_SERIES_FROM = 26.0
#: Terms ``(−1)ᵏ (2k − 1)!! / 2ᵏ`` of ``√π z erfcx(z) ~ Σ_k c_k z⁻²ᵏ``, k = 0..8, highest first;
#: at z = 26 the first omitted term is below 1e-20.
_ERFCX_SERIES = np.array([(-1) ** k * np.prod(np.arange(1, 2 * k, 2, dtype=float)) / 2.0**k for k in range(9)])[::-1]


#: The registered likelihoods by name (:func:`register_likelihood`).
LIKELIHOODS = {}

#: What each engine asks of a likelihood: EM's E-step on the latent targets, noise update and
#: objective; the type-II engine's Laplace path (log likelihood, mean and curvature in ``η``, a
#: start); the bound engine's log-normalizer and Böhning's bound (003 eq. 8).
LIKELIHOOD_CAPABILITIES = {
    "em": ("expected_targets", "noise_update", "neg_log_lik"),
    "laplace": ("log_lik", "mean", "curvature", "init_target"),
    "bound": ("log_normalizer", "bohning_bound"),
}


#: Add a likelihood class to :data:`LIKELIHOODS` under its ``name`` (a decorator).
register_likelihood = registrar(LIKELIHOODS, "likelihood")


def require_likelihood(likelihood, engine):
    """``likelihood`` if it has every piece ``engine`` needs (:data:`LIKELIHOOD_CAPABILITIES`), else a
    ``ValueError`` naming the likelihood, the missing pieces and the registered likelihoods that have them."""
    if engine not in LIKELIHOOD_CAPABILITIES:
        raise ValueError(f"engine must be one of {sorted(LIKELIHOOD_CAPABILITIES)}, got {engine!r}")
    pieces = LIKELIHOOD_CAPABILITIES[engine]
    missing = missing_pieces(likelihood, pieces)
    if missing:
        raise ValueError(f"{type(likelihood).__name__} has no {', '.join(missing)}: the {engine!r} engine needs "
                         f"{', '.join(pieces)}; likelihoods that have them: {', '.join(able(LIKELIHOODS, pieces))}")
    return likelihood


@register_likelihood
class GaussianLikelihood(NamedTuple):
    """``y = Hβ + w``, ``w ~ N(0, σ² I)``, flat prior on σ² (000 Sec. 3)."""

    #: The registry name.
    name = "gaussian"

    def expected_targets(self, y, eta):
        """No latent variables: the targets are the data."""
        return y

    def noise_update(self, y, eta, n_obs=None):
        """``σ² = ‖y − Hβ‖² / n`` (000 eq. 12); padding rows have zero residuals."""
        r = y - eta
        return jnp.dot(r, r) / (y.shape[0] if n_obs is None else n_obs)

    def neg_log_lik(self, y, eta, noise_var, n_obs=None):
        """``n/2 log σ² + ‖y − Hβ‖² / (2σ²)`` (constants dropped)."""
        r = y - eta
        n = y.shape[0] if n_obs is None else n_obs
        return 0.5 * n * jnp.log(noise_var) + 0.5 * jnp.dot(r, r) / noise_var


def scaled_erfc(z):
    """``erfcx(z) = exp(z²) erfc(z)``, the direct product up to z = 26 and the asymptotic series above.

    Below z ≈ −26.6 the value overflows to ``inf``, as the true value does (callers divide by it).
    """
    series = z > _ERFCX_SERIES_FROM
    z_direct = jnp.where(series, 0.0, z)
    direct = jnp.exp(z_direct * z_direct) * lax.erfc(z_direct)
    z_series = jnp.where(series, z, _ERFCX_SERIES_FROM)
    asymptotic = jnp.polyval(_ERFCX_SERIES, 1.0 / (z_series * z_series)) / (np.sqrt(np.pi) * z_series)
    return jnp.where(series, asymptotic, direct)


def probit_mills_ratio(s, eta, erfcx=scaled_erfc):
    """``φ(η) / Φ(sη)`` for signs ``s = ±1``, as ``√(2/π) / erfcx(−sη/√2)``.

    The scaled form never forms the vanishing φ or Φ, so, like the log-space form
    ``exp(log φ − log_ndtr)`` it replaces, it is finite for |η| ≫ 1 (and 0 where the ratio
    underflows); it is more accurate (2e-13 relative against 4e-9 over |η| ≤ 80) and costs
    about a fifth as much. ``erfcx``: :func:`scaled_erfc` (JAX, jit-able), or SciPy's
    ``scipy.special.erfcx`` for NumPy arrays outside jit (no JAX dispatch per operation).
    """
    return np.sqrt(2.0 / np.pi) / erfcx(-s * eta / np.sqrt(2.0))


@register_likelihood
class ProbitLikelihood(NamedTuple):
    """``P(y = 1 | x) = Φ(βᵀh(x))`` with latent ``z = Hβ + w``, ``w ~ N(0, I)`` (002 Sec. 2).

    Labels are 0/1; the unit noise variance is fixed (002 eq. 3).
    """

    #: The registry name.
    name = "probit"

    #: σ² of the latent ``z`` (002 eq. 3), which :func:`sparsebayes.inference.em.fit_em` uses
    #: whatever ``noise_var`` it is given (a likelihood without it has σ² free).
    fixed_noise_var = 1.0

    def expected_targets(self, y, eta):
        """``v_i = E[z_i | β, y_i]`` (002 eq. 6): ``η + φ(η)/Φ(η)`` if ``y=1``, ``η − φ(η)/Φ(−η)`` if ``y=0``.

        The Mills ratio is evaluated in scaled form (:func:`probit_mills_ratio`), so ``|η| = 40``
        stays finite and correct; log Φ itself (the objective) is ``log_ndtr``.
        """
        s = 2.0 * y - 1.0
        return eta + s * probit_mills_ratio(s, eta)

    def noise_update(self, y, eta, n_obs=None):
        """The probit latent noise has unit variance (002 eq. 3)."""
        return jnp.ones((), dtype=eta.dtype)

    def neg_log_lik(self, y, eta, noise_var, n_obs=None):
        """``−Σ log Φ(s_i η_i)``, ``s_i = 2y_i − 1``, over the first ``n_obs`` rows."""
        terms = log_ndtr((2.0 * y - 1.0) * eta)
        if n_obs is not None:
            terms = jnp.where(jnp.arange(y.shape[0]) < n_obs, terms, 0.0)
        return -jnp.sum(terms)

    def curvature(self, y, eta):
        """``w_i = −∂²/∂η² log Φ(s_i η_i)``, ``s_i = 2y_i − 1``: the weights of the likelihood's Hessian
        ``−HᵀWH`` in β. NumPy, for use outside jit (the Laplace approximation at a fit).

        With ``m = φ(η)/Φ(sη)`` (:func:`probit_mills_ratio`), ``w = m(m + sη)``, one minus the variance
        of the latent ``z | y`` (002 eq. 6's truncated Gaussian), so ``0 < w < 1``; the clip keeps that
        where ``m + sη`` cancels (``sη ≪ 0``: 4e-13 relative at ``sη = −40``).
        """
        y, eta = np.asarray(y, dtype=np.float64), np.asarray(eta, dtype=np.float64)
        s = 2.0 * y - 1.0
        m = probit_mills_ratio(s, eta, erfcx=special.erfcx)
        return np.clip(m * (m + s * eta), 0.0, 1.0)


@register_likelihood
class BernoulliLogisticLikelihood(NamedTuple):
    """``P(t = 1 | η) = σ(η)``, ``σ(η) = 1/(1 + e^{−η})``, labels ``t ∈ {0, 1}`` (Tipping 2001, Sec. 4).

    The Laplace path of the type-II engine needs the log likelihood (in the stable ``log σ`` form),
    the mean ``σ(η)`` (the log posterior's gradient is ``Φᵀ(t − σ(η)) − V⁻¹w``) and the curvature
    ``b = σ(η)(1 − σ(η))`` (the diagonal of ``B`` in its Hessian ``−(ΦᵀBΦ + V⁻¹)``; Tipping 2001,
    Sec. 4).
    """

    #: The registry name.
    name = "bernoulli_logistic"

    def log_lik(self, t, eta):
        """``t log σ(η) + (1 − t) log σ(−η)`` per observation."""
        return t * jax.nn.log_sigmoid(eta) + (1.0 - t) * jax.nn.log_sigmoid(-eta)

    def mean(self, eta):
        """``E[t | η] = σ(η)``."""
        return jax.nn.sigmoid(eta)

    def curvature(self, t, eta):
        """``−∂²/∂η² log p(t | η) = σ(η)(1 − σ(η))``, free of ``t`` (canonical link)."""
        y = jax.nn.sigmoid(eta)
        return y * (1.0 - y)

    def init_target(self, t):
        """The logit of the labels smoothed into ``[0.05, 0.95]`` (finite where ``t`` is 0 or 1)."""
        p = 0.9 * t + 0.05
        return jnp.log(p / (1.0 - p))


#: ``η`` is capped here inside ``exp``: ``e^709`` is the largest finite double, and a Newton trial
#: step far out must give a finite (very low) log likelihood, not ``inf − inf``.
_MAX_LOG_RATE = 700.0


@register_likelihood
class PoissonLikelihood(NamedTuple):
    """``t ~ Poisson(e^η)``, counts ``t ∈ {0, 1, 2, …}``, the log link (Tipping's SparseBayes
    Poisson model; Tipping & Faul 2003, Sec. 5, with the Poisson log likelihood in place of the
    Bernoulli one).

    ``log p(t | η) = tη − e^η − log t!``; the mean and the curvature are both ``e^η`` (the log is
    the canonical link, so the curvature is free of ``t`` and the log posterior is concave).
    """

    #: The registry name.
    name = "poisson"

    def log_lik(self, t, eta):
        """``tη − e^η − log Γ(t + 1)`` per observation."""
        return t * eta - self.mean(eta) - gammaln(t + 1.0)

    def mean(self, eta):
        """``E[t | η] = e^η`` (``η`` capped at :data:`_MAX_LOG_RATE`)."""
        return jnp.exp(jnp.minimum(eta, _MAX_LOG_RATE))

    def curvature(self, t, eta):
        """``−∂²/∂η² log p(t | η) = e^η``."""
        return self.mean(eta)

    def init_target(self, t):
        """``log(t + ½)``: the log rate of the counts, finite at a zero count."""
        return jnp.log(t + 0.5)


from sparsebayes.models import multinomial as _multinomial  # noqa: E402,F401  (registers the multinomial likelihood)
