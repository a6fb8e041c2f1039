"""Gathering the active coordinates of a fixed-width array inside jit (shared by the engines)."""
from __future__ import annotations

import jax.numpy as jnp


def active_first(active, size):
    """``size`` distinct indices: those where ``active`` holds, in order, then inactive ones in order.

    Padding with inactive (decoupled) coordinates keeps a gathered system the active block plus
    identity-like rows, so a solve or a Cholesky factor on the gathered indices is the one of the
    active block (used by EM's M-step and the Bernoulli RVM's steps)."""
    # the slot of each index in that order, by counting (no sort: an argsort costs a loop of EM
    # a few microseconds per iteration); the slots are a permutation, scattered back into indices
    counts = jnp.cumsum(active)
    slot = jnp.where(active, counts - 1, jnp.sum(active) + jnp.arange(active.shape[0]) - counts)
    return jnp.zeros(active.shape[0], dtype=jnp.int32).at[slot].set(
        jnp.arange(active.shape[0], dtype=jnp.int32), unique_indices=True)[:size]
