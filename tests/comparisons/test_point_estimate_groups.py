"""The point estimate the pymc-extras way: ``fit`` (mean vector and covariance of the estimator's own
approximation) and ``optimizer_result`` (objective, iterations, convergence), written to NetCDF and read
back; the report cites the approximation's measured coverage."""
import warnings

import numpy as np
import pytest
from sparsebayes.comparisons.approximation_check import (
    coverage_line,
    estimator_check,
    fit_group,
    optimizer_result_group,
    point_estimate_groups,
)
from sparsebayes.inference.posterior import arviz_compat as compat


def _data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X @ np.array([1.5, 0.0, -1.0, 0.0]) + rng.normal(size=n)


def _fitted(make, binary=False):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make().fit(X, (y > 0).astype(int) if binary else y)


def _rows(est):
    return [str(b) for b in est.to_inference_data().posterior["beta"].coords["basis"].values]


@pytest.mark.parametrize("name, kwargs, binary", [
    ("AdaptiveSparseRegressor", {"prior": "laplace"}, False),
    ("AdaptiveSparseRegressor", {"prior": "jeffreys"}, False),
    ("SparseProbitClassifier", {"prior": "laplace"}, True),
    ("BLSRegressor", {}, False),
    ("RVMRegressor", {}, False),
])
def test_fit_is_the_mean_and_covariance_of_the_estimators_own_draws(name, kwargs, binary):
    """Oracle: the estimator's own ``to_inference_data(draws=…)`` (drawn by an eigendecomposition of its
    covariance): their mean and covariance match ``fit`` within Monte Carlo error; the mean is the point
    estimate; a pruned weight is a point mass (zero row and column)."""
    from sparsebayes import inference
    est = _fitted(lambda: getattr(inference, name)(**kwargs), binary)
    rows = _rows(est)
    ds = fit_group(est, rows)
    assert ds["mean_vector"].dims == ("rows",) and ds["covariance_matrix"].dims == ("rows", "columns")
    assert list(ds["rows"].values) == rows == list(ds["columns"].values)
    point = np.ravel(est.to_inference_data().posterior["beta"].values)
    np.testing.assert_allclose(ds["mean_vector"].values, point, atol=1e-12)
    S = 40_000
    draws = est.to_inference_data(draws=S, seed=3).posterior["beta"].values.reshape(S, -1)
    cov = ds["covariance_matrix"].values
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_array_less(np.abs(draws.mean(0) - point), 5 * sd / np.sqrt(S) + 1e-12)
    emp = np.cov(draws.T)
    # sample covariance: sd of each entry ≤ sd_i sd_j √(2/S)
    np.testing.assert_array_less(np.abs(emp - cov), 5 * np.outer(sd, sd) * np.sqrt(2.0 / S) + 1e-15)
    zero = point == 0
    assert np.all(cov[zero] == 0) and np.all(cov[:, zero] == 0) and ds.attrs["active"] == int((~zero).sum())
    assert ds.attrs["inference"] == est.to_inference_data(draws=2).posterior.attrs["inference"]


def test_optimizer_result_reads_the_estimators_own_record():
    from sparsebayes.inference import AdaptiveSparseRegressor, BayesianLassoRegressor, BLSRegressor
    bls = _fitted(BLSRegressor)
    ds = optimizer_result_group(bls, "bls-typeii")
    assert float(ds["fun"]) == bls.objective_ and int(ds["nit"]) == bls.n_iter_
    assert bool(ds["success"]) == bls.converged_ and str(ds["method"].values) == "bls-typeii"
    em = _fitted(lambda: AdaptiveSparseRegressor(prior="laplace"))
    ds = optimizer_result_group(em)
    assert float(ds["fun"]) == em.objective_ and "success" not in ds  # EM records no converged_
    assert optimizer_result_group(BayesianLassoRegressor()) is None  # a sampler: no optimizer
    assert fit_group(BayesianLassoRegressor(), ["a"]) is None


def test_the_groups_survive_netcdf_on_this_arviz(tmp_path):
    """Written beside a posterior with the package's own helpers and read back: same values, dims, coords,
    attrs (ArviZ 0.x here: groups outside its schema; 1.x: DataTree nodes)."""
    from sparsebayes.inference import BLSRegressor
    bls = _fitted(BLSRegressor)
    rows = _rows(bls)
    groups = point_estimate_groups(bls, rows, "bls-typeii")
    assert set(groups) == {"fit", "optimizer_result"}
    idata = compat.from_dict({"posterior": {"beta": np.zeros((1, 2, len(rows)))}},
                             coords={"basis": rows}, dims={"beta": ["basis"]})
    for name, ds in groups.items():
        compat.set_group(idata, name, ds)
    idata.to_netcdf(str(tmp_path / "d.nc"))
    back = compat.from_netcdf(tmp_path / "d.nc")
    for name, ds in groups.items():
        got = compat.dataset(back, name)
        for var in ds.data_vars:
            np.testing.assert_array_equal(got[var].values, ds[var].values)
            assert got[var].dims == ds[var].dims
        assert {k: got.attrs[k] for k in ds.attrs} == ds.attrs
    assert [str(r) for r in compat.dataset(back, "fit")["rows"].values] == rows


def test_the_approximation_line_cites_its_measured_coverage():
    """The EM Gaussian conditional of the Laplace hierarchy was measured (docs/approximation_coverage.md):
    the check's line cites the numbers of ``measured_coverage``; the horseshoe's cites its own."""
    from sparsebayes.inference import AdaptiveSparseRegressor
    from sparsebayes.inference.posterior.approximation_coverage import MEASURED
    X, y = _data()
    for prior, case in (("laplace", "em-laplace"), ("horseshoe", "em-horseshoe")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = AdaptiveSparseRegressor(prior=prior).fit(X, y)
        H = est.feature_map_.transform(X)
        out = estimator_check(est, H, y, num_draws=200)
        assert case in out["coverage"] and out["coverage"][case] == MEASURED[case]
        c50, c90 = MEASURED[case]
        assert f"{case}: 50 % intervals cover {c50:.2f}, 90 % intervals {c90:.2f}" in out["line"]
    assert "0.50 and 0.90" in coverage_line({"x": (0.1, 0.2)})
