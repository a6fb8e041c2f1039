"""`sparsebayes compare`: one report with the EM estimates over the NUTS posterior."""
import json

import numpy as np

from sparsebayes.comparisons.cli import main


def test_compare_writes_report_with_estimates_and_diagnostics(tmp_path, capsys):
    assert main(["compare", "crabs", "--chains", "1", "--warmup", "150", "--draws", "150",
                 "--out", str(tmp_path)]) == 0
    rep = json.loads((tmp_path / "compare-crabs.json").read_text())
    assert (tmp_path / "compare-crabs.png").stat().st_size > 0
    assert "compare crabs" in (tmp_path / "compare-crabs.md").read_text()
    coefs = [row["coef"] for row in rep["table"]]
    assert coefs == ["bias", "FL", "RW", "CL", "CW", "BD"]
    for row in rep["table"]:
        assert row["hdi_3%"] <= row["mean"] <= row["hdi_97%"]
        assert 0.0 <= row["P(|b|<0.05*scale)"] <= 1.0
    assert set(rep["scores"]) == {"jeffreys-em", "laplace-em", "nuts-posterior-mean"}
    # crabs' sex is almost linearly separable from the 5 measurements
    assert rep["scores"]["jeffreys-em"]["error_rate"] < 0.15
    assert np.isfinite(rep["diagnostics"]["min_ess_bulk_per_s"])
    assert "held-out scores" in capsys.readouterr().out
