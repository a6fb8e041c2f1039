"""The NUTS runner on Figueiredo's Laplace hierarchy: the scale mixture is the Laplacian."""
import pytest
import arviz as az
import jax.numpy as jnp
import numpy as np

from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference import run_nuts
from sparsebayes.models.adaptive import sparse_regression_model


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 3))
    return jnp.asarray(X), jnp.asarray(X @ np.array([1.5, 0.0, -0.8]) + 0.5 * rng.standard_normal(30))


@pytest.mark.slow
def test_hierarchical_and_marginal_laplace_posteriors_agree():
    X, y = _data()
    kw = dict(num_warmup=500, num_samples=1000, num_chains=2, progress_bar=False)
    hier = run_nuts(sparse_regression_model, X, y, prior="laplace", gamma=4.0, noise_var=0.25, seed=1, **kw)
    marg = run_nuts(sparse_regression_model, X, y, prior="laplace", gamma=4.0, noise_var=0.25, marginal=True,
                    seed=2, **kw)
    assert isinstance(hier, compat.idata_type()) and hier.posterior.sizes["chain"] == 2
    s_h = compat.summary(hier, var_names=["beta"])
    s_m = compat.summary(marg, var_names=["beta"])
    assert (s_h["r_hat"] < 1.05).all()
    mcse = np.sqrt(s_h["mcse_mean"].to_numpy() ** 2 + s_m["mcse_mean"].to_numpy() ** 2)
    assert np.all(np.abs(s_h["mean"].to_numpy() - s_m["mean"].to_numpy()) < 4 * mcse + 1e-3)


def test_gamma_hyperprior_and_flat_noise_prior_sample():
    X, y = _data(1)
    idata = run_nuts(sparse_regression_model, X, y, prior="laplace", gamma_prior=(1.0, 0.1), num_warmup=300,
                     num_samples=300, num_chains=1, progress_bar=False)
    post = idata.posterior
    assert {"beta", "tau", "gamma", "noise_var"} <= set(post.data_vars)
    assert np.all(post["gamma"].values > 0) and np.all(np.isfinite(post["beta"].values))
    assert 0.1 < float(post["noise_var"].mean()) < 0.6  # true noise variance 0.25
    # the flat prior on σ² is a numpyro.factor: a prior term, kept out of the data's groups, so
    # that az.loo finds the one pointwise log likelihood (before, it listed the factor too and failed)
    assert list(idata.log_likelihood.data_vars) == ["y"] and list(idata.observed_data.data_vars) == ["y"]
    assert list(idata.observed_data.sizes.values()) == [30]  # one dimension: the observations
    assert az.loo(idata).n_data_points == 30
    # sample stats for the energy diagnostic, and the timings apart (compile inside the run)
    assert {"diverging", "energy", "tree_depth", "acceptance_rate", "step_size"} <= set(idata.sample_stats.data_vars)
    assert np.isfinite(compat.bfmi(idata)).all()
    a = post.attrs
    assert a["sampling_seconds"] == a["warmup_seconds"] + a["draws_seconds"]
    assert 0 < a["compile_seconds"] <= a["sampling_seconds"]


def _funnel():
    import numpyro
    import numpyro.distributions as dist

    log_scale = numpyro.sample("log_scale", dist.Normal(0.0, 3.0))
    numpyro.sample("x", dist.Normal(jnp.zeros(5), jnp.exp(log_scale / 2.0)))


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_divergences_and_unmixed_chains_give_warnings():
    """Neal's funnel defeats NUTS (divergences); 10 draws per chain cannot mix (R-hat); a
    well-posed posterior sampled properly gives neither warning."""
    import warnings

    import pytest
    from sklearn.exceptions import ConvergenceWarning

    kw = dict(num_chains=2, progress_bar=False, seed=0)
    with pytest.warns(UserWarning, match="divergent transitions"):
        run_nuts(_funnel, num_warmup=200, num_samples=500, rhat_max=None, **kw)
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        run_nuts(sparse_regression_model, *_data(), prior="laplace", gamma=4.0, noise_var=0.25, marginal=True,
                 num_warmup=3, num_samples=10, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_nuts(sparse_regression_model, *_data(), prior="laplace", gamma=4.0, noise_var=0.25, marginal=True,
                 num_warmup=500, num_samples=1000, **kw)


def test_the_improper_jeffreys_posterior_is_refused():
    """NUTS on p(tau) ∝ 1/tau, an improper posterior, diverges and returns draws of nothing (31 %
    divergent, R-hat 1.5): it is a ValueError naming surrogate_eps."""
    import pytest

    from sparsebayes.models.adaptive import sparse_probit_model

    X, y = _data()
    kw = dict(num_warmup=20, num_samples=20, num_chains=1, progress_bar=False)
    labels = (y > 0).astype(jnp.float64)
    for model, target in [(sparse_regression_model, y), (sparse_probit_model, labels)]:
        with pytest.raises(ValueError, match="surrogate_eps"):
            run_nuts(model, X, target, prior="jeffreys", **kw)


@pytest.mark.slow
def test_the_jeffreys_surrogate_and_the_rvm_twins_run_through_arviz():
    """The surrogate (and the RVM models, whose Gamma(eps, eps) precisions underflow to 0 in
    ArviZ's prior trace) run through ArviZ."""
    from sparsebayes.models.bayesian_lasso import rvm_classifier_model, rvm_model

    X, y = _data()
    kw = dict(num_warmup=20, num_samples=20, num_chains=1, progress_bar=False)
    labels = (y > 0).astype(jnp.float64)
    runs = [run_nuts(sparse_regression_model, X, y, prior="jeffreys", surrogate_eps=1e-3, **kw),
            run_nuts(rvm_model, X, y, **kw), run_nuts(rvm_classifier_model, X, labels, **kw)]
    for idata in runs:
        assert np.all(np.isfinite(idata.posterior["tau" if "tau" in idata.posterior else "w"].values))


def test_variance_of_precision_is_finite_where_the_precision_underflows():
    from sparsebayes.models.priors import variance_of_precision

    prec = jnp.array([0.0, 1e-310, 2.0, 1e-300])
    var = np.asarray(variance_of_precision(prec))
    assert np.all(np.isfinite(var))
    np.testing.assert_allclose(var[2:], [0.5, 1e300], rtol=1e-15)


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_chains_in_one_program_draw_what_numpyros_sequential_chains_draw():
    """Without a progress bar the chains run under ``lax.map`` in one compiled program; with one,
    NumPyro's own "sequential" loop (a compile per chain). The draws must be the same: the same
    trees and accept decisions (a different one moves a draw by ~0.1). The compiled program takes
    the data as arguments where NumPyro's loop closes over them as constants, so XLA rounds
    differently, and over 200 iterations that drifts to 5e-10 (7e-8 relative); hence 1e-6."""
    X, y = _data(2)
    kw = dict(prior="laplace", gamma=4.0, noise_var=0.25, marginal=True, num_warmup=100, num_samples=100,
              num_chains=2, seed=3)
    one = run_nuts(sparse_regression_model, X, y, progress_bar=False, **kw)
    own = run_nuts(sparse_regression_model, X, y, progress_bar=True, **kw)
    np.testing.assert_allclose(one.posterior["beta"].values, own.posterior["beta"].values, rtol=1e-6, atol=1e-9)
    assert one.posterior.sizes["chain"] == 2 and one.sample_stats["diverging"].shape == (2, 100)


def test_a_second_run_of_the_same_shape_compiles_nothing_and_draws_what_a_fresh_compile_draws(programs_built):
    """The warm-up and draw programs are kept per model, counts, settings and shapes: a run on
    other data of the same shape builds no program (the pointwise log likelihood's included), and
    its draws, sample stats and log likelihood are exactly those of the same run after the kept
    programs are dropped (nothing of the first data set's run is carried over)."""
    from sparsebayes.inference.engines import nuts_programs

    kw = dict(prior="laplace", gamma_prior=(1.0, 0.1), num_warmup=60, num_samples=60, num_chains=2, seed=4,
              progress_bar=False)
    run_nuts(sparse_regression_model, *_data(5), **kw)
    with programs_built() as built:
        kept = run_nuts(sparse_regression_model, *_data(6), **kw)
    assert built == [] and kept.posterior.attrs["compile_seconds"] == 0.0
    for program in (nuts_programs._compiled_warmup, nuts_programs._compiled_draws, nuts_programs._cached_log_likelihood):
        program.clear_cache()  # these alone: clearing all of JAX's caches slows every later test
    fresh = run_nuts(sparse_regression_model, *_data(6), **kw)
    for group, names in (("posterior", ["beta", "gamma", "noise_var"]), ("sample_stats", ["lp", "energy", "n_steps"]),
                         ("log_likelihood", ["y"])):
        for name in names:
            np.testing.assert_array_equal(getattr(kept, group)[name].values, getattr(fresh, group)[name].values)


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_a_model_that_reads_an_array_argument_in_python_still_runs():
    """Positional arguments and array keyword arguments are traced in the kept programs; a model
    whose Python code reads one (``float(scale)``) cannot be traced that way and runs as before,
    through a new ``MCMC``, with the same draws as the array given as a Python float."""
    import numpyro
    import numpyro.distributions as dist

    def model(X, y=None, *, scale=1.0):
        if float(scale) <= 0:
            raise ValueError("scale must be positive")
        beta = numpyro.sample("beta", dist.Normal(0.0, float(scale)).expand([X.shape[1]]))
        numpyro.sample("y", dist.Normal(X @ beta, 1.0), obs=y)

    X, y = _data(7)
    kw = dict(num_warmup=50, num_samples=50, num_chains=2, progress_bar=False, seed=1)
    as_array = run_nuts(model, X, y, scale=np.array(2.0), **kw)
    as_float = run_nuts(model, X, y, scale=2.0, **kw)
    np.testing.assert_allclose(as_array.posterior["beta"].values, as_float.posterior["beta"].values, rtol=1e-6,
                               atol=1e-9)


def test_bad_settings_and_non_finite_data_are_value_errors_before_sampling():
    """NaN in y stopped NUTS with "Cannot find valid initial parameters"; target_accept_prob=1.5
    was taken silently."""
    import pytest

    H = jnp.asarray(np.random.default_rng(0).normal(size=(20, 2)))
    y = np.ones(20)
    y[3] = np.nan
    with pytest.raises(ValueError, match="model argument 1 contains NaN or infinity"):
        run_nuts(sparse_regression_model, H, jnp.asarray(y), num_warmup=5, num_samples=5, num_chains=1)
    for kw, match in ((dict(target_accept_prob=1.5), "target_accept_prob must lie in"),
                      (dict(target_accept_prob="x"), "target_accept_prob must be a finite number"),
                      (dict(max_tree_depth=0), "max_tree_depth must be an integer of at least 1")):
        with pytest.raises(ValueError, match=match):
            run_nuts(sparse_regression_model, H, jnp.ones(20), num_warmup=5, num_samples=5, num_chains=1, **kw)


class _KernelBuilt(Exception):
    """Raised by the spy once NUTS's kernel is built: nothing needs to run."""


def _spy_kernel(monkeypatch):
    """Replace the runner's ``NUTS`` by a spy that records the kernel's settings and stops the run."""
    from sparsebayes.inference.engines import nuts_programs
    seen = {}

    def spy(model, **kwargs):
        seen.update(kwargs)
        raise _KernelBuilt
    monkeypatch.setattr(nuts_programs, "NUTS", spy)
    return seen


def _kernel_settings(monkeypatch, **kwargs):
    seen = _spy_kernel(monkeypatch)
    X, y = _data()
    with pytest.raises(_KernelBuilt):  # a vectorized run builds the kernel outside the compiled cache
        run_nuts(sparse_regression_model, X, y, num_warmup=5, num_samples=5, num_chains=1, progress_bar=False,
                 chain_method="vectorized", **kwargs)
    return seen


def test_the_hierarchys_declared_settings_reach_the_kernel(monkeypatch):
    from sparsebayes.models import HorseshoePrior
    from sparsebayes.models.priors import nuts_settings
    declared = nuts_settings(HorseshoePrior())
    assert declared["target_accept_prob"] > 0.8  # the horseshoe asks for smaller steps than NumPyro's default
    seen = _kernel_settings(monkeypatch, prior=HorseshoePrior())
    assert seen["target_accept_prob"] == declared["target_accept_prob"] and seen["max_tree_depth"] == 10
    # the caller's own value wins; a hierarchy that declares nothing gets NumPyro's defaults
    assert _kernel_settings(monkeypatch, prior=HorseshoePrior(), target_accept_prob=0.9)["target_accept_prob"] == 0.9
    assert _kernel_settings(monkeypatch, prior="laplace")["target_accept_prob"] == 0.8


def test_a_users_hierarchy_declares_its_own_settings(monkeypatch):
    from sparsebayes.models import HorseshoePrior

    class Careful(HorseshoePrior):
        nuts_settings = {"target_accept_prob": 0.97, "max_tree_depth": 12}

    seen = _kernel_settings(monkeypatch, prior=Careful())
    assert (seen["target_accept_prob"], seen["max_tree_depth"]) == (0.97, 12)

    class Wrong(HorseshoePrior):
        nuts_settings = {"step_size": 0.1}

    with pytest.raises(ValueError, match="nuts_settings has unknown keys.*step_size"):
        _kernel_settings(monkeypatch, prior=Wrong())


class _Shift(tuple):
    """A setting whose value is its fields: two subclasses with equal fields compare equal as tuples."""


class _Up(_Shift):
    pass


class _Down(_Shift):
    pass


def _shifted_model(y=None, *, shift):
    import numpyro
    import numpyro.distributions as dist
    sign = 1.0 if isinstance(shift, _Up) else -1.0
    numpyro.sample("mu", dist.Normal(sign * 5.0, 0.1))


def test_settings_of_different_classes_with_equal_fields_get_their_own_programs():
    """``_Up(()) == _Down(())`` as tuples; the compiled-program key must tell them apart (it did not: the
    second run sampled the first one's model)."""
    assert _Up(()) == _Down(())
    kw = dict(num_warmup=100, num_samples=100, num_chains=1, progress_bar=False)
    up = run_nuts(_shifted_model, None, shift=_Up(()), **kw)
    down = run_nuts(_shifted_model, None, shift=_Down(()), **kw)
    assert float(up.posterior["mu"].mean()) > 4.0
    assert float(down.posterior["mu"].mean()) < -4.0
