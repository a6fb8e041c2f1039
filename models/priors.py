"""Hierarchical sparsity priors as small pytree objects (one object per prior, no engine changes).

Both priors put ``β_i | τ_i ~ N(0, τ_i)`` (002 eq. 9) and differ in the hyperprior on τ_i:

* :class:`LaplacePrior`: ``τ_i ~ Exp`` with density ``(γ/2) exp(-γ τ_i / 2)`` (002 eq. 10),
  whose marginal is the Laplacian ``(√γ/2) exp(-√γ |β_i|)`` (002 Sec. 3.1);
* :class:`JeffreysPrior`: ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3; 002 Sec. 3.2), parameter-free,
  with the improper marginal ``p(β_i) ∝ 1/|β_i|``.

What the EM engine needs from a prior is the E-step weight ``ω_i = E[τ_i⁻¹ | β_i]`` in the
finite form ``ω_i = 1 / u_i²`` with ``u_i`` a *scale* that vanishes with ``β_i`` (the
``U = diag(|β|)`` trick of 000 "An Important Implementation Detail", 002 eqs. 15–16), so
that the M-step never divides by a vanishing weight.

Note on 002 eq. 12: the paper prints ``ω_i = γ |β_i|⁻¹``; integrating the exponential
hyperprior (002 eq. 10) gives ``√γ |β_i|⁻¹`` (a GIG(½, γ, β²) posterior on τ_i), consistent
with the marginal ``(√γ/2) exp(-√γ|β|)`` printed right above it. We use ``√γ`` (a test checks
the closed form against numerical integration over τ).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from sparsebayes.models._checks import check_number


class LaplacePrior(NamedTuple):
    """Gaussian scale mixture with exponential variances: the Laplacian prior (002 eqs. 9–10).

    Parameters
    ----------
    gamma : float
        Rate parameter of the exponential hyperprior ``p(τ) = (γ/2) exp(-γ τ/2)``; the
        marginal on ``β_i`` is Laplacian with ``l1`` weight ``√γ``.
    """

    gamma: float = 1.0

    def expected_inverse_variance(self, beta):
        """``E[τ_i⁻¹ | β_i] = √γ / |β_i|`` (002 eq. 12, see the module note)."""
        return jnp.sqrt(self.gamma) / jnp.abs(beta)

    def em_scale(self, beta):
        """``u_i`` with ``E[τ_i⁻¹ | β_i] = 1/u_i²``: ``u_i = |β_i|^{1/2} γ^{-1/4}``; 0 at ``β_i = 0``."""
        return jnp.sqrt(jnp.abs(beta)) * self.gamma ** (-0.25)

    def neg_log_prior(self, beta):
        """``√γ ‖β‖₁`` (minus the log Laplacian marginal, constants dropped)."""
        return jnp.sqrt(self.gamma) * jnp.sum(jnp.abs(beta))


class JeffreysPrior(NamedTuple):
    """Gaussian scale mixture with the Jeffreys hyperprior ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3).

    Parameter-free. The marginal ``p(β_i) ∝ 1/|β_i|`` is improper (not integrable at 0):
    MAP estimation by EM is well defined, full-posterior sampling is not (NUTS runs on
    a labelled proper surrogate, see :mod:`sparsebayes.models.adaptive`).
    """

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


def make_prior(name, gamma=1.0):
    """``"jeffreys"`` or ``"laplace"`` to a prior object; anything else is a ``ValueError``."""
    if name == "jeffreys":
        return JeffreysPrior()
    if name == "laplace":
        check_number("gamma (the Laplace prior's)", gamma, 0.0, strict=True)
        return LaplacePrior(float(gamma))
    raise ValueError(f"prior must be 'jeffreys' or 'laplace', got {name!r}")


def variance_of_precision(precision):
    """``1 / precision`` for the NumPyro models' precision hyperpriors, finite for every draw.

    A ``Gamma(ε, ε)`` surrogate (ε = 1e-3) draws a precision that underflows to 0 about half the
    time, and ``1/0`` made the prior draw NaN: ArviZ traces the model with such a draw when it
    converts NUTS output, so ``run_nuts`` failed on the Jeffreys surrogate and the RVM models. A
    precision below the smallest normal float is read as that float (a variance ≈ 4.5e307);
    NUTS itself works on the log precision and never meets it, and elsewhere this is ``1/precision``.
    """
    return 1.0 / jnp.maximum(precision, jnp.finfo(jnp.result_type(precision)).tiny)
