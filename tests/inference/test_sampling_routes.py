"""The sampling routes (``method="gibbs"`` / ``"nuts"``) as compositions: the fitting core
(:mod:`sparsebayes.inference.estimators.sampling_fit`) and the fitted methods
(:mod:`sparsebayes.inference.estimators.sampling_fitted`) on the generic estimators, and the paper
classes (GibbsRegressor, GibbsClassifier, NutsRegressor) as their subclasses.

Oracles: a direct dense computation of what the fitted methods answer from the draws (the posterior
predictive mean of the Gaussian, the probit's ``E[Φ(η)]`` by SciPy's normal cdf, the medians' function
in the data's units), NumPy's median / quantiles of the draws, and the paper class against the generic
estimator with the same settings (the same draws for the same seed)."""
import pickle

import numpy as np
import pytest
from scipy import stats

from sparsebayes.inference import SparseClassifier, SparseRegressor
from sparsebayes.inference.estimators.gibbs_estimators import GibbsClassifier, GibbsRegressor
from sparsebayes.inference.estimators.nuts_estimators import NutsRegressor
from sparsebayes.inference.estimators.sampling_fit import SamplerSettings

FEW = dict(num_warmup=30, num_samples=40, num_chains=2, seed=4, rhat_max=np.inf)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 3)) * [1.0, 3.0, 0.5] + [2.0, -1.0, 5.0]
    y = 1.0 + X @ np.array([1.0, 0.0, -2.0]) + 0.5 * rng.normal(size=30)
    return X, y


def test_the_paper_classes_are_the_generic_estimator_with_the_method_fixed(data):
    X, y = data
    paper = GibbsRegressor(prior="laplace", likelihood="student_t", **FEW).fit(X, y)
    generic = SparseRegressor(method="gibbs", prior="laplace", likelihood="student_t", options=FEW).fit(X, y)
    assert isinstance(paper, SparseRegressor) and issubclass(NutsRegressor, SparseRegressor)
    assert issubclass(GibbsClassifier, SparseClassifier)
    for est in (paper, generic):  # fitted by the sampling core, the route recorded
        assert est._route_ == "gibbs"
    for name in ("beta_draws_", "intercept_draws_", "param_draws_", "coef_", "intercept_", "coef_interval_"):
        np.testing.assert_array_equal(getattr(generic, name), getattr(paper, name))
    assert "method" not in paper.get_params() and "options" not in paper.get_params()


def test_the_summaries_are_the_draws_medians_and_the_functions_in_the_data_units(data):
    """``beta_`` the draws' median, ``coef_interval_`` their quantiles in the data's units, and
    ``intercept_ + X coef_`` the medians' function ``b₀ + h(x)ᵀβ`` on the centred basis; ``predict`` the
    posterior predictive mean, ``mean(b₀) + h(x)ᵀ mean(β)``, written out here on the centred inputs."""
    X, y = data
    est = GibbsRegressor(prior="horseshoe", **FEW).fit(X, y)
    np.testing.assert_array_equal(est.beta_, np.median(est.beta_draws_, axis=0))
    h = X - X.mean(axis=0)  # the basis: the inputs centred at their training mean (horseshoe: not scaled)
    b0 = np.median(est.intercept_draws_)
    np.testing.assert_allclose(est.intercept_ + X @ est.coef_, b0 + h @ est.beta_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.coef_interval_, np.quantile(est.beta_draws_, [0.025, 0.975], axis=0),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.predict(X), est.intercept_draws_.mean() + h @ est.beta_draws_.mean(axis=0),
                               rtol=1e-10, atol=1e-10)
    assert est.noise_var_ == est.likelihood_param_ == pytest.approx(np.median(est.param_draws_))
    assert est.n_iter_ == FEW["num_samples"] and est.beta_draws_.shape == (80, 3)


def test_the_probit_classifier_answers_the_draws_mean_probability(data):
    X, y = data
    t = (y > np.median(y)).astype(int)
    est = SparseClassifier(method="gibbs", options=FEW).fit(X, t)  # the samplers' default: probit, Laplace
    assert est._route_ == "gibbs" and est.likelihood_.name == "probit"
    eta = (X - X.mean(axis=0)) @ est.beta_draws_[0].T + est.intercept_draws_[0]
    p = stats.norm.cdf(eta).mean(axis=1)
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], p, rtol=1e-8)
    np.testing.assert_allclose(est.decision_function(X), np.log(p) - np.log1p(-p), rtol=1e-6)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(p > 0.5).astype(int)])


def test_options_are_the_samplers_settings(data):
    X, y = data
    with pytest.raises(ValueError, match=r"options \['max_iter'\] are not parameters of GibbsRegressor"):
        SparseRegressor(method="gibbs", prior="horseshoe", options={"max_iter": 5}).fit(X, y)
    with pytest.raises(ValueError, match=r"options \['c'\] are not parameters of NutsRegressor"):
        SparseRegressor(method="nuts", prior="horseshoe", options={"c": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="num_chains"):
        SparseRegressor(method="gibbs", prior="horseshoe", options={"num_chains": 0}).fit(X, y)
    with pytest.raises(ValueError, match="standardize must be True or False"):
        GibbsRegressor(standardize="yes").fit(X, y)
    assert SamplerSettings("nuts").label == "NUTS"


def test_a_refit_clears_the_draws_of_another_route(data):
    """A sampling fit after an EM fit (and back) leaves none of the other fit's attributes."""
    X, y = data
    est = SparseRegressor(method="gibbs", prior="horseshoe", options=FEW).fit(X, y)
    est.set_params(method="em", options=None).fit(X, y)
    assert not hasattr(est, "beta_draws_") and not hasattr(est, "idata_") and est._route_ == "em"
    est.set_params(method="gibbs", options=FEW).fit(X, y)
    assert not hasattr(est, "objective_") and est._route_ == "gibbs"


def test_a_pickled_fit_keeps_its_draws(data):
    X, y = data
    est = SparseRegressor(method="gibbs", prior="horseshoe", options=FEW).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    np.testing.assert_array_equal(again.to_inference_data().posterior["beta"].values,
                                  est.to_inference_data().posterior["beta"].values)


def test_the_bayesian_lasso_route_draws_park_and_casellas_gibbs_on_the_centred_data(data):
    """``method="gibbs"`` under ``ScaledLaplacePrior`` (and ``BayesianLassoRegressor``, its subclass) fits by
    the Bayesian Lasso's core: the draws are the engine's ``sample_gibbs`` on the centred data at the same
    seed, the summaries their median / mean, and the fit's model record carries the object's hyperpriors."""
    from sparsebayes.inference import BayesianLassoRegressor
    from sparsebayes.inference.engines.bayesian_lasso import sample_gibbs
    from sparsebayes.models import ScaledLaplacePrior

    X, y = data
    kw = dict(num_warmup=30, num_samples=40, num_chains=2, seed=4, rhat_max=np.inf)
    prior = ScaledLaplacePrior(a=2.0, b=0.5, c=1.0, d=0.1)
    est = SparseRegressor(method="gibbs", prior=prior, options=kw).fit(X, y)
    assert est._route_ == "bayesian_lasso" and est.prior_ == prior
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    draws = sample_gibbs(Xc, yc, lam2_shape=2.0, lam2_rate=0.5, c=1.0, d=0.1, num_warmup=30, num_samples=40,
                         num_chains=2, seed=4, progress_bar=False)
    np.testing.assert_array_equal(est.beta_draws_, np.asarray(draws.posterior["beta"]).reshape(-1, 3))
    np.testing.assert_array_equal(est.coef_, np.median(est.beta_draws_, axis=0))
    np.testing.assert_allclose(est.predict(X), y.mean() + Xc @ est.beta_draws_.mean(axis=0), rtol=1e-10)
    paper = BayesianLassoRegressor(lam2_shape=2.0, lam2_rate=0.5, c=1.0, d=0.1, **kw).fit(X, y)
    assert isinstance(paper, SparseRegressor) and paper._route_ == "bayesian_lasso"
    np.testing.assert_array_equal(paper.beta_draws_, est.beta_draws_)
    record, again = est.posterior_model(X, y), paper.posterior_model(X, y)
    assert record.kwargs == again.kwargs == dict(lam2_shape=2.0, lam2_rate=0.5, c=1.0, d=0.1)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).to_inference_data().posterior["beta"].values,
                                  est.to_inference_data().posterior["beta"].values)
    with pytest.raises(ValueError, match="fits the 'gaussian' likelihood only, not 'student_t'"):
        SparseRegressor(method="nuts", prior=prior, likelihood="student_t").fit(X, y)
