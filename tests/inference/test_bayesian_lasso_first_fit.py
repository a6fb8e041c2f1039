"""The Bayesian Lasso's first Gibbs fit: one program, no ArviZ, the same draws.

A first fit's time in a fresh process is mostly compiling and importing
(``comparisons/bench/first_fit.py``). ``BayesianLassoRegressor``'s Gibbs fit compiles one program,
:func:`~sparsebayes.inference.engines.gibbs.run_on_data` (the data's QR and Gram matrix and the sweeps
together; the refused sweeps are counted on the host, not by an eager ``jnp.sum``), and does not
import ArviZ: R-hat is :mod:`sparsebayes.inference.posterior.split_rhat`'s and ``idata_`` is built on first
access. The draws are those of :func:`~sparsebayes.inference.engines.gibbs.run` on
:func:`~sparsebayes.inference.engines.gibbs.sweep_data`, bit for bit.
"""
import subprocess
import sys

import jax
import numpy as np
import pytest

from sparsebayes.inference.posterior.arviz_compat import rhat
from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor
from sparsebayes.inference.engines.gibbs import (
    Hyper,
    draw_variates,
    init,
    run,
    run_gibbs,
    run_on_data,
    sweep_data,
    variate_streams,
)

SETUP = r"""
import numpy as np
from sparsebayes.inference import BayesianLassoRegressor

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 5))
y = X[:, 0] - 2.0 * X[:, 2] + 0.3 * rng.normal(size=60)
FITS = [("gibbs", BayesianLassoRegressor(num_warmup=30, num_samples=40), X, y)]
"""


def test_a_first_gibbs_fit_of_the_bayesian_lasso_builds_one_program(first_fit_programs):
    """Before: ``sweep_data``, ``run`` and an eager ``_reduce_sum`` (three programs)."""
    assert first_fit_programs(SETUP) == {"gibbs": ["jit(run_on_data)"]}


NO_ARVIZ = r"""
import sys
import warnings
import numpy as np
import sparsebayes
from sparsebayes.inference import BayesianLassoRegressor

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = X[:, 0] + rng.normal(size=40)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = BayesianLassoRegressor(num_warmup=20, num_samples=30).fit(X, y)
    m.predict(X, return_std=True)
assert np.isfinite(m.rhat_), m.rhat_
assert "arviz" not in sys.modules, "fit imported arviz"
print("OK")
"""


def test_a_gibbs_fit_does_not_import_arviz():
    done = subprocess.run([sys.executable, "-c", NO_ARVIZ], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stderr[-3000:]


@pytest.mark.parametrize("n,p", [(37, 3), (13, 20)], ids=["cholesky", "bhattacharya"])
def test_run_on_data_is_run_on_sweep_data_bit_for_bit(n, p):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + rng.normal(size=n)
    use_cholesky = n >= p
    hyper = Hyper()
    streams = variate_streams(3)
    state = init(X, y, 2, streams[0])
    variates = draw_variates(streams, 25, 2, n, n, p, hyper, use_cholesky)
    separate = run(state, variates, jax.jit(sweep_data, static_argnums=2)(X, y, use_cholesky), hyper, use_cholesky)
    together = run_on_data(state, variates, X, y, hyper, use_cholesky)
    for a, b in zip(jax.tree.leaves(separate), jax.tree.leaves(together)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_lazy_idata_is_run_gibbs_and_rhat_is_arviz():
    """``idata_`` (built on first access) holds ``run_gibbs``'s draws, groups and labels; ``rhat_``
    is ArviZ's largest rank-normalized split R-hat over β on it."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4))
    y = X[:, 1] - X[:, 3] + rng.normal(size=50)
    m = BayesianLassoRegressor(num_warmup=50, num_samples=60, num_chains=3, seed=2, rhat_max=np.inf).fit(X, y)
    assert "_idata_" in vars(m) and isinstance(vars(m)["_idata_"], tuple)  # not built by the fit
    ref = run_gibbs(X - X.mean(axis=0), y - y.mean(), num_warmup=50, num_samples=60, num_chains=3, seed=2,
                    coords={"basis": ["x0", "x1", "x2", "x3"]}, progress_bar=False)
    idata = m.idata_
    assert m.idata_ is idata  # built once
    for group, name in [("posterior", "beta"), ("posterior", "tau2"), ("posterior", "noise_var"),
                        ("posterior", "lam2"), ("log_likelihood", "y"), ("observed_data", "y")]:
        np.testing.assert_array_equal(np.asarray(idata[group][name]), np.asarray(ref[group][name]))
    assert list(idata.posterior["beta"].coords["basis"].values) == ["x0", "x1", "x2", "x3"]
    assert idata.posterior.attrs["inference"] == "gibbs" and idata.posterior.attrs["refused_sweeps"] == 0
    np.testing.assert_allclose(m.rhat_, float(np.max(rhat(idata, var_names=["beta"])["beta"].values)),
                               rtol=0, atol=1e-10)
    assert m.to_inference_data() is not idata


def test_idata_is_missing_before_a_fit_and_after_a_failed_one():
    m = BayesianLassoRegressor()
    assert not hasattr(m, "idata_")
    with pytest.raises(ValueError):
        m.fit(np.ones((5, 2)), np.array([1.0, 2.0, np.nan, 4.0, 5.0]))
    assert not hasattr(m, "idata_")
