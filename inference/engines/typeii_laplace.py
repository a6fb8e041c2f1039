"""Sequential type-II maximum likelihood for a non-Gaussian likelihood, by the Laplace approximation
at the posterior mode, under any type-II hierarchy: the RVM classifier (Bernoulli-logistic), the
Poisson RVM (log link), and with the same code a Poisson FLAP, a Bernoulli BLS or an over-dispersed
(negative-binomial) RVM.

The model is ``t_n ~ p(t | η_n, θ)``, ``η = Φw``, ``w_i ~ N(0, v_i)``, the prior variances under a
type-II hierarchy (:mod:`sparsebayes.models.priors.typeii`: ARD, the RVM's flat hyperprior on
``α_i = 1/v_i``, Tipping 2001, Sec. 4, Tipping & Faul 2003, Sec. 5; FLAP's ``v_i ~ Exp(λ/2)``,
Babacan et al. 2010; BLS's ``v_i = σ²τ_i``, ``τ_i ~ Exp(λ/2)``, 004 eqs. 5–8, with ``σ² = 1``: these
likelihoods have no noise variance, so BLS is FLAP's hierarchy with its own flags). The likelihood
is an object of :mod:`sparsebayes.models.likelihoods` read through its protocol: ``log p(t | η, θ)``,
its ``score`` ``g(η) = ∂/∂η log p`` and its ``curvature`` ``b(η)`` (``−∂²/∂η² log p``, or the Fisher
information where the likelihood is not log-concave), and ``θ`` its own parameter (the negative
binomial's dispersion ``r``; none for the Bernoulli and the Poisson). The marginal likelihood has no
closed form; as in those papers it is replaced by its Laplace approximation at the posterior mode
``w*`` of the active weights, and the objective adds the hierarchy's terms (004 eq. 13 without
``log p(σ²)``: ``typeii_log_variance_prior``; 0 for ARD),

    L(v, λ, θ) = Σ_n log p(t_n | w*, θ) − ½ Σ_A w*_i² / v_i − ½ Σ_A log v_i + ½ log|Σ|
                 + A log(λ/2) − λ Σ_A v_i / 2 + log p(λ),
    Σ = (Φ_Aᵀ B Φ_A + V_A⁻¹)⁻¹,  B = diag(b(η*)),  η* = Φ w*,

whose evidence part equals the Gaussian evidence of the linearized targets ``t̂ = Φw* + B⁻¹g(η*)``
with noise covariance ``B⁻¹`` up to terms that depend on ``v`` only through the mode ``w*``
(``Σ log p(t_n | w*)`` there in place of ``½ log|B| − ½ gᵀB⁻¹g``); the fit evaluates the Laplace
form. For that Gaussian problem (Tipping & Faul 2003, eqs. 22–23 with ``B`` in place of ``σ⁻²I``)

    S_m = φ_mᵀBφ_m − φ_mᵀBΦ_A Σ Φ_AᵀBφ_m,   Q_m = φ_mᵀ B t̂ − φ_mᵀBΦ_A Σ Φ_AᵀB t̂ = φ_mᵀ g(η*),

the last form holding at the mode (``Φ_Aᵀ g = V_A⁻¹ w*``; ``g = t − μ`` for a canonical link). Each
step takes the single add / re-estimate / delete of largest predicted gain, chosen as the Gaussian
path chooses (:func:`.typeii_moves.choose`: the hierarchy's ``κ``, per-basis optimum and
gain at the current λ, or with λ re-maximised for a profiled hierarchy; ARD's ``κ = 0`` is the RVM's
``α = s²/(q² − s)``), sets λ by the hierarchy's update (004 eq. 17), moves ``w*`` to the new mode by
Newton's method with step halving and evaluates ``L`` there; then, for a likelihood with its own
parameter, moves ``θ`` up ``L`` (:func:`~.typeii_param.param_step`: the likelihood's ``update_params`` at the mode,
then a Newton step on ``L``, each taken only where ``L`` does not fall). The fit has converged when
no move gains more than ``tol`` and ``θ`` has settled.

The predicted gain is that of the linearized problem; once the mode moves, the Laplace
evidence can fall instead (the path claims no ascent for the moves, only for ``θ``'s steps).
Usually the path recovers (rejecting such moves outright ended
below ``fastrvm``'s evidence on Ripley), but near-separable classes can make it loop (add a
kernel: +6 nats; delete it, predicted +2: −6 nats; repeat), where Tipping's SparseBayes
(``fastrvm``) cycles until its iteration limit and returns the last state. Here the fit stops
once ``L`` has not improved on its best for ``patience`` steps and returns the best state
(``stalled`` set, ``converged`` false); a fit that stops on ``tol`` returns its last state.

The engine (:mod:`.typeii`) takes this path's pieces for a likelihood without ``conjugate_noise``, in the
shape of the contract of :mod:`sparsebayes.inference.engines.driver`, as the Gaussian path's: :class:`State`,
:func:`start` ``(data, model, capacity)`` with ``data`` a :class:`LaplaceData` and ``model`` a
:class:`~.typeii_moves.TypeIIModel` ``(prior, likelihood)``, a pure :func:`take_step` ``(state, data, model, *, settings)``
returning the new state and the step's :class:`~.typeii_moves.Info`, :func:`run` the jit boundary (the
driver's ``lax.while_loop`` to :func:`stopped`); a trace of the steps is the engine's (:func:`.typeii.trace`).
The best state and the steps since it are part of the state (``best``, ``since``),
kept by the step, so that the patience is the driver's stopping rule and a loop the caller owns
keeps it too. The move choice and λ's update are the Gaussian path's (:func:`.typeii_moves.choose`,
:func:`.typeii_moves.update_lambda`).

Active set only: the weights in the model live in ``capacity`` slots (``-1`` = free), and a step
gathers the active ones into ``k`` of them, the active count rounded up to 4, 8 or the capacity
(:func:`~.typeii_laplace_mode._on_active_slots`), so the Newton iterations cost ``O(N k²)`` and a step's ``S, Q`` for
all ``M`` candidates ``O(N M k)``; :func:`fit` doubles the capacity when a wanted add finds no
free slot (:func:`.typeii_moves.grow_slots`).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.inference.engines._compile import quick_twin
from sparsebayes.inference.engines import driver
from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference.engines.typeii_laplace_mode import (
    ACTIVE_WIDTHS, ARD, CLOSED, UNIT_NOISE, _lam, _laplace_covariance, _settle, _widths, small, sparsity_quality)
from sparsebayes.inference.engines.typeii_moves import (
    Info, TypeIIModel, capacity_hit, grow_slots, sequential_step, update_lambda)
from sparsebayes.inference.engines.typeii_param import _start_params, has_own_parameter, param_step
from sparsebayes.models.likelihoods import require_likelihood
from sparsebayes.models.priors import require


class State(NamedTuple):
    """Prior variances ``var`` over the M candidates (0 = not in the model), the slots of the
    active ones (``basis_of_slot``, ``-1`` free), the mode ``w`` over the slots, ``L`` (``objective``)
    and ``chol``, the Cholesky factor of ``Σ⁻¹ = Φ_AᵀBΦ_A + V_A⁻¹`` at the mode over the slots
    (identity rows where free; set by :func:`~.typeii_laplace_mode._settle`); ``lam`` the hierarchy's rate λ (0 for ARD)
    and ``params`` the likelihood's own parameter (the negative binomial's dispersion ``r``; a
    placeholder 1 for a likelihood without one). A state built without ``lam`` or ``params`` reads
    them as 0 and 1.

    ``best`` (the state of largest ``L`` so far, without its own ``best`` and ``since``) and ``since``
    (the steps since it; −1 for a start not settled yet) are :func:`take_step`'s bookkeeping for the
    patience of :func:`stopped`; a state without them (``None``) takes steps without it."""

    var: jax.Array
    basis_of_slot: jax.Array
    w: jax.Array
    objective: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    capacity_hit: jax.Array
    last_gain: jax.Array
    stalled: jax.Array
    chol: jax.Array = None
    lam: jax.Array = None
    params: jax.Array = None
    since: jax.Array = None
    best: "State" = None


class LaplaceData(NamedTuple):
    """The data of the Laplace path: the design ``Phi`` (N × M), the targets ``t``, the candidates that
    may enter (``basis_mask``) and ``n_obs``, the rows that are data (``None``: every row, a padded row
    adding a constant that :func:`fit` removes; a likelihood with its own parameter sums over the first
    ``n_obs`` rows, :func:`~.typeii_laplace_mode._log_lik_sum`)."""

    Phi: jax.Array
    t: jax.Array
    basis_mask: jax.Array
    n_obs: jax.Array | None = None


def make_model(likelihood, prior=None):
    """:class:`~.typeii_moves.TypeIIModel` of ``likelihood`` (checked for the Laplace path's protocol) under ``prior``
    (``None``: ARD; checked by :func:`check_prior`)."""
    require_likelihood(likelihood, "laplace")
    return TypeIIModel(check_prior(prior), likelihood)


def start(data, model, capacity, *, params=None, n_open=None, settle=True):
    """One basis in: the column best aligned with the likelihood's ``init_target`` (for the
    Bernoulli likelihood the logit of the smoothed labels; Tipping & Faul 2003, Sec. 4), its
    weight the least-squares coefficient on that target, settled at its mode; λ the hierarchy's
    update for it (0 under a flat hyperprior), the likelihood's parameter ``params`` (``None``: its
    ``init_params``, on the host). ``capacity`` slots, the first ``n_open`` of them open (all by
    default; the others :data:`~.typeii_laplace_mode.CLOSED`).

    ``settle=False`` leaves the weight at its least-squares value (``since = −1``): the first
    :func:`take_step` then settles it and takes no move (:func:`_start_and_run`, whose loop settles the start
    with the step's own code rather than a second copy of it). The state's ``best`` is itself and
    ``since`` 0 (:func:`take_step`'s bookkeeping of the best state, for :func:`stopped`'s patience)."""
    likelihood, prior = model.likelihood, model.prior
    if params is None:
        params = _start_params(likelihood, data.t, None)
    start = _unsettled_start(likelihood, data.Phi, data.t, data.basis_mask, capacity, n_open, prior=prior,
                             params=params)
    if settle:
        start = _settle(likelihood, data.Phi, data.t, start, one_active=True, prior=prior, n_obs=data.n_obs)[0]
    return start._replace(best=start, since=jnp.asarray(0 if settle else -1))


def _unsettled_start(likelihood, Phi, t, basis_mask, capacity, n_open=None, *, prior=ARD, params=1.0):
    """:func:`start`'s state before :func:`~.typeii_laplace_mode._settle` (``w`` the least-squares weight), in ``capacity``
    slots, the first ``n_open`` of them open (all by default; the others :data:`~.typeii_laplace_mode.CLOSED`)."""
    z = likelihood.init_target(t)
    col_sq = jnp.sum(Phi * Phi, axis=0)
    proj = z @ Phi
    score = jnp.where(basis_mask & (col_sq > 0), proj**2 / jnp.maximum(col_sq, 1e-300), -jnp.inf)
    m = jnp.argmax(score)
    w_m = proj[m] / col_sq[m]
    var = jnp.zeros(Phi.shape[1]).at[m].set(jnp.maximum(w_m * w_m, 1e-6))
    state = State(
        var=var,
        basis_of_slot=jnp.where(jnp.arange(capacity) < (capacity if n_open is None else n_open), -1, CLOSED)
        .astype(jnp.int32).at[0].set(m.astype(jnp.int32)),
        w=jnp.zeros(capacity).at[0].set(w_m),
        objective=jnp.zeros(()), n_iter=jnp.asarray(0), converged=jnp.asarray(False),
        capacity_hit=jnp.asarray(False), last_gain=jnp.asarray(jnp.inf), stalled=jnp.asarray(False),
        chol=jnp.eye(capacity), lam=jnp.asarray(prior.typeii_update_lambda(jnp.sum(var), UNIT_NOISE, 1), jnp.float64),
        params=jnp.asarray(params, jnp.float64))
    return state


def factors(state, data, model, **_):
    """What :func:`~.typeii_moves.sequential_step` asks of the Laplace data step: ``s, q`` of every
    candidate at the mode (:func:`~.typeii_laplace_mode.sparsity_quality`, from the factor ``chol`` the
    state keeps), the candidates that may enter (``basis_mask``), whether the slots are full, λ and
    σ² = 1 (:data:`~.typeii_laplace_mode.UNIT_NOISE`)."""
    _, _, s, q = sparsity_quality(model.likelihood, data.Phi, data.t, state, state.chol)
    full = ~jnp.any(state.basis_of_slot == -1)
    return s, q, data.basis_mask, full, _lam(state), UNIT_NOISE


def _move(state, data, model, chosen, *, tol, pause_when_full, settle_only, estimate_params, param_tol):
    """:func:`advance` without its bookkeeping of the best state: the ``chosen`` move, λ, the mode and
    ``L``, and the likelihood's parameter; ``settle_only`` a traced flag, or ``None`` where it never holds."""
    likelihood, prior = model.likelihood, model.prior
    Phi, t, n_obs = data.Phi, data.t, data.n_obs
    var = state.var
    active = var > 0
    m, move, hit = chosen.m, chosen.kind < 2, capacity_hit(chosen, tol)
    if settle_only is not None:
        move, hit = move & ~settle_only, hit & ~settle_only

    def advance(_):
        new_var = jnp.where(move, chosen.var, var[m])
        slot_in = jnp.argmax(state.basis_of_slot == m)  # its slot if active
        slot_free = jnp.argmax(state.basis_of_slot == -1)
        slot = jnp.where(active[m], slot_in, slot_free)
        entry = jnp.where(move & (new_var > 0), m, -1).astype(jnp.int32)
        basis_of_slot = jnp.where(move, state.basis_of_slot.at[slot].set(entry), state.basis_of_slot)
        w = jnp.where(move & ~active[m], state.w.at[slot].set(0.0), state.w)
        var_new = var.at[m].set(new_var)
        lam = jnp.asarray(update_lambda(prior, var_new, UNIT_NOISE), jnp.float64)
        moved, _ = _settle(likelihood, Phi, t, state._replace(var=var_new, basis_of_slot=basis_of_slot, w=w, lam=lam),
                           prior=prior, n_obs=n_obs)
        converged = ~move
        if estimate_params:
            stepped, change = param_step(moved, likelihood, Phi, t, prior=prior, n_obs=n_obs)
            if settle_only is not None:
                stepped = jax.tree.map(lambda a, b: jnp.where(settle_only, a, b), moved, stepped)
            moved, converged = stepped, converged & (change <= param_tol)
        moved = moved._replace(n_iter=state.n_iter + 1, converged=converged, last_gain=chosen.gain,
                               capacity_hit=state.capacity_hit | hit)
        if settle_only is None:
            return moved
        return moved._replace(**{f: jnp.where(settle_only, getattr(state, f), getattr(moved, f))
                                 for f in ("n_iter", "converged", "last_gain")})

    if not pause_when_full:
        new = advance(None)
        return new, Info.of(chosen, new.objective)
    new = jax.lax.cond(hit, lambda _: state._replace(capacity_hit=jnp.asarray(True)), advance, None)
    return new, Info.of(chosen, new.objective, hit)


def take_step(state, data, model, *, tol, pause_when_full=False, estimate_params=False, param_tol=1e-6):
    """One step (:func:`~.typeii_moves.sequential_step` of :func:`factors` and :func:`advance`)."""
    return sequential_step(factors, advance, state, data, model, model.prior, tol=tol,
                           pause_when_full=pause_when_full, estimate_params=estimate_params, param_tol=param_tol)


def advance(state, data, model, chosen, *, tol, pause_when_full=False, estimate_params=False, param_tol=1e-6):
    """The ``chosen`` add / re-estimate / delete (the move of largest predicted gain under the hierarchy
    ``model.prior``, :func:`.typeii_moves.choose`: its ``κ``, optimum and gain at the state's λ, or with λ
    re-maximised) applied, then λ by the hierarchy's update, the new mode and ``L``, and, with
    ``estimate_params``, a :func:`~.typeii_param.param_step` of the likelihood's own parameter; returns the new
    :class:`State` and the step's :class:`~sparsebayes.inference.engines.typeii_moves.Info`. The
    step has converged when it took no move (and the parameter changed by at most ``param_tol``,
    relative).

    When the best move is an add with no free slot, the step takes the best move that fits and
    sets ``capacity_hit``; with ``pause_when_full`` it changes nothing but ``capacity_hit``
    (``info.kind == PAUSED``) and, where :data:`~.typeii_laplace_mode.CLOSED` slots are left, opens them and clears the
    flag (what a widening between two programs does). A state with ``since < 0`` (:func:`start` with
    ``settle=False``) is settled at its mode and takes no move, counting no step (the start of
    :func:`_start_and_run`, settled by the loop's own code rather than by a second copy of it).

    The state's ``best`` becomes the new state where its ``L`` is higher (or the start was just
    settled), and ``since`` counts the steps since (a paused step is no step: the count stands);
    a state without them (``None``) takes the move alone."""
    settings = dict(tol=tol, pause_when_full=pause_when_full, estimate_params=estimate_params, param_tol=param_tol)
    if state.since is None:
        return _move(state, data, model, chosen, settle_only=None, **settings)
    start = state.since < 0
    new, info = _move(state._replace(since=None, best=None), data, model, chosen, settle_only=start, **settings)
    better = (new.objective > state.best.objective) | start
    best = jax.tree.map(lambda a, b: jnp.where(better, a, b), new, state.best)
    since = jnp.where(better, 0, state.since + 1)
    if pause_when_full:
        since = jnp.where(new.capacity_hit, state.since, since)
        slots = new.basis_of_slot
        opening = new.capacity_hit & jnp.any(slots == CLOSED)
        new = new._replace(basis_of_slot=jnp.where(opening & (slots == CLOSED), -1, slots),
                           capacity_hit=new.capacity_hit & ~opening)
    return new._replace(since=since, best=best), info


def stopped(state, tol=None, *, patience):
    """The Laplace path's stopping rule (:func:`~sparsebayes.inference.engines.driver.run`'s
    ``converged``): a settled state whose step found no move gaining more than its ``tol`` (with the
    likelihood's parameter settled: ``state.converged``), or whose ``L`` has not improved on its
    best for ``patience`` steps (the module docstring: a loop of moves near separable classes).
    The tolerances are the step's, so ``tol`` is not read here."""
    return (state.converged | (state.since >= patience)) & (state.since >= 0)


#: The static options of the run programs (:func:`_start_and_run`, :func:`run`).
_RUN_STATIC = ("pause_when_full", "estimate_params")


@partial(jax.jit, static_argnames=("capacity",) + _RUN_STATIC)
def _start_and_run(data, model, params=1.0, *, capacity, max_iter, tol, patience, pause_when_full, n_open=None,
                   estimate_params=False, param_tol=1e-6):
    """:func:`run` from the start, in ``capacity`` slots of which ``n_open`` are open (all by
    default; one compiled program for a fit that never outgrows them). The start is unsettled
    (:func:`start`'s ``settle=False``): the loop's first iteration settles it and counts no step."""
    state = start(data, model, capacity, params=params, n_open=n_open, settle=False)
    return run(state, data, model, max_iter=max_iter, tol=tol, patience=patience, pause_when_full=pause_when_full,
               estimate_params=estimate_params, param_tol=param_tol)


@partial(jax.jit, static_argnames=_RUN_STATIC)
def run(state, data, model, *, max_iter, tol, patience, pause_when_full=False, estimate_params=False, param_tol=1e-6):
    """The jit boundary of the Laplace path: :func:`take_step` from ``state``
    (:func:`~sparsebayes.inference.engines.driver.run`) until :func:`stopped` (converged, or no better
    ``L`` for ``patience`` steps) or ``max_iter`` or, with ``pause_when_full``, an add that finds no
    free slot and no :data:`~.typeii_laplace_mode.CLOSED` one to open (the state then returned as it was, ``capacity_hit``
    set). A state with ``since < 0`` (an unsettled start) is settled by the first iteration."""
    one = partial(take_step, tol=tol, pause_when_full=pause_when_full, estimate_params=estimate_params,
                  param_tol=param_tol)
    return driver.run(one, state, data, model, tol=tol, max_iter=max_iter,
                      converged=partial(stopped, patience=patience),
                      halt=(lambda st: st.capacity_hit) if pause_when_full else None)


_start_and_run_quick = quick_twin(_start_and_run, static_argnames=("capacity",) + _RUN_STATIC)
_run_quick = quick_twin(run, static_argnames=_RUN_STATIC)


def _programs(shape, capacity):
    """``(_start_and_run, run)`` compiled for a fit in ``capacity`` slots on a padded ``Φ`` of
    ``shape``: at :data:`~._compile.QUICK_COMPILE` where the fit is small (``N · M · K`` at most
    :data:`~.typeii_laplace_mode.NARROW_ABOVE`, :func:`~.typeii_laplace_mode._widths`)."""
    if small(shape, capacity):
        return _start_and_run_quick, _run_quick
    return _start_and_run, run


@partial(jax.jit, static_argnames=("capacity",))
def _widen(state, capacity):
    """The state (and its ``best``) in ``capacity`` slots: new slots free, ``chol`` extended by identity
    rows (a free slot's row of the precision is the identity's), ``capacity_hit`` cleared."""
    extra = capacity - state.w.shape[0]

    def pad(s):
        L = s.chol
        L = jnp.pad(L, ((0, extra), (0, extra))) + jnp.diag(jnp.r_[jnp.zeros(L.shape[0]), jnp.ones(extra)])
        return s._replace(basis_of_slot=jnp.pad(s.basis_of_slot, (0, extra), constant_values=-1),
                          w=jnp.pad(s.w, (0, extra)), capacity_hit=jnp.asarray(False), chol=L)

    return pad(state)._replace(best=pad(state.best))


def _padded(Phi, t, basis_mask):
    """``Φ`` zero-padded to :func:`~sparsebayes.inference.engines._shapes.bucket` sizes (four per octave,
    at most 25 % larger), ``t`` with zeros and ``basis_mask`` with ``False`` beside it.

    A zero row of ``Φ`` has ``η = 0`` whatever ``w``: it adds nothing to the gradient, the
    curvature, ``S`` or ``Q``, and the constant ``log p(0 | η = 0)`` to the log joint (``−log 2``
    for the Bernoulli likelihood, ``−1`` for the Poisson), so every step is the unpadded one and
    :func:`fit` removes the constant from ``L``; a likelihood with its own parameter (whose padded rows'
    constant would move with it, and enter its update) sums over the data rows alone (``n_obs``). Masked columns never enter. Only fewer
    compilations differ: a new number of training points reuses the compiled steps of its bucket."""
    P = _padded_design(Phi)
    tp = pad_to(np.asarray(t, np.float64), P.shape[:1])
    mask = pad_to(np.asarray(basis_mask, bool), P.shape[1:])
    return jax.device_put(P), jax.device_put(tp), jax.device_put(mask)  # jnp.asarray would compile a copy


def _padded_design(Phi):
    """``Φ`` (float64) with zero rows and columns up to its :func:`_padded` shape."""
    Phi = np.asarray(Phi, np.float64)
    return pad_to(Phi, tuple(bucket(k, per_octave=4) for k in Phi.shape))


def fit(Phi, t, basis_mask, *, likelihood, prior=None, params=None, estimate_params=True, max_iter=1000, tol=1e-6,
        capacity=8, patience=100, param_tol=1e-6):
    """Run the sequential engine for ``likelihood`` (an object of
    :mod:`sparsebayes.models.likelihoods` with ``log_lik``, ``score``, ``curvature`` and
    ``init_target``) under the type-II hierarchy ``prior`` (``None``: ARD, the RVM; or
    :class:`~sparsebayes.models.priors.typeii.LaplaceVariancePrior`,
    :class:`~sparsebayes.models.priors.typeii.ScaledLaplacePrior`, checked once) until no move
    gains more than ``tol`` and the likelihood's own parameter (where it has one, started at
    ``params`` or its ``init_params``) changed by at most ``param_tol`` (or it stalls, see the
    module docstring); ``estimate_params=False`` holds the parameter at ``params``. The active set starts in ``capacity`` slots, doubled without restarting whenever
    the best move is an add that finds none free (:func:`.typeii_moves.grow_slots`): a step costs
    more the more slots there are. Bases of at most ``4 · capacity`` functions take one width, all
    of them (fewer compiled programs). The data are padded to few shapes (:func:`_padded`); the
    state returned (NumPy arrays) is over the ``Phi.shape[1]`` candidates and ``L`` that of the
    unpadded data.

    A start in a capacity of :data:`~.typeii_laplace_mode.ACTIVE_WIDTHS` that may grow runs in one program of twice the
    slots, the second half :data:`~.typeii_laplace_mode.CLOSED` until an add finds the first half full: each of its steps
    is the step of a fit in ``capacity`` slots, then in twice as many (the widths gather the same
    slots), and a kernel fit that passes 8 active functions on its way compiles the step once,
    not twice (a first fit's time is mostly compiling). Where the step runs on all its slots
    (:func:`~.typeii_laplace_mode._widths`: small ``Φ``), the twice as many slots are all open from the start instead."""
    require_likelihood(likelihood, "laplace")
    prior = check_prior(prior)
    n, n_basis = np.shape(Phi)
    own = has_own_parameter(likelihood)
    params = _start_params(likelihood, t, params)
    # a likelihood with its own parameter sums over the data rows alone (the padded rows' constant moves with it)
    n_obs = jax.device_put(np.int32(n)) if own else None
    Phi, t, basis_mask = _padded(Phi, t, basis_mask)
    kw = dict(max_iter=int(max_iter), tol=tol, patience=int(patience), estimate_params=bool(own and estimate_params),
              param_tol=float(param_tol))
    # a start in a width of ACTIVE_WIDTHS that would grow: the first program holds twice the slots,
    # the second half closed, and opens them itself (one program of the step, not two)
    halves = capacity in ACTIVE_WIDTHS and Phi.shape[1] > 4 * capacity
    opened = halves and len(_widths(Phi.shape, 2 * capacity)) == 1
    if opened:  # the step runs on all slots at this size (_widths): closed slots would save nothing
        capacity, halves = 2 * capacity, False
    data, model = LaplaceData(Phi, t, basis_mask, n_obs), TypeIIModel(prior, likelihood)
    state = grow_slots(
        lambda c, pause: _programs(Phi.shape, c)[0](data, model, params, capacity=c, n_open=c // 2 if halves else c,
                                                    pause_when_full=pause, **kw),
        lambda st, pause: _programs(Phi.shape, st.w.shape[0])[1](st, data, model, pause_when_full=pause, **kw),
        _widen, 2 * capacity if halves else capacity, Phi.shape[1], whole_below=2 if halves or opened else 4)
    out = _finish(likelihood, jax.device_get(state), Phi.shape[0] - n if n_obs is None else 0, int(patience))
    return out._replace(var=out.var[:n_basis])


def check_prior(prior):
    """The hierarchy of a fit: ARD for ``None``, else ``prior`` after checking it has the type-II pieces
    this path asks (``ValueError`` naming the hierarchy and what it lacks)."""
    if prior is None:
        return ARD
    require(prior, "type2")
    if not hasattr(prior, "typeii_log_variance_prior"):
        raise ValueError(f"{type(prior).__name__} has no typeii_log_variance_prior: the type-II Laplace path adds the "
                         "hierarchy's terms without a noise variance to the evidence")
    return prior


@jax.jit
def _log_lik_at_zero(likelihood):
    """``log p(0 | η = 0)``, what a zero row of the padded data adds to ``L`` (:func:`_padded`)."""
    return likelihood.log_lik(jnp.zeros(()), jnp.zeros(()))


def _finish(likelihood, state, extra_rows, patience):
    """The best state if the fit stalled, else the last; ``L`` less the padded rows' constant; the
    bookkeeping (``best``, ``since``) dropped. On the host (NumPy values from one ``jax.device_get``):
    a selection and one subtraction, which as eager ``jnp`` operations would each build a program on
    a first fit."""
    stalled = np.logical_and(~state.converged, state.since >= patience)
    out = state.best if stalled else state
    padding = extra_rows * float(_log_lik_at_zero(likelihood)) if extra_rows else 0.0
    # slots never opened are dropped (the fit stayed in the slots it started with), any other one is free
    k = int(np.sum(state.basis_of_slot != CLOSED))
    slots = np.where(out.basis_of_slot == CLOSED, -1, out.basis_of_slot)[:k]
    return out._replace(objective=out.objective - padding, n_iter=state.n_iter, converged=state.converged,
                        stalled=stalled, capacity_hit=state.capacity_hit, basis_of_slot=slots, w=out.w[:k],
                        chol=out.chol[:k, :k], since=None, best=None)


def stopped_at_start(state):
    """Whether the fit stopped at its start: its first step found no move gaining more than ``tol``
    (``converged`` is set by the step that finds no move, and ends the run, so that step was the
    first when ``n_iter`` is 1). The start is one basis function chosen by its projection on the
    likelihood's ``init_target`` (:func:`start`), not by the evidence, and no search followed: the estimator
    reports such a fit as not converged (raw linear features on ``X + 10``: every column looks like
    the bias, none raises the evidence, and the fit is a constant classifier)."""
    return bool(state.converged) and int(state.n_iter) == 1


def coefficients(state, n_basis):
    """The mode over the ``n_basis`` candidates (zeros where pruned), as a NumPy array."""
    slots = np.asarray(state.basis_of_slot)
    active = slots >= 0
    beta = np.zeros(n_basis)
    beta[slots[active]] = np.asarray(state.w)[active]
    return beta


def posterior_covariance(Phi, t, state, *, likelihood):
    """Laplace covariance ``Σ = (Φ_AᵀBΦ_A + V_A⁻¹)⁻¹`` at the mode, over the active basis
    functions in increasing basis index (the order of ``coefficients``' nonzeros). From the state's
    ``chol`` (the factor at the mode that the engine keeps over the slots) by a Cholesky solve on
    the host; a state without one is factored again on the padded data (:func:`_padded`: the same
    ``Σ``, one compilation per bucket)."""
    slots = np.asarray(state.basis_of_slot)
    in_slots = np.flatnonzero(slots >= 0)
    order = np.argsort(slots[in_slots])
    keep = in_slots[order]
    if state.chol is not None and keep.size:
        # free slots are decoupled: the active slots' rows and columns, in slot order, are their block's factor
        L = np.asarray(state.chol)[np.ix_(in_slots, in_slots)]
        return scipy.linalg.cho_solve((L, True), np.eye(in_slots.size))[np.ix_(order, order)]
    Phi_pad, t_pad, _ = _padded(Phi, t, np.ones(np.shape(Phi)[1], bool))
    var = np.zeros(Phi_pad.shape[1])
    var[:np.size(state.var)] = state.var
    Sigma = np.asarray(_laplace_covariance(likelihood, Phi_pad, t_pad, state._replace(var=var)))
    return Sigma[np.ix_(keep, keep)]
