"""Bound optimization for multinomial logistic regression (Krishnapuram et al. 2005, Sec. 3).

One engine, several priors.  The objective (maximized) is

    L(W) = ℓ(W) − penalty(W),

with ℓ the multinomial log-likelihood (003 eq. 2, last class the reference) and the
penalty of a prior from :mod:`sparsebayes.models.multinomial` (Laplace: SMLR, Gaussian:
RMLR, flat: ML).  Every iteration maximizes the surrogate built on Böhning's bound
``H(W) ⪰ B`` (eqs. 6, 8), so ``L`` never decreases.

Four solvers share the state:

* ``"block"``: the whole-vector maximizer of the surrogate, ``W ← B⁻¹(Bw − g)`` (eq. 7),
  ``(B − λI)⁻¹(Bw − g)`` (eq. 10) with a precomputed eigenbasis, or the numerically safe
  SMLR form (eq. 13), accelerated by adaptive over-relaxation (Salakhutdinov & Roweis
  2003; the paper's Sec. 5): the step ``W + η(W_MM − W)`` is kept when it beats the plain
  MM step ``W_MM``, and then ``η ← growth·η``; otherwise ``W_MM`` is kept and ``η ← 1``.
  The SMLR block update never makes a weight exactly zero; weights below
  ``zero_tol · max(max|W|, max|W₀|)`` whose gradient lies inside ``[−λ, λ]`` (zero is optimal for them)
  are set to zero when that does not lower the objective, and stay there.
* ``"componentwise"``: one sweep of the closed-form coordinate maximizers (eqs. 15–16)
  over all ``d(m−1)`` weights, cyclic, with the linear predictors ``η = XW`` and the
  log-normalizers kept up to date in ``O(n)`` per changed weight (a sweep is ``O(ndm)``).
  A weight that is zero is visited with probability ``zero_visit_decay**t`` at sweep
  ``t`` (Sec. 3.5), drawn from a seeded key; every ``full_sweep_every``-th sweep, and the
  sweep that confirms convergence, visit every weight.

* ``"surrogate-cd"``: the block step's surrogate (Böhning's quadratic, eqs. 6 and 8, built
  on the gradient at ``W_t``) with the prior's exact penalty, maximized by ``inner_sweeps``
  cyclic sweeps of the coordinate maximizers of eqs. 15–16 applied to that fixed surrogate.
  Its gradient at ``W`` is ``g_t − S(W − W_t)K`` (``B = −K ⊗ S``), kept as ``M = S(W − W_t)``
  in ``O(d)`` per changed weight, so a sweep never passes over the ``n`` samples and needs
  no ``exp``; one gradient per outer step; the sweeps visit only the step's working set. Each sweep raises the surrogate, so ``L`` never
  decreases; the outer MM map is over-relaxed like the others.

* ``"newton"`` (not in the paper; same objective and fixed point): a surrogate-cd step, whose
  soft thresholds pick the support, then a Levenberg–Marquardt-damped Newton step with the
  likelihood's exact Hessian on the nonzero weights (their sign orthant), line-searched and
  projected; the MM step stands when no step length qualifies. A step builds and factors
  the Hessian of at most ``capacity`` weights (those with the largest gradient),
  ``O(n·capacity²)``.

``run`` is the jit boundary (``lax.while_loop`` on the relative change of ``W``);
``trace`` runs a fixed number of steps under ``lax.scan`` and returns every step's
:class:`Info`.  Both take ``coef0`` for warm starts.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.linalg import cho_factor, cho_solve

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.models.multinomial import (
    BohningBound,
    GaussianPrior,
    LaplacePrior,
    log_normalizer,
    one_hot_reference,
)

SOLVERS = ("block", "componentwise", "surrogate-cd", "newton")


#: Relative changes of the weights are measured against at least the weight that moves a
#: logit by this much (``weight_floor = LOGIT_FLOOR / max|X|``). Without a floor, iterates at
#: rounding level (the all-zero estimate at λ = λ_max, where eq. 15's threshold and the gradient
#: tie to an ulp) flip between 0 and 1e-16, a relative change of 1, and never stopped.
LOGIT_FLOOR = 1e-6


#: The component-wise upkeep of the log-normalizers, ``log(Z(1 − p_c) + exp(η_c'))``, loses
#: ``1 − p_c`` to rounding as ``p_c → 1`` (1e-16 absolute); where some ``p_c`` is above
#: ``1 − SATURATED`` (relative error of ``1 − p_c`` then above 1e-10) they are recomputed, ``O(nm)``.
SATURATED = 1e-6


class Problem(NamedTuple):
    """Data and precomputations: ``X`` (n × d), ``Xt = Xᵀ``, ``Y1`` (n × (m−1)), ``XtY = XᵀY1``;
    ``weight_floor`` the smallest scale of the weights' relative change (:data:`LOGIT_FLOOR`)."""

    X: jax.Array
    Xt: jax.Array
    Y1: jax.Array
    XtY: jax.Array
    bound: BohningBound
    weight_floor: jax.Array


class State(NamedTuple):
    """Iterate ``coef`` with its linear predictors ``eta = X coef``, ``log_norm`` and ``objective``.

    ``relax`` is the over-relaxation factor (block, component-wise, surrogate-cd) or the
    Levenberg–Marquardt factor (newton); ``full_sweep`` says the next
    component-wise sweep visits every weight; ``key`` drives the visitation schedule;
    ``start_scale`` is ``max|W|`` at the start (the block solver's pruning floor).
    """

    coef: jax.Array
    eta: jax.Array
    log_norm: jax.Array
    objective: jax.Array
    relax: jax.Array
    rel_change: jax.Array
    n_iter: jax.Array
    full_sweep: jax.Array
    last_full: jax.Array
    key: jax.Array
    start_scale: jax.Array


class Info(NamedTuple):
    """Per-step (``trace``) or final (``run``) diagnostics.

    ``residual`` is the first-order optimality residual: the largest distance of the
    gradient to the prior's (sub)differential, ``max_k dist(g_k, ∂penalty(w_k))``.
    """

    objective: jax.Array
    rel_change: jax.Array
    residual: jax.Array
    n_iter: jax.Array
    converged: jax.Array


def make_problem(X, y, n_classes, *, solver, prior):
    """Precompute what ``solver`` needs: ``B``'s diagonal, eigenbasis, or dense matrix (eq. 8)."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    block = solver == "block"
    return _build_problem(jnp.asarray(X, dtype=jnp.float64), jnp.asarray(y), n_classes=n_classes,
                          dense=block and isinstance(prior, LaplacePrior), eigen=block)


@partial(jax.jit, static_argnames=("n_classes", "dense", "eigen"))
def _build_problem(X, y, *, n_classes, dense, eigen):
    """:func:`make_problem`'s arrays, one compiled program (a dozen small ones when run eagerly)."""
    Y1 = one_hot_reference(y, n_classes)
    x_max = jnp.max(jnp.abs(X))
    return Problem(X, X.T, Y1, X.T @ Y1, BohningBound.from_data(X, n_classes, dense=dense, eigen=eigen),
                   LOGIT_FLOOR / jnp.where(x_max > 0, x_max, 1.0))


def _predictors(coef, problem, prior):
    eta = problem.X @ coef
    log_norm = log_normalizer(eta)
    objective = jnp.sum(problem.Y1 * eta) - jnp.sum(log_norm) - prior.penalty(coef)
    return eta, log_norm, objective


def _probabilities(eta, log_norm):
    """Class probabilities ``p_j`` (``n × (m−1)``, the reference class left out) from the kept predictors."""
    return jnp.exp(eta - log_norm[:, None])


def _gradient(eta, log_norm, problem, P=None):
    """``g = Σ_j (y'_j − p_j) ⊗ x_j`` (eq. 9) from the kept predictors (or their probabilities ``P``)."""
    return problem.XtY - problem.Xt @ (_probabilities(eta, log_norm) if P is None else P)


def _rel_change(new, old, floor):
    """``max|Δw| / max(max|w_new|, max|w_old|, floor)`` (``floor``: ``Problem.weight_floor``)."""
    scale = jnp.maximum(jnp.maximum(jnp.max(jnp.abs(new)), jnp.max(jnp.abs(old))), floor)
    return jnp.max(jnp.abs(new - old)) / scale


def init(problem, prior, coef0=None, *, seed=0):
    """Initial :class:`State`; ``coef0`` (``d × (m−1)``) warm-starts, default zeros."""
    d, k = problem.X.shape[1], problem.Y1.shape[1]
    coef = jnp.zeros((d, k)) if coef0 is None else jnp.asarray(coef0, dtype=jnp.float64)
    eta, log_norm, objective = _predictors(coef, problem, prior)
    return State(
        coef, eta, log_norm, objective, jnp.asarray(1.0), jnp.asarray(jnp.inf),
        jnp.asarray(0), jnp.asarray(True), jnp.asarray(False), jax.random.PRNGKey(seed), jnp.max(jnp.abs(coef)),
    )


def ridge_start(problem, lam):
    """One RMLR bound step from zero, ``(B − λI)⁻¹(−g(0))`` (eq. 10): a nonzero start for eq. 13."""
    zero = jnp.zeros_like(problem.XtY)
    eta, log_norm, _ = _predictors(zero, problem, GaussianPrior(lam))
    return problem.bound.solve_shifted(-_gradient(eta, log_norm, problem), lam)


def _overrelax(state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth):
    """Adaptive over-relaxation (Salakhutdinov & Roweis 2003) of an MM step ``W → W_MM``.

    Tries ``W + η(W_MM − W)`` (weights that the MM step made zero stay zero) and keeps it
    when its objective is at least that of ``W_MM``, growing ``η ← growth·η``; otherwise
    keeps ``W_MM`` and resets ``η = 1``.  Either way ``L`` does not decrease.
    """
    coef_try = jnp.where(coef_mm == 0, 0.0, state.coef + state.relax * (coef_mm - state.coef))
    eta_try, norm_try, obj_try = _predictors(coef_try, problem, prior)
    accept = obj_try >= obj_mm
    pick = lambda a, b: jnp.where(accept, a, b)  # noqa: E731
    relax = jnp.where(accept, state.relax * growth, 1.0)
    return (pick(coef_try, coef_mm), pick(eta_try, eta_mm), pick(norm_try, norm_mm),
            pick(obj_try, obj_mm), relax)


def block_step(state, problem, prior, *, tol=0.0, growth=1.5, zero_tol=1e-4):
    """One block bound iteration (eq. 7, 10 or 13) with adaptive over-relaxation.

    Eq. 13 only shrinks a weight towards zero geometrically, never to it. For SMLR, weights
    below ``zero_tol · max(max|W|, max|W₀|)`` whose gradient lies inside ``[−λ, λ]`` (zero is
    then coordinate-wise optimal) are set to exactly zero together, and the pruned point is kept
    only if its objective is at least the step's: pruning never costs monotonicity. The floor
    at the start's scale ``max|W₀|`` lets the largest weight reach zero too: relative to
    ``max|W|`` alone it never qualifies, and for ``λ ≥ λ_max`` (all-zero estimate) the fit
    shrank every weight geometrically until ``max_iter`` and kept one of about 1e-15.
    """
    grad = _gradient(state.eta, state.log_norm, problem)
    rhs = problem.bound.apply(state.coef) - grad
    coef_mm = prior.block_update(state.coef, rhs, problem.bound)
    eta_mm, norm_mm, obj_mm = _predictors(coef_mm, problem, prior)
    coef, eta, log_norm, objective, relax = _overrelax(
        state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth)
    if isinstance(prior, LaplacePrior):
        grad_new = _gradient(eta, log_norm, problem)
        small = jnp.abs(coef) <= zero_tol * jnp.maximum(jnp.max(jnp.abs(coef)), state.start_scale)
        prune = small & (jnp.abs(grad_new) <= prior.lam) & (coef != 0)
        coef_pruned = jnp.where(prune, 0.0, coef)
        eta_p, norm_p, obj_p = _predictors(coef_pruned, problem, prior)
        keep = obj_p >= objective  # pruning only where it does not lower the objective
        coef = jnp.where(keep, coef_pruned, coef)
        eta, log_norm = jnp.where(keep, eta_p, eta), jnp.where(keep, norm_p, log_norm)
        objective = jnp.where(keep, obj_p, objective)
        coef, eta, log_norm, objective = _reenter(coef, eta, log_norm, objective, problem, prior)
    new = state._replace(
        coef=coef, eta=eta, log_norm=log_norm, objective=objective, relax=relax,
        rel_change=_rel_change(coef, state.coef, problem.weight_floor), n_iter=state.n_iter + 1, last_full=jnp.asarray(True),
    )
    return new, _info(new, problem, prior, converged=jnp.asarray(False))


def _reenter(coef, eta, log_norm, objective, problem, prior):
    """Zero weights whose zero is not optimal (``|g| > λ``) re-enter at their coordinate maximizer of
    Böhning's surrogate (eq. 15 from ``w = 0``).

    Eq. 13 never moves a zero weight, and the block step's pruning zeroes small weights whose
    gradient lies inside ``[−λ, λ]`` at that step; where the optimum needs such a weight (one whose
    sign flips on the way passes near zero) the fit settled on a wrong support and reported
    convergence. All such weights re-enter together when that does not lower ``L``; otherwise the
    one with the largest residual alone, a single coordinate maximizer of the surrogate, which cannot.
    """
    grad = _gradient(eta, log_norm, problem)
    resid = jnp.where(coef == 0, prior.residual(coef, grad), 0.0)
    diag = problem.bound.diag
    entry = prior.coordinate_update(-grad / diag, diag)

    def enter(_):
        every = jnp.where(resid > 0, entry, coef)
        eta_e, norm_e, obj_e = _predictors(every, problem, prior)
        worst = (jnp.arange(resid.size) == jnp.argmax(resid)).reshape(resid.shape)
        one = jnp.where(worst, entry, coef)
        return lax.cond(obj_e >= objective, lambda: (every, eta_e, norm_e, obj_e),
                        lambda: (one, *_predictors(one, problem, prior)))

    return lax.cond(jnp.any(resid > 0), enter, lambda _: (coef, eta, log_norm, objective), None)


def componentwise_step(state, problem, prior, *, tol=0.0, growth=1.5, zero_visit_decay=0.8,
                       full_sweep_every=10):
    """One sweep of eqs. 15–16 over every weight, ``O(n)`` upkeep of ``η`` per changed weight.

    ``tol`` only decides whether the next sweep must visit every weight.  The predictors of class ``c`` change by ``δ x`` when ``w_jc`` changes by ``δ``; the
    log-normalizer follows as ``log(Z(1 − p_c) + exp(η_c + δx))``.  Both are recomputed
    exactly (one ``XW`` product) at the end of the sweep, so rounding never accumulates.
    The sweep, as a whole, is an MM map and is over-relaxed like the block step
    (``growth=1.0`` turns that off).
    """
    d, k = problem.XtY.shape
    key, sub = jax.random.split(state.key)
    full = state.full_sweep | (state.n_iter % full_sweep_every == 0)
    visit_zero = jnp.where(full, 1.0, zero_visit_decay ** state.n_iter.astype(jnp.float64))
    draws = jax.random.uniform(sub, (d, k)) < visit_zero
    eta_t = state.eta.T  # (m−1) × n: rows contiguous

    def change(j, c, w, w_new, x, p, eta_t, log_norm, coef):
        eta_c = eta_t[c] + (w_new - w) * x
        eta_t = eta_t.at[c].set(eta_c)
        # log(Z(1 − p_c)) cancels where p_c rounds near 1 (at p_c = 1 it is −∞ and drops the other
        # classes; the next p_c exceeded 1 and log1p gave NaN): then the normalizers are recomputed
        log_norm = lax.cond(jnp.max(p) > 1.0 - SATURATED, lambda: log_normalizer(eta_t.T),
                            lambda: jnp.logaddexp(log_norm + jnp.log1p(-p), eta_c))
        return coef.at[j, c].set(w_new), eta_t, log_norm

    def visit(j, c, carry):
        coef, eta_t, log_norm = carry
        w = coef[j, c]
        x = problem.Xt[j]
        p = jnp.exp(eta_t[c] - log_norm)
        g = problem.XtY[j, c] - x @ p
        b_kk = problem.bound.diag[j, c]
        w_new = prior.coordinate_update(w - g / b_kk, b_kk)
        return lax.cond(
            w_new != w,
            lambda: change(j, c, w, w_new, x, p, eta_t, log_norm, coef),
            lambda: (coef, eta_t, log_norm),
        )

    def body(i, carry):
        j, c = i // k, i % k
        go = (carry[0][j, c] != 0) | draws[j, c]
        return lax.cond(go, lambda: visit(j, c, carry), lambda: carry)

    coef_mm, _, _ = lax.fori_loop(0, d * k, body, (state.coef, eta_t, state.log_norm))
    eta_mm, norm_mm, obj_mm = _predictors(coef_mm, problem, prior)
    coef, eta, log_norm, objective, relax = _overrelax(
        state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth)
    rel = _rel_change(coef, state.coef, problem.weight_floor)
    new = state._replace(
        coef=coef, eta=eta, log_norm=log_norm, objective=objective, rel_change=rel, relax=relax,
        n_iter=state.n_iter + 1, key=key, last_full=full,
        full_sweep=rel < tol,  # looks converged: confirm with a sweep over every weight
    )
    return new, _info(new, problem, prior, converged=jnp.asarray(False))


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
    grad = _gradient(state.eta, state.log_norm, problem)
    S, K, diag = problem.bound.gram, problem.bound.class_factor, problem.bound.diag
    d, k = grad.shape
    # the sweeps visit the working set: nonzero weights and those whose zero is not optimal at W_t
    working = ((state.coef != 0) | (prior.residual(state.coef, grad) > 0)).ravel()
    order = jnp.argsort(~working, stable=True)  # working-set coordinates first, in cyclic order
    n_working = jnp.sum(working)

    def visit(t, carry):
        coef, Mt = carry
        i = order[t % n_working]
        j, c = i // k, i % k
        h = grad[j, c] - Mt[:, j] @ K[:, c]
        b = diag[j, c]
        w = coef[j, c]
        w_new = prior.coordinate_update(w - h / b, b)
        return lax.cond(w_new != w,
                        lambda: (coef.at[j, c].set(w_new), Mt.at[c].add((w_new - w) * S[j])),
                        lambda: (coef, Mt))

    coef_mm, _ = lax.fori_loop(0, inner_sweeps * n_working, visit, (state.coef, jnp.zeros((k, d))))
    eta_mm, norm_mm, obj_mm = _predictors(coef_mm, problem, prior)
    coef, eta, log_norm, objective, relax = _overrelax(
        state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth)
    new = state._replace(
        coef=coef, eta=eta, log_norm=log_norm, objective=objective, relax=relax,
        rel_change=_rel_change(coef, state.coef, problem.weight_floor), n_iter=state.n_iter + 1, last_full=jnp.asarray(True),
    )
    return new, _info(new, problem, prior, converged=jnp.asarray(False))


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
    P = _probabilities(mm.eta, mm.log_norm)
    grad = _gradient(mm.eta, mm.log_norm, problem, P)
    free, pen_grad, pen_curv, orthant = prior.newton_terms(mm.coef, grad)
    # weights that the MM step has just moved off zero keep its value for this step: a Newton
    # step that projected them back to zero could undo the MM step and fake convergence
    free = free & (state.coef != 0)
    free, rhs = free.ravel(), jnp.where(free, grad - pen_grad, 0.0).ravel()
    # at most `capacity` free weights, those with the largest gradient (Gauss–Southwell; chosen
    # by |w| instead, a fit with more nonzeros than slots needs far more steps); a selected
    # slot that is not free is inert
    _, idx = lax.top_k(jnp.where(free, jnp.abs(rhs), -1.0), min(capacity, free.size))
    sel = free[idx]
    info = loglik_hessian(P, problem.X, idx)
    mu = state.relax * jnp.max(jnp.where(sel, jnp.diag(info), 0.0)) + jnp.finfo(info.dtype).tiny
    system = jnp.where(sel[:, None] & sel[None, :], info, 0.0) + jnp.diag(
        jnp.where(sel, pen_curv.ravel()[idx] + mu, 1.0))
    step = jnp.where(sel, cho_solve(cho_factor(system, lower=True), rhs[idx]), 0.0)
    direction = jnp.zeros_like(rhs).at[idx].set(step).reshape(mm.coef.shape)
    slope = jnp.sum(rhs * direction.ravel())

    def trial(alpha):
        coef = prior.project(mm.coef + alpha * direction, orthant)
        return (coef,) + _predictors(coef, problem, prior)

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
        rel_change=jnp.maximum(_rel_change(coef, state.coef, problem.weight_floor), _rel_change(mm.coef, state.coef, problem.weight_floor)))
    return new, _info(new, problem, prior, converged=jnp.asarray(False))


def optimality_residual(coef, problem, prior):
    """``max_k dist(g_k, ∂penalty(w_k))``: zero exactly at the MAP estimate."""
    eta = problem.X @ coef
    grad = _gradient(eta, log_normalizer(eta), problem)
    return jnp.max(prior.residual(coef, grad))


def _info(state, problem, prior, *, converged):
    grad = _gradient(state.eta, state.log_norm, problem)
    return Info(state.objective, state.rel_change, jnp.max(prior.residual(state.coef, grad)),
                state.n_iter, converged)


def _step_fn(solver, options):
    if solver == "block":
        return partial(block_step, **{k: v for k, v in options if k in ("growth", "zero_tol")})
    if solver == "surrogate-cd":
        return partial(surrogate_cd_step, **{k: v for k, v in options if k in ("growth", "inner_sweeps")})
    if solver == "newton":
        return partial(newton_step, **{k: v for k, v in options
                                       if k in ("inner_sweeps", "damping", "armijo", "max_halvings",
                                                "capacity")})
    return partial(componentwise_step,
                   **{k: v for k, v in options if k in ("growth", "zero_visit_decay", "full_sweep_every")})


def _start(problem, prior, solver, coef0, seed):
    if solver == "block" and isinstance(prior, LaplacePrior):
        # eq. 13 keeps a zero weight at zero for good: zeros of the start take the ridge step's value
        ridge = ridge_start(problem, prior.lam)
        coef0 = ridge if coef0 is None else jnp.where(coef0 == 0, ridge, coef0)
    return init(problem, prior, coef0, seed=seed)


def _converged(state, tol):
    return (state.rel_change < tol) & state.last_full


@partial(jax.jit, static_argnames=("solver", "options"))
def _run(problem, prior, coef0, tol, seed, max_iter, *, solver, options):
    step = _step_fn(solver, options)
    state = _start(problem, prior, solver, coef0, seed)
    state = lax.while_loop(
        lambda s: (s.n_iter < max_iter) & ~_converged(s, tol),
        lambda s: step(s, problem, prior, tol=tol)[0],
        state,
    )
    return state, _info(state, problem, prior, converged=_converged(state, tol))


def run(problem, prior, *, solver="componentwise", coef0=None, tol=1e-6, max_iter=1000,
        seed=0, **options):
    """Iterate ``solver`` until the relative change ``max|ΔW| / max|W|`` drops below ``tol``.

    Parameters
    ----------
    problem : Problem
        From :func:`make_problem` (with the same ``solver`` and prior type).
    prior : LaplacePrior, GaussianPrior or FlatPrior
    solver : {"block", "componentwise", "surrogate-cd", "newton"}
    coef0 : array (d, m−1), optional
        Warm start; default zeros.  The SMLR block solver replaces zeros of the start by
        one ridge step's values (eq. 10 from zero), since eq. 13 never moves a zero weight.
    tol, max_iter : float, int
        Stopping rule; a component-wise fit stops only after a sweep over every weight.
    seed : int
        Seeds the visitation of zero weights (component-wise).
    **options
        ``growth`` (over-relaxation, default 1.5), ``zero_tol`` (block, default 1e-4),
        ``zero_visit_decay`` (default 0.8), ``full_sweep_every`` (default 10),
        ``inner_sweeps`` (surrogate-cd and newton, default 4), and for newton ``damping``
        (the least Levenberg–Marquardt factor, default 1e-8), ``armijo`` (1e-4) and
        ``max_halvings`` (30) and ``capacity`` (256: the most weights one Newton step moves).

    Returns
    -------
    (State, Info)
    """
    # NumPy scalars, not eager jnp.asarray calls (each a device dispatch, a cost paid on every fit of a λ path)
    return _run(problem, prior, coef0, np.float64(tol), seed, np.int64(max_iter),
                solver=solver, options=tuple(sorted(options.items())))


@partial(jax.jit, static_argnames=("solver", "n_steps", "options"))
def _trace(problem, prior, coef0, seed, *, solver, n_steps, options):
    step = _step_fn(solver, options)
    state = _start(problem, prior, solver, coef0, seed)
    first = _info(state, problem, prior, converged=jnp.asarray(False))
    state, infos = lax.scan(lambda s, _: step(s, problem, prior, tol=0.0), state, None, length=n_steps)
    stacked = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, infos)
    return state, stacked


def trace(problem, prior, *, solver="componentwise", n_steps=50, coef0=None, seed=0, **options):
    """Run exactly ``n_steps`` iterations under ``lax.scan``; :class:`Info` of the start and every step."""
    return _trace(problem, prior, coef0, seed, solver=solver, n_steps=int(n_steps),
                  options=tuple(sorted(options.items())))
