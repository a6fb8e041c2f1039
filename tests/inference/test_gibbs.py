import arviz as az
import jax
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from scipy import stats

from sparsebayes.comparisons.datasets import diabetes
from sparsebayes.inference.bayesian_lasso_estimator import BayesianLassoRegressor
from sparsebayes.inference.progress import chunk_lengths as _chunk_lengths
from sparsebayes.inference.gibbs import Hyper, inverse_gaussian_from, run_gibbs


@pytest.mark.parametrize("mean,shape", [(1.0, 1.0), (0.3, 5.0), (50.0, 0.2), (1e4, 2.0)])
def test_inverse_gaussian_matches_scipy(mean, shape):
    rng = np.random.default_rng(1)
    draws = np.asarray(inverse_gaussian_from(mean, shape, rng.standard_normal(20000) ** 2, rng.random(20000)))
    # scipy's invgauss(mu, scale): mean mu*scale, shape scale
    ks = stats.kstest(draws, stats.invgauss(mean / shape, scale=shape).cdf)
    assert ks.pvalue > 1e-3


@pytest.mark.parametrize("mean,shape,w", [(1e2, 1.0, 1.0), (1e10, 1.0, 1.0), (1e16, 1.0, 1.0), (0.3, 5.0, 0.2),
                                          (1e-8, 3.0, 2.0), (2.0, 1e-9, 4.0), (5.0, 2.0, 0.0)])
def test_michael_root_is_accurate_where_the_subtracting_form_cancels(mean, shape, w):
    """The smaller root against 60-digit arithmetic: within 1e-15 relative everywhere, where
    ``μ − 2μ²w/(μw + √·)`` was off by 2e-10 at μ = 1e10, by 100 % at μ = 1e16, by 8e-8 at λ = 1e-9."""
    from decimal import Decimal, getcontext

    from sparsebayes.inference.gibbs import michael_root

    getcontext().prec = 60
    M, L, W = Decimal(mean), Decimal(shape), Decimal(w)
    exact = M + M * M * W / (2 * L) - M * (4 * M * L * W + M * M * W * W).sqrt() / (2 * L)
    got = float(michael_root(mean, shape, w))
    assert abs(Decimal(got) - exact) <= Decimal(1e-15) * exact


def _two_parameter_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    X -= X.mean(0)
    y = X @ np.array([1.5, -0.5]) + rng.normal(size=12)
    return X, y - y.mean()


def test_gibbs_returns_chains_and_recovers_signal():
    X, y = _two_parameter_problem()
    idata = run_gibbs(X, y, num_warmup=200, num_samples=500, num_chains=3, seed=1)
    assert idata.posterior["beta"].shape == (3, 500, 2)
    b = idata.posterior["beta"].mean(("chain", "draw")).values
    assert b[0] > 0.8 and abs(b[1]) < 1.0
    assert float(az.rhat(idata, var_names=["beta"])["beta"].max()) < 1.05


def test_a_new_fit_of_the_same_shape_compiles_nothing(programs_built):
    """The sweeps are compiled once per shape: data and hyperparameters are arguments (a closure
    over them compiled anew on every fit, 1.5 s of a 2.2 s fit)."""
    X, y = _two_parameter_problem()
    run_gibbs(X, y, num_warmup=20, num_samples=30, num_chains=2, seed=0)
    with programs_built() as built:
        again = run_gibbs(2.0 * X, y + 1.0, lam2_shape=3.0, lam2_rate=0.5, num_warmup=20, num_samples=30,
                          num_chains=2, seed=1)
    assert built == []
    assert again.posterior["beta"].shape == (2, 30, 2)


@pytest.mark.parametrize("num_warmup, num_samples", [(200, 500), (7, 13)])
def test_progress_bar_runs_in_chunks_and_gives_the_same_draws(num_warmup, num_samples, capsys):
    X, y = _two_parameter_problem()
    kw = dict(num_warmup=num_warmup, num_samples=num_samples, num_chains=2, seed=3)
    one_call = run_gibbs(X, y, **kw)
    chunked = run_gibbs(X, y, progress_bar=True, **kw)
    for name in ("beta", "noise_var", "tau2", "lam2"):
        np.testing.assert_array_equal(chunked.posterior[name].values, one_call.posterior[name].values)
    assert f"{num_warmup + num_samples}/{num_warmup + num_samples}" in capsys.readouterr().err
    assert _chunk_lengths(700, 35) == [35] * 20 and _chunk_lengths(20, 1) == [1] * 20
    assert _chunk_lengths(41, 3) == [3] * 13 + [2] and _chunk_lengths(41, 100) == [41]


def test_gibbs_log_likelihood_is_the_models_and_loo_agrees_with_nuts():
    """The pointwise log likelihood of every Gibbs draw is the NumPyro model's (the oracle), and
    ``az.compare`` takes the Gibbs and NUTS fits of that model side by side."""
    from numpyro.infer.util import log_likelihood

    from sparsebayes.inference import run_nuts
    from sparsebayes.models.bayesian_lasso import bayesian_lasso

    X, y = _two_parameter_problem()
    gibbs = run_gibbs(X, y, num_warmup=300, num_samples=1000, num_chains=2, seed=5)
    draws = {k: jax.numpy.asarray(gibbs.posterior[k].values.reshape((-1,) + gibbs.posterior[k].shape[2:]))
             for k in ("beta", "noise_var", "tau2", "lam2")}
    oracle = np.asarray(log_likelihood(bayesian_lasso, draws, X, y)["y"])
    np.testing.assert_allclose(gibbs.log_likelihood["y"].values.reshape(oracle.shape), oracle, rtol=1e-10)
    np.testing.assert_array_equal(gibbs.observed_data["y"].values, y)
    nuts = run_nuts(bayesian_lasso, X, y, num_warmup=300, num_samples=1000, num_chains=2, seed=5,
                    progress_bar=False)
    # the model's factors (1/σ² prior, integrated-out intercept) are not data: only "y" is left
    assert list(nuts.log_likelihood.data_vars) == ["y"] and list(nuts.observed_data.data_vars) == ["y"]
    table = az.compare({"gibbs": gibbs, "nuts": nuts})
    # seed 5: 0.27 nats apart (seeds 6, 7: 0.05, 0.08), dse 0.15; elpd about -13.5
    elpd = "elpd_loo" if "elpd_loo" in table else "elpd"  # ArviZ 0.x's column name, or 1.x's
    assert abs(table.loc["gibbs", elpd] - table.loc["nuts", elpd]) < 0.5


def test_bhattacharya_path_runs_when_p_exceeds_n():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 25))
    y = X[:, 0] * 3 + rng.normal(size=10) * 0.3
    idata = run_gibbs(X - X.mean(0), y - y.mean(), num_warmup=200, num_samples=300, num_chains=2)
    assert np.all(np.isfinite(idata.posterior["beta"].values))


def test_bayesian_lasso_predictive_sd_is_that_of_predictive_draws_with_the_intercept():
    """``predict``'s sd against posterior predictive draws ``y* = b + (x − x̄)ᵀβ + ε``, with the
    integrated-out intercept drawn from ``b | β, σ² ~ N(ȳ, σ²/n)`` (centred design): its
    ``σ²/n`` (8 % of σ² at n = 12) was missing."""
    X, y = _two_parameter_problem()
    m = BayesianLassoRegressor(num_warmup=300, num_samples=2000, num_chains=2).fit(X, y)
    rng = np.random.default_rng(0)
    s2 = m.noise_var_draws_
    b = m.y_mean_ + np.sqrt(s2 / len(y)) * rng.standard_normal((20, s2.size))
    y_star = b[:, None, :] + ((X - m.x_mean_) @ m.beta_draws_.T)[None] + np.sqrt(s2) * rng.standard_normal((20, 1, s2.size))
    np.testing.assert_allclose(m.predict(X, return_std=True)[1], y_star.transpose(1, 0, 2).reshape(12, -1).std(1),
                               rtol=0.02)


def test_bayesian_lasso_regressor_intervals_and_bad_input():
    X, y = _two_parameter_problem()
    m = BayesianLassoRegressor(num_warmup=100, num_samples=200, num_chains=2).fit(X, y)
    lo, hi = m.coef_interval_
    assert np.all(lo <= m.coef_) and np.all(m.coef_ <= hi)
    mean, std = m.predict(X, return_std=True)
    assert mean.shape == std.shape == (12,) and np.all(std > 0)
    np.testing.assert_allclose(mean, m.intercept_ + X @ m.coef_mean_)
    np.testing.assert_array_equal(m.active_, (lo > 0) | (hi < 0))
    assert np.isfinite(m.rhat_)
    with pytest.raises(ValueError, match="sampler"):
        BayesianLassoRegressor(sampler="hmc").fit(X, y)
    with pytest.raises(ValueError, match="regression targets must be numeric"):
        BayesianLassoRegressor().fit(X, np.array(["a"] * 12))


@pytest.mark.parametrize("sampler", ["gibbs", "nuts"])
@pytest.mark.parametrize("bad, match", [(dict(num_chains=0), "num_chains must be an integer of at least 1, got 0"),
                                        (dict(num_samples=0), "num_samples must be an integer of at least 1"),
                                        (dict(num_warmup=-5), "num_warmup must be an integer of at least 0"),
                                        (dict(num_samples=2.5), "num_samples must be an integer")])
def test_sampler_counts_that_cannot_run_are_named(sampler, bad, match):
    X, y = _two_parameter_problem()
    with pytest.raises(ValueError, match=match):
        BayesianLassoRegressor(sampler=sampler, **bad).fit(X, y)


@pytest.mark.slow
def test_gibbs_and_nuts_agree_on_diabetes():
    ds = diabetes()
    X, y = ds.X - ds.X.mean(0), ds.y - ds.y.mean()
    g = BayesianLassoRegressor(sampler="gibbs", num_warmup=1000, num_samples=2000).fit(X, y).idata_
    n = BayesianLassoRegressor(sampler="nuts", num_warmup=1000, num_samples=2000).fit(X, y).idata_
    sg, sn = az.summary(g, var_names=["beta"]), az.summary(n, var_names=["beta"])
    mcse = np.sqrt(sg["mcse_mean"].values ** 2 + sn["mcse_mean"].values ** 2)
    assert np.all(np.abs(sg["mean"].values - sn["mean"].values) < 4 * mcse)
    bg = g.posterior["beta"].values.reshape(-1, 10)
    bn = n.posterior["beta"].values.reshape(-1, 10)
    sd = bg.std(0)
    for q in (0.05, 0.95):
        assert np.all(np.abs(np.quantile(bg, q, axis=0) - np.quantile(bn, q, axis=0)) < 0.15 * sd)


def test_bayesian_lasso_regressor_warns_when_chains_have_not_mixed():
    X, y = _two_parameter_problem()
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        BayesianLassoRegressor(num_warmup=1, num_samples=6, num_chains=4, rhat_max=1.0001).fit(X, y)


@pytest.mark.parametrize("shape, rate", [(40.0, 4.0), (4.0, 40.0)])
def test_the_lambda2_prior_reaches_the_sampler_as_shape_and_rate(shape, rate):
    """λ² | τ² ~ Gamma(a + p, b + Σ τ_j²/2): with p = 2 a strong Gamma(a, b) prior dominates, so the
    draws' mean of λ² must sit near a/b (10 or 0.1). Shape and rate swapped inside the sampler
    (the audit's mutation) moved it a hundredfold, and no fast test saw it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ np.array([1.0, -0.5]) + rng.normal(size=60)
    idata = run_gibbs(X - X.mean(0), y - y.mean(), lam2_shape=shape, lam2_rate=rate, num_warmup=200,
                      num_samples=1000, num_chains=2, seed=1)
    lam2 = float(idata.posterior["lam2"].mean())
    assert 0.7 < lam2 / (shape / rate) < 1.3, lam2


@pytest.mark.parametrize("num_warmup", [1000, 0])
def test_batched_posterior_means_match_run_gibbs(num_warmup):
    """:func:`posterior_mean_batch` (one chain per data set, ``vmap`` over data sets, running sums from the
    warm-up's end) against :func:`run_gibbs`'s means (another driver of the same sweep) within 5 Monte
    Carlo SEs; with no warm-up the chains start at the least-squares anchor, close enough here."""
    from sparsebayes.inference.gibbs import posterior_mean_batch

    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    X -= X.mean(0)
    y = X @ np.array([2.0, 0.3, 0.0]) + rng.normal(size=40)
    y -= y.mean()
    ref = run_gibbs(X, y, num_warmup=500, num_samples=4000, num_chains=4, seed=0)
    mean = ref.posterior["beta"].mean(("chain", "draw")).values
    mcse = az.mcse(ref, var_names=["beta"])["beta"].values
    means, refused = posterior_mean_batch(np.stack([X] * 4), np.stack([y] * 4), Hyper(), num_warmup, 1000, seed=1)
    assert not np.any(np.asarray(refused))
    # four independent chains of 1000 draws each: their average's SE is about that of ref's 16000
    se = np.sqrt(mcse**2 * 4 + mcse**2)
    np.testing.assert_array_less(np.abs(np.asarray(means).mean(0) - mean), 5 * se)


def test_the_bayesian_lasso_is_the_hierarchy_engine_on_the_laplace_prior():
    """One engine: ``run_gibbs``'s draws are :func:`~sparsebayes.inference.hierarchy_gibbs.run`'s on
    ``LaplacePrior(γ = λ², gamma_prior=(r, δ))``, ``scaled``, σ² under ``NoisePrior(c, d)``, at the same seed."""
    from sparsebayes.inference import hierarchy_gibbs
    from sparsebayes.models.priors import LaplacePrior

    X, y = _two_parameter_problem()
    idata = run_gibbs(X, y, lam2_shape=2.0, lam2_rate=0.5, c=1.0, d=0.3, num_warmup=10, num_samples=20,
                      num_chains=2, seed=4, log_likelihood=False)
    states, _ = hierarchy_gibbs.run(X, y, LaplacePrior(1.0, gamma_prior=(2.0, 0.5)), num_warmup=10, num_samples=20,
                                    num_chains=2, seed=4, noise_prior=hierarchy_gibbs.NoisePrior(1.0, 0.3), scaled=True,
                                    progress_bar=False)
    for name, want in (("beta", states.beta), ("noise_var", states.noise_var), ("tau2", states.aux["tau"]),
                       ("lam2", states.aux["gamma"])):
        np.testing.assert_array_equal(idata.posterior[name].values, np.asarray(want))


def test_nuts_on_the_marginal_model_agrees_with_gibbs_without_divergences():
    """``sampler="nuts-marginal"`` samples the Laplace marginal (τ² integrated out): the same
    posterior as Gibbs on the scale mixture. Means within 4 combined MCSE, 5 %/95 % quantiles
    within 0.15 posterior sd, and no divergent transition (a strong λ² prior, Gamma(2, 0.5),
    so that β is shrunk and the mixture's funnel is in play)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, 0.2, 0.0]) + rng.normal(size=40)
    kw = dict(lam2_shape=2.0, lam2_rate=0.5, num_warmup=500, num_chains=4, seed=2)
    g = BayesianLassoRegressor(sampler="gibbs", num_samples=4000, **kw).fit(X, y)
    n = BayesianLassoRegressor(sampler="nuts-marginal", num_samples=1500, **kw).fit(X, y)
    assert "tau2" not in n.idata_.posterior and n.idata_.posterior.attrs["n_divergences"] == 0
    sg, sn = az.summary(g.idata_, var_names=["beta"]), az.summary(n.idata_, var_names=["beta"])
    mcse = np.hypot(sg["mcse_mean"].values, sn["mcse_mean"].values)
    np.testing.assert_array_less(np.abs(sg["mean"].values - sn["mean"].values), 4 * mcse)
    sd = g.beta_draws_.std(0)
    for q in (0.05, 0.95):
        gap = np.abs(np.quantile(g.beta_draws_, q, axis=0) - np.quantile(n.beta_draws_, q, axis=0))
        np.testing.assert_array_less(gap, 0.15 * sd)


def test_a_zero_lam2_rate_is_refused_for_its_improper_posterior():
    """``p(λ²) ∝ (λ²)^{r−1}`` (rate 0) leaves every conditional proper but the posterior improper: the
    samplers refuse it by name, also when it comes from a type-II object's flat ``b = 0`` under
    ``method="gibbs"``."""
    from sparsebayes.inference import BayesianLassoRegressor, SparseRegressor
    from sparsebayes.models import ScaledLaplacePrior

    X = np.random.default_rng(0).normal(size=(20, 3))
    y = X[:, 0] + 0.1
    with pytest.raises(ValueError, match="lam2_rate must be > 0"):
        run_gibbs(X, y, lam2_rate=0.0, num_warmup=5, num_samples=5)
    with pytest.raises(ValueError, match="lam2_rate must be > 0"):
        BayesianLassoRegressor(lam2_rate=0.0, num_warmup=5, num_samples=5).fit(X, y)
    with pytest.raises(ValueError, match="lam2_rate must be > 0"):
        SparseRegressor(method="gibbs", prior=ScaledLaplacePrior()).fit(X, y)
