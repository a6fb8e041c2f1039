"""The pointwise log-likelihood computed from the draws and the model's record
(:mod:`sparsebayes.inference.posterior.pointwise_loglik`) equals what each engine computed inside sampling: NumPyro's
``log_likelihood`` of the observed site (NUTS), SciPy's normal density (the type-II twin's Gibbs), the
likelihood object's ``log_lik`` at the augmented Gibbs draws (probit, logistic); and a sample drawn
without it is smaller by that group and gets it back, equal, when asked."""
from __future__ import annotations

import numpy as np
import pytest

from sparsebayes.inference import AdaptiveSparseRegressor, BLSRegressor, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior.pointwise_loglik import (
    add_log_likelihood,
    drop_log_likelihood,
    log_likelihood_dataset,
    pointwise_log_likelihood,
)
from sparsebayes.inference.posterior.twin_posterior import sample_posterior, twin

SMALL = dict(num_warmup=15, num_samples=12, num_chains=2, seed=3)


def _regression(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ np.array([1.5, 0.0, -0.8]) + 0.5 * rng.standard_normal(n)


def _binary(n=50, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, (X @ np.array([1.0, -0.7, 0.0]) + rng.standard_normal(n) > 0).astype(int)


def _engine_and_ours(est, X, y, sampler):
    """The engine's ``log_likelihood`` ``y`` and this module's, on the same draws."""
    est = est.fit(X, y)
    t = twin(est, X, y)
    idata = sample_posterior(est, X, y, sampler, **SMALL)
    kwargs = {**t.kwargs, **t.nuts_kwargs} if sampler == "nuts" else t.kwargs
    ours = log_likelihood_dataset(idata.posterior, t, kwargs)["y"]
    return idata.log_likelihood["y"], ours, idata, t


@pytest.mark.slow
@pytest.mark.parametrize("make, data, sampler", [
    (lambda: AdaptiveSparseRegressor(prior="laplace"), _regression, "nuts"),  # Gaussian, NumPyro's log_likelihood
    (lambda: BLSRegressor(), _regression, "gibbs"),  # Gaussian, the type-II twin's Gibbs (SciPy's density)
    (lambda: SparseProbitClassifier(prior="laplace", gamma=2.0), _binary, "gibbs"),  # probit, augmented Gibbs
    (lambda: SparseProbitClassifier(prior="laplace", gamma=2.0, link="logistic"), _binary, "gibbs"),  # logistic
])
def test_equals_the_engines_in_sampler_values(make, data, sampler):
    X, y = data()
    engine, ours, idata, _ = _engine_and_ours(make(), X, y, sampler)
    assert ours.dims == ("chain", "draw", "obs") and engine.shape == ours.shape == (2, 12, len(y))
    np.testing.assert_allclose(ours.values, engine.values, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(ours.values))


@pytest.mark.slow
def test_probit_nuts_equals_numpyros_log_likelihood():
    X, y = _binary()
    engine, ours, _, _ = _engine_and_ours(SparseProbitClassifier(prior="laplace", gamma=2.0), X, y, "nuts")
    np.testing.assert_allclose(ours.values, engine.values, rtol=0, atol=1e-12)


def test_on_demand_blocks_thinning_and_dropping():
    """Blocks of draws give the same array; ``thin`` keeps every k-th draw; ``log_likelihood=False``
    returns no group and :func:`add_log_likelihood` puts the engine's values back."""
    X, y = _binary()
    est = SparseProbitClassifier(prior="laplace", gamma=2.0).fit(X, y)
    t = twin(est, X, y)
    full = sample_posterior(est, X, y, "gibbs", **SMALL)
    bare = sample_posterior(est, X, y, "gibbs", log_likelihood=False, **SMALL)
    assert not compat.has_group(bare, "log_likelihood") and compat.has_group(bare, "observed_data")
    np.testing.assert_array_equal(bare.posterior["beta"].values, full.posterior["beta"].values)
    add_log_likelihood(bare, t)
    np.testing.assert_allclose(bare.log_likelihood["y"].values, full.log_likelihood["y"].values, rtol=0, atol=1e-12)
    draws = {k: np.asarray(v.values).reshape(-1, *v.shape[2:]) for k, v in full.posterior.data_vars.items()}
    np.testing.assert_allclose(pointwise_log_likelihood(t, draws, block=5),
                               pointwise_log_likelihood(t, draws, block=1000), rtol=0, atol=1e-12)
    thinned = log_likelihood_dataset(full.posterior, t, thin=4)["y"]
    np.testing.assert_allclose(thinned.values, full.log_likelihood["y"].values[:, ::4], rtol=0, atol=1e-12)
    assert not compat.has_group(drop_log_likelihood(full), "log_likelihood")
    with pytest.raises(ValueError, match="thin"):
        log_likelihood_dataset(full.posterior, t, thin=0)
    with pytest.raises(ValueError, match="block"):
        pointwise_log_likelihood(t, draws, block=0)


@pytest.mark.slow
def test_compare_without_the_group_gives_the_same_loo():
    """``compare(..., log_likelihood=False)`` keeps no pointwise log-likelihood; ``Comparison.loo`` computes
    it from the draws and reports the same PSIS-LOO as a comparison that kept it."""
    import sparsebayes

    X, y = _binary()
    est = SparseProbitClassifier(prior="laplace", gamma=2.0).fit(X, y)
    settings = dict(samplers=("gibbs",), num_warmup=15, num_samples=40, num_chains=2, seed=3, progress_bar=False)
    kept = sparsebayes.compare(est, X, y, **settings)
    bare = sparsebayes.compare(est, X, y, log_likelihood=False, **settings)
    assert not compat.has_group(bare.samples["gibbs"], "log_likelihood")
    assert not compat.has_group(bare.idata, "log_likelihood")
    want, got = kept.loo(), bare.loo()
    assert "gibbs" in got.index
    for column in ("elpd_loo", "se", "p_loo"):
        np.testing.assert_allclose(got.loc["gibbs", column], want.loc["gibbs", column], rtol=1e-12)
    np.testing.assert_allclose(bare.idata.log_likelihood["y"].values, kept.idata.log_likelihood["y"].values,
                               rtol=0, atol=1e-12)


@pytest.mark.slow
def test_nuts_without_the_group_computes_the_same_when_asked():
    """``run_nuts(log_likelihood=False)`` (through ``sample_posterior``) returns no group; asked for it,
    :func:`ensure_log_likelihood` gives NumPyro's in-sampler values to 1e-12 on the same draws."""
    from sparsebayes.inference.posterior.pointwise_loglik import ensure_log_likelihood

    X, y = _regression()
    est = AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    full = sample_posterior(est, X, y, "nuts", **SMALL)
    bare = sample_posterior(est, X, y, "nuts", log_likelihood=False, **SMALL)
    assert not compat.has_group(bare, "log_likelihood")
    np.testing.assert_array_equal(bare.posterior["beta"].values, full.posterior["beta"].values)
    np.testing.assert_allclose(ensure_log_likelihood(bare)["y"].values, full.log_likelihood["y"].values,
                               rtol=0, atol=1e-12)
