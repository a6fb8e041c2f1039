"""Move selection and slot management shared by both paths of the sequential type-II engine.

Tipping & Faul (2003), Sec. 4: at each step the engine scores, for every candidate basis
function ``i``, the best new prior variance ``v_i`` given its sparsity and quality factors
``s_i, q_i`` (004 eqs. 15–16; Tipping & Faul 2003, eqs. 19–20), and takes the single add,
re-estimate or delete that raises the objective most. The factors come from the likelihood's
path — closed form for the Gaussian likelihood (:mod:`.typeii`), the Gaussian linearization at
the posterior mode for the others (:mod:`.typeii_laplace`, Tipping 2001, Sec. 4; Tipping & Faul
2003, Sec. 5) — and everything after them is this module: the proposals and gains
(:func:`variance_moves`, :func:`profiled_moves`), the hierarchy's choice between them
(:func:`hierarchy_moves`), which of them are allowed (:func:`gate_moves`: the last basis is never
deleted, an add needs a free slot), the choice (:func:`best_move`; all three in one,
:func:`gated_moves` and :func:`choose`), λ after a move (:func:`update_lambda`), the recognition
of a cycle of moves (:func:`note_cycle`) and the growth of the slots that hold the active set
(:func:`grow_slots`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sparsebayes.models.priors.typeii import optimal_variance, variance_objective_change


class TypeIIModel(NamedTuple):
    """What the sequential type-II engine fits (the driver's ``model``): the type-II hierarchy ``prior``
    (:mod:`sparsebayes.models.priors.typeii`) and the ``likelihood``, an object of
    :mod:`sparsebayes.models.likelihoods`. The likelihood's ``conjugate_noise`` declaration picks the
    data step (:func:`sparsebayes.models.likelihoods.conjugate_noise`): the Gaussian's exact statistics
    (:mod:`.typeii_exact`), else the Laplace linearization at the mode (:mod:`.typeii_laplace`)."""

    prior: object
    likelihood: object


class Move(NamedTuple):
    """The chosen move: basis ``m`` to variance ``var`` (0 = delete); ``kind`` 0 re-estimate or
    delete, 1 add, 2 none (no gain above ``tol``); ``gain`` the best gain, ``blocked`` the best
    gain of an add refused for want of a free slot."""

    m: jax.Array
    var: jax.Array
    kind: jax.Array
    gain: jax.Array
    blocked: jax.Array


#: ``Info.kind`` of a step that found its best move an add with no free slot and paused (changed nothing).
PAUSED = 3


class Info(NamedTuple):
    """What one step of either path did: ``kind`` 0 re-estimate or delete, 1 add, 2 none (no gain
    above ``tol``, or the fit had stopped), :data:`PAUSED`; the chosen ``basis`` and its new
    variance ``var`` (0 = deleted); ``gain`` the move's predicted change of the objective; and
    ``objective`` the objective after the step."""

    kind: jax.Array
    basis: jax.Array
    var: jax.Array
    gain: jax.Array
    objective: jax.Array

    @classmethod
    def of(cls, move, objective, paused=False):
        """The :class:`Info` of a step that chose ``move`` (a :class:`Move`) and ended at ``objective``."""
        kind = jnp.where(paused, PAUSED, move.kind).astype(jnp.int32)
        return cls(kind, jnp.asarray(move.m, jnp.int32), move.var, move.gain, objective)

    @classmethod
    def none(cls, objective):
        """The :class:`Info` of a fit that has stopped: no move, gain 0."""
        z = jnp.zeros_like(objective)
        return cls(jnp.asarray(2, jnp.int32), jnp.asarray(0, jnp.int32), z, z, objective)


def variance_moves(s, q, var, kappa):
    """Each ``v_i`` at its maximiser of ``ℓ_i`` for the linear penalty ``κ`` (004 eq. 16; for
    ``κ = 0`` the RVM's ``α_i = s_i²/(q_i² − s_i)``, Tipping & Faul 2003, eq. 20), and the gain
    ``ℓ_i(v_new) − ℓ_i(v_old)`` of moving there (004 eq. 14; Tipping & Faul 2003, eqs. 27–29)."""
    proposal = optimal_variance(s, q, kappa)
    return proposal, variance_objective_change(proposal, var, s, q, kappa)


def profiled_moves(var, lam, noise_var, prior, s, q, n_fixed_point):
    """Moves scored with λ re-maximised: the exact change of ``L`` (``A`` and ``Σ τ`` move).

    With λ at its optimum the stationarity condition is ``v = optimal_variance(s, q, κ(λ(v)))``
    (envelope theorem), solved by ``n_fixed_point`` steps from 004 eq. 16 at the current λ; the
    gain adds the change of the hyperprior terms (004 eq. 13) to the marginal likelihood's
    (004 eq. 14). Deletion is scored for every active basis but the last one."""
    zero = jnp.zeros_like(noise_var)
    active = var > 0
    n_active = jnp.sum(active)
    sum_var = jnp.sum(var)
    base = prior.typeii_log_hyperprior(sum_var, lam, noise_var, n_active)

    def gain_of(v):
        sum_new = sum_var + v - var
        n_new = n_active + (v > 0).astype(jnp.int32) - active.astype(jnp.int32)
        lam_new = prior.typeii_update_lambda(sum_new, noise_var, n_new)
        return (variance_objective_change(v, var, s, q, zero)
                + prior.typeii_log_hyperprior(sum_new, lam_new, noise_var, n_new) - base)

    def refine(v, _):
        lam_v = prior.typeii_update_lambda(sum_var - var + v, noise_var, n_active - active + 1)
        return optimal_variance(s, q, prior.typeii_penalty(lam_v, noise_var)), None

    first = optimal_variance(s, q, prior.typeii_penalty(lam, noise_var))
    refined, _ = jax.lax.scan(refine, first, None, length=n_fixed_point)
    g_first, g_refined, g_zero = gain_of(first), gain_of(refined), gain_of(jnp.zeros_like(first))
    proposal = jnp.where(g_refined >= g_first, refined, first)
    gain = jnp.maximum(g_refined, g_first)
    # the last active basis is never deleted (gate_moves), so its delete is not scored: with no
    # τ_i left λ's profile degenerates (λ = 0 and L = +∞ for a = 0), which would crowd out its
    # re-estimate, so that a one-basis model kept its starting variance
    delete_better = active & (g_zero > gain) & (n_active > 1)
    return jnp.where(delete_better, 0.0, proposal), jnp.where(delete_better, g_zero, gain)


def hierarchy_moves(s, q, var, lam, noise_var, prior, n_fixed_point=8):
    """Each candidate's proposed variance and its gain under the hierarchy ``prior`` (its ``κ``,
    optimum, gain and, when ``prior.profile_lambda``, the hyperprior terms with λ re-maximised):
    :func:`profiled_moves` for the profiled hierarchies, else :func:`variance_moves` at the
    current λ (004 Algorithm 1; ARD's ``κ = 0``); ``noise_var = 1`` on the Laplace path
    (:mod:`.typeii_laplace`)."""
    if prior.profile_lambda:
        return profiled_moves(var, lam, noise_var, prior, s, q, n_fixed_point)
    return variance_moves(s, q, var, prior.typeii_penalty(lam, noise_var))


def gated_moves(s, q, var, lam, noise_var, prior, eligible, full, n_fixed_point=8):
    """Every candidate's proposed variance (:func:`hierarchy_moves`), the gains of the allowed moves and
    those of the adds refused for want of a slot (:func:`gate_moves`): the move choice of both paths,
    from their ``s, q`` (the Gaussian path's ``eligible`` also keeps out candidates aligned with an
    active column or whose ``s`` rounds to 0; ``full``: no free slot)."""
    proposal, gain = hierarchy_moves(s, q, var, lam, noise_var, prior, n_fixed_point)
    return (proposal, *gate_moves(proposal, gain, var > 0, eligible, full))


def choose(s, q, var, lam, noise_var, prior, eligible, full, tol, n_fixed_point=8):
    """The :class:`Move` of largest allowed gain (:func:`gated_moves`, :func:`best_move`)."""
    return best_move(*gated_moves(s, q, var, lam, noise_var, prior, eligible, full, n_fixed_point), var, tol)


def sequential_step(factors, advance, state, data, model, prior, *, tol, **settings):
    """One step of the sequential type-II engine (Tipping & Faul 2003, Sec. 4), written once for both data
    steps: ``factors(state, data, model, **settings)`` gives every candidate's sparsity and quality
    ``s, q`` from the likelihood's linearization (004 eqs. 19–21), the candidates that may enter, whether
    the slots are full, λ and the σ² the hierarchy's pieces read (1 without a noise variance);
    :func:`choose` takes the move of largest gain under the hierarchy ``prior``; ``advance(state, data,
    model, move, tol=tol, **settings)`` applies it, sets λ (:func:`update_lambda`), moves the likelihood's
    parameter and keeps the convergence bookkeeping, returning the new state and the step's :class:`Info`."""
    s, q, eligible, full, lam, noise_var = factors(state, data, model, **settings)
    move = choose(s, q, state.var, lam, noise_var, prior, eligible, full, tol)
    return advance(state, data, model, move, tol=tol, **settings)


def update_lambda(prior, var, noise_var):
    """λ by the hierarchy's update (004 eq. 17; 0 for ARD) at the prior variances ``var`` over the
    candidates (0 = not in the model), after a move of either path."""
    return prior.typeii_update_lambda(jnp.sum(var), noise_var, jnp.sum(var > 0))


def gate_moves(proposal, gain, active, eligible, full):
    """The gains of the allowed moves (``-inf`` elsewhere) and of the adds refused for want of a slot.

    A re-estimate is always allowed, a delete unless it would empty the model (the last basis is
    kept: with none left the sparsity and quality factors and, for the priors with a λ, its profile
    are undefined), an add only for an ``eligible`` candidate with a positive proposal and a free
    slot (``full`` false). A non-finite gain (``s_i`` rounded to ≤ 0) is never chosen, nor taken
    for "no move left"."""
    gain = jnp.where(jnp.isfinite(gain), gain, -jnp.inf)
    want_add = ~active & eligible & (proposal > 0)
    allowed = jnp.where(active, (proposal > 0) | (jnp.sum(active) > 1), want_add & ~full)
    return jnp.where(allowed, gain, -jnp.inf), jnp.where(want_add & full, gain, -jnp.inf)


def best_move(proposal, gain, blocked, var, tol):
    """The :class:`Move` of largest allowed ``gain`` (none when it does not exceed ``tol``)."""
    m = jnp.argmax(gain)
    kind = jnp.where(gain[m] > tol, jnp.where(var[m] > 0, 0, 1), 2)
    return Move(m, proposal[m], kind, gain[m], jnp.max(blocked))


def capacity_hit(move, tol):
    """Whether the best add was refused for want of a slot while no allowed move beat it."""
    return move.blocked > jnp.maximum(move.gain, tol)


#: Steps of ``L`` kept to recognise a cycle of moves (:func:`note_cycle`): cycles up to 15 steps long,
#: such as a two-move cycle under a σ² update every 5 steps (10).
CYCLE_MEMORY = 16


def note_cycle(state):
    """Record the step's ``L`` in ``state.recent``, and stop a fit that cycles (``state.cycled``).

    004 Algorithm 1 is not an ascent of ``L``: a move scored at the current λ can lower ``L``
    once λ is re-estimated, the reverse move raise it back, and the fit repeat the pair until
    ``max_iter`` (on a 40 × 4 linear design: add a basis, ``L`` −0.77; delete it, +0.77; for 2000
    steps, ending on either side by the parity of ``max_iter``). When ``L`` equals (to 1e-12) its
    value 2 to ``CYCLE_MEMORY − 1`` steps ago, the steps between are a cycle, and the fit stops
    at the first of its states whose ``L`` is the cycle's largest. A cycle must also have fallen on
    the way (its ``L`` spans more than 1e-9 relative): a fit creeping to convergence by moves that
    each gain a little over ``tol`` returns to its ``L`` of two steps ago within 1e-12 too, and
    must go on. The profiled hierarchies are ascents and never cycle.
    """
    L = state.objective
    scale = jnp.maximum(jnp.abs(L), 1.0)
    recent = jnp.concatenate([L[None], state.recent[:-1]])
    lag = jnp.arange(CYCLE_MEMORY)
    close = jnp.abs(recent - L) <= 1e-12 * scale
    period = jnp.min(jnp.where((lag >= 2) & close, lag, CYCLE_MEMORY))
    within = lag < period
    best = jnp.max(jnp.where(within, recent, -jnp.inf))
    fell = best - jnp.min(jnp.where(within, recent, jnp.inf)) > 1e-9 * scale
    cycled = (period < CYCLE_MEMORY) & fell & (L >= best - 1e-12 * scale)
    return state._replace(recent=recent, cycled=cycled)


def grow_slots(first, run, widen_to, capacity, limit, paused=lambda st: st.capacity_hit, whole_below=2):
    """``state = first(capacity, pause)``, then while ``paused(state)`` (any, for a batch):
    ``state = run(widen_to(state, 2 · capacity), pause)``; ``pause`` is on below ``limit``.

    The shared driver of the engines' growing fits (:func:`.typeii_exact.fit_growing`,
    :func:`.typeii_batch.fit_batch_growing`, :func:`.typeii_laplace.fit`): the active set lives
    in slots, a step costs more the more slots there are, so a fit starts in few and doubles them
    without restarting whenever the best move is an add that finds none free. The first run
    includes the start, so a fit that never outgrows its slots is one compiled program; up to
    ``limit ≤ whole_below · capacity`` growing saves little and the fit runs in ``limit`` slots at
    once (fewer widths to compile)."""
    if limit <= whole_below * capacity:
        capacity = limit
    state = first(capacity, capacity < limit)
    while capacity < limit and bool(np.any(jax.device_get(paused(state)))):  # on the host: jnp.any would build a program
        capacity = min(limit, 2 * capacity)
        state = run(widen_to(state, capacity), capacity < limit)
    return state
