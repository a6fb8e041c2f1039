"""Issue 30 for the type-II estimators: inputs far from the origin and degenerate fits.

Location equivariance where the model has an intercept (the Bernoulli RVM's bias, with linear
and quadratic features on the centred inputs); where it has none, a degenerate fit (the empty
model, a NaN objective, a fit that never left its start) warns and is not reported converged.
"""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sparsebayes.inference import BLSRegressor, FLAPRegressor, RVMClassifier, RVMRegressor
from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.models.features import LinearFeatures, QuadraticFeatures


def _classes(n=200, seed=0):
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=seed)
    return X, y


@pytest.mark.parametrize("features, raw_map", [("linear", LinearFeatures()), ("quadratic", QuadraticFeatures())])
@pytest.mark.parametrize("offset", [10.0, 1e3])
def test_rvm_classifier_predicts_the_same_on_shifted_inputs(features, raw_map, offset):
    """``X + c`` with linear / quadratic features and a bias: the bias absorbs the offset, so the fit
    predicts what the fit on ``X`` does (an uncentred fit at ``X + 10`` is a constant classifier,
    accuracy 0.5). ``coef_`` / ``intercept_`` are the weights of the raw terms:
    ``intercept_ + h_raw(x)ᵀcoef_`` is the decision function on the shifted inputs themselves."""
    X, y = _classes()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)  # a fit that separates the classes is not degenerate
        base = RVMClassifier(features=features).fit(X, y)
        shifted = RVMClassifier(features=features).fit(X + offset, y)
    assert base.score(X, y) > 0.6
    # rounding: the entries of X + c carry about c · 1e-16 of absolute error, the squares c² · 1e-16
    np.testing.assert_allclose(shifted.decision_function(X + offset), base.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(shifted.predict(X + offset), base.predict(X))
    np.testing.assert_array_equal(shifted.active_, base.active_)
    assert shifted.converged_.all() and base.converged_.all()
    H = raw_map.fit_transform(X + offset)
    eta = H[:, 1:] @ shifted.coef_.T + shifted.intercept_
    np.testing.assert_allclose(eta[:, 0], shifted.decision_function(X + offset), rtol=1e-7,
                               atol=1e-7 * np.abs(shifted.intercept_).max())


def test_rvm_classifier_stopped_at_its_start_is_not_converged_and_warns():
    """A raw (uncentred) linear map given as a transformer on ``X + 10``: every column looks like the
    bias, no move raises the evidence from the start, and the fit is a constant classifier. It must
    say so, and not report convergence."""
    X, y = _classes()
    with pytest.warns(DegenerateFitWarning, match="RVMClassifier: it predicts one class.*stopped at their start"):
        clf = RVMClassifier(features=LinearFeatures()).fit(X + 10.0, y)
    assert clf.n_iter_[0] == 1 and not clf.converged_[0]
    assert np.unique(clf.predict(X + 10.0)).size == 1


def test_rvm_classifier_that_predicts_one_class_warns_with_what_to_change():
    """Labels unrelated to ``X``: every weight but the bias is pruned and the classifier predicts the
    majority class everywhere, which a DegenerateFitWarning must say (with the remedy)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 3))
    y = (rng.random(120) < 0.3).astype(int)
    with pytest.warns(DegenerateFitWarning, match="predicts one class.*standardize X"):
        clf = RVMClassifier(features="linear").fit(X, y)
    assert np.unique(clf.predict(X)).size == 1


def test_rvm_classifier_whose_kernels_reach_no_other_point_warns():
    """Inputs in the hundreds at a width ``h = 1`` (as raw breast-cancer data at the old default
    width: every training point right, the majority class for anything new): each kept kernel is ≈ 0
    at every other training point, a lookup table of training points. Not constant on its training
    data, so only this check catches it; the same data standardized, and the same raw data at the
    default ``kernel_width="scale"``, fit without the warning."""
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, weights=[0.7], random_state=0)
    with pytest.warns(DegenerateFitWarning, match="kernels is below 0.001 at every other training point.*'scale'"):
        clf = RVMClassifier(kernel_width=1.0).fit(X * 100.0, y)
    assert clf.score(X * 100.0, y) == 1.0 and clf.n_active_ > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        RVMClassifier(kernel_width=1.0).fit(X, y)
        RVMClassifier().fit(X * 100.0, y)


def _uncentred_regression(offset=100.0):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 4))
    y = X @ np.array([1.0, -2.0, 0.0, 0.5]) + 0.3 * rng.standard_normal(100)
    return X + offset, y


@pytest.mark.parametrize("Est, what", [(RVMRegressor, "empty model"), (BLSRegressor, "empty model"),
                                       (FLAPRegressor, "starting model")])
@pytest.mark.parametrize("bias_column", [False, True])
def test_regressor_without_intercept_on_uncentred_inputs_warns_and_is_not_converged(Est, what, bias_column):
    """``fit_intercept=False`` on ``X + 100`` (with a column of ones beside it too): no single column
    raises the evidence, the fit never leaves its start, and ends empty (RVM, BLS: predicts 0,
    objective NaN) or at its one starting column (FLAP: R² 0). Least squares through the origin on
    the same columns explains 0.957 of y. The fit must warn (centre X / fit_intercept=True) and
    report ``converged_`` False; with the intercept the same data fit well, converge and do not warn."""
    X, y = _uncentred_regression()
    if bias_column:
        X = np.column_stack([np.ones(len(y)), X])
    with pytest.warns(DegenerateFitWarning, match=f"{Est.__name__}: .*{what}.*fit_intercept=True"):
        m = Est(fit_intercept=False).fit(X, y)
    assert not m.converged_
    assert m.score(X, y) < 0.01  # the degenerate fit itself is unchanged: it is flagged, not hidden
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        centred = Est().fit(X, y)
    assert centred.converged_ and centred.score(X, y) > 0.95


def test_regressor_with_intercept_on_pure_noise_warns_that_it_is_empty():
    """One feature, pure noise (``test_the_last_basis_the_rule_prunes_leaves_the_empty_model``'s data): the
    empty model is reported, which must warn, and the fit never left its start."""
    rng = np.random.default_rng(0)
    rng.standard_normal((40, 3))
    x = rng.standard_normal((40, 1))
    y = rng.standard_normal(40)
    with pytest.warns(DegenerateFitWarning, match="empty model, which predicts the mean of y"):
        m = RVMRegressor().fit(x, y)
    assert not m.active_.any() and not m.converged_


def test_a_constant_target_warns_that_there_is_nothing_to_fit():
    X, _ = _uncentred_regression(0.0)
    with pytest.warns(DegenerateFitWarning, match="y is constant"):
        m = RVMRegressor().fit(X, np.full(len(X), 2.0))
    np.testing.assert_allclose(m.predict(X), 2.0)


def test_factored_kernel_design_takes_the_maps_resolved_width():
    """``kernel_width="scale"`` on more than 300 points: the factored design reads the map's kernel at
    its resolved width (it read ``kernel_width`` as a number) and gives the dense fit's predictions."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-10, 10, (400, 1)) * 50.0
    y = np.sinc(X[:, 0] / 50.0 / np.pi) + 0.1 * rng.standard_normal(400)
    factored = RVMRegressor(features="kernel", kernel_width="scale").fit(X, y)
    dense = RVMRegressor(features="kernel", kernel_width="scale", low_rank=False).fit(X, y)
    assert factored.design_rank_ is not None and dense.design_rank_ is None
    np.testing.assert_allclose(factored.predict(X), dense.predict(X), atol=1e-4)
