"""The Gaussian data step of the sequential type-II engine (:mod:`.typeii`; Tipping & Faul 2003): the
likelihood ``N(η, σ²)`` is its own linearization, so its statistics are exact and follow the moves in
closed form (RVM, FLAP, BLS regression).

The other likelihoods take the Laplace linearization at the mode (:mod:`.typeii_laplace`); both share
the move selection and slot growth of :mod:`.typeii_moves`, importable from here with this path's
rank-one updates (:mod:`.typeii_updates`) and slot algebra (:mod:`.typeii_linalg`).

The objective is the log marginal likelihood plus the prior's hyperprior terms,

    L = −½ [N log 2π + log|C| + yᵀC⁻¹y] + log p(τ | λ) + log p(λ) + log p(σ²),
    C = σ² I + Φ_A V_A Φ_Aᵀ,

(004 eq. 13 for BLS, ``V = diag(v_i)`` the prior variances of the active weights). For one
basis function ``i`` the objective splits as in 004 eq. 14, so the engine keeps

    S_i = φ_iᵀC⁻¹φ_i,  Q_i = φ_iᵀC⁻¹y                              (004 eqs. 20–21)
    s_i = S_i / (1 − v_i S_i),  q_i = Q_i / (1 − v_i S_i)            (004 eq. 19)

for all candidates, and at each step takes the single add / re-estimate / delete that raises
``L`` most (the closed-form gains of :func:`sparsebayes.models.priors.typeii.variance_objective_change`).
Σ, μ, S, Q and log|Σ| follow by rank-one updates; the prior is a hierarchy object with the
type-II capability (:mod:`sparsebayes.models.priors.typeii`: ARD, the scaled Laplace, the
Laplace on the variances), checked once by :func:`check_prior`; the engine never branches on which one.

Schedule. After every move λ is set to its maximiser (004 eq. 17) given the τ_i. How a move
is scored is the hierarchy's flag ``lambda_update``: with λ re-maximised (the exact change
of ``L``; FLAP by default, BLS/FLAPσ with ``lambda_update="profiled"``) or at the current λ
as 004 Algorithm 1 does (the default of BLS and FLAPσ, which reproduces the paper but is not
an ascent of ``L``: a move that changes the number of active τ_i ignores the ``A log(λ/2)``
term; see :mod:`sparsebayes.models.priors.typeii`; the RVM has no λ, and both ways are its
exact change of ``L``). Every
``noise_every`` steps, and whenever no single-basis move raises ``L`` by more than ``tol``,
σ² is re-estimated and everything is recomputed from a Cholesky factor (which also removes
drift of the rank-one updates): BLS by 004 eq. 18 (its exact maximiser with τ fixed); RVM and
FLAPσ by the MacKay fixed point ``σ² = (‖y − Φμ‖² + 2d)/(N − Σγ_i + 2c + 2)`` with an EM
step ``σ² = (‖y − Φμ‖² + σ² Σγ_i + 2d)/(N + 2c + 2)`` as fallback whenever the fixed point
would lower ``L`` (the EM step cannot: the prior variances held fixed, ``L`` depends on σ²
through the likelihood alone). With the profiled moves ``L`` therefore never decreases
(a test checks it for every prior). Not so for BLS with the variances-fixed update
(``ScaledLaplacePrior(noise_update="variances-fixed")``): there ``τ_i = v_i/σ²`` moves
with σ², and its prior term ``−λΣv_i/(2σ²)`` is part of ``L`` but not of the update, so ``L``
can fall at a σ² step. The fit stops when no move
gains more than ``tol`` and σ² changed by less than ``noise_tol`` (relative).

The engine (:mod:`.typeii`) takes this path's pieces for a likelihood that states ``conjugate_noise``, in
the shape of the contract of :mod:`sparsebayes.inference.engines.driver`: :class:`State`, :func:`start`
``(data, prior, noise_var, capacity)``, a pure :func:`take_step` ``(state, data, prior, *, settings)``
returning the new state and the step's :class:`Info` (the move taken, its basis and variance, its
gain, ``L`` after it), :func:`run` the jit boundary (the driver's ``lax.while_loop`` to convergence,
:func:`stopped`); :func:`fit` is :func:`start` and :func:`run` in one program. A trace of the steps is
the engine's (:func:`.typeii.trace`).
The Laplace path (:mod:`.typeii_laplace`) has the same shape and the same :class:`Info`.

Fixed shapes. The active set lives in ``capacity`` slots (masks, ``-1`` = free), with the
cache ``B = ΦᵀΦ_slots`` (M × capacity) filled when a basis enters, so that a step costs
O(N M) on an add and O(M · capacity) otherwise (O(M) on an add when the engine holds ``ΦᵀΦ``,
the n-independent form :class:`GramData` for designs with many more rows than columns). Padding
rows and columns of zeros are harmless (``n_obs`` counts the real rows; zero columns never
enter), so data sets of different sizes share one compiled program and fits ``vmap`` over data
sets. The slots start
few and double when an add finds none free (:func:`fit_growing`: the fit pauses, its state is
widened, and it goes on), since a step costs more the more slots there are.
A candidate too aligned with an active column (``|cos| > align_max``) is never added.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sparsebayes.models.priors import require
from sparsebayes.models.priors.typeii import optimal_variance

from sparsebayes.inference._backend import on_accelerator
from sparsebayes.inference.engines import driver
from sparsebayes.inference.engines.typeii_linalg import spd_inverse_lapack
from sparsebayes.inference.engines.typeii_updates import _add, _cosines, _reestimate_or_delete, _slot_view, basis_column
from sparsebayes.inference.engines.typeii_moves import (
    CYCLE_MEMORY, Info, best_move, capacity_hit, gated_moves, grow_slots, note_cycle, sequential_step,
    update_lambda)

_LOG_2PI = np.log(2.0 * np.pi)  # a NumPy constant: jnp.log would compile a program at import


class TypeIIData(NamedTuple):
    """Design ``Phi`` (N × M), targets, the real-row count and precomputed products."""

    Phi: jax.Array
    y: jax.Array
    n_obs: jax.Array
    basis_mask: jax.Array
    col_sq: jax.Array
    Phity: jax.Array
    yy: jax.Array


class GramData(TypeIIData):
    """The n-independent form of :class:`TypeIIData` for ``N`` much larger than ``M``: ``Phi`` holds
    the Gram matrix ``ΦᵀΦ`` (M × M) in place of the design, with ``Φᵀy``, ``‖φ_i‖²`` (its diagonal),
    ``yᵀy`` and ``n_obs``; ``y`` is ``Φᵀy`` too (the engine never reads it).

    Every step of the engine reads the data only through these (Tipping & Faul 2003, Appendix: ``S_i``
    and ``Q_i`` through ``ΦᵀΦ_A`` and ``Φᵀy``; the σ² update through
    ``‖y − Φ_Aμ‖² = yᵀy − 2μᵀΦ_Aᵀy + μᵀΦ_AᵀΦ_Aμ``), so a fit costs ``O(NM²)`` once, for the Gram
    matrix, and nothing in ``N`` after; an add reads row ``m`` of ``ΦᵀΦ`` (:func:`basis_column`)
    instead of computing ``Φᵀφ_m``. Built by :func:`make_gram_data`; its type selects the program."""

    __slots__ = ()
    is_gram = True


def make_gram_data(gram, Phity, yy, n_obs, basis_mask=None):
    """:class:`GramData` from ``ΦᵀΦ`` (M × M, symmetric), ``Φᵀy``, ``yᵀy`` and the evidence's
    dimension ``n_obs``; a column with ``‖φ_i‖² = (ΦᵀΦ)_ii = 0`` (padding) never enters."""
    gram = np.asarray(gram, np.float64)  # on the host: no eager device program to compile
    Phity = np.asarray(Phity, np.float64)
    col_sq = np.diagonal(gram).copy()
    mask = (np.ones(col_sq.size, bool) if basis_mask is None else np.asarray(basis_mask, bool)) & (col_sq > 0)
    return GramData(*jax.device_put((gram, Phity, np.float64(n_obs), mask, col_sq, Phity, np.float64(yy))))


class State(NamedTuple):
    """Engine state; arrays over the M candidates or over the ``capacity`` slots."""

    var: jax.Array            # (M,) prior variances v_i, 0 = not in the model
    slot_of: jax.Array        # (M,) slot of each active basis, -1 otherwise
    basis_of_slot: jax.Array  # (K,) basis in each slot, -1 = free
    B: jax.Array              # (M, K) Φᵀ Φ_slots
    Sigma: jax.Array          # (K, K) posterior covariance of the slot weights
    mu: jax.Array             # (K,) posterior mean of the slot weights
    logdet_Sigma: jax.Array
    S: jax.Array
    Q: jax.Array
    align: jax.Array          # (M,) largest |cosine| of each candidate with an active column
    noise_var: jax.Array
    lam: jax.Array
    objective: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    capacity_hit: jax.Array
    last_gain: jax.Array
    recent: jax.Array         # (CYCLE_MEMORY,) L after each of the last steps, newest first (NaN before)
    cycled: jax.Array         # stopped on a cycle of moves, at the cycle's best L (:func:`note_cycle`)
    n_moves: jax.Array        # steps that added, re-estimated or deleted a basis (0: the fit never left its start)


def check_prior(prior):
    """``prior`` after checking it has the type-II capability (``ValueError`` naming the hierarchy and
    the missing piece otherwise, e.g. "HorseshoePrior has no type-II update")."""
    return require(prior, "type2")


def make_data(Phi, y, n_obs=None, basis_mask=None, yy=None):
    """Pack a design and targets (float64) for the engine; zero rows/columns are padding.

    A NumPy ``Phi`` goes to the device by ``jax.device_put``, which on CPU aliases a float64,
    C-ordered, 64-byte aligned buffer instead of copying it (:func:`aligned_zeros`).

    A factored design ``Φ = QΦ̃`` (:mod:`sparsebayes.inference.engines.lowrank`) enters as ``Phi = Φ̃``
    and ``y = Qᵀy`` with the real ``n_obs`` and ``yy = yᵀy``: the engine uses the data only
    through ``ΦᵀΦ``, ``Φᵀy``, ``‖φ_i‖²``, ``yᵀy`` and ``N``, which are then those of ``Φ``."""
    Phi = jax.device_put(Phi) if isinstance(Phi, np.ndarray) else jnp.asarray(Phi)
    # Φ itself stays out of the jitted call: an input returned as an output is copied
    data = TypeIIData(Phi.astype(jnp.float64), *_products(Phi, y, jnp.shape(Phi)[0] if n_obs is None else n_obs,
                                                          True if basis_mask is None else basis_mask))
    return data if yy is None else data._replace(yy=jnp.asarray(yy, jnp.float64))


class Design(NamedTuple):
    """A design and targets whose other :class:`TypeIIData` fields (:func:`_products`) are computed by
    the fit's own program (:func:`fit`, :func:`fit_growing`): a first fit builds one program, not two.
    ``yy`` as :func:`make_data` takes it (``None``: ``yᵀy``). Built by :func:`make_design`."""

    Phi: jax.Array
    y: jax.Array
    n_obs: jax.Array
    basis_mask: jax.Array
    yy: jax.Array | None

    def engine_data(self):
        """The :class:`TypeIIData` (inside a program: :func:`_products` traced into it)."""
        data = TypeIIData(self.Phi, *_products(self.Phi, self.y, self.n_obs, self.basis_mask))
        return data if self.yy is None else data._replace(yy=self.yy)


def make_design(Phi, y, n_obs=None, basis_mask=None, yy=None):
    """:class:`Design` of ``Phi`` and ``y`` as :func:`make_data` takes them (a NumPy float64 ``Phi`` goes
    to the device by ``jax.device_put``, uncopied on CPU); nothing is computed until the fit."""
    n, m = np.shape(Phi)
    put = lambda a, dtype: jax.device_put(np.asarray(a, dtype))  # noqa: E731  (jnp.asarray would compile a copy)
    return Design(jax.device_put(Phi) if isinstance(Phi, np.ndarray) else jnp.asarray(Phi, jnp.float64),
                  put(y, np.float64), put(n if n_obs is None else n_obs, np.float64),
                  put(np.ones(m, bool) if basis_mask is None else basis_mask, bool),
                  None if yy is None else put(yy, np.float64))


@jax.jit
def _products(Phi, y, n_obs, basis_mask):
    """The other fields of :class:`TypeIIData`, with ``‖φ_i‖²``, ``Φᵀy`` (as ``y @ Φ``) and ``yᵀy``."""
    Phi = jnp.asarray(Phi, jnp.float64)
    y = jnp.asarray(y, jnp.float64)
    col_sq = jnp.einsum("nm,nm->m", Phi, Phi)
    return y, jnp.asarray(n_obs, jnp.float64), jnp.asarray(basis_mask, bool) & (col_sq > 0), col_sq, y @ Phi, y @ y


def _recompute(data, state, var, noise_var, inverse=spd_inverse_lapack):
    """Σ, μ, log|Σ|, S, Q from scratch (``Σ = P⁻¹``, ``P = Φ_AᵀΦ_A/σ² + V⁻¹`` on the slots)."""
    active, idx = _slot_view(state)
    K = active.shape[0]
    both = active[:, None] & active[None, :]
    v_slot = jnp.where(active, var[idx], 1.0)
    G = state.B[idx, :]
    P = jnp.where(both, G / noise_var + jnp.diag(1.0 / v_slot), jnp.eye(K))
    P_inv, logdet_P = inverse(P, active)  # free slots: identity rows, log 1 = 0
    Sigma = jnp.where(both, P_inv, 0.0)
    Phity_slot = jnp.where(active, data.Phity[idx], 0.0)
    mu = Sigma @ Phity_slot / noise_var
    BS = state.B @ Sigma
    S = data.col_sq / noise_var - jnp.sum(BS * state.B, axis=1) / noise_var**2
    Q = data.Phity / noise_var - state.B @ mu / noise_var
    return state._replace(var=var, noise_var=noise_var, Sigma=Sigma, mu=mu, logdet_Sigma=-logdet_P, S=S, Q=Q)


def objective(data, state, prior):
    """``L`` of the module docstring from the engine's bookkeeping (log|C| via log|Σ|)."""
    active, idx = _slot_view(state)
    v_slot = jnp.where(active, state.var[idx], 1.0)
    logdet_C = data.n_obs * jnp.log(state.noise_var) + jnp.sum(jnp.log(v_slot)) - state.logdet_Sigma
    Phity_slot = jnp.where(active, data.Phity[idx], 0.0)
    yCy = (data.yy - Phity_slot @ state.mu) / state.noise_var
    loglik = -0.5 * (data.n_obs * _LOG_2PI + logdet_C + yCy)
    return loglik + prior.typeii_log_hyperprior(jnp.sum(state.var), state.lam, state.noise_var, jnp.sum(active))


def sparsity_quality(state):
    """``s_i, q_i``: equal to ``S_i, Q_i`` for a basis not in the model, and for one in it (slot
    ``j``) the equivalent forms ``s_i = 1/Σ_jj − 1/v_i``, ``q_i = μ_j/Σ_jj`` of 004 eq. 19's
    ``S_i/(1 − v_i S_i)``, ``Q_i/(1 − v_i S_i)`` (``1 − v_i S_i = Σ_jj/v_i``). The printed forms
    divide by a difference that cancels for a well-determined weight (``Σ_jj ≪ v_i``): at small
    σ² the rounded ``v_i S_i`` reached 1, ``s_i`` came out negative and its gain NaN, and the fit
    stopped there as if converged.
    """
    active = state.var > 0
    j = jnp.maximum(state.slot_of, 0)
    Sigma_jj = jnp.where(active, jnp.diagonal(state.Sigma)[j], 1.0)
    v = jnp.where(active, state.var, 1.0)
    s_in = jnp.maximum(1.0 / Sigma_jj - 1.0 / v, 0.0)
    return jnp.where(active, s_in, state.S), jnp.where(active, state.mu[j] / Sigma_jj, state.Q)


def _noise_moments(data, state):
    """``‖y − Φμ‖²`` and ``Σ γ_i = Σ (1 − Σ_ii / v_i)`` from the slot quantities."""
    active, idx = _slot_view(state)
    G = jnp.where(active[:, None] & active[None, :], state.B[idx, :], 0.0)
    Phity_slot = jnp.where(active, data.Phity[idx], 0.0)
    resid2 = data.yy - 2.0 * state.mu @ Phity_slot + state.mu @ G @ state.mu
    v_slot = jnp.where(active, state.var[idx], 1.0)
    gamma = jnp.sum(jnp.where(active, 1.0 - jnp.diag(state.Sigma) / v_slot, 0.0))
    return jnp.maximum(resid2, 0.0), gamma


def _update_noise(data, state, prior, inverse=spd_inverse_lapack):
    """Re-estimate σ² (see the module docstring) and recompute from a Cholesky factor."""
    mode = prior.noise_update  # static: one compiled program per flag
    if mode == "fixed":
        return state
    c, d = prior.typeii_noise_prior()
    old = state.noise_var
    if mode == "eq18":
        # 004 eq. 18: yᵀC̃⁻¹y = σ² yᵀC⁻¹y with τ held fixed, so every v_i = σ²τ_i rescales.
        active, idx = _slot_view(state)
        yCty = data.yy - jnp.where(active, data.Phity[idx], 0.0) @ state.mu
        new = (yCty + 2.0 * d) / (data.n_obs + 2.0 * c + 2.0)
        new = jnp.maximum(new, 1e-12 * data.yy / data.n_obs)
        out = _recompute(data, state, state.var * (new / old), new, inverse)
        return out._replace(objective=objective(data, out, prior))
    resid2, gamma = _noise_moments(data, state)
    fixed_point = (resid2 + 2.0 * d) / jnp.maximum(data.n_obs - gamma + 2.0 * c + 2.0, 1e-12)
    em = (resid2 + old * gamma + 2.0 * d) / (data.n_obs + 2.0 * c + 2.0)
    floor = 1e-12 * data.yy / data.n_obs
    out = _recompute(data, state, state.var, jnp.maximum(fixed_point, floor), inverse)
    out = out._replace(objective=objective(data, out, prior))

    def em_step(_):
        o = _recompute(data, state, state.var, jnp.maximum(em, floor), inverse)
        return o._replace(objective=objective(data, o, prior))

    return jax.lax.cond(out.objective >= state.objective, lambda _: out, em_step, None)


def start(data, prior, noise_var, capacity, inverse=spd_inverse_lapack):
    """One basis in the model: the column best aligned with ``y`` (Tipping & Faul 2003, Sec. 4)."""
    M = data.Phi.shape[1]
    noise_var = jnp.asarray(noise_var, jnp.float64)
    score = jnp.where(data.basis_mask, data.Phity**2 / jnp.maximum(data.col_sq, 1e-300), -jnp.inf)
    m = jnp.argmax(score)
    s, q = data.col_sq[m] / noise_var, data.Phity[m] / noise_var
    v0 = jnp.maximum((q * q - s) / (s * s), 1e-2 / s)
    col = basis_column(data, m)
    state = State(
        var=jnp.zeros(M).at[m].set(v0),
        slot_of=jnp.full(M, -1, jnp.int32).at[m].set(jnp.int32(0)),
        basis_of_slot=jnp.full(capacity, -1, jnp.int32).at[0].set(m.astype(jnp.int32)),
        B=jnp.zeros((M, capacity)).at[:, 0].set(col),
        Sigma=jnp.zeros((capacity, capacity)),
        mu=jnp.zeros(capacity),
        logdet_Sigma=jnp.zeros(()),
        S=jnp.zeros(M),
        Q=jnp.zeros(M),
        align=_cosines(data, col[:, None], m[None])[:, 0],
        noise_var=noise_var,
        lam=jnp.zeros(()),
        objective=jnp.zeros(()),
        n_iter=jnp.zeros((), jnp.int32),
        converged=jnp.zeros((), bool),
        capacity_hit=jnp.zeros((), bool),
        last_gain=jnp.asarray(jnp.inf),
        recent=jnp.full(CYCLE_MEMORY, jnp.nan),
        cycled=jnp.zeros((), bool),
        n_moves=jnp.zeros((), jnp.int32),
    )
    state = _recompute(data, state, state.var, noise_var, inverse)
    state = state._replace(lam=prior.typeii_update_lambda(jnp.sum(state.var), noise_var, 1))
    return state._replace(objective=objective(data, state, prior))


def candidate_gains(data, state, prior, align_max, n_fixed_point=8):
    """Best new variance of every basis function and the gain of moving there.

    ``prior.profile_lambda`` true: the gain is the exact change of ``L`` — the marginal
    likelihood (004 eq. 14) plus the hyperprior terms with λ re-maximised (the number of
    active τ_i and their sum move); the new variance maximises that sum (with λ at its optimum
    the stationarity condition is ``v = optimal_variance(s, q, κ(λ(v)))``, envelope theorem,
    solved by a few fixed-point steps from 004 eq. 16 at the current λ; deletion is always a
    candidate for an active basis), so every step raises ``L``. False: 004 Algorithm 1 — eq. 16
    at the current λ, scored by ``ℓ_i`` at that λ; λ is re-estimated after the move.
    """
    s, q, eligible, full, lam, noise_var = factors(state, data, prior, align_max=align_max)
    return gated_moves(s, q, state.var, lam, noise_var, prior, eligible, full, n_fixed_point)


def choose_move(data, state, prior, *, tol=1e-9, align_max=1.0 - 1e-3):
    """The single add / re-estimate / delete that raises ``L`` most (:func:`candidate_gains`)."""
    return best_move(*candidate_gains(data, state, prior, align_max), state.var, tol)


def last_basis_pruned(state, prior):
    """Whether the only basis left in the model meets the hierarchy's pruning condition at the current
    λ and σ² (``q_i² − s_i ≤ 2κ``: :func:`~sparsebayes.models.priors.typeii.optimal_variance` gives
    0; for BLS 004's ``q_i² − s_i ≤ λσ⁻²``, for the RVM ``q_i² ≤ s_i``).

    The engine never deletes its last basis (:func:`.typeii_moves.gate_moves`: with no τ_i left λ's profile
    degenerates), so such a basis stays at the variance it last had, which no hierarchy chose; the
    estimators report the empty model instead (:class:`~sparsebayes.inference.estimators.typeii_estimators`).
    """
    s, q = sparsity_quality(state)
    active = state.var > 0
    pruned = optimal_variance(s, q, prior.typeii_penalty(state.lam, state.noise_var)) <= 0
    return (jnp.sum(active) == 1) & jnp.any(active & pruned)


_last_basis_pruned_program = jax.jit(last_basis_pruned)


def last_basis_pruned_jit(state, prior):
    """:func:`last_basis_pruned` as the estimators ask it, once per fit: ``False`` on the host when
    the model holds more than one basis function (most fits: no program to build), else one
    compiled program (run eagerly it would dispatch, and on a first fit compile, each of its
    operations apart)."""
    var = np.asarray(state.var)
    if var.ndim == 1 and np.count_nonzero(var > 0) != 1:
        return np.False_
    return _last_basis_pruned_program(state, prior)


#: The fields of a final :class:`State` that the regressors' fitted attributes and warnings read.
RESULT_FIELDS = ("var", "basis_of_slot", "mu", "Sigma", "noise_var", "lam", "objective", "n_iter", "converged",
                 "cycled", "n_moves", "last_gain")


def result_fields(state):
    """``state`` with its :data:`RESULT_FIELDS` on the host, in one batched transfer, and the others ``None``:
    each field is a device-to-host copy (about 10 µs at N = 100), and ``B``, ``S``, ``Q``... are not read."""
    return jax.device_get(state._replace(**{f: None for f in state._fields if f not in RESULT_FIELDS}))


def finish_move(data, state, prior, move, *, tol=1e-9):
    """After a move: λ by its update prior, ``L``, the step count and the capacity flag."""
    state = state._replace(lam=update_lambda(prior, state.var, state.noise_var))
    return state._replace(
        objective=objective(data, state, prior),
        n_iter=state.n_iter + 1,
        n_moves=state.n_moves + (move.kind < 2).astype(jnp.int32),
        converged=jnp.zeros((), bool),
        capacity_hit=state.capacity_hit | capacity_hit(move, tol),
        last_gain=move.gain,
    )


def move_step(data, state, prior, move, *, tol=1e-9):
    """Apply ``move`` (:func:`choose_move`: add / re-estimate / delete, or none) and update λ.

    Returns the new state (``n_iter`` advanced, ``L`` re-evaluated) and whether a basis moved."""
    state = jax.lax.switch(
        move.kind,
        [lambda st: _reestimate_or_delete(data, st, move.m, move.var),
         lambda st: _add(data, st, move.m, move.var),
         lambda st: st],
        state,
    )
    return finish_move(data, state, prior, move, tol=tol), move.kind < 2


def noise_due(state, moved, noise_every):
    """σ² is re-estimated every ``noise_every`` steps and whenever no basis moved."""
    return (state.n_iter % noise_every == 0) | ~moved


def noise_step(data, state, prior, moved, *, noise_tol=1e-7, inverse=spd_inverse_lapack):
    """The σ² update after a move step; converged when nothing moved and σ² changed < ``noise_tol``."""
    new = _update_noise(data, state, prior, inverse)
    change = jnp.abs(new.noise_var - state.noise_var) / state.noise_var
    return new._replace(converged=~moved & (change < noise_tol))


def factors(state, data, prior, *, align_max=1.0 - 1e-3, **_):
    """What :func:`~.typeii_moves.sequential_step` asks of the Gaussian data step: ``s, q`` of every
    candidate (004 eq. 19, exact), the candidates that may enter (not masked, ``s > 0``, not aligned
    with an active column beyond ``align_max``: :func:`candidate_gains`), whether the slots are full, λ
    and σ²."""
    s, q = sparsity_quality(state)
    full = jnp.sum(state.var > 0) >= state.mu.shape[0]
    # S_i = φ_iᵀC⁻¹φ_i > 0: a candidate whose S rounds to 0 or below (σ² tiny beside ‖φ_i‖²) is not scored
    eligible = data.basis_mask & (s > 0) & (state.align <= align_max)
    return s, q, eligible, full, state.lam, state.noise_var


def advance(state, data, prior, move, *, tol=1e-9, noise_tol=1e-7, noise_every=1, align_max=1.0 - 1e-3,
            pause_when_full=False):
    """The chosen ``move`` applied by rank-one updates, λ, ``L`` (:func:`move_step`), σ² on schedule
    (:func:`noise_step`), the cycle memory (:func:`note_cycle`); returns the new :class:`State` and the
    step's :class:`Info`.

    When the best move is an add refused for want of a free slot, the step takes the best
    move that fits and sets ``capacity_hit``; with ``pause_when_full`` it changes nothing but
    ``capacity_hit`` instead (``info.kind == PAUSED``), so that the fit can go on with more slots
    (:func:`fit_growing`)."""
    paused = pause_when_full & capacity_hit(move, tol)
    # a paused step is the no-move branch with its scalars held, not a third conditional: each
    # conditional copies the state
    new, moved = move_step(data, state, prior, move._replace(kind=jnp.where(paused, 2, move.kind)), tol=tol)
    new = jax.lax.cond(noise_due(new, moved, noise_every) & ~paused,
                       lambda s: noise_step(data, s, prior, moved, noise_tol=noise_tol), lambda s: s, new)
    new = note_cycle(new)
    if pause_when_full:
        held = ("lam", "objective", "n_iter", "converged", "last_gain", "recent", "cycled")
        new = new._replace(**{f: jnp.where(paused, getattr(state, f), getattr(new, f)) for f in held})
    return new, Info.of(move, new.objective, paused)


def take_step(state, data, prior, *, tol=1e-9, noise_tol=1e-7, noise_every=1, align_max=1.0 - 1e-3,
              pause_when_full=False):
    """One add / re-estimate / delete, the λ update, and (on schedule) the σ² update
    (:func:`~.typeii_moves.sequential_step` of :func:`factors` and :func:`advance`); returns the new
    :class:`State` and the step's :class:`Info` (the move taken, its gain, ``L`` after it)."""
    return sequential_step(factors, advance, state, data, prior, prior, tol=tol, noise_tol=noise_tol,
                           noise_every=noise_every, align_max=align_max, pause_when_full=pause_when_full)


def stopped(state, tol=None):
    """The engine's stopping rule (:func:`~sparsebayes.inference.engines.driver.run`'s ``converged``):
    its step has found no move gaining more than its ``tol`` with σ² changed by less than its
    ``noise_tol`` (``state.converged``), or a cycle of moves (``state.cycled``). The tolerances are
    the step's, so ``tol`` is not read here."""
    return state.converged | state.cycled


@partial(jax.jit, static_argnames=("pause_when_full",))
def run(state, data, prior, *, max_iter=2000, tol=1e-9, noise_tol=1e-7, noise_every=1, align_max=1.0 - 1e-3,
        pause_when_full=False):
    """The jit boundary: :func:`take_step` from ``state`` (:func:`~sparsebayes.inference.engines.driver.run`)
    until converged, cycled or ``max_iter``; with ``pause_when_full``, also stop (``capacity_hit`` set,
    nothing else changed) when the best move is an add with no free slot. Returns the final :class:`State`."""
    one = partial(take_step, tol=tol, noise_tol=noise_tol, noise_every=noise_every, align_max=align_max,
                  pause_when_full=pause_when_full)
    return driver.run(one, state, data, prior, tol=tol, max_iter=max_iter, converged=stopped,
                      halt=(lambda st: st.capacity_hit) if pause_when_full else None)


@partial(jax.jit, static_argnames=("capacity", "pause_when_full"))
def fit(data, prior, noise_var, *, capacity, max_iter=2000, tol=1e-9, noise_tol=1e-7, noise_every=1,
        align_max=1.0 - 1e-3, pause_when_full=False):
    """:func:`start` then :func:`run` in ``capacity`` slots, one compiled program; returns the final
    state (``capacity_hit`` if an add was refused for want of a slot; with ``pause_when_full`` the
    fit stops there instead). The hierarchy is checked once (:func:`check_prior`). ``data`` a
    :class:`Design`: its products are computed in the same program."""
    if isinstance(data, Design):
        data = data.engine_data()
    return run(start(data, check_prior(prior), noise_var, capacity), data, prior, max_iter=max_iter, tol=tol,
               noise_tol=noise_tol, noise_every=noise_every, align_max=align_max, pause_when_full=pause_when_full)


@partial(jax.jit, static_argnames=("capacity",))
def widen(state, capacity):
    """The same state in ``capacity`` slots (the new ones free); ``capacity_hit`` cleared."""
    extra = capacity - state.mu.shape[0]
    return state._replace(
        basis_of_slot=jnp.pad(state.basis_of_slot, (0, extra), constant_values=-1),
        B=jnp.pad(state.B, ((0, 0), (0, extra))),
        Sigma=jnp.pad(state.Sigma, ((0, extra), (0, extra))),
        mu=jnp.pad(state.mu, (0, extra)),
        capacity_hit=jnp.zeros((), bool),
    )


#: XLA's options for the programs of a small fit (:func:`programs`): XLA:CPU's elemental emitters in
#: place of its MLIR fusion emitters, and the program's LLVM module compiled whole rather than split
#: for parallel compilation. The optimized HLO is the same; each of the program's ~100 fusions is
#: generated directly as LLVM IR instead of through MLIR, which compiles in about half the CPU time,
#: and at this size the code runs in milliseconds either way. Its loops may round a sum in another
#: order (``S`` of an active basis has moved by an ulp; no fit's steps, weights or ``L`` did).
SMALL_FIT_COMPILE = {"xla_cpu_use_fusion_emitters": False, "xla_cpu_parallel_codegen_split_count": 1}

#: A fit is small when ``N · M · K`` (rows, candidates, slots; for :class:`GramData` ``M · M · K``) is
#: at most this, on a CPU (:func:`programs`).
SMALL_FIT_MAX = 1 << 22

_fit_small = jax.jit(fit.__wrapped__, static_argnames=("capacity", "pause_when_full"),
                     compiler_options=SMALL_FIT_COMPILE)
_run_small = jax.jit(run.__wrapped__, static_argnames=("pause_when_full",), compiler_options=SMALL_FIT_COMPILE)


def programs(shape, capacity, backend=None):
    """``(fit, run)`` for a fit in ``capacity`` slots on data whose ``Phi`` has ``shape``: compiled with
    :data:`SMALL_FIT_COMPILE` for a small fit on a CPU (:data:`SMALL_FIT_MAX`), else at XLA's defaults
    (the options are XLA:CPU's; a large fit's steps cost more than their compilation)."""
    if on_accelerator(backend) or shape[0] * shape[1] * capacity > SMALL_FIT_MAX:
        return fit, run
    return _fit_small, _run_small


def fit_growing(data, prior, noise_var, *, limit, start=16, **kw):
    """:func:`fit` starting in ``start`` slots and doubling them, without restarting, whenever the
    best move is an add that finds no free slot, up to ``limit`` (past which adds are refused
    and ``capacity_hit`` is reported, as in :func:`fit`; :func:`.typeii_moves.grow_slots`). The
    steps are those of one fit with ``limit`` slots; each width compiles once, a small fit's with
    :data:`SMALL_FIT_COMPILE` (:func:`programs`).
    ``data`` a :class:`Design`: the first program computes its products, and a fit that grows
    computes them again (:func:`_products`, the same operations) for the programs that go on.
    """
    check_prior(prior)
    shape = data.Phi.shape
    held = []

    def go_on(st, pause):
        if not held:
            held.append(make_data(data.Phi, data.y, data.n_obs, data.basis_mask, data.yy)
                        if isinstance(data, Design) else data)
        return programs(shape, st.mu.shape[0])[1](st, held[0], prior, pause_when_full=pause, **kw)

    return grow_slots(
        lambda c, pause: programs(shape, c)[0](data, prior, noise_var, capacity=c, pause_when_full=pause, **kw),
        go_on, widen, start, limit)


def coefficients(state, n_basis):
    """Posterior mean weights over the ``n_basis`` candidate columns (zeros where pruned)."""
    active, idx = _slot_view(state)
    return jnp.zeros(n_basis).at[idx].add(jnp.where(active, state.mu, 0.0))


def posterior_covariance(state, n_basis):
    """Posterior covariance over the ``n_basis`` candidates (zero rows/columns where pruned)."""
    active, idx = _slot_view(state)
    sel = jnp.where(active[:, None], jax.nn.one_hot(idx, n_basis), 0.0)  # (K, M)
    return sel.T @ state.Sigma @ sel


def predict(state, Phi_new):
    """Predictive mean ``φ(x)ᵀμ`` and variance ``σ² + φ(x)ᵀΣφ(x)`` (004 Sec. 2.4)."""
    active, idx = _slot_view(state)
    Phi_slot = jnp.where(active[None, :], Phi_new[:, idx], 0.0)
    mean = Phi_slot @ state.mu
    var = state.noise_var + jnp.sum((Phi_slot @ state.Sigma) * Phi_slot, axis=1)
    return mean, var
