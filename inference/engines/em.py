"""Figueiredo's EM for sparse regression and classification, prior- and likelihood-agnostic.

The model (000 Sec. 3; 002 Secs. 2–3): ``z = Hβ + w`` with ``w ~ N(0, σ² I)`` (``z = y`` for
regression, a latent truncated-Gaussian for probit), ``β_i | τ_i ~ N(0, τ_i)`` and a
hyperprior on τ_i given by a prior object of :mod:`sparsebayes.models.priors`. Any likelihood
with EM working weights (:mod:`sparsebayes.models.likelihoods`: logistic, Poisson, Student-t,
negative binomial) enters the same way: its E-step gives a working response ``z`` and per-row
weights ``w`` with the surrogate ``−½ Σ w_i (z_i − η_i)²``, and the M-step is taken on ``HᵀWH``
(:func:`weighted_m_step`); the Gaussian and probit weights are constant (``1/σ²``, 1), which keeps
the precomputed ``HᵀH`` (:func:`m_step`). The likelihood's own parameter (σ², a t scale, a
dispersion) travels in ``noise_var`` and is updated after the weights, at their new values, by its
``update_params`` (AECM: an E-step of its own).

The engine keeps the contract of :mod:`sparsebayes.inference.engines.driver`: :class:`EMState` and
:class:`EMInfo`, :func:`init` ``(data, model, beta, noise_var) -> state``, a pure :func:`step`
``(state, data, model, *, controls, ...) -> (state, info)`` with ``model`` an :class:`EMModel`
``(prior, likelihood)``, and :func:`run` (the jit boundary: the driver's ``lax.while_loop`` on the
tolerance) and :func:`trace` (the driver's ``lax.scan`` keeping every step's :class:`EMInfo`). The
hierarchy travels in the state (``state.prior``, from ``model.prior`` at :func:`init`), so
hyperparameters it shares across weights (the Laplace γ, the horseshoe's global scale) can be
estimated inside the loop.

One EM iteration (:func:`step`):

* E-step on the latent targets: ``v = E[z | β, y]`` (002 eq. 6; the data for regression);
* E-step on the variances: ``E[τ_i⁻¹ | β_i] = 1/u_i²`` with ``U = diag(u)`` finite
  (002 eq. 15: ``u = |β|`` for Jeffreys);
* noise update ``σ² = ‖y − Hβ‖²/n`` (000 eq. 12), regression only, when estimated;
* M-step of the hierarchy's shared hyperparameters at this E-step
  (:func:`~sparsebayes.models.priors.update_shared`; the hierarchy itself when none is estimated);
* M-step ``β = U(σ² I + U HᵀH U)⁻¹ U Hᵀ v`` (000 "An Important Implementation Detail";
  002 eq. 16 with σ² = 1), solved by Cholesky. When the basis is wider than the data the
  same update is taken in its dual form (for widths beyond ``DUAL_RATIO · n``) ``β = U² Hᵀ(σ² I + H U² Hᵀ)⁻¹ v``;
* a weight whose contribution ``|β_i| ‖h_i‖`` falls below ``prune_tol`` times the largest
  contribution, now or at the start (``β⁽⁰⁾``), becomes exactly zero, and since ``u_i = 0``
  then, it stays zero. Measured with the column norms, as EM itself is, the rule does not depend
  on the units of each column (on ``|β_i|`` alone, inputs scaled by 1e8 beside a bias were
  pruned at once: weights of 1e-8 against the bias's). The floor at the starting point's scale
  lets every weight reach zero when that is the answer (a threshold relative to the present
  weights alone never prunes the largest, which would only decay geometrically).

Stop when ``‖β⁽ᵗ⁺¹⁾ − β⁽ᵗ⁾‖ / ‖β⁽ᵗ⁾‖ < tol`` (002 Step 4, δ = 1e-3 by default). When the
hierarchy estimates shared hyperparameters θ (the Laplace γ under a ``gamma_prior``, the horseshoe's
τ under a ``tau_prior``), the change watched is the joint one, ``max(‖Δβ‖/‖β‖, max_j |Δθ_j|/|θ_j|,
|ΔL|/max(|L|, 1))`` with ``L`` the objective (:func:`log_posterior`), scaled by the rate at which
the changes shrink into an estimate of the distance still to go (:func:`distance_to_fixed_point`):
the weights settle within a few iterations while θ, which the E-step moves only through them, is
still travelling (γ doubles per iteration from a start far below its mode when y is in small
units), so a rule on β alone stopped with θ 25-90 % from the joint mode (:func:`joint_change`).

The loop runs on arrays of fixed shape; :mod:`~sparsebayes.inference.engines.em_slices` runs it to
convergence on the shrinking active set (:func:`~sparsebayes.inference.engines.em_slices.fit_em`), and
at large ``n · p`` (Gaussian regression) :mod:`sparsebayes.inference.engines.em_working_set` runs it on a
working set of columns in its sufficient-statistics form (a ``(k + 1) × k`` pseudo-design) and checks
the answer on the full design, never forming ``HᵀH``.

A kernel design of low numerical rank can be given factored, ``H = QH̃`` (:mod:`.lowrank`):
the loop then runs on ``H̃`` (r × p) and the compressed targets ``Qᵀv``, with ``η = Q(H̃β)``
for the E-step and σ² (:func:`linear_predictor`, :func:`compress`), the same iterations at
``O(r²p)`` each.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.linalg import cho_factor, cho_solve

from sparsebayes.inference.engines import driver
from sparsebayes.inference.engines._active import active_first
from sparsebayes.inference.engines.em_covariance import conditional_covariance, laplace_covariance, solve_floor
from sparsebayes.inference.engines.em_start import RidgeStart
from sparsebayes.models.likelihoods.registry import row_mask
from sparsebayes.models.priors import neg_log_hyperprior, update_shared

__all__ = ["EMControls", "EMData", "EMInfo", "EMModel", "EMState", "RidgeStart", "conditional_covariance", "init",
           "laplace_covariance", "log_posterior", "run", "step", "trace"]

#: Widths at or below this never compact (recompiling costs more than it saves).
SMALL_WIDTH = 64
#: With at most this many weights active, the M-step's Cholesky runs on them alone, inside the
#: compiled loop of a wider slice (a factorization of the whole slice costs many times one of
#: the few active weights).
SMALL_SOLVE = 8
#: The M-step takes its dual (n × n) form only when the active width exceeds this many times
#: n: a Cholesky of k × k costs k³/3 per iteration, the dual form n²k + n³/3 (kernel bases
#: have k = n + 1, where the Gram form is the cheap one).
DUAL_RATIO = 2


class EMData(NamedTuple):
    """The design on the current active slice: ``H`` (n, k), ``y`` (n,), ``gram = HᵀH`` (k, k).

    ``gram`` is ``None`` when ``k > DUAL_RATIO · n``: the M-step then uses its dual (n × n) form.
    With a ``basis`` ``Q`` (n, r) the design is factored (:mod:`.lowrank`): ``H`` is then
    ``H̃`` (r, k), the data's design is ``QH̃``, ``y`` stays (n,), and ``gram = H̃ᵀH̃``.
    ``n_obs``, if given, is the number of data rows: the rows after it are padding, zero rows of
    the design (of ``Q`` when factored) with ``y = 0`` (:func:`~sparsebayes.inference.engines.em_slices.fit_em`).
    ``col_norm`` (k,), if
    given, holds the columns' norms ``‖h_i‖`` (those of ``H̃`` when factored, which are ``H``'s),
    by which pruning weighs the weights (:func:`step`); without it, by ``|β_i|`` alone.
    ``n_weights``, if given, is the number of weights of the model (pruned ones included, padding
    excluded), which the shared hyperparameters' M-step and prior count; without it, ``k``.
    """

    H: jax.Array
    y: jax.Array
    gram: jax.Array | None
    basis: jax.Array | None = None
    n_obs: jax.Array | None = None
    col_norm: jax.Array | None = None
    n_weights: jax.Array | None = None


def n_weights(data):
    """The model's number of weights: ``data.n_weights``, or the slice's width."""
    return data.H.shape[1] if data.n_weights is None else data.n_weights


def linear_predictor(data, beta):
    """``η = Hβ``, or ``Q(H̃β)`` for a factored design."""
    eta = data.H @ beta
    return eta if data.basis is None else data.basis @ eta


def compress(data, v):
    """The targets as the M-step's design sees them: ``v``, or ``Qᵀv`` for a factored design
    (then ``Hᵀv = H̃ᵀQᵀv``)."""
    return v if data.basis is None else v @ data.basis


class EMModel(NamedTuple):
    """The model EM fits, in the engine's model slot (:mod:`~sparsebayes.inference.engines.driver`): the
    hierarchy ``prior`` (a prior object with the EM capability, at its starting values: :func:`init`
    puts it in the state, where its estimated shared hyperparameters move, and :func:`step` reads it
    from there) and the ``likelihood`` (with EM working responses and weights)."""

    prior: NamedTuple
    likelihood: object


class EMState(NamedTuple):
    """Where EM stands: the weights ``beta``, σ² (``noise_var``), the iterations run, the last
    relative change (``‖Δβ‖/‖β‖``, or the joint change of :func:`joint_change` when the hierarchy
    estimates shared hyperparameters), the hierarchy ``prior`` (a pytree: its shared
    hyperparameters, when estimated, are the current estimates), and what the joint change needs
    (``−inf`` and ``inf`` otherwise, and at a start): ``objective``, the objective at this state,
    and ``step_change``, the last step's joint change before its rate correction."""

    beta: jax.Array
    noise_var: jax.Array
    n_iter: jax.Array
    rel_change: jax.Array
    prior: NamedTuple
    objective: jax.Array = -np.inf
    step_change: jax.Array = np.inf


class EMInfo(NamedTuple):
    """What a step reports about the state it returns: the objective (:func:`log_posterior`), the
    relative change, the number of nonzero weights, σ², the hierarchy, and ``scale``, the E-step's
    ``u`` at the new ``β`` (``E[τ_i⁻¹ | β_i] = 1/u_i²``; 0 where ``β_i = 0``)."""

    objective: jax.Array
    rel_change: jax.Array
    n_active: jax.Array
    noise_var: jax.Array
    prior: NamedTuple
    scale: jax.Array


class EMControls(NamedTuple):
    """The loop's scalar settings: stop once ``‖Δβ‖/‖β‖ < tol``, at ``max_iter`` iterations, or with at
    most ``shrink_below`` nonzero weights (:func:`run`); prune a weight whose contribution is below
    ``max(prune_tol · the largest, prune_floor)``; keep an estimated σ² at least ``noise_floor``
    (:func:`step`)."""

    tol: float = 1e-3
    max_iter: float = 1000
    shrink_below: float = -1
    prune_tol: float = 1e-8
    noise_floor: float = 0.0
    prune_floor: float = 0.0


def log_posterior(beta, noise_var, data, prior, likelihood):
    """The objective EM climbs: ``log p(y | β, σ²) + log p(β)`` up to a constant.

    Regression: ``−n/2 log σ² − ‖y − Hβ‖²/(2σ²) − pen(β)`` (000 eq. 3 with a flat prior on σ²);
    probit: ``Σ log Φ(s_i h_iᵀβ) − pen(β)``; ``pen = −log p(β)`` of the marginal prior. When the
    hierarchy estimates shared hyperparameters θ (γ) the objective is ``log p(y | β, σ²) + log p(β | θ)
    + log p(θ)``, and ``pen`` gains :func:`~sparsebayes.models.priors.neg_log_hyperprior`.
    """
    eta = linear_predictor(data, beta)
    return -(likelihood.neg_log_lik(data.y, eta, noise_var, data.n_obs) + prior.neg_log_prior(beta)
             + neg_log_hyperprior(prior, n_weights(data)))


def _gram_solve(u, gram, noise_var, rhs):
    """``(σ² I + U G U)⁻¹ rhs`` by Cholesky.

    ``G`` (symmetric) and ``I`` are read transposed: the same values, laid out column-major, the
    order LAPACK's Cholesky takes, so the compiled loop forms the system from them as they are
    instead of first copying each into that order (two copies of the slice's square per call)."""
    A = noise_var * jnp.eye(u.shape[0], dtype=u.dtype).T + u[:, None] * gram.T * u[None, :]
    return cho_solve(cho_factor(A, lower=True), rhs)


def _active_gram_solve(u, gram, noise_var, rhs):
    """:func:`_gram_solve` on the at most ``SMALL_SOLVE`` coordinates with ``u ≠ 0``.

    A coordinate with ``u_i = 0`` has the row ``σ² e_i`` and ``rhs_i = 0``, so its solution is 0
    and the rest is the solve on the active block alone; inactive coordinates pad the index
    list (:func:`~sparsebayes.inference.engines._active.active_first`).
    """
    idx = active_first(u != 0, SMALL_SOLVE)
    c = _gram_solve(u[idx], gram[idx[:, None], idx[None, :]], noise_var, rhs[idx])
    return jnp.zeros_like(rhs).at[idx].set(c)


def solvable_noise_var(u, sq_norm, noise_var, dim):
    """``max(σ², solve_floor(u, ‖h‖², dim))`` (:func:`~sparsebayes.inference.engines.em_covariance.solve_floor`):
    the least σ² at which the M-step's system ``σ² I + U HᵀH U`` (or its dual, ``dim`` its size)
    factors in float64."""
    return jnp.maximum(noise_var, solve_floor(u, sq_norm, dim))


def m_step(u, v, noise_var, data, guard=False):
    """``β = U(σ² I + U HᵀH U)⁻¹ U Hᵀ v`` by Cholesky (000, "An Important Implementation Detail").

    With ``gram=None`` the push-through identity gives ``β = U² Hᵀ(σ² I + H U² Hᵀ)⁻¹ v``. On
    the last slice (width at most ``SMALL_WIDTH``, which never compacts), once at most
    ``SMALL_SOLVE`` weights are active the Cholesky runs on those alone
    (:func:`_active_gram_solve`); wider slices compact long before that, and the branch
    would only add compile time there. ``v`` comes through :func:`compress`. With ``guard`` the
    system is formed with σ² at least :func:`solvable_noise_var`'s, so that its Cholesky does not
    break down in float64 where σ² sits at its floor beside a numerically singular ``U HᵀH U``
    (:func:`~sparsebayes.inference.engines.em_slices.run_slices` runs a slice guarded
    only after it produced a non-finite weight).
    """
    if data.gram is not None:
        if guard:
            noise_var = solvable_noise_var(u, jnp.diagonal(data.gram), noise_var, u.shape[0])
        rhs = u * (v @ data.H)  # v @ H = Hᵀv without copying Hᵀ
        if not SMALL_SOLVE < u.shape[0] <= SMALL_WIDTH:  # only the last slice runs long with few active
            return u * _gram_solve(u, data.gram, noise_var, rhs)
        c = lax.cond(jnp.sum(u != 0) <= SMALL_SOLVE, _active_gram_solve, _gram_solve, u, data.gram, noise_var, rhs)
        return u * c
    n = data.H.shape[0]
    d = u**2
    if guard:
        noise_var = solvable_noise_var(u, jnp.sum(data.H * data.H, axis=0), noise_var, n)
    W = noise_var * jnp.eye(n, dtype=u.dtype) + (data.H * d[None, :]) @ data.H.T
    return d * (cho_solve(cho_factor(W, lower=True), v) @ data.H)


def weighted_m_step(u, z, w, data):
    """``β = U(I + U HᵀWH U)⁻¹ U HᵀW z``: the maximizer of ``−½ Σ_i w_i (z_i − h_iᵀβ)² − ½ βᵀU⁻²β``, the
    working surrogate of a likelihood with per-row weights (:mod:`sparsebayes.models.likelihoods`)
    plus the E-step's Gaussian prior; with ``W = I/σ²`` it is :func:`m_step`'s update. ``w`` is 0 on
    padding rows.

    With ``gram=None`` (a basis wider than ``DUAL_RATIO`` times the rows) the push-through identity
    gives ``β = U² Hᵀ S (I + S H U² Hᵀ S)⁻¹ S z``, ``S = W^{1/2}``, an ``n × n`` system. The design is
    never factored here (:func:`~sparsebayes.inference.engines.em_slices.fit_em` forms ``QH̃``:
    ``HᵀWH`` has no form in ``H̃`` alone).
    """
    H = data.H
    if data.gram is not None:
        gram = (H * w[:, None]).T @ H
        return u * _gram_solve(u, gram, 1.0, u * ((w * z) @ H))
    d = u**2
    s = jnp.sqrt(w)
    Hs = H * s[:, None]
    A = jnp.eye(H.shape[0], dtype=u.dtype) + (Hs * d[None, :]) @ Hs.T
    return d * ((s * cho_solve(cho_factor(A, lower=True), s * z)) @ H)


#: Step halvings :func:`halve_until_ascent` tries before it keeps the current weights.
MAX_HALVINGS = 30


def halve_until_ascent(beta, new, params, data, prior, likelihood):
    """``β + 2⁻ᵏ(β⁺ − β)`` for the least ``k ≤ MAX_HALVINGS`` at which :func:`log_posterior` does not fall
    below its value at ``β`` (``β`` itself if none does).

    Where a likelihood's working surrogate is an expansion (IRLS, Newton), not a bound, the M-step's
    ``β⁺`` is a Newton-type step on the log likelihood plus the E-step's minorizer of the log prior,
    whose slopes at ``β`` are the objective's: the direction rises, and a short enough step along it
    raises the objective (the step-halving of Fisher scoring; Jørgensen 1984). The comparison allows
    rounding (``1e-12`` relative), so that a fit at its fixed point is not halved away from it.
    """
    base = log_posterior(beta, params, data, prior, likelihood)
    floor = base - 1e-12 * jnp.maximum(1.0, jnp.abs(base))
    step = new - beta

    def value(t):
        return log_posterior(beta + t * step, params, data, prior, likelihood)

    def short(carry):
        t, val, k = carry
        return ~(val >= floor) & (k < MAX_HALVINGS)  # NaN counts as a fall

    def halve(carry):
        t, _, k = carry
        return 0.5 * t, value(0.5 * t), k + 1

    one = jnp.ones((), beta.dtype)
    t, val, _ = lax.while_loop(short, halve, (one, value(one), jnp.zeros((), jnp.int32)))
    return jnp.where(val >= floor, beta + t * step, beta)


def _as(x, dtype):
    """``x`` as ``dtype``: a NumPy value as a NumPy array (it enters a jitted loop as it is, with no
    dispatch), a JAX array (or a tracer, inside ``jit``/``vmap``) as a JAX array."""
    return x.astype(dtype) if isinstance(x, jax.Array) else np.asarray(x, dtype=dtype)


def init(data, model, beta, noise_var, n_iter=0):
    """The :class:`EMState` on ``data`` (:class:`EMData`) at the weights ``beta`` (the ridge start,
    :class:`RidgeStart`, in :func:`~sparsebayes.inference.engines.em_slices.fit_em`),
    σ² ``noise_var`` and the hierarchy ``model.prior``
    (:class:`EMModel`), after ``n_iter`` iterations.

    Every float (the hierarchy's parameters included) is float64, so that a state fed back to
    :func:`run` matches the types its loop carries. ``ValueError`` when ``beta`` has not one weight
    per column of ``data.H``.
    """
    if np.ndim(beta) != 1 or np.shape(beta)[0] != np.shape(data.H)[1]:
        raise ValueError(f"beta must hold one weight per column of the design ({np.shape(data.H)[1]}), got shape "
                         f"{np.shape(beta)}")
    return EMState(_as(beta, np.float64), _as(noise_var, np.float64), _as(n_iter, np.int64), np.float64(np.inf),
                   jax.tree.map(lambda x: _as(x, np.float64), model.prior), np.float64(-np.inf), np.float64(np.inf))


def _info(state, data, likelihood):
    """The :class:`EMInfo` of ``state`` (evaluates the objective: about one E-step's cost)."""
    prior = state.prior
    return EMInfo(log_posterior(state.beta, state.noise_var, data, prior, likelihood), state.rel_change,
                  jnp.sum(state.beta != 0), state.noise_var, prior, prior.em_scale(state.beta))


def step(state, data, model, *, controls, estimate_noise, guard=False):
    """One EM iteration: E-step (latent targets, variances), σ² update, M-steps, pruning, for
    ``model.likelihood`` (:class:`EMModel`) and the hierarchy in ``state.prior``.

    The E-step is taken at ``(β⁽ᵗ⁾, θ⁽ᵗ⁾)``, ``θ`` the hierarchy's shared hyperparameters; then
    conditional M-steps in turn, σ², β given σ², θ given β⁽ᵗ⁺¹⁾ (``state.prior.update_shared``, at the
    same E-step), so each step climbs :func:`log_posterior` (000 Sec. 3, the EM argument; ECM,
    Meng & Rubin 1993). A weight whose contribution ``|β_i| ‖h_i‖`` (``data.col_norm``) is below
    ``max(controls.prune_tol · max_j |β_j| ‖h_j‖, controls.prune_floor)`` is set to exactly zero.
    Returns the new state and its :class:`EMInfo`; :func:`run` discards the info inside its loop,
    and the objective it holds is then never computed (the compiler drops unused values).
    """
    beta, prior, likelihood = state.beta, state.prior, model.likelihood
    eta = linear_predictor(data, beta)
    u = prior.em_scale(beta)  # E[1/τ_i | β_i] = 1/u_i²
    weighted = not getattr(likelihood, "constant_weight", True)
    if not weighted:  # w_i = 1/σ² on every row: the precomputed Gram
        v = compress(data, likelihood.em_working(data.y, eta, state.noise_var)[0])  # 002 eq. 6 (or the data)
        if estimate_noise:  # 000 eq. 12
            noise_var = jnp.maximum(likelihood.update_params(data.y, eta, state.noise_var, data.n_obs),
                                    controls.noise_floor)
        else:
            noise_var = state.noise_var
        new = m_step(u, v, noise_var, data, guard)
    else:
        z, w = likelihood.em_working(data.y, eta, state.noise_var)
        new = weighted_m_step(u, z, w * row_mask(eta, data.n_obs), data)
        if not getattr(likelihood, "monotone_em", True):  # an expansion, not a bound: keep the objective rising
            new = halve_until_ascent(beta, new, state.noise_var, data, prior, likelihood)
    size = jnp.abs(new) if data.col_norm is None else jnp.abs(new) * data.col_norm
    new = jnp.where(size < jnp.maximum(controls.prune_tol * jnp.max(size), controls.prune_floor), 0.0, new)
    if weighted:  # the likelihood's own parameter at the new weights (its own E-step: AECM)
        noise_var = state.noise_var
        if estimate_noise:
            noise_var = jnp.maximum(likelihood.update_params(data.y, linear_predictor(data, new), state.noise_var,
                                                             data.n_obs), controls.noise_floor)
    rel = jnp.linalg.norm(new - beta) / jnp.maximum(jnp.linalg.norm(beta), jnp.finfo(beta.dtype).tiny)
    new_prior = update_shared(prior, beta, new, n_weights(data))
    objective, change = state.objective, state.step_change
    if new_prior is not prior or weighted:  # estimated hyperparameters, or a working-weights likelihood
        objective = log_posterior(new, noise_var, data, new_prior, likelihood)
        change = joint_change(rel, (prior, state.noise_var), (new_prior, noise_var), state.objective, objective)
        rel = distance_to_fixed_point(change, state.step_change)
    state = EMState(new, noise_var, state.n_iter + 1, rel, new_prior, objective, change)
    return state, _info(state, data, likelihood)


#: The largest contraction rate :func:`distance_to_fixed_point` believes (a step 100 times its
#: change from the fixed point at most); a ratio of changes above it (a transient, a pruning) is
#: read as this rate.
MAX_RATE = 0.99


def distance_to_fixed_point(change, previous_change):
    """``change · max(1, ρ/(1 − ρ))`` with ``ρ = change / previous_change`` at most ``MAX_RATE`` (and
    ``MAX_RATE`` when the change did not shrink).

    EM converges linearly (Dempster, Laird & Rubin 1977, Sec. 3): near the mode each step's change
    is ``ρ`` times the last, so the distance still to go is ``Σ_{k≥1} ρᵏ · change = change · ρ/(1 − ρ)``.
    The hyperparameters' EM is slow (``ρ`` near 1 where the weights determine θ weakly), so a rule
    on the change alone stopped ``1/(1 − ρ)`` changes away; this one stops at about ``tol`` from it.
    """
    shrinks = change < previous_change  # never 0/0 or inf/inf
    rate = jnp.minimum(jnp.where(shrinks, change / jnp.where(shrinks, previous_change, 1.0), MAX_RATE), MAX_RATE)
    return change * jnp.maximum(1.0, rate / (1.0 - rate))


def joint_change(rel_beta, prior, new_prior, objective, new_objective):
    """The change EM's stopping rule watches when the hierarchy estimates shared hyperparameters θ:
    ``max(‖Δβ‖/‖β‖, max_j |Δθ_j|/|θ_j|, |ΔL|/max(|L|, 1))``, θ_j every float of the hierarchy (the
    fixed ones, a hyperprior's shape and rate, do not move and add 0) and ``L`` the objective
    (:func:`log_posterior`; ``inf`` from a start, where the previous one is ``−inf``).

    A hierarchy that estimates nothing is its own M-step (``update_shared`` returns it: the
    module's rule on ``‖Δβ‖/‖β‖`` alone, with no objective to evaluate, is then kept as it is).
    """
    tiny = jnp.finfo(jnp.result_type(rel_beta)).tiny
    moves = [jnp.max(jnp.abs(b - a) / jnp.maximum(jnp.abs(a), tiny))
             for a, b in zip(jax.tree.leaves(prior), jax.tree.leaves(new_prior))]
    rel_obj = jnp.where(jnp.isfinite(objective), jnp.abs(new_objective - objective)
                        / jnp.maximum(jnp.abs(new_objective), 1.0), jnp.inf)
    return jnp.max(jnp.stack([rel_beta, rel_obj, *moves]))


@partial(jax.jit, static_argnames=("estimate_noise", "guard"))
def run(state, data, model, controls, *, estimate_noise, guard=False):
    """:func:`step` (settings ``controls``, ``estimate_noise``, ``guard``: the M-step's guarded solve,
    :func:`m_step`) through :func:`~sparsebayes.inference.engines.driver.run` until ``rel_change <
    controls.tol``, ``controls.max_iter`` iterations, or at most ``controls.shrink_below`` nonzero
    weights; returns the final state and its :class:`EMInfo`."""
    final = driver.run(partial(step, controls=controls, estimate_noise=estimate_noise, guard=guard), state, data,
                       model, tol=controls.tol, max_iter=controls.max_iter,
                       halt=lambda s: ~(jnp.sum(s.beta != 0) > controls.shrink_below))
    return final, _info(final, data, model.likelihood)


@partial(jax.jit, static_argnames=("n_steps", "estimate_noise"))
def trace(state, data, model, controls, *, n_steps, estimate_noise):
    """``n_steps`` iterations on the full basis with the :class:`EMInfo` of each
    (:func:`~sparsebayes.inference.engines.driver.trace`); ``controls.tol``, ``max_iter`` and
    ``shrink_below`` do not stop it."""
    return driver.trace(partial(step, controls=controls, estimate_noise=estimate_noise), state, data, model,
                        n_steps=n_steps)
