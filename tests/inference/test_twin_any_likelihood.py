"""The twin of any (hierarchy, likelihood, design) an estimator fits: sampled, compared and scored held-out
by the likelihood's own density, with no estimator-class dispatch.

Each held-out score is recomputed here from the draws by scipy.stats (an oracle independent of the
likelihood objects); NUTS is checked against an exact answer where one is cheap (a Student-t with a very
large ν is the Gaussian model, whose posterior the Gaussian twin gives).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.special import expit, logsumexp

import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.estimators.poisson_rvm import PoissonRVMRegressor
from sparsebayes.inference.posterior.twin_posterior import default_samplers, twin
from sparsebayes.models.likelihoods import LIKELIHOODS, StudentTLikelihood, register_likelihood

TINY = dict(num_warmup=100, num_samples=100, num_chains=1, seed=0, prior_draws=20)


def _regression(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ np.array([1.0, -0.6, 0.0]), rng


def _counts(n=60, seed=1):
    X, eta, rng = _regression(n, seed)
    return X, rng.poisson(np.exp(0.5 + 0.5 * eta)).astype(float)


def _draws(idata, name):
    v = idata.posterior[name]
    return np.asarray(v.values).reshape(-1, *v.shape[2:])


def _logmeanexp(log_dens):
    return np.mean(logsumexp(log_dens, axis=0) - np.log(log_dens.shape[0]))


#: scipy.stats' density of each likelihood, an oracle independent of the likelihood objects.
_DENSITY = {
    "student_t": lambda y, eta, s2: scipy.stats.t.logpdf(y, 4.0, eta, np.sqrt(s2)),
    "negative_binomial": lambda y, eta, r: scipy.stats.nbinom.logpmf(y, r, r / (r + np.exp(eta))),
    "poisson": lambda y, eta, _: scipy.stats.poisson.logpmf(y, np.exp(eta)),
}


def _data(name):
    if name == "student_t":
        X, eta, rng = _regression()
        return X, eta + 0.3 * rng.standard_t(4.0, eta.size)
    if name == "negative_binomial":  # over-dispersed (r = 2): a dispersion far from the Poisson limit
        X, eta, rng = _regression(seed=4)
        mu = np.exp(0.5 + 0.5 * eta)
        return X, rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    return _counts()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_DENSITY))
def test_em_fit_of_another_likelihood_is_sampled_and_compared_with_its_own_density(name):
    """Student-t, negative binomial, Poisson EM fits: ``compare`` samples their twin by NUTS (the t's scale
    and the NB dispersion sampled under the priors the likelihoods declare) and scores the held-out rows by
    the likelihood's density: the point row at the EM fit, the NUTS row over the draws."""
    X, y = _data(name)
    est = AdaptiveSparseRegressor(prior="laplace", gamma=4.0, likelihood=name)
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts",), test_size=0.25, **TINY)
    est, nuts = cmp.estimator, cmp.samples["nuts"]
    assert nuts.posterior["beta"].dims[-1] == "basis" and list(nuts.posterior["beta"].coords["basis"].values) == cmp.names
    assert np.isfinite(compat.elpd_loo(nuts))
    H = np.asarray(est.feature_map_.transform(cmp.X_test), dtype=np.float64)
    own = est.likelihood_.param_name
    beta = _draws(nuts, "beta")
    params = _draws(nuts, own)[:, None] if own else None
    table = cmp.predictive()
    expected = _logmeanexp(_DENSITY[name](cmp.y_test, beta @ H.T, params))
    assert table.loc["nuts", "log_score"] == pytest.approx(expected, rel=1e-9)
    point = np.mean(_DENSITY[name](cmp.y_test, H @ est.beta_, est.likelihood_param_))
    assert table.loc["point estimate", "log_score"] == pytest.approx(point, rel=1e-9)
    assert est.likelihood_.name in cmp.idata.attrs["model"]


@pytest.mark.slow
def test_logistic_classifier_twin_is_the_logistic_model():
    """``SparseProbitClassifier(link="logistic")``: its twin observes ``Bernoulli(σ(η))``; the held-out
    class probabilities of the NUTS row are the draws' ``σ(η)`` averaged."""
    X, eta, rng = _regression(80, 2)
    y = np.where(rng.uniform(size=eta.size) < expit(1.5 * eta), "yes", "no")
    est = SparseProbitClassifier(prior="laplace", gamma=2.0, link="logistic")
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts",), test_size=0.25, **TINY)
    est, nuts = cmp.estimator, cmp.samples["nuts"]
    H = np.asarray(est.feature_map_.transform(cmp.X_test), dtype=np.float64)
    beta = _draws(nuts, "beta").reshape(-1, H.shape[1])
    p1 = expit(beta @ H.T)
    code = (cmp.y_test == est.classes_[1]).astype(float)
    expected = _logmeanexp(scipy.stats.bernoulli.logpmf(code, p1))
    assert cmp.predictive().loc["nuts", "log_score"] == pytest.approx(expected, rel=1e-9)
    assert "bernoulli_logistic" in cmp.idata.attrs["model"]


@pytest.mark.slow
def test_poisson_rvm_has_a_posterior_and_works_in_compare():
    """The Poisson RVM's twin: its ARD prior on the labelled surrogate ``α_i ~ Gamma(ε, ε)`` (as the RVM
    regressor's), the Poisson likelihood, its fitted design; ``surrogate_eps`` required (the ARD posterior
    is improper); the point row scored by the Poisson density at its mode."""
    X, y = _counts()
    est = PoissonRVMRegressor().fit(X, y)
    with pytest.raises(ValueError, match="surrogate_eps"):
        est.sample_posterior(X, y, draws=10, chains=1)
    idata = est.sample_posterior(X, y, draws=60, warmup=60, chains=1, surrogate_eps=0.1)
    assert {"beta", "beta_raw", "precision_surrogate"} <= set(idata.posterior.data_vars)
    assert idata.posterior["precision_surrogate"].dims[-1] == "basis" and "rvm-poisson" in idata.attrs["model"]
    assert default_samplers(est) == ("nuts",)  # no conjugate augmentation for the Poisson
    cmp = sparsebayes.compare(PoissonRVMRegressor(), X, y, surrogate_eps=0.1, test_size=0.25, **TINY)
    H = np.asarray(cmp.estimator.feature_map_.transform(cmp.X_test), dtype=np.float64)
    point = np.mean(scipy.stats.poisson.logpmf(cmp.y_test, np.exp(H @ cmp.estimator.beta_)))
    assert cmp.predictive().loc["point estimate", "log_score"] == pytest.approx(point, rel=1e-9)
    np.testing.assert_array_equal(cmp.point, cmp.estimator.beta_)


@pytest.mark.slow
def test_student_t_at_large_dof_is_the_gaussian_model():
    """NUTS on the Student-t twin with ν = 10⁶ against the Gaussian twin of the same data and prior (the
    t_ν density tends to the Gaussian: at ν = 10⁶ the log densities differ by < 1e-5 here): posterior means
    of β within 5 Monte Carlo standard errors."""
    X, eta, rng = _regression(80, 3)
    y = eta + 0.5 * rng.standard_normal(eta.size)
    kw = dict(draws=400, warmup=300, chains=2, seed=1)
    gauss = AdaptiveSparseRegressor(prior="laplace", gamma=1.0).fit(X, y).sample_posterior(X, y, **kw)
    t_est = AdaptiveSparseRegressor(prior="laplace", gamma=1.0, likelihood=StudentTLikelihood(df=1e6)).fit(X, y)
    t_draws = t_est.sample_posterior(X, y, **kw)
    bg, bt = _draws(gauss, "beta"), _draws(t_draws, "beta")
    ess = np.minimum(np.asarray(compat.ess(gauss, var_names=["beta"])["beta"].values),
                     np.asarray(compat.ess(t_draws, var_names=["beta"])["beta"].values))
    mcse = np.sqrt((bg.var(axis=0) + bt.var(axis=0)) / ess)
    assert np.all(np.abs(bg.mean(axis=0) - bt.mean(axis=0)) < 5 * mcse), (bg.mean(0), bt.mean(0), mcse)
    # and the σ² of the one against s² ν/(ν − 2) of the other
    s2 = _draws(t_draws, "scale2")
    assert abs(np.mean(_draws(gauss, "noise_var")) - np.mean(s2)) < 5 * np.sqrt(2 * np.var(s2) / ess.min())


@pytest.mark.slow
def test_a_toy_likelihood_defined_here_is_fitted_sampled_and_compared(monkeypatch):
    """A likelihood class defined in this test (a Student-t under its own name and ν), registered, is fitted
    by EM, sampled by NUTS and compared with no other change: its held-out score is its own density."""
    monkeypatch.setitem(LIKELIHOODS, "toy_t", None)

    @register_likelihood
    class ToyT(StudentTLikelihood):
        name = "toy_t"

    X, y = _data("student_t")
    est = AdaptiveSparseRegressor(prior="laplace", gamma=4.0, likelihood=ToyT(df=7.0))
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts",), test_size=0.25, **TINY)
    assert "toy_t" in cmp.idata.attrs["model"] and "scale2" in cmp.samples["nuts"].posterior
    H = np.asarray(cmp.estimator.feature_map_.transform(cmp.X_test), dtype=np.float64)
    nuts = cmp.samples["nuts"]
    log_dens = scipy.stats.t.logpdf(cmp.y_test, 7.0, _draws(nuts, "beta") @ H.T,
                                    np.sqrt(_draws(nuts, "scale2"))[:, None])
    assert cmp.predictive().loc["nuts", "log_score"] == pytest.approx(_logmeanexp(log_dens), rel=1e-9)


def test_the_twin_is_built_from_the_hook_not_the_class():
    """Any object with ``posterior_model`` is a model ``twin`` can build: a stand-in estimator (no class of
    the suite) whose hook returns the record of a sparse model is sampled as it says."""
    from sklearn.base import BaseEstimator

    from sparsebayes.inference.posterior.posterior_model import sparse_posterior_model
    from sparsebayes.models.likelihoods import PoissonLikelihood
    from sparsebayes.models.priors import LaplacePrior

    X, y = _counts()

    class Stand(BaseEstimator):
        def fit(self, X, y):
            self.fitted_ = True
            return self

        def posterior_model(self, X=None, y=None, **_):
            return sparse_posterior_model(LaplacePrior(2.0), PoissonLikelihood(), X, y,
                                          names=[f"x{j}" for j in range(3)] if X is not None else None)

    t = twin(Stand().fit(X, y), X, y)
    assert t.kwargs["likelihood"] == PoissonLikelihood() and t.kwargs["marginal"] and t.gibbs is None
    with pytest.raises(ValueError, match="compare supports"):
        twin(object(), X, y)


@pytest.mark.slow
def test_twins_of_equal_field_likelihoods_sample_their_own_models():
    """The probit and logistic likelihoods are equal as (empty) tuples: their twins sampled one after the other
    on the same shapes (run_nuts keeps compiled programs by argument values) each sample their own model:
    the draws' pointwise log likelihood is the fitted likelihood's (scipy's Bernoulli at Φ(η) or σ(η))."""
    X, eta, rng = _regression(60, 6)
    y = (eta + rng.standard_normal(eta.size) > 0).astype(int)
    for link, prob in (("probit", scipy.stats.norm.cdf), ("logistic", expit)):
        est = SparseProbitClassifier(prior="laplace", gamma=1.0, link=link).fit(X, y)
        idata = est.sample_posterior(X, y, draws=30, warmup=30, chains=1)
        H = np.asarray(est.feature_map_.transform(X), dtype=np.float64)
        beta = np.asarray(idata.posterior["beta"].values).reshape(-1, H.shape[1])
        expected = scipy.stats.bernoulli.logpmf(y, prob(beta @ H.T))
        np.testing.assert_allclose(np.asarray(idata.log_likelihood["y"].values).reshape(expected.shape), expected,
                                   rtol=1e-8, atol=1e-10)
