"""A NUTS first fit compiles the sampler's programs and (almost) nothing else.

The runner traces the model before sampling (site names, plates, the improper-posterior check) and
ArviZ reads the observed data and the dims of the sites from a model. Run eagerly, each operation of
the model compiles a program of its own, and ArviZ draws every latent site from its prior (a program
per prior sampler). The runner's trace is abstract (``jax.eval_shape``) and ArviZ is given a replay of
the traced sites (:func:`~sparsebayes.inference.engines.model_trace._replay_model`), which computes nothing; the
InferenceData is that of the model itself (same groups, dims, coords and values).
"""
import warnings

import numpy as np
import pytest

from sparsebayes.inference.posterior import arviz_compat
from sparsebayes.inference.engines.model_trace import _model_trace, _replay_model, factor_sites
from sparsebayes.inference.engines.nuts import _Draws
from sparsebayes.models.adaptive import sparse_regression_model
from sparsebayes.models.bayesian_lasso import bayesian_lasso


def _eager_trace(model, args, kwargs):
    from numpyro import handlers
    from numpyro.infer import init_to_uniform
    traced = handlers.trace(handlers.substitute(handlers.seed(model, 0), substitute_fn=init_to_uniform))
    return traced.get_trace(*args, **kwargs)


# shapes no other test uses, so that an eager trace would compile its operations here
CASES = {
    "bayesian-lasso": (bayesian_lasso, (37, 5), dict(lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, marginal=False)),
    "laplace-gamma-prior": (sparse_regression_model, (39, 5),
                            dict(prior="laplace", gamma=1.0, gamma_prior=(2.0, 2.0), marginal=True)),
}


def _data(shape):
    rng = np.random.default_rng(11)
    X = rng.normal(size=shape)
    return X, X @ rng.normal(size=shape[1]) + rng.normal(size=shape[0])


@pytest.mark.parametrize("name", list(CASES))
def test_the_model_trace_compiles_nothing_and_records_the_eager_traces_sites(programs_built, name):
    model, shape, kwargs = CASES[name]
    X, y = _data(shape)
    with programs_built() as built:
        trace = _model_trace(model, (X, y), kwargs)
    assert built == [], f"{len(built)} programs built by tracing the model"
    eager = _eager_trace(model, (X, y), kwargs)
    assert list(trace) == list(eager)
    for site, ours in trace.items():
        theirs = eager[site]
        assert (ours["type"], ours["is_observed"]) == (theirs["type"], theirs.get("is_observed", False)), site
        assert np.shape(ours["value"]) == np.shape(theirs["value"]), site
        assert ([(f.name, f.dim, f.size) for f in ours["cond_indep_stack"]]
                == [(f.name, f.dim, f.size) for f in theirs.get("cond_indep_stack", [])]), site
    assert factor_sites(trace) == factor_sites(eager)
    np.testing.assert_array_equal(trace["y"]["value"], y)  # the observed data itself, not its shape


def test_a_model_that_reads_a_computed_value_is_traced_eagerly():
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    def model(X, y=None):
        if float(jnp.sum(X)) > 1e9:  # reads the value of an array it computes: no abstract trace
            raise ValueError("too large")
        numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([X.shape[1]]).to_event(1))

    X, y = _data((8, 2))
    assert list(_model_trace(model, (X, y), {})) == ["beta"]


@pytest.mark.parametrize("name", list(CASES))
def test_arviz_reads_the_replay_as_it_reads_the_model(name):
    """Draws made up in NumPy (no sampler run): ArviZ's groups, dims, coords and observed data from the
    replay of the traced sites equal those from the model itself."""
    model, shape, kwargs = CASES[name]
    X, y = _data(shape)
    trace = _model_trace(model, (X, y), kwargs)
    rng = np.random.default_rng(0)
    latent = {k: s for k, s in trace.items() if s["type"] in ("sample", "deterministic") and not s["is_observed"]}
    samples = {k: np.exp(rng.normal(size=(2, 3, *np.shape(s["value"])))) for k, s in latent.items()}
    extra = {"diverging": np.zeros((2, 3), bool), "energy": rng.normal(size=(2, 3))}
    replay = _replay_model(trace)
    assert replay is not None
    out = []
    for m in (model, replay):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(arviz_compat.from_numpyro(_Draws(m, (X, y), kwargs, samples, extra, 2, 3)))
    for group in ("posterior", "observed_data", "sample_stats"):
        ours, theirs = (arviz_compat.dataset(idata, group) for idata in reversed(out))
        assert sorted(ours.data_vars) == sorted(theirs.data_vars), group
        for var in theirs.data_vars:
            assert ours[var].dims == theirs[var].dims, (group, var)
            np.testing.assert_array_equal(ours[var].values, theirs[var].values)
        for coord in theirs.coords:
            np.testing.assert_array_equal(ours[coord].values, theirs[coord].values)


@pytest.mark.slow  # a NUTS compile in a new process: 10-30 s on 2 cores
def test_a_first_nuts_fit_of_the_bayesian_lasso_builds_seven_programs_at_most(first_fit_programs):
    """In a new process: the warm-up, the draws and the pointwise log likelihood, each once, and at most
    four small eager programs (the key of the seed, the estimator's summaries): no program per
    operation of the model or per prior sampler."""
    setup = """
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler
from sparsebayes.inference import BayesianLassoRegressor
X, y = make_regression(n_samples=200, n_features=8, n_informative=3, noise=1.0, random_state=0)
X, y = StandardScaler().fit_transform(X), (y - y.mean()) / y.std()
FITS = [("nuts", BayesianLassoRegressor(sampler="nuts", num_warmup=50, num_samples=50), X, y)]
"""
    built = first_fit_programs(setup)["nuts"]
    kept = ["jit(_cached_log_likelihood)", "jit(_compiled_draws)", "jit(_compiled_warmup)"]
    assert sorted(p for p in built if p in kept) == kept, built
    assert len(built) <= 7, built
