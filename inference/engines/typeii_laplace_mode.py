"""The Laplace linearization at the posterior mode: the data step of the sequential type-II engine for a
non-Gaussian likelihood (Tipping 2001, Sec. 4; Tipping & Faul 2003, Sec. 5).

For prior variances ``v`` over the active slots, :func:`posterior_mode` finds the mode ``w*`` of
``Σ log p(t | Φ_A w, θ) − ½ Σ w²/v`` by Newton's method with step halving, :func:`_precision_factor`
the Cholesky factor of ``Σ⁻¹ = Φ_AᵀBΦ_A + V_A⁻¹`` there (``B = diag(b(η*))``, the likelihood's
``curvature``), :func:`_evidence` the Laplace approximation of the log marginal likelihood,

    log p(t | v) ≈ Σ_n log p(t_n | w*, θ) − ½ Σ_A w*_i² / v_i − ½ Σ_A log v_i + ½ log|Σ|,

and :func:`sparsity_quality` the factors of the Gaussian problem it linearizes (Tipping & Faul 2003,
eqs. 22–23 with ``B`` in place of ``σ⁻²I``),

    S_m = φ_mᵀBφ_m − φ_mᵀBΦ_A Σ Φ_AᵀBφ_m,   Q_m = φ_mᵀ g(η*),   s_m, q_m = S_m, Q_m / (1 − v_m S_m),

``g`` the likelihood's ``score`` (the last form of ``Q`` holds at the mode: ``Φ_Aᵀ g = V_A⁻¹ w*``).
:func:`_settle` moves a state to its mode and sets ``L`` (the evidence plus the hierarchy's terms,
:func:`_hyperprior_terms`, with ``σ² = 1``: :data:`UNIT_NOISE`).

The work runs on the active slots alone: a step gathers them into the smallest width of
:data:`ACTIVE_WIDTHS` that holds them (:func:`_on_active_slots`, :func:`_widths`); free slots are
decoupled (zero columns of ``Φ_A``, identity rows of the precision), so the width changes no value,
only the cost. The engine that takes these steps is :mod:`.typeii_laplace`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve, solve_triangular

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.inference.engines._active import active_first
from sparsebayes.models.likelihoods import masked_sum
from sparsebayes.models.priors.typeii import ARDPrior

#: The hierarchy of a fit that names none: the RVM's ARD (flat hyperprior on every ``α_i``, no term in ``L``).
ARD = ARDPrior()

#: ``σ²`` of the hierarchies' type-II pieces on this path: the likelihoods here have no noise variance,
#: so BLS's ``v_i = σ²τ_i`` is ``τ_i`` and its ``κ = λ/(2σ²)`` is FLAP's ``λ/2``.
UNIT_NOISE = 1.0


def _lam(state):
    """The state's λ (0 where it has none)."""
    return 0.0 if state.lam is None else state.lam


def _own(state):
    """The likelihood's parameter held by the state (the placeholder 1 where it has none)."""
    return 1.0 if state.params is None else state.params


def _log_lik_sum(likelihood, t, eta, params, n_obs):
    """``Σ log p(t_n | η_n, params)`` over every row (``n_obs`` None: padded rows add a constant that
    :func:`~.typeii_laplace._finish` removes) or over the first ``n_obs`` rows (a likelihood with its own parameter,
    whose padded rows' constant moves with it)."""
    terms = likelihood.log_lik(t, eta, params)
    return jnp.sum(terms) if n_obs is None else masked_sum(terms, n_obs)


def _hyperprior_terms(prior, var, lam):
    """What the hierarchy adds to ``L`` at the prior variances ``var`` (over the candidates) and ``λ``:
    ``typeii_log_variance_prior`` with ``σ² = 1`` (0 for ARD; for FLAP and BLS ``A log(λ/2) − λΣv_i/2 +
    log p(λ)``, 004 eq. 13)."""
    return prior.typeii_log_variance_prior(jnp.sum(var), lam, UNIT_NOISE, jnp.sum(var > 0))


def _slots(Phi, state):
    """Design columns and prior variances of the slots (zero column, variance 1 where free)."""
    active = jnp.asarray(state.basis_of_slot) >= 0
    idx = jnp.where(active, state.basis_of_slot, 0)
    return active, jnp.where(active[None, :], Phi[:, idx], 0.0), jnp.where(active, state.var[idx], 1.0)


def _log_joint(likelihood, w, Phi_A, t, inv_var, params=1.0, n_obs=None):
    """``Σ log p(t | w) − ½ Σ w²/v``, the log posterior up to a constant."""
    return _log_lik_sum(likelihood, t, Phi_A @ w, params, n_obs) - 0.5 * jnp.sum(inv_var * w * w)


def _precision_factor(Phi_A, b, active, v_slot):
    """Cholesky factor of ``Φ_AᵀBΦ_A + V_A⁻¹`` on the slots (identity where a slot is free)."""
    both = active[:, None] & active[None, :]
    H = jnp.einsum("nk,n,nj->kj", Phi_A, b, Phi_A)
    P = jnp.where(both, H + jnp.diag(1.0 / v_slot), jnp.eye(active.shape[0]))
    return jnp.linalg.cholesky(P)


def posterior_mode(likelihood, Phi_A, t, active, v_slot, w0, *, params=1.0, n_obs=None, max_newton=50, gtol=1e-8):
    """Mode of the slot weights by Newton's method with step halving (free slots stay 0): the
    gradient ``Φ_Aᵀ g(η) − V_A⁻¹w`` with ``g`` the likelihood's ``score`` (``t − μ(η)`` for a
    canonical link) and the Hessian ``−(Φ_AᵀBΦ_A + V_A⁻¹)``, ``B`` its ``curvature`` (the Fisher
    information where the likelihood is not log-concave: Fisher scoring, still an ascent with the
    step halving). ``params`` is the likelihood's own parameter, ``n_obs`` the rows that are data.

    Returns ``(w, L)``: the mode and the Cholesky factor of ``Σ⁻¹`` there.
    """
    inv_var = jnp.where(active, 1.0 / v_slot, 0.0)

    def newton(carry):
        w, it, _ = carry
        eta = Phi_A @ w
        g = jnp.where(active, likelihood.score(t, eta, params) @ Phi_A - inv_var * w, 0.0)
        L = _precision_factor(Phi_A, likelihood.curvature(t, eta, params), active, v_slot)
        step = jnp.where(active, cho_solve((L, True), g), 0.0)
        f0 = _log_joint(likelihood, w, Phi_A, t, inv_var, params, n_obs)
        scale, _ = jax.lax.while_loop(
            lambda c: (_log_joint(likelihood, w + c[0] * step, Phi_A, t, inv_var, params, n_obs) < f0) & (c[1] < 30),
            lambda c: (c[0] * 0.5, c[1] + 1), (jnp.asarray(1.0), 0))
        return w + scale * step, it + 1, jnp.max(jnp.abs(scale * step))

    def keep_going(carry):
        w, it, change = carry
        return (it < max_newton) & (change > gtol * jnp.maximum(1.0, jnp.max(jnp.abs(w))))

    w, _, _ = jax.lax.while_loop(keep_going, newton, (jnp.where(active, w0, 0.0), 0, jnp.asarray(jnp.inf)))
    return w, _precision_factor(Phi_A, likelihood.curvature(t, Phi_A @ w, params), active, v_slot)


def _evidence(likelihood, Phi_A, t, active, v_slot, w, L, params=1.0, n_obs=None):
    """Laplace approximation of the log marginal likelihood (module docstring)."""
    inv_var = jnp.where(active, 1.0 / v_slot, 0.0)
    log_var = jnp.sum(jnp.where(active, jnp.log(v_slot), 0.0))
    logdet_Sigma = -2.0 * jnp.sum(jnp.log(jnp.diag(L)))
    return _log_joint(likelihood, w, Phi_A, t, inv_var, params, n_obs) - 0.5 * log_var + 0.5 * logdet_Sigma


#: A step's work (:func:`sparsity_quality`, the Newton iterations of :func:`_settle`) runs on the
#: active slots gathered into the smallest of these widths that holds them (or on all
#: ``capacity`` slots): fits carry 4–8 active basis functions in 16 or more slots for most of
#: their steps (:func:`_on_active_slots`).
ACTIVE_WIDTHS = (4, 8)

#: Below this many multiply-adds of a step's ``K × M`` products (``N · M · K``: rows, candidates,
#: slots) the step runs on all ``K`` slots alone: each width is a compiled copy of the step (about
#: as much XLA compile time as the rest of the program), and at this size a narrower width saves
#: less time per step than its copy costs to compile (:func:`_widths`).
NARROW_ABOVE = 1 << 22


#: ``basis_of_slot`` of a slot not open yet: a fit's first program holds twice the slots it starts
#: with and opens the second half when an add finds none free (:func:`~.typeii_laplace.fit`).
CLOSED = -2


def small(shape, K):
    """Whether a step of ``K`` slots on a padded ``Φ`` of ``shape`` is small: ``N · M · K`` at most
    :data:`NARROW_ABOVE` (it runs on all its slots, :func:`_widths`, and compiles at
    :data:`~._compile.QUICK_COMPILE`, :func:`~.typeii_laplace._programs`)."""
    return shape[0] * shape[1] * K <= NARROW_ABOVE


def _widths(shape, K):
    """The widths a step of ``K`` slots on a padded ``Φ`` of ``shape`` gathers its active slots into
    (:func:`_on_active_slots`): those of :data:`ACTIVE_WIDTHS` below ``K`` and ``K`` itself, or ``K``
    alone (a static choice: one compiled copy of the step) when ``N · M · K`` is at most
    :data:`NARROW_ABOVE` or ``K`` is over twice the largest narrow width: :func:`~.typeii_laplace.fit` starts in at
    most that many slots, and a fit in more has outgrown half of them, so its active count stays
    above the narrow widths. Free slots are decoupled from the active ones, so the width changes no
    value of ``S``, ``Q``, the mode or ``L``, only the cost of computing them."""
    if small(shape, K) or K > 2 * max(ACTIVE_WIDTHS):
        return (K,)
    return tuple(k for k in ACTIVE_WIDTHS if k < K) + (K,)


def _on_active_slots(slots, fn, shape, *, one_active=False):
    """``fn(idx)`` on the slots ``idx``: the active ones in slot order, padded with free ones to the
    smallest width of ``ACTIVE_WIDTHS`` that holds them (all open slots, in order, past the largest).

    Free slots are decoupled from the rest (zero columns of ``Φ_A``, identity rows of the
    precision), so the rows and columns that ``idx`` selects from the Cholesky factor of the
    precision are the factor of its block, and nothing outside ``idx`` changes ``S``, ``Q``, the
    mode or the evidence. One ``lax.switch`` branch per width, compiled once; with
    ``one_active`` (the start, :func:`~.typeii_laplace.start`) the smallest width's branch alone, the one the switch
    would take, so that the start compiles one copy of ``fn`` instead of one per width. While only
    the first ``k`` slots are open (the rest :data:`CLOSED`, ``k`` a width), the width ``k`` takes
    them in order, as a fit in ``k`` slots does.
    """
    K = slots.shape[0]
    active = slots >= 0
    n_open = jnp.sum(slots != CLOSED)
    widths = _widths(shape, K)
    if len(widths) == 1:
        return fn(None)  # every slot, in order: no gather
    branches = [lambda _, k=k: fn(jnp.where(n_open == k, jnp.arange(k), active_first(active, k)) if k < K
                                  else jnp.arange(K)) for k in widths]
    if one_active:
        return branches[0](None)
    # the first width that holds the active count (searchsorted's index, without its scan loop)
    return jax.lax.switch(jnp.sum(jnp.asarray(widths) < jnp.sum(active)), branches, None)


def sparsity_quality(likelihood, Phi, t, state, L):
    """``S_m, Q_m`` for every candidate (module docstring), and ``s_m, q_m = S, Q / (1 − v_m S_m)``;
    the ``K × M`` work on the active slots alone (:func:`_on_active_slots`)."""
    _, Phi_A, _ = _slots(Phi, state)
    eta = Phi_A @ state.w
    b = likelihood.curvature(t, eta, _own(state))

    def explained(idx):  # φ_mᵀBΦ_A Σ Φ_AᵀBφ_m (idx None: every slot)
        cols, L_idx = (Phi_A, L) if idx is None else (Phi_A[:, idx], L[jnp.ix_(idx, idx)])
        Z = jnp.einsum("nk,n,nm->km", cols, b, Phi)  # Φ_AᵀBφ_m, zero rows for free slots
        V = solve_triangular(L_idx, Z, lower=True)
        return jnp.sum(V * V, axis=0)

    S = b @ (Phi * Phi) - _on_active_slots(state.basis_of_slot, explained, Phi.shape)
    Q = likelihood.score(t, eta, _own(state)) @ Phi
    denom = 1.0 - state.var * S
    return S, Q, S / denom, Q / denom


def _settle(likelihood, Phi, t, state, one_active=False, *, prior=ARD, n_obs=None):
    """Move ``w`` to the mode for ``state.var`` (and the likelihood's parameter ``state.params``) and
    recompute ``L``, the Laplace evidence plus the hierarchy's terms at ``state.lam``
    (:func:`_hyperprior_terms`), both on the active slots alone (:func:`_on_active_slots`, with
    ``one_active`` for a state with one basis function in); returns the state (its ``chol`` set)
    and that factor."""
    active, Phi_A, v_slot = _slots(Phi, state)
    K = active.shape[0]
    params = _own(state)

    def settle(idx):  # idx None: every slot, in order
        if idx is None:
            w, L = posterior_mode(likelihood, Phi_A, t, active, v_slot, jnp.asarray(state.w), params=params,
                                  n_obs=n_obs)
            return w, L, _evidence(likelihood, Phi_A, t, active, v_slot, w, L, params, n_obs)
        cols, act, var = Phi_A[:, idx], active[idx], v_slot[idx]
        w, L = posterior_mode(likelihood, cols, t, act, var, jnp.asarray(state.w)[idx], params=params, n_obs=n_obs)
        return (jnp.zeros(K).at[idx].set(w), jnp.eye(K).at[jnp.ix_(idx, idx)].set(L),
                _evidence(likelihood, cols, t, act, var, w, L, params, n_obs))

    w, L, objective = _on_active_slots(state.basis_of_slot, settle, Phi.shape, one_active=one_active)
    objective = objective + _hyperprior_terms(prior, state.var, _lam(state))
    return state._replace(w=w, objective=objective, chol=L), L


@jax.jit
def _laplace_covariance(likelihood, Phi, t, state):
    """``Σ`` over all slots (identity rows where free)."""
    active, Phi_A, v_slot = _slots(Phi, state)
    L = _precision_factor(Phi_A, likelihood.curvature(t, Phi_A @ state.w, _own(state)), active, v_slot)
    return cho_solve((L, True), jnp.eye(active.shape[0]))
