"""A NUTS fit's draws without ArviZ: :func:`~sparsebayes.inference.engines.nuts.nuts_draws` runs
:func:`~sparsebayes.inference.engines.nuts.run_nuts`'s programs and keeps the draws as NumPy arrays
(:class:`~sparsebayes.inference.engines.nuts.NutsRun`); the sampling estimators build ``idata_`` from
it on first read, so a first fit does not pay ArviZ's import (about 1 CPU s)."""
import pickle
import subprocess
import sys
import warnings

import jax
import numpy as np
import pytest

from sparsebayes.inference import NutsRegressor
from sparsebayes.inference.engines.nuts import NutsRun, nuts_draws, prng_key, run_nuts
from sparsebayes.inference.posterior import arviz_compat
from sparsebayes.models.adaptive import sparse_regression_model

RUN = dict(num_warmup=30, num_samples=20, num_chains=2, seed=1, progress_bar=False)


def _data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    return X, X @ np.array([1.0, 0.0, -0.5]) + 0.5 * rng.normal(size=30)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1, 2**32 + 3, 2**62 + 7])
def test_prng_key_is_jaxs_key(seed):
    want = np.asarray(jax.random.PRNGKey(seed))
    got = prng_key(seed)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_nuts_draws_is_run_nuts_without_its_inference_data():
    """The same draws, sample stats, pointwise log likelihood, groups and attributes as run_nuts (the
    wall times apart), bit for bit."""
    X, y = _data()
    kwargs = dict(prior="laplace", gamma=1.0)
    run = nuts_draws(sparse_regression_model, X, y, **RUN, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = run_nuts(sparse_regression_model, X, y, rhat_max=None, **RUN, **kwargs)
    assert isinstance(run, NutsRun)
    ours = run.inference_data()
    assert sorted(arviz_compat.groups(ours)) == sorted(arviz_compat.groups(ref))
    for group in arviz_compat.groups(ref):
        a, b = arviz_compat.dataset(ours, group), arviz_compat.dataset(ref, group)
        assert sorted(a.data_vars) == sorted(b.data_vars), group
        for var in b.data_vars:
            assert a[var].dims == b[var].dims, (group, var)
            np.testing.assert_array_equal(a[var].values, b[var].values, err_msg=f"{group}/{var}")
    timing = {"sampling_seconds", "warmup_seconds", "draws_seconds", "compile_seconds", "created_at"}
    assert list(ours.posterior.attrs) == list(ref.posterior.attrs)
    assert {k: v for k, v in ours.posterior.attrs.items() if k not in timing} == \
        {k: v for k, v in ref.posterior.attrs.items() if k not in timing}


def test_the_estimator_builds_idata_on_first_read_and_pickles_it():
    X, y = _data()
    est = NutsRegressor(num_warmup=30, num_samples=20, num_chains=2, seed=1, rhat_max=np.inf).fit(X, y)
    assert isinstance(est.__dict__["_idata_"], NutsRun)
    beta = np.asarray(est.idata_.posterior["beta"])
    np.testing.assert_array_equal(beta.reshape(-1, 3), est.beta_draws_)
    assert not isinstance(est.__dict__["_idata_"], NutsRun)  # built once, kept
    again = pickle.loads(pickle.dumps(NutsRegressor(num_warmup=30, num_samples=20, num_chains=2, seed=1,
                                                    rhat_max=np.inf).fit(X, y)))
    np.testing.assert_array_equal(np.asarray(again.idata_.posterior["beta"]), beta)
    with pytest.raises(AttributeError, match="idata_"):
        NutsRegressor().idata_


@pytest.mark.slow  # a NUTS compile in a new process
def test_a_first_nuts_fit_imports_no_arviz():
    code = ("import sys, numpy as np\nfrom sparsebayes.inference import NutsRegressor\n"
            "rng = np.random.default_rng(0); X = rng.normal(size=(40, 3)); y = X[:, 0] + rng.normal(size=40)\n"
            "NutsRegressor(num_warmup=50, num_samples=50).fit(X, y)\n"
            "assert 'arviz' not in sys.modules, 'the fit imported ArviZ'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # a NUTS compile in a new process
def test_a_first_nuts_fit_builds_the_warm_up_and_draw_programs_and_nothing_else(first_fit_programs):
    """No seed programs (the key is built in NumPy), no plate or prior programs (ArviZ does not run the
    model's replay during the fit), no log-likelihood program (built with ``idata_``)."""
    setup = """
import numpy as np
from sparsebayes.inference import NutsRegressor
rng = np.random.default_rng(0); X = rng.normal(size=(40, 3)); y = X[:, 0] + rng.normal(size=40)
FITS = [("nuts", NutsRegressor(num_warmup=50, num_samples=50), X, y)]
"""
    built = first_fit_programs(setup)["nuts"]
    assert sorted(built) == ["jit(_compiled_draws)", "jit(_compiled_warmup)"], built
