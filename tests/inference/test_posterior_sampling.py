"""``est.sample_posterior(X, y)``: the posterior of the fitted estimator's own model, named as its point estimate."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from sparsebayes.inference import (
    AdaptiveSparseRegressor,
    BayesianLassoRegressor,
    RVMClassifier,
    SMLRClassifier,
    SparseProbitClassifier,
)
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin, same_layout
from sparsebayes.models import HorseshoePrior

TINY = dict(draws=60, chains=2, seed=1)
GROUPS = ("posterior", "sample_stats", "log_likelihood", "observed_data", "posterior_predictive")


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["height", "load", "idle"])
    return X, 1.0 + 2.0 * X["height"] - X["load"] + 0.5 * rng.normal(size=n)


def _check_layout(est, idata):
    point = est.to_inference_data().posterior
    name = idata.attrs["weights"]
    assert name in point and same_layout(point, idata.posterior, name)
    for group in GROUPS:
        assert compat.has_group(idata, group), group
    assert idata.posterior[name].dtype == np.float64


@pytest.mark.slow
def test_horseshoe_regressor_gibbs_is_its_own_model_on_its_names():
    """Gibbs on the fitted design: names as ``to_inference_data``'s, and the pointwise log likelihood
    at a draw is N(y | Hβ, σ²) on the estimator's own (standardized) design, by scipy."""
    X, y = _data()
    est = AdaptiveSparseRegressor(prior=HorseshoePrior()).fit(X, y)
    idata = est.sample_posterior(X, y, "gibbs", **TINY)
    _check_layout(est, idata)
    assert list(idata.posterior.beta.basis.values) == ["bias", "height", "load", "idle"]
    assert idata.posterior.beta.shape == (2, 60, 4) and idata.attrs["sampler"] == "gibbs"
    H = est.feature_map_.transform(X.to_numpy())
    beta, s2 = idata.posterior.beta.values[1, 7], float(idata.posterior.noise_var.values[1, 7])
    np.testing.assert_allclose(idata.log_likelihood.y.values[1, 7], scipy.stats.norm.logpdf(y, H @ beta, np.sqrt(s2)),
                               rtol=1e-10)
    # β = τ λ z: the twin's non-centred sites, so the posterior predictive is drawn at each β
    post = idata.posterior
    np.testing.assert_allclose(post.beta_raw * post.lam_local * est.prior.tau, post.beta, rtol=1e-12)
    pp = idata.posterior_predictive.y.values[1, 7]
    assert abs(np.mean(pp - H @ beta)) < 5 * np.sqrt(s2 / len(y))
    assert np.isfinite(compat.elpd_loo(idata))


@pytest.mark.slow
def test_horseshoe_gibbs_with_an_estimated_global_scale_names_the_twins_sites():
    """With ``tau_prior`` the global scale is a draw: Gibbs's posterior has the NUTS twin's
    variables (``tau_global`` among them, from the hierarchy's ``gibbs_twin_sites``: ``tau`` names the
    per-weight variances elsewhere) and ``β = τ λ z`` at
    every draw with each draw's own τ (not the starting ``prior.tau``)."""
    X, y = _data()
    est = AdaptiveSparseRegressor(prior=HorseshoePrior(tau=1.0, tau_prior=1.0)).fit(X, y)
    gibbs = est.sample_posterior(X, y, "gibbs", **TINY).posterior
    nuts = est.sample_posterior(X, y, "nuts", draws=20, chains=1, seed=1).posterior
    assert set(gibbs.data_vars) == set(nuts.data_vars)
    assert gibbs.tau_global.dims == nuts.tau_global.dims == ("chain", "draw") and np.ptp(gibbs.tau_global.values) > 0
    np.testing.assert_allclose(gibbs.beta_raw * gibbs.lam_local * gibbs.tau_global, gibbs.beta, rtol=1e-12)


def test_gibbs_without_conditionals_is_a_value_error_naming_the_hierarchy():
    X, y = _data()
    jeffreys = AdaptiveSparseRegressor(prior="jeffreys").fit(X, y)
    with pytest.raises(ValueError, match="JeffreysSurrogate has no Gibbs conditionals"):
        jeffreys.sample_posterior(X, y, "gibbs", surrogate_eps=0.1, **TINY)
    laplace = AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    # the probit Laplace model has Gibbs (Albert & Chib's latent with the Laplace scale mixture); the Jeffreys
    # surrogate has no conditionals here
    probit = SparseProbitClassifier(prior="jeffreys").fit(X, y > 1.0)
    with pytest.raises(ValueError, match="sampler 'gibbs' needs Gibbs conditionals.*SparseProbitClassifier"):
        probit.sample_posterior(X, y > 1.0, "gibbs", surrogate_eps=0.1, **TINY)
    fixed = AdaptiveSparseRegressor(prior=HorseshoePrior(), noise_var=0.25).fit(X, y)
    with pytest.raises(ValueError, match="fixes noise_var"):
        fixed.sample_posterior(X, y, "gibbs", **TINY)
    with pytest.raises(ValueError, match="sampler must be 'nuts' for"):
        jeffreys.sample_posterior(X, y, "hmc", surrogate_eps=0.1, **TINY)
    with pytest.raises(ValueError, match="sampler must be 'nuts' or 'gibbs' for"):
        laplace.sample_posterior(X, y, "hmc", **TINY)


def test_every_compare_estimator_has_the_mixin():
    from sparsebayes.inference.posterior.twin_posterior import SUPPORTED
    assert all(issubclass(cls, PosteriorSamplingMixin) for cls in SUPPORTED)


@pytest.mark.parametrize("case", [pytest.param("laplace-nuts", marks=pytest.mark.slow),
                                  pytest.param("probit-nuts", marks=pytest.mark.slow), "lasso-gibbs",
                                  pytest.param("lasso-nuts", marks=pytest.mark.slow),
                                  pytest.param("rvm-classifier-nuts", marks=pytest.mark.slow),
                                  pytest.param("smlr-nuts", marks=pytest.mark.slow)])
def test_every_estimator_and_sampler_line_up_with_the_point_estimate(case):
    X, y = _data()
    if case == "laplace-nuts":
        est, yy, sampler = AdaptiveSparseRegressor(prior="laplace").fit(X, y), y, "nuts"
    elif case == "probit-nuts":
        yy = np.where(y > 1.0, "up", "down")
        est, sampler = SparseProbitClassifier(prior="laplace").fit(X, yy), "nuts"
    elif case == "rvm-classifier-nuts":
        yy = np.where(y > 1.0, "up", "down")
        est, sampler = RVMClassifier(features="linear").fit(X, yy), "nuts"
    elif case == "smlr-nuts":
        yy = np.array(["low", "mid", "high"])[np.digitize(y, [0.0, 2.0])]
        est, sampler = SMLRClassifier(lam=1.0).fit(X, yy), "nuts"
    else:
        est = BayesianLassoRegressor(num_warmup=60, num_samples=60, num_chains=2).fit(X, y)
        yy, sampler = y, case.split("-")[1]
    eps = 1e-3 if case.startswith("rvm") else None
    idata = est.sample_posterior(X, yy, sampler, surrogate_eps=eps, **TINY)
    _check_layout(est, idata)
    if case == "probit-nuts":
        assert idata.posterior.beta.dims == ("chain", "draw", "classifier", "basis")
        assert list(idata.posterior.beta.classifier.values) == ["up"]
    if case.startswith("lasso"):
        assert list(idata.posterior.beta.basis.values) == ["height", "load", "idle"]
    if case == "rvm-classifier-nuts":
        assert idata.posterior.beta.dims == ("chain", "draw", "classifier", "basis")
        assert "surrogate-eps=0.001" in idata.attrs["model"]
    if case == "smlr-nuts":  # the point estimate's beta layout: basis × class, the reference class's column zero
        assert idata.posterior.beta.dims == ("chain", "draw", "basis", "class")
        assert not np.any(idata.posterior.beta.sel({"class": "mid"}).values)
    assert np.isfinite(compat.elpd_loo(idata))
    import matplotlib.pyplot as plt
    weights = idata.attrs["weights"]
    fig = compat.plot_forest({"point": est.to_inference_data(), "draws": idata}, var_names=[weights], combined=True)
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    plt.close(fig)
    if compat.is_datatree_api():  # ArviZ 1.x labels the rows by each coordinate ("bias"), not "beta[bias]"
        assert {str(b) for b in idata.posterior[weights].basis.values} <= texts
        return
    n_weights = int(np.prod([est.to_inference_data().posterior[idata.attrs["weights"]].sizes[d]
                             for d in ("basis", "class") if d in idata.posterior[idata.attrs["weights"]].dims]))
    assert len(labels) == n_weights == {"lasso-gibbs": 3, "lasso-nuts": 3, "smlr-nuts": 12}.get(case, 4)


def test_a_hyperparameter_em_estimated_is_sampled_by_the_twin_and_named_alike():
    """With ``gamma_prior`` EM fits the joint MAP of (β, γ): the twin is that hierarchical model (γ a
    site under its Gamma hyperprior, not the fixed-γ model at the starting γ), and the point estimate carries the fitted γ under the twin's name ``gamma``; likewise the
    horseshoe's estimated τ as ``tau_global``. No sampling: the twin's sites by a NumPyro trace."""
    from numpyro import handlers

    from sparsebayes.inference.posterior.twin_posterior import twin

    X, y = _data()
    est = AdaptiveSparseRegressor(prior="laplace", gamma=1.0, gamma_prior=(1.0, 0.1)).fit(X, y)
    t = twin(est, X, y)
    assert t.kwargs["prior"].gamma_prior == (1.0, 0.1) and t.label == "laplace-gamma~Gamma(1,0.1)"
    sites = handlers.trace(handlers.seed(t.model, 0)).get_trace(t.H, None, **{**t.kwargs, "params": 1.0})
    assert sites["gamma"]["type"] == "sample" and not sites["gamma"]["is_observed"]
    point = est.to_inference_data().posterior
    assert float(point["gamma"].values.squeeze()) == pytest.approx(est.gamma_) and est.gamma_ != 1.0
    assert {"beta", "noise_var", "gamma"} <= set(point.data_vars)
    fixed = AdaptiveSparseRegressor(prior="laplace", gamma=2.0).fit(X, y)
    assert twin(fixed, X, y).kwargs["prior"].gamma_prior is None and twin(fixed, X, y).label == "laplace-gamma=2"
    assert "gamma" not in fixed.to_inference_data().posterior
    probit = SparseProbitClassifier(prior="laplace", gamma_prior=(1.0, 0.1)).fit(X, y > 1.0)
    assert float(probit.to_inference_data().posterior["gamma"].values.squeeze()) == pytest.approx(probit.gamma_)
    hs = AdaptiveSparseRegressor(prior=HorseshoePrior(1.0, tau_prior=1.0)).fit(X, y)
    assert float(hs.to_inference_data().posterior["tau_global"].values.squeeze()) == pytest.approx(hs.prior_.tau)
