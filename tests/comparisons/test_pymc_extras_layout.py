"""The point estimate the pymc-extras way and everything in one NetCDF, under whichever ArviZ is installed
(0.x: ``InferenceData``; 1.x: ``xarray.DataTree``; ``.ci/arviz1`` runs this file under ArviZ 1.x).

``cmp.point_idata`` is a MAP as pymc-extras returns one (``find_MAP`` / ``fit_laplace``): the optimum as a
one-chain, one-draw ``posterior``, the Gaussian approximation's ``fit`` (``mean_vector``,
``covariance_matrix`` on ``rows`` × ``columns``) and the optimizer's ``optimizer_result`` (``fun``,
``nit``, ``method``). Oracles: the fitted estimator's own attributes (``coef_``, ``objective_``,
``n_iter_``) and its own ``to_inference_data()``; for the NetCDF round trip, the object before it was
written, group by group (values, dims, coords, attrs). The samplers are replaced by the stand-in of
``test_arviz1_compare_groups.py`` (distinct known draws per sampler), so that nothing compiles."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior import twin_posterior
from sparsebayes.inference.posterior.idata import PYMC_EXTRAS_GROUPS, point_estimate_posterior

_spec = importlib.util.spec_from_file_location("_compare_groups_helpers",
                                               Path(__file__).with_name("test_arviz1_compare_groups.py"))
_helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helpers)


@pytest.fixture(scope="module")
def faked():
    X, y = _helpers._table(n=60, seed=2)
    est = AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(twin_posterior, "sample_posterior", _helpers._fake_draws({"nuts": 0.0, "gibbs": 100.0}))
        return sparsebayes.compare(est, X, y, samplers=("nuts", "gibbs"), num_warmup=5, num_samples=5,
                                   num_chains=2, prior_draws=10, progress_bar=False)


def test_point_idata_is_a_one_draw_posterior_with_fit_and_optimizer_result(faked):
    cmp, est = faked, faked.estimator
    point = cmp.point_idata
    assert isinstance(point, compat.idata_type())
    assert set(compat.groups(point)) == {"posterior", *PYMC_EXTRAS_GROUPS}
    post = compat.dataset(point, "posterior")
    assert dict(post["beta"].sizes) == {"chain": 1, "draw": 1, "basis": len(cmp.names)}
    own_post = est.to_inference_data().posterior  # the estimator's own record of its point estimate
    own, label = own_post["beta"], own_post.attrs["inference"]
    np.testing.assert_array_equal(post["beta"].values, own.values)
    assert [str(b) for b in post["beta"]["basis"].values] == [str(b) for b in own["basis"].values] == cmp.names
    assert int(point.attrs["point_estimate"]) == 1 and point.attrs["inference"] == label

    fit = compat.dataset(point, "fit")
    assert fit["mean_vector"].dims == ("rows",) and fit["covariance_matrix"].dims == ("rows", "columns")
    assert list(fit["rows"].values) == cmp.names == list(fit["columns"].values)
    np.testing.assert_array_equal(fit["mean_vector"].values, own.values.reshape(-1))
    cov = fit["covariance_matrix"].values
    np.testing.assert_array_equal(cov, cov.T)
    assert np.linalg.eigvalsh(cov).min() >= -1e-12 * max(1.0, np.abs(cov).max())
    pruned = own.values.reshape(-1) == 0
    assert np.all(cov[pruned] == 0) and np.all(np.diag(cov)[~pruned] > 0)

    opt = compat.dataset(point, "optimizer_result")
    assert float(opt["fun"]) == est.objective_ and int(opt["nit"]) == est.n_iter_
    assert str(opt["method"].values) == label


def test_point_idata_is_a_copy(faked):
    cmp = faked
    point = cmp.point_idata
    compat.dataset(point, "fit")["mean_vector"].values[:] = 7.0  # a view of the copy's array
    compat.set_group(point, "posterior", compat.dataset(point, "posterior") * 0.0)
    np.testing.assert_array_equal(compat.dataset(cmp.idata, "fit")["mean_vector"].values, cmp.point)
    assert np.any(cmp.point != 0)


def test_point_estimate_posterior_names_the_missing_group(faked):
    with pytest.raises(KeyError, match=r"no group 'map'.*point_estimate"):
        point_estimate_posterior(faked.idata, "map")
    bare = compat.from_datasets({"point_estimate": compat.dataset(faked.idata, "point_estimate")})
    assert compat.groups(point_estimate_posterior(bare)) == ["posterior"]  # no fit, no optimizer_result: none


def _assert_same_group(got, want, name):
    assert set(got.data_vars) == set(want.data_vars), name
    for var in want.data_vars:
        assert got[var].dims == want[var].dims, (name, var)
        np.testing.assert_array_equal(got[var].values, want[var].values, err_msg=f"{name}.{var}")
    for dim, coord in want.coords.items():
        np.testing.assert_array_equal(got[dim].values, coord.values, err_msg=f"{name} coord {dim}")
    assert set(got.attrs) == set(want.attrs), name
    for key, value in want.attrs.items():
        np.testing.assert_array_equal(np.asarray(got.attrs[key]), np.asarray(value), err_msg=f"{name} attr {key}")


def test_everything_reloads_from_one_netcdf(faked, tmp_path):
    """Every group (each sampler's, the point estimate, ``fit``, ``optimizer_result``) comes back from one
    file as it went in; the reloaded object gives the same pymc-extras view."""
    cmp = faked
    names = set(compat.groups(cmp.idata))
    assert {"posterior", "posterior_gibbs", "sample_stats_gibbs", "point_estimate", *PYMC_EXTRAS_GROUPS} <= names
    cmp.idata.to_netcdf(str(tmp_path / "draws.nc"))
    back = compat.from_netcdf(tmp_path / "draws.nc")
    assert isinstance(back, compat.idata_type()) and set(compat.groups(back)) == names
    for group in names:
        _assert_same_group(compat.dataset(back, group), compat.dataset(cmp.idata, group), group)
    assert {k: back.attrs[k] for k in cmp.idata.attrs} == dict(cmp.idata.attrs)
    again, point = point_estimate_posterior(back), cmp.point_idata
    for group in compat.groups(point):
        _assert_same_group(compat.dataset(again, group), compat.dataset(point, group), group)


def test_the_pymc_extras_view_reloads_from_its_own_netcdf(faked, tmp_path):
    point = faked.point_idata
    point.to_netcdf(str(tmp_path / "map.nc"))
    back = compat.from_netcdf(tmp_path / "map.nc")
    assert set(compat.groups(back)) == {"posterior", *PYMC_EXTRAS_GROUPS}
    for group in compat.groups(point):
        _assert_same_group(compat.dataset(back, group), compat.dataset(point, group), group)
    assert int(back.attrs["point_estimate"]) == 1
