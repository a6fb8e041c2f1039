"""Dense linear algebra of the Gaussian type-II engine (:mod:`.typeii`): the slot precision's
inverse and log-determinant, and aligned host buffers for designs handed to the device.

``P = Φ_AᵀΦ_A/σ² + V_A⁻¹`` (Tipping & Faul 2003, eq. 8 with ``σ⁻²``; 004 Sec. 3) is inverted on
the ``capacity`` slots, free slots carrying identity rows, by a Cholesky factor (LAPACK) or by
the sweep operator (XLA operations only, for ``vmap``-ed fits).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_solve


def aligned_zeros(shape, align=64):
    """A C-ordered float64 array of zeros whose data start on an ``align``-byte boundary."""
    size = int(np.prod(shape))
    buf = np.zeros(size + align // 8)
    start = (-buf.ctypes.data % align) // 8
    return buf[start:start + size].reshape(shape)


def spd_inverse_lapack(P, active):
    """``(P⁻¹, log|P|)`` of a symmetric positive definite ``P`` by Cholesky (LAPACK potrf/trsm);
    ``active`` (unused here) marks the rows that are not identity rows."""
    L = jnp.linalg.cholesky(P)
    return cho_solve((L, True), jnp.eye(P.shape[0])), 2.0 * jnp.sum(jnp.log(jnp.diag(L)))


def spd_inverse_sweep(P, active):
    """``(P⁻¹, log|P|)`` by the sweep operator (Gauss–Jordan on the diagonal pivots), XLA ops only.

    For ``vmap``-ed fits: a batched Cholesky solve is a LAPACK call that jaxlib spreads over
    XLA's CPU thread pool from a thread of that pool, and on the 2-core machines it deadlocked
    (all threads parked, a batch of 40 fits at N = 100; seen in gdb in ``lapack_dtrsm_ffi`` →
    ``ParallelBatchMap``). Sweeping pivot ``k`` maps ``a_ij → a_ij − a_ik a_kj / a_kk``,
    ``a_ik → a_ik / a_kk``, ``a_kk → −1 / a_kk``; after all ``K`` pivots the matrix is ``−P⁻¹``, and
    the pivots are those of the Cholesky factorization (their logs sum to ``log|P|``). Pivots past
    the last row marked in ``active`` (identity rows, decoupled from the rest) are not swept:
    there ``P⁻¹ = P = I``."""
    n_pivots = jnp.max(jnp.where(active, jnp.arange(1, P.shape[0] + 1), 0))

    def sweep(k, carry):
        A, logdet = carry
        pivot = A[k, k]
        col, row = A[:, k], A[k, :]
        A = A - jnp.outer(col, row) / pivot
        A = A.at[:, k].set(col / pivot).at[k, :].set(row / pivot).at[k, k].set(-1.0 / pivot)
        return A, logdet + jnp.log(pivot)

    A, logdet = jax.lax.fori_loop(0, n_pivots, sweep, (P, jnp.zeros((), P.dtype)))
    return jnp.where(jnp.arange(P.shape[0]) < n_pivots, -1.0, 1.0)[:, None] * A, logdet
