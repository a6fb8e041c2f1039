"""``sparsebayes.compare(est, X, y)`` on a user's own table: one naming scheme, the groups ArviZ
needs, the report files, the exact point estimate, and the sampled model being the estimator's."""
import os

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from scipy.special import log_ndtr
from sklearn.linear_model import LinearRegression
from sklearn.utils.validation import check_is_fitted

import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor, BayesianLassoRegressor, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.estimators._base import raw_weights
from sparsebayes.models import HorseshoePrior

SAMPLING = dict(num_warmup=200, num_samples=200, num_chains=2, seed=0)
COLUMNS = ["age", "dose", "weight", "noise"]


def _table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, len(COLUMNS))) * [1.0, 2.0, 0.5, 1.0] + [40.0, 0.0, 3.0, 0.0],
                     columns=COLUMNS)
    y = 2.0 + 1.5 * (X["age"] - 40.0) - 0.8 * X["dose"] + rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def regression():
    """A Laplace regressor given unfitted, and the state of matplotlib around compare/plot/save."""
    X, y = _table()
    est = AdaptiveSparseRegressor(prior="laplace")
    backend, figures = matplotlib.get_backend(), plt.get_fignums()
    cmp = sparsebayes.compare(est, X, y, progress_bar=None, **SAMPLING)
    fig = cmp.plot()
    return dict(X=X, y=y, est=est, cmp=cmp, fig=fig, backend=backend, figures=figures)


def test_unfitted_estimator_is_cloned_and_fitted(regression):
    cmp, est = regression["cmp"], regression["est"]
    with pytest.raises(Exception, match="not fitted"):
        check_is_fitted(est)  # the user's object is left as it was
    check_is_fitted(cmp.estimator)
    assert cmp.estimator is not est


def test_names_dims_and_coords_line_up(regression):
    cmp = regression["cmp"]
    names = ["bias", *COLUMNS]
    assert list(cmp.estimator.feature_map_.get_feature_names_out(COLUMNS)) == names
    assert list(cmp.idata.posterior.beta.basis.values) == names
    assert cmp.idata.posterior.beta.dims == ("chain", "draw", "basis")
    point = cmp.idata.point_estimate
    assert point.beta.dims == ("chain", "draw", "basis") and list(point.beta.basis.values) == names
    assert point.attrs["point_estimate"] == 1
    assert int(cmp.idata.posterior.attrs.get("point_estimate", 0)) == 0  # MCMC draws only in posterior
    assert list(cmp.point_idata.posterior.beta.basis.values) == names
    assert cmp.idata.posterior.beta.dtype == np.float64


def test_forest_of_the_parts_has_one_row_per_weight(regression):
    cmp = regression["cmp"]
    fig = compat.plot_forest({"em": cmp.point_idata, "nuts": cmp.idata}, var_names=["beta"], combined=True)
    labels = [t.get_text() for ax in fig.axes for t in (*ax.get_yticklabels(), *ax.texts)]
    plt.close(fig)
    assert len(cmp.names) == 5
    for name in cmp.names:  # one row label per weight: "beta[age]" (ArviZ 0.x) or "age" (1.x)
        assert sum(label == name or label.endswith(f"[{name}]") for label in labels) == 1


def test_loo_and_ppc_run(regression):
    cmp = regression["cmp"]
    for group in ("observed_data", "log_likelihood", "posterior_predictive", "sample_stats"):
        assert compat.has_group(cmp.idata, group)
    assert cmp.idata.posterior_predictive.y.shape == (2, 200, 120)
    assert np.isfinite(compat.elpd_loo(cmp.idata))
    plt.close(compat.plot_ppc(cmp.idata, num_samples=20))


def test_sampled_model_is_the_estimators(regression):
    """The pointwise log likelihood at a draw is N(y | Hβ, σ²) with H the estimator's own fitted design
    (standardized inputs), computed here by scipy."""
    cmp, X, y = regression["cmp"], regression["X"], regression["y"]
    H = cmp.estimator.feature_map_.transform(X.to_numpy())
    post = cmp.idata.posterior
    beta, s2 = post.beta.values[1, 17], float(post.noise_var.values[1, 17])
    expected = scipy.stats.norm.logpdf(y.to_numpy(), H @ beta, np.sqrt(s2))
    np.testing.assert_allclose(cmp.idata.log_likelihood.y.values[1, 17], expected, rtol=1e-10)
    np.testing.assert_array_equal(cmp.design, H)


def test_point_estimate_is_the_estimators_exactly(regression):
    est, point, X = regression["cmp"].estimator, regression["cmp"].point, regression["X"]
    np.testing.assert_array_equal(point, est.beta_)
    np.testing.assert_array_equal(raw_weights(est.feature_map_, point), np.r_[est.intercept_, est.coef_])
    np.testing.assert_array_equal(regression["cmp"].design @ point, est.predict(X))
    assert regression["cmp"].idata.point_estimate.noise_var.values.item() == est.noise_var_


def test_summary_columns_rows_and_laplace_prior_mass(regression):
    cmp, X, y = regression["cmp"], regression["X"], regression["y"]
    df = cmp.summary()
    assert list(df.index) == cmp.names
    for col in ("point", "point_is_zero", "nuts_median", "nuts_q05", "nuts_q95", "nuts_interval_covers_zero",
                "nuts_p_near_zero", "prior_p_near_zero", "nuts_r_hat", "nuts_ess_bulk", "nuts_ess_tail", "near_zero"):
        assert col in df.columns
    assert (df.nuts_q05 <= df.nuts_median).all() and (df.nuts_median <= df.nuts_q95).all()
    assert not df.loc["age", "nuts_interval_covers_zero"] and df.loc["noise", "nuts_interval_covers_zero"]
    # Each weight's own c_j = f · sd(y) / sd(x_j): the Laplace fit centres the inputs without scaling them,
    # so x_j is the raw column (sd 1, 2, 0.5, 1 by construction) and the bias column's c is f · sd(y).
    f = 0.15
    df = cmp.summary(rope=f)
    expected_c = f * np.std(y) / np.r_[1.0, X.std(ddof=0).to_numpy()]
    np.testing.assert_allclose(df.near_zero, expected_c, rtol=1e-12)
    np.testing.assert_allclose(df.attrs["near_zero"], expected_c, rtol=1e-12)
    assert df.attrs["rope_fraction"] == f
    # The Laplace(0, 1/√γ) prior (γ = 1): P(|β_j| < c_j) = 1 − exp(−c_j), against 4000 prior draws.
    exact = 1.0 - np.exp(-expected_c)
    assert np.all(np.abs(df.prior_p_near_zero - exact) <= 4 * np.sqrt(exact * (1 - exact) / 4000))
    beta = cmp.idata.posterior.beta.values.reshape(-1, len(cmp.names))
    np.testing.assert_allclose(df.nuts_p_near_zero, np.mean(np.abs(beta) < expected_c, axis=0))
    with pytest.raises(ValueError, match="rope"):
        cmp.summary(rope=-1.0)


def test_diagnostics_report_each_failed_check(regression):
    diag = regression["cmp"].diagnostics()["nuts"]
    for key in ("r_hat_max", "ess_bulk_min", "ess_tail_min", "divergences", "bfmi_min", "ess_bulk_per_second"):
        assert key in diag
    assert diag["divergences"] == int(regression["cmp"].idata.sample_stats.diverging.sum())
    # 400 draws in all cannot give a tail ESS of 400 for every weight: the warning must be there.
    assert diag["ess_tail_min"] < 400
    assert any("tail ESS" in w for w in diag["warnings"])


def test_plot_and_save_leave_matplotlib_alone(regression, tmp_path):
    cmp = regression["cmp"]
    assert isinstance(regression["fig"], matplotlib.figure.Figure)
    labels = [t.get_text() for t in regression["fig"].axes[0].get_yticklabels()]
    assert labels == cmp.names
    out = cmp.save(tmp_path / "report")
    files = set(os.listdir(out))  # and a rank plot of each sampler that fails the gate
    assert {"draws.nc", "forest.png", "ppc.png", "report.html", "report.md", "selection.png"} <= files
    assert {f"rank-{s}.png" for s, ok in cmp.usable.items() if not ok} == {f for f in files if f.startswith("rank-")}
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and 'src="forest.png"' not in page
    assert "age" in (out / "report.md").read_text()
    assert matplotlib.get_backend() == regression["backend"]
    assert plt.get_fignums() == regression["figures"]  # no pyplot figure was opened


def test_save_refuses_an_earlier_report_and_keeps_its_edits_unless_told_to_overwrite(regression, tmp_path):
    cmp = regression["cmp"]
    out = cmp.save(tmp_path / "report")
    (out / "report.md").write_text("my notes", encoding="utf-8")
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    with pytest.raises(FileExistsError, match=r"report\.md already exists.*overwrite=True"):
        cmp.save(out)
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before  # nothing written, the edit kept
    cmp.save(out, overwrite=True)
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# sparsebayes comparison")


def test_netcdf_round_trips(regression, tmp_path):
    cmp = regression["cmp"]
    back = compat.from_netcdf(cmp.save(tmp_path) / "draws.nc")
    assert set(compat.groups(back)) == set(compat.groups(cmp.idata))
    for group in ("posterior", "point_estimate", "log_likelihood"):
        a, b = getattr(cmp.idata, group), getattr(back, group)
        assert a.beta.dims == b.beta.dims if "beta" in a else a.y.dims == b.y.dims
        assert list(b.coords.get("basis", [])) == list(a.coords.get("basis", []))
    np.testing.assert_array_equal(back.point_estimate.beta.values, cmp.idata.point_estimate.beta.values)
    assert int(back.point_estimate.attrs["point_estimate"]) == 1


@pytest.mark.slow
def test_classifier_with_horseshoe_prior():
    X, y = _table(n=100, seed=1)
    labels = np.where(y > np.median(y), "yes", "no")
    est = SparseProbitClassifier(prior=HorseshoePrior()).fit(X, labels)  # fitted: used as it is
    cmp = sparsebayes.compare(est, X, labels, target_accept_prob=0.95, **SAMPLING)
    assert cmp.estimator is est
    names = ["bias", *COLUMNS]
    assert list(cmp.idata.posterior.beta.basis.values) == names == list(cmp.idata.point_estimate.beta.basis.values)
    np.testing.assert_array_equal(cmp.point, est.beta_[0])
    np.testing.assert_array_equal(cmp.idata.observed_data.y.values, (labels == "yes").astype(float))
    beta = cmp.idata.posterior.beta.values[0, 5]
    expected = log_ndtr((2.0 * (labels == "yes") - 1.0) * (est.feature_map_.transform(X.to_numpy()) @ beta))
    np.testing.assert_allclose(cmp.idata.log_likelihood.y.values[0, 5], expected, rtol=1e-8, atol=1e-14)
    assert set(np.unique(cmp.idata.posterior_predictive.y.values)) <= {0.0, 1.0}
    assert np.isfinite(compat.elpd_loo(cmp.idata))
    assert list(cmp.summary().index) == names


def test_bayesian_lasso_gibbs_on_the_same_names():
    X, y = _table(n=80, seed=2)
    est = BayesianLassoRegressor(num_warmup=100, num_samples=100, num_chains=2)
    cmp = sparsebayes.compare(est, X - X.mean(), y, samplers=("gibbs",), **SAMPLING)
    assert list(cmp.idata.posterior.beta.basis.values) == COLUMNS == list(cmp.idata.point_estimate.beta.basis.values)
    np.testing.assert_array_equal(cmp.point, cmp.estimator.coef_)
    assert compat.has_group(cmp.idata, "posterior_predictive") and np.isfinite(compat.elpd_loo(cmp.idata))
    assert np.isnan(cmp.diagnostics()["gibbs"]["bfmi_min"])  # no energies in a Gibbs run


def test_jeffreys_without_surrogate_is_refused():
    X, y = _table(n=60)
    with pytest.raises(ValueError, match="Jeffreys.*improper|no proper posterior.*surrogate_eps"):
        sparsebayes.compare(AdaptiveSparseRegressor(prior="jeffreys"), X, y, **SAMPLING)
    with pytest.raises(ValueError, match="surrogate_eps applies to the Jeffreys prior"):
        sparsebayes.compare(AdaptiveSparseRegressor(prior="laplace"), X, y, surrogate_eps=1e-3, **SAMPLING)


@pytest.mark.parametrize("case, match", [
    ("estimator", "compare supports"),
    ("y_length", "y must be 60 finite numbers"),
    ("samplers", "samplers must be"),
    ("gibbs_for_em", "JeffreysSurrogate has no Gibbs conditionals"),
    ("columns", "feature names"),
])
def test_bad_input_is_a_clear_value_error(case, match):
    X, y = _table(n=60)
    est = AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    args = {"estimator": (LinearRegression(), X, y, {}), "y_length": (est, X, y[:-1], {}),
            "samplers": (est, X, y, {"samplers": "nuts"}), "gibbs_for_em": (AdaptiveSparseRegressor(prior="jeffreys").fit(X, y), X, y,
                                                    {"samplers": ("gibbs",), "surrogate_eps": 1e-3}),
            "columns": (est, X.rename(columns={"age": "AGE"}), y, {})}[case]
    with pytest.raises(ValueError, match=match):
        sparsebayes.compare(args[0], args[1], args[2], **{**SAMPLING, **args[3]})


def test_lazy_exports():
    from sparsebayes.comparisons import Comparison, compare_estimator
    from sparsebayes.comparisons.compare_any import compare
    assert sparsebayes.compare is compare is compare_estimator
    assert Comparison.__name__ == "Comparison"


def test_progress_bars_follow_the_terminal_by_default(capsys, monkeypatch):
    """``progress_bar=None`` (the default): bars when standard error is a terminal, none otherwise."""
    import sys

    from sklearn.datasets import load_diabetes

    from sparsebayes.inference import FLAPRegressor
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:80, :4], y[:80]
    run = dict(samplers=("gibbs",), num_warmup=20, num_samples=20, num_chains=1)
    sparsebayes.compare(FLAPRegressor(), X, y, **run)
    assert "%|" not in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    sparsebayes.compare(FLAPRegressor(), X, y, **run)
    assert "%|" in capsys.readouterr().err


def _diabetes_standardized(n=None):
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    X, y = (X[:n], y[:n]) if n else (X, y)
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


def test_default_samplers_are_the_models(monkeypatch):
    """``samplers="auto"`` (the default): the horseshoe regressor is sampled by NUTS and Gibbs, NUTS at
    the hierarchy's own settings (compare passes no target acceptance of its own); the Laplace regressor
    by both (the Laplace prior's own conditionals), the Jeffreys one (none) by NUTS alone; the Bayesian Lasso by both; an explicit tuple as given. A
    stand-in sampler records what compare asks for, so nothing compiles; a sampler whose stand-in draws
    diverge is marked unusable by the gate."""
    from sparsebayes.inference.posterior import twin_posterior
    from sparsebayes.inference.posterior.twin_posterior import default_samplers
    asked = []

    def sample(est, X, y, sampler="nuts", *, num_chains=2, num_samples=5, target_accept_prob=None, **_):
        asked.append((sampler, target_accept_prob))
        names = list(est.feature_map_.get_feature_names_out([f"x{j}" for j in range(X.shape[1])]))
        rng = np.random.default_rng(len(asked))
        div = np.zeros((num_chains, num_samples), dtype=bool)
        div[0, 0] = sampler == "nuts"
        return compat.from_dict({"posterior": {"beta": rng.normal(size=(num_chains, num_samples, len(names)))},
                                 "sample_stats": {"diverging": div},
                                 "observed_data": {"y": np.asarray(y, dtype=np.float64)}},
                                coords={"basis": names}, dims={"beta": ["basis"], "y": ["obs"]})
    monkeypatch.setattr(twin_posterior, "sample_posterior", sample)
    X, y = _diabetes_standardized(100)
    cmp = sparsebayes.compare(AdaptiveSparseRegressor(prior="horseshoe"), X, y, num_warmup=5, num_samples=500,
                              num_chains=4, prior_draws=10, progress_bar=False)
    assert asked == [("nuts", None), ("gibbs", None)] and list(cmp.samples) == ["nuts", "gibbs"]
    assert cmp.usable == {"nuts": False, "gibbs": True}  # one divergence fails the gate
    assert not cmp.verdict().nuts_usable.any() and cmp.verdict().gibbs_usable.all()
    asked.clear()
    sparsebayes.compare(cmp.estimator, X, y, samplers=("gibbs",), num_samples=5, prior_draws=10)
    assert asked == [("gibbs", None)]
    # the Laplace hierarchy's own conditionals (Park & Casella's scale mixture): both
    assert default_samplers(AdaptiveSparseRegressor(prior="laplace")) == ("nuts", "gibbs")
    assert default_samplers(AdaptiveSparseRegressor(prior="jeffreys")) == ("nuts",)
    assert default_samplers(BayesianLassoRegressor()) == ("nuts", "gibbs")
    # a fixed noise variance leaves the horseshoe without its Gibbs sampler: NUTS alone
    assert default_samplers(AdaptiveSparseRegressor(prior="horseshoe", noise_var=0.5)) == ("nuts",)


@pytest.mark.slow
def test_the_horseshoe_default_compare_with_few_draws():
    """The default compare of a horseshoe fit on standardized real data (diabetes, 100 rows): collapsed
    NUTS at the declared target acceptance, then Gibbs; each part passes the gate or is marked unusable."""
    from sparsebayes.comparisons.sampler_health import failed_checks
    X, y = _diabetes_standardized(100)
    cmp = sparsebayes.compare(AdaptiveSparseRegressor(prior="horseshoe"), X, y, prior_draws=200,
                              **{**SAMPLING, "num_warmup": 100, "num_samples": 100})
    assert list(cmp.samples) == ["nuts", "gibbs"] and cmp.idata.attrs["sampler"] == "nuts"
    nuts = cmp.samples["nuts"].posterior.attrs
    assert nuts["inference"] == "nuts-collapsed"
    assert nuts["target_accept_prob"] == HorseshoePrior.nuts_settings["target_accept_prob"]
    for s in ("nuts", "gibbs"):
        diag = cmp.diagnostics()[s]
        assert cmp.usable[s] == diag["usable"] == (not failed_checks(diag))
        assert cmp.verdict()[f"{s}_usable"].all() == cmp.usable[s]


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["boston", "diabetes"])
def test_the_horseshoe_default_passes_its_gate_on_real_data(dataset):
    """At compare's default counts (4 chains × 1,000 draws) on standardized real data both default
    samplers of the horseshoe regressor (collapsed NUTS, Gibbs) pass every check, and their posterior
    medians agree within a tenth of a posterior sd."""
    if dataset == "boston":
        from sparsebayes.comparisons import datasets
        d = datasets.boston()
        X, y = (d.X - d.X.mean(0)) / d.X.std(0), (d.y - d.y.mean()) / d.y.std()
    else:
        X, y = _diabetes_standardized()
    cmp = sparsebayes.compare(AdaptiveSparseRegressor(prior="horseshoe"), X, y, progress_bar=False)
    assert cmp.usable == {"nuts": True, "gibbs": True}, cmp.diagnostics()
    s = cmp.summary()
    sd = np.std(cmp._beta("gibbs"), axis=0)
    assert np.all(np.abs(s.nuts_median - s.gibbs_median) < 0.1 * sd)
