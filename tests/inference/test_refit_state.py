"""Names and state: a refit clears every fitted attribute of the fit before it; the point estimate of a
fit with an estimated shared hyperparameter carries it under the twin's name; conflicting prior
specifications are a ValueError naming both; a multiclass fit's ``prior_`` refits it."""
import numpy as np
import pytest
from sparsebayes.inference import AdaptiveSparseRegressor, SparseClassifier, SparseProbitClassifier
from sparsebayes.models import HorseshoePrior, LaplacePrior


def _regression(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ np.array([1.0, 0.0, -0.5]) + 0.3 * rng.normal(size=n)


def _three_classes(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), [-0.5, 0.5])


@pytest.mark.parametrize("then", ["jeffreys", "horseshoe"])
def test_a_refit_under_another_prior_leaves_no_attribute_of_the_laplace_fit(then):
    X, y = _regression()
    est = AdaptiveSparseRegressor(prior="laplace", gamma=3.0).fit(X, y)
    assert est.gamma_ == 3.0 and est.lam_ == pytest.approx(3.0**0.5)
    est.set_params(prior=then).fit(X, y)
    fresh = AdaptiveSparseRegressor(prior=then).fit(X, y)
    assert not hasattr(est, "gamma_") and not hasattr(est, "lam_")
    assert sorted(k for k in vars(est) if k.endswith("_")) == sorted(k for k in vars(fresh) if k.endswith("_"))
    np.testing.assert_array_equal(est.beta_, fresh.beta_)


@pytest.mark.parametrize("cls", [AdaptiveSparseRegressor, SparseProbitClassifier])
def test_the_point_estimate_carries_an_estimated_gamma_under_the_twins_name(cls):
    """compare's point group (``point_estimate_dataset``) beside the twin, whose posterior samples ``gamma``."""
    from sparsebayes.inference.posterior.twin_posterior import point_estimate_dataset, twin

    X, y = _regression()
    y = y if cls is AdaptiveSparseRegressor else (y > 0).astype(int)
    est = cls(prior=LaplacePrior(gamma_prior=(1.0, 1.0))).fit(X, y)
    t = twin(est, X, y)
    assert t.kwargs["prior"].gamma_prior == (1.0, 1.0)  # the twin samples gamma
    point = point_estimate_dataset(est, t.names, t.weight_dims, t.weight_coords)
    assert float(point["gamma"].values.ravel()[0]) == pytest.approx(float(est.gamma_), rel=1e-12)


def test_a_prior_object_and_a_different_gamma_are_a_value_error_naming_both():
    X, y = _regression()
    with pytest.raises(ValueError, match=r"LaplacePrior\(gamma=2\.0.*gamma=50"):
        AdaptiveSparseRegressor(prior=LaplacePrior(gamma=2.0), gamma=50.0).fit(X, y)
    with pytest.raises(ValueError, match=r"HorseshoePrior.*gamma=50"):
        AdaptiveSparseRegressor(prior=HorseshoePrior(), gamma=50.0).fit(X, y)
    with pytest.raises(ValueError, match=r"LaplacePrior.*gamma_prior=\(1, 1\)"):
        AdaptiveSparseRegressor(prior=LaplacePrior(gamma=2.0), gamma_prior=(1, 1)).fit(X, y)
    same = AdaptiveSparseRegressor(prior=LaplacePrior(gamma=2.0), gamma=2.0).fit(X, y)  # agreeing: no conflict
    assert same.gamma_ == 2.0


def test_a_gamma_prior_that_is_not_a_pair_is_a_value_error_naming_it():
    X, y = _regression()
    with pytest.raises(ValueError, match=r"LaplacePrior\.gamma_prior must be None .* or a pair \(a, b\).*got 1\.0"):
        AdaptiveSparseRegressor(prior=LaplacePrior(gamma_prior=1.0)).fit(X, y)


@pytest.mark.parametrize("make", [lambda prior: SparseProbitClassifier(prior=prior),
                                  lambda prior: SparseClassifier(method="em", prior=prior)])
def test_a_multiclass_prior_refits_its_model(make):
    X, y = _three_classes()
    est = SparseProbitClassifier(prior="laplace", gamma=2.0).fit(X, y)
    assert isinstance(est.prior_, list) and len(est.prior_) == 3
    again = make(est.prior_).fit(X, y)
    np.testing.assert_array_equal(again.beta_, est.beta_)
    with pytest.raises(ValueError, match="prior holds 3 hierarchies but the data have 1"):
        make(est.prior_).fit(X, (y > 0).astype(int))
    with pytest.raises(ValueError, match="fits one hierarchy"):
        AdaptiveSparseRegressor(prior=est.prior_).fit(X, y.astype(float))
