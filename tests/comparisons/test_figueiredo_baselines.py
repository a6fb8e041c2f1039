"""Baselines written here, each against an independent computation."""
import itertools

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.linear_model import Lasso
from sklearn.model_selection import KFold

from sparsebayes.comparisons import baselines as bl
from sparsebayes.comparisons.synthetic import linear_regression_data, two_gaussians


def _design(seed=0, n=40, p=6):
    beta = np.array([2.0, -1.0, 0, 0, 1.5, 0][:p])
    return linear_regression_data(beta, n, sigma=1.0, seed=seed)


def test_lasso_ridge_approximation_reproduces_lasso_and_df_matches_direct_trace():
    X, y = _design()
    Xc, yc = X - X.mean(0), y - y.mean()
    n = X.shape[0]
    alpha = 0.1
    coef = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(Xc, yc).coef_
    A = np.flatnonzero(coef)
    assert 0 < A.size < X.shape[1]
    # The ridge-like equation of Tibshirani (1996) Sec. 4 holds at the lasso solution (checks the nα scaling).
    XA = Xc[:, A]
    M = XA.T @ XA + n * alpha * np.diag(1 / np.abs(coef[A]))
    np.testing.assert_allclose(np.linalg.solve(M, XA.T @ yc), coef[A], rtol=1e-6)
    # Effective parameters: the trace of the hat matrix, formed explicitly.
    hat = XA @ np.linalg.inv(M) @ XA.T
    assert bl.lasso_effective_df(Xc, coef, alpha) == pytest.approx(np.trace(hat), rel=1e-10)
    # No penalty: the hat matrix of OLS, whose trace is the number of columns.
    ols = np.linalg.lstsq(Xc, yc, rcond=None)[0]
    assert bl.lasso_effective_df(Xc, ols, 0.0) == pytest.approx(X.shape[1], rel=1e-10)


def test_lasso_gcv_picks_the_minimum_of_the_directly_computed_gcv_curve():
    X, y = _design(seed=3)
    model = bl.LassoGCV(n_alphas=30).fit(X, y)
    Xc, yc = X - X.mean(0), y - y.mean()
    n = X.shape[0]
    direct = []
    for alpha in model.alphas_:
        coef = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(Xc, yc).coef_
        A = np.flatnonzero(coef)
        XA = Xc[:, A]
        df = np.trace(XA @ np.linalg.inv(XA.T @ XA + n * alpha * np.diag(1 / np.abs(coef[A]))) @ XA.T) if A.size else 0.0
        rss = np.sum((yc - Xc @ coef) ** 2)
        direct.append(rss / n / (1 - df / n) ** 2)
    np.testing.assert_allclose(model.gcv_scores_, direct, rtol=1e-3)
    assert model.alpha_ == model.alphas_[int(np.argmin(direct))]
    np.testing.assert_allclose(model.predict(X), X @ model.coef_ + model.intercept_)


def _rss(X, y, cols):
    Xc, yc = X - X.mean(0), y - y.mean()
    if not cols:
        return float(yc @ yc)
    r = yc - Xc[:, cols] @ np.linalg.lstsq(Xc[:, cols], yc, rcond=None)[0]
    return float(r @ r)


def test_best_subsets_match_brute_force():
    X, y = _design(seed=1, n=15, p=5)
    best = bl.best_subsets(X, y)
    for k in range(6):
        brute = min(itertools.combinations(range(5), k), key=lambda c: _rss(X, y, list(c)))
        assert tuple(best[k]) == tuple(brute)


def test_subset_selection_cv_matches_brute_force_cross_validation():
    X, y = _design(seed=2, n=20, p=4)
    model = bl.SubsetSelectionCV(cv=4, seed=7).fit(X, y)
    cv_err = np.zeros(5)
    for tr, te in KFold(4, shuffle=True, random_state=7).split(X):
        for k in range(5):
            cols = list(min(itertools.combinations(range(4), k), key=lambda c: _rss(X[tr], y[tr], list(c))))
            xm, ym = X[tr].mean(0), y[tr].mean()
            coef = np.zeros(4)
            if cols:
                coef[cols] = np.linalg.lstsq(X[tr][:, cols] - xm[cols], y[tr] - ym, rcond=None)[0]
            cv_err[k] += np.sum((y[te] - (X[te] - xm) @ coef - ym) ** 2)
    np.testing.assert_allclose(model.cv_errors_, cv_err / 20, rtol=1e-10)
    k = int(np.argmin(cv_err))
    cols = list(min(itertools.combinations(range(4), k), key=lambda c: _rss(X, y, list(c))))
    assert sorted(model.support_.tolist()) == sorted(cols)
    ref = np.linalg.lstsq(np.column_stack([np.ones(20), X[:, cols]]), y, rcond=None)[0]
    np.testing.assert_allclose(model.coef_[cols], ref[1:], rtol=1e-8)
    assert model.intercept_ == pytest.approx(ref[0])


@pytest.mark.parametrize("shared", [False, True])
def test_plug_in_matches_scipy_bayes_rule_and_sklearn_discriminant_analysis(shared):
    X, y = two_gaussians(40, 4, seed=0)
    Xt, _ = two_gaussians(200, 4, seed=1)
    ours = bl.PlugInGaussianClassifier(shared_covariance=shared).fit(X, y)
    # Oracle 1: the Bayes rule with unbiased sample covariances, by scipy.stats.
    covs = [np.cov(X[y == c].T) for c in (0, 1)]
    if shared:
        pooled = sum((np.sum(y == c) - 1) * covs[c] for c in (0, 1)) / (y.size - 2)
        covs = [pooled, pooled]
    joint = np.column_stack([np.mean(y == c) * multivariate_normal(X[y == c].mean(0), covs[c]).pdf(Xt)
                             for c in (0, 1)])
    np.testing.assert_allclose(ours.predict_proba(Xt), joint / joint.sum(1, keepdims=True), atol=1e-10)
    # Oracle 2: scikit-learn's QDA / LDA (which, since 1.8, scale covariances by 1/n, not 1/(n-1)):
    # the decisions agree except within that small difference of the boundary.
    ref = (LinearDiscriminantAnalysis(solver="lsqr") if shared else QuadraticDiscriminantAnalysis()).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt), atol=0.02)
    assert np.mean(ours.predict(Xt) == ref.predict(Xt)) >= 0.98


def test_plug_in_rejects_singular_class_covariance():
    X, y = two_gaussians(3, 5, seed=0)
    with pytest.raises(ValueError, match="singular"):
        bl.PlugInGaussianClassifier().fit(X, y)


def test_svm_uses_figueiredo_kernel_width():
    X, y = two_gaussians(30, 2, seed=0)
    model = bl.svm_classifier(X, y, width=0.5, C_grid=(1.0,))
    assert model.gamma == pytest.approx(2.0)  # 1 / (2 · 0.5²)


