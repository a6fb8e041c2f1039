"""NUTS on new data of the same shapes builds no new program.

Simulation-based calibration, cross-validation and ``compare`` on many data sets call
:func:`sparsebayes.inference.engines.nuts.run_nuts` again and again with data of one shape; each call used
to compile NumPyro's warm-up and sampling loops anew (one chain ran as "parallel", which bypassed the
runner's compiled programs), a compile that costs far more than a small fit. Here the second call,
same shapes and settings, other values, must build nothing (``programs_built`` counts compiles and
disk-cache loads alike), for a single chain and for several, on the Bayesian Lasso's Laplace
marginal, the Laplace hierarchy's marginal with γ sampled, and the horseshoe's collapsed NUTS. The
draws of a one-chain run equal NumPyro's own ``MCMC`` at the same key, to rounding.
"""
import warnings
from types import SimpleNamespace

import jax
import numpy as np
import pytest
from numpyro.infer import MCMC, NUTS

from sparsebayes.inference.engines import collapsed_nuts
from sparsebayes.inference.engines.nuts import run_nuts
from sparsebayes.models import HorseshoePrior
from sparsebayes.models.adaptive import sparse_regression_model
from sparsebayes.models.bayesian_lasso import bayesian_lasso

COUNTS = dict(num_warmup=30, num_samples=20, progress_bar=False, rhat_max=None)


def _data(seed, n=12, p=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X -= X.mean(axis=0)
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    return X, y - y.mean()


def _bayesian_lasso(X, y, num_chains, seed):
    return run_nuts(bayesian_lasso, X, y, num_chains=num_chains, seed=seed, marginal=True, lam2_shape=2.0,
                    lam2_rate=2.0, c=3.0, d=2.0, **COUNTS)


def _laplace_marginal(X, y, num_chains, seed):
    return run_nuts(sparse_regression_model, X, y, num_chains=num_chains, seed=seed, prior="laplace", gamma=1.0,
                    gamma_prior=(2.0, 2.0), marginal=True, noise_var=1.0, **COUNTS)


def _horseshoe_collapsed(X, y, num_chains, seed):
    t = SimpleNamespace(H=X, y=y, prior=HorseshoePrior(0.5, tau_prior=1.0), kwargs={})
    return collapsed_nuts.run(t, num_warmup=COUNTS["num_warmup"], num_samples=COUNTS["num_samples"],
                              num_chains=num_chains, seed=seed, coords=None, progress_bar=False)


def _toy(X, y, num_chains, seed):
    """The smallest regression (one weight per column, σ fixed): the runner's caching alone, at the
    cost of the smallest NUTS compile."""
    return run_nuts(_toy_model, X, y, num_chains=num_chains, seed=seed, **COUNTS)


def _toy_model(X, y=None):
    import numpyro
    import numpyro.distributions as dist
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([X.shape[1]]).to_event(1))
    with numpyro.plate("data", X.shape[0]):
        numpyro.sample("y", dist.Normal(X @ beta, 1.0), obs=y)


RUNS = {"toy": _toy, "bayesian-lasso-marginal": _bayesian_lasso, "laplace-marginal": _laplace_marginal,
        "horseshoe-collapsed": _horseshoe_collapsed}


# one chain (the SBC adapters' case) on the smallest model in the default suite; the hierarchies'
# models slow (each compiles a NUTS program of its own first, 10 s or more)
CASES = [pytest.param(name, chains, marks=() if (name, chains) == ("toy", 1) else pytest.mark.slow)
         for name in RUNS for chains in (1, 2)]


@pytest.mark.parametrize("name, num_chains", CASES)
def test_a_second_call_with_new_data_compiles_nothing(programs_built, name, num_chains):
    run = RUNS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # divergences of 30 warm-up steps are not under test
        first = run(*_data(0), num_chains, 0)
        with programs_built() as built:
            second = run(*_data(1), num_chains, 1)
    assert built == [], f"{len(built)} programs built by a second NUTS call on new data of the same shapes"
    assert second.posterior.sizes["chain"] == num_chains
    a, b = (np.asarray(d.posterior["beta"].values) for d in (first, second))
    assert a.shape == b.shape and not np.array_equal(a, b)  # new data, new draws


@pytest.mark.slow
def test_one_chain_draws_are_numpyros_own():
    """The runner's compiled one-chain program draws what NumPyro's ``MCMC(NUTS)`` draws at the same
    key and settings (warm-up, then the kept draws from the warmed-up state), to rounding: XLA
    compiles the loop inside one program and may round differently (seen: 1e-11)."""
    X, y = _data(2)
    kw = dict(marginal=True, lam2_shape=2.0, lam2_rate=2.0, c=3.0, d=2.0)
    ours = run_nuts(bayesian_lasso, X, y, num_chains=1, seed=5, **COUNTS, **kw)
    mcmc = MCMC(NUTS(bayesian_lasso, target_accept_prob=0.8, max_tree_depth=10), num_warmup=30, num_samples=20,
                num_chains=1, progress_bar=False)
    mcmc.warmup(jax.random.PRNGKey(5), X, y, **kw)
    mcmc.run(mcmc.post_warmup_state.rng_key, X, y, **kw)
    for name, draws in mcmc.get_samples(group_by_chain=True).items():
        np.testing.assert_allclose(ours.posterior[name].values, np.asarray(draws), rtol=1e-8, atol=1e-10,
                                   err_msg=name)


def _refit_pair(name):
    """(estimator factory, parameter, first value, second value) of a refit at new prior values."""
    from sparsebayes.inference import BayesianLassoRegressor, NutsRegressor
    from sparsebayes.models import LaplacePrior

    small = dict(num_warmup=20, num_samples=20, num_chains=1, rhat_max=np.inf)
    return {
        "laplace": (lambda: NutsRegressor(fit_intercept=False, **small), "prior",
                    LaplacePrior(gamma=1.0), LaplacePrior(gamma=3.0)),
        "horseshoe": (lambda: NutsRegressor(fit_intercept=False, **small), "prior",
                      HorseshoePrior(tau=0.5, tau_prior=1.0), HorseshoePrior(tau=0.2, tau_prior=3.0)),
        "bayesian-lasso": (lambda: BayesianLassoRegressor(sampler="nuts", **small), "lam2_rate", 1.78, 0.3),
    }[name]


@pytest.mark.parametrize("name", [pytest.param("laplace"), pytest.param("horseshoe", marks=pytest.mark.slow),
                                  pytest.param("bayesian-lasso", marks=pytest.mark.slow)])
def test_a_refit_at_new_prior_values_compiles_nothing_and_draws_what_a_fresh_compile_draws(programs_built, name):
    """The hierarchy's values are traced inputs of the kept programs, not constants of them: a refit at
    new values builds no program, and its draws are those of the same fit compiled afresh at the new
    values (the kept programs dropped: what a new process compiles), to the last bit; they are not the
    draws at the old values (a program that kept the old values as constants would give those)."""
    from sparsebayes.inference.engines import nuts_programs

    make, param, old, new = _refit_pair(name)
    X, y = _data(8, n=30, p=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # divergences of 20 warm-up steps are not under test
        first = make().set_params(**{param: old}).fit(X, y)
        with programs_built() as built:
            refit = make().set_params(**{param: new}).fit(X, y)
        assert built == [], f"{len(built)} programs built by a refit at {param}={new!r}"
        for program in (nuts_programs._compiled_warmup, nuts_programs._compiled_draws,
                        nuts_programs._cached_log_likelihood):
            program.clear_cache()  # these alone: clearing all of JAX's caches slows every later test
        fresh = make().set_params(**{param: new}).fit(X, y)
    np.testing.assert_array_equal(refit.beta_draws_, fresh.beta_draws_)
    for group in ("posterior", "log_likelihood"):
        for var, values in getattr(refit.idata_, group).data_vars.items():
            np.testing.assert_array_equal(values.values, getattr(fresh.idata_, group)[var].values, err_msg=var)
    assert not np.array_equal(refit.beta_draws_, first.beta_draws_)
