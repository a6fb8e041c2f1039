"""The posteriors of the multiclass estimators (issue 39).

One-vs-all (the EM probit / logistic classifiers, the Bernoulli RVM, the Gibbs and NUTS classifiers
beyond two classes): ``K`` independent binary posteriors, so class ``k``'s draws must be those of the
binary twin of the ``k``-vs-rest problem at that class's seed, the stored log-likelihood the sum of the
``K`` binary terms (checked against scipy's densities at the draws) and the predictive class
probabilities the estimator's normalized one-vs-all rule at each draw. SMLR: its twin's log density
minus the SMLR objective is constant in the weights (model = solver).
"""
import numpy as np
import pytest
import scipy.special
from multiclass_data import CLASSES, SMALL, three_classes
import scipy.stats
from sklearn.base import clone

import sparsebayes  # noqa: F401  (float64)
from sparsebayes.inference import (
    GibbsClassifier,
    NutsClassifier,
    RVMClassifier,
    SMLRClassifier,
    SparseProbitClassifier,
)
from sparsebayes.inference.posterior.arviz_compat import has_group
from sparsebayes.inference.posterior.pointwise_loglik import ensure_log_likelihood
from sparsebayes.inference.posterior.posterior_sampling import same_layout
from sparsebayes.inference.posterior.twin_one_vs_all import CLASS_DIM, class_seed, normalized_log_probabilities
from sparsebayes.inference.posterior.twin_posterior import sample_posterior

#: (estimator, surrogate_eps): the one-vs-all estimators, small sampler settings for the sampling ones.
ONE_VS_ALL = {
    "probit-em": (lambda: SparseProbitClassifier(prior="laplace"), None),
    "logistic-em": (lambda: SparseProbitClassifier(prior="laplace", link="logistic"), None),
    "rvm": (lambda: RVMClassifier(), 1e-2),
    "gibbs": (lambda: GibbsClassifier(**SMALL), None),
    "nuts": (lambda: NutsClassifier(**SMALL), None),
}


@pytest.fixture(scope="module")
def data():
    return three_classes()


@pytest.fixture(scope="module")
def fitted(data):
    """``fitted(name)``: the estimator ``name`` of :data:`ONE_VS_ALL` fitted on ``data``, once per module."""
    X, y = data
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = ONE_VS_ALL[name][0]().fit(X, y)
        return cache[name]
    return get


def _squeeze_weights(idata):
    beta = idata.posterior["beta"]
    return np.asarray(beta.transpose("chain", "draw", ...).values).reshape(beta.sizes["chain"], beta.sizes["draw"], -1)


@pytest.mark.parametrize("name, sampler", [
    ("probit-em", "nuts"), ("probit-em", "gibbs"),
    pytest.param("logistic-em", "nuts", marks=pytest.mark.slow), pytest.param("rvm", "nuts", marks=pytest.mark.slow),
    pytest.param("gibbs", "gibbs", marks=pytest.mark.slow), pytest.param("nuts", "nuts", marks=pytest.mark.slow)])
def test_class_k_draws_are_the_binary_twins_of_k_vs_rest(data, fitted, name, sampler):
    X, y = data
    est, eps = fitted(name), ONE_VS_ALL[name][1]
    draws = est.sample_posterior(X, y, sampler, draws=15, chains=1, seed=3, surrogate_eps=eps)
    beta = draws.posterior["beta"]
    assert beta.dims == ("chain", "draw", CLASS_DIM, "basis")
    assert list(beta.coords[CLASS_DIM].values) == list(CLASSES)
    loglik = 0.0
    for k, c in enumerate(CLASSES):
        binary = clone(est).fit(X, y == c)
        alone = binary.sample_posterior(X, y == c, sampler, draws=15, chains=1, seed=class_seed(3, k),
                                        surrogate_eps=eps)
        np.testing.assert_array_equal(beta.sel({CLASS_DIM: c}).values, _squeeze_weights(alone))
        if "intercept" in alone.posterior:
            np.testing.assert_array_equal(draws.posterior["intercept"].sel({CLASS_DIM: c}).values,
                                          alone.posterior["intercept"].values)
        loglik = loglik + alone.log_likelihood["y"].values
    # the stored log-likelihood of a row: the sum of its K binary terms
    np.testing.assert_allclose(draws.log_likelihood["y"].values, loglik, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(draws.observed_data["y"].values, np.searchsorted(CLASSES, y))


@pytest.mark.parametrize("name", ["probit-em", pytest.param("rvm", marks=pytest.mark.slow)])
def test_one_vs_all_layout_is_the_point_estimates(data, fitted, name):
    X, y = data
    est, eps = fitted(name), ONE_VS_ALL[name][1]
    draws = est.sample_posterior(X, y, draws=15, chains=1, surrogate_eps=eps)
    assert same_layout(est.to_inference_data().posterior, draws.posterior, "beta")
    assert len(set(class_seed(0, k) for k in range(50))) == 50  # distinct seeds per class


def test_probit_one_vs_all_log_likelihood_and_predictions_against_scipy(data, fitted):
    X, y = data
    est = fitted("probit-em")
    X_test, y_test = three_classes(n=12, seed=1)
    idata = sample_posterior(est, X, y, seed=1, X_test=X_test, y_test=y_test, **SMALL)
    beta = idata.posterior["beta"].transpose("chain", "draw", CLASS_DIM, "basis").values[0]  # (S, K, p)
    H, H_test = est.feature_map_.transform(X), est.feature_map_.transform(X_test)
    eta = np.einsum("skp,np->snk", beta, H)
    t = (y[:, None] == CLASSES[None, :])
    expected = scipy.stats.norm.logcdf(np.where(t, eta, -eta)).sum(axis=-1)
    np.testing.assert_allclose(idata.log_likelihood["y"].values[0], expected, rtol=1e-9)
    # predictions: the normalized one-vs-all probabilities at each draw, and the held-out class's log
    p = scipy.stats.norm.cdf(np.einsum("skp,np->snk", beta, H_test))
    p /= p.sum(axis=-1, keepdims=True)
    pred = idata.predictions
    np.testing.assert_allclose(pred["prob"].values[0], p, rtol=1e-9)
    code = np.searchsorted(CLASSES, y_test)
    np.testing.assert_allclose(pred["log_lik"].values[0], np.log(p[:, np.arange(len(code)), code]), rtol=1e-9)
    # the rule is the estimator's own: at the point estimate it is predict_proba
    log_f = scipy.stats.norm.logcdf(H_test @ est.beta_.T)
    np.testing.assert_allclose(normalized_log_probabilities(log_f), est.predict_log_proba(X_test), rtol=1e-10)
    # the posterior predictive: class codes
    rep = idata.posterior_predictive["y"].values
    assert rep.shape == (1, 15, len(y)) and set(np.unique(rep)) <= {0.0, 1.0, 2.0}


def test_one_vs_all_log_likelihood_computed_when_asked_is_the_stored_one(data, fitted):
    X, y = data
    est = fitted("probit-em")
    kept = sample_posterior(est, X, y, seed=2, **SMALL)
    later = sample_posterior(est, X, y, seed=2, log_likelihood=False, **SMALL)
    assert not has_group(later, "log_likelihood")
    np.testing.assert_allclose(ensure_log_likelihood(later)["y"].values, kept.log_likelihood["y"].values,
                               rtol=1e-10)


def test_one_vs_all_refuses_labels_outside_its_classes(data, fitted):
    X, y = data
    with pytest.raises(ValueError, match="labels among the classifier's classes"):
        fitted("probit-em").sample_posterior(X, np.where(y == "a", "z", y), draws=5, chains=1)


def test_smlr_twin_log_density_minus_objective_is_constant(data):
    """Model = solver: the NumPyro twin of a fitted SMLR classifier, on the record's design and targets,
    has the log density of the bound engine's objective (003 eq. 2 minus λ‖w‖₁) up to a constant in W,
    and that objective at the fit's weights is the fit's ``objective_``."""
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    from sparsebayes.models.likelihoods.multinomial import log_posterior, one_hot_reference

    X, y = data
    est = SMLRClassifier(lam=0.7).fit(X, y)
    t = est.posterior_model(X, y)
    Y1 = one_hot_reference(t.y, len(CLASSES))
    W_fit = est._penalized_coef()
    objective = float(log_posterior(jnp.asarray(W_fit), jnp.asarray(t.H), Y1, est.prior_))
    np.testing.assert_allclose(objective, est.objective_, rtol=1e-10)
    rng = np.random.default_rng(0)
    diffs = []
    for W in [W_fit] + [rng.normal(scale=s, size=W_fit.shape) for s in (0.1, 1.0, 3.0, 10.0)]:
        lp, _ = log_density(t.model, (t.H, t.y), t.kwargs, {t.weight_site: jnp.asarray(W)})
        diffs.append(float(lp) - float(log_posterior(jnp.asarray(W), jnp.asarray(t.H), Y1, est.prior_)))
    np.testing.assert_allclose(diffs, diffs[0], rtol=0, atol=1e-8)
    # and the twin's weights at the fit are the point estimate's
    point = est.to_inference_data().posterior["beta"].values[0, 0]
    np.testing.assert_allclose(t.to_weights(W_fit), point, rtol=1e-12, atol=1e-12)
