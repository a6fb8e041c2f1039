"""Sequential type-II maximum likelihood for a Bernoulli likelihood: Tipping's RVM classifier.

The model is ``P(t = 1 | x) = σ(φ(x)ᵀw)`` (logistic link), ``w_i ~ N(0, v_i)`` with the RVM's
flat hyperprior on ``α_i = 1/v_i`` (Tipping 2001; Tipping & Faul 2003, Sec. 5). The marginal
likelihood has no closed form; as in those papers it is replaced by its Laplace
approximation at the posterior mode ``w*`` of the active weights,

    L(v) = Σ_n log p(t_n | w*) − ½ Σ_A w*_i² / v_i − ½ Σ_A log v_i + ½ log|Σ|,
    Σ = (Φ_Aᵀ B Φ_A + V_A⁻¹)⁻¹,  B = diag(y_n (1 − y_n)),  y = σ(Φ w*),

which is the Gaussian evidence of the linearized targets ``t̂ = Φw* + B⁻¹(t − y)`` with noise
covariance ``B⁻¹``. For that Gaussian problem (Tipping & Faul 2003, eqs. 22–23 with ``B`` in
place of ``σ⁻²I``)

    S_m = φ_mᵀBφ_m − φ_mᵀBΦ_A Σ Φ_AᵀBφ_m,   Q_m = φ_mᵀ B t̂ − φ_mᵀBΦ_A Σ Φ_AᵀB t̂ = φ_mᵀ(t − y),

the last form holding at the mode (``Φ_Aᵀ(t − y) = V_A⁻¹ w*``). Each step takes the single
add / re-estimate / delete of largest gain in the same per-basis objective as the Gaussian
engine (:func:`sparsebayes.models.typeii_rules.variance_objective` with ``κ = 0``, the RVM
rule ``α = s²/(q² − s)``), then moves ``w*`` to the new mode by Newton's method with step
halving (the log posterior is concave). Unlike the Gaussian engine, ``L`` can fall a little
after a move (the approximation is re-centred), so it is reported, not guaranteed.

This engine works on the whole basis with masks (``M × M`` Cholesky per step): meant for the
few-hundred-point kernel problems of the classification papers, not for N in the thousands.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve, solve_triangular

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.models.typeii_rules import optimal_variance, variance_objective


class BernoulliState(NamedTuple):
    """Prior variances ``var`` (0 = not in the model), the mode ``w``, the objective ``L``."""

    var: jax.Array
    w: jax.Array
    objective: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    last_gain: jax.Array


def _log_joint(w, Phi, t, inv_var):
    """``Σ log p(t | w) − ½ Σ w²/v`` (logistic likelihood in the stable ``log σ`` form)."""
    eta = Phi @ w
    return jnp.sum(t * jax.nn.log_sigmoid(eta) + (1.0 - t) * jax.nn.log_sigmoid(-eta)) - 0.5 * jnp.sum(inv_var * w * w)


def _precision_factor(Phi, b, var):
    """Cholesky factor of ``Φ_AᵀBΦ_A + V_A⁻¹``, the identity on inactive rows/columns."""
    active = var > 0
    both = active[:, None] & active[None, :]
    inv_var = jnp.where(active, 1.0 / jnp.where(active, var, 1.0), 0.0)
    H = jnp.einsum("nm,n,nk->mk", Phi, b, Phi)
    P = jnp.where(both, H + jnp.diag(inv_var), jnp.eye(var.shape[0]))
    return jnp.linalg.cholesky(P), H


def posterior_mode(Phi, t, var, w0, *, max_newton=50, gtol=1e-8):
    """Mode of the active weights by Newton's method with step halving (inactive weights stay 0).

    Returns ``(w, L_chol, H)``: the mode, the Cholesky factor of ``Σ⁻¹`` there and ``ΦᵀBΦ``.
    """
    active = var > 0
    inv_var = jnp.where(active, 1.0 / jnp.where(active, var, 1.0), 0.0)

    def gradient(w):
        y = jax.nn.sigmoid(Phi @ w)
        return jnp.where(active, (t - y) @ Phi - inv_var * w, 0.0), y

    def newton(carry):
        w, it, _ = carry
        g, y = gradient(w)
        L, _ = _precision_factor(Phi, y * (1.0 - y), var)
        step = jnp.where(active, cho_solve((L, True), g), 0.0)
        f0 = _log_joint(w, Phi, t, inv_var)

        def halve(c):
            s, k = c
            return s * 0.5, k + 1

        def worse(c):
            s, k = c
            return (_log_joint(w + s * step, Phi, t, inv_var) < f0) & (k < 30)

        scale, _ = jax.lax.while_loop(worse, halve, (jnp.asarray(1.0), 0))
        w_new = w + scale * step
        return w_new, it + 1, jnp.max(jnp.abs(scale * step))

    def keep_going(carry):
        w, it, change = carry
        return (it < max_newton) & (change > gtol * jnp.maximum(1.0, jnp.max(jnp.abs(w))))

    w, _, _ = jax.lax.while_loop(keep_going, newton, (jnp.where(active, w0, 0.0), 0, jnp.asarray(jnp.inf)))
    y = jax.nn.sigmoid(Phi @ w)
    L, H = _precision_factor(Phi, y * (1.0 - y), var)
    return w, L, H


def _evidence(Phi, t, var, w, L):
    """Laplace approximation of the log marginal likelihood (module docstring)."""
    active = var > 0
    inv_var = jnp.where(active, 1.0 / jnp.where(active, var, 1.0), 0.0)
    log_var = jnp.sum(jnp.where(active, jnp.log(jnp.where(active, var, 1.0)), 0.0))
    logdet_Sigma = -2.0 * jnp.sum(jnp.log(jnp.diag(L)))
    return _log_joint(w, Phi, t, inv_var) - 0.5 * log_var + 0.5 * logdet_Sigma


def sparsity_quality(Phi, t, var, w, L, H):
    """``S_m, Q_m`` for every basis (module docstring) and ``s_m, q_m = S, Q / (1 − v_m S_m)``."""
    active = var > 0
    y = jax.nn.sigmoid(Phi @ w)
    Z = jnp.where(active[:, None], H, 0.0)  # Φ_AᵀBφ_m for every m, zero rows off A
    V = solve_triangular(L, Z, lower=True)
    S = jnp.diag(H) - jnp.sum(V * V, axis=0)
    Q = (t - y) @ Phi
    denom = 1.0 - var * S
    return S, Q, S / denom, Q / denom


def init(Phi, t, basis_mask):
    """One basis in: the column best aligned with the logit of the smoothed targets (Tipping & Faul)."""
    z = jnp.log((0.9 * t + 0.05) / (1.0 - (0.9 * t + 0.05)))
    col_sq = jnp.sum(Phi * Phi, axis=0)
    proj = z @ Phi
    score = jnp.where(basis_mask & (col_sq > 0), proj**2 / jnp.maximum(col_sq, 1e-300), -jnp.inf)
    m = jnp.argmax(score)
    w_m = proj[m] / col_sq[m]
    var = jnp.zeros(Phi.shape[1]).at[m].set(jnp.maximum(w_m * w_m, 1e-6))
    w, L, _ = posterior_mode(Phi, t, var, jnp.zeros(Phi.shape[1]).at[m].set(w_m))
    return BernoulliState(var, w, _evidence(Phi, t, var, w, L), jnp.asarray(0), jnp.asarray(False),
                          jnp.asarray(jnp.inf))


def step(Phi, t, basis_mask, state, *, tol):
    """One add / re-estimate / delete of largest gain, then the new mode and ``L``."""
    var = state.var
    active = var > 0
    y = jax.nn.sigmoid(Phi @ state.w)
    L, H = _precision_factor(Phi, y * (1.0 - y), var)
    _, _, s, q = sparsity_quality(Phi, t, var, state.w, L, H)
    zero = jnp.zeros(())
    proposal = optimal_variance(s, q, zero)
    gain = variance_objective(proposal, s, q, zero) - variance_objective(var, s, q, zero)
    allowed = jnp.where(active, (proposal > 0) | (jnp.sum(active) > 1), basis_mask & (proposal > 0))
    gain = jnp.where(allowed, gain, -jnp.inf)
    m = jnp.argmax(gain)
    move = gain[m] > tol
    new_var = jnp.where(move, var.at[m].set(proposal[m]), var)
    w0 = jnp.where(new_var > 0, state.w, 0.0)
    w, L, _ = posterior_mode(Phi, t, new_var, w0)
    return BernoulliState(new_var, w, _evidence(Phi, t, new_var, w, L), state.n_iter + 1, ~move, gain[m])


@partial(jax.jit, static_argnames=("max_iter",))
def fit(Phi, t, basis_mask, *, max_iter=1000, tol=1e-6):
    """Run the sequential engine until no move gains more than ``tol`` (``lax.while_loop``)."""
    Phi = jnp.asarray(Phi, jnp.float64)
    t = jnp.asarray(t, jnp.float64)
    state = init(Phi, t, basis_mask)
    return jax.lax.while_loop(lambda s: ~s.converged & (s.n_iter < max_iter),
                              lambda s: step(Phi, t, basis_mask, s, tol=tol), state)
