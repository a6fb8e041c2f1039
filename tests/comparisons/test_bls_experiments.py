import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.comparisons.registry import registry, run_experiment
from sparsebayes.comparisons.synthetic_bls import SIM2, SIM3, bump, bump_function, grouped_design


def test_bls_ids_registered():
    ids = set(registry())
    for exp_id in ("bls-table1-sinc", "bls-table2-bump", "bls-table3-sim1", "bls-table5-sim2", "bls-table5-sim3",
                   "bls-table6-diabetes", "bls-table7-diabetes"):
        assert exp_id in ids


def test_generators():
    x, y = bump(120, snr=2, seed=0)
    assert x.shape == (120, 1) and abs(np.std(bump_function(np.linspace(0, 1, 4000))) - 1) < 0.01
    # SNR as a variance ratio by default (σ = 1/√SNR), Donoho & Johnstone's sd ratio on request
    x, y = bump(40_000, snr=4, seed=1)
    assert np.std(y - bump_function(x[:, 0])) == pytest.approx(0.5, rel=0.02)
    x, y = bump(40_000, snr=4, seed=1, snr_as="sd")
    assert np.std(y - bump_function(x[:, 0])) == pytest.approx(0.25, rel=0.02)
    with pytest.raises(ValueError, match="snr_as"):
        bump(10, snr_as="db")
    X = grouped_design(500, SIM2["group_sizes"], SIM2["n_noise"], seed=1)
    assert X.shape == (500, 40)
    c = np.corrcoef(X.T)
    assert c[0, 1] > 0.95 and abs(c[0, 20]) < 0.2
    assert len(SIM3["beta"]) == 60


@pytest.mark.slow
def test_sim2_smoke(tmp_path):
    from sparsebayes.comparisons.experiments import bls

    res = bls.table5_sim2(reps=2, seed=0, out=tmp_path, num_warmup=50, num_samples=100)
    methods = {r["method"] for r in res.rows}
    assert methods == {"bls", "bls-variances-fixed", "bayesian-lasso", "lasso-cv"}
    bl = next(r for r in res.rows if r["method"] == "bayesian-lasso")
    assert bl["n_nonzero"] == 40


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_linear_tables_report_each_bls_fits_convergence_and_noise():
    """The BLS rows' ``converged`` and ``sigma_hat`` are those of the estimators fitted alone
    (Simulation 3, where 004's eq. 18 BLS stops at max_iter and its σ̂ is far above σ = 1)."""
    from sparsebayes.comparisons.experiments import bls
    from sparsebayes.comparisons.synthetic_bls import grouped_regression
    from sparsebayes.inference import BLSRegressor

    spec = {k: v for k, v in SIM3.items() if k != "beta"}
    rng = np.random.default_rng(0)
    data = [grouped_regression(50, **spec, beta=SIM3["beta"], seed=rng) for _ in range(2)]
    coefs, info = bls._fit_bls_variants(data)
    for name, kw in bls.LINEAR_BLS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            alone = [BLSRegressor(max_iter=2000, **kw).fit(X, y) for X, y in data]
        np.testing.assert_array_equal(np.stack(coefs[name]), np.stack([e.coef_ for e in alone]))
        assert info[name]["converged"] == [e.converged_ for e in alone]
        assert info[name]["sigma_hat"] == pytest.approx([np.sqrt(e.noise_var_) for e in alone], rel=1e-12)
    assert min(info["bls"]["sigma_hat"]) > 3 and max(info["bls-variances-fixed"]["sigma_hat"]) < 1
    rows = bls._linear_rows({name: (np.stack(coefs[name]), np.stack(coefs[name]) != 0, np.zeros(2),
                                    {k: float(np.mean(v)) for k, v in info[name].items()}) for name in coefs}, {})
    for row in rows:
        assert row["converged"] == np.mean(info[row["method"]]["converged"])
        assert row["sigma_hat"] == pytest.approx(np.mean(info[row["method"]]["sigma_hat"]))


@pytest.mark.slow
def test_table1_smoke(tmp_path):
    payload, res = run_experiment("bls-table1-sinc", reps=2, out=tmp_path)
    assert json.loads((tmp_path / "bls-table1-sinc.json").read_text())["rows"]
    assert len(payload["rows"]) == 20 and res.plots


def test_kernel_parameter_cv_picks_the_least_validation_error():
    from sparsebayes.comparisons.experiments.bls import KERNEL_METHODS, choose_r_by_cv
    from sparsebayes.comparisons.synthetic import sinc

    rng = np.random.default_rng(0)
    pilot = [sinc(50, sigma=0.1, seed=rng) for _ in range(2)]
    grid = np.array([0.02, 0.3])  # r = 0.02: kernels almost flat over [-10, 10], no fit of sinc
    r, mse = choose_r_by_cv(pilot, grid, KERNEL_METHODS["rvm"])
    assert mse.shape == (2,) and r == 0.3
    assert mse[0] > 3 * mse[1]


@pytest.mark.slow
def test_table2_smoke(tmp_path):
    from sparsebayes.comparisons.experiments import bls

    res = bls.table2_bump(reps=3, seed=0, out=tmp_path, n_pilot=2)
    assert len(res.rows) == 6 * 8  # 5 CV-chosen methods and 3 at the paper's widths, 6 SNR levels
    fixed = [r for r in res.rows if r["method"] == "rvm@r=100"]
    assert len(fixed) == 6 and all(r["r"] == 100.0 and r["rmse"] <= r["rmse_grid"] for r in fixed)
    rvm = {r["snr"]: r for r in res.rows if r["method"] == "rvm"}
    for r in res.rows:  # paired differences from the RVM on the same data sets, with their SE
        for metric in ("rmse", "rmse_grid"):  # the table's RMSE (at the samples) and on the grid
            np.testing.assert_allclose(r[f"{metric}_vs_rvm"], r[metric] - rvm[r["snr"]][metric], atol=1e-12)
            assert r[f"{metric}_vs_rvm_se"] >= 0 and (r[f"{metric}_vs_rvm_se"] == 0) == (r["method"] == "rvm")


# ----------------------------------------------------------------------------- Done-when (defaults)


def _default(exp_id, tmp_path):
    payload, _ = run_experiment(exp_id, seed=0, out=tmp_path)
    return payload


@pytest.mark.slow
def test_done_when_table1_sinc(tmp_path):
    """σ̂ of BLS and the RVM within 10 % of σ for σ ≥ 0.1; every method's RMSE within 25 % of 004's."""
    out = _default("bls-table1-sinc", tmp_path)
    ours = {(r["method"], r["sigma"]): r for r in out["rows"]}
    for p in out["paper"]:
        r = ours[(p["method"], p["sigma"])]
        assert abs(r["rmse"] - p["rmse"]) <= 0.25 * p["rmse"], (p, r["rmse"])
        if p["method"] in ("bls", "rvm") and p["sigma"] >= 0.1:
            assert abs(r["sigma_hat"] - p["sigma"]) <= 0.10 * p["sigma"], (p, r["sigma_hat"])


@pytest.mark.slow
def test_done_when_table2_bump(tmp_path):
    """BLS's RMSE at or below the RVM's at SNR ≤ 3 (each at its CV-chosen kernel parameter)."""
    out = _default("bls-table2-bump", tmp_path)
    rmse = {(r["method"], r["snr"]): r["rmse"] for r in out["rows"]}
    for snr in (1, 2, 3):
        assert rmse[("bls", snr)] <= rmse[("rvm", snr)], (snr, rmse[("bls", snr)], rmse[("rvm", snr)])


@pytest.mark.slow
def test_done_when_table3_sim1(tmp_path):
    """BLS selects fewer coefficients than the Lasso at each σ; the Bayesian Lasso keeps all 8."""
    out = _default("bls-table3-sim1", tmp_path)
    rows = {(r["method"], r["sigma"]): r for r in out["rows"]}
    for sigma in (1, 3, 5):
        assert rows[("bls", sigma)]["n_nonzero"] < rows[("lasso-cv", sigma)]["n_nonzero"]
        assert rows[("bayesian-lasso", sigma)]["n_nonzero"] == 8


@pytest.mark.slow
def test_done_when_table6_diabetes(tmp_path):
    """Gibbs medians within 10 % of Park & Casella's for sex, bmi, map, hdl, ltg; BLS's zeros as 004's."""
    out = _default("bls-table6-diabetes", tmp_path)
    ours = {r["method"]: r for r in out["rows"]}
    paper = {p["method"]: p for p in out["paper"]}
    for name in ("sex", "bmi", "map", "hdl", "ltg"):
        p = paper["bayesian-lasso"][name]
        assert abs(ours["bayesian-lasso"][name] - p) <= 0.10 * abs(p), name
    zeros = {k for k, v in ours["bls"].items() if k in paper["bls"] and k != "method" and v == 0}
    assert zeros == {"age", "ldl", "tch"}


@pytest.mark.slow
def test_done_when_table7_diabetes(tmp_path):
    """Mean test RMSE over the 100 splits within 1.0 of 55.1 for BLS, the Bayesian Lasso and the Lasso."""
    out = _default("bls-table7-diabetes", tmp_path)
    for r in out["rows"]:
        assert abs(r["rmse"] - 55.1) <= 1.0, r
