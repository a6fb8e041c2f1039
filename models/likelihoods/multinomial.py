"""Multinomial logistic regression with the last class as reference (Krishnapuram et al. 2005).

The model (003 eq. 1): for ``m`` classes and ``d`` basis functions ``x``,

    P(y = i | x, W) = exp(w_iᵀ x) / Σ_j exp(w_jᵀ x),     w_m ≡ 0,

so the parameters are the ``d × (m−1)`` matrix ``W`` (``coef`` below; column ``i`` is
``w_i``).  The paper stacks the columns into one vector ``w`` of length ``d(m−1)``
(class-major: ``w = vec(W)``), which is the order :func:`flatten` uses and the order of the
Kronecker products in the Hessian and in Böhning's bound (eq. 8).

Labels enter as ``Y1``: the ``n × (m−1)`` one-hot indicators of the first ``m−1`` classes
(the paper's ``y'_j``); a row of zeros is the reference class.

The priors (MAP penalties, 003 Sec. 3.3–3.4) are the registered hierarchy objects
:class:`~sparsebayes.models.priors.LaplacePrior` (``λ‖w‖₁``, eq. 3, SMLR, with ``λ = √γ``:
``LaplacePrior.from_lam(λ)``), :class:`~sparsebayes.models.priors.penalty.GaussianPrior`
(``λ‖w‖²/2``, Sec. 3.3, RMLR) and :class:`~sparsebayes.models.priors.penalty.FlatPrior` (maximum
likelihood, Sec. 3.2). The penalty is each one's ``neg_log_prior``; the closed-form pieces the
bound-optimization engine needs are their ``"bound"`` capability
(:data:`~sparsebayes.models.priors.CAPABILITIES`, math in :mod:`sparsebayes.models.penalties`).
:func:`multinomial_logistic_model` writes the same model as a NumPyro model for NUTS.
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
    return X.T @ (Y1 - MULTINOMIAL.mean(X @ coef))


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


class MultinomialLogisticLikelihood(NamedTuple):
    """The multinomial logistic likelihood, last class the reference (003 eqs. 1–2), as one object:
    the pieces the bound-optimization engine asks of it (:data:`~sparsebayes.models.likelihoods.
    LIKELIHOOD_CAPABILITIES` ``"bound"``), in ``η = XW`` (``n × (m−1)``) and the labels' ``Y1``, and
    the protocol's per-row pieces (:mod:`sparsebayes.models.likelihoods`) with ``η_i`` a vector.
    It has no parameter of its own and no EM working weights (its Hessian is a matrix per row: the
    bound engine majorizes it by Böhning's bound instead)."""

    #: What ``y`` is: "real", "counts" (nonnegative integers), "binary" (0/1) or "categorical" (one-hot).
    support = "categorical"
    #: The registry name.
    name = "multinomial"
    #: No parameter of its own.
    param_name = None
    #: ``η_i`` is a vector (one entry per modelled class).
    eta_ndim = 1

    @property
    def label(self):
        """A human-readable name of the likelihood (reports, plots)."""
        return "multinomial (logistic link)"

    def log_lik(self, Y1, eta, params=None):
        """``Σ_i y^(i) η_i − log(1 + Σ_i e^{η_i})`` per observation (eq. 2's terms)."""
        return jnp.sum(Y1 * eta, axis=-1) - log_normalizer(eta)

    def score(self, Y1, eta, params=None):
        """``∂/∂η log p = y' − p(η)`` (eq. 9's per-row factor)."""
        return Y1 - self.mean(eta)

    def mean(self, eta, params=None):
        """``E[y^(i) | η] = P(y = i | η)`` for the ``m − 1`` modelled classes (eq. 1)."""
        return jnp.exp(eta - log_normalizer(eta)[..., None])

    def variance(self, eta, params=None):
        """``Var[y^(i) | η] = p_i(1 − p_i)`` (the diagonal of the per-row covariance)."""
        p = self.mean(eta)
        return p * (1.0 - p)

    def log_normalizer(self, eta):
        """``log(1 + Σ_i e^{η_i})`` row-wise (:func:`log_normalizer`)."""
        return log_normalizer(eta)

    def bohning_bound(self, X, n_classes, *, dense=False, eigen=True):
        """Böhning's bound ``B = −½[I − 11ᵀ/m] ⊗ XᵀX ⪯ H(W)`` for every ``W`` (eq. 8), precomputed
        (:class:`BohningBound`)."""
        return BohningBound.from_data(X, n_classes, dense=dense, eigen=eigen)

    def _full(self, eta):
        """The logits of all ``m`` classes, ``[η, 0]``."""
        return jnp.concatenate([eta, jnp.zeros(eta.shape[:-1] + (1,), dtype=eta.dtype)], axis=-1)

    def observe(self, name, eta, y=None, params=None):
        """``y ~ Multinomial(1, softmax([η, 0]))`` on the one-hot rows ``[Y1, 1 − ΣY1]`` (``y`` is ``Y1``)."""
        obs = None if y is None else jnp.concatenate([y, 1.0 - jnp.sum(y, axis=-1, keepdims=True)], axis=-1)
        return numpyro.sample(name, dist.Multinomial(1, logits=self._full(eta)), obs=obs)

    def sample(self, key, eta, params=None):
        """``Y1`` of a categorical draw (a row of zeros is the reference class)."""
        c = jax.random.categorical(key, self._full(eta), axis=-1)
        return (c[..., None] == jnp.arange(eta.shape[-1])).astype(jnp.result_type(float))


#: The one multinomial logistic likelihood (it has no parameters).
MULTINOMIAL = MultinomialLogisticLikelihood()


def log_posterior(coef, X, Y1, prior):
    """``L(W) = ℓ(W) − penalty(W)``, the penalty ``prior.neg_log_prior``: the objective every bound
    iteration increases."""
    return log_likelihood(coef, X, Y1) - prior.neg_log_prior(coef)


# ---------------------------------------------------------------------------------------
# NumPyro model
# ---------------------------------------------------------------------------------------


def multinomial_logistic_model(X, y=None, *, n_classes, prior):
    """Multinomial logistic regression, last class the reference (eq. 1), i.i.d. prior on ``W``.

    ``W`` (site ``"coef"``, ``d × (m−1)``) has independent ``prior.marginal_distribution()``
    entries (Laplace for SMLR, Gaussian for RMLR, flat for ML); ``y`` (site ``"y"``) is
    categorical with logits ``[XW, 0]``.  Its log joint density equals
    :func:`log_posterior` up to a constant in ``W``.
    """
    if not hasattr(prior, "marginal_distribution"):
        raise ValueError(f"{type(prior).__name__} has no marginal_distribution (one weight's prior as a NumPyro "
                         "distribution): the multinomial model takes LaplacePrior, GaussianPrior or FlatPrior")
    X = jnp.asarray(X)
    d = X.shape[1]
    coef = numpyro.sample("coef", prior.marginal_distribution().expand([d, n_classes - 1]).to_event(2))
    eta = X @ coef
    logits = jnp.concatenate([eta, jnp.zeros((X.shape[0], 1))], axis=1)
    with numpyro.plate("data", X.shape[0]):
        numpyro.sample("y", dist.Categorical(logits=logits), obs=y)
