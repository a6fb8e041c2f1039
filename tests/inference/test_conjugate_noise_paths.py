"""What the Gaussian's paths ask of a likelihood is its declared capability (``conjugate_noise``), not
its class: a user's Gaussian-like likelihood that states it (:class:`ToyGaussian`, no subclass of
:class:`~sparsebayes.models.likelihoods.GaussianLikelihood`) takes the same path and gets the same
numbers.

The type-II twin (:func:`~sparsebayes.inference.posterior.twin_typeii.typeii_twin_model`) takes a
likelihood object: its log density against a direct computation with scipy, for the Gaussian (σ²
sampled and fixed), the Bernoulli RVM's logistic likelihood and the toy."""
from __future__ import annotations

from typing import NamedTuple


import numpy as np
import pytest
import scipy.stats
from numpyro.infer.util import log_density

from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, GaussianLikelihood, StudentTLikelihood
from sparsebayes.inference.posterior.twin_typeii import typeii_twin_model


class ToyGaussian(NamedTuple):
    """A user's ``N(η, σ²)`` likelihood, σ² flat: the Gaussian's pieces under another name, in a class of
    its own (not a GaussianLikelihood, not registered), a pytree as EM's programs need."""

    locals().update({k: v for k, v in vars(GaussianLikelihood).items()
                     if not k.startswith("_") and k not in GaussianLikelihood._fields})
    name = "toy-gaussian"


def _data(seed=0, n=7, p=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, p)), rng.standard_normal(n), rng.standard_normal(p)


def _lp(H, y, params, **kw):
    return float(log_density(typeii_twin_model, (H, y), kw, params)[0])


@pytest.mark.parametrize("lik", [GaussianLikelihood(), ToyGaussian(), "gaussian"])
def test_gaussian_twin_density_matches_scipy(lik):
    H, y, beta = _data()
    s2, b0, lam, c, d = 0.7, 0.3, 2.0, 0.5, 0.2
    got = _lp(H, y, {"beta": beta, "noise_var": s2, "intercept": b0}, hierarchy="laplace", lam=lam, scaled=True,
              c=c, d=d, likelihood=lik)
    want = (scipy.stats.norm.logpdf(y, H @ beta + b0, np.sqrt(s2)).sum()
            + scipy.stats.laplace.logpdf(beta, 0.0, np.sqrt(s2 / lam)).sum() - (c + 1.0) * np.log(s2) - d / s2)
    assert got == pytest.approx(want, rel=1e-12)
    fixed = _lp(H, y, {"beta": beta}, hierarchy="laplace", lam=lam, noise_var=s2, intercept=False, likelihood=lik)
    want = scipy.stats.norm.logpdf(y, H @ beta, np.sqrt(s2)).sum() + scipy.stats.laplace.logpdf(
        beta, 0.0, np.sqrt(1.0 / lam)).sum()
    assert fixed == pytest.approx(want, rel=1e-12)


def test_bernoulli_twin_density_matches_scipy():
    H, _, beta = _data(1)
    t = (np.random.default_rng(2).random(H.shape[0]) < 0.5).astype(float)
    got = _lp(H, t, {"beta": beta}, hierarchy="laplace", lam=1.5, intercept=False,
              likelihood=BernoulliLogisticLikelihood())
    want = (scipy.stats.bernoulli.logpmf(t, 1.0 / (1.0 + np.exp(-(H @ beta)))).sum()
            + scipy.stats.laplace.logpdf(beta, 0.0, np.sqrt(1.0 / 1.5)).sum())
    assert got == pytest.approx(want, rel=1e-12)
    # an intercept under a likelihood without a flat one: N(0, 10²) (its intercept_prior)
    with_b0 = _lp(H, t, {"beta": beta, "intercept": 0.4}, hierarchy="laplace", lam=1.5,
                  likelihood=BernoulliLogisticLikelihood())
    want = (scipy.stats.bernoulli.logpmf(t, 1.0 / (1.0 + np.exp(-(H @ beta + 0.4)))).sum()
            + scipy.stats.laplace.logpdf(beta, 0.0, np.sqrt(1.0 / 1.5)).sum() + scipy.stats.norm.logpdf(0.4, 0, 10))
    assert with_b0 == pytest.approx(want, rel=1e-12)


def test_scaled_twin_needs_sigma2():
    H, y, _ = _data()
    with pytest.raises(ValueError, match="conjugate_noise"):
        _lp(H, y, {"beta": np.zeros(3)}, hierarchy="laplace", scaled=True, likelihood=BernoulliLogisticLikelihood())


def test_own_parameter_fixed_goes_to_observe():
    """A likelihood with a parameter that is not σ² (the Student-t's squared scale), fixed: the twin's
    data term is its ``log_lik`` at that value."""
    H, y, beta = _data(3)
    lik = StudentTLikelihood()
    got = _lp(H, y, {"beta": beta}, hierarchy="flat", noise_var=0.8, intercept=False, likelihood=lik)
    want = float(np.sum(lik.log_lik(y, H @ beta, 0.8)))
    assert got == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("large", [False, True], ids=["full-em", "working-set"])
def test_em_fit_of_a_conjugate_noise_likelihood_is_the_gaussian_s(monkeypatch, large):
    """EM under :class:`ToyGaussian` takes the Gaussian's path, with the same numbers to the bit: the
    working set on a large design (``MIN_ENTRIES`` lowered here), the ridge start on ``y``, the exact
    conditional covariance ``sigma_`` (not the Laplace one), ``noise_var_``, the predictive sd
    ``√(σ̂² + hᵀΣh)`` and the Gaussian conditional's draws."""
    from sparsebayes.inference import AdaptiveSparseRegressor
    from sparsebayes.inference.engines import em_working_set as ws

    rng = np.random.default_rng(4)
    H = rng.normal(size=(120, 12))
    y = H[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.3 * rng.normal(size=120)
    calls = []
    real = ws.fit_em_working_set
    monkeypatch.setattr("sparsebayes.inference.estimators.em_fit.fit_em_working_set",
                        lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    if large:
        monkeypatch.setattr(ws, "MIN_ENTRIES", 100)
    kw = dict(prior="laplace", gamma=50.0, bias=False, tol=1e-10, max_iter=10_000)
    ours = AdaptiveSparseRegressor(likelihood="gaussian", **kw).fit(H, y)
    toy = AdaptiveSparseRegressor(likelihood=ToyGaussian(), **kw).fit(H, y)
    assert [type(lik).__name__ for lik in calls] == (["GaussianLikelihood", "ToyGaussian"] if large else [])
    np.testing.assert_array_equal(toy.beta_, ours.beta_)
    np.testing.assert_array_equal(toy.sigma_, ours.sigma_)
    assert toy.noise_var_ == ours.noise_var_ and toy.noise_var_ is not None
    # the oracle: the conditional covariance (HᵀH/σ² + U⁻²)⁻¹ on the kept columns, U⁻² = √γ/|β| (Laplace)
    active = np.flatnonzero(ours.beta_)
    Hf = ours.feature_map_.transform(H)[:, active]
    precision = Hf.T @ Hf / ours.noise_var_ + np.diag(np.sqrt(ours.prior_.gamma) / np.abs(ours.beta_[active]))
    np.testing.assert_allclose(toy.sigma_, np.linalg.solve(precision, np.eye(active.size)), rtol=1e-8, atol=1e-14)
    for a, b in zip(toy.predict(H[:5], return_std=True), ours.predict(H[:5], return_std=True)):
        np.testing.assert_array_equal(a, b)
    assert toy.to_inference_data(draws=3).posterior.attrs["inference"] == ours.to_inference_data(
        draws=3).posterior.attrs["inference"]


def test_working_set_em_refuses_a_likelihood_without_conjugate_noise():
    from sparsebayes.inference.engines.em_working_set import fit_em_working_set, use_working_set
    from sparsebayes.models.priors import JeffreysPrior

    H = np.random.default_rng(0).normal(size=(40, 4))
    assert use_working_set(np.zeros((10_000, 1_000)), ToyGaussian())
    assert not use_working_set(np.zeros((10_000, 1_000)), StudentTLikelihood())
    with pytest.raises(ValueError, match="conjugate_noise"):
        fit_em_working_set(H, H[:, 0], JeffreysPrior(), StudentTLikelihood())
