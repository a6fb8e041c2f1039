import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.comparisons.synthetic import sinc
from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor
from sparsebayes.inference.estimators.typeii_estimators import BLSRegressor, FLAPRegressor, RVMRegressor
from sparsebayes.models.features import GaussianKernelFeatures


def _sinc(n=60, sigma=0.1, seed=0):
    return sinc(n, sigma=sigma, seed=seed)


@pytest.mark.parametrize("est", [BLSRegressor, RVMRegressor, FLAPRegressor])
def test_kernel_fit_predict_and_relevance_indices(est):
    X, y = _sinc()
    m = est(features=GaussianKernelFeatures.from_helgoy_li(0.3), fit_intercept=False).fit(X, y)
    mean, std = m.predict(X, return_std=True)
    assert np.sqrt(np.mean((mean - y) ** 2)) < 0.3
    assert np.all(std >= np.sqrt(m.noise_var_) - 1e-12)
    assert 0 < len(m.relevance_indices_) < 30
    assert set(m.relevance_indices_) <= set(range(60))
    idata = m.to_inference_data()
    assert idata.posterior["beta"].shape == (1, 1, 61)
    assert m.n_iter_ > 0 and m.converged_


@pytest.mark.parametrize("est", [BLSRegressor, RVMRegressor, FLAPRegressor])
def test_feature_names_are_the_feature_maps_of_the_other_estimators(est):
    X, y = _sinc()
    by_name = est(features="kernel", kernel_width=2.0, fit_intercept=False).fit(X, y)
    by_map = est(features=GaussianKernelFeatures(width=2.0), fit_intercept=False).fit(X, y)
    np.testing.assert_array_equal(by_name.coef_, by_map.coef_)
    np.testing.assert_array_equal(by_name.relevance_indices_, by_map.relevance_indices_)
    assert by_name.predict(X[:5]).shape == (5,)
    with pytest.raises(ValueError, match="features must be"):
        est(features="rbf").fit(X, y)


def test_bls_recovers_sparse_linear_model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 8))
    y = 5 + X @ np.array([3, 1.5, 0, 0, 2, 0, 0, 0]) + rng.normal(size=80)
    m = BLSRegressor().fit(X, y)
    assert {0, 1, 4} <= set(np.flatnonzero(m.coef_))
    assert m.lam_ > 0 and 0.5 < m.noise_var_ < 2.0
    assert m.intercept_ == pytest.approx(5, abs=0.5)


def test_convergence_warning():
    X, y = _sinc()
    with pytest.warns(ConvergenceWarning, match="lambda_update='profiled'"):
        BLSRegressor(features=GaussianKernelFeatures(width=2.0), fit_intercept=False, max_iter=2).fit(X, y)
    for est in (BLSRegressor(lambda_update="profiled"), RVMRegressor()):  # an ascent: only max_iter to suggest
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.set_params(features=GaussianKernelFeatures(width=2.0), max_iter=2).fit(X, y)
        (w,) = [c for c in caught if issubclass(c.category, ConvergenceWarning)]
        assert str(w.message).endswith("increase max_iter")


def test_algorithm1_bls_need_not_settle_where_the_profiled_ascent_does():
    """Simulation 3 of 004 (p = 60 > N = 50, groups of 10 near-copies): 004 Algorithm 1 with eq. 18
    drifts (σ² between about 80 and 130 for σ = 1, moves gaining ~1e-3 nats at the current λ) and
    warns; the profiled moves, an exact ascent, settle at a higher value of eq. 13."""
    from sparsebayes.comparisons.synthetic_bls import SIM3, grouped_regression

    X, y = grouped_regression(50, **{k: v for k, v in SIM3.items() if k != "beta"}, beta=SIM3["beta"],
                              seed=np.random.default_rng(0))
    with pytest.warns(ConvergenceWarning, match="profiled"):
        alg1 = BLSRegressor().fit(X, y)
    prof = BLSRegressor(lambda_update="profiled").fit(X, y)
    assert prof.converged_ and not alg1.converged_
    assert prof.objective_ > alg1.objective_


@pytest.mark.parametrize(
    "X,y,match",
    [
        (np.array([[np.nan, 1.0], [1.0, 2.0], [2.0, 3.0]]), np.arange(3.0), "NaN"),
        (np.array([[np.inf, 1.0], [1.0, 2.0], [2.0, 3.0]]), np.arange(3.0), "infinity"),
        (np.ones((3, 2)), np.arange(4.0), "inconsistent"),
        (np.empty((0, 2)), np.empty(0), "0 sample"),
        (np.ones((3, 2)), np.array(["a", "b", "c"]), "numeric"),
        (np.array([["a", "b"], ["c", "d"]]), np.arange(2.0), "convert"),
    ],
)
def test_bad_input(X, y, match):
    for est in (BLSRegressor(), RVMRegressor(), FLAPRegressor(), BayesianLassoRegressor()):
        with pytest.raises(ValueError, match=match):
            est.fit(X, y)


def test_flap_rejects_bad_noise_var():
    X, y = _sinc()
    with pytest.raises(ValueError, match="noise_var"):
        FLAPRegressor(noise_var=-1.0).fit(X, y)


def test_bls_algorithm1_zeroes_the_papers_diabetes_coefficients():
    """004 Table 6: BLS (Algorithm 1) sets age, ldl and tch to zero; the profiled ascent ends
    sparser, at a higher value of the objective it ascends."""
    from sparsebayes.comparisons.datasets import diabetes

    ds = diabetes(scaled=True)
    names = np.array(["age", "sex", "bmi", "map", "tc", "ldl", "hdl", "tch", "ltg", "glu"])
    alg1 = BLSRegressor().fit(ds.X, ds.y)
    prof = BLSRegressor(lambda_update="profiled").fit(ds.X, ds.y)
    assert names[alg1.coef_ == 0].tolist() == ["age", "ldl", "tch"]
    assert (prof.coef_ != 0).sum() < (alg1.coef_ != 0).sum()
    assert prof.objective_ > alg1.objective_


def test_lambda_update_must_be_known():
    with pytest.raises(ValueError, match="lambda_update"):
        BLSRegressor(lambda_update="exact").fit(np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0))


def test_failed_refit_leaves_nothing_fitted():
    X, y = _sinc()
    for est in (BLSRegressor(), RVMRegressor(), BayesianLassoRegressor(num_warmup=20, num_samples=20, num_chains=2)):
        est.fit(X, y)
        with pytest.raises(ValueError, match="NaN"):
            est.fit(np.full_like(X, np.nan), y)
        assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]


@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor])
def test_posterior_draws_are_the_gaussian_behind_predict_std(Est):
    """The draws' mean and covariance are ``coef_`` and ``sigma_`` (within Monte Carlo error), zero off
    the active set, and ``φᵀw`` over the draws has the spread ``predict(return_std=True)`` gives less σ²."""
    X, y = sinc(80, sigma=0.1, seed=4)
    est = Est(features=GaussianKernelFeatures(width=2.0)).fit(X, y)
    n = 20_000
    post = est.to_inference_data(draws=n, seed=1).posterior
    coef = post["beta"].values[0]
    assert coef.shape == (n, est.coef_.size) and np.all(coef[:, ~est.active_] == 0)
    A = coef[:, est.active_]
    se = np.sqrt(np.diag(est.sigma_) / n)
    assert np.all(np.abs(A.mean(0) - est.coef_[est.active_]) < 5 * se)
    np.testing.assert_allclose(np.cov(A.T), est.sigma_, atol=0.05 * np.abs(est.sigma_).max())
    grid = np.linspace(-8, 8, 9)[:, None]
    f = coef @ est.feature_map_.transform(grid).T + post["intercept"].values[0][:, None]
    mean, std = est.predict(grid, return_std=True)
    np.testing.assert_allclose(f.mean(0), mean, atol=5 * std.max() / np.sqrt(n))
    np.testing.assert_allclose(f.std(0), np.sqrt(std**2 - est.noise_var_), rtol=0.03)


@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor, FLAPRegressor])
def test_predictive_sd_counts_the_flat_prior_intercept(Est):
    """With ``fit_intercept`` the predictive variance is the posterior's over ``[b, w_A]`` with a flat
    prior on ``b`` (precision 0) and the fitted ``V`` on ``w_A``: ``σ² + zᵀΣz``, ``z = [1, φ_A(x)]``,
    computed here densely from the uncentred design. The centred form needs ``σ²/N`` beside
    ``(φ − φ̄)ᵀΣ(φ − φ̄)``, which it left out (0.9–1.6 % short at N = 30)."""
    X, y = sinc(30, sigma=0.1, seed=2)
    est = Est(features=GaussianKernelFeatures(width=2.0)).fit(X, y)
    Phi_A = est.feature_map_.transform(X)[:, est.active_]
    centred = Phi_A - Phi_A.mean(0)
    V_inv = np.linalg.inv(est.sigma_) - centred.T @ centred / est.noise_var_  # the fitted prior precisions
    assert np.allclose(V_inv, np.diag(np.diag(V_inv)), atol=1e-8 * np.abs(V_inv).max())
    Z = np.column_stack([np.ones(len(y)), Phi_A])
    precision = Z.T @ Z / est.noise_var_
    precision[1:, 1:] += V_inv
    grid = np.linspace(-9, 9, 7)[:, None]
    z = np.column_stack([np.ones(len(grid)), est.feature_map_.transform(grid)[:, est.active_]])
    want = np.sqrt(est.noise_var_ + np.einsum("ij,ij->i", z @ np.linalg.inv(precision), z))
    np.testing.assert_allclose(est.predict(grid, return_std=True)[1], want, rtol=1e-9)
    assert est.intercept_var_ == pytest.approx(est.noise_var_ / len(y))


@pytest.mark.parametrize("make", [RVMRegressor, BLSRegressor, lambda: FLAPRegressor(estimate_noise=True)],
                         ids=["rvm", "bls", "flap-sigma"])
@pytest.mark.parametrize("y_scale, x_scale", [(1e4, 1.0), (1e-4, 1.0), (1.0, 1e3), (1.0, 1e-3)])
def test_fits_do_not_depend_on_the_units_of_y_or_x(make, y_scale, x_scale):
    """RVM (flat hyperpriors), BLS (τ = v/σ² is unit-free) and FLAPσ (Algorithm 1) give the same
    fit in any units: predictions scale with y, the support is the same. (FLAP with its noise
    fixed does not: its Exp(λ/2) prior is on γ_i, in the units of w², and the profiled ascent's
    ``A log λ`` term then depends on them; on these data y × 1e4 keeps 2 weights instead of 4.)"""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 6))
    y = X[:, 0] - 2.0 * X[:, 1] + 0.5 * rng.normal(size=80)
    base = make().fit(X, y)
    scaled = make().fit(x_scale * X, y_scale * y)
    np.testing.assert_allclose(scaled.predict(x_scale * X) / y_scale, base.predict(X), atol=1e-8 * np.std(y))
    np.testing.assert_array_equal(scaled.coef_ != 0, base.coef_ != 0)


def test_with_an_intercept_the_evidence_is_the_flat_intercept_integral_and_sigma2_its_maximiser():
    """``fit_intercept``: a flat prior on the intercept, integrated out. Its evidence is
    ``∫ N(y | b1, C) db`` with ``C = σ²I + Φ V Φᵀ`` (here in closed form); the engine's, on the
    centred data with ``N − 1`` for ``N``, differs from it by the constant ``½ log N``, and the
    RVM's σ² (the variances held) maximises it. With ``N``, σ̂² came out short by about 1/N."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(3)
    n = 30
    X = rng.normal(size=(n, 6))
    y = 4.0 + X[:, 0] - 2 * X[:, 1] + 0.7 * rng.normal(size=n)
    m = RVMRegressor().fit(X, y)
    A = m.active_
    Xc = X - X.mean(0)
    # the prior variances of the kept weights, from Σ⁻¹ = X_AᵀX_A/σ² + V⁻¹ (centred columns)
    v = 1.0 / (np.diag(np.linalg.inv(m.sigma_)) - (Xc[:, A] ** 2).sum(0) / m.noise_var_)

    def flat_intercept_log_evidence(s2):
        C = s2 * np.eye(n) + (X[:, A] * v) @ X[:, A].T
        Ci = np.linalg.inv(C)
        one = np.ones(n)
        a = one @ Ci @ one
        quad = y @ Ci @ y - (one @ Ci @ y) ** 2 / a
        return -0.5 * ((n - 1) * np.log(2 * np.pi) + np.linalg.slogdet(C)[1] + np.log(a) + quad)

    assert m.objective_ - flat_intercept_log_evidence(m.noise_var_) == pytest.approx(0.5 * np.log(n), abs=1e-8)
    best = minimize_scalar(lambda t: -flat_intercept_log_evidence(np.exp(t)), bounds=(-8, 3), method="bounded",
                           options={"xatol": 1e-10}).x
    assert m.noise_var_ == pytest.approx(np.exp(best), rel=1e-4)


@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor])
def test_a_constant_target_without_an_intercept_is_fitted_not_taken_for_nothing_to_explain(Est):
    """``fit_intercept=False`` and ``y ≡ 5``: the features must carry the constant. The short-cut for
    "nothing to explain" took any constant y for it and returned the empty model, which predicts 0."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3)) + 3.0
    y = np.full(40, 5.0)
    m = Est(fit_intercept=False).fit(X, y)
    assert m.n_active_ >= 1 and m.n_iter_ > 0
    # within 2 % of least squares on the same columns (0.823; the empty model's is 5)
    least_squares = np.sqrt(np.mean((X @ np.linalg.lstsq(X, y, rcond=None)[0] - y) ** 2))
    assert np.sqrt(np.mean((m.predict(X) - y) ** 2)) < 1.02 * least_squares


@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor])
def test_the_last_basis_the_rule_prunes_leaves_the_empty_model(Est):
    """One feature and pure noise: at convergence the rule's pruning condition holds for the only
    basis (RVM ``q² ≤ s``; BLS ``q² − s ≤ λ/σ²``), which the engine cannot delete; it sat at its
    starting variance with a nonzero coefficient. The estimator reports the empty model, whose
    evidence (RVM, σ² at its maximiser) is above the one-basis model's, and the ML σ² of the centred
    data in N − 1 dimensions."""
    from sparsebayes.inference.engines import typeii_exact
    from sparsebayes.inference.engines.typeii_design import fit_design
    from sparsebayes.models.priors.typeii import ARDPrior

    rng = np.random.default_rng(0)
    rng.standard_normal((40, 3))  # (the audit's draws)
    x = rng.standard_normal((40, 1))
    y = rng.standard_normal(40)
    m = Est().fit(x, y)
    assert not m.active_.any() and np.all(m.coef_ == 0) and not m.converged_ and m.n_iter_ > 0  # never left its start (issue 30)
    yc = y - y.mean()
    assert m.noise_var_ == pytest.approx(yc @ yc / 39, rel=1e-12)
    np.testing.assert_allclose(m.predict(x), y.mean())
    # the engine's own one-basis state, and the evidence of the empty model it could not reach
    state = fit_design((x - x.mean())[:, :1], yc, ARDPrior(), 0.1 * yc.var(), n_obs=39)
    assert bool(typeii_exact.last_basis_pruned(state, ARDPrior()))
    s2 = yc @ yc / 39
    empty = -0.5 * 39 * (np.log(2 * np.pi * s2) + 1.0)
    assert empty > float(state.objective)


@pytest.mark.parametrize("Est, n", [(RVMRegressor, 10), (BLSRegressor, 2)])
def test_a_noise_variance_that_collapses_says_so(Est, n):
    """More features than points: the model can interpolate and σ̂² falls to its floor; the
    predictive sds are then 1e-5 of the noise, which a warning must say (the audit's case: RVM,
    10 points and 30 features; BLS with 2 points)."""
    r = np.random.default_rng(1)
    X = r.normal(size=(10, 30))
    y = 3 * X[:, 0] + r.normal(size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(UserWarning, match="noise variance collapsed"):
            m = Est().fit(X[:n], y[:n])
    assert m.noise_var_ <= 1e-9 * np.mean((y[:n] - y[:n].mean()) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        RVMRegressor().fit(X[:, :3], y)  # fewer columns than points: a noise level, no warning


def test_new_iteration_limits_and_noise_schedules_compile_nothing(programs_built):
    """``max_iter``, ``noise_every`` (and the classifier's ``patience``) are traced, not baked into
    the compiled engine: a refit with other values reuses it (each new value compiled 1.2–4 s
    for a 1–4 ms fit before)."""
    from sparsebayes.inference import RVMClassifier

    X, y = sinc(60, sigma=0.1, seed=4)
    RVMRegressor(features="kernel", kernel_width=2.0, max_iter=300).fit(X, y)
    BLSRegressor(features="kernel", kernel_width=2.0, noise_every=1).fit(X, y)
    Xc, yc = X, (y > 0).astype(int)
    RVMClassifier(kernel_width=2.0, max_iter=300).fit(Xc, yc)
    with programs_built() as built:
        RVMRegressor(features="kernel", kernel_width=2.0, max_iter=700, noise_every=3).fit(X, y)
        BLSRegressor(features="kernel", kernel_width=2.0, noise_every=4, max_iter=900).fit(X, y)
        RVMClassifier(kernel_width=2.0, max_iter=500).fit(Xc, yc)
    assert built == []


def test_flap_with_its_default_fixed_noise_warns_that_its_predictive_sd_is_not_calibrated():
    """FLAP's default σ² = 0.01 mean(y²) is the paper's setting, not an estimate: on data whose
    noise variance is about 30 times that, its 95 % intervals cover far fewer than 95 % of new
    points, and ``predict(return_std=True)`` says so; FLAPσ and a given ``noise_var`` do not warn."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    f = X @ np.array([1.0, -0.5, 0.0])
    y = f + rng.normal(size=200)
    flap = FLAPRegressor().fit(X[:100], y[:100])
    with pytest.warns(UserWarning, match="not calibrated"):
        mean, sd = flap.predict(X[100:], return_std=True)
    assert np.mean(np.abs(y[100:] - mean) < 1.96 * sd) < 0.6
    for quiet in (FLAPRegressor(estimate_noise=True), FLAPRegressor(noise_var=1.0)):
        quiet.fit(X[:100], y[:100])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mean, sd = quiet.predict(X[100:], return_std=True)
        assert np.mean(np.abs(y[100:] - mean) < 1.96 * sd) > 0.85
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flap.predict(X[100:])  # the mean alone: nothing to warn about


@pytest.mark.parametrize("sampler", ["gibbs", "nuts-marginal"])
def test_sampler_data_and_pointwise_log_likelihood_share_a_named_obs_dimension(sampler):
    """``observed_data`` and ``log_likelihood`` index the data points by ``obs`` (was ArviZ's
    default ``y_dim_0``), and ``az.loo`` reads them."""
    from sparsebayes.inference.posterior import arviz_compat as compat

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = X[:, 0] + rng.normal(size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: R-hat and Pareto-k warnings are not the point here
        idata = BayesianLassoRegressor(sampler=sampler, num_warmup=100, num_samples=100, num_chains=2).fit(X, y).idata_
        assert idata.observed_data["y"].dims == ("obs",)
        assert idata.log_likelihood["y"].dims == ("chain", "draw", "obs")
        assert idata.posterior["beta"].dims == ("chain", "draw", "basis")
        assert np.isfinite(compat.elpd_loo(idata))


def test_algorithm1_that_goes_round_a_cycle_stops_at_the_cycles_best_evidence():
    """The audit's 40 × 4 design (columns on scales 0.1 to 100): Algorithm 1 adds column 3 (L falls
    0.77 once λ moves), deletes it (L rises 0.77) and used to repeat the pair for all 2000 steps,
    ending on whichever side the parity of max_iter gave. It now stops once L returns, at the
    cycle's larger L, and says so; fits cut short by max_iter trace the cycle."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4)) * [1, 10, 100, 0.1]
    y = X @ [1, 0.1, 0, 0] + 0.3 * rng.normal(size=60)
    X, y = X[20:], y[20:]  # the first fold of KFold(3)
    with pytest.warns(ConvergenceWarning, match="cycle of moves.*profiled"):
        bls = BLSRegressor().fit(X, y)
    assert bls.cycled_ and not bls.converged_ and bls.n_iter_ < 50
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        path = [BLSRegressor(max_iter=k).fit(X, y).objective_ for k in range(1, bls.n_iter_ + 1)]
    assert bls.objective_ == path[-1]
    assert path[-2] < path[-1] - 0.5  # the cycle: the step before had lowered L ...
    assert path[-3] == pytest.approx(path[-1], rel=1e-12)  # ... from where the fit now stands again
    assert np.all(bls.coef_[2:] == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profiled = BLSRegressor(lambda_update="profiled").fit(X, y)
    assert profiled.converged_ and not profiled.cycled_
