"""The ArviZ 0.x / 1.x layer (:mod:`sparsebayes.inference.posterior.arviz_compat`) on whichever ArviZ is installed:
groups built, read, replaced and renamed alike, and the diagnostics against formulas written out here."""
import numpy as np
import pytest
import scipy.stats
import xarray as xr

from sparsebayes.inference.posterior import arviz_compat as compat


def _fit(seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    beta = rng.normal(size=(4, 300, 3)) + shift * np.arange(4)[:, None, None]  # chains apart by `shift`
    return compat.from_dict({"posterior": {"beta": beta, "s": rng.gamma(2.0, size=(4, 300))},
                             "observed_data": {"y": rng.normal(size=7)},
                             "log_likelihood": {"y": 0.05 * rng.normal(size=(4, 300, 7)) - 1.0},
                             "sample_stats": {"energy": rng.normal(size=(4, 300)).cumsum(axis=1) * 0.1
                                              + rng.normal(size=(4, 300))}},
                            coords={"basis": ["a", "b", "c"]}, dims={"beta": ["basis"], "y": ["obs"]})


def test_groups_are_built_read_and_replaced_alike():
    idata = _fit()
    assert isinstance(idata, compat.idata_type())
    assert sorted(compat.groups(idata)) == ["log_likelihood", "observed_data", "posterior", "sample_stats"]
    post = compat.dataset(idata, "posterior")
    assert isinstance(post, xr.Dataset) and post["beta"].dims == ("chain", "draw", "basis")
    assert list(post["beta"].basis.values) == ["a", "b", "c"] and post["beta"].dtype == np.float64
    assert compat.dataset(idata, "observed_data")["y"].dims == ("obs",)
    extra = xr.Dataset({"z": (("chain", "draw"), np.ones((4, 300)))}, attrs={"note": "ours"})
    assert compat.set_group(idata, "posterior_other", extra) is idata
    assert compat.has_group(idata, "posterior_other") and idata.posterior_other.attrs["note"] == "ours"
    compat.set_group(idata, "posterior", post.assign(t=post["s"] * 2.0))  # replaced, not added
    assert compat.groups(idata).count("posterior") == 1
    np.testing.assert_array_equal(idata.posterior["t"].values, 2.0 * post["s"].values)


def test_predictions_take_the_dims_given():
    """``predictions`` is named by ``dims`` as every other group (ArviZ 1.x reads it from ``pred_dims``)."""
    values = {"log_lik": np.zeros((2, 3, 4)), "prob": np.full((2, 3, 4, 3), 1.0 / 3.0)}
    group = compat.group_from_dict("predictions", values, dims={"log_lik": ["test_obs"],
                                                                "prob": ["test_obs", "class_code"]})
    assert group["log_lik"].dims == ("chain", "draw", "test_obs")
    assert group["prob"].dims == ("chain", "draw", "test_obs", "class_code")


def test_copy_is_deep_and_rename_reaches_every_group():
    idata = _fit()
    twin = compat.copy(idata)
    twin.posterior.attrs["touched"] = 1
    compat.set_group(twin, "extra", xr.Dataset({"q": ("obs", np.zeros(7))}))
    assert "touched" not in idata.posterior.attrs and not compat.has_group(idata, "extra")
    compat.rename_dims(twin, {"obs": "row", "basis": "weight"})
    assert twin.observed_data["y"].dims == ("row",) and twin.log_likelihood["y"].dims == ("chain", "draw", "row")
    assert twin.posterior["beta"].dims == ("chain", "draw", "weight")
    assert list(twin.posterior["weight"].values) == ["a", "b", "c"]
    assert idata.posterior["beta"].dims == ("chain", "draw", "basis")  # the original kept its names


def _rhat_oracle(x):
    """Rank-normalized split R-hat of draws ``x`` (chains, draws), Vehtari et al. (2021) eqs. 3-4 and
    the folded variant: the larger of the two."""
    def split(a):
        half = a.shape[1] // 2
        return np.concatenate([a[:, :half], a[:, a.shape[1] - half:]], axis=0)

    def rank_normal(a):
        ranks = scipy.stats.rankdata(a, method="average").reshape(a.shape)
        return scipy.stats.norm.ppf((ranks - 0.375) / (a.size + 0.25))

    def classic(a):
        n = a.shape[1]
        within = np.mean(np.var(a, axis=1, ddof=1))
        between = n * np.var(np.mean(a, axis=1), ddof=1)
        return np.sqrt(((n - 1) / n * within + between / n) / within)

    s = split(x)
    return max(classic(rank_normal(s)), classic(rank_normal(np.abs(s - np.median(s)))))


@pytest.mark.parametrize("shift", [0.0, 0.3])
def test_rhat_is_the_rank_normalized_split_rhat(shift):
    idata = _fit(seed=1, shift=shift)
    got = compat.rhat(idata, var_names=["beta"])
    assert isinstance(got, xr.Dataset) and got["beta"].dims == ("basis",)
    beta = idata.posterior["beta"].values
    expected = [_rhat_oracle(beta[..., j]) for j in range(3)]
    np.testing.assert_allclose(got["beta"].values, expected, rtol=1e-10)
    assert (min(expected) > 1.05) == (shift > 0)  # the oracle sees chains apart


def test_bfmi_is_betancourts_energy_statistic():
    idata = _fit(seed=2)
    energy = idata.sample_stats["energy"].values
    # Betancourt (2016) eq. 3: the squared energy steps over the energy's squared deviations, both summed
    expected = np.sum(np.diff(energy, axis=1) ** 2, axis=1) / np.sum((energy - energy.mean(axis=1, keepdims=True)) ** 2,
                                                                    axis=1)
    np.testing.assert_allclose(compat.bfmi(idata), expected, rtol=1e-12)


def test_summary_has_one_layout_whatever_the_version():
    idata = _fit(seed=3)
    table = compat.summary(idata, var_names=["beta"])
    assert list(table.columns) == list(compat.SUMMARY_COLUMNS)
    assert list(table.index) == ["beta[a]", "beta[b]", "beta[c]"]
    draws = idata.posterior["beta"].values.reshape(-1, 3)
    np.testing.assert_allclose(table["mean"], draws.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(table["sd"], draws.std(axis=0, ddof=1), rtol=1e-3)
    for j in range(3):  # the 94 % HDI: the narrowest interval holding that share of the sorted draws
        x = np.sort(draws[:, j])
        k = int(np.floor(0.94 * x.size))
        lo = int(np.argmin(x[k:] - x[:x.size - k]))
        assert abs(table["hdi_3%"].iloc[j] - x[lo]) <= x[lo + 1] - x[lo] + 1e-12
        assert abs(table["hdi_97%"].iloc[j] - x[lo + k]) <= x[min(lo + k + 1, x.size - 1)] - x[lo + k] + 1e-12
    np.testing.assert_allclose(table["r_hat"], compat.rhat(idata, var_names=["beta"])["beta"].values, rtol=1e-12)
    np.testing.assert_allclose(table["ess_bulk"], compat.ess(idata, var_names=["beta"])["beta"].values, rtol=1e-12)
    diag = compat.summary(idata, kind="diagnostics")
    assert list(diag.columns) == list(compat.SUMMARY_COLUMNS[4:]) and "s" in diag.index


def test_netcdf_and_loo_round_trip(tmp_path):
    idata = _fit(seed=4)
    compat.set_group(idata, "point_estimate", xr.Dataset({"beta": (("chain", "draw", "basis"), np.zeros((1, 1, 3)))},
                                                         coords={"basis": ["a", "b", "c"]},
                                                         attrs={"point_estimate": 1}))
    idata.attrs["model"] = "test"
    idata.to_netcdf(str(tmp_path / "d.nc"))
    back = compat.from_netcdf(tmp_path / "d.nc")
    assert isinstance(back, compat.idata_type()) and set(compat.groups(back)) == set(compat.groups(idata))
    assert back.attrs["model"] == "test" and int(back.point_estimate.attrs["point_estimate"]) == 1
    np.testing.assert_array_equal(back.posterior["beta"].values, idata.posterior["beta"].values)
    # PSIS-LOO's elpd: with pointwise terms this steady, the log predictive density less its
    # effective number of parameters, the summed variances (Vehtari, Gelman & Gabry 2017, eq. 24 and 4.1)
    ll = idata.log_likelihood["y"].values.reshape(-1, 7)
    lpd = float(np.sum(scipy.special.logsumexp(ll, axis=0) - np.log(ll.shape[0])))
    assert abs(compat.elpd_loo(idata) - (lpd - np.sum(np.var(ll, axis=0, ddof=1)))) < 2e-3
