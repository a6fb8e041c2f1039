"""The variates of the Gibbs samplers (:mod:`sparsebayes.inference.gibbs_variates`): the inverse-Gaussian
draw from a JAX key has SciPy's distribution, and the ``variates`` setting of the Bayesian Lasso's entry
points is checked (``"auto"`` names the device of an accelerator; the backend stubbed)."""
import jax
import numpy as np
import pytest
from scipy import stats

from sparsebayes.inference import gibbs_variates
from sparsebayes.inference.gibbs import run_gibbs
from sparsebayes.inference.gibbs_variates import choose_variates, inverse_gaussian


@pytest.mark.parametrize("backend, want", [("cpu", "numpy"), ("gpu", "device"), ("cuda", "device"), ("tpu", "device")])
def test_auto_draws_on_the_device_of_an_accelerator(monkeypatch, backend, want):
    monkeypatch.setattr(gibbs_variates.jax, "default_backend", lambda: backend)  # the backend stubbed
    assert choose_variates("auto") == want
    assert choose_variates("numpy") == "numpy" and choose_variates("device") == "device"


def test_an_unknown_source_is_named():
    with pytest.raises(ValueError, match="variates must be one of"):
        choose_variates("gpu")
    X, y = np.random.default_rng(0).normal(size=(2, 20, 3))[0], np.arange(20.0)
    with pytest.raises(ValueError, match="variates must be one of"):
        run_gibbs(X, y, num_warmup=5, num_samples=5, variates="host")


@pytest.mark.parametrize("mean, shape", [(1.0, 1.0), (0.3, 5.0), (1e3, 0.2)])
def test_the_inverse_gaussian_from_a_key_is_scipys(mean, shape):
    """``inverse_gaussian(key, μ, λ)`` (Michael, Schucany & Haas 1976 on the χ²₁ and U(0, 1) of the key's
    halves) against ``scipy.stats.invgauss(μ/λ, scale=λ)``: KS on 20,000 draws."""
    draws = np.asarray(inverse_gaussian(jax.random.PRNGKey(2), np.full(20000, mean), shape))
    assert stats.kstest(draws, stats.invgauss(mean / shape, scale=shape).cdf).pvalue > 1e-3
