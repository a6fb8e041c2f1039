"""The bound-optimization engine's problem, state and objective pieces (Krishnapuram et al. 2005, Sec. 3).

Shared by the solvers of :mod:`sparsebayes.inference.engines.bound` (block, component-wise) and
:mod:`sparsebayes.inference.engines.bound_surrogate` (surrogate-cd, Newton): the precomputed
:class:`Problem`, the iterate :class:`State`, the diagnostics :class:`Info`, the linear predictors,
the gradient (eq. 9), the over-relaxation of an MM step, and the check that a prior has the
``"bound"`` capability (:data:`sparsebayes.models.priors.CAPABILITIES`).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.inference.engines._compile import quick_twin
from sparsebayes.models.likelihoods import require_likelihood
from sparsebayes.models.likelihoods.multinomial import MULTINOMIAL, BohningBound, one_hot_reference
from sparsebayes.models.priors import has_piece, require

SOLVERS = ("block", "componentwise", "surrogate-cd", "newton")

#: The engine's likelihood: Böhning's bound (003 eq. 8) is the multinomial logistic one's, so the
#: engine fits that likelihood and checks its pieces once here.
LIKELIHOOD = require_likelihood(MULTINOMIAL, "bound")


#: Relative changes of the weights are measured against at least the weight that moves a
#: logit by this much (``weight_floor = LOGIT_FLOOR / max|X|``). Without a floor, iterates at
#: rounding level (the all-zero estimate at λ = λ_max, where eq. 15's threshold and the gradient
#: tie to an ulp) flip between 0 and 1e-16, a relative change of 1, and never stop.
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


def check_prior(prior):
    """``prior`` after checking it has the ``"bound"`` capability; ``ValueError`` naming the hierarchy and
    the missing piece otherwise, or when it estimates a shared hyperparameter (the engine fits a fixed penalty)."""
    require(prior, "bound")
    if getattr(prior, "gamma_prior", None) is not None:
        raise ValueError(f"the bound-optimization engine fits a fixed penalty: {type(prior).__name__} with gamma_prior "
                         "(γ estimated) needs the EM engine; give it without gamma_prior")
    if prior.bound_sparse and not has_piece(prior, "bound_ridge_precision"):
        raise ValueError(f"{type(prior).__name__} has bound_sparse but no bound_ridge_precision (the ridge step that "
                         "starts a block fit)")
    return prior


#: Problems of at most this many entries of ``XW`` (``n · d · (m−1)``, padded sizes) are compiled at
#: :data:`~sparsebayes.inference.engines._compile.QUICK_COMPILE` (:func:`is_small`): a step then costs a few
#: thousand multiply-adds, fast even in unoptimized code, and a first fit waits less for XLA. The
#: reproductions' Newton fits (kernel bases on 80 or more points, digits) are larger: their bits stand.
QUICK_MAX_SIZE = 1 << 12


def is_small(shape, n_free_classes):
    """Whether a design of ``shape`` (``n × d``) with ``m − 1 = n_free_classes`` weight columns is at
    most :data:`QUICK_MAX_SIZE`: its programs are compiled for compile time, not run time."""
    return shape[0] * shape[1] * n_free_classes <= QUICK_MAX_SIZE


def make_problem(X, y, n_classes, *, solver, prior):
    """Precompute what ``solver`` needs: ``B``'s diagonal, eigenbasis, or dense matrix (eq. 8); the dense
    ``B`` only for a block fit with a sparse prior (eq. 13)."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    block = solver == "block"
    X = jnp.asarray(X, dtype=jnp.float64)
    build = _build_problem_quick if is_small(X.shape, n_classes - 1) else _build_problem
    return build(X, jnp.asarray(y), n_classes=n_classes, dense=block and bool(check_prior(prior).bound_sparse),
                 eigen=block)


@partial(jax.jit, static_argnames=("n_classes", "dense", "eigen"))
def _build_problem(X, y, *, n_classes, dense, eigen):
    """:func:`make_problem`'s arrays, one compiled program (a dozen small ones when run eagerly)."""
    Y1 = one_hot_reference(y, n_classes)
    x_max = jnp.max(jnp.abs(X))
    return Problem(X, X.T, Y1, X.T @ Y1, LIKELIHOOD.bohning_bound(X, n_classes, dense=dense, eigen=eigen),
                   LOGIT_FLOOR / jnp.where(x_max > 0, x_max, 1.0))


_build_problem_quick = quick_twin(_build_problem, static_argnames=("n_classes", "dense", "eigen"))


def predictors(coef, problem, prior):
    """``η = XW``, the log-normalizers and the objective ``L(W) = ℓ(W) − penalty(W)``."""
    eta = problem.X @ coef
    log_norm = LIKELIHOOD.log_normalizer(eta)
    objective = jnp.sum(problem.Y1 * eta) - jnp.sum(log_norm) - prior.neg_log_prior(coef)
    return eta, log_norm, objective


def probabilities(eta, log_norm):
    """Class probabilities ``p_j`` (``n × (m−1)``, the reference class left out) from the kept predictors."""
    return jnp.exp(eta - log_norm[:, None])


def gradient(eta, log_norm, problem, P=None):
    """``g = Σ_j (y'_j − p_j) ⊗ x_j`` (eq. 9) from the kept predictors (or their probabilities ``P``)."""
    return problem.XtY - problem.Xt @ (probabilities(eta, log_norm) if P is None else P)


def rel_change(new, old, floor):
    """``max|Δw| / max(max|w_new|, max|w_old|, floor)`` (``floor``: ``Problem.weight_floor``)."""
    scale = jnp.maximum(jnp.maximum(jnp.max(jnp.abs(new)), jnp.max(jnp.abs(old))), floor)
    return jnp.max(jnp.abs(new - old)) / scale


def start_state(problem, prior, coef0=None, *, seed=0):
    """The :class:`State` at ``coef0`` (``d × (m−1)``; default zeros) as it is (the engine's ``init``,
    :func:`sparsebayes.inference.engines.bound.init`, adds the block solver's ridge start)."""
    d, k = problem.X.shape[1], problem.Y1.shape[1]
    coef = jnp.zeros((d, k)) if coef0 is None else jnp.asarray(coef0, dtype=jnp.float64)
    eta, log_norm, objective = predictors(coef, problem, prior)
    return State(
        coef, eta, log_norm, objective, jnp.asarray(1.0), jnp.asarray(jnp.inf),
        jnp.asarray(0), jnp.asarray(True), jnp.asarray(False), jax.random.PRNGKey(seed), jnp.max(jnp.abs(coef)),
    )


def ridge_start(problem, lam):
    """One RMLR bound step from zero, ``(B − λI)⁻¹(−g(0))`` (eq. 10): a nonzero start for eq. 13."""
    eta = problem.X @ jnp.zeros_like(problem.XtY)
    return problem.bound.solve_shifted(-gradient(eta, LIKELIHOOD.log_normalizer(eta), problem), lam)


def overrelax(state, coef_mm, eta_mm, norm_mm, obj_mm, problem, prior, growth):
    """Adaptive over-relaxation (Salakhutdinov & Roweis 2003) of an MM step ``W → W_MM``.

    Tries ``W + η(W_MM − W)`` (weights that the MM step made zero stay zero) and keeps it
    when its objective is at least that of ``W_MM``, growing ``η ← growth·η``; otherwise
    keeps ``W_MM`` and resets ``η = 1``.  Either way ``L`` does not decrease.
    """
    coef_try = jnp.where(coef_mm == 0, 0.0, state.coef + state.relax * (coef_mm - state.coef))
    eta_try, norm_try, obj_try = predictors(coef_try, problem, prior)
    accept = obj_try >= obj_mm
    pick = lambda a, b: jnp.where(accept, a, b)  # noqa: E731
    relax = jnp.where(accept, state.relax * growth, 1.0)
    return (pick(coef_try, coef_mm), pick(eta_try, eta_mm), pick(norm_try, norm_mm),
            pick(obj_try, obj_mm), relax)


def info(state, problem, prior, *, converged):
    """:class:`Info` of ``state``: its residual from the gradient at the kept predictors."""
    grad = gradient(state.eta, state.log_norm, problem)
    return Info(state.objective, state.rel_change, jnp.max(prior.bound_residual(state.coef, grad)),
                state.n_iter, converged)


def optimality_residual(coef, problem, prior):
    """``max_k dist(g_k, ∂penalty(w_k))``: zero exactly at the MAP estimate."""
    eta = problem.X @ coef
    grad = gradient(eta, LIKELIHOOD.log_normalizer(eta), problem)
    return jnp.max(prior.bound_residual(coef, grad))
