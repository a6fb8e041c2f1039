"""Gathering the active coordinates of a fixed-width array inside jit (shared by the engines)."""
from __future__ import annotations

import jax.numpy as jnp


def active_first(active, size):
    """``size`` distinct indices: those where ``active`` holds, in order, then inactive ones in order.

    Padding with inactive (decoupled) coordinates keeps a gathered system the active block plus
    identity-like rows, so a solve or a Cholesky factor on the gathered indices is the one of the
    active block (used by EM's M-step and the Bernoulli RVM's steps)."""
    return jnp.argsort(~active, stable=True)[:size]
