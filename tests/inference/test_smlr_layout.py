"""SMLR's fitted ``coef_`` / ``intercept_`` are in scikit-learn's layout: ``decision_function`` is
``X_out @ coef_.T + intercept_`` on the feature-mapped design (its bias column left out), with
``LogisticRegression``'s shapes for two and for more classes."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import PolynomialFeatures

from sparsebayes.inference import SMLRCV, SMLRClassifier
from sparsebayes.inference.estimators._base import has_bias_column, raw_weights

RNG = np.random.default_rng(5)
X = RNG.normal(size=(60, 3))
Y3 = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * RNG.normal(size=60), [-0.5, 0.5])
Y2 = np.where(X[:, 0] - X[:, 2] + 0.3 * RNG.normal(size=60) > 0, "yes", "no")


def _design_out(est, X):
    """The feature-mapped design of the raw terms without the map's bias column (raw X without a map): for a
    map on standardized inputs (``standardize=True``), the same map on the raw ones."""
    fm = est.feature_map_
    if fm is None:
        return X
    if getattr(fm, "center", False) or getattr(fm, "scale", False):
        fm = type(fm)(bias=fm.bias).fit(X)
    H = fm.transform(X)
    return H[:, 1:] if has_bias_column(est.feature_map_) else H


@pytest.mark.parametrize("y", [Y3, Y2], ids=["three-classes", "two-classes"])
@pytest.mark.parametrize("est", [
    SMLRClassifier(lam=0.5),
    SMLRClassifier(lam=0.5, standardize=False),
    SMLRClassifier(lam=0.5, features="quadratic", solver="block"),
    SMLRClassifier(lam=0.3, features="kernel", kernel_width=1.0),
    SMLRClassifier(lam=0.5, features=None),
    SMLRClassifier(lam=0.5, features=PolynomialFeatures(2)),
    SMLRClassifier(penalty="l2", lam=0.5),
    SMLRCV(cv=3, n_lams=4),
], ids=["linear", "linear-raw-inputs", "quadratic-block", "kernel", "raw", "transformer", "rmlr", "cv"])
def test_coef_and_intercept_give_the_decision_function_with_logistic_regressions_shapes(est, y):
    est.fit(X, y)
    X_out = _design_out(est, X)
    ref = LogisticRegression(max_iter=5000).fit(X_out, y)
    assert est.coef_.shape == ref.coef_.shape and est.intercept_.shape == ref.intercept_.shape
    scores = X_out @ est.coef_.T + est.intercept_
    expected = est.decision_function(X)
    np.testing.assert_allclose(scores.ravel() if len(est.classes_) == 2 else scores, expected,
                               rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    if len(est.classes_) == 2:  # scikit-learn's rule: classes_[1] where the decision function is positive
        np.testing.assert_array_equal(est.predict(X), est.classes_[(scores.ravel() > 0).astype(int)])
    else:
        np.testing.assert_array_equal(est.coef_[-1], 0.0)  # the reference class
        np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
    if not has_bias_column(est.feature_map_):
        np.testing.assert_array_equal(est.intercept_, 0.0)
    # the InferenceData keeps the engine's basis × class W; coef_ / intercept_ are read off it (in the raw terms)
    beta = raw_weights(est.feature_map_, est.to_inference_data().posterior["beta"].values[0, 0].T).T
    rows = beta[1:] if has_bias_column(est.feature_map_) else beta
    if len(est.classes_) == 2:
        np.testing.assert_array_equal(est.coef_[0], rows[:, 1] - rows[:, 0])
    else:
        np.testing.assert_array_equal(est.coef_, rows.T)


def test_sparsity_reads_off_coef_as_it_does_for_logistic_regression():
    """``n_nonzero_`` counts the bias too; ``coef_``'s nonzeros are the inputs' weights, one per class row (on
    the raw basis; with ``standardize`` the bias weight is the logit at the mean, and ``intercept_``, the
    logit at 0, can be nonzero where it is zero)."""
    est = SMLRClassifier(lam=2.0, standardize=False).fit(X, Y3)
    assert est.n_nonzero_ == np.count_nonzero(est.coef_) + np.count_nonzero(est.intercept_)
    assert est.n_active_ == np.count_nonzero(np.any(est.coef_ != 0, axis=0)) + int(np.any(est.intercept_ != 0))
