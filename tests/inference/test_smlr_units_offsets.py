"""SMLR / RMLR fits do not move when the columns of X are offset or change units (issue 42, class 6).

With ``standardize=True`` (the default) the linear basis is built on the standardized inputs: the bias
is the logit at the training mean (a centred bias) and every weight is per training SD, so ``X + o``
and ``X · s`` give the fit on ``X``. On the raw basis (the paper's, ``standardize=False``) an offset of
up to 1e4 moved the Gaussian-prior fit's probabilities by 0.17 and units of 1e-6 left a nearly
constant classifier.

Tolerance, 1e-8 on a probability: ``X + o`` with ``|o| ≤ 1e4`` carries the values of ``X`` to within
half an ulp of 1e4 (9e-13), and ``X · 1e-6`` to within one relative ulp, so the standardized designs
agree to about 1e-12; every fit runs to ``tol=1e-10`` (the Newton solver, quadratically convergent,
ends far below it), so the probabilities agree to about 1e-10 (3e-10 at most measured when this test
was written). On the raw basis the same fits moved by 0.03 to 0.55.
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sparsebayes.inference import SMLRCV, SMLRClassifier, SparseClassifier

TOL = 1e-8


def _data(n_classes):
    """Unbalanced classes (so the intercept matters) from three informative columns of different spreads."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4)) * [1.0, 2.0, 0.5, 1.0]
    latent = X @ np.array([1.0, -0.7, 1.5, 0.0]) + 0.8 + rng.logistic(size=120)
    y = (latent > 0).astype(int) if n_classes == 2 else np.digitize(latent, [0.0, 1.5])
    return X, y


def _transformed(X):
    """``{name: (X_train, X_eval)}``: per-column offsets up to 1e4, and units of 1e-6."""
    offsets = np.array([1e4, -3e3, 250.0, -1e4])
    return {"offset up to 1e4": X + offsets, "units of 1e-6": X * 1e-6}


def _quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


CASES = {
    "l2": lambda: SMLRClassifier(penalty="l2", lam=1.0, tol=1e-10),
    "l1": lambda: SMLRClassifier(penalty="l1", lam=1.0, tol=1e-10, solver="newton"),
    "l2-cv": lambda: SMLRCV(penalty="l2", cv=3, n_lams=4, tol=1e-10),
    "sparse-classifier-map-l2": lambda: SparseClassifier(method="map", prior="gaussian", options={"tol": 1e-10}),
}


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_offsets_and_units_leave_the_probabilities_unmoved(case, n_classes):
    X, y = _data(n_classes)
    reference = _quiet(CASES[case](), X, y).predict_proba(X)
    for name, X_t in _transformed(X).items():
        moved = _quiet(CASES[case](), X_t, y).predict_proba(X_t)
        np.testing.assert_allclose(moved, reference, rtol=0, atol=TOL, err_msg=f"{case}, {name}")


def test_the_raw_basis_is_the_papers_and_moves_with_an_offset():
    """``standardize=False`` keeps eq. 3 on the raw inputs, every weight the bias included penalized: the
    penalized intercept then depends on where the origin of x lies (the reproductions' fits)."""
    X, y = _data(2)
    raw = SMLRClassifier(penalty="l2", lam=1.0, tol=1e-10, standardize=False)
    shift = _transformed(X)["offset up to 1e4"]
    gap = np.abs(_quiet(raw, shift, y).predict_proba(shift) - _quiet(raw, X, y).predict_proba(X)).max()
    assert gap > 1e-3


@pytest.mark.parametrize("name", ["none", "offset up to 1e4", "units of 1e-6"])
def test_binary_rmlr_is_logistic_regression_on_the_standardized_inputs(name):
    """Oracle: binary RMLR, ``max ℓ(w, b) − λ(‖w‖² + b²)/2`` on the standardized inputs, is scikit-learn's
    liblinear ``LogisticRegression(C=1/λ, intercept_scaling=1)``, whose intercept is the weight of a column
    of ones penalized like the others: the same objective (Sec. 3.3 with m = 2), whatever the offsets and
    units of X. Tolerance 1e-7: liblinear stops 2e-9 from our fit (at its tol); an unpenalized intercept
    gives probabilities 5e-3 away on these data."""
    X, y = _data(2)
    X_t = X if name == "none" else _transformed(X)[name]
    lam = 0.7
    ours = SMLRClassifier(penalty="l2", lam=lam, tol=1e-12).fit(X_t, y).predict_proba(X_t)
    Z = StandardScaler().fit_transform(X)
    theirs = LogisticRegression(C=1 / lam, solver="liblinear", intercept_scaling=1.0, tol=1e-12,
                                max_iter=10_000).fit(Z, y).predict_proba(Z)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-7)


def test_rmlr_matches_logistic_regression_with_a_free_intercept_where_the_intercept_is_zero():
    """Oracle with scikit-learn's unpenalized intercept (lbfgs): on data symmetric under ``x → −x`` with
    the labels swapped, the MAP's intercept is 0 with or without a penalty on it (the objective is
    symmetric and has one maximum), so the two objectives share their maximum; offsets and units of
    1e-6 do not move ours (4e-10 from lbfgs measured; tolerance as above)."""
    X, y = _data(2)
    X, y = np.vstack([X, -X]), np.r_[y, 1 - y]
    lam = 0.7
    Z = StandardScaler().fit_transform(X)
    theirs = LogisticRegression(C=1 / lam, tol=1e-12, max_iter=10_000).fit(Z, y)
    assert abs(theirs.intercept_[0]) < 1e-6
    for X_t in [X, *_transformed(X).values()]:
        ours = SMLRClassifier(penalty="l2", lam=lam, tol=1e-12).fit(X_t, y).predict_proba(X_t)
        np.testing.assert_allclose(ours, theirs.predict_proba(Z), rtol=0, atol=1e-7)
