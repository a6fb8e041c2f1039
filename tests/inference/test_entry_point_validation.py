"""The functional entry points (``run_gibbs``, ``run_nuts``, ``posterior_mean_batch``, the NumPyro
models) check their input as the estimators do, take pandas and lists, and the Bayesian Lasso
says when its λ² prior, set for other units of X, has shrunk a clear signal to zero (issue 30
items 3 and 6, issue 29)."""
import warnings

import numpy as np
import pandas as pd
import pytest
from numpyro import handlers

from sparsebayes.inference import BayesianLassoRegressor, run_nuts
from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.inference.engines.bayesian_lasso import Hyper, engine_settings, run_gibbs
from sparsebayes.inference.engines.hierarchy_gibbs_batch import posterior_mean_batch
from sparsebayes.models.bayesian_lasso import bayesian_lasso, bls_model

FAST = dict(num_warmup=20, num_samples=20, num_chains=2)
NUTS = dict(FAST, progress_bar=False, rhat_max=None)


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ np.array([1.5, 0.0, -0.8]) + 0.5 * rng.standard_normal(n)


def _with(a, index, value):
    a = np.array(a, dtype=float)
    a[index] = value
    return a


X0, Y0 = _data()
BAD_DATA = [
    (_with(X0, (0, 0), np.nan), Y0, "X contains NaN or infinity"),
    (X0, _with(Y0, 3, np.inf), "y contains NaN or infinity"),
    (X0[:0], Y0[:0], "X has 0 rows"),
    (X0[:1], Y0[:1], "X has 1 rows .* at least 2"),
    (X0[:, :0], Y0, "X has no columns"),
    (X0, Y0[:-1], "X and y have different numbers of samples: 30 rows of X, 29 values of y"),
    (X0[:, 0], Y0, r"X must be a 2-D array .* got shape \(30,\)"),
    (X0, Y0[:, None], r"y must be a 1-D array .* got shape \(30, 1\)"),
    (np.full((30, 3), "a"), Y0, "X must be numeric"),
    (X0, np.array(["a"] * 30), "regression targets must be numeric"),
]


@pytest.mark.parametrize("X, y, match", BAD_DATA)
def test_run_gibbs_names_bad_data(X, y, match):
    """One NaN made every draw NaN under a "σ² → 0, typical of p > n" warning; empty data returned
    draws; wrong shapes failed inside NumPy."""
    with pytest.raises(ValueError, match=match):
        run_gibbs(X, y, **FAST)


@pytest.mark.parametrize("bad, match", [(dict(lam2_rate=-1.0), "lam2_rate must be a finite number ≥ 0, got -1"),
                                        (dict(lam2_shape=np.nan), "lam2_shape must be a finite number"),
                                        (dict(c="1"), "c must be a finite number"),
                                        (dict(d=-0.5), "d must be a finite number ≥ 0"),
                                        (dict(seed=-1), "seed must be an integer of at least 0")])
def test_run_gibbs_names_hyperparameters_out_of_range(bad, match):
    """``lam2_rate=-1`` gave negative λ² draws."""
    with pytest.raises(ValueError, match=match):
        run_gibbs(X0, Y0, **FAST, **bad)


def test_posterior_mean_batch_names_bad_data():
    Xs, ys = np.stack([X0, X0]), np.stack([Y0, Y0])
    for args, match in (((_with(Xs, (1, 2, 0), np.nan), ys), "Xs contains NaN or infinity"),
                        ((Xs, ys[:, :-1]), r"ys must have shape \(2, 30\)"),
                        ((X0, Y0), "Xs must be a 3-D array")):
        with pytest.raises(ValueError, match=match):
            posterior_mean_batch(*args, num_warmup=10, num_samples=10, **engine_settings(Hyper()))
    with pytest.raises(ValueError, match="lam2_rate must be a finite number"):
        posterior_mean_batch(Xs, ys, num_warmup=10, num_samples=10, **engine_settings(Hyper(lam2_rate=-1.0)))


@pytest.mark.parametrize("X, y, match", [(X0, Y0[:-1], "X and y have different numbers of samples"),
                                         (X0[:, 0], Y0, "X must be a 2-D array"),
                                         (X0[:0], Y0[:0], "X has 0 rows"),
                                         (X0, Y0[:, None], "y must be a 1-D array"),
                                         (np.full((30, 3), "a"), Y0, "X must be numeric")])
def test_run_nuts_names_bad_data_of_the_packages_models(X, y, match):
    """Mismatched lengths failed inside the model with "Incompatible shapes for broadcasting"."""
    with pytest.raises(ValueError, match=match):
        run_nuts(bayesian_lasso, X, y, **NUTS)


def test_run_nuts_checks_lengths_for_any_model_called_with_x_and_y():
    import numpyro
    import numpyro.distributions as dist

    def line(x, y=None):
        slope = numpyro.sample("slope", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(slope * x, 1.0), obs=y)

    with pytest.raises(ValueError, match="x and y have different numbers of samples: 30 rows of x, 29 values of y"):
        run_nuts(line, X0[:, 0], Y0[:-1], **NUTS)


def test_run_nuts_names_a_negative_hyperparameter():
    """A negative rate was taken for the improper 0 and replaced by the surrogate ε silently."""
    with pytest.raises(ValueError, match="lam2_rate must be a finite number ≥ 0, got -1"):
        run_nuts(bayesian_lasso, X0, Y0, lam2_rate=-1.0, **NUTS)
    with pytest.raises(ValueError, match="b must be a finite number ≥ 0"):
        run_nuts(bls_model, X0, Y0, a=1.0, b=-2.0, **NUTS)


def test_the_models_check_their_data_shapes():
    for model, name in ((bayesian_lasso, "X"), (bls_model, "Phi")):
        with pytest.raises(ValueError, match=rf"y must be a 1-D array with one target per row of {name} \(30\)"):
            handlers.trace(handlers.seed(model, 0)).get_trace(X0, Y0[:-1])
        with pytest.raises(ValueError, match=f"{name} must be a 2-D array"):
            handlers.trace(handlers.seed(model, 0)).get_trace(X0[:, 0], Y0)


def test_run_nuts_takes_pandas_and_lists_with_the_draws_of_arrays():
    """A DataFrame failed with JAX's TracerArrayConversionError; its column names now label the
    weights' plate."""
    frame = pd.DataFrame(X0, columns=["age", "bmi", "bp"])
    arrays = run_nuts(bayesian_lasso, X0, Y0, seed=3, **NUTS)
    for X, y in ((frame, pd.Series(Y0)), (X0.tolist(), Y0.tolist())):
        other = run_nuts(bayesian_lasso, X, y, seed=3, **NUTS)
        np.testing.assert_array_equal(other.posterior["beta"].values, arrays.posterior["beta"].values)
        np.testing.assert_array_equal(other.posterior["lam2"].values, arrays.posterior["lam2"].values)
    labelled = run_nuts(bayesian_lasso, frame, pd.Series(Y0), seed=3, **NUTS)
    assert labelled.posterior["beta"].dims[-1] == "features"
    assert list(labelled.posterior["features"].values) == ["age", "bmi", "bp"]
    assert list(labelled.posterior["tau2"].dims) == ["chain", "draw", "features"]


def test_run_gibbs_takes_pandas_and_lists_with_the_draws_of_arrays():
    frame = pd.DataFrame(X0, columns=["age", "bmi", "bp"])
    arrays = run_gibbs(X0, Y0, seed=3, **FAST)
    for X, y in ((frame, pd.Series(Y0)), (X0.tolist(), Y0.tolist())):
        other = run_gibbs(X, y, seed=3, **FAST)
        np.testing.assert_array_equal(other.posterior["beta"].values, arrays.posterior["beta"].values)
    labelled = run_gibbs(frame, pd.Series(Y0), seed=3, **FAST)
    assert list(labelled.posterior["basis"].values) == ["age", "bmi", "bp"]


def _signal(n=100, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ np.array([2.0, 0.0, -1.0]) + rng.standard_normal(n)


def test_the_bayesian_lasso_warns_when_its_prior_shrinks_a_clear_signal_to_zero():
    """At ``X · 1e-8`` the λ² prior (rate in units of 1/X²) holds λ far above what the data need:
    training R² 1e-10 with mixed chains, and no word. The same data in their own units, and data
    with no signal at all, give no such warning."""
    X, y = _signal()
    kw = dict(num_warmup=200, num_samples=400, num_chains=2, rhat_max=np.inf)
    with pytest.warns(DegenerateFitWarning, match="shrunk every coefficient to about zero; standardize X"):
        tiny = BayesianLassoRegressor(**kw).fit(X * 1e-8, y)
    assert tiny.score(X * 1e-8, y) < 1e-3
    noise = np.random.default_rng(2).standard_normal(100)
    for Xf, yf in ((X, y), (X, noise)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DegenerateFitWarning)
            BayesianLassoRegressor(**kw).fit(Xf, yf)
