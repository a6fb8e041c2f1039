"""``sparsebayes compare DATASET``: a bundled data set goes through the one comparison path of a CSV
(``compare_csv.compare_table`` -> ``sparsebayes.compare`` -> ``Comparison.save``), so its report leads
with the verdict and the selection like any other."""
import numpy as np
import pytest
from sparsebayes.comparisons.cli import main
from sparsebayes.inference.posterior import arviz_compat as compat

TINY = ["--draws", "30", "--warmup", "30", "--chains", "2"]


def test_the_bundled_report_leads_with_the_verdict_and_the_selection(tmp_path, capsys):
    """crabs by name: the Comparison's report (verdict, selection, diagnostics, then the tables), its
    plots and draws, and the verdict on standard output; none of the old report's files."""
    assert main(["--no-compile-cache", "compare", "crabs", "--draws", "30", "--warmup", "30", "--chains", "1",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.index("verdict") < out.index("wrote") and "RW" in out
    report = tmp_path / "compare-crabs"
    assert not list(tmp_path.glob("compare-crabs.*"))  # the old report's compare-crabs.{json,md,png}
    for name in ("report.md", "report.html", "forest.png", "ppc.png", "selection.png", "draws.nc"):
        assert (report / name).stat().st_size > 0, name
    idata = compat.from_netcdf(report / "draws.nc")
    assert [str(v) for v in idata.point_estimate["beta"].basis.values] == ["bias", "FL", "RW", "CL", "CW", "BD"]
    # the samplers kept no pointwise log-likelihood; the report's LOO computed it, and the saved file has it
    assert compat.has_group(idata, "log_likelihood") and idata.log_likelihood["y"].shape[-1] == 200
    md = (report / "report.md").read_text(encoding="utf-8")
    heads = ["## Verdict", "## Selection", "## Diagnostics", "## Posterior-predictive check", "## Weights",
             "## Forest plot"]
    at = [md.index(h) for h in heads]
    assert at == sorted(at), at


@pytest.mark.slow  # two comparisons: about 45 s on 2 cores
def test_the_bundled_path_is_the_csv_path(tmp_path, capsys):
    """crabs by name and the same table written as a CSV give the same verdict, the same draws and the
    same report up to the diagnostics (whose ESS per second differ by the timings)."""
    from sparsebayes.comparisons.compare import load

    assert main(["--no-compile-cache", "compare", "crabs", *TINY, "--out", str(tmp_path / "a")]) == 0
    by_name = capsys.readouterr()
    X, y = load("crabs")
    X.assign(target=y).to_csv(tmp_path / "crabs.csv", index=False)
    assert main(["--no-compile-cache", "compare", str(tmp_path / "crabs.csv"), "--target", "target", *TINY,
                 "--out", str(tmp_path / "b")]) == 0
    by_csv = capsys.readouterr()
    assert by_name.out.split("wrote")[0] == by_csv.out.split("wrote")[0]  # the verdict and the warnings
    a, b = tmp_path / "a" / "compare-crabs", tmp_path / "b" / "compare-crabs"
    first, second = compat.from_netcdf(a / "draws.nc"), compat.from_netcdf(b / "draws.nc")
    np.testing.assert_array_equal(first.posterior["beta"].values, second.posterior["beta"].values)
    md = (a / "report.md").read_text(encoding="utf-8")
    upto = md.index("## Diagnostics")
    assert md[:upto] == (b / "report.md").read_text(encoding="utf-8")[:upto]


def test_bundled_data_sets_load_in_their_own_units():
    """Each bundled set is a named table in the data's units: diabetes unscaled (scikit-learn's
    ``scaled=False`` copy), Pima.tr and Pima.te stacked, class names for iris."""
    from sklearn.datasets import load_diabetes

    from sparsebayes.comparisons.compare import DATASETS, load

    X, y = load("diabetes")
    raw = load_diabetes(scaled=False)
    np.testing.assert_array_equal(X.to_numpy(), raw.data)
    np.testing.assert_array_equal(y.to_numpy(), raw.target)
    assert list(X.columns) == list(raw.feature_names)
    X, y = load("pima")
    assert X.shape == (532, 7) and set(np.unique(y)) == {0, 1} and "glu" in X.columns
    X, y = load("iris")
    assert set(y) == {"setosa", "versicolor", "virginica"}
    with pytest.raises(ValueError, match="unknown data set 'nope'.*diabetes"):
        load("nope")
    assert "glass" in DATASETS and "wbc" in DATASETS


def test_bundled_options_and_the_one_refused(tmp_path, capsys, monkeypatch):
    """--estimator, --features and --test-fraction reach the bundled path as they reach a CSV's (the
    fitting is stubbed: what is tested is what the command passes on)."""
    from sparsebayes.comparisons import compare_csv

    seen = {}

    def fake_table(X, y, directory, **kw):
        seen.update(kw, X=X, directory=directory)
        raise ValueError("stop here")
    monkeypatch.setattr(compare_csv, "compare_table", fake_table)
    assert main(["--no-compile-cache", "compare", "diabetes", "--estimator", "horseshoe", "--features", "quadratic",
                 "--test-fraction", "0.25", "--no-progress", "--out", str(tmp_path)]) == 2
    assert "error: stop here" in capsys.readouterr().err
    assert (seen["estimator"], seen["features"], seen["test_fraction"]) == ("horseshoe", "quadratic", 0.25)
    assert seen["X"].shape == (442, 10) and seen["directory"] == tmp_path / "compare-diabetes"
    with pytest.raises(SystemExit) as stop:
        main(["--no-compile-cache", "compare", "diabetes", "--target", "y", "--out", str(tmp_path)])
    assert stop.value.code == 2 and "--target apply to a CSV file" in capsys.readouterr().err


@pytest.mark.slow  # about 30-60 s on 2 cores
def test_bundled_regression_runs_bls_by_nuts_and_gibbs_with_a_density_check(tmp_path):
    """diabetes at short chains: BLS's model sampled by NUTS and Gibbs, the verdict in the data's units,
    the posterior-predictive check a density overlay for a real-valued target."""
    import warnings

    from sparsebayes.comparisons.compare import compare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp, directory = compare("diabetes", out=tmp_path, draws=100, warmup=100, chains=2, log=lambda line: None)
    assert type(cmp.estimator).__name__ == "BLSRegressor" and list(cmp.samples) == ["nuts", "gibbs"]
    verdict = cmp.verdict()
    assert list(verdict.index) == ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    assert verdict.loc["bmi", "gibbs_verdict"] == "matters"
    html = (directory / "report.html").read_text(encoding="utf-8")
    assert "posterior-predictive check (density)" in html
