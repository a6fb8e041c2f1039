"""Gaussian summaries of an EM fit given the final E-step's variances (000 Sec. 3; 002 Sec. 3).

:func:`conditional_covariance` is the covariance of ``β | z, τ`` behind the M-step (regression);
:func:`laplace_covariance` the Laplace approximation at the fit for any other likelihood (probit,
logistic, Poisson, Student-t, negative binomial), from its ``curvature``.
Both hold the E-step's variances ``τ̂`` fixed and take the finite ``U = diag(u)`` form.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg


def conditional_covariance(gram, u, noise_var):
    """``Σ = σ² U(σ² I + U G U)⁻¹U``: the covariance of ``β | z, τ`` at ``E[τ_i⁻¹] = 1/u_i²``.

    The Gaussian conditional behind the M-step (000 "An Important Implementation Detail":
    its mean is the M-step's ``β``), equal to ``(G/σ² + U⁻²)⁻¹`` where every ``u_i > 0`` but
    finite as ``u_i → 0``. ``gram = HᵀH`` on the same coordinates. With ``σ² I + UGU = LLᵀ``
    (Cholesky), ``Σ = σ² (L⁻¹U)ᵀ(L⁻¹U)``.
    """
    A = noise_var * np.eye(u.size) + u[:, None] * gram * u[None, :]
    W = scipy.linalg.solve_triangular(np.linalg.cholesky(A), np.diag(u), lower=True)
    return noise_var * (W.T @ W)


def laplace_covariance(H_active, y, beta_active, u, likelihood, params=None):
    """Covariance of the Laplace approximation to ``p(β_A | y, τ̂)`` for a link likelihood (probit),
    ``τ̂_i = u_i²`` the final E-step's variances.

    At EM's fixed point ``Hᵀ(v − Hβ) = U⁻²β`` (the M-step, 002 eq. 16, with ``v = E[z | y, β]``
    from 002 eq. 6) is the stationarity condition of ``Σ log Φ(s_i h_iᵀβ) − Σ β_i²/(2τ̂_i)``, since
    ``v − η = s m(sη)`` is the gradient of ``log Φ(sη)``: ``β̂`` is the mode of the probit model with
    the Gaussian prior ``N(0, τ̂)`` held at those variances. The Hessian there is ``−(HᵀWH + U⁻²)``,
    ``W`` the likelihood's ``curvature`` (:meth:`~sparsebayes.models.likelihoods.ProbitLikelihood.curvature`),
    and the covariance is taken in the finite form ``U(I + U HᵀWH U)⁻¹U`` (:func:`conditional_covariance`
    with σ² = 1). ``H_active`` (n, k) holds the design's columns of the nonzero weights, a row per
    data point. ``params``: the likelihood's own parameter at the fit, for a likelihood that has one
    (its ``curvature`` is then the Fisher information where the likelihood is not log-concave: the
    Student-t).
    """
    eta = H_active @ beta_active
    w = np.asarray(likelihood.curvature(y, eta) if params is None else likelihood.curvature(y, eta, params))
    return conditional_covariance(H_active.T @ (w[:, None] * H_active), u, 1.0)
