"""SMLR reliability (issue 30): units of X, refits after set_params, scikit-learn's estimator checks."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_fit2d_1feature

from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.inference.estimators.smlr import SMLRClassifier
from sparsebayes.inference.estimators.smlr_cv import SMLRCV
from sparsebayes.inference.estimators.smlr_scale import lambda_max

X, Y = make_classification(n_samples=200, n_features=5, random_state=0)


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("power", [27, -27])
def test_cv_fit_does_not_depend_on_the_units_of_x(power):
    """On the raw inputs (``standardize=False``), inputs in units 2^±27 (about 1e±8) against the same inputs in
    units of 1: the bias column
    takes the inputs' scale, so the λ grid scales with the units and the fit is the same model
    (with a unit bias column, large units force the bias to zero and small ones every input weight)."""
    s = 2.0 ** power
    unit = _quiet_fit(SMLRCV(standardize=False), X, Y)
    scaled = _quiet_fit(SMLRCV(standardize=False), X * s, Y)
    assert scaled.lam_ == pytest.approx(unit.lam_ * s, rel=1e-12)
    assert scaled.intercept_[0] != 0.0
    np.testing.assert_allclose(scaled.intercept_, unit.intercept_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(scaled.coef_ * s, unit.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(scaled.predict(X * s), unit.predict(X))
    assert unit.bias_scale_ == 1.0 and scaled.bias_scale_ == s


def test_cv_keeps_the_bias_for_inputs_in_units_of_1e8():
    """Units that are no power of two: the bias column is the nearest power of two to their size,
    and the fit scores as on the unscaled inputs."""
    unit = _quiet_fit(SMLRCV(standardize=False), X, Y)
    big = _quiet_fit(SMLRCV(standardize=False), X * 1e8, Y)
    assert big.intercept_[0] != 0.0
    assert big.score(X * 1e8, Y) >= unit.score(X, Y) - 0.01
    assert big.bias_scale_ == 2.0 ** 27


def test_standardized_inputs_and_kernels_keep_the_column_of_ones():
    """The paper's eq. 3 as written wherever the inputs are of about unit size (the reproductions'
    standardized inputs), and for kernels (unit-free), whatever the units of X."""
    Z = (X - X.mean(0)) / X.std(0)
    assert SMLRClassifier(lam=0.5, standardize=False).fit(Z, Y).bias_scale_ == 1.0
    kernel = SMLRClassifier(lam=0.5, features="kernel", kernel_width=1e3).fit(X * 1e3, Y)
    assert kernel.bias_scale_ == 1.0


def test_lam_above_lambda_max_for_these_units_warns_degenerate():
    """``lam=1`` on inputs in units of 1e-8 is far above λ_max: every weight is zero, and the fit
    says so with λ_max for these data and what to change."""
    with pytest.warns(DegenerateFitWarning, match=r"every weight is zero at lam=1, at or above λ_max=") as record:
        clf = SMLRClassifier(standardize=False).fit(X * 1e-8, Y)
    assert clf.n_nonzero_ == 0
    message = str(next(w.message for w in record if w.category is DegenerateFitWarning))
    assert "standardize X" in message and "lam_relative=True" in message
    top = float(message.split("λ_max=")[1].split(" ")[0])
    expected = lambda_max(np.hstack([np.full((200, 1), 2.0 ** -27), X * 1e-8]), Y, 2)
    assert top == pytest.approx(expected, rel=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        assert SMLRClassifier(standardize=False).fit(X, Y).n_nonzero_ > 0
        assert SMLRClassifier().fit(X * 1e-8, Y).n_nonzero_ > 0  # standardized inputs: λ is unit-free


def test_only_the_bias_left_is_a_constant_classifier_warning():
    """Unbalanced classes and a λ between the inputs' and the bias's thresholds: only the bias
    survives and every input gets one class."""
    y = (np.arange(200) < 150).astype(int)  # labels unrelated to X, 3:1
    top = lambda_max(np.hstack([np.ones((200, 1)), X]), y, 2)
    with pytest.warns(DegenerateFitWarning, match="only the bias is not: a constant classifier that predicts 1"):
        clf = SMLRClassifier(lam=0.5 * top, standardize=False).fit(X, y)
    assert clf.intercept_[0] != 0 and np.all(clf.coef_ == 0)


def test_lam_relative_takes_lam_as_a_fraction_of_lambda_max():
    """``lam_relative=True``: ``λ = lam · λ_max`` of the training data, the same model in any units;
    the default keeps ``lam`` as the number λ."""
    unit = SMLRClassifier(lam=0.05, lam_relative=True, standardize=False).fit(X, Y)
    scaled = SMLRClassifier(lam=0.05, lam_relative=True, standardize=False).fit(X * 2.0 ** 20, Y)
    assert unit.lam_ == pytest.approx(0.05 * lambda_max(np.hstack([np.ones((200, 1)), X]), Y, 2), rel=1e-12)
    assert scaled.lam_ == pytest.approx(unit.lam_ * 2.0 ** 20, rel=1e-12)
    np.testing.assert_array_equal(scaled.coef_ != 0, unit.coef_ != 0)
    np.testing.assert_allclose(scaled.predict_proba(X * 2.0 ** 20), unit.predict_proba(X), rtol=1e-6)
    assert SMLRClassifier(lam=0.05).fit(X, Y).lam_ == 0.05
    for params in ({"penalty": "l2"}, {"lam_relative": "yes"}):
        with pytest.raises(ValueError, match="lam_relative"):
            SMLRClassifier(lam_relative=params.get("lam_relative", True), penalty=params.get("penalty", "l1")).fit(X, Y)


def test_laplace_covariance_penalizes_the_intercept_in_its_own_units():
    """RMLR on inputs in units 2^10 with ``λ·2^20`` is RMLR on the unit inputs with ``λ`` (weights
    of the inputs scale by 2^-10, the intercept is unchanged), so its Laplace covariance is the
    unit one, the inputs' rows and columns scaled by 2^-10."""
    s = 2.0 ** 10
    unit = SMLRClassifier(penalty="l2", lam=0.3, tol=1e-10, standardize=False).fit(X, Y)
    scaled = SMLRClassifier(penalty="l2", lam=0.3 * s * s, tol=1e-10, standardize=False).fit(X * s, Y)
    np.testing.assert_allclose(scaled.intercept_, unit.intercept_, rtol=1e-7)
    D = np.where(np.arange(6) == 0, 1.0, 1.0 / s)
    np.testing.assert_allclose(scaled.laplace_covariance(X * s), unit.laplace_covariance(X) * np.outer(D, D),
                               rtol=1e-6)


@pytest.mark.parametrize("Est", [SMLRClassifier, SMLRCV])
def test_a_linear_refit_after_a_kernel_fit_keeps_no_kernel_attribute(Est):
    """Every fit sets or deletes every fitted attribute: a kernel fit's ``relevance_indices_`` does
    not survive ``set_params(features="linear")`` and a refit (it would name kernels the linear
    model does not have)."""
    kw = {"lam": 0.5} if Est is SMLRClassifier else {"cv": 3, "n_lams": 3}
    Xs, Ys = X[:60], Y[:60]  # 60 kernels: the attributes, not the fit, are under test
    est = _quiet_fit(Est(features="kernel", kernel_width=2.0, **kw), Xs, Ys)
    assert hasattr(est, "relevance_indices_")
    est.set_params(features="linear").fit(Xs, Ys)
    assert not hasattr(est, "relevance_indices_")
    assert est.coef_.shape == (1, 5) and est.intercept_.shape == (1,)


def test_cv_with_a_class_smaller_than_the_folds_uses_fewer_folds():
    """A class of 3 with ``cv=5``: cross-validation on 3 folds, with a warning, not a ValueError
    (which would pre-empt scikit-learn's expected 1-feature message)."""
    y = Y.copy()
    y[np.flatnonzero(y == 1)[3:]] = 0
    with pytest.warns(UserWarning, match="fewer than cv=5 folds: cross-validating with 3 folds"):
        cv = SMLRCV(n_lams=3).fit(X, y)
    assert np.isfinite(cv.cv_log_loss_).all() and cv.cv_errors_.shape == (1, 3)
    y[np.flatnonzero(y == 1)[1:]] = 0
    with pytest.raises(ValueError, match="has 1 sample"):
        SMLRCV(n_lams=3).fit(X, y)


@pytest.mark.parametrize("est", [SMLRCV(), SMLRClassifier()], ids=["SMLRCV", "SMLRClassifier"])
def test_check_fit2d_1feature_passes_with_the_default_folds(est):
    check_fit2d_1feature(type(est).__name__, est)


def test_the_block_solver_breaking_down_on_large_units_refits_instead_of_returning_nan():
    """``lam=1`` on raw inputs (``standardize=False``) in units of 1e8 (200 points, so the block solver): eq. 13's system is
    lost to rounding and the weights became NaN (accuracy 0.495); the fit falls back to
    surrogate-cd and says so."""
    with pytest.warns(ConvergenceWarning, match="block solver broke down"):
        clf = SMLRClassifier(standardize=False).fit(X * 1e8, Y)
    assert np.all(np.isfinite(clf.coef_)) and np.isfinite(clf.objective_)
    assert clf.solver_ == "surrogate-cd"
    assert clf.score(X * 1e8, Y) >= SMLRClassifier(standardize=False).fit(X, Y).score(X, Y) - 0.01
