"""Bound optimization for multinomial logistic regression (Krishnapuram et al. 2005, Sec. 3).

One engine, several priors.  The objective (maximized) is

    L(W) = ℓ(W) − penalty(W),

with ℓ the multinomial log-likelihood (003 eq. 2, last class the reference) and the
penalty ``neg_log_prior`` of a hierarchy object with the ``"bound"`` capability
(:data:`sparsebayes.models.priors.CAPABILITIES`: :class:`~sparsebayes.models.priors.LaplacePrior`
for SMLR, :class:`~sparsebayes.models.priors.penalty.GaussianPrior` for RMLR,
:class:`~sparsebayes.models.priors.penalty.FlatPrior` for ML), checked once per fit; the engine asks the
object for the surrogate's maximizers and its optimality residual. An unsupported hierarchy (the
horseshoe) is a ``ValueError`` that names it and the missing piece. Every iteration maximizes
the surrogate built on Böhning's bound ``H(W) ⪰ B`` (eqs. 6, 8), so ``L`` never decreases.

Four solvers share the state:

* ``"block"``: the whole-vector maximizer of the surrogate, ``W ← B⁻¹(Bw − g)`` (eq. 7),
  ``(B − λI)⁻¹(Bw − g)`` (eq. 10) with a precomputed eigenbasis, or the numerically safe
  SMLR form (eq. 13), accelerated by adaptive over-relaxation (Salakhutdinov & Roweis
  2003; the paper's Sec. 5): the step ``W + η(W_MM − W)`` is kept when it beats the plain
  MM step ``W_MM``, and then ``η ← growth·η``; otherwise ``W_MM`` is kept and ``η ← 1``.
  The SMLR block update never makes a weight exactly zero; for a prior with ``bound_sparse``,
  weights below ``zero_tol · max(max|W|, max|W₀|)`` whose zero is optimal (for SMLR, the
  gradient lies inside ``[−λ, λ]``) are set to zero when that does not lower the objective.
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

The problem, state and shared pieces are in :mod:`sparsebayes.inference.engines.bound_problem`, the
surrogate-cd and Newton steps in :mod:`sparsebayes.inference.engines.bound_surrogate`.
The engine keeps the contract of :mod:`sparsebayes.inference.engines.driver`: :func:`init`
``(problem, prior, coef0) -> State`` (with the block solver's ridge start), a pure :func:`step`
``(state, problem, prior, *, solver, ...) -> (State, Info)`` (the solver's iteration), and
``run``, the jit boundary (the driver's ``lax.while_loop`` on the relative change of ``W``, all the
engine estimates), and ``trace``, a fixed number of steps (the driver's ``lax.scan``) returning
every step's :class:`Info`.  Both take ``coef0`` for warm starts.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.inference.engines import driver
from sparsebayes.inference.engines._compile import quick_twin
from sparsebayes.inference.engines.bound_problem import (  # noqa: F401  (the engine's API, re-exported)
    LIKELIHOOD,
    LOGIT_FLOOR,
    QUICK_MAX_SIZE,
    SATURATED,
    SOLVERS,
    Info,
    Problem,
    State,
    check_prior,
    gradient,
    info,
    is_small,
    make_problem,
    optimality_residual,
    overrelax,
    predictors,
    rel_change,
    ridge_start,
    start_state,
)
from sparsebayes.inference.engines.bound_surrogate import loglik_hessian, newton_step, surrogate_cd_step  # noqa: F401


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
    grad = gradient(state.eta, state.log_norm, problem)
    rhs = problem.bound.apply(state.coef) - grad
    coef_mm = prior.bound_block_update(state.coef, rhs, problem.bound)
    eta_mm, norm_mm, obj_mm = predictors(coef_mm, problem, prior)
    coef, eta, log_norm, objective, relax = overrelax(
        state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth)
    if prior.bound_sparse:
        grad_new = gradient(eta, log_norm, problem)
        small = jnp.abs(coef) <= zero_tol * jnp.maximum(jnp.max(jnp.abs(coef)), state.start_scale)
        zero_optimal = prior.bound_residual(jnp.zeros_like(coef), grad_new) == 0  # |g| <= λ for SMLR
        prune = small & zero_optimal & (coef != 0)
        coef_pruned = jnp.where(prune, 0.0, coef)
        eta_p, norm_p, obj_p = predictors(coef_pruned, problem, prior)
        keep = obj_p >= objective  # pruning only where it does not lower the objective
        coef = jnp.where(keep, coef_pruned, coef)
        eta, log_norm = jnp.where(keep, eta_p, eta), jnp.where(keep, norm_p, log_norm)
        objective = jnp.where(keep, obj_p, objective)
        coef, eta, log_norm, objective = _reenter(coef, eta, log_norm, objective, problem, prior)
    new = state._replace(
        coef=coef, eta=eta, log_norm=log_norm, objective=objective, relax=relax,
        rel_change=rel_change(coef, state.coef, problem.weight_floor), n_iter=state.n_iter + 1, last_full=jnp.asarray(True),
    )
    return new, info(new, problem, prior, converged=jnp.asarray(False))


def _reenter(coef, eta, log_norm, objective, problem, prior):
    """Zero weights whose zero is not optimal (``|g| > λ``) re-enter at their coordinate maximizer of
    Böhning's surrogate (eq. 15 from ``w = 0``).

    Eq. 13 never moves a zero weight, and the block step's pruning zeroes small weights whose
    gradient lies inside ``[−λ, λ]`` at that step; where the optimum needs such a weight (one whose
    sign flips on the way passes near zero) the fit settled on a wrong support and reported
    convergence. All such weights re-enter together when that does not lower ``L``; otherwise the
    one with the largest residual alone, a single coordinate maximizer of the surrogate, which cannot.
    """
    grad = gradient(eta, log_norm, problem)
    resid = jnp.where(coef == 0, prior.bound_residual(coef, grad), 0.0)
    diag = problem.bound.diag
    entry = prior.bound_coordinate_update(-grad / diag, diag)

    def enter(_):
        every = jnp.where(resid > 0, entry, coef)
        eta_e, norm_e, obj_e = predictors(every, problem, prior)
        worst = (jnp.arange(resid.size) == jnp.argmax(resid)).reshape(resid.shape)
        one = jnp.where(worst, entry, coef)
        return lax.cond(obj_e >= objective, lambda: (every, eta_e, norm_e, obj_e),
                        lambda: (one, *predictors(one, problem, prior)))

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
        log_norm = lax.cond(jnp.max(p) > 1.0 - SATURATED, lambda: LIKELIHOOD.log_normalizer(eta_t.T),
                            lambda: jnp.logaddexp(log_norm + jnp.log1p(-p), eta_c))
        return coef.at[j, c].set(w_new), eta_t, log_norm

    def visit(j, c, carry):
        coef, eta_t, log_norm = carry
        w = coef[j, c]
        x = problem.Xt[j]
        p = jnp.exp(eta_t[c] - log_norm)
        g = problem.XtY[j, c] - x @ p
        b_kk = problem.bound.diag[j, c]
        w_new = prior.bound_coordinate_update(w - g / b_kk, b_kk)
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
    eta_mm, norm_mm, obj_mm = predictors(coef_mm, problem, prior)
    coef, eta, log_norm, objective, relax = overrelax(
        state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth)
    rel = rel_change(coef, state.coef, problem.weight_floor)
    new = state._replace(
        coef=coef, eta=eta, log_norm=log_norm, objective=objective, rel_change=rel, relax=relax,
        n_iter=state.n_iter + 1, key=key, last_full=full,
        full_sweep=rel < tol,  # looks converged: confirm with a sweep over every weight
    )
    return new, info(new, problem, prior, converged=jnp.asarray(False))


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


def step(state, problem, prior, *, solver="componentwise", tol=0.0, **options):
    """One iteration of ``solver`` (:data:`SOLVERS`; the module docstring) from ``state``: returns the new
    :class:`State` and its :class:`Info`. ``tol`` only tells the component-wise solver whether its next
    sweep must visit every weight; ``options`` as :func:`run` takes them."""
    return _step_fn(solver, tuple(sorted(options.items())))(state, problem, prior, tol=tol)


def init(problem, prior, coef0=None, *, seed=0, solver="componentwise"):
    """The :class:`State` at ``coef0`` (``d × (m−1)``; default zeros) for ``solver``: the SMLR block
    solver's zeros take one ridge step's values (eq. 10 from zero), since eq. 13 never moves a zero
    weight. ``seed`` seeds the component-wise visitation of zero weights."""
    if solver == "block" and prior.bound_sparse:
        ridge = ridge_start(problem, prior.bound_ridge_precision)
        coef0 = ridge if coef0 is None else jnp.where(coef0 == 0, ridge, coef0)
    return start_state(problem, prior, coef0, seed=seed)


def _converged(state, tol):
    """The stopping rule: the relative change of ``W`` below ``tol``, on a step that visited every weight."""
    return (state.rel_change < tol) & state.last_full


@partial(jax.jit, static_argnames=("solver", "options"))
def _run(problem, prior, coef0, tol, seed, max_iter, *, solver, options):
    state = init(problem, prior, coef0, seed=seed, solver=solver)
    state = driver.run(partial(_step_fn(solver, options), tol=tol), state, problem, prior, tol=tol, max_iter=max_iter,
                       converged=_converged)
    return state, info(state, problem, prior, converged=_converged(state, tol))


_run_quick = quick_twin(_run, static_argnames=("solver", "options"))


def run(problem, prior, *, solver="componentwise", coef0=None, tol=1e-6, max_iter=1000,
        seed=0, **options):
    """Iterate ``solver`` until the relative change ``max|ΔW| / max|W|`` drops below ``tol``.

    Parameters
    ----------
    problem : Problem
        From :func:`make_problem` (with the same ``solver`` and prior type).
    prior : hierarchy object with the ``"bound"`` capability
        ``LaplacePrior`` (fixed γ), ``GaussianPrior`` or ``FlatPrior``; another is a ``ValueError``
        naming it and the missing piece (:func:`~sparsebayes.inference.engines.bound_problem.check_prior`).
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

    Problems of at most :data:`QUICK_MAX_SIZE` entries of ``XW`` run a program compiled for speed of
    compiling (:mod:`sparsebayes.inference.engines._compile`), which may differ from the optimized one's
    estimate in the last bits.
    """
    check_prior(prior)
    # NumPy scalars, not eager jnp.asarray calls (each a device dispatch, a cost paid on every fit of a λ path)
    program = _run_quick if is_small(problem.X.shape, problem.XtY.shape[1]) else _run
    return program(problem, prior, coef0, np.float64(tol), seed, np.int64(max_iter),
                   solver=solver, options=tuple(sorted(options.items())))


@partial(jax.jit, static_argnames=("solver", "n_steps", "options"))
def _trace(problem, prior, coef0, seed, *, solver, n_steps, options):
    state = init(problem, prior, coef0, seed=seed, solver=solver)
    first = info(state, problem, prior, converged=jnp.asarray(False))
    state, infos = driver.trace(partial(_step_fn(solver, options), tol=0.0), state, problem, prior, n_steps=n_steps)
    stacked = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, infos)
    return state, stacked


def trace(problem, prior, *, solver="componentwise", n_steps=50, coef0=None, seed=0, **options):
    """Run exactly ``n_steps`` iterations under ``lax.scan``; :class:`Info` of the start and every step."""
    check_prior(prior)
    return _trace(problem, prior, coef0, seed, solver=solver, n_steps=int(n_steps),
                  options=tuple(sorted(options.items())))
