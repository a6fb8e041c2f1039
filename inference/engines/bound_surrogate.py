"""The solvers on Böhning's surrogate at ``W_t`` (Krishnapuram et al. 2005, eqs. 6, 8): coordinate
ascent on the fixed surrogate (``"surrogate-cd"``) and a damped Newton step on the support such an
MM step picks (``"newton"``, not in the paper; same objective and fixed point).

Both are solvers of :mod:`sparsebayes.inference.engines.bound` (which runs them and describes them beside
the block and component-wise solvers); the prior enters through its ``"bound"`` capability.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax
from jax.scipy.linalg import cho_factor, cho_solve

from sparsebayes.inference.engines.bound_problem import gradient, info, overrelax, predictors, probabilities, rel_change


def surrogate_cd_step(state, problem, prior, *, tol=0.0, growth=1.5, inner_sweeps=4):
    """One MM step: Böhning's surrogate at ``W_t`` (eqs. 6, 8) maximized by coordinate ascent.

    The surrogate ``Q(W) = g_tᵀ(W − W_t) + ½ vec(W − W_t)ᵀ B vec(W − W_t) − penalty(W)`` has
    ``∂Q/∂w_jc = g_t,jc − (S Δ K)_jc`` (``Δ = W − W_t``) and curvature ``B_kk`` along each
    coordinate, so eqs. 15–16 with that derivative are its exact coordinate maximizers.
    ``Mt = (SΔ)ᵀ`` (``(m−1) × d``) moves by ``δ S_j`` when ``w_jc`` moves by ``δ``; a weight that
    does not move costs ``O(m)``. The sweeps visit only the working set of the step: the
    nonzero weights and the zero weights whose optimality residual at ``W_t`` is positive
    (``|g_jc| > λ`` for SMLR). Maximizing the surrogate over a subset of the weights still
    raises it, and at a fixed point every zero weight outside the set is optimal.
    """
    grad = gradient(state.eta, state.log_norm, problem)
    S, K, diag = problem.bound.gram, problem.bound.class_factor, problem.bound.diag
    d, k = grad.shape
    # the sweeps visit the working set: nonzero weights and those whose zero is not optimal at W_t
    working = ((state.coef != 0) | (prior.bound_residual(state.coef, grad) > 0)).ravel()
    order = jnp.argsort(~working, stable=True)  # working-set coordinates first, in cyclic order
    n_working = jnp.sum(working)

    def visit(t, carry):
        coef, Mt = carry
        i = order[t % n_working]
        j, c = i // k, i % k
        h = grad[j, c] - Mt[:, j] @ K[:, c]
        b = diag[j, c]
        w = coef[j, c]
        w_new = prior.bound_coordinate_update(w - h / b, b)
        return lax.cond(w_new != w,
                        lambda: (coef.at[j, c].set(w_new), Mt.at[c].add((w_new - w) * S[j])),
                        lambda: (coef, Mt))

    coef_mm, _ = lax.fori_loop(0, inner_sweeps * n_working, visit, (state.coef, jnp.zeros((k, d))))
    eta_mm, norm_mm, obj_mm = predictors(coef_mm, problem, prior)
    coef, eta, log_norm, objective, relax = overrelax(
        state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth)
    new = state._replace(
        coef=coef, eta=eta, log_norm=log_norm, objective=objective, relax=relax,
        rel_change=rel_change(coef, state.coef, problem.weight_floor), n_iter=state.n_iter + 1, last_full=jnp.asarray(True),
    )
    return new, info(new, problem, prior, converged=jnp.asarray(False))


def loglik_hessian(P, X, idx):
    """Minus the Hessian of ℓ, ``Σ_i (diag p_i − p_i p_iᵀ) ⊗ x_i x_iᵀ`` (the matrix of eq. 8's
    inequality), on the weights ``idx`` (positions in ``coef.ravel()``: ``w_jc`` at ``j(m−1) + c``).

    ``P`` is ``n × (m−1)``. Entry ``(a, b)`` is ``Σ_i x_ij_a p_ic_a (δ_c_a c_b x_ij_b − p_ic_b x_ij_b)``;
    ``O(n |idx|²)``.
    """
    k = P.shape[1]
    j, c = idx // k, idx % k
    Xs = X[:, j]
    XPs = Xs * P[:, c]
    return jnp.where(c[:, None] == c[None, :], XPs.T @ Xs, 0.0) - XPs.T @ XPs


def newton_step(state, problem, prior, *, tol=0.0, inner_sweeps=4, damping=1e-8, armijo=1e-4, max_halvings=30,
                capacity=256):
    """An MM step that picks the support, then a damped Newton step on it (not in the paper).

    Same objective and fixed point as the paper's solvers, for kernel problems: where
    probabilities saturate, Böhning's bound (eq. 8) has far more curvature than the
    likelihood, and the MM solvers need 10⁴–10⁵ steps.

    1. :func:`surrogate_cd_step` (no over-relaxation): its soft thresholds make weights
       exactly zero or let them enter.
    2. On the weights the prior leaves free (for SMLR the nonzero ones, on their sign
       orthant, where the penalty is ``λσᵀw``) that were nonzero before step 1 as well, or on
       the ``capacity`` of them with the largest ``|g − ∇penalty|`` if there are more (a block
       Newton step; the others stay), ``Δ`` solves ``(−H + diag(curvature) + μI) Δ =
       g − ∇penalty``, ``H`` the likelihood's Hessian (:func:`loglik_hessian`), by Cholesky;
       ``μ`` is the Levenberg–Marquardt factor (kept in ``State.relax``, at least ``damping``)
       times the largest diagonal entry of ``−H``, cut 3× after a full step and doubled per
       halving otherwise. The step takes the largest ``α = 2⁻ʲ`` for which ``W + αΔ``,
       projected on the orthant (a weight that would change sign becomes zero), satisfies
       ``L ≥ L(W) + armijo · α · (g − ∇penalty)ᵀΔ``; with none down to ``2^-max_halvings``
       the MM step stands. ``L`` never decreases.

    The step's ``rel_change`` is the larger of its own and the MM step's, so a fit stops only
    where an MM step, too, would stop.
    """
    # State.relax holds the Levenberg–Marquardt factor here: the MM step gets no over-relaxation
    mm = surrogate_cd_step(state._replace(relax=jnp.asarray(1.0)), problem, prior, growth=1.0,
                           inner_sweeps=inner_sweeps)[0]
    P = probabilities(mm.eta, mm.log_norm)
    grad = gradient(mm.eta, mm.log_norm, problem, P)
    free, pen_grad, pen_curv, orthant = prior.bound_newton_terms(mm.coef, grad)
    # weights that the MM step has just moved off zero keep its value for this step: a Newton
    # step that projected them back to zero could undo the MM step and fake convergence
    free = free & (state.coef != 0)
    free, rhs = free.ravel(), jnp.where(free, grad - pen_grad, 0.0).ravel()
    # at most `capacity` free weights, those with the largest gradient (Gauss–Southwell; chosen
    # by |w| instead, a fit with more nonzeros than slots needs far more steps); a selected
    # slot that is not free is inert
    _, idx = lax.top_k(jnp.where(free, jnp.abs(rhs), -1.0), min(capacity, free.size))
    sel = free[idx]
    hess = loglik_hessian(P, problem.X, idx)
    mu = state.relax * jnp.max(jnp.where(sel, jnp.diag(hess), 0.0)) + jnp.finfo(hess.dtype).tiny
    system = jnp.where(sel[:, None] & sel[None, :], hess, 0.0) + jnp.diag(
        jnp.where(sel, pen_curv.ravel()[idx] + mu, 1.0))
    step = jnp.where(sel, cho_solve(cho_factor(system, lower=True), rhs[idx]), 0.0)
    direction = jnp.zeros_like(rhs).at[idx].set(step).reshape(mm.coef.shape)
    slope = jnp.sum(rhs * direction.ravel())

    def trial(alpha):
        coef = prior.bound_project(mm.coef + alpha * direction, orthant)
        return (coef,) + predictors(coef, problem, prior)

    def search_cond(carry):
        j, alpha, cand = carry
        return (j <= max_halvings) & ~(cand[3] >= mm.objective + armijo * alpha * slope)

    def search_body(carry):
        j, alpha, _ = carry
        return j + 1, 0.5 * alpha, trial(0.5 * alpha)

    j, _, (coef, eta, log_norm, objective) = lax.while_loop(
        search_cond, search_body, (jnp.asarray(0), jnp.asarray(1.0), trial(1.0)))
    accept = (j <= max_halvings) & (slope > 0)
    pick = lambda a, b: jnp.where(accept, a, b)  # noqa: E731
    coef = pick(coef, mm.coef)
    new = mm._replace(
        coef=coef, eta=pick(eta, mm.eta), log_norm=pick(log_norm, mm.log_norm),
        objective=pick(objective, mm.objective),
        relax=jnp.clip(jnp.where(j == 0, state.relax / 3.0, state.relax * 2.0**j), damping, 1e6),
        # converged only when the MM step, too, barely moves: near the optimum the line search
        # compares objectives at rounding level, and a Newton step can then undo the MM step
        rel_change=jnp.maximum(rel_change(coef, state.coef, problem.weight_floor), rel_change(mm.coef, state.coef, problem.weight_floor)))
    return new, info(new, problem, prior, converged=jnp.asarray(False))
