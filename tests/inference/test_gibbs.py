import arviz as az
import jax
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from scipy import stats

from sparsebayes.comparisons.datasets import diabetes
from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor
from sparsebayes.inference.engines.progress import chunk_lengths as _chunk_lengths
from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_batch, hierarchy_gibbs_variates
from sparsebayes.inference.engines.gibbs_beta import UNROLL_MAX, bhattacharya_draw, bordered_gram, rue_draw_bordered
from sparsebayes.inference.engines.gibbs_variates import (draw_variates, inverse_gaussian_from, michael_root,
                                                          variate_plan, variate_streams)
from sparsebayes.inference.engines.hierarchy_gibbs import GibbsModel, State
from sparsebayes.inference.engines.hierarchy_gibbs_variates import step_from, variate_data
from sparsebayes.inference.engines.bayesian_lasso import Hyper, bayesian_lasso_prior, engine_settings, run_gibbs


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


@pytest.mark.parametrize("method", ["cholesky", "bhattacharya"])
def test_beta_conditional_matches_closed_form(method):
    X, y = _two_parameter_problem()
    tau2, s2 = np.array([0.7, 2.0]), 0.8
    A = X.T @ X + np.diag(1 / tau2)
    mean, cov = np.linalg.solve(A, X.T @ y), s2 * np.linalg.inv(A)
    rng = np.random.default_rng(0)
    z, delta = rng.standard_normal((40000, 2)), rng.standard_normal((40000, 12))
    if method == "cholesky":
        b = jax.vmap(lambda zi: rue_draw_bordered(zi, bordered_gram(X, y), 1 / tau2, s2))(z)
    else:
        b = jax.vmap(lambda zi, di: bhattacharya_draw(zi, di, X, y, None, s2 * tau2, s2))(z, delta)
    b = np.asarray(b)
    se = np.sqrt(np.diag(cov) / len(b))
    assert np.all(np.abs(b.mean(0) - mean) < 5 * se)
    np.testing.assert_allclose(np.cov(b.T), cov, rtol=0.05, atol=0.02 * np.abs(cov).max())


@pytest.mark.parametrize("p", [1, 5, UNROLL_MAX, UNROLL_MAX + 5])
def test_the_cholesky_draw_is_the_mean_plus_the_scaled_inverse_factor(p):
    """``rue_draw_bordered`` (one factor of the bordered Gram matrix, one back substitution, written
    out up to ``UNROLL_MAX`` and by LAPACK above) equals ``A⁻¹Xᵀy + σL⁻ᵀz`` from SciPy's
    factor and solves, to 1e-12 relative, on a design whose columns differ in scale by 1e4."""
    from scipy.linalg import cho_solve as scipy_cho_solve
    from scipy.linalg import cholesky, solve_triangular

    rng = np.random.default_rng(p)
    X = rng.normal(size=(3 * p + 4, p)) * np.logspace(-2, 2, p)
    y = 1e3 * rng.normal(size=3 * p + 4)
    tau2, s2, z = rng.uniform(0.1, 10.0, p), 2.5, rng.standard_normal(p)
    A = X.T @ X + np.diag(1 / tau2)
    L = cholesky(A, lower=True)
    want = scipy_cho_solve((L, True), X.T @ y) + np.sqrt(s2) * solve_triangular(L.T, z, lower=False)
    got = np.asarray(rue_draw_bordered(z, bordered_gram(X, y), 1 / tau2, s2))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def _pc_sweep_inputs(X, y, seed, sweeps, hyper=Hyper(1.0, 1.78, 0.0, 0.0), use_rue=True):
    """The Bayesian Lasso's hierarchy, noise prior and data as the engine runs them, and ``sweeps``
    sweeps' NumPy variates of one chain (sweep-major)."""
    n, p = X.shape
    prior = bayesian_lasso_prior(hyper)
    plan = variate_plan(prior, n, 0 if use_rue else n, p, (n - 1) / 2 + p / 2 + hyper.c)
    v = jax.tree.map(lambda a: a[:, 0], draw_variates(variate_streams(seed, len(plan.aux)), sweeps, 1, plan))
    return prior, hierarchy_gibbs.NoisePrior(hyper.c, hyper.d), variate_data(X, y, np.float64(n - 1), use_rue), v


def test_scalar_conditionals_match_closed_forms():
    """Park & Casella's conditionals (Sec. 2) from the engine's sweep against SciPy's laws: from one
    state, σ² | β ~ InvGamma((n − 1)/2 + p/2, ‖y − Xβ‖²/2 + Σβ²/(2τ²)) at each sweep's own β;
    1/τ_j² | β, σ², λ² ~ IG(√(λ²σ²/β_j²), λ²); λ² | τ² ~ Gamma(p + r, Σ τ_j²/2 + δ)."""
    X, y = _two_parameter_problem()
    n, p = X.shape
    prior, noise, data, v = _pc_sweep_inputs(X, y, 3, 20000)
    tau2, s2, lam2 = np.array([0.5, 1.5]), 0.9, 2.0
    state = State(np.array([1.2, -0.3]), np.float64(s2), {"tau": tau2, "gamma": np.float64(lam2)})
    new, info = jax.vmap(lambda u: step_from(state, data, GibbsModel(prior, noise), variates=u, scaled=True))(v)
    assert not np.any(np.asarray(info.refused))
    beta, sv = np.asarray(new.beta), np.asarray(new.noise_var)
    rate = 0.5 * np.sum((y - beta @ X.T) ** 2, axis=1) + 0.5 * np.sum(beta**2 / tau2, axis=1)
    shape = (n - 1) / 2 + p / 2
    assert stats.kstest(rate / sv, stats.gamma(shape).cdf).pvalue > 1e-3  # σ² = rate/G, G ~ Gamma(shape)
    tv = np.asarray(new.aux["tau"])
    mu0 = np.sqrt(lam2 * sv / beta[:, 0] ** 2)  # each sweep's own β and (new) σ²
    u = stats.invgauss(mu0 / lam2, scale=lam2).cdf(1 / tv[:, 0])  # the probability integral transform
    assert stats.kstest(u, stats.uniform.cdf).pvalue > 1e-3
    g = np.asarray(new.aux["gamma"]) * (1.78 + 0.5 * tv.sum(1))
    assert stats.kstest(g, stats.gamma(p + 1.0).cdf).pvalue > 1e-3


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


def test_a_new_number_of_rows_in_the_same_bucket_compiles_nothing(programs_built):
    """37 and 39 rows share the 40-row bucket (zero rows, ``n`` passed as data): the second
    ``BayesianLassoRegressor`` fit reuses every compiled program (before, a new n compiled 7
    programs, 2.3–2.6 s for a 0.1 s fit)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(39, 3))
    y = X[:, 0] + rng.normal(size=39)
    kw = dict(num_warmup=20, num_samples=30, num_chains=2, rhat_max=np.inf)
    BayesianLassoRegressor(**kw).fit(X[:37], y[:37])
    with programs_built() as built:
        m = BayesianLassoRegressor(**kw).fit(X, y)
    assert built == []
    assert m.beta_draws_.shape == (60, 3)


@pytest.mark.parametrize("n,p,variates", [(37, 3, "numpy"), (13, 20, "numpy"), (37, 3, "device"), (13, 20, "device")],
                         ids=["cholesky", "bhattacharya", "cholesky-device", "bhattacharya-device"])
def test_padding_rows_changes_no_draw(monkeypatch, n, p, variates):
    """``run_gibbs`` pads X and y with zero rows to a bucketed size and passes the real n: run on
    the exact shape instead (``bucket`` the identity), the chains are the same draws (no variate is
    drawn for a padding row; only the rounding of sums over more zero terms differs), for both
    variate sources (the device's draws each row's δ from a key of its own)."""
    from sparsebayes.inference.engines import _shapes

    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, p))
    X -= X.mean(0)
    y = X[:, 0] + rng.normal(size=n)
    y -= y.mean()
    kw = dict(num_warmup=50, num_samples=100, num_chains=2, seed=3, variates=variates)
    padded = run_gibbs(X, y, **kw)
    monkeypatch.setattr(_shapes, "bucket", lambda k, **_: k)
    exact = run_gibbs(X, y, **kw)
    for name in ("beta", "noise_var", "tau2", "lam2"):
        want = exact.posterior[name].values
        np.testing.assert_allclose(padded.posterior[name].values, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    np.testing.assert_allclose(padded.log_likelihood["y"].values, exact.log_likelihood["y"].values, rtol=1e-9)


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


@pytest.mark.parametrize("use_rue", [True, False])
def test_a_sweep_that_leaves_float64_is_refused(use_rue):
    """The engine's guard on the sweep from pre-drawn variates: a finite state sweeps as the unguarded
    algebra does; an infinite σ² makes β non-finite on both β paths, and the chain stays where it was."""
    rng = np.random.default_rng(0)
    n, p = (30, 5) if use_rue else (10, 20)
    X = rng.normal(size=(n, p))
    X -= X.mean(0)
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    y -= y.mean()
    prior, noise, data, v = _pc_sweep_inputs(X, y, 3, 1, Hyper(0.1, 0.1, 0.0, 0.0), use_rue)
    v = jax.tree.map(lambda a: a[0], v)
    good = State(np.zeros(p) + 0.1, np.float64(0.5), {"tau": np.ones(p), "gamma": np.float64(1.0)})
    new, info = step_from(good, data, GibbsModel(prior, noise), variates=v, scaled=True)
    assert not bool(info.refused) and np.all(np.isfinite(np.asarray(new.beta)))
    bad = good._replace(noise_var=np.float64(np.inf))
    new, info = step_from(bad, data, GibbsModel(prior, noise), variates=v, scaled=True)
    assert bool(info.refused)
    for a, b in zip(jax.tree.leaves(new), jax.tree.leaves(bad)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


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


@pytest.mark.parametrize("n, p, rows", [(30, 4, 30), (30, 4, 40), (8, 12, 8), (8, 12, 12)])
def test_the_residual_through_the_qr_factor_is_the_direct_one(n, p, rows):
    """``‖y − Xβ‖² = ‖Qᵀy − Rβ‖² + ‖y − QQᵀy‖²`` for n ≥ p and p > n, with zero padding rows."""
    from sparsebayes.inference.engines.hierarchy_gibbs_variates import residual_sum_of_squares

    rng = np.random.default_rng(n + p + rows)
    X = np.zeros((rows, p))
    y = np.zeros(rows)
    X[:n], y[:n] = rng.normal(size=(n, p)), 100.0 * rng.normal(size=n)
    data = variate_data(X, y, np.float64(n - 1), n >= p)
    for scale in (1e-3, 1.0, 1e3):
        beta = scale * rng.normal(size=p)
        direct = np.sum((y - X @ beta) ** 2)
        np.testing.assert_allclose(float(residual_sum_of_squares(data, beta)), direct, rtol=1e-12)


@pytest.mark.parametrize("block", [2000, 1500, 37])
def test_batched_posterior_means_match_run_gibbs_for_any_block_length(block, monkeypatch):
    """:func:`posterior_mean_batch` runs its sweeps in calls of ``block`` and counts draws from
    the warm-up's end, which can fall inside a call: its means must match :func:`run_gibbs`'s
    (another driver of the same sweep) within 5 Monte Carlo SEs."""
    from sparsebayes.inference.engines.hierarchy_gibbs_batch import posterior_mean_batch

    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    X -= X.mean(0)
    y = X @ np.array([2.0, 0.3, 0.0]) + rng.normal(size=40)
    y -= y.mean()
    ref = run_gibbs(X, y, num_warmup=500, num_samples=4000, num_chains=4, seed=0)
    mean = ref.posterior["beta"].mean(("chain", "draw")).values
    mcse = az.mcse(ref, var_names=["beta"])["beta"].values
    monkeypatch.setattr(hierarchy_gibbs_batch, "variate_chunk", lambda *a: block)
    means, refused = posterior_mean_batch(np.stack([X] * 4), np.stack([y] * 4), num_warmup=1000, num_samples=1000,
                                          seed=1, **engine_settings(Hyper()))
    assert not np.any(np.asarray(refused))
    # four independent chains of 1000 draws each: their average's SE is about that of ref's 16000
    se = np.sqrt(mcse**2 * 4 + mcse**2)
    np.testing.assert_array_less(np.abs(np.asarray(means).mean(0) - mean), 5 * se)


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


def test_the_wide_path_sets_up_nothing_p_by_p():
    """p > n: the sweep data hold the design, its QR factor and vectors (no bordered Gram matrix),
    and the ridge start in its n × n form is the p × p form's fit (an independent solve)."""
    gibbs = hierarchy_gibbs_variates
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(6, 40)), rng.normal(size=6)
    data = variate_data(X, y, np.float64(5), use_rue=False)
    assert data.bordered is None
    assert max(np.size(leaf) for leaf in jax.tree.leaves(data)) <= 6 * 40
    assert variate_data(X[:, :5], y, np.float64(5), use_rue=True).bordered.shape == (6, 6)
    G = X.T @ X
    want = np.linalg.solve(G + np.eye(40) * (1e-3 * np.trace(G) / 40 + 1e-12), X.T @ y)
    Xw = np.tile(X, (1, 30))  # p = 1,200 > PRIMAL_START_MAX: the dual form
    assert Xw.shape[1] > gibbs.PRIMAL_START_MAX
    Gw = Xw.T @ Xw
    want_w = np.linalg.solve(Gw + np.eye(1200) * (1e-3 * np.trace(Gw) / 1200 + 1e-12), Xw.T @ y)
    np.testing.assert_allclose(gibbs.ridge_start(Xw, y), want_w, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(gibbs.ridge_start(X, y), want)  # small p: the primal form itself
