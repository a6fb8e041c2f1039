"""The Jeffreys hierarchy: ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3; 002 Sec. 3.2)."""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp


class JeffreysPrior(NamedTuple):
    """Gaussian scale mixture with the Jeffreys hyperprior ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3).

    Parameter-free. The marginal ``p(β_i) ∝ 1/|β_i|`` is improper (not integrable at 0):
    MAP estimation by EM is well defined, full-posterior sampling is not (NUTS runs on
    a labelled proper surrogate, see :mod:`sparsebayes.models.adaptive`).
    """

    #: The registry name.
    name = "jeffreys"
    #: No parameter with units: the MAP is equivariant under a rescaling of each column.
    scale_free = True

    def nuts_twin(self, surrogate_eps=None):
        """The twin's model arguments and label: the posterior is improper (``∏ 1/|β_i|`` is not
        integrable at 0), so there is nothing to sample but the labelled proper surrogate
        ``1/τ_i ~ Gamma(ε, ε)`` (:mod:`sparsebayes.models.adaptive`); ``ValueError`` without ``ε``."""
        if surrogate_eps is None:
            raise ValueError("the Jeffreys prior p(tau) ∝ 1/tau has no proper posterior, so there is nothing to "
                             "sample: pass surrogate_eps (e.g. 1e-3) to sample the labelled proper surrogate "
                             "1/tau ~ Gamma(eps, eps), or fit with prior='laplace' or 'horseshoe'")
        return dict(prior="jeffreys", surrogate_eps=float(surrogate_eps)), f"jeffreys-surrogate-eps={surrogate_eps:g}"

    def log_mixing_density(self, v):
        """``log p(τ_i = v) = −log v`` up to the (infinite) normalizer: improper."""
        return -jnp.log(v)

    def expected_inverse_variance(self, beta):
        """``E[τ_i⁻¹ | β_i] = 1/β_i²`` (000 eq. 15; 002 eq. 14)."""
        return 1.0 / beta**2

    def em_scale(self, beta):
        """``u_i = |β_i|`` (002 eq. 15, the matrix Θ)."""
        return jnp.abs(beta)

    def neg_log_prior(self, beta):
        """``Σ_{β_i ≠ 0} log|β_i|``: minus the log marginal on the active set (pruned weights excluded)."""
        nz = beta != 0
        return jnp.sum(jnp.where(nz, jnp.log(jnp.where(nz, jnp.abs(beta), 1.0)), 0.0))
