"""Rank-one updates of the Gaussian type-II engine (:mod:`.typeii`) for one move in the slots.

An add, re-estimate or delete of basis function ``m`` changes one prior variance, so the
posterior covariance ``Σ`` and mean ``μ`` of the slot weights, ``log|Σ|`` and the factors
``S, Q`` of every candidate change by rank one (Tipping & Faul 2003, Appendix; 004 eqs. 20–21),
at ``O(N M)`` for an add (the new column of ``B = ΦᵀΦ_slots``; ``O(M)`` from a held Gram
matrix) and ``O(M · capacity)`` otherwise. The alignment of each candidate with the active columns (the largest ``|cos|``),
which keeps near-duplicate columns out of the model, is kept up to date here too.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


def basis_column(data, m):
    """``Φᵀφ_m`` (M,), the new column of ``B`` when basis ``m`` enters: from the design (``O(NM)``), or
    row ``m`` of ``ΦᵀΦ`` when the engine holds the Gram matrix (:class:`~.typeii_exact.GramData`, the
    n-independent form; ``ΦᵀΦ`` is symmetric, so its row ``m`` is its column ``m``)."""
    if getattr(data, "is_gram", False):  # static: the data's type decides the program
        return data.Phi[m]
    return data.Phi[:, m] @ data.Phi  # XLA:CPU copies Φᵀ for Φ.T @ v (15x slower at 4096²)


def _slot_view(state):
    active = state.basis_of_slot >= 0
    idx = jnp.where(active, state.basis_of_slot, 0)
    return active, idx


def _alignment(data, state):
    """Largest |cosine| between each candidate column and the active columns, from ``B``.

    The engine keeps it as ``state.align``: an add takes the maximum with the new column's
    cosines (:func:`_cosines`, the quotients computed here), and only a delete recomputes it
    here, instead of an M × K pass every step."""
    active, idx = _slot_view(state)
    return jnp.max(jnp.where(active[None, :], _cosines(data, state.B, idx), 0.0), axis=1)


def _cosines(data, cols, of):
    """``|cos|`` between every candidate and the bases ``of`` (k,), from ``cols = Φᵀφ_of`` (M × k)."""
    norms = jnp.sqrt(data.col_sq)
    return jnp.abs(cols) / (jnp.maximum(norms, 1e-300)[:, None] * norms[of][None, :])


def _reestimate_or_delete(data, state, m, new_var):
    """Rank-one update for a changed (``new_var > 0``) or deleted (``new_var = 0``) basis ``m``."""
    j = state.slot_of[m]
    Sj = state.Sigma[:, j]
    Sjj = Sj[j]
    delete = new_var <= 0
    dalpha = 1.0 / jnp.where(delete, 1.0, new_var) - 1.0 / state.var[m]
    kappa = jnp.where(delete, 1.0 / Sjj, dalpha / (1.0 + dalpha * Sjj))
    z = state.B @ Sj / state.noise_var
    mu_j = state.mu[j]
    Sigma = state.Sigma - kappa * jnp.outer(Sj, Sj)
    mu = state.mu - kappa * mu_j * Sj
    logdet = state.logdet_Sigma - jnp.where(delete, jnp.log(Sjj), jnp.log1p(dalpha * Sjj))
    new = state._replace(
        var=state.var.at[m].set(jnp.maximum(new_var, 0.0)),
        slot_of=state.slot_of.at[m].set(jnp.where(delete, -1, j).astype(jnp.int32)),
        Sigma=Sigma,
        mu=mu,
        logdet_Sigma=logdet,
        S=state.S + kappa * z * z,
        Q=state.Q + kappa * mu_j * z,
    )
    return jax.lax.cond(delete, lambda st: _free_slot(data, st, j), lambda st: st, new)


def _free_slot(data, state, j):
    """Slot ``j`` emptied after a delete: its row and column of Σ, its μ and its column of ``B``
    zeroed, and ``align`` recomputed without it."""
    free = jnp.arange(state.mu.shape[0]) == j
    state = state._replace(
        basis_of_slot=jnp.where(free, -1, state.basis_of_slot),
        B=jnp.where(free[None, :], 0.0, state.B),
        Sigma=jnp.where(free[:, None] | free[None, :], 0.0, state.Sigma),
        mu=jnp.where(free, 0.0, state.mu),
    )
    return state._replace(align=_alignment(data, state))


def _add(data, state, m, new_var):
    """Rank-one growth of Σ, μ, S, Q when basis ``m`` enters a free slot."""
    j = jnp.argmax(state.basis_of_slot < 0)
    s2 = state.noise_var
    Sii = 1.0 / (1.0 / new_var + state.S[m])
    mui = Sii * state.Q[m]
    w = state.Sigma @ state.B[m, :] / s2
    col = basis_column(data, m)  # = Φᵀφ_m
    e = (col - state.B @ w) / s2
    Sigma = state.Sigma + Sii * jnp.outer(w, w)
    Sigma = Sigma.at[:, j].set(-Sii * w).at[j, :].set(-Sii * w).at[j, j].set(Sii)
    mu = (state.mu - mui * w).at[j].set(mui)
    return state._replace(
        var=state.var.at[m].set(new_var),
        slot_of=state.slot_of.at[m].set(j.astype(jnp.int32)),
        basis_of_slot=state.basis_of_slot.at[j].set(m.astype(jnp.int32)),
        B=state.B.at[:, j].set(col),
        Sigma=Sigma,
        mu=mu,
        logdet_Sigma=state.logdet_Sigma + jnp.log(Sii),
        S=state.S - Sii * e * e,
        Q=state.Q - mui * e,
        align=jnp.maximum(state.align, _cosines(data, col[:, None], m[None])[:, 0]),
    )
