"""The twin's Gibbs sampler for likelihoods with a conjugate augmentation (probit, logistic, Student-t,
negative binomial): :func:`sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented` on the twin's own design,
under the twin's names, checked against NUTS on the same model."""
from __future__ import annotations

import numpy as np
import pytest

from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior.twin_posterior import default_samplers, twin
from sparsebayes.models.priors.horseshoe import HorseshoePrior


@pytest.mark.parametrize("est, samplers", [
    (SparseProbitClassifier(prior="laplace"), ("nuts", "gibbs")),
    (SparseProbitClassifier(prior="laplace", link="logistic"), ("nuts", "gibbs")),
    (SparseProbitClassifier(prior=HorseshoePrior(0.5)), ("nuts", "gibbs")),
    (AdaptiveSparseRegressor(prior="laplace", likelihood="student_t"), ("nuts", "gibbs")),
    (AdaptiveSparseRegressor(prior="laplace", likelihood="negative_binomial"), ("nuts", "gibbs")),
    # the sweep would draw the t's scale, which this fit fixes: NUTS alone
    (AdaptiveSparseRegressor(prior="laplace", likelihood="student_t", noise_var=0.5), ("nuts",)),
    (AdaptiveSparseRegressor(prior="laplace", likelihood="poisson"), ("nuts",)),  # no augmentation
    # Gaussian: the hierarchy's own conditionals (the Laplace prior's, Park & Casella's mixture)
    (AdaptiveSparseRegressor(prior="laplace"), ("nuts", "gibbs")),
    (SparseProbitClassifier(prior="laplace", gamma_prior=(1.0, 1.0)), ("nuts", "gibbs")),  # γ sampled by its conditional
    (SparseProbitClassifier(prior="jeffreys"), ("nuts",)),
])
def test_default_samplers_follow_the_likelihood_and_the_hierarchy(est, samplers):
    assert default_samplers(est) == samplers


def _probit_data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = (X @ np.array([1.0, -0.7, 0.0]) + rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.slow
def test_the_gibbs_twin_has_the_nuts_twins_names():
    """A few sweeps (no NUTS): ``beta`` on the fitted basis, the pointwise log likelihood and observed data on
    ``obs`` as the NUTS twin's, and the held-out predictions group."""
    X, y = _probit_data(60)
    est = SparseProbitClassifier(prior="laplace", gamma=2.0).fit(X, y)
    idata = est.sample_posterior(X, y, "gibbs", draws=20, warmup=10, chains=2)
    t = twin(est, X, y)
    beta = idata.posterior["beta"]
    assert beta.dims == ("chain", "draw", "classifier", "basis") and list(beta.coords["basis"].values) == t.names
    assert idata.log_likelihood["y"].dims == ("chain", "draw", "obs") and idata.posterior.attrs["inference"] == (
        "augmented-gibbs")
    np.testing.assert_array_equal(idata.observed_data["y"].values, t.y)


@pytest.mark.slow
@pytest.mark.parametrize("gamma_prior", [None, (2.0, 2.0)], ids=["gamma-fixed", "gamma-estimated"])
def test_probit_laplace_gibbs_agrees_with_nuts(gamma_prior):
    """Albert & Chib's latent with the Laplace scale mixture (Gibbs; γ by its Gamma conditional when
    estimated) and the Laplace marginal (NUTS; γ sampled) sample one posterior: posterior means and sds of β
    (and γ) within 4 Monte Carlo standard errors."""
    X, y = _probit_data()
    est = SparseProbitClassifier(prior="laplace", gamma=1.0, gamma_prior=gamma_prior).fit(X, y)
    nuts = est.sample_posterior(X, y, "nuts", draws=1000, warmup=500, chains=2, seed=1)
    gibbs = est.sample_posterior(X, y, "gibbs", draws=2000, warmup=500, chains=2, seed=2)
    names = ["beta"] + ([] if gamma_prior is None else ["gamma"])
    draws = {k: np.hstack([np.asarray(v.posterior[n].values).reshape(v.posterior.sizes["chain"] * v.posterior.sizes["draw"], -1)
                           for n in names]) for k, v in (("nuts", nuts), ("gibbs", gibbs))}
    ess = {k: np.hstack([np.asarray(compat.ess(v, var_names=[n])[n].values).reshape(-1) for n in names]) for k, v in
           (("nuts", nuts), ("gibbs", gibbs))}
    mean_se = np.sqrt(sum(draws[k].var(axis=0) / ess[k] for k in draws))
    assert np.all(np.abs(draws["nuts"].mean(0) - draws["gibbs"].mean(0)) < 4 * mean_se)
    sd_se = np.sqrt(sum(draws[k].var(axis=0) / (2 * ess[k]) for k in draws))  # se of an sd ≈ sd/√(2 ESS)
    assert np.all(np.abs(draws["nuts"].std(0) - draws["gibbs"].std(0)) < 4 * sd_se)


@pytest.mark.slow
def test_student_t_regression_compares_nuts_and_gibbs_by_default():
    """``compare`` on a Student-t EM fit runs NUTS and the augmented Gibbs sweep by default (the t's scale
    mixture, s² under Jeffreys' prior in both): the same variables (``beta``, ``scale2``), and posterior
    means of β and s² within 4 Monte Carlo standard errors."""
    import sparsebayes

    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 3))
    y = X @ np.array([1.0, -0.6, 0.0]) + 0.4 * rng.standard_t(4.0, 80)
    cmp = sparsebayes.compare(AdaptiveSparseRegressor(prior="laplace", gamma=2.0, likelihood="student_t"), X, y,
                              num_warmup=400, num_samples=1000, num_chains=2, prior_draws=20, seed=3)
    assert list(cmp.samples) == ["nuts", "gibbs"]
    for name in ("beta", "scale2"):
        a, b = (np.asarray(cmp.samples[s].posterior[name].values) for s in ("nuts", "gibbs"))
        a, b = a.reshape(-1, *a.shape[2:]), b.reshape(-1, *b.shape[2:])
        ess = [np.asarray(compat.ess(cmp.samples[s], var_names=[name])[name].values) for s in ("nuts", "gibbs")]
        se = np.sqrt(a.var(axis=0) / ess[0] + b.var(axis=0) / ess[1])
        assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * se), (name, a.mean(0), b.mean(0), se)
