"""Issue 30 for the EM estimators: a common offset in X, and fits that keep no basis function."""
import warnings

import numpy as np
import pytest

from sparsebayes.comparisons.synthetic import sinc, two_gaussians
from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.models import QuadraticFeatures

#: Predictions of fits on X and X + c agree to this fraction of sd(y) (regression) or of the
#: decision values' sd (probit). The entries of X + 1e8 are rounded to 1.5e-8 of unit-spread
#: inputs, which bounds how well any fit can agree; 1e-6 leaves that a factor of ~100.
EQUIVARIANCE_RTOL = 1e-6


def _regression_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 4))
    y = 3.0 + X @ [1.5, 0.0, -2.0, 0.5] + 0.5 * X[:, 0] * X[:, 2] + 0.5 * rng.normal(size=80)
    return X, y


def _classification_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 3))
    labels = (X[:, 0] - X[:, 2] + 0.8 + 0.7 * rng.normal(size=80) > 0).astype(int)
    return X, labels


@pytest.mark.parametrize("offset", [1e5, 1e8])
@pytest.mark.parametrize("features", ["linear", "quadratic"])
@pytest.mark.parametrize("prior", ["jeffreys", "laplace"])
def test_regression_with_a_common_offset_predicts_as_without_it(prior, features, offset):
    """Fits on X and X + c predict the same (standardized inputs): the raw features made the ridge
    start's Cholesky fail at c = 1e8 and changed (pruned) the bias at 1e5."""
    X, y = _regression_data()
    Xt = np.random.default_rng(1).normal(size=(50, 4))
    est = dict(prior=prior, features=features)
    ref = AdaptiveSparseRegressor(**est).fit(X, y)
    shifted = AdaptiveSparseRegressor(**est).fit(X + offset, y)
    np.testing.assert_allclose(shifted.predict(Xt + offset), ref.predict(Xt), rtol=0,
                               atol=EQUIVARIANCE_RTOL * np.std(y))
    np.testing.assert_array_equal(shifted.relevance_indices_, ref.relevance_indices_)


@pytest.mark.parametrize("offset", [1e5, 1e8])
@pytest.mark.parametrize("features", ["linear", "quadratic"])
@pytest.mark.parametrize("prior", ["jeffreys", "laplace"])
def test_probit_with_a_common_offset_decides_as_without_it(prior, features, offset):
    X, labels = _classification_data()
    Xt = np.random.default_rng(1).normal(size=(50, 3))
    est = dict(prior=prior, features=features)
    ref = SparseProbitClassifier(**est).fit(X, labels)
    shifted = SparseProbitClassifier(**est).fit(X + offset, labels)
    eta = ref.decision_function(Xt)
    np.testing.assert_allclose(shifted.decision_function(Xt + offset), eta, rtol=0,
                               atol=EQUIVARIANCE_RTOL * np.std(eta))
    np.testing.assert_array_equal(shifted.predict(Xt + offset), ref.predict(Xt))


@pytest.mark.parametrize("Est", [AdaptiveSparseRegressor, SparseProbitClassifier])
def test_kernel_fits_with_a_common_offset_predict_as_without_it(Est):
    """Gaussian kernels are translation-invariant, but ‖x‖² + ‖c‖² − 2xᵀc at an offset of 1e8
    loses every digit of the distances: they are taken from the training mean there."""
    X, y = sinc(60, sigma=0.1, seed=0) if Est is AdaptiveSparseRegressor else two_gaussians(30, 2, seed=0)
    Xt = np.linspace(X.min(0), X.max(0), 30)
    ref = Est(features="kernel", kernel_width=2.0).fit(X, y)
    shifted = Est(features="kernel", kernel_width=2.0).fit(X + 1e8, y)
    out = "predict" if Est is AdaptiveSparseRegressor else "decision_function"
    expected = getattr(ref, out)(Xt)
    np.testing.assert_allclose(getattr(shifted, out)(Xt + 1e8), expected, rtol=0,
                               atol=EQUIVARIANCE_RTOL * np.std(expected))


def test_raw_coefficients_give_the_fitted_function():
    """``coef_`` and ``intercept_`` are the weights of the raw terms that the feature map names
    (``intercept_`` the value at x = 0), as in scikit-learn, though the fit standardizes its inputs."""
    X, y = _regression_data()
    X = 2.0 * X + 3.0
    for prior in ("jeffreys", "laplace"):
        lin = AdaptiveSparseRegressor(prior=prior).fit(X, y)
        np.testing.assert_allclose(lin.intercept_ + X @ lin.coef_, lin.predict(X), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(lin.coef_, lin.beta_[1:] / lin.feature_map_.scale_, rtol=1e-15)
    quad = AdaptiveSparseRegressor(features="quadratic").fit(X, y)
    raw = QuadraticFeatures(bias=False).fit_transform(X)
    np.testing.assert_allclose(quad.intercept_ + raw @ quad.coef_, quad.predict(X), rtol=1e-10)
    Xc, labels = _classification_data()
    clf = SparseProbitClassifier(features="quadratic").fit(Xc + 2.0, labels)
    raw = QuadraticFeatures(bias=False).fit_transform(Xc + 2.0)
    np.testing.assert_allclose(clf.intercept_ + raw @ clf.coef_.T, clf.decision_function(Xc + 2.0)[:, None],
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_jeffreys_fits_in_other_units_run_the_same_iterations(scale):
    """Jeffreys EM's fixed point is unit-free, but its stopping rule on ‖Δβ‖/‖β‖ is not once a bias
    weight (here the value at the mean) sits beside the slopes; on inputs scaled to unit SD the fits
    on X and X · s run the same iterations and agree to rounding, at the default ``tol``."""
    X, y = _regression_data()
    ref = AdaptiveSparseRegressor().fit(X, y)
    fit = AdaptiveSparseRegressor().fit(X * scale, y)
    assert fit.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(fit.coef_ * scale, ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.predict(X * scale), ref.predict(X), rtol=1e-9)


def test_standardize_false_is_the_papers_bias_at_the_origin():
    """``standardize=False`` fits the features of the raw x (the bias is the value at x = 0), what
    the reproductions of 000's synthetic designs use: it equals the fit of the explicit raw design."""
    X, y = _regression_data()
    X = X + 1.0
    raw = AdaptiveSparseRegressor(standardize=False).fit(X, y)
    from sparsebayes.models import LinearFeatures

    explicit = AdaptiveSparseRegressor(features=LinearFeatures()).fit(X, y)
    np.testing.assert_array_equal(raw.beta_, explicit.beta_)
    assert not np.array_equal(raw.beta_, AdaptiveSparseRegressor().fit(X, y).beta_)
    with pytest.raises(ValueError, match="standardize must be True or False"):
        AdaptiveSparseRegressor(standardize="no").fit(X, y)
    # the raw features at an offset of 1e8 are collinear with the bias to rounding: a clear error
    # that says to centre (it was numpy's LinAlgError from the ridge start's Cholesky)
    for Est, target in ((AdaptiveSparseRegressor, y), (SparseProbitClassifier, (y > 3).astype(int))):
        with pytest.raises(ValueError, match="numerically collinear.*centre the inputs"):
            Est(standardize=False).fit(X + 1e8, target)


def _degenerate(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = fit()
    return est, [str(w.message) for w in caught if issubclass(w.category, DegenerateFitWarning)]


def test_laplace_fit_keeping_only_the_bias_says_what_to_change():
    """Laplace EM with γ too large for the units of X and y keeps the bias alone (the value at the
    mean, far larger than any slope here): a constant prediction, which warned only when the bias
    was pruned too."""
    X, y = _regression_data()
    y = y + 20.0
    est, messages = _degenerate(lambda: AdaptiveSparseRegressor(prior="laplace", gamma=2e7, noise_var=0.25).fit(X, y))
    assert not np.any(est.coef_) and est.intercept_ != 0  # the degenerate fit this test is about
    assert len(messages) == 1
    assert "pruned every weight but the bias" in messages[0] and "lower gamma" in messages[0]
    assert "standardize" in messages[0]
    est, messages = _degenerate(lambda: AdaptiveSparseRegressor(prior="laplace", gamma=1.0, noise_var=0.25).fit(X, y))
    assert np.any(est.coef_) and messages == []


def test_kernel_probit_that_keeps_no_kernel_says_to_change_the_width():
    """Kernels of width 4 on inputs in units of 100: every kernel is a spike on its own point,
    EM keeps none and the classifier predicts one class; ``kernel_width="scale"`` keeps some."""
    X, labels = two_gaussians(40, 2, seed=0)
    X = 100.0 * X
    est, messages = _degenerate(lambda: SparseProbitClassifier(features="kernel", kernel_width=4.0).fit(X, labels))
    assert est.n_active_ == 0 and np.unique(est.predict(X)).size == 1
    assert len(messages) == 1 and "kernel_width='scale'" in messages[0] and "narrower" in messages[0]
    est, messages = _degenerate(lambda: SparseProbitClassifier(features="kernel").fit(X, labels))
    assert est.n_active_ > 0 and messages == [] and est.score(X, labels) > 0.75


def test_one_vs_all_names_the_constant_classifier():
    """Three classes, one of them drawn at random whatever x: its one-vs-all classifier is constant."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = np.where(rng.random(150) < 1 / 3, 2, (X[:, 0] > 0).astype(int))
    est, messages = _degenerate(lambda: SparseProbitClassifier().fit(X, y))
    constant = [c for c, b in zip(est.classes_, est.beta_) if not np.any(b[1:])]
    assert constant and len(messages) == len(constant)
    assert all(f"class {c} (one-vs-all)" in m for c, m in zip(constant, messages))
