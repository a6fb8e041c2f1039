"""The generic estimators inherit every route's fitted methods (their route classes are all bases):
a route's own public method answers only after a fit by that route (``fitted_by``), the unfitted
``posterior_model`` is the one ``fit`` would build, and no route's private state outlives the fit that
set it."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sparsebayes.models.likelihoods import make_likelihood

from sparsebayes.inference.estimators.gibbs_estimators import GibbsRegressor
from sparsebayes.inference.estimators.poisson_rvm import PoissonRVMRegressor
from sparsebayes.inference.estimators.smlr import SMLRClassifier
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier, SparseRegressor

FEW = dict(num_warmup=20, num_samples=30, num_chains=2, seed=4, rhat_max=np.inf)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.5, 0.0, -1.0]) + 0.3 * rng.normal(size=40)
    labels = (X[:, 0] - X[:, 2] + 0.3 * rng.normal(size=40) > 0).astype(int)
    counts = rng.poisson(np.exp(0.5 + 0.4 * X[:, 0]))
    return X, y, labels, counts


#: (estimator, the route methods it has) of every guarded method: hidden before a fit
ROUTE_METHODS = {"summary": ("gibbs", "nuts", "bayesian_lasso"), "predict_log_rate": ("typeii_laplace",),
                 "laplace_covariance": ("map",), "generalization_bounds": ("map",)}


@pytest.mark.parametrize("est", [SparseRegressor(), SparseClassifier(), GibbsRegressor(), SMLRClassifier(),
                                 PoissonRVMRegressor()], ids=lambda e: type(e).__name__)
def test_unfitted_estimators_hide_route_methods(est):
    for name in ROUTE_METHODS:
        assert not hasattr(est, name), name


def test_em_fit_has_no_other_routes_methods(data):
    X, y, labels, _ = data
    reg = SparseRegressor(method="em").fit(X, y)
    assert not hasattr(reg, "summary")  # was NotFittedError (no draws)
    assert not hasattr(reg, "predict_log_rate")
    clf = SparseClassifier(method="em").fit(X, labels)
    assert not hasattr(clf, "laplace_covariance") and not hasattr(clf, "generalization_bounds")
    assert hasattr(reg, "gaussian_conditional")


def test_gibbs_fit_has_summary_not_log_rate(data):
    X, y, _, _ = data
    est = SparseRegressor(method="gibbs", prior="laplace", options=FEW).fit(X, y)
    assert not hasattr(est, "predict_log_rate")  # was H @ beta_ without the intercept
    assert est.summary().shape[0] == X.shape[1]
    paper = GibbsRegressor(prior="laplace", **FEW).fit(X, y)
    assert paper.summary().shape[0] == X.shape[1]


def test_map_then_em_refit_hides_bounds(data):
    X, _, labels, _ = data
    est = SparseClassifier(method="map", prior="laplace").fit(X, labels)
    assert hasattr(est, "generalization_bounds")
    est.set_params(method="em").fit(X, labels)
    assert not hasattr(est, "generalization_bounds")  # was AttributeError from inside the method
    assert not hasattr(est, "laplace_covariance")


def test_paper_subclasses_keep_their_methods(data):
    X, _, labels, counts = data
    smlr = SMLRClassifier(penalty="l1", lam=1.0).fit(X, labels)
    bounds = smlr.generalization_bounds(X, labels, n_draws=50)
    assert bounds is not None
    rvm = PoissonRVMRegressor().fit(X, counts)
    # the oracle: the log of the predicted mean count
    np.testing.assert_allclose(np.exp(rvm.predict_log_rate(X)), rvm.predict(X), rtol=1e-12)
    assert not hasattr(rvm, "summary") and not hasattr(smlr, "summary")


#: one estimator per route of the generic estimators (and the Bayesian Lasso's paper class)
def _route_estimators():
    from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor

    return {"em": SparseRegressor(method="em"), "typeii": SparseRegressor(method="type2"),
            "typeii_laplace": SparseRegressor(method="type2", likelihood="poisson"),
            "map": SparseClassifier(method="map", prior="laplace"),
            "gibbs": SparseRegressor(method="gibbs", prior="laplace"),
            "nuts": SparseRegressor(method="nuts", prior="laplace"),
            "gibbs_classifier": SparseClassifier(method="gibbs"),
            "bayesian_lasso": BayesianLassoRegressor()}


@pytest.mark.parametrize("route", list(_route_estimators()))
def test_unfitted_posterior_model(route, data):
    est = _route_estimators()[route]
    X, y = data[0], data[1]
    with pytest.raises(NotFittedError):
        est.posterior_model(X, y)  # was AttributeError (em, type2, map, ...)
    record = est.posterior_model()  # was NotFittedError (gibbs, nuts)
    assert getattr(record, "point", None) is None  # the model, no fit's point
    assert getattr(record, "likelihood", None) is None or record.likelihood.name == (
        "probit" if isinstance(est, SparseClassifier) and route != "map" else make_likelihood(est.likelihood).name)


@pytest.mark.parametrize("classifier", [False, True])
def test_unfitted_sampling_record_is_the_fitted_ones_without_its_point(classifier, data):
    X, y, labels, _ = data
    est = (SparseClassifier(method="gibbs", options=FEW) if classifier else
           SparseRegressor(method="gibbs", prior="laplace", options=FEW))
    unfitted = est.posterior_model()
    fitted = est.fit(X, labels if classifier else y).posterior_model()
    assert sorted(vars(unfitted)) == sorted(vars(fitted))
    assert type(unfitted.likelihood) is type(fitted.likelihood) and unfitted.likelihood.name == fitted.likelihood.name
    assert (unfitted.gibbs is None) == (fitted.gibbs is None)
    assert unfitted.point is None and fitted.point is not None


class _FailingMap:
    """A transformer whose ``fit`` fails: a MAP fit that fails after its data were validated."""

    def fit(self, X, y=None):
        raise RuntimeError("this map cannot fit")

    def transform(self, X):
        return X

    def fit_transform(self, X, y=None):
        return self.fit(X, y).transform(X)

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self


def test_failed_map_fit_leaves_no_training_digest(data):
    X, _, labels, _ = data
    est = SparseClassifier(method="map", prior="laplace").fit(X, labels)
    est.set_params(features=_FailingMap())
    with pytest.raises(RuntimeError, match="cannot fit"):
        est.fit(X[:30], labels[:30])
    assert not [k for k in vars(est) if "digest" in k]  # the failed fit's inputs' digest was kept


def test_warm_start_resumes_from_the_last_fit_only(data):
    X, _, labels, _ = data
    warm = {"warm_start": True, "lam": 0.5}
    cold = SparseClassifier(method="map", prior="laplace", options=warm).fit(X, labels)
    est = SparseClassifier(method="map", prior="laplace", options=warm).fit(X, labels)
    est.fit(X, labels)  # map -> map: from the previous weights, the oracle that warm start is on
    assert est.n_iter_ < cold.n_iter_
    est.set_params(method="em", options=None, prior="laplace").fit(X, labels)
    est.set_params(method="map", options=warm).fit(X, labels)  # map -> em -> map: from the start
    assert est.n_iter_ == cold.n_iter_
    np.testing.assert_array_equal(est.coef_, cold.coef_)


def test_bayesian_lasso_marginal_setup_through_the_generic_estimator():
    """No fit: the generic estimator's set-up of a Bayesian Lasso fit is the paper class's (the oracle)."""
    from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor
    from sparsebayes.models.priors.typeii import ScaledLaplacePrior

    chains = dict(num_warmup=30, num_samples=30, num_chains=1, seed=2, rhat_max=np.inf)
    paper = BayesianLassoRegressor(sampler="nuts-marginal", lam2_rate=2.5, **chains)
    prior = ScaledLaplacePrior(a=1.0, b=2.5, c=0.0, d=0.0)  # what the paper class's prior_ is
    generic = SparseRegressor(method="nuts", prior=prior, options={"sampler": "nuts-marginal", **chains})
    assert generic._route() == "bayesian_lasso"
    assert generic._bayesian_lasso_setup() == paper._bayesian_lasso_setup()  # was "options ['sampler'] are set by"
    with pytest.raises(ValueError, match="not a sampler of method='gibbs'"):
        SparseRegressor(method="gibbs", prior=prior, options={"sampler": "nuts-marginal"})._bayesian_lasso_setup()
    with pytest.raises(ValueError, match="sampler must be"):
        SparseRegressor(method="nuts", prior=prior, options={"sampler": "bogus"})._bayesian_lasso_setup()


@pytest.mark.slow
def test_bayesian_lasso_marginal_refits_through_the_generic_estimator(data):
    from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor

    X, y, _, _ = data
    chains = dict(num_warmup=30, num_samples=30, num_chains=1, seed=2, rhat_max=np.inf)
    paper = BayesianLassoRegressor(sampler="nuts-marginal", **chains).fit(X, y)
    generic = SparseRegressor(method="nuts", prior=paper.prior_, options={"sampler": "nuts-marginal", **chains}).fit(X, y)
    # the oracle: the paper class's draws, the same sampler and seed
    np.testing.assert_array_equal(generic.beta_draws_, paper.beta_draws_)
    np.testing.assert_array_equal(generic.coef_, paper.coef_)
    assert "tau2" not in generic.idata_.posterior  # the marginal, not the mixture
