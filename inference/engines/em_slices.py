"""Figueiredo's EM (:mod:`sparsebayes.inference.engines.em`) run to convergence on a shrinking active set.

The engine's :func:`~sparsebayes.inference.engines.em.run` is a pure, jitted loop on arrays of fixed
shape; this module is the host runner around it, which keeps those shapes few and the cost of an
iteration proportional to the weights still nonzero (EM prunes weights to exactly zero, 002 eq. 15,
and a pruned weight stays zero). :func:`fit_em` prepares the design once (:class:`EMDesign`: padding,
``HᵀH``, the column norms, the ridge start of 002 Step 2) and :func:`run_slices` runs the loop slice by
slice; :mod:`~sparsebayes.inference.engines.em_working_set` runs the same :func:`run_slices` on a
working set's pseudo-design.

The jitted loop runs on a fixed-width slice of the basis; when the active set falls to half that
width it returns, and :func:`run_slices` gathers the surviving columns (and the hierarchy's current
estimates) into the next power-of-two width. Shapes inside jit stay fixed, each width compiles once,
and the cost of an iteration follows the number of nonzero weights. The rows and the first
slice's width are padded too (:data:`PAD_PER_OCTAVE`; zero rows with ``y = 0`` that the
likelihood skips through ``EMData.n_obs``, zero columns with ``β = 0``, which the shared
hyperparameters' M-step leaves out through ``EMData.n_weights``), so data of a nearby
size reuses the compiled loops; the padding changes no step, only the rounding of sums.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference.engines.em import DUAL_RATIO, SMALL_WIDTH, EMControls, EMData, EMModel, init, run
from sparsebayes.inference.engines.em_start import RidgeStart
from sparsebayes.models.likelihoods import require_likelihood

__all__ = ["PAD_PER_OCTAVE", "EMDesign", "EMResult", "column_norms", "fit_em", "run_slices"]

#: Rows (data points, or the rank of a factored design) and the first slice's width are padded
#: to one of this many sizes per octave (:func:`~sparsebayes.inference.engines._shapes.bucket`), so
#: data of a new size mostly reuses compiled loops; padding costs at most 25 % per iteration.
PAD_PER_OCTAVE = 4


class EMResult(NamedTuple):
    """``scale`` is ``u`` at the final ``β`` (``E[τ_i⁻¹ | β_i] = 1/u_i²``; 0 where ``β_i = 0``);
    ``prior`` the hierarchy at the fit (its estimated shared hyperparameters, if any);
    ``noise_floor`` the least σ² an estimate may take (:func:`fit_em`'s ``noise_floor_rel``)."""

    beta: np.ndarray
    noise_var: float
    n_iter: int
    converged: bool
    objective: float
    scale: np.ndarray
    noise_floor: float
    prior: NamedTuple = None


def _width(k, p):
    """The slice width for ``k`` active weights out of the padded width ``p``: ``p`` until half
    of them are pruned (and always for ``p ≤ SMALL_WIDTH``), then the next power of two."""
    if p <= SMALL_WIDTH or 2 * k > p:
        return p
    return min(p, max(SMALL_WIDTH // 2, 1 << int(np.ceil(np.log2(max(k, 1))))))


def _gather(H, gram, beta, active, width, rows):
    """Columns ``active`` of H (and of HᵀH), zero-padded to ``width`` columns (padding has β = 0)
    and ``rows`` rows. ``active`` holds distinct column indices in increasing order
    (``np.flatnonzero``), so as many as H has columns means all of them, in order."""
    k = active.size
    # every column active (the first slice, from the ridge start): slices, not fancy-index copies
    cols = slice(None) if k == H.shape[1] else active
    Hb = np.zeros((rows, width))
    Hb[:H.shape[0], :k] = H[:, cols]
    bb = np.zeros(width)
    bb[:k] = beta[cols]
    if gram is None:
        return Hb, None, bb
    G = np.zeros((width, width))
    G[:k, :k] = gram if k == H.shape[1] else gram[np.ix_(active, active)]
    return Hb, G, bb


def column_norms(H, gram):
    """``‖h_i‖`` of every column: from ``gram``'s diagonal when there is one."""
    return np.sqrt(np.diagonal(gram) if gram is not None else np.einsum("ij,ij->j", H, H))


class EMDesign:
    """What :func:`fit_em` prepares from the design alone, for ``n_obs`` data rows: the design
    (``H``, or ``H̃`` and the padded basis ``Q`` of a factored one), the padded row counts,
    ``HᵀH`` where the Gram form is used, the column norms, and the ridge start's factorization
    (made when first needed). Fits of several targets on one design (the one-vs-all classifiers of 002 Sec. 4.2)
    share one instead of recomputing ``HᵀH`` and the ridge Cholesky for each.
    """

    def __init__(self, H, n_obs, factor=None):
        self.n_obs = int(n_obs)
        self.rows = bucket(self.n_obs, per_octave=PAD_PER_OCTAVE)
        if factor is None:
            self.H, self.basis, self.design_rows = np.ascontiguousarray(H, dtype=np.float64), None, self.rows
            self._compress = None
        else:  # HᵀH = H̃ᵀH̃ and Hᵀy₀ = H̃ᵀQᵀy₀: the ridge start on H̃ is the one on H
            self.H = np.ascontiguousarray(factor.design)
            self.design_rows = bucket(self.H.shape[0], per_octave=PAD_PER_OCTAVE)
            self.basis = pad_to(np.asarray(factor.basis, dtype=np.float64), (self.rows, self.design_rows))
            self._compress = factor.basis
        n, p = self.H.shape
        self.gram = self.H.T @ self.H if p <= DUAL_RATIO * n else None
        self.col_norm = column_norms(self.H, self.gram)
        self._ridge = None

    def dense(self):
        """An :class:`EMDesign` of the dense ``H = QH̃`` of a factored one (``self`` otherwise)."""
        if self.basis is None:
            return self
        return EMDesign(np.asarray(self._compress) @ self.H, self.n_obs)

    def ridge_start(self, y0):
        """:class:`~sparsebayes.inference.engines.em_start.RidgeStart` on this design, solved for ``y0`` (n_obs,)."""
        if self._ridge is None:
            self._ridge = RidgeStart(self.H, gram=self.gram)
        return self._ridge(y0 if self._compress is None else y0 @ self._compress)


def run_slices(H, gram_full, basis, y_padded, design_rows, n_obs, col_norm, n_weights, beta, s2, prior, likelihood,
               controls, *, estimate_noise, n_iter=0):
    """EM from ``beta`` to ``controls.tol`` or ``controls.max_iter`` (counted from ``n_iter``) on the
    shrinking active set: the jitted :func:`~sparsebayes.inference.engines.em.run` on fixed-width slices
    of ``H`` (and ``gram_full``),
    each gathered from the columns still nonzero (module docstring). ``n_weights`` is the model's
    number of weights (:attr:`~sparsebayes.inference.engines.em.EMData.n_weights`), ``n_obs`` its number of data rows
    (:attr:`~sparsebayes.inference.engines.em.EMData.n_obs`).
    Returns ``(beta, scale, s2, n_iter, converged, objective, prior)``
    with ``beta`` and ``scale`` on ``H``'s columns and the hierarchy as the loop returns it."""
    n, p = H.shape
    padded_p = bucket(p, per_octave=PAD_PER_OCTAVE)
    model = EMModel(prior, likelihood)  # one model for every slice: the hierarchy's estimates travel in the state
    tol, max_iter = float(controls.tol), float(controls.max_iter)
    converged, obj = False, -np.inf
    scale = np.zeros(p)
    while True:
        active = np.flatnonzero(beta)
        k = active.size
        if k == 0:
            converged = True
            break
        width = _width(k, padded_p)
        use_gram = width <= DUAL_RATIO * n
        Hb, G, bb = _gather(H, gram_full if use_gram else None, beta, active, width, design_rows)
        if use_gram and G is None:
            G = Hb.T @ Hb
        controls = controls._replace(shrink_below=np.float64(width // 2 if width > SMALL_WIDTH else -1))
        # numpy arguments go to the jitted loop as they are (no per-array jnp.asarray dispatch)
        data = EMData(Hb, y_padded, G, basis, np.float64(n_obs), pad_to(col_norm[active], (width,)),
                      np.float64(n_weights))
        for guard in (False, True):  # a slice whose M-step broke down (a non-finite weight) again, guarded
            state, info = run(init(data, model._replace(prior=prior), bb, s2, n_iter), data, model, controls,
                              estimate_noise=estimate_noise, guard=guard)
            # one transfer of what the host reads (each array fetched is a wait on the device)
            # (not the joint rule's objective and step change, which a slice restarts from anyway)
            state, info_scale, obj = jax.device_get((state._replace(objective=None, step_change=None), info.scale,
                                                     info.objective))
            if np.all(np.isfinite(state.beta)):
                break
        prior = state.prior
        beta = np.zeros(p)
        beta[active] = state.beta[:k]
        scale = np.zeros(p)
        scale[active] = info_scale[:k]
        s2 = float(state.noise_var)
        n_iter = int(state.n_iter)
        obj = float(obj)
        if not np.all(np.isfinite(beta)):
            raise FloatingPointError("EM produced a non-finite weight; please report this data set")
        if float(state.rel_change) < tol:
            converged = True
            break
        if n_iter >= max_iter:
            break
    return beta, scale, s2, n_iter, converged, obj, prior


def fit_em(H, y, prior, likelihood, *, beta0=None, y_init=None, noise_var=None, tol=1e-3, max_iter=1000,
           prune_tol=1e-8, noise_floor_rel=1e-10, factor=None):
    """Run EM to convergence on the shrinking active set; returns :class:`EMResult`.

    Parameters
    ----------
    H : ndarray (n, p), None, or EMDesign
        Design matrix (float64); ``None`` when ``factor`` stands for it; or an :class:`EMDesign`
        made for this design and ``n`` (``factor`` is then not used).
    y : ndarray (n,)
        Targets (regression), 0/1 labels (probit, logistic) or counts.
    prior, likelihood : objects of :mod:`sparsebayes.models.priors` / ``.likelihoods``. A hierarchy
        that estimates shared hyperparameters (``LaplacePrior(gamma_prior=(a, b))``) starts from its
        values; the estimates are ``EMResult.prior``'s.
    beta0 : ndarray (p,) or None
        Starting point; ``None`` takes the paper's ridge estimate
        (:class:`~sparsebayes.inference.engines.em_start.RidgeStart`) from
        ``y_init`` (default ``y``, or a likelihood with working weights' ``init_target(y)``, e.g. the
        log counts; the probit estimator passes the ±1 labels).
    noise_var : float or None
        The likelihood's own parameter fixed (σ², a Student-t's squared scale, a negative binomial's
        dispersion); ``None`` estimates it (000 eq. 12 for σ²; the likelihood's ``update_params``),
        from its ``init_params(y)``. Ignored by a likelihood with a ``fixed_noise_var`` (probit:
        σ² = 1, 002 eq. 3) or without a parameter (``param_name = None``). ``EMResult.noise_var``
        holds it at the fit.
    tol : float
        Relative-change stopping threshold δ.
    prune_tol : float
        A weight whose contribution ``|β_i| ‖h_i‖`` is below ``prune_tol`` times the largest
        contribution, now or at the start, becomes exactly zero.
    noise_floor_rel : float
        An estimated σ² stays at least ``noise_floor_rel · mean(y²)`` (returned as
        ``noise_floor``): with as many basis functions as points the flat prior on σ² has no
        maximum (the fit can interpolate, σ² → 0), and EM stops at the floor instead.
    factor : :class:`~sparsebayes.inference.engines.lowrank.DesignFactor` or None
        ``H = QH̃`` (:func:`~sparsebayes.inference.engines.lowrank.factor_kernel_design`): every
        iteration then works on ``H̃`` (r × p) and costs ``O(r²p)``; ``H`` itself is not used.
    """
    require_likelihood(likelihood, "em")
    y = np.asarray(y, dtype=np.float64)
    weighted = not getattr(likelihood, "constant_weight", True)
    if weighted and isinstance(H, EMDesign) and H.basis is not None:
        H, factor = H.dense(), None
    elif weighted and factor is not None:  # HᵀWH has no form in H̃ alone: the dense H = QH̃
        H, factor = np.asarray(factor.basis) @ np.asarray(factor.design), None
    design = H if isinstance(H, EMDesign) else EMDesign(H, y.size, factor)
    if design.n_obs != y.size:
        raise ValueError(f"the EMDesign was made for {design.n_obs} data rows, y has {y.size}")
    H, basis, gram_full, n_obs, design_rows = design.H, design.basis, design.gram, design.n_obs, design.design_rows
    y_padded = pad_to(y, (design.rows,))
    p = H.shape[1]
    if beta0 is None:
        if y_init is None:  # a start on the scale of η (the log rate of counts), where the likelihood has one
            y_init = likelihood.init_target(y) if weighted and hasattr(likelihood, "init_target") else y
        beta0 = design.ridge_start(np.asarray(y_init, dtype=np.float64))
    beta = np.asarray(beta0, dtype=np.float64).copy()
    col_norm = design.col_norm
    prune_floor = prune_tol * float(np.max(np.abs(beta) * col_norm, initial=0.0))
    if getattr(likelihood, "fixed_noise_var", None) is not None:
        noise_var = likelihood.fixed_noise_var
    elif getattr(likelihood, "param_name", "noise_var") is None:  # no parameter of its own: a placeholder
        noise_var = 1.0
    estimate_noise = noise_var is None
    s2 = float(likelihood.init_params(y)) if estimate_noise else float(noise_var)
    if not (np.isfinite(s2) and s2 > 0):
        s2 = 1.0
    floor = noise_floor_rel * max(float(np.mean(y**2)), np.finfo(float).tiny)
    controls = EMControls(*(np.float64(c) for c in (tol, max_iter, -1, prune_tol, floor, prune_floor)))
    beta, scale, s2, n_iter, converged, obj, prior = run_slices(
        H, gram_full, basis, y_padded, design_rows, n_obs, col_norm, p, beta, s2, prior, likelihood, controls,
        estimate_noise=estimate_noise)
    prior = jax.tree.map(lambda x: float(x) if np.ndim(x) == 0 else np.asarray(x), prior)  # host values
    return EMResult(beta, s2, n_iter, converged, obj, scale, floor, prior)
