"""Baselines that Figueiredo's tables compare against, run here on the same splits.

Classification: :func:`svm_classifier` (SVC, RBF kernel of the same width, C by CV),
:class:`PlugInGaussianClassifier` (class means and covariances plugged into the Bayes rule),
:func:`logistic_classifier`. The RVM classifier is ours
(:class:`sparsebayes.inference.RVMClassifier`).

Regression: :func:`ols_regressor`, :func:`lasso_cv_regressor` (``LassoCV``),
:class:`LassoGCV` (Tibshirani 1996, Sec. 4: λ by generalized cross-validation with the
effective number of parameters of the ridge-like approximation), :class:`SubsetSelectionCV`
(exhaustive search over all ``2^p`` subsets, subset size chosen by K-fold CV),
:func:`svm_regressor` (SVR, C and ε by CV) and :func:`rvm_regressor` (our type-II RVM).

Kernel conventions follow Figueiredo: ``K(x, x') = exp(-‖x − x'‖² / (2h²))``, i.e. an
scikit-learn RBF kernel with ``gamma = 1 / (2h²)`` (:func:`rbf_gamma`).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import scipy.linalg
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LassoCV, LinearRegression, LogisticRegression, lasso_path
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.svm import SVC, SVR
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from sparsebayes.inference import RVMRegressor
from sparsebayes.models.features import GaussianKernelFeatures

#: C grid searched by the SVMs (log-spaced, as is customary).
SVM_C_GRID = tuple(np.logspace(-2, 3, 11))


def rbf_gamma(width):
    """scikit-learn's RBF ``gamma`` for Figueiredo's width ``h``: ``1 / (2h²)``."""
    return 1.0 / (2.0 * float(width) ** 2)


# ----------------------------------------------------------------------------- classifiers


def svm_classifier(X, y, *, width, C_grid=SVM_C_GRID, cv=5, seed=0):
    """SVC with the RBF kernel of width ``h`` and C chosen by stratified ``cv``-fold CV.

    Returns the refitted best ``SVC``; its number of support vectors is ``n_support_.sum()``.
    Multiclass problems are one-vs-one inside scikit-learn (its only choice for SVC).
    """
    folds = StratifiedKFold(min(cv, int(np.min(np.bincount(np.unique(y, return_inverse=True)[1])))),
                            shuffle=True, random_state=seed)
    search = GridSearchCV(SVC(kernel="rbf", gamma=rbf_gamma(width)), {"C": list(C_grid)}, cv=folds)
    return search.fit(X, y).best_estimator_


def logistic_classifier(X, y):
    """Maximum-likelihood (unpenalized) linear logistic regression, as in Williams & Barber.

    On separable training data the likelihood has no maximum; lbfgs then stops at
    ``max_iter`` (the warning is silenced: the classifier is still the usual one).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=np.inf, max_iter=5000).fit(X, y)


class PlugInGaussianClassifier(ClassifierMixin, BaseEstimator):
    """The plug-in Gaussian (Bayes) classifier of 002 Sec. 4.1 / 000 Sec. 5.2.1.

    Each class ``c`` gets its sample mean ``μ̂_c``, its unbiased sample covariance ``Σ̂_c``
    (or, with ``shared_covariance=True``, the pooled within-class covariance: a linear rule)
    and its frequency ``π̂_c``; a point goes to ``argmax_c log π̂_c + log N(x | μ̂_c, Σ̂_c)``
    (quadratic discriminant analysis). Covariances are factored by Cholesky; a class with
    fewer than ``d + 1`` points has a singular ``Σ̂_c`` and raises ``ValueError``.
    """

    def __init__(self, *, shared_covariance=False):
        self.shared_covariance = shared_covariance

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = unique_labels(y)
        if self.classes_.size < 2:
            raise ValueError("the plug-in classifier needs at least two classes")
        idx = np.searchsorted(self.classes_, y)
        d = X.shape[1]
        self.means_ = np.array([X[idx == c].mean(axis=0) for c in range(self.classes_.size)])
        counts = np.bincount(idx)
        self.priors_ = counts / counts.sum()
        resid = X - self.means_[idx]
        if self.shared_covariance:
            pooled = resid.T @ resid / (X.shape[0] - self.classes_.size)
            covs = [pooled] * self.classes_.size
        else:
            covs = [np.cov(resid[idx == c].T, ddof=1).reshape(d, d) for c in range(self.classes_.size)]
        self.covariances_ = np.array(covs)
        try:
            self._chol = [scipy.linalg.cholesky(S, lower=True) for S in covs]
        except np.linalg.LinAlgError as err:
            raise ValueError("a class covariance is singular (fewer points than dimensions + 1)") from err
        return self

    def _joint_log_likelihood(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        out = np.empty((X.shape[0], self.classes_.size))
        for c, L in enumerate(self._chol):
            z = scipy.linalg.solve_triangular(L, (X - self.means_[c]).T, lower=True)
            out[:, c] = (np.log(self.priors_[c]) - np.sum(np.log(np.diag(L)))
                         - 0.5 * np.sum(z**2, axis=0) - 0.5 * X.shape[1] * np.log(2 * np.pi))
        return out

    def predict_proba(self, X):
        jll = self._joint_log_likelihood(X)
        return np.exp(jll - logsumexp(jll, axis=1, keepdims=True))

    def predict(self, X):
        return self.classes_[np.argmax(self._joint_log_likelihood(X), axis=1)]


# ----------------------------------------------------------------------------- regressors


def ols_regressor(X, y):
    """Ordinary least squares with an intercept."""
    return LinearRegression().fit(X, y)


def lasso_alpha_grid(X, y, *, n_alphas=100, eps=1e-3):
    """scikit-learn's default λ path: ``n_alphas`` log-spaced from ``max|Xcᵀyc|/n`` down by ``eps``."""
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    alpha_max = np.max(np.abs(Xc.T @ yc)) / X.shape[0]
    return np.geomspace(alpha_max, eps * alpha_max, n_alphas)


def lasso_cv_regressor(X, y, *, cv=5, seed=0):
    """Lasso with λ chosen by ``cv``-fold CV on the path :func:`lasso_alpha_grid` (``LassoCV``).

    The inputs are not standardized (Tibshirani 1996 assumes standardized x): the designs it
    serves (000 Table 1, 004 Simulations 1–3) have unit population variances."""
    return LassoCV(cv=KFold(cv, shuffle=True, random_state=seed), alphas=lasso_alpha_grid(X, y)).fit(X, y)


def lasso_effective_df(X, coef, alpha):
    """Effective number of parameters of the lasso fit, Tibshirani (1996) Sec. 4.

    Writing the penalty as ``Σ β_j² / |β_j|``, the lasso solution of scikit-learn's
    objective ``‖y − Xβ‖² / (2n) + α‖β‖₁`` satisfies the ridge-like equation
    ``(X_AᵀX_A + nα W_A⁻¹) β_A = X_Aᵀ y`` on its active set ``A``, with
    ``W = diag(|β̂_j|)`` (the generalized inverse ``W⁻`` of the paper drops the zero
    weights, whose columns leave the model). Hence

    ``p(α) = tr{X_A (X_AᵀX_A + nα W_A⁻¹)⁻¹ X_Aᵀ} = tr{(X_AᵀX_A + nα W_A⁻¹)⁻¹ X_AᵀX_A}``,

    computed by Cholesky. ``X`` should be the centred design (the intercept is not counted).
    """
    active = np.flatnonzero(coef)
    if active.size == 0:
        return 0.0
    XA = X[:, active]
    G = XA.T @ XA
    M = G + X.shape[0] * alpha * np.diag(1.0 / np.abs(coef[active]))
    return float(np.trace(scipy.linalg.cho_solve(scipy.linalg.cho_factor(M, lower=True), G)))


def gcv_score(rss, n, df):
    """Generalized cross-validation ``(RSS/n) / (1 − p/n)²`` (Tibshirani 1996, eq. after (4.2))."""
    return (rss / n) / (1.0 - df / n) ** 2


class LassoGCV(RegressorMixin, BaseEstimator):
    """Lasso with λ chosen by generalized cross-validation (Tibshirani 1996, Sec. 4).

    On a path of ``n_alphas`` values of λ (scikit-learn's ``alpha``), centre ``X`` and ``y``,
    compute the lasso fit, its effective number of parameters :func:`lasso_effective_df`
    and ``GCV(α) = (RSS(α)/n) / (1 − p(α)/n)²``; keep the minimizer. Values with
    ``p(α) ≥ n`` are skipped.
    """

    def __init__(self, *, n_alphas=100, eps=1e-3):
        self.n_alphas = n_alphas
        self.eps = eps

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        x_mean, y_mean = X.mean(axis=0), y.mean()
        Xc, yc = X - x_mean, y - y_mean
        n = X.shape[0]
        alphas, coefs, _ = lasso_path(Xc, yc, alphas=lasso_alpha_grid(X, y, n_alphas=self.n_alphas, eps=self.eps))
        dfs = np.array([lasso_effective_df(Xc, coefs[:, i], a) for i, a in enumerate(alphas)])
        rss = np.sum((yc[:, None] - Xc @ coefs) ** 2, axis=0)
        scores = np.where(dfs < n - 1e-9, gcv_score(rss, n, np.minimum(dfs, n - 1e-9)), np.inf)
        best = int(np.argmin(scores))
        self.alphas_, self.gcv_scores_, self.dfs_ = alphas, scores, dfs
        self.alpha_ = float(alphas[best])
        self.coef_ = coefs[:, best]
        self.intercept_ = float(y_mean - x_mean @ self.coef_)
        return self

    def predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False) @ self.coef_ + self.intercept_


def best_subsets(X, y):
    """For every size ``k = 0..p``, the subset of columns with the least RSS (all ``2^p``).

    Fits use an intercept (centred data). Returns a list of column-index tuples, one per
    ``k``. Exhaustive: meant for ``p`` up to about 12.
    """
    p = X.shape[1]
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    best = [((), float(yc @ yc))]
    for k in range(1, p + 1):
        cand = []
        for cols in itertools.combinations(range(p), k):
            XA = Xc[:, cols]
            coef, *_ = np.linalg.lstsq(XA, yc, rcond=None)
            r = yc - XA @ coef
            cand.append((cols, float(r @ r)))
        best.append(min(cand, key=lambda t: t[1]))
    return [b[0] for b in best]


def _ols_on(X, y, cols):
    coef = np.zeros(X.shape[1])
    x_mean, y_mean = X.mean(axis=0), y.mean()
    if cols:
        c, *_ = np.linalg.lstsq(X[:, cols] - x_mean[list(cols)], y - y_mean, rcond=None)
        coef[list(cols)] = c
    return coef, float(y_mean - x_mean @ coef)


class SubsetSelectionCV(RegressorMixin, BaseEstimator):
    """Best-subset regression with the subset size chosen by K-fold cross-validation.

    As in Tibshirani (1996, Sec. 7) and ESL Sec. 7.10: in each fold, the best subset of each
    size ``k = 0..p`` is found on the fold's training part by exhaustive search over all
    ``2^p`` subsets (:func:`best_subsets`) and scored on the held-out part; the size with
    the least mean CV error is kept, and the best subset of that size on all the data is
    refitted by least squares (with intercept).
    """

    def __init__(self, *, cv=5, seed=0):
        self.cv = cv
        self.seed = seed

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        p = X.shape[1]
        cv_err = np.zeros(p + 1)
        for tr, te in KFold(self.cv, shuffle=True, random_state=self.seed).split(X):
            for k, cols in enumerate(best_subsets(X[tr], y[tr])):
                coef, b0 = _ols_on(X[tr], y[tr], cols)
                cv_err[k] += np.sum((y[te] - X[te] @ coef - b0) ** 2)
        self.cv_errors_ = cv_err / X.shape[0]
        self.size_ = int(np.argmin(self.cv_errors_))
        self.support_ = np.array(best_subsets(X, y)[self.size_], dtype=int)
        self.coef_, self.intercept_ = _ols_on(X, y, tuple(self.support_))
        return self

    def predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False) @ self.coef_ + self.intercept_


def svm_regressor(X, y, *, width, C_grid=(0.1, 1.0, 10.0, 100.0), epsilons=(0.02, 0.1, 0.3), cv=5, seed=0):
    """SVR with the RBF kernel of width ``h``; C and ε (both relative to std(y)) by ``cv``-fold CV.

    ``width`` may be a sequence of widths: the CV then chooses h too, jointly with C and ε
    (the fitted SVR's ``gamma`` is ``1/(2h²)`` of the chosen one).
    """
    scale = float(np.std(y)) or 1.0
    grid = {"C": [c * scale for c in C_grid], "epsilon": [e * scale for e in epsilons],
            "gamma": [rbf_gamma(w) for w in np.atleast_1d(width)]}
    search = GridSearchCV(SVR(kernel="rbf"), grid,
                          cv=KFold(cv, shuffle=True, random_state=seed), scoring="neg_mean_squared_error")
    return search.fit(X, y).best_estimator_


def rvm_regressor(X, y, *, width):
    """Our type-II RVM (Tipping & Faul's sequential algorithm) on the Gaussian kernel design.

    :class:`~sparsebayes.inference.RVMRegressor` with kernels of width ``h`` centred on the
    training points and an unpenalized intercept; ``n_active_`` is its kernel count.
    """
    return RVMRegressor(features=GaussianKernelFeatures(width=width, bias=False)).fit(X, y)
