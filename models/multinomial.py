"""Multinomial logistic regression with the last class as reference (Krishnapuram et al. 2005).

The model (003 eq. 1): for ``m`` classes and ``d`` basis functions ``x``,

    P(y = i | x, W) = exp(w_iᵀ x) / Σ_j exp(w_jᵀ x),     w_m ≡ 0,

so the parameters are the ``d × (m−1)`` matrix ``W`` (``coef`` below; column ``i`` is
``w_i``).  The paper stacks the columns into one vector ``w`` of length ``d(m−1)``
(class-major: ``w = vec(W)``), which is the order :func:`flatten` uses and the order of the
Kronecker products in the Hessian and in Böhning's bound (eq. 8).

Labels enter as ``Y1``: the ``n × (m−1)`` one-hot indicators of the first ``m−1`` classes
(the paper's ``y'_j``); a row of zeros is the reference class.

Priors (MAP penalties, 003 Sec. 3.3–3.4) are small pytree NamedTuples:

* :class:`LaplacePrior` ``p(w) ∝ exp(−λ‖w‖₁)`` (eq. 3, SMLR),
* :class:`GaussianPrior` ``p(w) ∝ exp(−λ‖w‖²/2)`` (Sec. 3.3, RMLR),
* :class:`FlatPrior` (maximum likelihood, Sec. 3.2),

each carrying the closed-form pieces the bound-optimization engine needs: the
component-wise maximizer of the surrogate (eqs. 15–16), the block maximizer (eqs. 7, 10,
13) and the distance of the gradient to the prior's (sub)differential, the first-order
optimality residual.  :func:`multinomial_logistic_model` writes the same hierarchy as a
NumPyro model for NUTS.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

import sparsebayes  # noqa: F401  (float64)

# ---------------------------------------------------------------------------------------
# Likelihood: value, gradient (eq. 9), Hessian and Böhning's bound (eq. 8)
# ---------------------------------------------------------------------------------------


def flatten(coef):
    """``vec(W)``: the paper's ``d(m−1)`` parameter vector, class-major (``[w_1; …; w_{m−1}]``)."""
    return jnp.asarray(coef).T.reshape(-1)


def unflatten(w, n_features):
    """Inverse of :func:`flatten`: ``d × (m−1)`` matrix from the stacked vector."""
    return jnp.asarray(w).reshape(-1, n_features).T


def one_hot_reference(y, n_classes):
    """``Y1``: indicators of the first ``m−1`` classes for integer labels in ``0..m−1``."""
    y = jnp.asarray(y)
    return (y[:, None] == jnp.arange(n_classes - 1)[None, :]).astype(jnp.float64)


def log_normalizer(eta):
    """``log(1 + Σ_i exp(η_i))`` row-wise: the reference class contributes ``exp(0)``."""
    zeros = jnp.zeros(eta.shape[:-1] + (1,), dtype=eta.dtype)
    return jax.nn.logsumexp(jnp.concatenate([eta, zeros], axis=-1), axis=-1)


def class_probabilities(coef, X):
    """All ``m`` class probabilities (eq. 1), ``n × m``; the last column is the reference class."""
    eta = X @ coef
    zeros = jnp.zeros(eta.shape[:-1] + (1,), dtype=eta.dtype)
    return jax.nn.softmax(jnp.concatenate([eta, zeros], axis=-1), axis=-1)


def log_likelihood(coef, X, Y1):
    """``ℓ(W) = Σ_j [Σ_i y_j^(i) w_iᵀx_j − log Σ_i exp(w_iᵀx_j)]`` (eq. 2)."""
    eta = X @ coef
    return jnp.sum(Y1 * eta) - jnp.sum(log_normalizer(eta))


def gradient(coef, X, Y1):
    """``g(W) = Σ_j (y'_j − p_j(W)) ⊗ x_j`` (eq. 9), returned as a ``d × (m−1)`` matrix."""
    eta = X @ coef
    P = jnp.exp(eta - log_normalizer(eta)[:, None])
    return X.T @ (Y1 - P)


def hessian(coef, X):
    """``H(W) = −Σ_j (P_j − p_j p_jᵀ) ⊗ x_j x_jᵀ`` (Sec. 3.2), ``d(m−1)`` square, class-major."""
    eta = X @ coef
    P = jnp.exp(eta - log_normalizer(eta)[:, None])
    cov = jax.vmap(lambda p: jnp.diag(p) - jnp.outer(p, p))(P)  # n × (m−1) × (m−1)
    return -jnp.einsum("jab,jk,jl->akbl", cov, X, X).reshape(coef.size, coef.size)


def bound_class_factor(n_classes):
    """``½[I − 11ᵀ/m]`` of size ``m−1``: the class part of Böhning's bound (eq. 8)."""
    k = n_classes - 1
    return 0.5 * (jnp.eye(k) - jnp.ones((k, k)) / n_classes)


def bohning_bound(X, n_classes):
    """``B = −½[I − 11ᵀ/m] ⊗ Σ_j x_j x_jᵀ`` (eq. 8): ``H(W) ⪰ B`` for every ``W``."""
    return -jnp.kron(bound_class_factor(n_classes), X.T @ X)


def bound_diagonal(X, n_classes):
    """``B_kk`` for every coefficient, as a ``d × (m−1)`` matrix (all entries equal per row).

    An all-zero column (padding) gets ``B_kk = −1`` instead of 0: its gradient is 0, so the
    component-wise update keeps its weight at exactly 0 rather than dividing 0 by 0.
    """
    d = X.shape[1]
    col = -0.5 * (1.0 - 1.0 / n_classes) * jnp.sum(X * X, axis=0)
    col = jnp.where(col == 0, -1.0, col)
    return jnp.broadcast_to(col[:, None], (d, n_classes - 1))


class BohningBound(NamedTuple):
    """Precomputed pieces of ``B = −K ⊗ S``, ``K = ½[I − 11ᵀ/m]``, ``S = Σ_j x_j x_jᵀ`` (eq. 8).

    ``diag`` holds ``B_kk`` (``d × (m−1)``) for the component-wise update (eqs. 15–16);
    the eigenpairs of ``S`` and ``K`` give ``(B − λI)⁻¹`` in ``O(d²m)`` per solve, so the ML
    (eq. 7) and RMLR (eq. 10) block iterations never refactor; ``matrix`` (the dense ``B``,
    only when ``dense=True``) serves the SMLR block update (eq. 13), which must refactor.
    """

    diag: jax.Array
    gram: jax.Array
    class_factor: jax.Array
    gram_eigvals: jax.Array
    gram_eigvecs: jax.Array
    class_eigvals: jax.Array
    class_eigvecs: jax.Array
    matrix: jax.Array | None

    @classmethod
    def from_data(cls, X, n_classes, *, dense=False, eigen=True):
        """The bound's pieces for the design ``X`` (``n × d``) and ``n_classes`` classes (eq. 8).

        ``eigen=False`` skips the eigendecomposition of ``S`` (only the block iterations, eqs. 7
        and 10, solve with it); ``dense=True`` also forms the dense ``B`` for the SMLR block
        update (eq. 13).
        """
        X = jnp.asarray(X)
        K = bound_class_factor(n_classes)
        S = X.T @ X
        k_vals, k_vecs = jnp.linalg.eigh(K)
        if eigen:
            s_vals, s_vecs = jnp.linalg.eigh(S)
        else:
            s_vals, s_vecs = jnp.zeros(0), jnp.zeros((0, 0))
        matrix = -jnp.kron(K, S) if dense else None
        return cls(bound_diagonal(X, n_classes), S, K, s_vals, s_vecs, k_vals, k_vecs, matrix)

    def apply(self, coef):
        """``B vec(W)`` as a ``d × (m−1)`` matrix: ``−S W K``."""
        return -self.gram @ coef @ self.class_factor

    def solve_shifted(self, rhs, lam):
        """``(B − λI)⁻¹ vec(R)`` for ``R = rhs`` (``d × (m−1)``), by the Kronecker eigenbasis."""
        R = self.gram_eigvecs.T @ rhs @ self.class_eigvecs
        # S = XᵀX ⪰ 0: eigenvalues that rounding made negative (−9e-15 on a rank-deficient RBF basis)
        # or left at rounding level are zero, and their directions take the pseudo-inverse (numpy's
        # pinv cutoff, size × eps of the largest); a negative one turned the ML step uphill
        s_vals = jnp.maximum(self.gram_eigvals, 0.0)
        denom = -s_vals[:, None] * self.class_eigvals[None, :] - lam
        null = jnp.abs(denom) <= s_vals.size * jnp.finfo(denom.dtype).eps * jnp.max(jnp.abs(denom))
        R = jnp.where(null, 0.0, R / jnp.where(null, 1.0, denom))
        return self.gram_eigvecs @ R @ self.class_eigvecs.T


# ---------------------------------------------------------------------------------------
# Priors: penalty, component-wise and block maximizers of the surrogate, optimality residual
# ---------------------------------------------------------------------------------------


def soft_threshold(a, delta):
    """``soft(a; δ) = sign(a) max(0, |a| − δ)`` (Sec. 3.5)."""
    return jnp.sign(a) * jnp.maximum(jnp.abs(a) - delta, 0.0)


def _solve_psd(M, b):
    """``M⁻¹ b`` for symmetric positive definite ``M`` by a Cholesky factor."""
    factor = jax.scipy.linalg.cho_factor(M, lower=True)
    return jax.scipy.linalg.cho_solve(factor, b)


class LaplacePrior(NamedTuple):
    """``p(w) ∝ exp(−λ‖w‖₁)`` (eq. 3): SMLR's l1 penalty.

    Parameters
    ----------
    lam : float
        The prior parameter ``λ > 0``.
    """

    lam: float

    def penalty(self, coef):
        """``λ‖w‖₁``."""
        return self.lam * jnp.sum(jnp.abs(coef))

    def coordinate_update(self, z, b_kk):
        """``soft(z; −λ/B_kk)`` with ``z = w_k − g_k/B_kk`` (eq. 15)."""
        return soft_threshold(z, -self.lam / b_kk)

    def block_update(self, coef, rhs, bound):
        """``Υ(ΥBΥ − λI)⁻¹Υ(Bw − g)``, ``Υ = diag|w|^½`` (eq. 13); ``rhs = Bw − g``.

        Solved as ``−Υ(λI − ΥBΥ)⁻¹Υ rhs`` with a Cholesky factor of the positive definite
        ``λI − ΥBΥ``; no ``1/|w|`` appears, so zero weights stay exactly zero.  Needs the
        dense ``bound.matrix``.
        """
        u = jnp.sqrt(jnp.abs(flatten(coef)))
        M = self.lam * jnp.eye(u.size) - u[:, None] * bound.matrix * u[None, :]
        return unflatten(-u * _solve_psd(M, u * flatten(rhs)), coef.shape[0])

    def newton_terms(self, coef, grad):
        """Free weights, penalty gradient and curvature on them, and the orthant (signs).

        The nonzero weights are free and keep their signs ``σ``; on that orthant the penalty
        is ``λ σᵀw``. Zero weights stay zero (another step decides which enter).
        """
        sign = jnp.sign(coef)
        return sign != 0, self.lam * sign, jnp.zeros_like(coef), sign

    def project(self, coef, orthant):
        """Zero the weights that left their orthant (changed sign, or were not free)."""
        return jnp.where(coef * orthant > 0, coef, 0.0)

    def residual(self, coef, grad):
        """Distance of ``g`` to ``λ ∂‖w‖₁`` per coefficient (zero at the MAP estimate)."""
        at_zero = jnp.maximum(jnp.abs(grad) - self.lam, 0.0)
        return jnp.where(coef == 0, at_zero, jnp.abs(grad - self.lam * jnp.sign(coef)))

    def numpyro_prior(self):
        """Independent ``Laplace(0, 1/λ)`` weights."""
        return dist.Laplace(0.0, 1.0 / self.lam)


class GaussianPrior(NamedTuple):
    """``p(w) ∝ exp(−λ‖w‖²/2)`` (Sec. 3.3): RMLR's ridge penalty, λ the inverse variance.

    Parameters
    ----------
    lam : float
        The prior precision ``λ > 0``.
    """

    lam: float

    def penalty(self, coef):
        """``λ‖w‖²/2``."""
        return 0.5 * self.lam * jnp.sum(coef * coef)

    def coordinate_update(self, z, b_kk):
        """``B_kk/(B_kk − λ) · z`` (eq. 16)."""
        return b_kk / (b_kk - self.lam) * z

    def block_update(self, coef, rhs, bound):
        """``(B − λI)⁻¹(Bw − g)`` (eq. 10) with the precomputed eigenbasis of ``B``."""
        return bound.solve_shifted(rhs, self.lam)

    def newton_terms(self, coef, grad):
        """Every weight free; penalty gradient ``λw`` and curvature ``λ``; no orthant."""
        return jnp.ones(coef.shape, bool), self.lam * coef, jnp.full(coef.shape, self.lam), None

    def project(self, coef, orthant):
        """No constraint."""
        return coef

    def residual(self, coef, grad):
        """``|g − λw|`` per coefficient."""
        return jnp.abs(grad - self.lam * coef)

    def numpyro_prior(self):
        """Independent ``Normal(0, λ^{-½})`` weights."""
        return dist.Normal(0.0, 1.0 / jnp.sqrt(self.lam))


class FlatPrior(NamedTuple):
    """No prior: maximum likelihood (Sec. 3.2).  Exists only if the data are not separable."""

    def penalty(self, coef):
        """Zero."""
        return jnp.zeros((), dtype=jnp.float64)

    def coordinate_update(self, z, b_kk):
        """``z = w_k − g_k/B_kk`` (eq. 15 with λ = 0)."""
        return z

    def block_update(self, coef, rhs, bound):
        """``B⁻¹(Bw − g) = w − B⁻¹g`` (eq. 7) with the precomputed eigenbasis of ``B``."""
        return bound.solve_shifted(rhs, 0.0)

    def newton_terms(self, coef, grad):
        """Every weight free, no penalty; no orthant."""
        return jnp.ones(coef.shape, bool), jnp.zeros_like(coef), jnp.zeros_like(coef), None

    def project(self, coef, orthant):
        """No constraint."""
        return coef

    def residual(self, coef, grad):
        """``|g|`` per coefficient."""
        return jnp.abs(grad)

    def numpyro_prior(self):
        """An improper flat density (NUTS needs a proper posterior: non-separable data)."""
        return dist.ImproperUniform(dist.constraints.real, (), ())


def log_posterior(coef, X, Y1, prior):
    """``L(W) = ℓ(W) − penalty(W)``: the objective every bound iteration increases."""
    return log_likelihood(coef, X, Y1) - prior.penalty(coef)


# ---------------------------------------------------------------------------------------
# NumPyro model
# ---------------------------------------------------------------------------------------


def multinomial_logistic_model(X, y=None, *, n_classes, prior):
    """Multinomial logistic regression, last class the reference (eq. 1), i.i.d. prior on ``W``.

    ``W`` (site ``"coef"``, ``d × (m−1)``) has independent ``prior.numpyro_prior()``
    entries (Laplace for SMLR, Gaussian for RMLR, flat for ML); ``y`` (site ``"y"``) is
    categorical with logits ``[XW, 0]``.  Its log joint density equals
    :func:`log_posterior` up to a constant in ``W``.
    """
    X = jnp.asarray(X)
    d = X.shape[1]
    coef = numpyro.sample("coef", prior.numpyro_prior().expand([d, n_classes - 1]).to_event(2))
    eta = X @ coef
    logits = jnp.concatenate([eta, jnp.zeros((X.shape[0], 1))], axis=1)
    with numpyro.plate("data", X.shape[0]):
        numpyro.sample("y", dist.Categorical(logits=logits), obs=y)
