"""A generic estimator equals the paper estimator of its (method, prior) pair, which is the generic one
with the method fixed: both take the same route (the method's fitting core) and fit the same model."""
import numpy as np
import pytest
from public_estimators import assert_fit_refused
from sklearn.base import clone
from sklearn.datasets import load_diabetes, make_classification

import sparsebayes.inference as inference
from sparsebayes.models import ARDPrior, HorseshoePrior, LaplacePrior


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:150], y[:150]
    return X / X.std(axis=0), (y - y.mean()) / y.std()


@pytest.fixture(scope="module")
def binary():
    return make_classification(n_samples=120, n_features=5, n_informative=3, n_redundant=0,
                               random_state=0)


REGRESSION_PAIRS = [
    (dict(method="em", prior="laplace"), inference.AdaptiveSparseRegressor(prior="laplace")),
    (dict(method="em", prior="jeffreys"), inference.AdaptiveSparseRegressor(prior="jeffreys")),
    (dict(method="em", prior=HorseshoePrior(tau=0.5)), inference.AdaptiveSparseRegressor(prior=HorseshoePrior(tau=0.5))),
    (dict(method="type2", prior="ard"), inference.RVMRegressor(features="linear")),
    (dict(method="typeii", prior="laplace"), inference.FLAPRegressor(features="linear")),
    (dict(method="type2", prior="scaled_laplace"), inference.BLSRegressor(features="linear")),
]


@pytest.mark.parametrize("kw, paper", REGRESSION_PAIRS, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_regressor_equals_its_paper_estimator(diabetes, kw, paper):
    X, y = diabetes
    est = inference.SparseRegressor(**kw).fit(X, y)
    ref = clone(paper).fit(X, y)
    assert est._route_ == ref._route_  # fitted by the same core
    if kw["method"] == "em":
        np.testing.assert_array_equal(est.beta_, ref.beta_)
    else:
        assert est.prior_ == ref.prior_ and est.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-12, atol=1e-9)


CLASSIFICATION_PAIRS = [
    (dict(method="em", prior="jeffreys"), inference.SparseProbitClassifier(prior="jeffreys")),
    (dict(method="type2", prior="ard", features="kernel"), inference.RVMClassifier(features="kernel")),
    (dict(method="map", prior="laplace"), inference.SMLRClassifier(penalty="l1")),
    (dict(method="bound", prior="gaussian"), inference.SMLRClassifier(penalty="l2")),
    (dict(method="map", prior=LaplacePrior.from_lam(0.5)), inference.SMLRClassifier(penalty="l1", lam=0.5)),
]


@pytest.mark.parametrize("kw, paper", CLASSIFICATION_PAIRS, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_classifier_equals_its_paper_estimator(binary, kw, paper):
    X, y = binary
    est = inference.SparseClassifier(**kw).fit(X, y)
    ref = clone(paper).fit(X, y)
    assert est._route_ == ref._route_  # fitted by the same core (type-II: its Laplace route)
    if kw["method"] in ("em", "type2"):
        np.testing.assert_array_equal(est.beta_, ref.beta_)
    else:  # "map", "bound": the MAP core (SMLRClassifier is SparseClassifier with method="map")
        np.testing.assert_array_equal(est._basis_weights_, ref._basis_weights_)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(est.classes_, ref.classes_)


def test_options_reach_the_em_fit(diabetes):
    X, y = diabetes
    est = inference.SparseRegressor(prior="laplace", options={"gamma": 5.0}).fit(X, y)
    assert est.gamma_ == 5.0
    ref = inference.AdaptiveSparseRegressor(prior="laplace", gamma=5.0).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)


@pytest.mark.parametrize("est, words", [
    (inference.SparseRegressor(prior=HorseshoePrior(), method="type2"), ["HorseshoePrior", "type2"]),
    (inference.SparseRegressor(prior="horseshoe", method="type2"), ["'horseshoe'", "type2", "'ard'"]),
    (inference.SparseRegressor(prior="jeffreys", method="gibbs"), ["'jeffreys'", "scaled_laplace"]),
    (inference.SparseRegressor(prior="ard", method="em"), ["ARDPrior has no EM E-step", "jeffreys"]),
    (inference.SparseRegressor(method="annealing"), ["method must be one of"]),
    (inference.SparseRegressor(options={"gama": 1.0}), ["gama", "AdaptiveSparseRegressor"]),
    (inference.SparseRegressor(options={"prior": "jeffreys"}), ["set by prior= and method="]),
    (inference.SparseRegressor(method="type2", prior=LaplacePrior(2.0)), ["estimates the hyperparameters", "'laplace'"]),
    (inference.SparseRegressor(method="gibbs", prior="scaled_laplace", features="kernel"), ["features", "BayesianLasso"]),
    (inference.SparseClassifier(method="map", prior="horseshoe"), ["'horseshoe'", "'laplace'", "'gaussian'"]),
    (inference.SparseClassifier(method="type2", prior="horseshoe"), ["'horseshoe'", "'ard'"]),
    (inference.SparseClassifier(method="type2", link="probit"), ["RVMClassifier", "'probit'", "method='em'", "'gibbs'"]),
    (inference.SparseClassifier(method="map", prior=LaplacePrior(1.0, gamma_prior=(1.0, 1.0))), ["gamma_prior", "method='em'"]),
])
def test_unsupported_pairs_name_the_prior_and_the_way_out(est, words):
    assert_fit_refused(est, words)


def test_refit_clears_the_previous_routes_attributes(diabetes):
    X, y = diabetes
    est = inference.SparseRegressor(method="em").fit(X, y)
    assert hasattr(est, "log_posterior_") or hasattr(est, "objective_")
    est.set_params(method="type2", prior="ard").fit(X, y)
    assert isinstance(est.prior_, ARDPrior) and hasattr(est, "cycled_")
    assert not hasattr(est, "beta_")  # EM's attribute, which the RVM does not set
    est.set_params(method="em", prior="laplace").fit(X, y)
    assert not hasattr(est, "cycled_")  # type-II's attribute, which EM does not set
    assert hasattr(est, "gaussian_conditional")  # and it answers as an EM fit again


@pytest.mark.parametrize("method, paper", [("em", inference.AdaptiveSparseRegressor), ("type2", inference.RVMRegressor)])
def test_prior_none_takes_the_methods_default(diabetes, method, paper):
    X, y = diabetes
    est = inference.SparseRegressor(method=method).fit(X, y)
    if method == "em":
        assert est.prior_.name == "jeffreys"
        np.testing.assert_array_equal(est.beta_, paper().fit(X, y).beta_)
    else:
        assert est.prior_ == paper().fit(X, y).prior_
        np.testing.assert_array_equal(est.coef_, paper(features="linear").fit(X, y).coef_)


@pytest.mark.slow
def test_compare_and_sample_posterior_equal_the_paper_estimators(diabetes):
    """``compare`` and ``sample_posterior`` on a generic estimator draw what they draw on its paper
    estimator (the same fitted model, the same posterior, the same seed)."""
    import sparsebayes

    X, y = diabetes
    est = inference.SparseRegressor(prior="laplace").fit(X, y)
    kw = dict(num_warmup=50, num_samples=50, num_chains=1, seed=1)
    ours = sparsebayes.compare(est, X, y, **kw)
    paper = inference.AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    ref = sparsebayes.compare(paper, X, y, **kw)
    np.testing.assert_array_equal(ours.idata.posterior["beta"].values, ref.idata.posterior["beta"].values)
    draws = est.sample_posterior(X, y, draws=30, chains=1, seed=2)
    np.testing.assert_array_equal(
        draws.posterior["beta"].values,
        paper.sample_posterior(X, y, draws=30, chains=1, seed=2).posterior["beta"].values)


def test_compare_refusal_names_the_generic_and_sampler_estimators(diabetes):
    """An estimator without ``posterior_model`` is refused by a message naming those that have one: the
    generic estimators and every paper and sampler estimator (each a generic one with its method fixed)."""
    from sklearn.linear_model import LinearRegression

    import sparsebayes
    from sparsebayes.inference import GibbsClassifier, GibbsRegressor, NutsClassifier, NutsRegressor

    X, y = diabetes
    with pytest.raises(ValueError, match="compare supports") as err:
        sparsebayes.compare(LinearRegression().fit(X, y), X, y)
    named = str(err.value).split(";")[0]
    for cls in (inference.SparseRegressor, inference.SparseClassifier, GibbsRegressor, GibbsClassifier, NutsRegressor, NutsClassifier,
                inference.AdaptiveSparseRegressor, inference.RVMRegressor, inference.SMLRClassifier):
        assert cls.__name__ in named and callable(getattr(cls, "posterior_model", None))
