"""Likelihoods for the EM engine: Gaussian regression and probit classification.

Each likelihood gives the E-step on the latent targets (``expected_targets``), the noise
update (``noise_update``) and ``neg_log_lik``, so the engine is likelihood-agnostic.
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax.scipy.special import log_ndtr

_LOG_SQRT_2PI = 0.5 * jnp.log(2.0 * jnp.pi)


class GaussianLikelihood(NamedTuple):
    """``y = Hβ + w``, ``w ~ N(0, σ² I)``, flat prior on σ² (000 Sec. 3)."""

    def expected_targets(self, y, eta):
        """No latent variables: the targets are the data."""
        return y

    def noise_update(self, y, eta):
        """``σ² = ‖y − Hβ‖² / n`` (000 eq. 12)."""
        r = y - eta
        return jnp.dot(r, r) / y.shape[0]

    def neg_log_lik(self, y, eta, noise_var):
        """``n/2 log σ² + ‖y − Hβ‖² / (2σ²)`` (constants dropped)."""
        r = y - eta
        return 0.5 * y.shape[0] * jnp.log(noise_var) + 0.5 * jnp.dot(r, r) / noise_var


def probit_mills_ratio(s, eta):
    """``φ(η) / Φ(sη)`` for signs ``s = ±1``, computed in log space (finite for |η| ≫ 1)."""
    return jnp.exp(-0.5 * eta**2 - _LOG_SQRT_2PI - log_ndtr(s * eta))


class ProbitLikelihood(NamedTuple):
    """``P(y = 1 | x) = Φ(βᵀh(x))`` with latent ``z = Hβ + w``, ``w ~ N(0, I)`` (002 Sec. 2).

    Labels are 0/1; the unit noise variance is fixed (002 eq. 3).
    """

    def expected_targets(self, y, eta):
        """``v_i = E[z_i | β, y_i]`` (002 eq. 6): ``η + φ(η)/Φ(η)`` if ``y=1``, ``η − φ(η)/Φ(−η)`` if ``y=0``.

        The Mills ratio is evaluated in log space (``log_ndtr``), so ``|η| = 40`` stays finite.
        """
        s = 2.0 * y - 1.0
        return eta + s * probit_mills_ratio(s, eta)

    def noise_update(self, y, eta):
        """The probit latent noise has unit variance (002 eq. 3)."""
        return jnp.ones((), dtype=eta.dtype)

    def neg_log_lik(self, y, eta, noise_var):
        """``−Σ log Φ(s_i η_i)``, ``s_i = 2y_i − 1``."""
        return -jnp.sum(log_ndtr((2.0 * y - 1.0) * eta))
