"""A kernel design factored as ``H = Q H̃`` when its kernel matrix is numerically low-rank.

EM touches the data only through ``η = Hβ`` (the E-step and σ² update) and through ``HᵀH`` and
``Hᵀv`` (the M-step). With ``H = Q H̃``, ``Q`` (n × r) orthonormal, those are
``η = Q(H̃β)``, ``HᵀH = H̃ᵀH̃`` and ``Hᵀv = H̃ᵀ(Qᵀv)``: the M-step is the same update on the
r × p design ``H̃`` and the r compressed targets ``Qᵀv``, in its dual (r × r) form, so an
iteration costs ``O(r² p)`` instead of ``O(p³)``. The sequential type-II engine reads the data
only through ``ΦᵀΦ``, ``Φᵀy``, ``‖φ_i‖²``, ``yᵀy`` and N, and runs on ``H̃`` and ``Qᵀy`` with
the real N and ``yᵀy`` (:func:`sparsebayes.inference.engines.typeii_exact.make_data`).

Gaussian kernels centred on the training points are often of low numerical rank (wide
kernels, few input dimensions: on sinc with h = 3 the kernel matrix has rank 25 to 1e-14 from
100 to 4000 points), and then a factored fit is the dense one up to rounding. Rounding matters
where many nearly collinear kernels compete: for Jeffreys EM on sinc with n = 1000, perturbing
the dense H by 1e-15 relative changes which 7 to 9 kernels survive, and the factored fit lands
among those fits, with the same test RMSE to four digits. At n ≤ 300 and for the convex
Laplace fit both agree to 1e-6; type-II takes the dense fit's steps.

The factor comes from a diagonally pivoted (incomplete) Cholesky ``K ≈ LLᵀ`` of the kernel
block: it computes only the ``r`` pivot columns (the n × n kernel is never formed), and stops
when every residual diagonal is at most ``tol``. The residual ``S = K − LLᵀ`` is positive
semidefinite, so every entry satisfies ``|S_ij| ≤ tol`` and
``‖H − QH̃‖_F = ‖S‖_F ≤ trace S ≤ n·tol``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sparsebayes.models.features import gaussian_kernel

#: Residual diagonal at which the pivoted Cholesky stops: a few units in the last place of a
#: Gaussian kernel's unit diagonal, about the rounding error of computing the kernel itself.
RANK_TOL = 1e-14


class DesignFactor(NamedTuple):
    """``H ≈ basis @ design``: ``basis`` (n, r) with orthonormal columns, ``design`` (r, p)."""

    basis: np.ndarray
    design: np.ndarray


#: Give up early when the residual's decay rate from step j/2 to j, extrapolated, needs more than
#: this many times ``max_rank`` steps (judged at j = 8, 16, 32, ... once the residual at j/2 is
#: below half the largest diagonal: before that the pivots are still spreading over the data and
#: the residual sits near its start). Gaussian kernels' residuals decay ever faster, so the
#: extrapolation overestimates: with a margin of 1.5 it gave up within 8–32 steps on the designs
#: of the classification reproductions (Pima, WBC, crabs, glass, Ripley with 100 and 250
#: points), and on none of the low-rank designs tried (sinc with h = 0.3, 1 and 3 and n up to
#: 4000, Ripley with h = 2, 2-D Gaussian clouds). Giving up only costs speed, never accuracy.
GIVE_UP_MARGIN = 1.5


def _hopeless(largest, j, tol, max_rank):
    """Whether the decay of the largest residual diagonal from step ``j/2`` to ``j``, continued,
    misses ``tol`` by ``GIVE_UP_MARGIN · max_rank`` steps."""
    if largest[j // 2] > 0.5 * largest[0]:
        return False
    rate = np.log(largest[j] / largest[j // 2]) / (j / 2)
    return rate >= 0 or j + np.log(tol / largest[j]) / rate > GIVE_UP_MARGIN * max_rank


def pivoted_cholesky(row, diag, tol, max_rank):
    """``K ≈ L Lᵀ`` by Cholesky with greedy diagonal pivoting; ``None`` if it needs more than ``max_rank``.

    ``K`` is symmetric positive semidefinite, given by its diagonal ``diag`` and ``row(i)``
    (row ``i``, which is column ``i``): only the pivot rows are computed. Each step takes the
    largest residual diagonal as pivot and stops once it is at most ``tol``. It also returns
    ``None`` early when the residual decays too slowly to make it (:data:`GIVE_UP_MARGIN`):
    that only decides whether a caller takes the factored path.
    """
    residual = np.array(diag, dtype=np.float64)
    n = residual.size
    Lt = np.zeros((max_rank, n))  # Lᵀ: a new column of L is one contiguous row, so only the rows used are touched
    largest = []
    for j in range(max_rank + 1):
        i = int(np.argmax(residual))
        largest.append(residual[i])
        if residual[i] <= tol:
            return Lt[:j].T
        if j == max_rank or (j >= 8 and j & (j - 1) == 0 and _hopeless(largest, j, tol, max_rank)):
            return None
        Lt[j] = (row(i) - Lt[:j, i] @ Lt[:j]) / np.sqrt(residual[i])
        residual -= Lt[j] ** 2
        residual[i] = 0.0


def factor_kernel_design(row, diag, *, bias, tol=RANK_TOL, max_rank=None):
    """Factor the design ``H = [1 | K]`` (or ``K`` without ``bias``) of a PSD kernel block ``K``.

    ``K`` (n × n, the kernels of the training points) is given by ``diag`` and ``row(i)``, as
    for :func:`pivoted_cholesky`. Returns a :class:`DesignFactor` when its numerical rank (to
    ``tol``) is at most ``max_rank`` (default ``n // 4``, below which the factored M-step is
    the cheaper one), else ``None``.

    With ``K ≈ LLᵀ``: ``H ≈ A Bᵀ``, ``A = [1 | L]``, ``Bᵀ = diag(1, Lᵀ)``; a thin QR
    ``A = QR`` gives ``H̃ = R Bᵀ``.
    """
    n = len(diag)
    L = pivoted_cholesky(row, diag, tol, n // 4 if max_rank is None else max_rank)
    if L is None:
        return None
    A = np.hstack([np.ones((n, 1)), L]) if bias else L
    Q, R = np.linalg.qr(A)
    design = np.hstack([R[:, :1], R[:, 1:] @ L.T]) if bias else R @ L.T
    return DesignFactor(Q, design)


def gaussian_kernel_rows(X, width):
    """``row(i)`` of the Gaussian kernel matrix of ``X`` (:func:`~sparsebayes.models.features.gaussian_kernel`),
    computed on demand, for :func:`factor_kernel_design` without forming the matrix."""
    X = np.asarray(X, dtype=np.float64)
    return lambda i: gaussian_kernel(X[i:i + 1], X, width)[0]


def kernel_feature_rows(feature_map, X):
    """``row(i)`` of the kernel block of a :class:`~sparsebayes.models.features.GaussianKernelFeatures`
    fitted on ``X`` (its ``kernel``: the resolved ``width_`` and the ``offset_`` its distances are
    taken from), computed on demand, for :func:`factor_kernel_design`."""
    X = np.asarray(X, dtype=np.float64)
    return lambda i: feature_map.kernel(X[i:i + 1])[0]


def centre_rows(factor):
    """The factor of the column-centred design ``(I − 11ᵀ/n) QH̃ = Q₂(R₂H̃)``, ``Q − 1 q̄ᵀ = Q₂R₂``."""
    Q2, R2 = np.linalg.qr(factor.basis - factor.basis.mean(axis=0))
    return DesignFactor(Q2, R2 @ factor.design)


def centred_design_factor(feature_map, X, *, fit_intercept):
    """``(factor, offset)`` for a type-II regressor's design of Gaussian kernel features on ``X``,
    or ``None`` when the kernel block is not of low numerical rank: the :class:`DesignFactor` of
    the design (centred when ``fit_intercept``) and the column means taken off (``design_offset_``;
    zeros without an intercept).

    The kernel block is factored alone (:func:`factor_kernel_design`, pivot rows computed from
    ``X``); with ``fit_intercept`` its factor is centred (:func:`centre_rows`) and the bias column,
    zero once centred, is put back as zeros."""
    factor = factor_kernel_design(kernel_feature_rows(feature_map, X), np.ones(X.shape[0]),
                                  bias=feature_map.bias and not fit_intercept)
    if factor is None:
        return None
    if not fit_intercept:
        return factor, np.zeros(factor.design.shape[1])
    offset = factor.basis.mean(axis=0) @ factor.design
    factor = centre_rows(factor)
    if feature_map.bias:
        offset = np.r_[1.0, offset]
        factor = DesignFactor(factor.basis, np.hstack([np.zeros((factor.design.shape[0], 1)), factor.design]))
    return factor, offset
