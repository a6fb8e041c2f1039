"""SMLRCV: SMLR/RMLR with λ (and the Gaussian kernel's width) chosen by stratified K-fold CV.

Each fold runs the λ grid from the largest value down, warm-starting every fit at the previous
λ's estimate and the first λ of a fold at the previous fold's (the paper's footnote 7: weights of
basis functions shared with the previous fit start at its estimate, new ones at zero).
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold
from tqdm.auto import tqdm

from sparsebayes.inference._base import atomic_fit
from sparsebayes.inference._validation import check_count
from sparsebayes.inference.smlr import (
    _MultinomialLogisticBase,
    fit_coef,
    log_softmax,
    make_prior,
    reference_logits,
    visitation_seed,
)
from sparsebayes.inference.smlr_scale import lambda_max
from sparsebayes.models.features import GaussianKernelFeatures


def n_folds(cv, counts, classes):
    """The number of folds: ``cv``, or the size of the smallest class where that is smaller (each
    fold then holds out one of its members, and every class stays in every training part),
    with a warning; ``ValueError`` for a class of one sample, which some training part must lack."""
    k = int(counts.min())
    label = np.asarray(classes[counts.argmin()]).item()
    if k < 2:
        raise ValueError(f"class {label!r} has {k} sample: cross-validation needs at least 2 of each class, "
                         "or the class is absent from some training folds")
    if k < cv:
        warnings.warn(f"class {label!r} has {k} samples, fewer than cv={cv} folds: cross-validating with {k} "
                      "folds, so that every class is in every training part", UserWarning, stacklevel=3)
    return min(cv, k)


class SMLRCV(_MultinomialLogisticBase):
    """SMLR/RMLR with λ (and optionally the kernel width) chosen by stratified K-fold CV.

    For every width, each fold runs the λ grid from the largest value down, each fit
    warm-started at the previous λ's estimate, and the first λ of a fold warm-started at
    the previous fold's estimate (basis functions are matched by identity: a kernel is its
    training point).  The criterion is the number of misclassified held-out points; ties are
    broken by ``tie_break``.  The final model is refitted on all data.

    Parameters
    ----------
    penalty, solver, features, tol, max_iter, random_state : as :class:`SMLRClassifier`.
    lams : array-like or None, default=None
        λ grid; ``None``: ``n_lams`` values log-spaced over ``[λ_max/10⁴, λ_max]``, where
        ``λ_max`` zeroes every SMLR weight (computed on the full data, with the bias column at
        ``bias_scale_``, so the grid follows the units of X and leaves the bias free).
    n_lams : int, default=12
    cv : int, default=5
        Folds (stratified, shuffled with ``random_state``); fewer, with a warning, when a class
        has fewer members (:func:`n_folds`), so that every class is in every training part.
    kernel_width : float or "scale", default="scale"
        ``h`` for ``features="kernel"``; ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)`` (scikit-learn's ``SVC(gamma="scale")`` on centred columns);
        ``feature_map_.width_`` holds the one in use.
    kernel_widths : array-like or None, default=None
        Widths to choose from by CV (``features="kernel"`` only); ``None`` keeps ``kernel_width``.
    tie_break : {"sparsest", "log_loss"}, default="sparsest"
        Among the (width, λ) pairs with the fewest held-out errors: ``"sparsest"`` takes the
        largest λ (then the lowest log-loss), the parsimonious choice for a sparse model;
        ``"log_loss"`` takes the lowest held-out log-loss. Held-out error counts on small data
        tie often, and the log-loss then favours the least penalized fit, which keeps every
        kernel.

    Attributes
    ----------
    lam_, kernel_width_ : the chosen values
    lams_ : ndarray, the grid (descending)
    cv_errors_ : ndarray (n_widths, n_lams), held-out misclassifications summed over folds
    cv_log_loss_ : ndarray (n_widths, n_lams)
    plus every fitted attribute of :class:`SMLRClassifier`.

    A fit sets or deletes every fitted attribute; a fit that fails (bad input, or a warning
    turned into an error) leaves the estimator unfitted, the previous model lost, as in
    scikit-learn.
    """

    def __init__(self, *, penalty="l1", lams=None, n_lams=12, cv=5, solver="auto", features="linear",
                 kernel_width="scale", kernel_widths=None, tie_break="sparsest", tol=1e-6, max_iter=2000,
                 random_state=0, progress_bar=False):
        self.penalty = penalty
        self.lams = lams
        self.n_lams = n_lams
        self.cv = cv
        self.solver = solver
        self.features = features
        self.kernel_width = kernel_width
        self.kernel_widths = kernel_widths
        self.tie_break = tie_break
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.progress_bar = progress_bar

    def _basis_ids(self, train_idx, n_basis):
        """Identity of each basis column: kernels are their training points, bias is id 0."""
        if isinstance(self.feature_map_, GaussianKernelFeatures):
            return np.concatenate([[0], 1 + train_idx]) if self.feature_map_.bias else train_idx
        return np.arange(n_basis)

    def _grid(self, Phi, y_enc, m):
        """The λ grid, descending: ``lams``, or ``n_lams`` values down from λ_max of the penalized design."""
        if self.lams is not None:
            lams = np.sort(np.asarray(self.lams, dtype=np.float64))[::-1]
            if lams.size == 0 or not np.all(np.isfinite(lams) & (lams > 0)):
                raise ValueError("lams must be a non-empty list of positive finite numbers")
            return lams
        return lambda_max(Phi, y_enc, m) * np.logspace(0, -4, self.n_lams)

    def _check_params(self):
        """``ValueError`` for a parameter SMLRCV cannot use (before any data are looked at)."""
        if self.penalty is None:
            raise ValueError("SMLRCV chooses λ: penalty must be 'l1' or 'l2'")
        make_prior(self.penalty, 1.0)
        check_count("cv", self.cv, 2)
        if self.lams is None:
            check_count("n_lams", self.n_lams, 1)
        for name in ("lams", "kernel_widths"):
            grid = getattr(self, name)
            if grid is not None and (np.ndim(grid) != 1 or np.size(grid) == 0):
                raise ValueError(f"{name} must be None or a non-empty list of numbers, got {grid!r}")
        if self.kernel_widths is not None and not (isinstance(self.features, str) and self.features == "kernel"):
            raise ValueError(f"kernel_widths apply to features='kernel' only, got features={self.features!r}")
        if self.tie_break not in ("sparsest", "log_loss"):
            raise ValueError(f"tie_break must be 'sparsest' or 'log_loss', got {self.tie_break!r}")

    def _fold_path(self, X, y_enc, m, folds, lams, seed, bar):
        """Held-out error counts and log-loss sums over ``folds`` for every λ of ``lams``, each
        fold's path warm-started as the class docstring says."""
        err, loss = np.zeros(len(lams)), np.zeros(len(lams))
        memory = None  # first-λ estimate per basis id, carried across folds
        for train, test in folds:
            Phi_tr = self._penalized_design(X[train], fit=True)
            Phi_te = self._penalized_design(X[test], fit=False)
            ids = self._basis_ids(train, Phi_tr.shape[1])
            if memory is None:
                n_ids = X.shape[0] + 1 if isinstance(self.feature_map_, GaussianKernelFeatures) else Phi_tr.shape[1]
                memory = np.zeros((n_ids, m - 1))
            coef = memory[ids]
            cache = {}
            for i, lam in enumerate(lams):
                coef, _, _ = fit_coef(Phi_tr, y_enc[train], m, penalty=self.penalty, lam=lam,
                                      solver=self.solver, tol=self.tol, max_iter=self.max_iter,
                                      seed=seed, coef0=coef, cache=cache)
                if i == 0:
                    memory[ids] = coef
                log_p = log_softmax(reference_logits(Phi_te, coef))
                err[i] += np.sum(log_p.argmax(1) != y_enc[test])
                loss[i] -= np.sum(log_p[np.arange(len(test)), y_enc[test]])
                bar.update()
        return err, loss

    @atomic_fit
    def fit(self, X, y):
        """Cross-validate λ (and the width), then refit on all data."""
        self._check_params()
        self._clear_fitted()
        X, y_enc = self._validate(X, y)
        m = len(self.classes_)
        k = n_folds(self.cv, np.bincount(y_enc, minlength=m), self.classes_)
        widths = [self.kernel_width] if self.kernel_widths is None else list(self.kernel_widths)
        folds = list(StratifiedKFold(k, shuffle=True, random_state=self.random_state).split(X, y_enc))
        seed = visitation_seed(self.random_state)
        errors, losses, grids = [], [], []
        n_grid = self.n_lams if self.lams is None else len(self.lams)
        bar = tqdm(total=len(widths) * len(folds) * n_grid + 1, desc="SMLRCV", disable=not self.progress_bar)
        for width in widths:
            self.feature_map_ = self._feature_map(width)
            lams = self._grid(self._fit_penalized_design(X), y_enc, m)
            grids.append(lams)
            err, loss = self._fold_path(X, y_enc, m, folds, lams, seed, bar)
            errors.append(err)
            losses.append(loss)
        self.cv_errors_, self.cv_log_loss_ = np.array(errors), np.array(losses) / X.shape[0]
        self.lams_ = grids[0] if len(grids) == 1 else np.array(grids)
        keys = (self.cv_log_loss_.ravel(), self.cv_errors_.ravel())
        if self.tie_break == "sparsest":
            keys = (keys[0], -np.array(grids).ravel(), keys[1])
        order = np.lexsort(keys)
        w_best, l_best = np.unravel_index(order[0], self.cv_errors_.shape)
        self.kernel_width_ = widths[w_best]
        self.lam_ = float(grids[w_best][l_best])
        self.feature_map_ = self._feature_map(self.kernel_width_)
        Phi = self._fit_penalized_design(X)
        W, info, solver = fit_coef(Phi, y_enc, m, penalty=self.penalty, lam=self.lam_, solver=self.solver,
                                   tol=self.tol, max_iter=self.max_iter, seed=seed)
        bar.update()
        bar.close()
        self._set_fit(W, info, solver)
        self._warn_if_constant(Phi, y_enc, lambda top: (
            "no λ on the grid beat the all-zero fit in cross-validation (X may not predict y at this sample "
            f"size); give lams reaching further below λ_max={top:.3g}, or check kernel_width against the "
            "scale of X"))
        return self
