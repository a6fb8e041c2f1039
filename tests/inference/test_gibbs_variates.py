"""Where the Gibbs sampler draws its random numbers (:mod:`sparsebayes.inference.engines.gibbs_variates`):
the device's generator has the distributions of NumPy's, its draws do not depend on how the
sweeps are cut, and ``"auto"`` takes it on an accelerator (the backend stubbed)."""
import jax
import numpy as np
import pytest
from scipy import stats

from sparsebayes.comparisons.datasets import diabetes
from sparsebayes.inference.engines import gibbs_variates
from sparsebayes.inference.engines.gibbs import Hyper, run_gibbs
from sparsebayes.inference.engines.gibbs_variates import (choose_variates, device_key, device_variates, draw_variates,
                                                  gamma_shapes, variate_streams)


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


def _device(first, sweeps, batch=3, n_obs=7, rows=10, p=4, use_cholesky=False, seed=5):
    shapes = np.asarray(gamma_shapes(n_obs, p, Hyper(1.0, 1.78, 0.5, 0.0)))
    return device_variates(device_key(seed), first, sweeps, batch, n_obs, rows, p, shapes, use_cholesky)


def test_device_draws_do_not_depend_on_how_the_sweeps_are_cut():
    whole = _device(0, 6)
    parts = [_device(0, 2), _device(2, 2), _device(4, 2)]
    for name, arr in whole._asdict().items():
        cut = np.concatenate([np.asarray(getattr(part, name)) for part in parts])
        np.testing.assert_array_equal(cut, np.asarray(arr), err_msg=name)
    assert not np.array_equal(np.asarray(_device(0, 2, seed=6).beta_normal), np.asarray(whole.beta_normal[:2]))


def test_device_draws_follow_the_distributions_of_the_numpy_ones():
    """Kolmogorov–Smirnov of each field against its law (both sources), the padding rows of δ
    zero, and the two Gamma shapes in their order (σ²'s, then λ²'s)."""
    n_obs, rows, p, hyper = 7, 10, 4, Hyper(1.0, 1.78, 0.5, 0.0)
    shapes = gamma_shapes(n_obs, p, hyper)
    dev = _device(0, 4000, batch=2, n_obs=n_obs, rows=rows, p=p)
    host = draw_variates(variate_streams(1), 4000, 2, n_obs, rows, p, hyper, False)
    for source in (dev, host):
        v = jax.tree.map(np.asarray, source)
        assert v.beta_normal.shape == (4000, 2, p) and v.row_normal.shape == (4000, 2, rows)
        assert np.all(v.row_normal[..., n_obs:] == 0.0)
        laws = {"beta_normal": (v.beta_normal, stats.norm.cdf), "row_normal": (v.row_normal[..., :n_obs], stats.norm.cdf),
                "ig_chi2": (v.ig_chi2, stats.chi2(1).cdf), "ig_uniform": (v.ig_uniform, stats.uniform.cdf),
                "noise_gamma": (v.noise_gamma, stats.gamma(shapes[0]).cdf),
                "lam2_gamma": (v.lam2_gamma, stats.gamma(shapes[1]).cdf)}
        for name, (x, cdf) in laws.items():
            assert stats.kstest(x.ravel()[:20000], cdf).pvalue > 1e-4, name
        assert abs(v.noise_gamma.mean() - shapes[0]) < 0.1 and abs(v.lam2_gamma.mean() - shapes[1]) < 0.1


def test_device_variates_sample_the_same_posterior_as_numpys():
    """Diabetes (442 × 10), 4 chains: the posterior means of β under the two sources agree
    within 5 Monte Carlo standard errors (their difference's), the draws are not the same
    numbers, and a progress bar (calls of a twentieth of the sweeps) gives the device run's
    draws exactly."""
    import arviz as az

    ds = diabetes()
    X, y = ds.X - ds.X.mean(0), ds.y - ds.y.mean()
    kw = dict(num_warmup=300, num_samples=1500, num_chains=4, seed=2)
    host = run_gibbs(X, y, variates="numpy", **kw)
    dev = run_gibbs(X, y, variates="device", **kw)
    assert host.posterior.attrs["variates"] == "numpy" and dev.posterior.attrs["variates"] == "device"
    assert not np.allclose(host.posterior["beta"].values, dev.posterior["beta"].values)
    se = [az.mcse(i, var_names=["beta"])["beta"].values for i in (host, dev)]
    diff = (dev.posterior["beta"].mean(("chain", "draw")) - host.posterior["beta"].mean(("chain", "draw"))).values
    assert np.all(np.abs(diff) < 5 * np.hypot(*se)), (diff, np.hypot(*se))
    chunked = run_gibbs(X, y, variates="device", progress_bar=True, **kw)
    np.testing.assert_array_equal(chunked.posterior["beta"].values, dev.posterior["beta"].values)


def test_the_batch_driver_draws_where_run_gibbs_does(monkeypatch):
    """:func:`~sparsebayes.inference.engines.gibbs.posterior_mean_batch` (the BLS tables' Bayesian Lasso)
    takes its variates from the source :func:`run_gibbs` would: ``"auto"`` is NumPy's on a CPU
    and the device's on an accelerator (the backend stubbed: the same numbers as ``"device"``),
    and the two sources' means agree within Monte Carlo error."""
    from sparsebayes.inference.engines.gibbs import posterior_mean_batch

    rng = np.random.default_rng(3)
    Xs = rng.normal(size=(3, 30, 4))
    Xs -= Xs.mean(1, keepdims=True)
    ys = Xs @ np.array([1.5, -0.7, 0.0, 0.2]) + rng.normal(size=(3, 30))
    ys -= ys.mean(1, keepdims=True)
    run = lambda v: posterior_mean_batch(Xs, ys, Hyper(), 300, 3000, seed=4, variates=v)[0]  # noqa: E731
    host, dev = run("numpy"), run("device")
    np.testing.assert_array_equal(run("auto"), host)
    monkeypatch.setattr(gibbs_variates.jax, "default_backend", lambda: "gpu")
    np.testing.assert_array_equal(run("auto"), dev)
    assert not np.allclose(host, dev)
    # posterior sds ~0.18 (n = 30, unit noise); 3000 draws each: MC SEs ~0.005, their difference's ~0.007
    np.testing.assert_allclose(dev, host, atol=0.035)
    with pytest.raises(ValueError, match="variates must be one of"):
        run("gpu")
