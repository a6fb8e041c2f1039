"""The Bayesian Lasso's first Gibbs fit: two programs, no ArviZ, the same draws.

A first fit's time in a fresh process is mostly compiling and importing
(``comparisons/bench/first_fit.py``). ``BayesianLassoRegressor``'s Gibbs fit compiles two programs,
:func:`~sparsebayes.inference.engines.hierarchy_gibbs_variates.setup_variate_data` (the data's QR and Gram
matrix) and :func:`~sparsebayes.inference.engines.hierarchy_gibbs_variates.run_from_variates` (the sweeps, its
variates drawn by NumPy: no Gamma sampler compiled; the refused sweeps are counted on the host), and does not import ArviZ: R-hat is :mod:`sparsebayes.inference.posterior.split_rhat`'s
and ``idata_`` is built on first access. The compiled run's draws are those of the engine's step
(:func:`~sparsebayes.inference.engines.hierarchy_gibbs_variates.step_from`) sweep by sweep.
"""
import subprocess
import sys

import jax
import numpy as np
import pytest

from sparsebayes.inference.posterior.arviz_compat import rhat
from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor
from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_variates
from sparsebayes.inference.engines.gibbs_variates import draw_variates, variate_plan, variate_streams
from sparsebayes.inference.engines.bayesian_lasso import Hyper, bayesian_lasso_prior, run_gibbs

SETUP = r"""
import numpy as np
from sparsebayes.inference import BayesianLassoRegressor

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 5))
y = X[:, 0] - 2.0 * X[:, 2] + 0.3 * rng.normal(size=60)
FITS = [("gibbs", BayesianLassoRegressor(num_warmup=30, num_samples=40), X, y)]
"""


def test_a_first_gibbs_fit_of_the_bayesian_lasso_builds_two_programs(first_fit_programs):
    """Two programs, the data's set-up and the sweeps (a run set up once, however many calls its sweeps
    take), and no Gamma sampler of its own (JAX's ``gamma`` compiled inside the sweep cost about 0.7 s
    per call site)."""
    assert first_fit_programs(SETUP) == {"gibbs": ["jit(variate_factors)", "jit(run_from_variates)"]}


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


@pytest.mark.parametrize("n,p", [(37, 3), (13, 20)], ids=["rue", "bhattacharya"])
def test_the_compiled_run_is_the_step_sweep_by_sweep(n, p):
    """:func:`run_from_variates` (the ``scan`` on data set up by :func:`setup_variate_data`) against
    :func:`step_from` called sweep by sweep on :func:`variate_data`, chains by ``vmap``: the same chains
    to rounding."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, p))
    X -= X.mean(0)
    y = X[:, 0] + rng.normal(size=n)
    y -= y.mean()
    use_rue = n >= p
    prior, noise = bayesian_lasso_prior(Hyper()), hierarchy_gibbs.NoisePrior(0.0, 0.0)
    plan = variate_plan(prior, n, 0 if use_rue else n, p, (n - 1) / 2 + p / 2)
    streams = variate_streams(3, len(plan.aux))
    state = hierarchy_gibbs_variates.dispersed_start(X, y, prior, 2, streams[0])
    variates = draw_variates(streams, 25, 2, plan)
    dof = np.float64(n - 1)
    _, together, _ = hierarchy_gibbs_variates.run_from_variates(
        state, variates, hierarchy_gibbs_variates.setup_variate_data(X, y, dof, use_rue), prior, noise, scaled=True)
    data = hierarchy_gibbs_variates.variate_data(X, y, dof, use_rue)
    one = jax.jit(jax.vmap(lambda s, u: hierarchy_gibbs_variates.step_from(
        s, data, hierarchy_gibbs.GibbsModel(prior, noise), variates=u, scaled=True)))
    for k in range(25):
        state, _ = one(state, jax.tree.map(lambda a: a[k], variates))
        for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(jax.tree.map(lambda a: a[k], together))):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-9)


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
