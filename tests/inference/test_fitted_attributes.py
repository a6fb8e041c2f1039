"""Every kernel estimator names its fitted pieces alike: ``feature_map_`` (the fitted transformer
that makes the design) and ``relevance_indices_`` (the training points whose kernels are kept)."""
import numpy as np
import pytest
from sklearn.preprocessing import PolynomialFeatures

import sparsebayes.inference as inference
from sparsebayes.models.features import GaussianKernelFeatures

RNG = np.random.default_rng(3)
X = RNG.normal(size=(40, 2))
Y_REG = np.sin(2 * X[:, 0]) + 0.1 * RNG.normal(size=40)
Y_CLS = (X[:, 0] ** 2 + X[:, 1] > 0.5).astype(int)


@pytest.mark.parametrize("est", [
    inference.AdaptiveSparseRegressor(features="kernel", kernel_width=1.0),
    inference.SparseProbitClassifier(features="kernel", kernel_width=1.0),
    inference.RVMRegressor(features="kernel", kernel_width=1.0, fit_intercept=False),
    inference.BLSRegressor(features="kernel", kernel_width=1.0, fit_intercept=False, lambda_update="profiled"),
    inference.FLAPRegressor(features="kernel", kernel_width=1.0, fit_intercept=False, estimate_noise=True,
                            lambda_update="profiled"),
    inference.RVMClassifier(kernel_width=1.0),
    inference.SMLRClassifier(features="kernel", kernel_width=1.0, lam=0.5),
    inference.SMLRCV(features="kernel", kernel_width=1.0, cv=3, n_lams=4),
], ids=lambda est: type(est).__name__)
def test_kernel_estimators_share_feature_map_and_relevance_indices(est):
    y = Y_CLS if hasattr(est, "predict_proba") else Y_REG
    est.fit(X, y)
    fm = est.feature_map_
    assert isinstance(fm, GaussianKernelFeatures) and fm.width == 1.0
    H = fm.transform(X)
    assert H.shape == (40, 41)  # bias, then one kernel per training point
    kept = np.asarray(est.relevance_indices_)
    assert kept.size > 0 and set(kept.tolist()) <= set(range(40))
    # the kept indices are the training points whose kernel column carries a nonzero weight
    # coef_ is (40,), (k, 40) or (41,): kernel columns last, after any bias
    weights = np.atleast_2d(est.coef_)
    kernel_weights = (weights if weights.shape[1] in (40, 41) else weights.T)[:, -40:]
    np.testing.assert_array_equal(np.flatnonzero(np.any(kernel_weights != 0, axis=0)), np.sort(kept))
    # column 1 + i of the design is the kernel centred on training point i
    i = int(kept[0])
    np.testing.assert_allclose(H[:, 1 + i], np.exp(-np.sum((X - X[i]) ** 2, axis=1) / 2.0), rtol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("make", [
    lambda features, bias: inference.AdaptiveSparseRegressor(features=features, kernel_width=1.0, bias=bias),
    lambda features, bias: inference.SparseProbitClassifier(features=features, kernel_width=1.0, bias=bias),
    lambda features, bias: inference.RVMClassifier(features=features, kernel_width=1.0, bias=bias),
], ids=["AdaptiveSparseRegressor", "SparseProbitClassifier", "RVMClassifier"])
def test_a_kernel_transformer_gives_what_the_kernel_string_gives(make, bias):
    """``features=GaussianKernelFeatures(...)`` is the map ``features="kernel"`` builds, so the fit,
    ``intercept_`` and ``relevance_indices_`` agree. Before, the EM estimators split off a bias
    column whenever their own ``bias`` was set (the default), which a transformer ignores: with
    ``GaussianKernelFeatures(bias=False)`` the first kernel's weight became the intercept and
    every relevance index was one too small; ``RVMClassifier`` kept the transformer's bias column
    in ``coef_``, so its indices were one too large."""
    y = Y_REG if "Regressor" in type(make("kernel", bias)).__name__ else Y_CLS
    by_name = make("kernel", bias).fit(X, y)
    by_map = make(GaussianKernelFeatures(width=1.0, bias=bias), True).fit(X, y)
    np.testing.assert_array_equal(by_map.relevance_indices_, by_name.relevance_indices_)
    np.testing.assert_allclose(by_map.intercept_, by_name.intercept_, atol=1e-12)
    np.testing.assert_allclose(by_map.coef_, by_name.coef_, atol=1e-12)


def test_smlr_takes_a_transformer_basis():
    """``PolynomialFeatures(2)`` spans the columns of ``features="quadratic"`` (bias, inputs, squares,
    products; in another order): the same penalized problem, so the same objective and the
    same number of nonzero weights (the quadratic map on the raw inputs, ``standardize=False``, as the
    transformer's)."""
    quad = inference.SMLRClassifier(features="quadratic", lam=0.3, tol=1e-10, max_iter=20000, standardize=False).fit(X, Y_CLS)
    poly = inference.SMLRClassifier(features=PolynomialFeatures(2), lam=0.3, tol=1e-10, max_iter=20000).fit(X, Y_CLS)
    assert isinstance(poly.feature_map_, PolynomialFeatures) and poly.feature_map_ is not poly.features
    np.testing.assert_allclose(poly.objective_, quad.objective_, rtol=1e-8)
    assert poly.n_nonzero_ == quad.n_nonzero_
    np.testing.assert_allclose(poly.predict_proba(X), quad.predict_proba(X), atol=1e-6)
    names = poly.to_inference_data().posterior["beta"].coords["basis"].values.tolist()
    assert names == PolynomialFeatures(2).fit(X).get_feature_names_out(["x0", "x1"]).tolist()


@pytest.mark.parametrize("est", [
    inference.AdaptiveSparseRegressor(features="kernel", kernel_width=1.0),
    inference.SparseProbitClassifier(features="kernel", kernel_width=1.0),
    inference.RVMRegressor(features="kernel", kernel_width=1.0, fit_intercept=False),
    inference.BLSRegressor(),
    inference.RVMClassifier(kernel_width=1.0),
    inference.SMLRClassifier(features="kernel", kernel_width=1.0, lam=0.5),
    inference.SMLRClassifier(lam=0.5, solver="block"),
], ids=lambda est: f"{type(est).__name__}-{getattr(est, 'solver', '')}")
def test_every_engine_runs_in_float64_on_float32_input(est):
    """float32 inputs are cast: every engine (EM, type-II, Bernoulli type-II, the bound solvers)
    returns float64 weights, equal to the fit on the same data given in float64."""
    from sklearn.base import clone

    y = Y_CLS if hasattr(est, "predict_proba") else Y_REG
    low = clone(est).fit(X.astype(np.float32), y)
    high = clone(est).fit(X.astype(np.float32).astype(np.float64), y)
    coef = low.beta_ if hasattr(low, "beta_") else low.coef_
    assert coef.dtype == np.float64
    np.testing.assert_array_equal(coef, high.beta_ if hasattr(high, "beta_") else high.coef_)


@pytest.mark.parametrize("est", [
    inference.SparseProbitClassifier(features="kernel", kernel_width=1.0, max_iter=2),
    inference.RVMRegressor(features="kernel", kernel_width=1.0, max_iter=2),
    inference.RVMClassifier(kernel_width=1.0, max_iter=2),
    inference.SMLRClassifier(features="kernel", kernel_width=1.0, lam=0.01, max_iter=2),
], ids=lambda est: type(est).__name__)
def test_a_convergence_warning_names_the_line_that_called_fit(est):
    from sklearn.exceptions import ConvergenceWarning

    y = Y_CLS if hasattr(est, "predict_proba") else Y_REG
    with pytest.warns(ConvergenceWarning) as record:
        est.fit(X, y)
    assert {w.filename for w in record if issubclass(w.category, ConvergenceWarning)} == {__file__}


def test_a_warning_made_an_error_fails_the_fit_and_leaves_nothing_fitted():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    est = inference.RVMRegressor(features="kernel", kernel_width=1.0, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            est.fit(X, Y_REG)
    assert not [k for k in vars(est) if k.endswith("_")]


@pytest.mark.parametrize("make, close", [
    (inference.AdaptiveSparseRegressor, True), (inference.SparseProbitClassifier, True), (inference.RVMRegressor, True), (inference.BLSRegressor, True),
    (inference.FLAPRegressor, True), (inference.RVMClassifier, True), (inference.SMLRClassifier, False), (inference.SMLRCV, False),
    (lambda: inference.BayesianLassoRegressor(num_warmup=500, num_samples=4000, num_chains=2, rhat_max=np.inf), True),
], ids=lambda m: getattr(m, "__name__", "BayesianLassoRegressor") if callable(m) else "")
def test_a_constant_column_is_fitted_as_scikit_learn_does(make, close):
    """A constant column was a ValueError, so cross-validation failed on a fold where a rare binary
    feature is constant. It is allowed now, as in scikit-learn. A constant feature beside an
    unpenalized or sparsely penalized bias (or centred away) changes the predictions little; SMLR
    penalizes its bias like every weight, so a constant 3 is a cheaper bias there (and moves λ_max),
    and its fit differs as a penalized-intercept logistic regression's would."""
    est = make()
    y = Y_CLS if hasattr(est, "predict_proba") else Y_REG
    Xc = np.column_stack([X, np.full(len(X), 3.0)])
    ref = make().fit(X, y)
    fit = est.fit(Xc, y)
    out = fit.predict_proba(Xc) if hasattr(est, "predict_proba") else fit.predict(Xc)
    expected = ref.predict_proba(X) if hasattr(est, "predict_proba") else ref.predict(X)
    assert np.all(np.isfinite(out))
    if close:
        np.testing.assert_allclose(out, expected, atol=0.1 * np.abs(expected).max())


def test_cross_validation_runs_where_a_rare_feature_is_constant_on_a_training_fold():
    from sklearn.model_selection import KFold, cross_val_score

    rare = np.column_stack([X, np.arange(len(X)) < 3])  # constant on the second fold's training half
    assert np.all(np.isfinite(cross_val_score(inference.AdaptiveSparseRegressor(), rare, Y_REG, cv=KFold(2))))


@pytest.mark.parametrize("Est", [inference.AdaptiveSparseRegressor, inference.RVMRegressor])
def test_a_constant_input_leaves_a_kernel_fit_as_it_was(Est):
    Xc = np.column_stack([X, np.full(len(X), 3.0)])
    a = Est(features="kernel", kernel_width=1.5).fit(X, Y_REG)
    b = Est(features="kernel", kernel_width=1.5).fit(Xc, Y_REG)
    np.testing.assert_allclose(b.predict(Xc), a.predict(X), atol=1e-9)


def test_every_estimator_names_the_kept_basis_the_objective_and_lam_alike():
    """One name per concept across the package: ``active_`` / ``n_active_`` (the kept basis),
    ``objective_`` (what the engine climbs), ``lam_`` (λ where the model has one), ``n_iter_``."""
    from sparsebayes.inference import PoissonRVMRegressor

    y_count = np.round(np.exp(0.5 * X[:, 0]) * 2)
    fits = [
        (inference.AdaptiveSparseRegressor(), Y_REG), (inference.SparseProbitClassifier(), Y_CLS), (inference.RVMRegressor(), Y_REG),
        (inference.BLSRegressor(), Y_REG), (inference.FLAPRegressor(), Y_REG), (inference.RVMClassifier(), Y_CLS),
        (inference.SMLRClassifier(lam=0.5), Y_CLS), (PoissonRVMRegressor(), y_count),
    ]
    for est, y in fits:
        est.fit(X, y)
        name = type(est).__name__
        for attr in ("active_", "n_active_", "objective_", "n_iter_", "coef_"):
            assert hasattr(est, attr), f"{name} has no {attr}"
        assert est.n_active_ == int(np.count_nonzero(est.active_)) or name in (
            "AdaptiveSparseRegressor", "SparseProbitClassifier", "RVMClassifier", "PoissonRVMRegressor"), name
        for old in ("n_kernels_", "log_posterior_", "support_", "retained_basis_", "lambda_"):
            assert not hasattr(est, old), f"{name} still has {old}"
    for est in (inference.BLSRegressor(), inference.FLAPRegressor(), inference.SMLRClassifier(lam=0.5)):
        assert hasattr(est.fit(X, Y_CLS if isinstance(est, inference.SMLRClassifier) else Y_REG), "lam_")


def test_gamma_and_lam_mean_one_thing_across_the_engines():
    """``gamma_`` is the rate on the prior variances (EM's γ; FLAP's and BLS's paper λ) and
    ``lam_ = √gamma_`` the l1 weight of the Laplace marginal (SMLR's λ): FLAP's fitted γ as an EM
    prior gives the EM objective's penalty λ‖β‖₁ with that ``lam_``; a model without such a rate
    (the RVM's ARD) has neither."""
    from sparsebayes.comparisons.datasets import diabetes
    from sparsebayes.models import LaplacePrior, LaplaceVariancePrior

    flap = inference.FLAPRegressor().fit(X, Y_REG)
    ds = diabetes()
    bls = inference.BLSRegressor().fit(ds.X, ds.y)
    em = inference.AdaptiveSparseRegressor(prior="laplace", gamma=2.5).fit(X, Y_REG)
    for est in (flap, bls, em):
        assert est.gamma_ > 0 and est.lam_ == pytest.approx(np.sqrt(est.gamma_), rel=1e-15), type(est).__name__
    assert em.gamma_ == 2.5
    as_em = LaplaceVariancePrior.laplace(flap.gamma_)
    assert as_em == LaplacePrior(gamma=flap.gamma_) and float(as_em.lam) == pytest.approx(flap.lam_, rel=1e-15)
    assert float(flap.to_inference_data().posterior["gamma"].values.ravel()[0]) == flap.gamma_
    assert float(flap.to_inference_data().posterior["lam"].values.ravel()[0]) == pytest.approx(flap.lam_)
    smlr = inference.SMLRClassifier(lam=0.5).fit(X, Y_CLS)
    assert LaplacePrior.from_lam(smlr.lam_).lam == pytest.approx(smlr.lam_)
    rvm = inference.RVMRegressor().fit(X, Y_REG)
    assert not hasattr(rvm, "gamma_") and not hasattr(rvm, "lam_")
    assert "lam" not in rvm.to_inference_data().posterior
