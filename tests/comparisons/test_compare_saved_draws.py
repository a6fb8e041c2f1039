"""What ``Comparison.save`` writes to ``draws.nc``, read back with whichever ArviZ is installed (0.x:
``InferenceData``, 1.x: ``xarray.DataTree``): the weights under one name, dims and coords in the point
estimate's and every sampler's group, and every sampler's held-out predictions, per sampler."""
import numpy as np
import pandas as pd
import pytest

import sparsebayes
from sparsebayes.comparisons.compare_predictive import sampler_scores
from sparsebayes.inference import BayesianLassoRegressor
from sparsebayes.inference.posterior import arviz_compat as compat

COLUMNS = ["age", "dose", "weight"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(90, 3)), columns=COLUMNS)
    y = 1.5 * X["age"] - 0.8 * X["dose"] + rng.normal(size=90)
    est = BayesianLassoRegressor(num_warmup=300, num_samples=600, num_chains=2)  # the fit's own Gibbs run
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts", "gibbs"), test_size=0.25, num_warmup=100,
                              num_samples=100, num_chains=2, seed=0)
    out = cmp.save(tmp_path_factory.mktemp("report"))
    return cmp, compat.from_netcdf(out / "draws.nc")


def test_every_group_comes_back(saved):
    cmp, back = saved
    assert isinstance(back, compat.idata_type())
    assert set(compat.groups(back)) == set(compat.groups(cmp.idata))
    assert {"posterior", "point_estimate", "posterior_gibbs", "predictions", "predictions_gibbs",
            "log_likelihood", "observed_data", "posterior_predictive", "sample_stats"} <= set(compat.groups(back))


def test_beta_has_one_name_dims_and_coords_in_every_part(saved):
    cmp, back = saved
    for group in ("point_estimate", "posterior", "posterior_gibbs"):
        beta = compat.dataset(back, group)["beta"]
        assert beta.dims == ("chain", "draw", "basis"), group
        assert [str(b) for b in beta.basis.values] == COLUMNS == cmp.names, group
        np.testing.assert_array_equal(beta.values, compat.dataset(cmp.idata, group)["beta"].values)
    np.testing.assert_array_equal(compat.dataset(back, "posterior_gibbs")["beta"].values,
                                  cmp.samples["gibbs"].posterior["beta"].values)
    assert int(back.point_estimate.attrs["point_estimate"]) == 1


def test_every_samplers_predictions_are_saved_under_its_name(saved):
    """``predictions`` is the first sampler's, ``predictions_gibbs`` the second's; each is that sampler's
    own (distinct draws), and the held-out scores computed from the file are ``predictive()``'s."""
    cmp, back = saved
    table = cmp.predictive()
    for sampler, group in (("nuts", "predictions"), ("gibbs", "predictions_gibbs")):
        got, own = compat.dataset(back, group), compat.dataset(cmp.samples[sampler], "predictions")
        assert set(got.data_vars) == {"log_lik", "mean"}
        for name in ("log_lik", "mean"):
            assert got[name].dims == ("chain", "draw", "test_obs")
            np.testing.assert_array_equal(got[name].values, own[name].values)
        scores = sampler_scores(got, cmp.y_test)
        for column in ("log_score", "rmse"):
            assert scores[column] == pytest.approx(table.loc[sampler, column], rel=1e-12)
    assert not np.array_equal(back.predictions["log_lik"].values, back.predictions_gibbs["log_lik"].values)


def test_summary_plot_and_diagnostics_run(saved):
    cmp, _ = saved
    table = cmp.summary()
    for s in ("nuts", "gibbs"):
        assert np.all(np.isfinite(table[[f"{s}_r_hat", f"{s}_ess_bulk", f"{s}_ess_tail"]].to_numpy()))
    diag = cmp.diagnostics()
    assert np.isfinite(diag["nuts"]["bfmi_min"]) and np.isnan(diag["gibbs"]["bfmi_min"])
    assert diag["nuts"]["divergences"] >= 0 and np.isfinite(diag["gibbs"]["r_hat_max"])
    assert np.isfinite(compat.elpd_loo(cmp.idata))
    fig = cmp.plot()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == cmp.names
