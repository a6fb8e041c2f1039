"""The sampling estimators' basis (GibbsRegressor, GibbsClassifier, NutsRegressor, NutsClassifier,
``standardize=True``): the EM estimators' standardized basis without its bias column, so that the
hierarchy is on the EM fit's weights, the intercept is the value at the training mean, and inputs
offset by 1e8 fit as the inputs themselves.

Oracles: scikit-learn's ``PolynomialFeatures`` for the raw terms a basis function is re-expressed in
(a direct dense computation of the function at new points); the EM estimators' own fitted feature map
(``AdaptiveSparseRegressor``) for the basis; the fit on the unshifted inputs for the shifted ones;
and, slow, NUTS on the EM fit's own model record (its twin) for the Gibbs draws on raw units.
"""
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import PolynomialFeatures

from sparsebayes.comparisons.fitted_model import draws_on_raw_terms, to_raw_terms
from sparsebayes.inference import AdaptiveSparseRegressor, GibbsClassifier, GibbsRegressor
from sparsebayes.inference.estimators.sampling_fit import CentredBasis, raw_point, sampling_design
from sparsebayes.models import HorseshoePrior, JeffreysPrior, LaplacePrior

# the reliability property's sampler settings and shapes (tests/test_reliability_properties.py), so that
# the compiled sweeps are shared
DRAWS = dict(num_warmup=50, num_samples=100, num_chains=1, rhat_max=np.inf)


def _data(n=30, p=6, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    Z = (Z - Z.mean(axis=0)) / Z.std(axis=0)
    return Z, Z[:, 0] - Z[:, 1] + 0.5 * Z[:, 2] + 0.3 * rng.standard_normal(n)


@pytest.mark.parametrize("features", ["linear", "quadratic"])
@pytest.mark.parametrize("prior", [LaplacePrior(1.0), JeffreysPrior()], ids=["centred", "centred-and-scaled"])
def test_raw_weights_give_the_basis_function_in_the_data_units(features, prior):
    """``b₀ + h(x)ᵀβ`` on the centred basis equals ``intercept + h_raw(x)ᵀcoef`` with
    :func:`raw_point`'s numbers, ``h_raw`` scikit-learn's raw terms, at new points far from the data."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3)) * [1.0, 30.0, 0.2] + [5.0, -400.0, 2.0]
    fm, H = sampling_design(X, features, kernel_width="scale", fit_intercept=True, standardize=True, prior=prior)
    assert isinstance(fm, CentredBasis) and bool(fm.inner.scale) == isinstance(prior, JeffreysPrior)
    np.testing.assert_allclose(H.mean(axis=0)[:3], 0.0, atol=1e-9)  # the linear terms: centred inputs
    beta, b0 = rng.normal(size=H.shape[1]), 0.7
    coef, intercept = raw_point(fm, beta, b0)
    poly = PolynomialFeatures(degree=1 if features == "linear" else 2, include_bias=False).fit(X)
    names = list(poly.get_feature_names_out([f"x{i}" for i in range(3)]))
    assert list(fm.get_feature_names_out([f"x{i}" for i in range(3)])) == names
    X_new = rng.normal(size=(7, 3)) * 50.0
    np.testing.assert_allclose(intercept + poly.transform(X_new) @ coef, b0 + fm.transform(X_new) @ beta, rtol=1e-9)


@pytest.mark.parametrize("name", ["laplace", "jeffreys", "horseshoe"])
@pytest.mark.parametrize("intercept", [True, False])
def test_the_basis_is_the_em_fits_without_its_bias(name, intercept):
    """The basis the hierarchy is on is the EM estimator's with the same prior (centred with the
    intercept, ``bias=True``; scaled under Jeffreys), its bias column apart, and named as EM names it."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)) * [100.0, 0.01, 1.0] + [1e4, 3.0, -2.0]
    y = X @ [0.01, 50.0, 0.0] + rng.normal(size=40)
    prior = {"laplace": LaplacePrior(1.0), "jeffreys": JeffreysPrior(), "horseshoe": HorseshoePrior()}[name]
    em = AdaptiveSparseRegressor(prior=name, bias=intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em.fit(X, y)
    fm, H = sampling_design(X, "linear", kernel_width="scale", fit_intercept=intercept, standardize=True, prior=prior)
    H_em = em.feature_map_.transform(X)[:, int(intercept):]
    np.testing.assert_allclose(H, H_em, rtol=1e-12, atol=1e-12)
    names = list(em.feature_map_.get_feature_names_out(["a", "b", "c"]))[int(intercept):]
    assert list(fm.get_feature_names_out(["a", "b", "c"])) == names == ["a", "b", "c"]
    raw, H_raw = sampling_design(X, "linear", kernel_width="scale", fit_intercept=intercept, standardize=False,
                                 prior=prior)
    np.testing.assert_array_equal(H_raw, X)  # standardize=False: the inputs as they are


@pytest.mark.parametrize("cls", [GibbsRegressor, GibbsClassifier])
def test_inputs_offset_by_1e8_fit_as_the_inputs(cls):
    """Inputs offset by 1e8 (columns 1e2 to 1e8) gave non-finite draws (a FloatingPointError): now
    the fit samples the model of the unshifted inputs, the same seed the same draws to the offset's
    rounding, so its predictions are theirs; ``coef_`` is theirs and ``intercept_`` moves by
    ``−coefᵀ offset``; the draws are on the centred basis (the compare layout's: not raw terms)."""
    Z, y = _data()
    t = y if cls is GibbsRegressor else (y > 0).astype(int)
    offset = np.array([1e8, -1e8, 1e2, 3e5, -7e6, 1e4])
    base = cls(**DRAWS).fit(Z, t)
    est = cls(**DRAWS).fit(Z + offset, t)
    assert np.all(np.isfinite(est.beta_draws_)) and np.all(np.isfinite(est.intercept_draws_))
    np.testing.assert_allclose(est.beta_draws_, base.beta_draws_, rtol=1e-5, atol=1e-6)
    predict = (lambda e, X: e.predict_proba(X)) if cls is GibbsClassifier else (lambda e, X: e.predict(X))
    np.testing.assert_allclose(predict(est, Z + offset), predict(base, Z), atol=1e-6)
    np.testing.assert_allclose(est.coef_, base.coef_, rtol=1e-5, atol=1e-6)
    moved = np.ravel(base.intercept_) - np.atleast_2d(base.coef_) @ offset
    np.testing.assert_allclose(np.ravel(est.intercept_), moved, rtol=1e-6)
    assert not draws_on_raw_terms(est)
    np.testing.assert_allclose(to_raw_terms(est.feature_map_)(est.beta_), est.coef_, rtol=1e-12)


def test_refused_sweeps_are_a_warning_not_a_silent_fit():
    """Duplicated columns in units of 1e8 under a hierarchy with units (centred, not scaled, as under
    EM): the Gaussian sweeps leave float64 and the engine refuses them, so the chain stays where it
    was; the fit says so (DegenerateFitWarning) instead of returning repeated draws in silence."""
    from sparsebayes.inference._warnings import DegenerateFitWarning

    Z, y = _data()
    X = np.column_stack([Z[:, :4], Z[:, 0], Z[:, 2]]) * 1e8
    with pytest.warns(DegenerateFitWarning, match="refused .*scale X"):
        est = GibbsRegressor(**DRAWS).fit(X, y)
    assert np.all(np.isfinite(est.beta_draws_))


def test_standardize_must_be_a_bool():
    Z, y = _data()
    with pytest.raises(ValueError, match="standardize must be True or False"):
        GibbsRegressor(standardize="yes", **DRAWS).fit(Z, y)


@pytest.mark.slow  # NUTS programs compile for tens of seconds
def test_nuts_estimators_fit_inputs_offset_by_1e8_and_sample_their_model():
    """NUTS on inputs offset by 1e8: finite draws, and the model record (the design NUTS and compare
    sample) is the one of the unshifted inputs; NUTS's own draws may differ by Monte Carlo error
    (a rounding can flip one of its discrete steps)."""
    from sparsebayes.inference import NutsClassifier, NutsRegressor

    Z, y = _data()
    offset = np.array([1e8, -1e8, 1e2, 3e5, -7e6, 1e4])
    for cls, t in [(NutsRegressor, y), (NutsClassifier, (y > 0).astype(int))]:
        base = cls(**DRAWS).fit(Z, t)
        est = cls(**DRAWS).fit(Z + offset, t)
        assert np.all(np.isfinite(est.beta_draws_)) and np.all(np.isfinite(est.intercept_draws_))
        a, b = est.posterior_model(Z + offset, t), base.posterior_model(Z, t)
        np.testing.assert_allclose(a.H, b.H, atol=1e-6)
        np.testing.assert_array_equal(a.y, b.y)
        assert a.label == b.label


@pytest.mark.slow  # about a minute on 2 cores: Gibbs and NUTS at length
def test_gibbs_on_raw_units_agrees_with_nuts_on_the_em_fits_own_model():
    """GibbsRegressor(LaplacePrior(γ), fit_intercept=False) on inputs in raw units (sds 100, 0.01, 1)
    samples the EM fit's model (AdaptiveSparseRegressor(prior="laplace", gamma=γ, bias=False)): the same
    record (design, targets, log density at a draw), and the posterior means of β and σ² of its Gibbs
    draws within 4 MCSE of NUTS's on the EM fit's record (``sample_posterior``)."""
    from numpyro.infer.util import log_density

    from sparsebayes.inference.posterior import arviz_compat as compat

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3)) * [100.0, 0.01, 1.0]
    y = X @ [0.01, 40.0, 0.0] + 0.5 * rng.normal(size=40)
    em = AdaptiveSparseRegressor(prior="laplace", gamma=2.0, bias=False).fit(X, y)
    gibbs = GibbsRegressor(prior=LaplacePrior(2.0), fit_intercept=False, num_warmup=1000, num_samples=2500,
                           num_chains=4, seed=0, rhat_max=1.02).fit(X, y)
    a, b = gibbs.posterior_model(X, y), em.posterior_model(X, y)
    np.testing.assert_array_equal(a.H, b.H)
    post = gibbs.to_inference_data().posterior
    values = {k: np.asarray(post[k].values[0, 7]) for k in ("beta", "noise_var")}
    assert (float(log_density(a.model, (a.H, a.y), a.kwargs, values)[0])
            == pytest.approx(float(log_density(b.model, (b.H, b.y), b.kwargs, values)[0]), rel=1e-12))
    nuts = em.sample_posterior(X, y, "nuts", draws=1500, chains=4, warmup=1000, seed=1)
    for var in ("beta", "noise_var"):
        g, u = compat.summary(gibbs.to_inference_data(), var_names=[var]), compat.summary(nuts, var_names=[var])
        gap = np.abs(g["mean"].to_numpy() - u["mean"].to_numpy())
        bound = 4 * np.hypot(g["mcse_mean"].to_numpy(), u["mcse_mean"].to_numpy())
        assert np.all(gap <= bound), (var, gap, bound)
