"""The MAP penalties of multinomial logistic regression as pure functions (Krishnapuram et al. 2005, Sec. 3).

The bound-optimization engine (:mod:`sparsebayes.inference.engines.bound`) maximizes ``ℓ(W) − penalty(W)``
through Böhning's quadratic bound ``B`` (003 eqs. 6, 8). What it needs of a penalty is its
component-wise maximizer of the surrogate (eqs. 15–16), its block maximizer (eqs. 7, 10, 13), the
pieces of a Newton step on the free weights, and the distance of the gradient to its
(sub)differential. The hierarchy objects own these pieces as methods (the ``"bound"`` capability of
:data:`sparsebayes.models.priors.CAPABILITIES`); the math lives here once, in the weights' units:

* l1, ``λ‖w‖₁`` (eq. 3, the Laplace prior, SMLR);
* l2, ``λ‖w‖²/2`` (Sec. 3.3, the Gaussian prior, RMLR; λ = 0 is maximum likelihood, Sec. 3.2).

``coef`` is the ``d × (m−1)`` matrix ``W``; ``bound`` a :class:`~sparsebayes.models.likelihoods.multinomial.BohningBound`.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.linalg import cho_factor, cho_solve


def soft_threshold(a, delta):
    """``soft(a; δ) = sign(a) max(0, |a| − δ)`` (Sec. 3.5)."""
    return jnp.sign(a) * jnp.maximum(jnp.abs(a) - delta, 0.0)


def l1_coordinate_update(z, b_kk, lam):
    """``soft(z; −λ/B_kk)`` with ``z = w_k − g_k/B_kk`` (eq. 15): the maximizer along one coordinate."""
    return soft_threshold(z, -lam / b_kk)


def l1_block_update(coef, rhs, bound, lam):
    """``Υ(ΥBΥ − λI)⁻¹Υ(Bw − g)``, ``Υ = diag|w|^½`` (eq. 13); ``rhs = Bw − g``.

    Solved as ``−Υ(λI − ΥBΥ)⁻¹Υ rhs`` with a Cholesky factor of the positive definite
    ``λI − ΥBΥ``; no ``1/|w|`` appears, so zero weights stay exactly zero. Needs the dense
    ``bound.matrix``. The weights are stacked class-major (``vec(W)``, the order of eq. 8's
    Kronecker product).
    """
    d = coef.shape[0]
    u = jnp.sqrt(jnp.abs(coef.T.reshape(-1)))
    M = lam * jnp.eye(u.size) - u[:, None] * bound.matrix * u[None, :]
    step = -u * cho_solve(cho_factor(M, lower=True), u * rhs.T.reshape(-1))
    return step.reshape(-1, d).T


def l1_newton_terms(coef, lam):
    """Free weights, penalty gradient and curvature on them, and the orthant (signs).

    The nonzero weights are free and keep their signs ``σ``; on that orthant the penalty is
    ``λ σᵀw``. Zero weights stay zero (another step decides which enter).
    """
    sign = jnp.sign(coef)
    return sign != 0, lam * sign, jnp.zeros_like(coef), sign


def orthant_project(coef, orthant):
    """Zero the weights that left their orthant (changed sign, or were not free)."""
    return jnp.where(coef * orthant > 0, coef, 0.0)


def l1_residual(coef, grad, lam):
    """Distance of ``g`` to ``λ ∂‖w‖₁`` per coefficient (zero at the MAP estimate)."""
    at_zero = jnp.maximum(jnp.abs(grad) - lam, 0.0)
    return jnp.where(coef == 0, at_zero, jnp.abs(grad - lam * jnp.sign(coef)))


def l2_penalty(coef, lam):
    """``λ‖w‖²/2``."""
    return 0.5 * lam * jnp.sum(coef * coef)


def l2_coordinate_update(z, b_kk, lam):
    """``B_kk/(B_kk − λ) · z`` (eq. 16; ``z`` itself, eq. 15 with λ = 0, for maximum likelihood)."""
    return b_kk / (b_kk - lam) * z


def l2_block_update(rhs, bound, lam):
    """``(B − λI)⁻¹(Bw − g)`` (eq. 10; eq. 7 at λ = 0) with the precomputed eigenbasis of ``B``."""
    return bound.solve_shifted(rhs, lam)


def l2_newton_terms(coef, lam):
    """Every weight free; penalty gradient ``λw`` and curvature ``λ``; no orthant."""
    return jnp.ones(coef.shape, bool), lam * coef, jnp.full(coef.shape, lam, dtype=coef.dtype), None


def l2_residual(coef, grad, lam):
    """``|g − λw|`` per coefficient."""
    return jnp.abs(grad - lam * coef)
