"""The horseshoe on every engine that has its pieces: EM (MAP), NUTS on the twin, Gibbs
(Makalic & Schmidt), and the type-II engine's refusal; all on the same model of standardized
diabetes (``β_i ~ N(0, λ_i²τ²)``, ``λ_i ~ C⁺(0, 1)``, τ = 1, flat prior on σ², no intercept on
centred data)."""
import arviz as az
import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.engines import hierarchy_gibbs
from sparsebayes.inference import run_nuts
from sparsebayes.inference.engines.em_slices import fit_em
from sparsebayes.models import GaussianLikelihood, HorseshoePrior, require, sparse_regression_model


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


@pytest.fixture(scope="module")
def posteriors(diabetes):
    X, y = diabetes
    prior = HorseshoePrior(1.0)
    nuts = run_nuts(sparse_regression_model, X, y, prior=prior, num_warmup=500, num_samples=1000, num_chains=2,
                    progress_bar=False, seed=1, target_accept_prob=0.95)
    states, _ = hierarchy_gibbs.run(X, y, prior, num_warmup=500, num_samples=2000, num_chains=4, seed=2,
                                    fit_intercept=False)
    gibbs = compat.from_dict({"posterior": {"beta": states.beta, "noise_var": states.noise_var}})
    return nuts, gibbs


def _stat(idata, func):
    return np.asarray(func(idata.posterior["beta"].values.reshape(-1, idata.posterior["beta"].shape[-1])))


@pytest.mark.slow
def test_gibbs_matches_nuts_within_mcse(posteriors):
    nuts, gibbs = posteriors
    for prob in (0.05, 0.5, 0.95):
        q_n = _stat(nuts, lambda b: np.quantile(b, prob, axis=0))
        q_g = _stat(gibbs, lambda b: np.quantile(b, prob, axis=0))
        se = np.sqrt(az.mcse(nuts, var_names=["beta"], method="quantile", prob=prob)["beta"].values ** 2
                     + az.mcse(gibbs, var_names=["beta"], method="quantile", prob=prob)["beta"].values ** 2)
        z = np.abs(q_n - q_g) / se
        assert np.all(z < 4), f"quantile {prob}: |NUTS − Gibbs| / MCSE = {np.round(z, 2)}"
    # and the chains mixed
    assert float(az.rhat(gibbs)["beta"].max()) < 1.01


@pytest.mark.slow
def test_em_keeps_every_weight_the_posterior_puts_far_from_zero(diabetes, posteriors):
    X, y = diabetes
    nuts, _ = posteriors
    draws = nuts.posterior["beta"].values.reshape(-1, X.shape[1])
    far = np.abs(np.median(draws, axis=0)) > 3 * draws.std(axis=0)
    assert far.sum() >= 3  # bmi, bp, s5 at least: the check has teeth
    em = fit_em(X, y, HorseshoePrior(1.0), GaussianLikelihood(), tol=1e-8, max_iter=5000)
    assert em.converged and np.all(np.isfinite(em.beta))
    assert np.all(em.beta[far] != 0), f"EM pruned {np.flatnonzero(far & (em.beta == 0))}, far from 0 in the posterior"
    assert np.any(em.beta == 0)  # and it is sparse


def test_type2_and_a_wrong_engine_refuse_the_horseshoe_by_name():
    with pytest.raises(ValueError, match="HorseshoePrior has no type-II update"):
        require(HorseshoePrior(), "type2")


def test_the_estimators_take_the_horseshoe_by_name_or_object(diabetes):
    from sklearn.base import clone

    from sparsebayes.inference import AdaptiveSparseRegressor

    X, y = diabetes
    by_name = AdaptiveSparseRegressor(prior="horseshoe", tol=1e-8, max_iter=5000).fit(X, y)
    by_object = clone(AdaptiveSparseRegressor(prior=HorseshoePrior(1.0), tol=1e-8, max_iter=5000)).fit(X, y)
    np.testing.assert_array_equal(by_name.coef_, by_object.coef_)
    # the design is centred and y has mean 0, so the penalized bias is pruned and the slopes are the
    # engine's fit on the raw columns
    em = fit_em(X, y, HorseshoePrior(1.0), GaussianLikelihood(), tol=1e-8, max_iter=5000)
    np.testing.assert_allclose(by_name.coef_, em.beta, atol=1e-6)
    idata = by_name.to_inference_data()
    assert idata.posterior.attrs["inference"] == "em-horseshoe"
    with pytest.raises(ValueError, match="prior must be one of"):
        AdaptiveSparseRegressor(prior="horse").fit(X, y)
