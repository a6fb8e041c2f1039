"""The n-independent (Gram) form of the Gaussian type-II engine against its design form.

The Gram form runs every engine step from ``ΦᵀΦ``, ``Φᵀy``, ``yᵀy`` and ``N``
(:class:`sparsebayes.inference.engines.typeii_exact.GramData`); the design form computes ``Φᵀφ_m`` from the
``N × M`` design at each add. Both must reach the same fit (weights, kept set, σ², ``L``) up to
rounding, for every hierarchy the regressors fit, through the engine and through the estimators.
"""
import numpy as np
import pytest

from sparsebayes.inference.engines import typeii_design, typeii_exact
from sparsebayes.inference.engines.typeii_design import GramStatistics, fit_design, use_gram
from sparsebayes.inference.estimators.typeii_estimators import BLSRegressor, FLAPRegressor, RVMRegressor
from sparsebayes.models.priors.typeii import ARDPrior, ScaledLaplacePrior

N, P = 2000, 30


def _problem(seed=0, n=N, p=P):
    """A sparse linear problem with correlated columns and a few nonzero weights."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) @ (np.eye(p) + 0.3 * rng.standard_normal((p, p)) / np.sqrt(p))
    beta = np.zeros(p)
    beta[rng.choice(p, 6, replace=False)] = rng.uniform(0.5, 2.0, 6) * rng.choice([-1, 1], 6)
    return X, X @ beta + 0.5 * rng.standard_normal(n)


def _engine_fit(X, y, prior, gram):
    noise0 = 0.1 * np.var(y)
    factor = GramStatistics.of(X, y) if gram else None
    state = fit_design(None if gram else X, y, prior, noise0, factor=factor)
    p = X.shape[1]
    weights = np.asarray(typeii_exact.coefficients(state, state.var.shape[0]))[:p]
    return weights, np.asarray(state.var)[:p] > 0, float(state.noise_var), float(state.objective), state


@pytest.mark.slow  # the estimators' test below takes the same engine paths (fit_design) in the default suite
@pytest.mark.parametrize("prior", [ARDPrior(), ScaledLaplacePrior()], ids=["ard", "bls"])
def test_engine_gram_form_equals_design_form(prior):
    X, y = _problem()
    w_d, kept_d, s2_d, L_d, st_d = _engine_fit(X, y, prior, gram=False)
    w_g, kept_g, s2_g, L_g, st_g = _engine_fit(X, y, prior, gram=True)
    assert bool(st_d.converged) and bool(st_g.converged)
    assert 2 <= kept_d.sum() < P  # a sparse fit: the comparison covers adds and prunes
    np.testing.assert_array_equal(kept_g, kept_d)
    np.testing.assert_allclose(w_g, w_d, rtol=0, atol=1e-8 * np.abs(w_d).max())
    np.testing.assert_allclose(s2_g, s2_d, rtol=1e-8)
    np.testing.assert_allclose(L_g, L_d, rtol=1e-10, atol=1e-8)


def test_gram_data_holds_the_statistics():
    """``GramData``'s fields are the design's products (a direct dense computation)."""
    X, y = _problem(seed=1, n=300, p=7)
    data = typeii_exact.make_gram_data(*GramStatistics.of(X, y)[:3], X.shape[0])
    np.testing.assert_allclose(np.asarray(data.Phi), X.T @ X, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(data.Phity), X.T @ y, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(data.col_sq), np.sum(X * X, axis=0), rtol=1e-13)
    np.testing.assert_allclose(float(data.yy), y @ y, rtol=1e-13)
    assert float(data.n_obs) == 300


@pytest.mark.parametrize("make", [RVMRegressor, BLSRegressor,
                                  pytest.param(lambda: FLAPRegressor(estimate_noise=True), marks=pytest.mark.slow)],
                         ids=["rvm", "bls", "flap-sigma"])
def test_estimators_gram_form_equals_design_form(make, monkeypatch):
    """At N = 2,000, M = 30 the regressors take the Gram form (:func:`use_gram`); forcing the design
    form gives the same fitted attributes to 1e-8."""
    X, y = _problem(seed=2)
    assert use_gram(*X.shape)
    via_gram = make().fit(X, y)
    monkeypatch.setattr(typeii_design, "GRAM_MIN_N", 10**12)  # read by use_gram at each call
    via_design = make().fit(X, y)
    np.testing.assert_array_equal(via_gram.active_, via_design.active_)
    scale = np.abs(via_design.coef_).max()
    np.testing.assert_allclose(via_gram.coef_, via_design.coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(via_gram.intercept_, via_design.intercept_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(via_gram.noise_var_, via_design.noise_var_, rtol=1e-8)
    np.testing.assert_allclose(via_gram.objective_, via_design.objective_, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(via_gram.sigma_, via_design.sigma_, rtol=1e-7, atol=1e-12)
    assert via_gram.n_iter_ == via_design.n_iter_


def test_small_and_kernel_designs_keep_the_design_form():
    """The paper reproductions' shapes (N ≤ 1,000, kernel designs N × (N + 1)) are not switched."""
    assert not use_gram(50, 8)  # bls-table3-sim1
    assert not use_gram(1000, 1001)  # a kernel design
    assert not use_gram(4000, 4001)
    assert use_gram(10**5, 1000) and use_gram(10**6, 100)


def test_fit_many_takes_the_gram_form_as_fit_does():
    """``fit_many`` hands a Gram-form problem to the engine alone, as ``fit`` does: the same fit."""
    from sparsebayes.inference.estimators.typeii_many import fit_many

    X, y = _problem(seed=2)
    single = RVMRegressor().fit(X, y)
    (many,) = fit_many(RVMRegressor(), [X], [y])
    np.testing.assert_array_equal(many.coef_, single.coef_)
    assert many.noise_var_ == single.noise_var_ and many.objective_ == single.objective_
