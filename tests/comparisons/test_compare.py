"""`sparsebayes compare`: one report with the EM estimates over the NUTS posterior."""
import json

import numpy as np
import pytest

from sparsebayes.comparisons.cli import main


def test_compare_writes_report_with_estimates_and_diagnostics(tmp_path, capsys):
    assert main(["compare", "crabs", "--chains", "1", "--warmup", "150", "--draws", "150",
                 "--out", str(tmp_path)]) == 0
    # strict JSON: one chain has no R-hat, written as null, not NaN
    rep = json.loads((tmp_path / "compare-crabs.json").read_text(),
                     parse_constant=lambda c: pytest.fail(f"{c} in the report's JSON"))
    assert rep["diagnostics"]["max_r_hat"] is None
    assert (tmp_path / "compare-crabs.png").stat().st_size > 0
    assert "compare crabs" in (tmp_path / "compare-crabs.md").read_text()
    coefs = [row["coef"] for row in rep["table"]]
    assert coefs == ["bias", "FL", "RW", "CL", "CW", "BD"]
    for row in rep["table"]:
        assert row["hdi_3%"] <= row["mean"] <= row["hdi_97%"]
        assert 0.0 <= row["P(|b|<c)"] <= 1.0
        assert row["P(|b|<c) / prior"] == pytest.approx(row["P(|b|<c)"] / rep["diagnostics"]["prior_mass_in_window"])
    # the prior's mass within c = 0.05 of zero, γ ~ Gamma(1, rate 0.1) integrated out, by Monte Carlo
    gamma = np.random.default_rng(0).exponential(scale=10.0, size=400_000)
    assert rep["diagnostics"]["near_zero_window"] == 0.05
    assert rep["diagnostics"]["prior_mass_in_window"] == pytest.approx(np.mean(1 - np.exp(-np.sqrt(gamma) * 0.05)),
                                                                      rel=5e-3)
    assert set(rep["scores"]) == {"jeffreys-em", "laplace-em", "nuts-posterior-predictive"}
    # crabs' sex is almost linearly separable from the 5 measurements
    assert rep["scores"]["jeffreys-em"]["error_rate"] < 0.15
    assert all(0 < s["log_loss"] < np.log(2) for s in rep["scores"].values())
    diag = rep["diagnostics"]
    assert 0 < diag["compile_seconds"] and 0 < diag["sampler_seconds"]
    assert diag["min_ess_bulk_per_s"] == pytest.approx(diag["min_ess_bulk"] / diag["sampler_seconds"])
    assert diag["warnings"] == [] or all(isinstance(w, str) for w in diag["warnings"])
    assert "held-out scores" in capsys.readouterr().out


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_compare_regression_adds_bls_beside_gibbs_and_nuts(tmp_path):
    import warnings

    from sparsebayes.comparisons.compare import compare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # R-hat warnings on these short chains
        report, _ = compare("diabetes", out=tmp_path, num_warmup=150, num_samples=150, num_chains=2,
                            progress_bar=False)
    bl = report["bayesian_lasso"]
    assert [row["coef"] for row in bl["table"]] == list(report["table"][i]["coef"] for i in range(10))
    for row in bl["table"]:
        for sampler in ("gibbs", "nuts"):
            assert row[f"{sampler}_2.5%"] <= row[f"{sampler}_median"] <= row[f"{sampler}_97.5%"]
        # on diabetes BLS's estimate lies inside every Gibbs interval. Not a law: on boston, where
        # rad and tax correlate 0.91, BLS keeps rad at 0.08 and drops tax, both outside their
        # intervals ([0.71, 3.08] and [-2.66, -0.21]; the posterior spreads over both)
        assert row["gibbs_2.5%"] <= row["bls"] <= row["gibbs_97.5%"], row
    zeros = set(bl["diagnostics"]["bls_zeros"])
    assert zeros and zeros == {row["coef"] for row in bl["table"] if row["bls"] == 0}
    # the two samplers draw from the same posterior: medians within a third of the interval width
    for row in bl["table"]:
        assert abs(row["gibbs_median"] - row["nuts_median"]) <= (row["gibbs_97.5%"] - row["gibbs_2.5%"]) / 3, row
    assert set(bl["scores"]) == {"bls", "bayesian-lasso-gibbs", "bayesian-lasso-nuts"}
    # R-hat over every sampled variable (σ², λ², Gibbs's τ² too), not β alone; warnings name the sampler
    for sampler in ("gibbs", "nuts"):
        # (the table went through JSON, 10 digits)
        assert bl["diagnostics"][f"{sampler}_max_r_hat"] >= max(row[f"{sampler}_r_hat"] for row in bl["table"]) - 1e-9
    md = (tmp_path / "compare-diabetes.md").read_text()
    for w in bl["diagnostics"]["warnings"]:
        assert w.split(":")[0] in ("gibbs", "nuts") and f"**Warning: {w}.**" in md
    assert all(40 < s["rmse"] < 70 for s in bl["scores"].values())
    assert (tmp_path / "compare-diabetes-bayesian-lasso.png").stat().st_size > 1000
    assert "Bayesian Lasso" in (tmp_path / "compare-diabetes.md").read_text()


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_compare_multiclass_puts_smlr_over_the_nuts_posterior_of_the_same_density(tmp_path):
    import warnings

    from sparsebayes.comparisons.compare import compare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # R-hat warnings on these short chains
        report, table = compare("iris", out=tmp_path, num_warmup=200, num_samples=200, num_chains=1,
                                progress_bar=False)
    assert report["kind"] == "multinomial"
    # weights named basis [class]; the reference class (virginica, the last) has none
    assert list(table.index[:2]) == ["bias [setosa]", "bias [versicolor]"]
    assert len(table) == 5 * 2 and not any("virginica" in n for n in table.index)
    diag = report["diagnostics"]
    # SMLR's MAP maximizes the density NUTS samples: no draw may have a higher log posterior
    assert diag["map_log_posterior"] >= diag["max_draw_log_posterior"]
    assert diag["smlr_zeros"] == int((table["smlr"] == 0).sum())
    for row in report["table"]:
        assert row["hdi_3%"] <= row["mean"] <= row["hdi_97%"]
    assert set(report["scores"]) == {"smlr", "nuts-posterior-predictive"}
    for s in report["scores"].values():
        assert s["error_rate"] < 0.1 and 0 < s["log_loss"] < 0.5
    assert (tmp_path / "compare-iris.png").stat().st_size > 1000
    assert "SMLR" in (tmp_path / "compare-iris.md").read_text()


def test_a_draw_above_the_map_is_a_warning():
    from sparsebayes.comparisons.compare import _map_warnings

    assert _map_warnings(-100.0, -100.00001) == []
    assert _map_warnings(-100.0, -100.0 + 1e-5) == []  # within 1e-6 relative
    (w,) = _map_warnings(-100.0, -99.5)
    assert "exceeds the SMLR MAP's by 0.5" in w
