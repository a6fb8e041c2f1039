"""``sparsebayes.compare``'s ``idata`` carries every sampler's groups, under whichever ArviZ is installed
(0.x: ``InferenceData``, 1.x: ``xarray.DataTree``): the first sampler's under ArviZ's own names
(``posterior``, ``sample_stats``, ...), each further sampler's under ``<group>_<sampler>``
(``posterior_gibbs``, ``sample_stats_gibbs``, ...), each the sampler's own values, none overwritten.

The fast test replaces the samplers by a stand-in that returns distinct, known draws per sampler, so
that it checks how ``compare`` assembles ``idata`` without compiling a sampler; the slow one runs
NUTS and Gibbs and reads the groups back from ``draws.nc``."""
import numpy as np
import pandas as pd
import pytest

import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor, BayesianLassoRegressor
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior import twin_posterior

COLUMNS = ["age", "dose", "weight"]
SAMPLER_GROUPS = ("posterior", "sample_stats", "log_likelihood", "observed_data", "posterior_predictive")


def _table(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, len(COLUMNS))), columns=COLUMNS)
    return X, 1.5 * X["age"] - 0.8 * X["dose"] + rng.normal(size=n)


def _fake_draws(offsets):
    """A stand-in for ``sample_posterior``: every array of sampler ``s`` filled from ``offsets[s]``, so
    that each group tells which sampler it came from."""
    def sample(est, X, y, sampler="nuts", *, num_chains=2, num_samples=5, **_):
        names = list(est.feature_map_.get_feature_names_out(COLUMNS))
        base = offsets[sampler]
        n, c, d = len(y), num_chains, num_samples
        idata = compat.from_dict({
            "posterior": {"beta": base + np.arange(c * d * len(names), dtype=np.float64).reshape(c, d, -1),
                          "noise_var": np.full((c, d), 1.0 + base)},
            "sample_stats": {"lp": np.full((c, d), -base), "diverging": np.zeros((c, d), dtype=bool)},
            "log_likelihood": {"y": np.full((c, d, n), -1.0 - base)},
            "observed_data": {"y": np.asarray(y, dtype=np.float64) + base},
            "posterior_predictive": {"y": np.full((c, d, n), 2.0 + base)},
        }, coords={"basis": names}, dims={"beta": ["basis"], "y": ["obs"]})
        idata.attrs.update(model="fake", sampler=sampler)
        return idata
    return sample


@pytest.fixture(scope="module")
def faked():
    X, y = _table()
    est = AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(twin_posterior, "sample_posterior", _fake_draws({"nuts": 0.0, "gibbs": 100.0, "other": 200.0}))
        cmp = sparsebayes.compare(est, X, y, samplers=("nuts", "gibbs", "other"), num_warmup=5, num_samples=5,
                                  num_chains=2, prior_draws=10, progress_bar=False)
    return cmp


def _group_name(group, sampler, first):
    return group if sampler == first else f"{group}_{sampler}"


def test_arviz1_every_samplers_groups_reach_idata(faked):
    cmp = faked
    first = next(iter(cmp.samples))
    present = set(compat.groups(cmp.idata))
    for sampler, own in cmp.samples.items():
        for group in SAMPLER_GROUPS:
            name = _group_name(group, sampler, first)
            assert name in present, f"{sampler}'s {group} is not in cmp.idata (as {name}); groups: {sorted(present)}"
            got, want = compat.dataset(cmp.idata, name), compat.dataset(own, group)
            assert set(got.data_vars) == set(want.data_vars), name
            for var in want.data_vars:
                assert got[var].dims == want[var].dims, (name, var)
                np.testing.assert_array_equal(got[var].values, want[var].values, err_msg=f"{name}.{var}")
    assert "point_estimate" in present


def test_arviz1_first_samplers_groups_are_arviz_own_and_not_overwritten(faked):
    """ArviZ's functions read the unsuffixed groups: they must stay the first sampler's."""
    cmp = faked
    assert cmp.idata.attrs["sampler"] == "nuts"
    np.testing.assert_array_equal(cmp.idata.log_likelihood["y"].values, -1.0)
    np.testing.assert_array_equal(cmp.idata.posterior_predictive["y"].values, 2.0)
    np.testing.assert_array_equal(compat.dataset(cmp.idata, "sample_stats_gibbs")["lp"].values, -100.0)
    np.testing.assert_array_equal(compat.dataset(cmp.idata, "log_likelihood_other")["y"].values, -201.0)
    assert not [g for g in compat.groups(cmp.idata) if g.endswith("_nuts")]  # the first keeps ArviZ's names


@pytest.mark.slow
def test_arviz1_nuts_and_gibbs_groups_in_saved_draws(tmp_path):
    """The real samplers: the Bayesian Lasso by NUTS and Gibbs, ``draws.nc`` read back."""
    X, y = _table(60, seed=1)
    est = BayesianLassoRegressor(num_warmup=100, num_samples=100, num_chains=1)
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts", "gibbs"), num_warmup=100, num_samples=100,
                              num_chains=2, seed=0, progress_bar=False)
    back = compat.from_netcdf(cmp.save(tmp_path) / "draws.nc")
    for sampler, own in cmp.samples.items():
        for group in SAMPLER_GROUPS:
            if not compat.has_group(own, group):
                continue
            got, want = compat.dataset(back, _group_name(group, sampler, "nuts")), compat.dataset(own, group)
            for var in want.data_vars:
                np.testing.assert_array_equal(got[var].values, want[var].values, err_msg=f"{sampler} {group}.{var}")
    assert compat.has_group(back, "sample_stats_gibbs") and compat.has_group(back, "log_likelihood_gibbs")
