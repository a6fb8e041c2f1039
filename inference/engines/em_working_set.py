"""Working-set EM for Gaussian regression at large ``n · p``: the Gram of the kept columns only.

Figueiredo's EM (:mod:`sparsebayes.inference.engines.em`) forms ``HᵀH`` for every column and takes every
iteration on the ``n`` rows: ``O(np²)`` once and ``O(np)`` per iteration, although the estimate
keeps few columns. Here, as in the working-set solvers of the Lasso (glmnet's strong rules and
KKT checks, Tibshirani et al. 2012; skglm's working sets, Massias et al. 2018), EM runs on a working
set ``W`` of columns and the full design is read only to check the answer:

1. ``W`` starts as the ``start_size`` columns of largest ``|h_jᵀy| / ‖h_j‖`` (the gradient of the
   log likelihood at ``β = 0``, per unit of column), and ``β_W`` at the paper's ridge start on them
   (:class:`~sparsebayes.inference.engines.em_start.RidgeStart`, 002 Step 2).
2. EM runs on ``W`` in its sufficient-statistics form: with the Gaussian likelihood every step
   depends on the data only through ``G = H_WᵀH_W``, ``c = H_Wᵀy``, ``yᵀy`` and ``n`` (the M-step,
   000 "An Important Implementation Detail", on ``G`` and ``c``; σ² = ``‖y − H_Wβ‖²/n`` (000 eq. 12)
   ``= (yᵀy − 2βᵀc + βᵀGβ)/n``). They enter the engine as a ``(k + 1) × k`` pseudo-design
   ``[R; 0]`` with ``RᵀR = G`` and pseudo-targets ``[R⁻ᵀc; t]``, ``t² = yᵀy − ‖R⁻ᵀc‖²``
   (:func:`sufficient_design`), which have the same Gram, ``Hᵀy`` and residual norms, so EM's steps
   on them are its steps on ``H_W`` (to rounding) at ``O(k³)`` each instead of ``O(nk)``.
3. The check on the full design: with ``r = y − H_Wβ_W`` and ``z_j = h_jᵀr + ‖h_j‖²β_j`` (the
   correlation of column ``j`` with the residual of the others), the M-step of weight ``j`` alone,
   the others held, is ``β_j ↦ φ_j(β_j) = u(β_j)² z_j / (σ² + u(β_j)² ‖h_j‖²)`` (the E-step's
   ``u``, :meth:`em_scale`). EM keeps a weight where ``φ_j`` has a fixed point away from 0 below
   ``|z_j|/‖h_j‖`` (its least-squares value), and drives it to 0 where it has none
   (:func:`coordinate_keeps`). A column outside ``W`` that EM would keep is re-admitted (from its
   least-squares value); a weight in ``W`` that EM would prune but has not yet (EM's stopping rule
   watches the large weights) is set to 0. EM then runs again on the new ``W``, until the check
   finds nothing: the returned ``β`` is an EM fixed point on ``W`` with no column outside it that
   EM would keep, and no weight inside it that EM would prune.

For the Laplace prior (γ fixed) ``φ_j(β)/β = |z_j| / (σ²√γ + |β| ‖h_j‖²)``, and the check is the
Lasso's KKT condition ``|h_jᵀr| ≤ σ²√γ`` for every zero weight: the result is the Lasso solution at
``α = σ²√γ/n`` in scikit-learn's scaling, whatever ``W`` started as. For Jeffreys
(``u = |β|``) a fixed point away from 0 exists iff ``|z_j| ≥ 2σ‖h_j‖``; EM's fixed points are not
unique there, and the working set's start (the ridge estimate on ``W``, not on every column) can
reach another one than the full EM's where the data do not determine the support.

Memory ``O(nk + k²)`` for ``k`` columns in ``W`` (besides ``H`` itself); time ``O(nk²)`` per round for
the Gram, ``O(np)`` for the check, and ``O(k³)`` per EM iteration.
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from sparsebayes.models.likelihoods import conjugate_noise

from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference.engines.em import EMControls
from sparsebayes.inference.engines.em_slices import PAD_PER_OCTAVE, EMResult, run_slices
from sparsebayes.inference.engines.em_start import RidgeStart

__all__ = ["coordinate_keeps", "fit_em_working_set", "large_design", "sufficient_design", "use_working_set"]

#: Columns in the first working set (all of them when the design has fewer).
START_SIZE = 128
#: :func:`use_working_set` takes the working-set path from this many design entries ``n · p`` on.
MIN_ENTRIES = 10_000_000
#: ... and when the rows are at least this many times the columns (the sufficient form is small).
MIN_ROWS_PER_COLUMN = 2
#: Rounds of EM and check before the fit stops with a warning.
MAX_ROUNDS = 50
#: Points of the grid on which :func:`coordinate_keeps` looks for ``φ(β) ≥ β``: geometric from
#: ``1e-12`` of the least-squares value to it, where the Laplace map's supremum (at 0) and the
#: Jeffreys map's (at half the least-squares value) lie.
GRID = np.unique(np.concatenate([np.geomspace(1e-12, 1.0, 241), np.linspace(0.0, 1.0, 201)[1:]]))


def large_design(H):
    """A design of at least :data:`MIN_ENTRIES` entries with at least :data:`MIN_ROWS_PER_COLUMN`
    rows per column: where ``HᵀH`` costs more than the working set's Gram and check."""
    n, p = np.shape(H)
    return n * p >= MIN_ENTRIES and n >= MIN_ROWS_PER_COLUMN * p


def use_working_set(H, likelihood, factor=None):
    """Whether :func:`fit_em_working_set` pays: a dense design (not factored) that is
    :func:`large_design`, and a likelihood that states ``conjugate_noise`` (``y ~ N(η, σ²)``, the
    Gaussian: its EM depends on the data through the sufficient statistics ``HᵀH``, ``Hᵀy``, ``yᵀy``
    alone)."""
    if factor is not None or H is None or not conjugate_noise(likelihood):
        return False
    return large_design(H)


def sufficient_design(G, c, yy):
    """``(H̃, ỹ)``: a ``(k + 1) × k`` design and ``k + 1`` targets with ``H̃ᵀH̃ = G``, ``H̃ᵀỹ = c`` and
    ``‖ỹ − H̃β‖² = yᵀy − 2βᵀc + βᵀGβ`` (``= ‖y − Hβ‖²`` for ``G = HᵀH``, ``c = Hᵀy``, ``yy = yᵀy``).

    ``H̃ = [R; 0]`` with ``RᵀR = G`` (Cholesky; where ``G`` is singular in float64, ``R = Λ^{1/2}Vᵀ``
    from its eigenvalues above rounding), ``ỹ = [R⁻ᵀc; t]`` with ``t = √(yᵀy − ‖R⁻ᵀc‖²)``, the norm of
    ``y``'s part outside the columns' span."""
    k = G.shape[0]
    if k == 0:
        return np.zeros((1, 0)), np.array([np.sqrt(max(float(yy), 0.0))])
    try:
        L = scipy.linalg.cholesky(G, lower=True)
        R = L.T
        top = scipy.linalg.solve_triangular(L, c, lower=True)
    except np.linalg.LinAlgError:  # collinear columns: the range of G (c = Hᵀy lies in it)
        lam, V = np.linalg.eigh(G)
        keep = lam > max(float(lam[-1]), 0.0) * k * np.finfo(float).eps
        R = np.zeros((k, k))
        R[:keep.sum()] = np.sqrt(lam[keep])[:, None] * V[:, keep].T
        top = np.zeros(k)
        top[:keep.sum()] = (c @ V[:, keep]) / np.sqrt(lam[keep])
    rest = np.sqrt(max(float(yy - top @ top), 0.0))
    return np.vstack([R, np.zeros((1, k))]), np.append(top, rest)


def coordinate_keeps(prior, z, sq_norm, noise_var, current=None):
    """Per column ``j``: whether EM, updating weight ``j`` alone with the others held, keeps it.

    That update is ``φ_j(β) = u(β)² z_j / (σ² + u(β)² ‖h_j‖²)`` (the M-step, 000 "An Important
    Implementation Detail", on one coordinate; ``u`` the prior's :meth:`em_scale`, ``z_j = h_jᵀr_{−j}``
    with ``r_{−j}`` the residual of the other columns, ``sq_norm`` the ``‖h_j‖²``). From the
    least-squares value ``b_j = z_j/‖h_j‖²`` (where ``φ_j(b_j) ≤ b_j``) its iterates fall to the
    largest fixed point below ``b_j``, which is away from 0 iff ``φ_j(β) ≥ β`` somewhere in
    ``(0, |b_j|]``: checked on :data:`GRID` (times ``|b_j|``) and at ``current`` (``|β_j|`` now, a fixed
    point of EM where it has converged). Laplace: iff ``|z_j| ≥ σ²√γ`` (the KKT condition);
    Jeffreys: iff ``|z_j| ≥ 2σ‖h_j‖``.
    """
    z = np.abs(np.asarray(z, dtype=np.float64))
    sq_norm = np.asarray(sq_norm, dtype=np.float64)
    live = (sq_norm > 0) & (z > 0)
    b = np.where(live, z / np.where(live, sq_norm, 1.0), 0.0)
    beta = b[:, None] * GRID[None, :]
    if current is not None:
        beta = np.concatenate([beta, np.minimum(np.abs(current), b)[:, None]], axis=1)
    u2 = np.asarray(prior.em_scale(jnp.asarray(beta))) ** 2
    phi = u2 * z[:, None] / (noise_var + u2 * sq_norm[:, None])
    return live & np.any((beta > 0) & (phi >= beta * (1.0 - 1e-9)), axis=1)


def _host(prior):
    """The hierarchy's leaves as host floats (an :class:`EMResult`'s ``prior``)."""
    return jax.tree.map(lambda x: float(x) if np.ndim(x) == 0 else np.asarray(x), prior)


def fit_em_working_set(H, y, prior, likelihood, *, noise_var=None, tol=1e-3, max_iter=1000, prune_tol=1e-8,
                       noise_floor_rel=1e-10, start_size=START_SIZE, working_set=None, max_rounds=MAX_ROUNDS):
    """EM on a working set of columns with a check on the full design (module docstring); returns
    :class:`~sparsebayes.inference.engines.em_slices.EMResult` as :func:`~sparsebayes.inference.engines.em_slices.fit_em` does.

    Parameters
    ----------
    H : ndarray (n, p)
        The design (float64), dense.
    y : ndarray (n,)
        Targets.
    prior, likelihood, noise_var, tol, max_iter, prune_tol, noise_floor_rel
        As for :func:`~sparsebayes.inference.engines.em_slices.fit_em`; the likelihood must state
        ``conjugate_noise`` (``y ~ N(η, σ²)``: the Gaussian).
    start_size : int
        Columns in the first working set: those of largest ``|h_jᵀy| / ‖h_j‖``.
    working_set : array of int or None
        The first working set itself (overrides ``start_size``): a bad one is corrected by the
        check (tests force one).
    max_rounds : int
        Rounds of EM and check at most (a ``RuntimeWarning`` if they do not settle).
    """
    if not conjugate_noise(likelihood):
        raise ValueError(f"working-set EM needs a Gaussian likelihood, one that states conjugate_noise (y ~ N(eta, "
                         f"sigma^2): EM on sufficient statistics), got {getattr(likelihood, 'name', likelihood)!r}; "
                         "use fit_em")
    H = np.asarray(H, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, p = H.shape
    if y.shape != (n,):
        raise ValueError(f"y must have one value per row of H ({n}), got shape {y.shape}")
    c = y @ H  # Hᵀy without copying Hᵀ
    yy = float(y @ y)
    sq_norm = np.einsum("ij,ij->j", H, H)
    col_norm = np.sqrt(sq_norm)
    estimate_noise = noise_var is None
    s2 = float(likelihood.init_params(y)) if estimate_noise else float(noise_var)
    if not (np.isfinite(s2) and s2 > 0):
        s2 = 1.0
    floor = noise_floor_rel * max(yy / n, np.finfo(float).tiny)
    if working_set is None:
        score = np.abs(c) / np.where(col_norm > 0, col_norm, np.inf)
        working_set = np.sort(np.argsort(-score, kind="stable")[:min(p, int(start_size))])
    W = np.unique(np.asarray(working_set, dtype=np.int64))
    if W.size == 0 or W[0] < 0 or W[-1] >= p:
        raise ValueError(f"working_set must hold column indices in [0, {p}), got {working_set!r}")
    Hw = H[:, W]
    G = Hw.T @ Hw
    Hs, ys = sufficient_design(G, c[W], yy)
    beta = np.zeros(p)
    beta[W] = RidgeStart(Hs, gram=G)(ys)  # (G + E)⁻¹ c_W: the ridge start on W
    prune_floor = prune_tol * float(np.max(np.abs(beta) * col_norm, initial=0.0))
    controls = EMControls(*(np.float64(v) for v in (tol, max_iter, -1, prune_tol, floor, prune_floor)))
    scale, n_iter, converged, obj = np.zeros(p), 0, False, -np.inf
    for round_ in range(max_rounds):
        cols, W = W, np.flatnonzero(beta)
        if not np.array_equal(W, cols):  # the Gram of the new working set (the first round's is the start's)
            Hw = H[:, W]
            G = Hw.T @ Hw
            Hs, ys = sufficient_design(G, c[W], yy)
        rows = bucket(Hs.shape[0], per_octave=PAD_PER_OCTAVE)
        bw, sw, s2, n_iter, converged, obj, prior = run_slices(
            Hs, G, None, pad_to(ys, (rows,)), rows, n, col_norm[W], p, beta[W], s2, prior, likelihood,
            controls, estimate_noise=estimate_noise, n_iter=n_iter)
        beta = np.zeros(p)
        beta[W] = bw
        scale = np.zeros(p)
        scale[W] = sw
        r = y - Hw @ bw
        z = r @ H + sq_norm * beta
        keeps = coordinate_keeps(prior, z, sq_norm, s2, current=beta)
        admit = keeps & (beta == 0)
        drop = ~keeps & (beta != 0)
        if not (admit.any() or drop.any()):
            break
        converged = False
        if n_iter >= max_iter:
            break
        if round_ == max_rounds - 1:  # the returned weights stay EM's, on the last working set
            warnings.warn(f"working-set EM: the check on the full design still found {int(admit.sum())} column(s) "
                          f"to admit and {int(drop.sum())} weight(s) to prune after {max_rounds} rounds",
                          RuntimeWarning, stacklevel=2)
            break
        beta[drop] = 0.0
        beta[admit] = z[admit] / sq_norm[admit]
    return EMResult(beta, s2, n_iter, converged, obj, scale, floor, _host(prior))
