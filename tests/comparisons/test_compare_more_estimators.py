"""``sparsebayes.compare`` for the type-II regressors (RVM, BLS, FLAP), the Bernoulli RVM and SMLR:
one row per weight across the parts, ArviZ's loo and ppc on each sampler, the sampled model being the
estimator's, improper posteriors only on a labelled surrogate."""
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import scipy.stats
import sparsebayes
from sparsebayes.inference import (
    BLSRegressor,
    FLAPRegressor,
    RVMClassifier,
    RVMRegressor,
    SMLRClassifier,
)
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior.posterior_sampling import same_layout

TINY = dict(num_warmup=60, num_samples=60, num_chains=2, seed=0)
COLUMNS = ["height", "load", "idle"]


def _case(name, data):
    """(estimator, targets, samplers, surrogate_eps, weight labels)."""
    X, y = data
    two = np.where(y > 1.0, "up", "down")
    three = np.array(["low", "mid", "high"])[np.digitize(y, [0.0, 2.0])]
    return {
        "rvm": (RVMRegressor(), y, ("nuts", "gibbs"), 1e-3, COLUMNS),
        "bls": (BLSRegressor(), y, ("nuts", "gibbs"), None, COLUMNS),
        "flap": (FLAPRegressor(), y, ("gibbs",), None, COLUMNS),
        "flap-sigma": (FLAPRegressor(estimate_noise=True), y, ("nuts", "gibbs"), None, COLUMNS),
        "rvm-classifier": (RVMClassifier(features="linear"), two, ("nuts",), 1e-3, ["bias", *COLUMNS]),
        "smlr-binary": (SMLRClassifier(lam=1.0), two, ("nuts",), None,
                        [f"{b}[{c}]" for b in ["bias", *COLUMNS] for c in ("down", "up")]),
        "smlr-3": (SMLRClassifier(lam=1.0), three, ("nuts",), None,
                   [f"{b}[{c}]" for b in ["bias", *COLUMNS] for c in ("high", "low", "mid")]),
    }[name], X


def _forest_rows(parts, names):
    """The row labels of ArviZ's forest plot of ``parts``, those that name a weight: ``beta[name]`` (ArviZ
    0.x; after the first row of a variable only ``[name]``) or ``name`` (1.x, which labels the rows of
    two-dim weights by each coordinate apart)."""
    fig = compat.plot_forest({f"part {k}": part for k, part in enumerate(parts)}, var_names=["beta"], combined=True)
    labels = [t.get_text() for ax in fig.axes for t in (*ax.get_yticklabels(), *ax.texts)]
    plt.close(fig)
    return [label for label in labels if label.startswith(("beta[", "[")) or label in names]


@pytest.mark.parametrize("name", ["flap", *[pytest.param(n, marks=pytest.mark.slow) for n in
                                            ("rvm", "bls", "flap-sigma", "rvm-classifier", "smlr-binary", "smlr-3")]])
def test_compare_lines_up_every_part(name, three_inputs):
    (est, y, samplers, eps, labels), X = _case(name, three_inputs)
    backend = matplotlib.get_backend()
    cmp = sparsebayes.compare(est, X, y, samplers=samplers, surrogate_eps=eps, **TINY)
    assert matplotlib.get_backend() == backend
    assert cmp.names == labels
    point = cmp.idata.point_estimate
    for s, idata in cmp.samples.items():
        assert same_layout(point, idata.posterior, "beta"), s
        assert np.isfinite(compat.elpd_loo(idata))
        plt.close(compat.plot_ppc(idata, num_samples=10))
    parts = [cmp.point_idata, *cmp.samples.values()]
    rows = _forest_rows(parts, cmp.names)
    if cmp.weight_dims == ("basis",) or not compat.is_datatree_api():
        assert len(rows) == len(cmp.names)  # one row per weight, the parts overlaid on it
    table = cmp.summary()
    assert list(table.index) == labels and len(table) == cmp.prior_beta.shape[1]
    if eps is not None:
        assert f"surrogate-eps={eps:g}" in cmp.idata.attrs["model"]


@pytest.mark.slow
def test_smlr_reference_class_is_zero_and_the_map_is_the_mode(three_inputs):
    """SMLR's twin is its own objective: no NUTS draw has a higher log posterior than the MAP, and the
    reference class's weights are exactly zero in every draw, as in ``coef_``."""
    from sparsebayes.models.likelihoods.multinomial import (
        log_posterior,
        one_hot_reference,
    )
    from sparsebayes.models.priors import LaplacePrior

    (est, y, samplers, _, _), X = _case("smlr-3", three_inputs)
    cmp = sparsebayes.compare(est, X, y, samplers=samplers, **TINY)
    est = cmp.estimator
    beta = cmp.idata.posterior.beta
    assert beta.dims == ("chain", "draw", "basis", "class") and not np.any(beta.sel({"class": "mid"}).values)
    np.testing.assert_array_equal(cmp.idata.point_estimate.beta.values[0, 0], est._basis_weights_)
    H = cmp.design
    Y1 = one_hot_reference(np.searchsorted(est.classes_, y), 3)
    prior = LaplacePrior.from_lam(float(est.lam_))
    W = beta.values.reshape(-1, H.shape[1], 3)[:, :, :-1].copy()
    W[:, 0, :] /= est.bias_scale_
    best = max(float(log_posterior(w, H, Y1, prior)) for w in W)
    at_map = float(log_posterior(est._penalized_coef(), H, Y1, prior))
    assert best <= at_map + 1e-8 * abs(at_map)


def test_type2_gibbs_is_the_estimators_model(three_inputs):
    """FLAP's Gibbs twin: σ² held at the fit's, λ at the fit's, the pointwise log likelihood
    N(y | b + Xw, σ²) at each draw (scipy), the intercept drawn with the weights."""
    (est, y, _, _, _), X = _case("flap", three_inputs)
    est.fit(X, y)
    idata = est.sample_posterior(X, y, "gibbs", draws=50, chains=2, seed=3)
    assert "noise_var" not in idata.posterior and f"gamma={est.gamma_:.6g}" in idata.attrs["model"]
    assert idata.attrs["weights"] == "beta" and same_layout(est.to_inference_data().posterior, idata.posterior, "beta")
    w, b = idata.posterior.beta.values[1, 9], float(idata.posterior.intercept.values[1, 9])
    np.testing.assert_allclose(idata.log_likelihood.y.values[1, 9],
                               scipy.stats.norm.logpdf(y, b + X.to_numpy() @ w, np.sqrt(est.noise_var_)), rtol=1e-10)
    with pytest.raises(ValueError, match="sampler must be 'nuts' or 'gibbs'"):
        est.sample_posterior(X, y, "hmc", draws=50, chains=2)


def test_rvm_needs_the_labelled_surrogate_and_classifiers_have_no_gibbs(three_inputs):
    X, y = three_inputs
    rvm = RVMRegressor().fit(X, y)
    with pytest.raises(ValueError, match="no proper posterior.*surrogate_eps"):
        sparsebayes.compare(rvm, X, y, **TINY)
    with pytest.raises(ValueError, match="surrogate_eps applies to the improper hyperpriors"):
        sparsebayes.compare(BLSRegressor().fit(X, y), X, y, surrogate_eps=1e-3, **TINY)
    smlr = SMLRClassifier(lam=1.0).fit(X, y > 1.0)
    with pytest.raises(ValueError, match="needs Gibbs conditionals.*SMLRClassifier"):
        smlr.sample_posterior(X, y > 1.0, "gibbs", draws=50, chains=2)


def test_a_column_constant_under_the_intercept_is_left_out_with_weight_zero(three_inputs):
    """RVMRegressor(features="linear") keeps the map's bias column, centred away by the flat-prior
    intercept: the fit masks it (weight 0), and so does the twin, saying so in ``model``."""
    X, y = three_inputs
    est = RVMRegressor(features="linear").fit(X, y)
    cmp = sparsebayes.compare(est, X, y, samplers=("gibbs",), surrogate_eps=1e-3, **TINY)
    beta = cmp.idata.posterior.beta
    assert list(beta.basis.values) == ["bias", *COLUMNS] and not np.any(beta.sel(basis="bias").values)
    assert np.all(np.std(beta.sel(basis=COLUMNS).values, axis=(0, 1)) > 0)
    assert "constant column(s) bias not in the model" in cmp.idata.attrs["model"]
    assert list(cmp.idata.posterior.beta_raw.model_basis.values) == COLUMNS
    assert same_layout(cmp.idata.point_estimate, cmp.idata.posterior, "beta")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bls", "rvm"])
def test_type2_twin_gibbs_agrees_with_nuts(name, three_inputs):
    """The Gibbs sweeps and NUTS sample one posterior: the weights' and σ²'s means agree within
    5 combined Monte Carlo standard errors."""
    (est, y, _, eps, _), X = _case(name, three_inputs)
    est.fit(X, y)
    runs = {s: est.sample_posterior(X, y, s, draws=800, warmup=400, chains=2, seed=5, surrogate_eps=eps)
            for s in ("nuts", "gibbs")}
    for var in ("beta", "noise_var", "intercept"):
        means = {s: compat.summary(d, var_names=[var]) for s, d in runs.items()}
        gap = np.abs(means["nuts"]["mean"].to_numpy() - means["gibbs"]["mean"].to_numpy())
        mcse = np.hypot(means["nuts"]["mcse_mean"].to_numpy(), means["gibbs"]["mcse_mean"].to_numpy())
        assert np.all(gap < 5 * mcse + 1e-3 * np.abs(means["nuts"]["sd"].to_numpy())), (var, gap, mcse)
