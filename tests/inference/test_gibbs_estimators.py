"""The sampling estimators (GibbsRegressor / GibbsClassifier, NutsRegressor / NutsClassifier) and their
wiring into SparseRegressor / SparseClassifier.

Oracles: with one input the posterior mean and sd of β are one- or two-dimensional integrals, computed
here by quadrature (scipy) from the model's densities written out independently of the package: the
Gaussian likelihood with the flat intercept and flat σ² integrated out (``p(β | y) ∝ p(β) R(β)^{-(n-3)/2}``,
``R`` the centred residual sum of squares), the Laplace, Laplace-with-Gamma-γ and horseshoe priors
(``p(β) ∝ eˣE₁(x)``, ``x = β²/2τ²``), the logistic likelihood with ``b₀ ~ N(0, 10²)``. The draws' mean
and sd must lie within 4 Monte Carlo standard errors. Slow: Gibbs against NUTS on the same model with
three inputs, for several (hierarchy, likelihood) pairs.
"""
import warnings

import numpy as np
import pytest
from public_estimators import assert_fit_refused
from scipy import integrate, special, stats

import sparsebayes.inference.posterior.arviz_compat as arviz_compat
from sparsebayes.inference import SparseClassifier, SparseRegressor
from sparsebayes.inference.engines import hierarchy_gibbs
from sparsebayes.inference.estimators.gibbs_estimators import GibbsClassifier, GibbsRegressor
from sparsebayes.models import HorseshoePrior, LaplacePrior
from sparsebayes.models.likelihoods import PoissonLikelihood, StudentTLikelihood

DRAWS = dict(num_warmup=500, num_samples=2500, num_chains=4, seed=3)


@pytest.fixture(scope="module")
def one_input():
    rng = np.random.default_rng(11)
    x = rng.normal(size=15)
    return x[:, None], 0.5 + 0.45 * x + rng.normal(size=15)


def _moments(log_density, lo, hi):
    """Mean and sd of the density ``exp(log_density)`` on [lo, hi] by adaptive quadrature (0 a break point)."""
    peak = max(log_density(t) for t in np.linspace(lo, hi, 401))
    f = [integrate.quad(lambda t: t**k * np.exp(log_density(t) - peak), lo, hi, points=[0.0], limit=400,
                        epsabs=0, epsrel=1e-10)[0] for k in range(3)]
    mean = f[1] / f[0]
    return mean, np.sqrt(f[2] / f[0] - mean**2)


def _gaussian_log_lik(X, y):
    """``log ∫∫ p(y | b₀, β, σ²) db₀ dσ²`` with flat priors: ``−(n−3)/2 log R(β)``."""
    xc, yc, n = X[:, 0] - X[:, 0].mean(), y - y.mean(), y.size
    return lambda b: -0.5 * (n - 3) * np.log(np.sum((yc - xc * b) ** 2))


def _log_horseshoe(b, tau):
    x = b * b / (2 * tau * tau)
    return np.log(special.exp1(x)) + x


def _log_laplace_gamma(b, a, rate):
    """``log ∫ (√γ/2) e^{−√γ|b|} Gamma(γ | a, rate) dγ``."""
    return np.log(integrate.quad(lambda g: 0.5 * np.sqrt(g) * np.exp(-np.sqrt(g) * abs(b)) *
                                 stats.gamma.pdf(g, a, scale=1 / rate), 0, np.inf, limit=200)[0])


def _mcse_mean(draws):
    """``sd/√ESS`` of draws (chain, draw) (ArviZ's MCSE of the mean)."""
    idata = arviz_compat.from_dict({"posterior": {"v": draws}})
    return float(np.std(draws) / np.sqrt(float(arviz_compat.ess(idata, method="mean")["v"])))


def _within_mcse(idata, mean, sd, var="beta"):
    """The draws' mean within 4 MCSE of ``mean``, their sd within 4 MCSE of ``sd`` (the MCSE of the
    variance, the mean of ``(β − β̄)²``, by the delta method)."""
    draws = np.asarray(idata.posterior[var])[..., 0]
    centred2 = (draws - draws.mean()) ** 2
    assert abs(draws.mean() - mean) < 4 * _mcse_mean(draws), (draws.mean(), mean, _mcse_mean(draws))
    mcse_sd = _mcse_mean(centred2) / (2 * draws.std())
    assert abs(draws.std() - sd) < 4 * mcse_sd, (draws.std(), sd, mcse_sd)


@pytest.mark.parametrize("prior, log_prior", [
    (LaplacePrior(2.0), lambda b: -np.sqrt(2.0) * abs(b)),
    (HorseshoePrior(0.3), lambda b: _log_horseshoe(b, 0.3)),
    (LaplacePrior(1.0, gamma_prior=(2.0, 1.0)), lambda b: _log_laplace_gamma(b, 2.0, 1.0)),
], ids=["laplace", "horseshoe", "laplace-gamma-estimated"])
def test_gaussian_gibbs_posterior_equals_quadrature(one_input, prior, log_prior):
    X, y = one_input
    est = SparseRegressor(method="gibbs", prior=prior, options=dict(DRAWS, rhat_max=1.02)).fit(X, y)
    assert est._route_ == "gibbs"  # the sampling core
    log_lik = _gaussian_log_lik(X, y)
    mean, sd = _moments(lambda b: log_prior(b) + log_lik(b), -4.0, 5.0)
    _within_mcse(est.to_inference_data(), mean, sd)
    assert est.coef_.shape == (1,) and np.isfinite(est.intercept_)
    assert est.coef_[0] == pytest.approx(np.median(est.beta_draws_))


def test_logistic_gibbs_posterior_equals_quadrature(one_input):
    """Two unknowns (b₀ ~ N(0, 10²), β ~ Laplace(0, 1)): the marginal of β on a 2-D grid (trapezoid in
    b₀, quadrature-accurate for the smooth integrand), against the Pólya-Gamma Gibbs draws."""
    X, _ = one_input
    rng = np.random.default_rng(4)
    x = rng.normal(size=40)
    t = (rng.uniform(size=40) < special.expit(0.3 + 1.2 * x)).astype(float)
    est = SparseClassifier(method="gibbs", prior="laplace", link="logistic", options=dict(DRAWS, rhat_max=1.02))
    est.fit(x[:, None], t)
    assert est._route_ == "gibbs"
    b0 = np.linspace(-6, 6, 1201)

    xc = x - x.mean()  # the basis: the input centred at its training mean, b₀ the value there

    def log_marginal(b):
        eta = b0[:, None] + b * xc[None, :]
        ll = np.sum(t * eta - np.logaddexp(0, eta), axis=1) + stats.norm.logpdf(b0, 0, 10)
        return special.logsumexp(ll) + np.log(b0[1] - b0[0]) - abs(b)

    mean, sd = _moments(log_marginal, -3.0, 6.0)
    _within_mcse(est.to_inference_data(), mean, sd)
    p = est.predict_proba(x[:5, None])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    draws = est.beta_draws_[0, :, 0], est.intercept_draws_[0]
    np.testing.assert_allclose(p[:, 1], special.expit(draws[1][None, :] + xc[:5, None] * draws[0][None, :]).mean(axis=1),
                               rtol=1e-10)


def test_the_estimator_runs_the_engine(one_input):
    """The same draws as hierarchy_gibbs.run on the same hierarchy, likelihood and seed (Student-t) and the
    inputs centred at their mean (the estimator's basis, ``standardize=True``)."""
    X, y = one_input
    kw = dict(num_warmup=50, num_samples=100, num_chains=2, seed=5)
    est = SparseRegressor(method="gibbs", prior="laplace", likelihood=StudentTLikelihood(df=3.0),
                          options=dict(kw, rhat_max=np.inf)).fit(X, y)
    states, _ = hierarchy_gibbs.run(X - X.mean(axis=0), y, LaplacePrior(1.0), likelihood=StudentTLikelihood(df=3.0),
                                    progress_bar=False, **kw)
    np.testing.assert_array_equal(est.beta_draws_, np.asarray(states.beta).reshape(-1, 1))
    np.testing.assert_array_equal(est.to_inference_data().posterior["scale2"].values, np.asarray(states.param))
    assert est.likelihood_param_ == pytest.approx(np.median(states.param))
    assert est.to_inference_data().posterior["beta"].dims[-1] == "basis"
    # the fit's model record: sample_posterior (Gibbs, the fit's shapes) on to_inference_data's layout
    again = est.sample_posterior(X, y, "gibbs", draws=100, chains=2, warmup=50, seed=5)
    assert again.posterior["beta"].dims[-1] == "basis" and "scale2" in again.posterior


@pytest.mark.parametrize("kw, route", [
    (dict(method="em", prior="laplace", likelihood="student_t"), "em"),
    (dict(method="type2", prior="ard", likelihood="poisson"), "typeii_laplace"),
    (dict(method="gibbs", prior=HorseshoePrior(0.5, tau_prior=1.0), likelihood="gaussian",
          options=dict(num_warmup=50, num_samples=100, num_chains=2, rhat_max=np.inf)), "gibbs"),
])
def test_prior_and_likelihood_refit_the_model(one_input, kw, route):
    X, y = one_input
    if kw["likelihood"] == "poisson":
        y = np.random.default_rng(0).poisson(np.exp(0.3 + 1.0 * X[:, 0])).astype(float)
    est = SparseRegressor(**kw).fit(X, y)
    again = SparseRegressor(method=kw["method"], prior=est.prior_, likelihood=est.likelihood_,
                            options=kw.get("options")).fit(X, y)
    # each fitted by its route's core
    assert est._route_ == again._route_ == route
    assert again.likelihood_ == est.likelihood_ and again.prior_ == est.prior_
    np.testing.assert_array_equal(again.coef_, est.coef_)
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def test_every_fit_names_its_likelihood(one_input):
    X, y = one_input
    assert SparseRegressor(method="type2").fit(X, y).likelihood_.name == "gaussian"
    t = (X[:, 0] + 0.3 * np.random.default_rng(2).normal(size=X.shape[0]) > 0).astype(int)
    est = SparseClassifier(method="em", link="logistic").fit(X, t)
    assert est.likelihood_.name == "bernoulli_logistic"
    again = SparseClassifier(method="em", link=est.likelihood_).fit(X, t)
    np.testing.assert_array_equal(again.coef_, est.coef_)


@pytest.mark.parametrize("est, words", [
    (SparseRegressor(method="gibbs", prior="horseshoe", likelihood="poisson"), ["Poisson", "conjugate", "nuts"]),
    (SparseRegressor(method="type2", likelihood="student_t"), ["RVMRegressor", "'student_t'", "method='em'",
                                                                "method='gibbs'"]),
    (SparseRegressor(method="gibbs", prior="scaled_laplace", likelihood="student_t"),
     ["BayesianLassoRegressor", "'gaussian'", "'student_t'"]),
    (SparseRegressor(likelihood="probit"), ["models labels", "SparseClassifier"]),
    (SparseRegressor(likelihood="cauchy"), ["likelihood must be one of", "cauchy"]),
    (SparseRegressor(method="em", likelihood=PoissonLikelihood(), options={"likelihood": "gaussian"}),
     ["set by prior= and method="]),
    (SparseRegressor(method="gibbs", prior="jeffreys"), ["JeffreysPrior", "Gibbs conditionals", "'horseshoe'"]),
    (SparseClassifier(method="map", link="probit"), ["SMLRClassifier", "'probit'", "method='em'"]),
    (SparseClassifier(method="gibbs", link="poisson"), ["link must be"]),
    (SparseClassifier(method="nuts", prior="ard"), ["ARDPrior", "NumPyro"]),
])
def test_pairs_no_engine_fits_name_the_likelihood_and_the_missing_piece(est, words):
    assert_fit_refused(est, words)


def test_gibbs_classifier_one_vs_all(one_input):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=60), [-0.5, 0.5])
    est = GibbsClassifier(prior=HorseshoePrior(1.0), num_warmup=100, num_samples=200, num_chains=2,
                          rhat_max=np.inf).fit(X, y)
    assert est.coef_.shape == (3, 2) and est.intercept_.shape == (3,)
    p = est.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.mean(est.predict(X) == y) > 0.7
    assert est.to_inference_data(classifier=2).posterior["beta"].shape[-1] == 2
    with pytest.raises(ValueError, match="classifier="):
        est.to_inference_data()


# --- Gibbs against NUTS on the same model -----------------------------------------------------------

PAIRS = [
    (HorseshoePrior(1.0, tau_prior=1.0), "gaussian"),
    (LaplacePrior(1.0), "bernoulli_logistic"),
    (LaplacePrior(1.0, gamma_prior=(2.0, 1.0)), "probit"),
    (LaplacePrior(2.0), "student_t"),
    (LaplacePrior(1.0), "negative_binomial"),
]


@pytest.mark.slow
@pytest.mark.parametrize("prior, likelihood", PAIRS, ids=[f"{p.name}-{lik}" for p, lik in PAIRS])
def test_gibbs_equals_nuts_on_the_same_model(prior, likelihood):
    """GibbsRegressor/Classifier and NutsRegressor/Classifier sample one posterior (the NUTS
    estimators' intercept statement is the Gibbs engine's): every β mean and the intercept's within 4 MCSE."""
    from sparsebayes.inference.estimators.nuts_estimators import NutsClassifier, NutsRegressor

    rng = np.random.default_rng(7)
    n, beta = 80, np.array([1.0, 0.0, -0.5])
    X = rng.normal(size=(n, 3))
    eta = 0.3 + X @ beta
    kw = dict(prior=prior, num_warmup=1000, num_samples=2000, num_chains=4, seed=1, rhat_max=1.02)
    if likelihood in ("probit", "bernoulli_logistic"):
        y = (rng.uniform(size=n) < special.expit(eta)).astype(int)
        link = "probit" if likelihood == "probit" else "logistic"
        gibbs, nuts = GibbsClassifier(link=link, **kw).fit(X, y), NutsClassifier(link=link, **kw).fit(X, y)
    else:
        y = {"gaussian": eta + rng.normal(size=n), "student_t": eta + rng.standard_t(3, size=n),
             "negative_binomial": rng.negative_binomial(3, 3 / (3 + np.exp(eta))).astype(float)}[likelihood]
        gibbs = GibbsRegressor(likelihood=likelihood, **kw).fit(X, y)
        nuts = NutsRegressor(likelihood=likelihood, **kw).fit(X, y)
    az = arviz_compat._az()
    for var in ("beta", "intercept"):
        g, u = gibbs.to_inference_data(), nuts.to_inference_data()
        diff = (np.asarray(g.posterior[var].mean(("chain", "draw")))
                - np.asarray(u.posterior[var].mean(("chain", "draw"))))
        se = np.hypot(np.asarray(az.mcse(g, var_names=[var])[var]), np.asarray(az.mcse(u, var_names=[var])[var]))
        assert np.all(np.abs(diff) < 4 * se), (var, diff, se)


@pytest.mark.slow
def test_nuts_fits_of_two_likelihoods_of_equal_fields_sample_their_own_models():
    """ProbitLikelihood() and BernoulliLogisticLikelihood() compare equal as (empty) tuples, as do
    LaplacePrior(1.0) and HorseshoePrior(1.0): a NUTS fit of one after the other on the same shapes
    must sample its own model: the pointwise log likelihood of the draws is the fitted likelihood's."""
    import jax.numpy as jnp
    from sparsebayes.inference.estimators.nuts_estimators import NutsClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 2))
    t = (X[:, 0] + 0.5 * rng.normal(size=50) > 0).astype(int)
    kw = dict(prior=LaplacePrior(1.0), num_warmup=100, num_samples=100, num_chains=1, rhat_max=np.inf)
    for link in ("probit", "logistic"):
        est = NutsClassifier(link=link, **kw).fit(X, t)
        idata = est.to_inference_data()
        eta = np.asarray(idata.posterior["intercept"])[..., None] + np.einsum(
            "cdp,np->cdn", np.asarray(idata.posterior["beta"]), X - X.mean(axis=0))  # the basis: centred inputs
        np.testing.assert_allclose(np.asarray(idata.log_likelihood["y"]),
                                   np.asarray(est.likelihood_.log_lik(jnp.asarray(t, float), jnp.asarray(eta))),
                                   rtol=1e-10, atol=1e-12)


def test_inputs_offset_by_1e8_taken_as_they_are_give_finite_draws_not_a_nan_fit():
    """Inputs offset by 1e8 taken as they are (``standardize=False``): forming ``HᵀΩH`` rounds away the
    prior precision and its Cholesky factor fails, so the probit β draw falls back to the QR factor
    of ``[Ω^½H; D^-½]`` (``gibbs_beta.rue_draw``; before, the draws were NaN and the fit a
    FloatingPointError): finite weights with no sweep refused (no DegenerateFitWarning), classifying
    the training points as the default (centred) fit does on all but a few."""
    from sparsebayes.inference import GibbsClassifier
    from sparsebayes.inference._warnings import DegenerateFitWarning
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 6))
    y = (Z[:, 0] - Z[:, 1] + 0.3 * rng.standard_normal(30) > 0).astype(int)
    est = GibbsClassifier(num_warmup=50, num_samples=50, num_chains=1, rhat_max=np.inf, standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        est.fit(Z + 1e8, y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.beta_draws_))
    centred = GibbsClassifier(num_warmup=50, num_samples=50, num_chains=1, rhat_max=np.inf).fit(Z + 1e8, y)
    assert np.mean(est.predict(Z + 1e8) == centred.predict(Z + 1e8)) >= 0.9
