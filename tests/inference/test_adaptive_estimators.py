"""API of the adaptive-sparseness estimators: bad input, InferenceData, warnings (the sklearn checks: tests/test_estimator_checks.py)."""
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.comparisons.synthetic import sinc, two_gaussians
from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat


def _blobs(k=3, n=90, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0, 3], [3, -2], [-3, -2], [5, 5]])[:k]
    y = np.repeat(np.arange(k), n // k)
    return centers[y] + rng.standard_normal((y.size, 2)), y


def test_one_vs_all_probabilities_are_normalized_and_calibrated_in_order():
    X, y = _blobs()
    clf = SparseProbitClassifier(features="kernel", kernel_width=2.0).fit(X, y)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert P.shape == (X.shape[0], 3) and clf.coef_.shape == (3, X.shape[0])
    assert clf.score(X, y) > 0.95
    np.testing.assert_array_equal(clf.classes_[P.argmax(1)], clf.predict(X))
    assert 0 < clf.n_active_ < X.shape[0] // 2  # sparse: few training points kept
    assert np.all(clf.relevance_indices_ < X.shape[0])


def test_string_labels_and_probabilities_far_from_the_boundary_are_finite():
    X, y = two_gaussians(40, 2, seed=0)
    labels = np.array(["neg", "pos"])[y]
    clf = SparseProbitClassifier().fit(X * 20.0, labels)  # |βᵀh| is huge: Mills ratios in log space
    P = clf.predict_proba(X * 20.0)
    assert np.all(np.isfinite(P)) and set(clf.predict(X)) <= {"neg", "pos"}
    # the log probabilities are log Φ(∓η), exact where Φ rounds to 0 (before: log of 0 = -inf)
    eta = clf.decision_function(X * 2000.0)
    logP = clf.predict_log_proba(X * 2000.0)
    np.testing.assert_allclose(logP, np.column_stack([stats.norm.logcdf(-eta), stats.norm.logcdf(eta)]), rtol=1e-12)
    assert logP.min() < -1000 and np.all(np.isfinite(logP))
    blobs = SparseProbitClassifier().fit(*_blobs())  # one-vs-all: log-normalized
    logP3 = blobs.predict_log_proba(_blobs()[0] * 100.0)
    assert np.all(np.isfinite(logP3)) and logP3.min() < -700
    np.testing.assert_allclose(np.exp(logP3).sum(axis=1), 1.0, atol=1e-12)


def test_regressor_finds_sparse_kernel_expansion_of_sinc_and_its_noise():
    X, y = sinc(100, sigma=0.1, seed=0)
    reg = AdaptiveSparseRegressor(features="kernel", kernel_width=2.0).fit(X, y)
    assert reg.n_active_ < 20
    assert 0.05 < np.sqrt(reg.noise_var_) < 0.15
    grid = np.linspace(-10, 10, 200)[:, None]
    assert np.sqrt(np.mean((reg.predict(grid) - np.sinc(grid[:, 0] / np.pi)) ** 2)) < 0.06


def test_inference_data_point_estimate_and_laplace_conditional():
    X, y = sinc(60, sigma=0.1, seed=1)
    reg = AdaptiveSparseRegressor(prior="laplace", gamma=1.0, noise_var=0.01, features="kernel",
                                  kernel_width=2.0).fit(X, y)
    idata = reg.to_inference_data()
    assert isinstance(idata, compat.idata_type())
    np.testing.assert_allclose(idata.posterior["beta"].values[0, 0], reg.beta_)
    draws = reg.to_inference_data(draws=4000)
    post = draws.posterior["beta"].values[0]
    active = np.flatnonzero(reg.beta_)
    # the conditional's mean is the EM fixed point
    se = post[:, active].std(0) / np.sqrt(4000)
    assert np.all(np.abs(post[:, active].mean(0) - reg.beta_[active]) < 5 * se + 1e-12)
    assert np.all(post[:, reg.beta_ == 0] == 0)


def test_jeffreys_fits_give_the_plug_in_conditional_draws_they_are_asked_for():
    """Jeffreys fits returned the one-draw point estimate when asked for draws; now draws of
    N(β̂_A, sigma_) at τ̂ = β̂², labelled as such."""
    X, y = sinc(60, sigma=0.1, seed=1)
    reg = AdaptiveSparseRegressor(features="kernel", kernel_width=2.0).fit(X, y)
    idata = reg.to_inference_data(draws=4000, seed=3)
    post = idata.posterior["beta"].values[0]
    active = np.flatnonzero(reg.beta_)
    assert post.shape == (4000, reg.beta_.size) and np.all(post[:, reg.beta_ == 0] == 0)
    cov = np.cov(post[:, active].T)
    np.testing.assert_allclose(cov, reg.sigma_, atol=0.1 * np.abs(reg.sigma_).max())
    assert "plug-in" in idata.posterior.attrs["conditional_on"]
    # labels sit on the posterior group, as the samplers' do (they were on the InferenceData alone)
    assert idata.posterior.attrs["inference"] == "em-gaussian-conditional"
    assert reg.to_inference_data().posterior.attrs["point_estimate"] == 1


@pytest.mark.parametrize("prior,features,low_rank", [
    ("jeffreys", "linear", True), ("laplace", "linear", True), ("jeffreys", "kernel", False),
    ("jeffreys", "kernel", True), ("laplace", "kernel", True),
])
def test_predictive_std_is_bayesian_linear_regression_at_the_final_variances(prior, features, low_rank):
    """Oracle: ``Σ = (H_AᵀH_A/σ² + diag(1/τ̂))⁻¹`` by a plain inverse, with τ̂ = β̂² (Jeffreys) or
    |β̂|/√γ (Laplace, 1/E[τ⁻¹ | β̂]); at the EM fixed point its mean ``ΣH_Aᵀy/σ²`` is β̂."""
    X, y = sinc(150, sigma=0.1, seed=3)
    if features == "linear":
        X = np.column_stack([X, np.sin(X), np.random.default_rng(0).normal(size=(150, 3))])
    gamma = 4.0
    reg = AdaptiveSparseRegressor(prior=prior, gamma=gamma, features=features, kernel_width=2.0, tol=1e-12,
                                  max_iter=100_000, low_rank=low_rank).fit(X, y)
    assert (reg.design_rank_ is not None) == (features == "kernel" and low_rank)
    H = reg.feature_map_.transform(X)
    active = np.flatnonzero(reg.beta_)
    b = reg.beta_[active]
    tau = b**2 if prior == "jeffreys" else np.abs(b) / np.sqrt(gamma)
    Ha = H[:, active]
    cov = np.linalg.inv(Ha.T @ Ha / reg.noise_var_ + np.diag(1.0 / tau))
    np.testing.assert_allclose(cov @ Ha.T @ y / reg.noise_var_, b, rtol=1e-6, atol=1e-9 * np.abs(b).max())
    np.testing.assert_allclose(reg.sigma_, cov, rtol=1e-6, atol=1e-10 * np.abs(cov).max())
    grid = np.linspace(X.min(0), X.max(0), 40)
    mean, std = reg.predict(grid, return_std=True)
    Hg = reg.feature_map_.transform(grid)[:, active]
    np.testing.assert_allclose(mean, reg.predict(grid))
    np.testing.assert_allclose(std, np.sqrt(reg.noise_var_ + np.sum((Hg @ cov) * Hg, axis=1)), rtol=1e-7)


@pytest.mark.parametrize("prior,kernel_width", [("jeffreys", None), ("laplace", None), ("jeffreys", 4.0)])
def test_probit_laplace_covariance_is_the_inverse_hessian_at_the_fit(prior, kernel_width):
    """Oracle: JAX's Hessian of ``Σ log Φ(s_i h_iᵀβ) − Σ β_i²/(2τ̂_i)`` on the active set, τ̂ the final
    E-step's variances (β̂² for Jeffreys, |β̂|/√γ for Laplace). Its gradient vanishes at the fit (the
    fit is that model's mode), and ``laplace_cov_`` is the inverse of minus the Hessian. The kernel
    case runs on the factored design (the covariance needs the design's rows there)."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import log_ndtr

    X, y = two_gaussians(160, 2 if kernel_width else 5, seed=4)
    features = "kernel" if kernel_width else "linear"
    clf = SparseProbitClassifier(prior=prior, gamma=2.0, features=features, kernel_width=kernel_width or 1.0,
                                 tol=1e-10, max_iter=100_000).fit(X, y)
    assert (clf.design_rank_ is not None) == bool(kernel_width)
    H = clf.feature_map_.transform(X)
    b = clf.beta_[0]
    active = np.flatnonzero(b)
    tau = b[active] ** 2 if prior == "jeffreys" else np.abs(b[active]) / np.sqrt(2.0)
    s = 2.0 * y - 1.0

    def log_post(beta_active):
        return jnp.sum(log_ndtr(s * (H[:, active] @ beta_active))) - 0.5 * jnp.sum(beta_active**2 / tau)

    grad = np.asarray(jax.grad(log_post)(b[active]))
    hess = np.asarray(jax.hessian(log_post)(b[active]))
    assert np.max(np.abs(grad)) < 1e-6 * np.max(np.abs(hess))
    np.testing.assert_allclose(clf.laplace_cov_[0], np.linalg.inv(-hess), rtol=1e-7,
                               atol=1e-9 * np.abs(clf.laplace_cov_[0]).max())


def test_probit_laplace_draws_match_nuts_on_the_same_fixed_prior_model():
    """Oracle: NUTS on the probit model with β_A ~ N(0, τ̂) (τ̂ = β̂², Pima, linear features). The
    Laplace sds agree within 10 % (NUTS's own sd error is about 2 % at this ESS) and the posterior
    means sit within 0.25 sd of the mode (skewness of the likelihood, O(n^-½)); the draws carry
    zeros off the active set and say what they condition on. One-vs-all gives a draw per classifier."""
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from sklearn.preprocessing import StandardScaler

    from sparsebayes.comparisons import datasets
    from sparsebayes.inference import run_nuts

    train, _ = datasets.pima()
    X, y = StandardScaler().fit_transform(train.X), train.y
    clf = SparseProbitClassifier().fit(X, y)
    b = clf.beta_[0]
    active = np.flatnonzero(b)
    assert 2 <= active.size < b.size

    def fixed_prior_probit(H_active, y):
        beta = numpyro.sample("beta", dist.Normal(0.0, jnp.abs(jnp.asarray(b[active]))).to_event(1))
        numpyro.sample("y", dist.Bernoulli(probs=jax.scipy.stats.norm.cdf(H_active @ beta)), obs=y)

    H = clf.feature_map_.transform(X)
    nuts = run_nuts(fixed_prior_probit, H[:, active], y, num_warmup=500, num_samples=1000, num_chains=2,
                    progress_bar=False).posterior["beta"].values.reshape(-1, active.size)
    sd = np.sqrt(np.diag(clf.laplace_cov_[0]))
    np.testing.assert_allclose(sd, nuts.std(0), rtol=0.10)
    assert np.all(np.abs(nuts.mean(0) - b[active]) < 0.25 * nuts.std(0))

    idata = clf.to_inference_data(draws=4000, seed=1)
    post = idata.posterior["beta"].values
    assert post.shape == (1, 4000, 1, b.size) and np.all(post[..., b == 0] == 0)
    np.testing.assert_allclose(post[0, :, 0, active].std(1), sd, rtol=0.05)
    assert "plug-in" in idata.posterior.attrs["conditional_on"]
    Xm, ym = X[:150], np.arange(150) % 3
    multi = SparseProbitClassifier().fit(Xm, ym)
    assert len(multi.laplace_cov_) == 3
    assert multi.to_inference_data(draws=10).posterior["beta"].shape == (1, 10, 3, multi.beta_.shape[1])


def test_draws_keep_the_spread_of_the_gaussian_in_any_units():
    """``y`` in units of 1e-6: the conditional's variances are ~1e-16, and the draws' Cholesky factor
    of ``cov + 1e-12 I`` made their variance ~1e-12, 3000× too wide. Jeffreys fits do not depend on
    the units, so neither may the draws (each variance within 10 % of ``sigma_``'s, 4000 draws)."""
    from sparsebayes.comparisons.synthetic import linear_regression_data

    X, y = linear_regression_data([3, 1.5, 0, 0, 2, 0, 0, 0], 60, sigma=1.0, seed=2)
    for scale in (1.0, 1e-6):
        reg = AdaptiveSparseRegressor(features="linear").fit(X, scale * y)
        post = reg.to_inference_data(draws=4000, seed=0).posterior["beta"].values[0]
        active = np.flatnonzero(reg.beta_)
        assert active.size >= 3
        np.testing.assert_allclose(post[:, active].var(0), np.diag(reg.sigma_), rtol=0.1)
    Xc, yc = two_gaussians(30, 3, seed=0)  # (and the classifiers' draws take seed=None, as the regressors' do)
    clf = SparseProbitClassifier().fit(Xc, yc)
    assert clf.to_inference_data(draws=5, seed=None).posterior["beta"].shape == (1, 5, 1, clf.beta_.size)


def test_jeffreys_fits_keep_their_weights_whatever_the_units_of_each_column():
    """Pruning weighed |β_i| alone: with inputs in units of 1e8 beside a bias their weights are
    ~1e-8 of the bias's and were pruned at once (R² −0.2, no warning); one column in units of 1e-8
    dropped an unrelated relevant one. Weighed by the column norms (as EM is), the fixed point does
    not depend on the units: at a tight ``tol`` the fits agree to 1e-6. (002's stopping rule, on
    ‖Δβ‖/‖β‖, does depend on them: at the default ``tol`` predictions differed by up to 0.08 here.)"""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ [1.5, 0.0, -2.0] + 0.3 * rng.normal(size=40) + 5.0
    labels = (X[:, 0] - X[:, 2] + 0.5 * rng.normal(size=40) > 0).astype(int)
    tight = dict(tol=1e-11, max_iter=100_000)
    reg = AdaptiveSparseRegressor(**tight).fit(X, y)
    clf = SparseProbitClassifier(**tight).fit(X, labels)
    assert np.count_nonzero(reg.coef_) == 2 and np.count_nonzero(clf.coef_) == 2
    for scale in ([1e8, 1e8, 1e8], [1.0, 1.0, 1e-8], [1e-8, 1e8, 1.0], [1.0, 1e-9, 1.0]):
        scaled = AdaptiveSparseRegressor(**tight).fit(X * scale, y)
        np.testing.assert_array_equal(scaled.coef_ != 0, reg.coef_ != 0)
        np.testing.assert_allclose(scaled.coef_ * scale, reg.coef_, rtol=1e-6)
        scaled_clf = SparseProbitClassifier(**tight).fit(X * scale, labels)
        np.testing.assert_array_equal(scaled_clf.coef_ != 0, clf.coef_ != 0)
        np.testing.assert_allclose(scaled_clf.predict_proba(X * scale), clf.predict_proba(X), atol=1e-6)


def test_max_iter_gives_a_convergence_warning():
    X, y = sinc(50, seed=2)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        AdaptiveSparseRegressor(features="kernel", kernel_width=2.0, max_iter=2).fit(X, y)


BAD_X = [
    (np.array([[0.0, np.nan], [1.0, 2.0], [2.0, 1.0]]), "NaN"),
    (np.array([[0.0, np.inf], [1.0, 2.0], [2.0, 1.0]]), "infinity"),
    (np.empty((0, 2)), "0 sample"),
    (np.array([["a", "b"], ["c", "d"], ["e", "f"]]), "string|float|number"),
]


@pytest.mark.parametrize("X,msg", BAD_X)
@pytest.mark.parametrize("Est", [AdaptiveSparseRegressor, SparseProbitClassifier])
def test_bad_inputs_are_value_errors_and_leave_nothing_fitted(Est, X, msg):
    est = Est()
    y = np.array([0, 1, 0, 1, 0])[: X.shape[0]]
    with pytest.raises(ValueError, match=msg):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]


def test_refit_failure_clears_the_previous_fit():
    X, y = two_gaussians(20, 2, seed=1)
    clf = SparseProbitClassifier().fit(X, y)
    with pytest.raises(ValueError, match="single class"):
        clf.fit(X, np.zeros_like(y))
    assert not hasattr(clf, "coef_")


@pytest.mark.parametrize("y,msg", [(np.zeros(4), "single class"), (np.array([0.1, 0.7, 1.3, 2.2]), "continuous")])
def test_classifier_label_errors(y, msg):
    X = np.random.default_rng(0).standard_normal((4, 2))
    with pytest.raises(ValueError, match=msg):
        SparseProbitClassifier().fit(X, y)


def test_regressor_errors_on_string_targets_and_mismatched_lengths():
    X = np.random.default_rng(0).standard_normal((4, 2))
    with pytest.raises(ValueError, match="numeric"):
        AdaptiveSparseRegressor().fit(X, np.array(["a", "b", "c", "d"]))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        AdaptiveSparseRegressor().fit(X, np.zeros(3))
    with pytest.raises(ValueError, match="prior"):
        AdaptiveSparseRegressor(prior="ridge").fit(X, np.arange(4.0))
    with pytest.raises(ValueError, match="features"):
        AdaptiveSparseRegressor(features="cubic").fit(X, np.arange(4.0))


def test_inference_data_names_the_design_columns_after_the_inputs():
    """Every estimator's InferenceData carries the basis names (a DataFrame's columns through the
    feature map), so ArviZ summaries read ``beta[bmi]``, not ``beta[2]``."""
    import pandas as pd

    from sklearn.preprocessing import FunctionTransformer

    from sparsebayes.inference import BayesianLassoRegressor, BLSRegressor, RVMClassifier, SMLRClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["age", "bmi", "bp"])
    y = X["age"] - 0.5 * X["bp"] + 0.2 * rng.normal(size=40)
    labels = (X["age"] > 0).astype(int)
    cases = [
        (AdaptiveSparseRegressor(features="quadratic"), y, "beta", ["bias", "age", "bmi", "bp", "age^2"]),
        (AdaptiveSparseRegressor(features=FunctionTransformer()), y, "beta", ["h0", "h1", "h2"]),
        (SparseProbitClassifier(), labels, "beta", ["bias", "age", "bmi", "bp"]),
        (SMLRClassifier(features=None), labels, "beta", ["age", "bmi", "bp"]),
        (BLSRegressor(), y, "beta", ["age", "bmi", "bp"]),
        (RVMClassifier(features="linear"), labels, "beta", ["bias", "age", "bmi", "bp"]),
    ]
    for est, target, var, first in cases:
        post = est.fit(X, target).to_inference_data().posterior
        assert list(post[var].coords["basis"].values[: len(first)]) == first, type(est).__name__
    bl = BayesianLassoRegressor(num_warmup=20, num_samples=20, num_chains=1).fit(X, y)
    assert list(bl.idata_.posterior["beta"].coords["basis"].values) == ["age", "bmi", "bp"]


@pytest.mark.parametrize("Est", [AdaptiveSparseRegressor, SparseProbitClassifier])
def test_a_new_number_of_points_in_the_same_bucket_compiles_nothing(programs_built, Est):
    """37 and 39 training points share EM's 40-row bucket (kernel widths 38 and 40 its 40-column
    first slice): the second fit, ``sigma_`` included, reuses every compiled program (before the
    padding each new n compiled two EM loops and two eager ops, 0.5–1 s)."""
    X, y = _blobs(k=2, n=39, seed=3) if Est is SparseProbitClassifier else sinc(39, sigma=0.1, seed=3)
    Est(features="kernel", kernel_width=2.0, low_rank=False).fit(X[:37], y[:37])
    with programs_built() as built:
        m = Est(features="kernel", kernel_width=2.0, low_rank=False).fit(X, y)
    assert built == []
    assert m.n_active_ > 0


def test_a_noise_variance_at_its_floor_is_reported():
    """With more basis functions than points the flat prior on σ² has no maximum: EM interpolates
    and σ² stops at its floor (1e-10 · mean y²). That is said, not left as a silent noise_var_."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 60))
    y = X[:, :3].sum(1) + 0.5 * rng.normal(size=30)
    with pytest.warns(UserWarning, match="fell to its floor"):
        wide = AdaptiveSparseRegressor().fit(X, y)
    assert wide.noise_var_ < 1e-8 * np.mean(y**2)
    Xs, ys = sinc(60, sigma=0.1, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        kernel = AdaptiveSparseRegressor(features="kernel", kernel_width=2.0).fit(Xs, ys)
    assert 0.5 * 0.01 < kernel.noise_var_ < 2 * 0.01


def test_a_fit_that_prunes_every_weight_says_so():
    """Laplace EM with γ fixed is not scale-free: y in large units gives the all-zero MAP, bias
    included, which predicts 0 everywhere; the fit warns instead of returning it silently."""
    X, y = sinc(60, sigma=0.1, seed=0)
    X = np.column_stack([X[:, 0], np.cos(X[:, 0])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AdaptiveSparseRegressor(prior="laplace").fit(X, y + 1.0)  # kept weights: no warning
    with pytest.warns(UserWarning, match="pruned every weight.*standardize"):
        fit = AdaptiveSparseRegressor(prior="laplace").fit(X, 1e4 * (y + 1.0))
    assert not np.any(fit.beta_)
    rng = np.random.default_rng(0)
    with pytest.warns(UserWarning, match="pruned every weight.*no basis function"):
        AdaptiveSparseRegressor().fit(rng.normal(size=(40, 3)), rng.normal(size=40))
