"""Issue 44: offsets and units that fitted silently. Each fit below gets the right answer or a warning
that names what happened and what to change; a fitted objective is never NaN.

The oracles: least squares on the same design columns (NumPy's ``lstsq``), the Gaussian log-density of
the empty model (SciPy), the classes' own shares, the folds asked for.
"""
import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.datasets import make_classification

from sparsebayes.inference import BayesianLassoRegressor, BLSRegressor, FLAPRegressor, RVMRegressor
from sparsebayes.inference._warnings import DegenerateFitWarning, missed_signal
from sparsebayes.inference.estimators.smlr import SMLRClassifier
from sparsebayes.inference.estimators.smlr_cv import SMLRCV


def _offset_regression(offset):
    """``y = Xw + 2 + noise`` with ``X`` shifted by ``offset``: least squares through the origin on the
    shifted columns explains 0.93 of y (the columns span the constant through their differences)."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((100, 5))
    y = X @ rng.standard_normal(5) + 2.0 + 0.5 * rng.standard_normal(100)
    return X + offset, y


def _r2_least_squares(X, y):
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    return 1.0 - np.sum((y - X @ coef) ** 2) / np.sum((y - y.mean()) ** 2)


@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor])
@pytest.mark.parametrize("features", [None, "linear"])
def test_no_intercept_far_from_the_origin_that_misses_the_signal_warns(Est, features):
    """``fit_intercept=False`` on ``X + 1000`` (with the linear map's bias column too): the search moves
    (it re-estimates its start) and stops converged with one basis function and R² ≈ 0, where least
    squares on the same columns explains 0.93. It warned nothing; it must say so and what to change."""
    X, y = _offset_regression(1000.0)
    r2_ls = _r2_least_squares(np.column_stack([np.ones(len(y)), X]) if features else X, y)
    assert r2_ls > 0.9
    with pytest.warns(DegenerateFitWarning, match=f"{Est.__name__}: the fit explains R² = .* where least squares "
                      r"on the same .* explains 0\.9.*fit_intercept=True"):
        m = Est(fit_intercept=False, features=features).fit(X, y)
    assert m.score(X, y) < 0.01 and np.isfinite(m.objective_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        centred = Est(features=features).fit(X, y)
    assert centred.score(X, y) > 0.8


def test_missed_signal_is_silent_without_a_signal():
    """The check's oracle: pure noise passes no F-test, so a fit that keeps nothing is not flagged; a
    clear signal with a zero fit is."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    assert missed_signal(X, rng.standard_normal(80), np.zeros(80)) is None
    y = X @ np.array([1.0, 0.0, -1.0, 0.5]) + 0.3 * rng.standard_normal(80)
    r2_fit, r2_ls, p = missed_signal(X, y, np.zeros(80) + y.mean())
    assert r2_fit == pytest.approx(0.0, abs=1e-12) and r2_ls == pytest.approx(_r2_least_squares(
        np.column_stack([np.ones(80), X]), y), abs=0.01) and p < 1e-10


@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor])
def test_the_empty_model_has_a_finite_objective_and_is_not_converged(Est):
    """``X + 1000`` with y centred, no intercept: the fit ends as the empty model. Its ``objective_``
    was NaN; it is the empty model's evidence, ``log N(y | 0, σ²I)`` (plus ``log p(σ²)``, flat here for
    the RVM and 0 for BLS's ``c = d = 0`` at σ²'s own scale), checked against SciPy's density; the fit
    warns and is not converged."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 5))
    y = X @ np.array([1.5, -2.0, 0.0, 0.0, 1.0]) + 0.5 * rng.standard_normal(100)
    with pytest.warns(DegenerateFitWarning, match=f"{Est.__name__}: "):
        m = Est(fit_intercept=False).fit(X + 1000.0, y)
    assert not m.active_.any() and not m.converged_
    loglik = multivariate_normal(np.zeros(100), m.noise_var_ * np.eye(100)).logpdf(y)
    noise_prior = -np.log(m.noise_var_) if Est is BLSRegressor else 0.0  # c = 0: p(σ²) ∝ 1/σ²
    assert m.objective_ == pytest.approx(loglik + noise_prior, rel=1e-10)


def test_a_constant_target_has_a_finite_objective():
    """The empty model set before any engine run (y constant) reports a finite ``objective_`` too."""
    X, _ = _offset_regression(0.0)
    with pytest.warns(DegenerateFitWarning, match="y is constant"):
        m = RVMRegressor().fit(X, np.full(len(X), 2.0))
    assert np.isfinite(m.objective_)


def test_smlr_kernels_wider_than_tiny_inputs_warn_that_it_predicts_one_class():
    """X in units of 1e-8 at a fixed ``kernel_width=1``: every kernel is ≈ 1, a copy of the bias column, and
    the fit predicts one class (accuracy 0.51, the majority share) with nonzero weights, so the λ_max
    check (every weight zero) never fired. It must say so and name the width; the standardized fit
    separates the classes without the warning."""
    X, y = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=0)
    with pytest.warns(DegenerateFitWarning, match=r"SMLRClassifier: it predicts one class .* accuracy 0\.5.*"
                      "kernel_width='scale'"):
        m = SMLRClassifier(features="kernel", kernel_width=1.0).fit(X * 1e-8, y)
    assert m.n_nonzero_ > 0 and m.score(X * 1e-8, y) == pytest.approx(np.bincount(y).max() / len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        assert SMLRClassifier(features="kernel").fit(X * 1e-8, y).score(X * 1e-8, y) > 0.8


def test_smlr_in_tiny_units_with_every_weight_zero_warns():
    """X in units of 1e-8 at ``lam=1`` on the raw inputs (``standardize=False``, the paper's basis): λ is far
    above λ_max, every weight is zero and the accuracy the majority share. The warning names λ_max and what
    to change."""
    X, y = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=0)
    with pytest.warns(DegenerateFitWarning, match="every weight is zero.*λ_max.*standardize X"):
        m = SMLRClassifier(standardize=False).fit(X * 1e-8, y)
    assert m.n_nonzero_ == 0


def test_bayesian_lasso_in_tiny_units_with_more_columns_than_rows_warns():
    """X in units of 1e-8 with ``p ≥ n − 1``: least squares has no residual degrees of freedom, so the
    F-test check could not run and the fit (R² ≈ 0, every coefficient pinned by the prior) was silent.
    The units check (prior variance against the likelihood's, column by column) says so; the same
    data standardized do not trigger it."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 12))
    y = X[:, 0] * 2.0 + 0.1 * rng.standard_normal(12)
    kw = dict(num_warmup=200, num_samples=200, num_chains=1)
    with pytest.warns(DegenerateFitWarning, match="BayesianLassoRegressor: the prior variance of every "
                      "coefficient.*standardize X"):
        m = BayesianLassoRegressor(**kw).fit(X * 1e-8, y)
    assert abs(m.score(X * 1e-8, y)) < 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        BayesianLassoRegressor(**kw).fit(X, y)


def test_smlrcv_with_more_folds_than_a_class_says_what_it_used_and_what_to_pass():
    """``cv=100`` on 60 rows (30 of each class): cross-validation runs 30 folds. The warning says so and
    what to pass, and ``n_splits_`` records the folds used."""
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, random_state=0)
    with pytest.warns(UserWarning, match="cross-validating with 30 folds.*pass cv=30 or fewer"):
        m = SMLRCV(cv=100, n_lams=2).fit(X, y)
    assert m.n_splits_ == 30 == np.bincount(y).min()


def test_kernel_map_on_columns_of_very_different_scales_warns():
    """Issue 42, class 6: columns in units from 1e-4 to 1e4 under a Gaussian kernel map. The distances and the
    ``"scale"`` width are the widest column's, so a kernel fit sees one input of three, silently: kernel ridge
    regression (scikit-learn, the map's own width) explains far less than on the standardized inputs. The
    map warns, so every estimator that fits it does (SMLR's kernels here); standardized inputs do not."""
    from sklearn.kernel_ridge import KernelRidge

    from sparsebayes.models.features import GaussianKernelFeatures

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((60, 3))
    y = np.sin(2.0 * Z[:, 0]) + Z[:, 1] * Z[:, 2] + 0.1 * rng.standard_normal(60)
    X = Z * np.array([1e-4, 1.0, 1e4])
    match = "GaussianKernelFeatures: the columns of X differ in standard deviation by more than a factor 1000.*standardize X"
    with pytest.warns(DegenerateFitWarning, match=match):
        raw = GaussianKernelFeatures(width="scale").fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        standardized = GaussianKernelFeatures(width="scale").fit(Z)

    def ridge_r2(A, width):
        return KernelRidge(alpha=1e-2, kernel="rbf", gamma=0.5 / width**2).fit(A, y).score(A, y)

    assert ridge_r2(X, raw.width_) < ridge_r2(Z, standardized.width_) - 0.3
    Xc, yc = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=0)
    with pytest.warns(DegenerateFitWarning, match=match):
        SMLRClassifier(features="kernel").fit(Xc * np.array([1e-4, 1.0, 1e4, 1.0]), yc)


def test_smlr_with_a_non_finite_objective_warns(monkeypatch):
    """A bound optimization whose objective came back NaN (a numerical breakdown, stood in for by wrapping the
    engine) is reported, never passed on silently as a fit."""
    from sparsebayes.inference.estimators import map_fit

    engine = map_fit.fit_coef

    def broken(*args, **kwargs):
        W, info, solver = engine(*args, **kwargs)
        return W, info._replace(objective=np.float64(np.nan)), solver

    monkeypatch.setattr(map_fit, "fit_coef", broken)
    X, y = make_classification(80, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.warns(DegenerateFitWarning, match="SMLRClassifier: the objective is not finite"):
        SMLRClassifier().fit(X, y)
