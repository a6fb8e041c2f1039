"""Where the Gibbs engine draws its random numbers (:mod:`sparsebayes.inference.engines.gibbs_variates`):
the device's generator has the distributions of NumPy's, its draws do not depend on how the
sweeps are cut, and ``"auto"`` takes it on an accelerator (the backend stubbed); a hierarchy's
declared variates are checked, and its sweeps from them sample the posterior its key-drawn sweeps do."""
from typing import NamedTuple

import jax
import numpy as np
import pytest
from scipy import stats

from sparsebayes.comparisons.datasets import diabetes
from sparsebayes.inference.engines import gibbs_variates
from sparsebayes.inference.engines.gibbs_variates import (VariateSpec, choose_variates, device_key, device_variates,
                                                          draw_variates, variate_plan, variate_streams)
from sparsebayes.inference.engines.bayesian_lasso import Hyper, bayesian_lasso_prior, engine_settings, run_gibbs

#: σ²'s Gamma shape of the plans below ((n − 1)/2 + p/2 + c at n = 7, p = 4, c = 0.5)
NOISE_SHAPE = 3.0 + 2.0 + 0.5


def _plan(n_obs=7, rows=10, p=4):
    return variate_plan(bayesian_lasso_prior(Hyper(1.0, 1.78, 0.5, 0.0)), n_obs, rows, p, NOISE_SHAPE)


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


def _device(first, sweeps, batch=3, n_obs=7, rows=10, p=4, seed=5):
    plan = _plan(n_obs, rows, p)
    return device_variates(device_key(seed), first, sweeps, batch, n_obs, plan.layout(),
                           np.asarray(plan.gamma_shapes()))


def test_device_draws_do_not_depend_on_how_the_sweeps_are_cut():
    whole = _device(0, 6)
    parts = [_device(0, 2), _device(2, 2), _device(4, 2)]
    for arr, *cuts in zip(jax.tree.leaves(whole), *(jax.tree.leaves(part) for part in parts)):
        np.testing.assert_array_equal(np.concatenate([np.asarray(c) for c in cuts]), np.asarray(arr))
    assert not np.array_equal(np.asarray(_device(0, 2, seed=6).beta_normal), np.asarray(whole.beta_normal[:2]))


def test_device_draws_follow_the_distributions_of_the_numpy_ones():
    """Kolmogorov–Smirnov of each field against its law (both sources), the padding rows of δ
    zero, and the two Gamma shapes where they belong (σ²'s, and the Laplace prior's ``a + p`` for γ)."""
    n_obs, rows, p = 7, 10, 4
    shapes = [NOISE_SHAPE, 1.0 + p]
    dev = _device(0, 4000, batch=2, n_obs=n_obs, rows=rows, p=p)
    host = draw_variates(variate_streams(1, 3), 4000, 2, _plan(n_obs, rows, p))
    for source in (dev, host):
        v = jax.tree.map(np.asarray, source)
        assert v.beta_normal.shape == (4000, 2, p) and v.row_normal.shape == (4000, 2, rows)
        assert np.all(v.row_normal[..., n_obs:] == 0.0)
        laws = {"beta_normal": (v.beta_normal, stats.norm.cdf), "row_normal": (v.row_normal[..., :n_obs], stats.norm.cdf),
                "tau_chi2": (v.aux["tau_chi2"], stats.chi2(1).cdf), "tau_uniform": (v.aux["tau_uniform"], stats.uniform.cdf),
                "noise_gamma": (v.noise_gamma, stats.gamma(shapes[0]).cdf),
                "gamma": (v.aux["gamma"], stats.gamma(shapes[1]).cdf)}
        assert v.aux["tau_chi2"].shape == (4000, 2, p) and v.aux["gamma"].shape == (4000, 2)
        for name, (x, cdf) in laws.items():
            assert stats.kstest(x.ravel()[:20000], cdf).pvalue > 1e-4, name
        assert abs(v.noise_gamma.mean() - shapes[0]) < 0.1 and abs(v.aux["gamma"].mean() - shapes[1]) < 0.1


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
    """:func:`~sparsebayes.inference.engines.hierarchy_gibbs_batch.posterior_mean_batch` on the
    Bayesian Lasso (the BLS tables')
    takes its variates from the source :func:`run_gibbs` would: ``"auto"`` is NumPy's on a CPU
    and the device's on an accelerator (the backend stubbed: the same numbers as ``"device"``),
    and the two sources' means agree within Monte Carlo error."""
    from sparsebayes.inference.engines.hierarchy_gibbs_batch import posterior_mean_batch

    rng = np.random.default_rng(3)
    Xs = rng.normal(size=(3, 30, 4))
    Xs -= Xs.mean(1, keepdims=True)
    ys = Xs @ np.array([1.5, -0.7, 0.0, 0.2]) + rng.normal(size=(3, 30))
    ys -= ys.mean(1, keepdims=True)
    run = lambda v: posterior_mean_batch(Xs, ys, num_warmup=300, num_samples=3000, seed=4, variates=v,
                                          **engine_settings(Hyper()))[0]  # noqa: E731
    host, dev = run("numpy"), run("device")
    np.testing.assert_array_equal(run("auto"), host)
    monkeypatch.setattr(gibbs_variates.jax, "default_backend", lambda: "gpu")
    np.testing.assert_array_equal(run("auto"), dev)
    assert not np.allclose(host, dev)
    # posterior sds ~0.18 (n = 30, unit noise); 3000 draws each: MC SEs ~0.005, their difference's ~0.007
    np.testing.assert_allclose(dev, host, atol=0.035)
    with pytest.raises(ValueError, match="variates must be one of"):
        run("gpu")


class _Declares(NamedTuple):
    """A Laplace prior whose declaration is replaced (the checks of :func:`variate_plan`)."""
    fields: dict

    def gibbs_variates(self, p):
        return self.fields


@pytest.mark.parametrize("fields, match", [({"u": VariateSpec("beta", 3)}, "kind 'beta'"),
                                           ({"g": VariateSpec("gamma", None, 0.0)}, "Gamma of shape 0.0"),
                                           ({"u": VariateSpec("uniform", -1)}, "size -1")])
def test_a_declaration_the_sources_cannot_draw_is_named(fields, match):
    with pytest.raises(ValueError, match=match):
        variate_plan(_Declares(fields), 7, 0, 4, 2.0)
    with pytest.raises(ValueError, match="improper"):
        variate_plan(bayesian_lasso_prior(Hyper()), 7, 0, 4, 0.0)


def _priors():
    from sparsebayes.models import HorseshoePrior
    from sparsebayes.models.priors import LaplacePrior

    return {"laplace-gamma-fixed": (LaplacePrior(3.0), []),
            "laplace-gamma-estimated": (LaplacePrior(3.0, gamma_prior=(2.0, 1.0)), ["gamma"]),
            "horseshoe-tau-fixed": (HorseshoePrior(0.5), []),
            "horseshoe-tau-estimated": (HorseshoePrior(0.5, tau_prior=1.0), ["tau2"])}


# the fixed-scale cases, a subset of the others' algebra, are slow
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name.endswith("fixed") else name
                                  for name in _priors()])
def test_sweeps_from_variates_sample_the_posterior_of_the_key_drawn_sweeps(name):
    """The hierarchy engine's two sources of randomness, σ² drawn under the flat prior: the sweeps from
    pre-drawn NumPy variates (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_variates.step_from` with the
    hierarchy's ``gibbs_update_from``) and the sweeps drawing from JAX keys
    (:func:`~sparsebayes.inference.engines.hierarchy_gibbs.step` with ``gibbs_update``, the oracle) agree
    on the means of β, σ² and the estimated global scale within 5 Monte Carlo SEs of their difference,
    for the Laplace hierarchy (EM's, 002 eqs. 9–10) and the horseshoe (Makalic & Schmidt 2016)."""
    import arviz as az

    from sparsebayes.inference.engines import hierarchy_gibbs

    prior, extra = _priors()[name]
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 4))
    y = X @ np.array([1.0, -0.5, 0.0, 0.1]) + 0.8 * rng.normal(size=40)
    kw = dict(num_warmup=300, num_samples=2000, num_chains=4, seed=2, progress_bar=False)
    keyed, _ = hierarchy_gibbs.run(X, y, prior, **kw)
    pre, _ = hierarchy_gibbs.run(X, y, prior, variates="numpy", **kw)
    for field in ["beta", "noise_var"] + extra:
        a, b = (np.asarray(getattr(s, field) if field in ("beta", "noise_var") else s.aux[field]) for s in (keyed, pre))
        se = [np.asarray(az.mcse(az.convert_to_dataset({field: d}))[field]) for d in (a, b)]
        gap = np.abs(a.mean((0, 1)) - b.mean((0, 1)))
        assert np.all(gap < 5 * np.hypot(*se)), (field, gap, np.hypot(*se))


def test_a_hierarchy_without_declared_variates_is_told_to_use_keys():
    """The blocked horseshoe draws τ by a slice move (an unknown number of random numbers): the engine
    names the way out instead of sweeping it from pre-drawn variates."""
    from sparsebayes.inference.engines import hierarchy_gibbs
    from sparsebayes.models.priors.horseshoe import BlockedTauHorseshoe

    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="declares no standard variates"):
        hierarchy_gibbs.run(X, X[:, 0], BlockedTauHorseshoe(0.5, tau_prior=1.0), variates="numpy", num_warmup=5,
                            num_samples=5)


def test_a_variate_run_holds_one_copy_of_X_from_the_entry_point_to_the_device():
    """Issue 40's memory at p = 10⁵: ``check_data`` keeps float64 ``X`` as given (it copied it, once in
    ``sample_gibbs`` and again in ``run_with_variates``), and the set-up program returns only what it
    computes of ``X`` (the QR's ``R``, ``Qᵀy``, the residual), not a copy of its argument ``X`` (XLA does not
    alias an argument it may not donate): its output, against what ``jit(variate_data)`` gives back."""
    import jax.numpy as jnp

    from sparsebayes.inference._validation import check_data
    from sparsebayes.inference.engines import hierarchy_gibbs_variates as hv

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(16, 400)), rng.normal(size=16)
    Xc, yc = check_data(X, y)
    assert Xc is X and yc is y
    Xd, yd = jnp.asarray(X), jnp.asarray(y)

    def output_bytes(fn, *args):
        return jax.jit(fn, static_argnums=(len(args) - 1,)).lower(*args).compile().memory_analysis().output_size_in_bytes

    setup = output_bytes(hv.variate_factors, Xd, yd, False)
    whole = output_bytes(hv.variate_data, Xd, yd, 15.0, False)
    assert setup < 1.2 * X.nbytes and whole >= setup + X.nbytes  # R is n × p as X is; the whole record holds X besides
    data = hv.setup_variate_data(X, y, 15.0, False)
    for a, b in zip(jax.tree.leaves(data), jax.tree.leaves(hv.variate_data(Xd, yd, jnp.float64(15.0), False))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
