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
    """A user's ``N(η, σ²)`` likelihood, σ² flat, not the Gaussian class: it states what the Gaussian
    states and has its methods."""

    support = "real"
    name = "toy-gaussian"
    param_name = "noise_var"
    constant_weight = True
    monotone_em = True
    curvature_kind = "observed"
    conjugate_noise = True
    intercept_prior = "flat"
    label = "toy Gaussian"

    log_lik = GaussianLikelihood.log_lik
    score = GaussianLikelihood.score
    curvature = GaussianLikelihood.curvature
    mean = GaussianLikelihood.mean
    variance = GaussianLikelihood.variance
    expected_targets = GaussianLikelihood.expected_targets
    em_working = GaussianLikelihood.em_working
    init_params = GaussianLikelihood.init_params
    noise_update = GaussianLikelihood.noise_update
    update_params = GaussianLikelihood.update_params
    neg_log_lik = GaussianLikelihood.neg_log_lik
    sample_params = GaussianLikelihood.sample_params
    observe = GaussianLikelihood.observe
    sample = GaussianLikelihood.sample
    gibbs_augment = GaussianLikelihood.gibbs_augment


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
