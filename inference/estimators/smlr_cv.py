"""SMLRCV: SMLR/RMLR with λ (and the Gaussian kernel's width) chosen by stratified K-fold CV.

Each fold runs the λ grid from the largest value down, warm-starting every fit at the previous
λ's estimate and the first λ of a fold at the previous fold's (the paper's footnote 7: weights of
basis functions shared with the previous fit start at its estimate, new ones at zero).
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold
from tqdm.auto import tqdm

from sparsebayes.inference.estimators._base import atomic_fit, set_init_params
from sparsebayes.inference.estimators import smlr_cv_path  # a module, not its names (a worker unpickles its task)
from sparsebayes.inference.parallel import parallel_map
from sparsebayes.inference._validation import check_count, check_flags
from sparsebayes.inference.estimators.map_fit import (MapOptions, fit_coef, fit_map_model, map_basis,
                                                      map_feature_map, visitation_seed)
from sparsebayes.inference.estimators.map_fitted import MapClassifierMethods
from sparsebayes.inference.estimators.smlr_scale import lambda_max
from sparsebayes.inference.estimators.sparse_estimators import _clear_fitted
from sparsebayes.models.features import GaussianKernelFeatures
from sparsebayes.models.priors.penalty import penalty_prior


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
                      f"folds (n_splits_), so that every class is in every training part; pass cv={k} or fewer "
                      "to fit the folds you asked for", UserWarning, stacklevel=3)
    return min(cv, k)


class SMLRCV(ClassifierMixin, MapClassifierMethods, BaseEstimator):
    """SMLR/RMLR with λ (and optionally the kernel width) chosen by stratified K-fold CV.

    For every width, each fold runs the λ grid from the largest value down, each fit
    warm-started at the previous λ's estimate, and the first λ of a fold warm-started at
    the previous fold's estimate (basis functions are matched by identity: a kernel is its
    training point).  The criterion is the number of misclassified held-out points; ties are
    broken by ``tie_break``.  The final model is refitted on all data.

    Parameters
    ----------
    penalty, solver, features, standardize, tol, max_iter, random_state : as :class:`SMLRClassifier`
        (``standardize`` standardizes each training fold by its own mean and SD, and the refit by all of X's).
    lams : array-like or None, default=None
        λ grid; ``None``: ``n_lams`` values log-spaced over ``[λ_max/10⁴, λ_max]``, where
        ``λ_max`` zeroes every SMLR weight (computed on the full data's design: with ``standardize``,
        of the standardized inputs, so the grid does not depend on offsets or units; without, with the
        bias column at ``bias_scale_``, so the grid follows the units of X and leaves the bias free).
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
    n_jobs : int or None, default=None
        Parallel tasks for the cross-validation (joblib's convention: ``None`` follows the active
        ``joblib.parallel_config`` / ``parallel_backend``, serial outside one; ``-1`` every core;
        ``joblib.parallel_backend("dask")`` spreads them over a ``dask.distributed`` cluster).
        Each fold's first λ is fitted in this process, a chain over the folds for the warm
        starts; the rest of every fold's path (and width) is one task. The choice and the
        refit do not depend on ``n_jobs``.

    Attributes
    ----------
    lam_, kernel_width_ : the chosen values
    prior_ : the hierarchy at the chosen λ (``LaplacePrior.from_lam(lam_)`` or ``GaussianPrior(lam_)``):
        ``SparseClassifier(method="map", prior=prior_, features=..., kernel_width=kernel_width_)`` (with
        ``solver``, ``tol``, ``max_iter`` and ``random_state`` as options) refits the final model
    lams_ : ndarray, the grid (descending)
    cv_errors_ : ndarray (n_widths, n_lams), held-out misclassifications summed over folds
    cv_log_loss_ : ndarray (n_widths, n_lams)
    n_splits_ : int, the folds used: ``cv``, or fewer (with a warning) when a class has fewer members
    plus every fitted attribute of :class:`SMLRClassifier`.

    A fit sets or deletes every fitted attribute; a fit that fails (bad input, or a warning
    turned into an error) leaves the estimator unfitted, the previous model lost, as in
    scikit-learn.
    """

    def __init__(self, *, penalty="l1", lams=None, n_lams=12, cv=5, solver="auto", features="linear",
                 kernel_width="scale", kernel_widths=None, standardize=True, tie_break="sparsest", tol=1e-6,
                 max_iter=2000, random_state=0, progress_bar=False, n_jobs=None):
        set_init_params(self, locals())

    def _feature_map(self, kernel_width):
        """The unfitted map of ``features`` at ``kernel_width`` (:func:`~.map_fit.map_feature_map`)."""
        return map_feature_map(self.features, kernel_width, self.standardize)

    def _fit_penalized_design(self, X):
        """Fit ``feature_map_`` on ``X``, fix ``bias_scale_`` on its design, and return the basis of the
        penalized problem (:func:`~.map_fit.map_basis`)."""
        basis = map_basis(X, self.feature_map_)
        self.bias_scale_ = basis.bias_scale
        return basis

    def _validate(self, X, y):
        check_flags(self)
        MapOptions(standardize=self.standardize, tol=self.tol, max_iter=self.max_iter).check(self.penalty)
        return self._validate_map_data(X, y)

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
        penalty_prior(self.penalty, 1.0)
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

    def _first_fits(self, X, y_enc, m, folds, lams, seed):
        """Every fold's fit at the first λ of ``lams``, warm-started as the class docstring says
        (a chain: each fold starts where the previous folds left the basis functions it shares).
        Returns the held-out error count and log-loss sum at that λ, and one
        :func:`~sparsebayes.inference.estimators.smlr_cv_path.fold_path_rest` task per fold that runs the
        rest of the fold's path from its fit."""
        err, loss, tasks = 0, 0.0, []
        memory = None  # first-λ estimate per basis id, carried across folds
        # the folds' designs padded to the rows of the full data's: the folds and the refit share one program
        fit_kw = dict(penalty=self.penalty, solver=self.solver, tol=self.tol, max_iter=self.max_iter, seed=seed,
                      n_rows=X.shape[0])
        for train, test in folds:
            Phi_tr = self._penalized_design(X[train], fit=True)
            Phi_te = self._penalized_design(X[test], fit=False)
            ids = self._basis_ids(train, Phi_tr.shape[1])
            if memory is None:
                n_ids = X.shape[0] + 1 if isinstance(self.feature_map_, GaussianKernelFeatures) else Phi_tr.shape[1]
                memory = np.zeros((n_ids, m - 1))
            coef, _, _ = fit_coef(Phi_tr, y_enc[train], m, lam=lams[0], coef0=memory[ids], cache={}, **fit_kw)
            memory[ids] = coef
            fold_err, fold_loss = smlr_cv_path.held_out(Phi_te, y_enc[test], coef)
            err += fold_err
            loss -= fold_loss
            tasks.append((Phi_tr, y_enc[train], Phi_te, y_enc[test], m, coef, lams[1:], fit_kw))
        return err, loss, tasks

    @atomic_fit
    def fit(self, X, y):
        """Cross-validate λ (and the width), then refit on all data."""
        self._check_params()
        _clear_fitted(self)
        X, y_enc = self._validate(X, y)
        m = len(self.classes_)
        k = self.n_splits_ = n_folds(self.cv, np.bincount(y_enc, minlength=m), self.classes_)
        widths = [self.kernel_width] if self.kernel_widths is None else list(self.kernel_widths)
        folds = list(StratifiedKFold(k, shuffle=True, random_state=self.random_state).split(X, y_enc))
        seed = visitation_seed(self.random_state)
        errors, losses, grids = [], [], []
        n_grid = self.n_lams if self.lams is None else len(self.lams)
        bar = tqdm(total=len(widths) * len(folds) * n_grid + 1, desc="SMLRCV", disable=not self.progress_bar)
        tasks = []
        for width in widths:  # the first λ of every fold, a chain over the folds; then the rest of each path
            self.feature_map_ = self._feature_map(width)
            lams = self._grid(self._fit_penalized_design(X).design, y_enc, m)
            grids.append(lams)
            err, loss, width_tasks = self._first_fits(X, y_enc, m, folds, lams, seed)
            errors.append(np.r_[err, np.zeros(len(lams) - 1)])
            losses.append(np.r_[loss, np.zeros(len(lams) - 1)])
            tasks += width_tasks
            bar.update(len(folds))
        rest = iter(parallel_map(smlr_cv_path.fold_path_rest, tasks, n_jobs=self.n_jobs))
        for err, loss in zip(errors, losses):
            for _ in folds:  # summed in fold order, as one fold after another would
                fold_err, fold_loss = next(rest)
                err[1:] += fold_err
                loss[1:] -= fold_loss
                bar.update(len(fold_err))
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
        basis = self._fit_penalized_design(X)
        options = MapOptions(solver=self.solver, tol=self.tol, max_iter=self.max_iter, random_state=seed)
        fit = fit_map_model(basis, y_enc, self.classes_, self.penalty, self.lam_, options, owner=self, change=lambda top: (
            "no λ on the grid beat the all-zero fit in cross-validation (X may not predict y at this sample "
            f"size); give lams reaching further below λ_max={top:.3g}, or check kernel_width against the "
            "scale of X"))
        bar.update()
        bar.close()
        self._name_map_fit(fit)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
