"""Hyperparameters and controls outside their range are a ValueError that names them (before,
several gave silent nonsense: BLS with b < 0 a λ of 2e300, with d < 0 a σ² of 1e-12; the RVM
classifier with tol < 0 all-zero weights)."""
import numpy as np
import pytest

import sparsebayes.inference as inference

RNG = np.random.default_rng(0)
X = RNG.normal(size=(30, 3))
Y_REG = X[:, 0] + 0.3 * RNG.normal(size=30)
Y_CLS = (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: inference.AdaptiveSparseRegressor(tol=0.0), "tol must be a finite number > 0, got 0.0"),
        (lambda: inference.AdaptiveSparseRegressor(max_iter=True), "max_iter must be an integer"),
        (lambda: inference.SMLRClassifier(tol=-1.0), "tol must be a finite number > 0"),
        (lambda: inference.SMLRClassifier(max_iter=0), "max_iter must be an integer of at least 1, got 0"),
        (lambda: inference.SMLRCV(cv=1), "cv must be an integer of at least 2, got 1"),
        (lambda: inference.SMLRCV(n_lams=0), "n_lams must be an integer of at least 1"),
        (lambda: inference.SMLRCV(features="kernel", kernel_widths=[]), "kernel_widths must be None or a non-empty list"),
        (lambda: inference.SMLRCV(features="linear", kernel_widths=[0.5, 1.0]), "kernel_widths apply to features='kernel' only"),
        (lambda: inference.SMLRClassifier(features="rbf"),
         r"features must be 'linear', 'quadratic', 'kernel', None or a transformer, got 'rbf'"),
        (lambda: inference.SMLRCV(features="rbf"), r"features must be 'linear', 'quadratic', 'kernel', None or a transformer"),
        (lambda: inference.SMLRClassifier(features=3), "features must be .* or a transformer, got 3"),
        (lambda: inference.BLSRegressor(b=-5.0), "b must be a finite number ≥ 0, got -5.0"),
        (lambda: inference.BLSRegressor(d=-5.0), "d must be a finite number ≥ 0"),
        (lambda: inference.BLSRegressor(a=np.nan), "a must be a finite number ≥ 0, got nan"),
        (lambda: inference.BLSRegressor(tol=-1e-5), "tol must be a finite number ≥ 0"),
        (lambda: inference.BLSRegressor(noise_every=0), "noise_every must be an integer of at least 1"),
        (lambda: inference.BLSRegressor(max_active=0), "max_active must be an integer of at least 1"),
        (lambda: inference.RVMRegressor(c=-2.0), "c must be a finite number ≥ -1"),
        (lambda: inference.FLAPRegressor(estimate_noise=True, d=-1.0), "d must be a finite number ≥ 0"),
        (lambda: inference.RVMClassifier(tol=-1.0), "tol must be a finite number ≥ 0"),
        (lambda: inference.BayesianLassoRegressor(lam2_rate=-100.0), "lam2_rate must be a finite number ≥ 0"),
        (lambda: inference.BayesianLassoRegressor(d=-1.0), "d must be a finite number ≥ 0"),
        # flags: a string was taken for True ("no" is truthy) or failed deep inside with int('yes')
        (lambda: inference.BLSRegressor(fit_intercept="no"), "fit_intercept must be True or False, got 'no'"),
        (lambda: inference.SparseProbitClassifier(bias="yes"), "bias must be True or False, got 'yes'"),
        (lambda: inference.RVMClassifier(bias="no"), "bias must be True or False"),
        (lambda: inference.FLAPRegressor(estimate_noise="x"), "estimate_noise must be True or False"),
        (lambda: inference.SMLRClassifier(warm_start="x"), "warm_start must be True or False"),
        (lambda: inference.AdaptiveSparseRegressor(low_rank="x"), "low_rank must be True or False"),
        (lambda: inference.BayesianLassoRegressor(progress_bar="x"), "progress_bar must be True or False"),
        (lambda: inference.BayesianLassoRegressor(rhat_max="x"), "rhat_max must be a number > 1"),
        (lambda: inference.BayesianLassoRegressor(rhat_max=-1.0), "rhat_max must be a number > 1"),
        # non-numbers failed inside NumPy with a TypeError that named no parameter
        (lambda: inference.AdaptiveSparseRegressor(features="kernel", kernel_width="a"),
         "kernel width must be a finite number > 0"),
        (lambda: inference.RVMClassifier(kernel_width=None), "kernel width must be a finite number > 0, got None"),
        (lambda: inference.AdaptiveSparseRegressor(prior="laplace", gamma="a"), "gamma .* must be a finite number > 0"),
        (lambda: inference.AdaptiveSparseRegressor(noise_var="a"), "noise_var .* must be a finite number > 0"),
        (lambda: inference.FLAPRegressor(noise_var="a"), "noise_var must be a finite number > 0"),
        (lambda: inference.SMLRClassifier(lam="a"), "lam must be a finite number > 0"),
        (lambda: inference.SMLRCV(lams=1.0), "lams must be None or a non-empty list of numbers, got 1.0"),
        (lambda: inference.SMLRCV(features="kernel", kernel_widths=5.0), "kernel_widths must be None or a non-empty list"),
        (lambda: inference.BayesianLassoRegressor(credible_level="a"), "credible_level must be a finite number > 0"),
        (lambda: inference.BayesianLassoRegressor(seed=-1), "seed must be an integer of at least 0, got -1"),
    ],
)
def test_out_of_range_parameters_are_named(make, match):
    est = make()
    y = Y_CLS if hasattr(est, "predict_proba") else Y_REG
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_the_flat_limits_stay_allowed():
    """The papers' defaults sit on the boundaries: a = b = c = d = 0 (BLS), c = −1 (RVM), tol = 0."""
    assert inference.BLSRegressor(a=0, b=0, c=0, d=0).fit(X, Y_REG).coef_[0] > 0.5
    assert inference.RVMRegressor(c=-1, tol=0.0).fit(X, Y_REG).coef_[0] > 0.5


@pytest.mark.parametrize("Est", [inference.SMLRClassifier, inference.SMLRCV])
def test_smlr_takes_scikit_learns_random_state_values(Est):
    """``random_state=None`` and a ``RandomState`` failed inside JAX; an int still gives the same fit."""
    for state in (None, np.random.RandomState(0)):
        assert Est(random_state=state).fit(X, Y_CLS).score(X, Y_CLS) > 0.8
    a, b = Est(random_state=3).fit(X, Y_CLS), Est(random_state=3).fit(X, Y_CLS)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_flap_checks_and_keeps_its_fixed_noise_on_a_constant_target():
    """The constant-y short-cut skipped the noise_var check and reported σ² = 1e-12 for a fixed 2.0."""
    with pytest.raises(ValueError, match="noise_var must be"):
        inference.FLAPRegressor(noise_var=-1.0).fit(X, np.full(30, 2.0))
    assert inference.FLAPRegressor(noise_var=2.0).fit(X, np.full(30, 2.0)).noise_var_ == 2.0


def test_bayesian_lasso_inference_data_is_a_copy():
    bl = inference.BayesianLassoRegressor(num_warmup=50, num_samples=50, num_chains=1, rhat_max=np.inf).fit(X, Y_REG)
    idata = bl.to_inference_data()
    idata.posterior.attrs["edited"] = True
    assert "edited" not in bl.idata_.posterior.attrs
