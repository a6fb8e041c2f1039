"""``sparsebayes.compare`` and ``sample_posterior`` for the sampling estimators (GibbsRegressor,
GibbsClassifier, NutsRegressor): their model record (``posterior_model``) is the posterior the fit
sampled, intercept included (flat under the Gaussian likelihood, N(0, 10²) otherwise), their point the
posterior median, and every part of the comparison on the one layout (``beta`` on ``basis``)."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
import scipy.stats
import sparsebayes
from numpyro.infer.util import log_density
from sparsebayes.inference import GibbsClassifier, GibbsRegressor, NutsRegressor
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior.posterior_sampling import same_layout

COLUMNS = ["height", "load", "idle"]
FIT = dict(num_warmup=60, num_samples=60, num_chains=2, seed=0, rhat_max=np.inf)
TINY = dict(num_warmup=60, num_samples=60, num_chains=2, seed=0, prior_draws=200)


def _case(name, data):
    X, y = data
    return {
        "gibbs-horseshoe": (GibbsRegressor(prior="horseshoe", **FIT), y),
        "nuts-student-t": (NutsRegressor(likelihood="student_t", **FIT), y),
        "gibbs-logistic": (GibbsClassifier(link="logistic", **FIT), np.where(y > 1.0, "up", "down")),
    }[name], X


def _forest_rows(parts, names):
    fig = compat.plot_forest({f"part {k}": part for k, part in enumerate(parts)}, var_names=["beta"], combined=True)
    labels = [t.get_text() for ax in fig.axes for t in (*ax.get_yticklabels(), *ax.texts)]
    plt.close(fig)
    return [label for label in labels if label.startswith(("beta[", "[")) or label in names]


@pytest.mark.slow  # about 35 s each on 2 cores (a fit, NUTS and Gibbs each compiled)
@pytest.mark.parametrize("name", ["gibbs-horseshoe", "nuts-student-t", "gibbs-logistic"])
def test_compare_runs_and_lines_up(name, three_inputs):
    (est, y), X = _case(name, three_inputs)
    cmp = sparsebayes.compare(est, X, y, **TINY)
    fitted = cmp.estimator
    assert cmp.names == COLUMNS and set(cmp.samples) == {"nuts", "gibbs"}
    point = cmp.idata.point_estimate
    assert point.attrs["inference"] == f"{fitted._sampler_label.lower()}-posterior-median"
    # the point is the posterior median on the model's basis (the centred inputs), as the draws are
    np.testing.assert_array_equal(point.beta.values.reshape(-1), np.ravel(fitted.beta_))
    assert float(point.intercept.values.ravel()[0]) == float(np.median(fitted.intercept_draws_))
    for s, idata in cmp.samples.items():
        assert same_layout(point, idata.posterior, "beta"), s
        assert "intercept" in idata.posterior, s
        assert np.isfinite(compat.elpd_loo(idata)), s
    assert len(_forest_rows([cmp.point_idata, *cmp.samples.values()], cmp.names)) == len(cmp.names)
    assert list(cmp.summary().index) == COLUMNS


def _log_joint(record, values):
    return float(log_density(record.model, (record.H, record.y), record.kwargs, values)[0])


@pytest.mark.parametrize("name", ["gibbs-horseshoe", pytest.param("gibbs-logistic", marks=pytest.mark.slow)])
def test_record_has_the_intercept_as_fitted(name, three_inputs):
    """The record's joint density, moved in the intercept alone, changes by the likelihood's log
    density difference (scipy) plus, off the Gaussian, the N(0, 10²) prior's: the intercept is in the
    model, with the fit's prior; the weights are the basis's alone (no bias column in ``beta``)."""
    (est, y), X = _case(name, three_inputs)
    est.fit(X, y)
    record = est.posterior_model(X, y)
    assert record.names == COLUMNS and record.H.shape == (50, 3) and record.point_label.endswith("posterior-median")
    post = est.to_inference_data().posterior
    values = {k: np.asarray(post[k].values[0, 5]) for k in post.data_vars}
    moved = {**values, "intercept": values["intercept"] + 0.7}
    eta = record.H @ values["beta"] + values["intercept"]
    if name == "gibbs-horseshoe":
        sd = np.sqrt(values["noise_var"])
        expected = (scipy.stats.norm.logpdf(record.y, eta + 0.7, sd).sum()
                    - scipy.stats.norm.logpdf(record.y, eta, sd).sum())
    else:
        expected = (scipy.stats.bernoulli.logpmf(record.y, scipy.special.expit(eta + 0.7)).sum()
                    - scipy.stats.bernoulli.logpmf(record.y, scipy.special.expit(eta)).sum()
                    + scipy.stats.norm.logpdf(values["intercept"] + 0.7, 0, 10)
                    - scipy.stats.norm.logpdf(values["intercept"], 0, 10))
    np.testing.assert_allclose(_log_joint(record, moved) - _log_joint(record, values), expected, rtol=1e-8, atol=1e-8)


def test_sample_posterior_on_the_estimators_layout(three_inputs):
    """``sample_posterior`` (Gibbs: the engine on the record's design) returns the weights under the
    names of ``to_inference_data``; ``SparseRegressor(method="gibbs")`` passes it through."""
    (est, y), X = _case("gibbs-horseshoe", three_inputs)
    est.fit(X, y)
    idata = est.sample_posterior(X, y, "gibbs", draws=60, chains=2, seed=1)  # the fit's shapes: its compiled sweep
    assert same_layout(est.to_inference_data().posterior, idata.posterior, "beta")
    assert idata.attrs["estimator"] == "GibbsRegressor" and "intercept flat" in idata.attrs["model"]
    with pytest.raises(ValueError, match="flat prior on σ²"):
        GibbsRegressor(prior="horseshoe", c=1.0, d=1.0, **FIT).fit(X, y).posterior_model(X, y)


@pytest.mark.slow  # about 25 s on 2 cores (a NUTS program compiled)
def test_nuts_per_weight_sites_are_on_basis(three_inputs):
    """The horseshoe's per-weight scales ``lam_local`` share ``beta``'s dim ``basis`` (and coords)."""
    (_, y), X = _case("gibbs-horseshoe", three_inputs)
    est = NutsRegressor(prior="horseshoe", **{**FIT, "num_warmup": 30, "num_samples": 30}).fit(X, y)
    post = est.to_inference_data().posterior
    assert post["lam_local"].dims == ("chain", "draw", "basis")
    assert same_layout(post, post.rename({"beta": "b", "lam_local": "beta"}), "beta")


@pytest.mark.slow
def test_nuts_on_the_gibbs_regressors_model_agrees_with_its_draws(three_inputs):
    """The posterior means by NUTS on the record of a GibbsRegressor's model equal the estimator's own
    Gibbs draws' within 4 MCSE (both chains' MCSE combined), weights, intercept and σ²."""
    (_, y), X = _case("gibbs-horseshoe", three_inputs)
    est = GibbsRegressor(prior="horseshoe", num_warmup=500, num_samples=2000, num_chains=2, seed=0).fit(X, y)
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts",), num_warmup=500, num_samples=1000, num_chains=2, seed=1,
                              prior_draws=200)
    for var in ("beta", "intercept", "noise_var"):
        a = compat.summary(cmp.samples["nuts"], var_names=[var])
        b = compat.summary(est.to_inference_data(), var_names=[var])
        gap = np.abs(a["mean"].to_numpy() - b["mean"].to_numpy())
        bound = 4 * np.hypot(a["mcse_mean"].to_numpy(), b["mcse_mean"].to_numpy())
        assert np.all(gap <= bound), (var, gap, bound)


def test_held_out_plug_in_density_has_the_intercept(three_inputs):
    """The point's held-out plug-in density (``compare``'s predictive table) is the Gaussian at
    ``b̂₀ + h(x)ᵀβ̂`` with the posterior medians (scipy), the intercept included."""
    from types import SimpleNamespace

    from sparsebayes.comparisons.compare_predictive import plug_in_density
    from sparsebayes.inference.posterior.twin_posterior import point_estimate_dataset

    (est, y), X = _case("gibbs-horseshoe", three_inputs)
    est.fit(X[:40], y[:40])
    point = point_estimate_dataset(est, COLUMNS)
    cmp = SimpleNamespace(estimator=est, X_test=X[40:], y_test=y[40:], idata=SimpleNamespace(point_estimate=point))
    lik, eta, params = plug_in_density(cmp)
    expected = scipy.stats.norm.logpdf(y[40:], X[40:].to_numpy() @ est.coef_ + est.intercept_, np.sqrt(est.noise_var_))
    np.testing.assert_allclose(np.asarray(lik.log_lik(y[40:].to_numpy(), eta, params)), expected, rtol=1e-10)


def test_held_out_predictions_of_the_draws_have_the_intercept(three_inputs):
    """The samplers' held-out ``predictions`` (log density and mean per draw) of the record are the
    Gaussian at ``b₀ + h(x)ᵀβ`` of each draw (scipy), the intercept included, with ``h(x)`` the inputs
    centred at the training rows' mean (the basis the draws are on: ``b₀`` is the value there)."""
    from sparsebayes.inference.posterior.twin_predictive import predictions, site_draws

    (est, y), X = _case("gibbs-horseshoe", three_inputs)
    est.fit(X[:40], y[:40])
    record = est.posterior_model(X[40:], y[40:])
    post = est.to_inference_data().posterior.isel(draw=slice(0, 5))
    out = predictions(record.model, record.H, record.y, record.kwargs, site_draws(post), likelihood=record.likelihood)
    beta, b0 = post.beta.values.reshape(-1, 3), post.intercept.values.reshape(-1)
    mean = b0[:, None] + beta @ (X[40:].to_numpy() - X[:40].to_numpy().mean(axis=0)).T
    np.testing.assert_allclose(out["mean"], mean, rtol=1e-10)
    sd = np.sqrt(post.noise_var.values.reshape(-1))[:, None]
    np.testing.assert_allclose(out["log_lik"], scipy.stats.norm.logpdf(y[40:].to_numpy(), mean, sd), rtol=1e-10)
