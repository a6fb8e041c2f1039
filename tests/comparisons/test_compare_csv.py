"""``sparsebayes compare data.csv --target COLUMN``: a user's own table, written here, through the CLI."""
import matplotlib
import numpy as np
import pandas as pd
import pytest
from sparsebayes.comparisons.cli import main
from sparsebayes.comparisons.compare_csv import default_estimator, is_classification, read_table
from sparsebayes.inference.posterior import arviz_compat as compat

TINY = ["--draws", "30", "--warmup", "30", "--chains", "2"]


def _csv(path, n=70, seed=3):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.normal(40.0, 5.0, n), "dose": rng.normal(0.0, 2.0, n),
                       "noise": rng.normal(size=n), "site": rng.choice(["north", "south", "west"], n)})
    df["outcome"] = 0.3 * df["age"] - 0.8 * df["dose"] + (df["site"] == "south") + rng.normal(size=n)
    df.to_csv(path, index=False)
    return df


@pytest.mark.slow
def test_csv_report_files_and_one_naming_scheme(tmp_path, capsys):
    csv = tmp_path / "trial.csv"
    _csv(csv)
    backend = matplotlib.get_backend()
    rc = main(["--no-compile-cache", "compare", str(csv), "--target", "outcome", "--estimator", "horseshoe",
               *TINY, "--out", str(tmp_path / "out")])
    assert rc == 0
    captured = capsys.readouterr()
    for step in ("fitting AdaptiveSparseRegressor", "by NUTS", "by Gibbs", "writing the report"):
        assert step in captured.err
    assert "one-hot encoded the non-numeric column(s) site" in captured.err
    report = tmp_path / "out" / "compare-trial"
    for name in ("report.md", "report.html", "forest.png", "draws.nc"):
        assert (report / name).stat().st_size > 0
    names = ["bias", "age", "dose", "noise", "site_south", "site_west"]
    idata = compat.from_netcdf(report / "draws.nc")
    parts = [idata.point_estimate, idata.posterior, idata.posterior_gibbs]
    for part in parts:
        assert part["beta"].dims == ("chain", "draw", "basis")
        assert [str(v) for v in part["beta"].basis.values] == names
    assert idata.posterior.beta.shape == idata.posterior_gibbs.beta.shape == (2, 30, len(names))
    assert "site_south" in (report / "report.md").read_text() and "site_south" in captured.out
    assert matplotlib.get_backend() == backend


def test_no_progress_silences_the_step_lines(tmp_path, capsys, monkeypatch):
    """With --no-progress no step line is printed; the data note still is. (The sampling is stubbed:
    what is tested is the command's own output.)"""
    from sparsebayes.comparisons import compare_csv

    csv = tmp_path / "t.csv"
    _csv(csv)

    def fake_run(path, target, *, log, progress, **kw):
        assert progress is False
        log("fitting X")
        log("note: something about the data")
        raise ValueError("stop here")
    monkeypatch.setattr(compare_csv, "run", fake_run)
    assert main(["--no-compile-cache", "compare", str(csv), "--target", "outcome", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "fitting X" not in err and "note: something about the data" in err and "error: stop here" in err


@pytest.mark.parametrize("argv, message", [
    (["compare", "{csv}"], "name the target column"),
    (["compare", "{dir}/absent.csv", "--target", "y"], "neither a bundled data set"),
    (["compare", "diabetes", "--target", "y"], "--target apply to a CSV file"),
    (["compare", "{csv}", "--target", "outcome", "--features", "cubic"], "invalid choice: 'cubic'"),
])
def test_usage_errors(argv, message, tmp_path, capsys):
    csv = tmp_path / "t.csv"
    _csv(csv)
    argv = [a.format(csv=csv, dir=tmp_path) for a in argv]
    with pytest.raises(SystemExit) as stop:
        main(["--no-compile-cache", *argv, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("edit, args, message", [
    (None, ["--target", "weight"], "'weight' is not a column"),
    ("missing", ["--target", "outcome"], "missing values in column(s) dose"),
    ("binary", ["--target", "outcome", "--estimator", "bayesian-lasso"], "has no classification form"),
    (None, ["--target", "outcome", "--estimator", "bayesian-lasso", "--features", "rbf"], "--features linear only"),
    ("no rows", ["--target", "outcome"], "has a header (age, dose, noise, site, outcome) but no rows"),
])
def test_bad_tables_are_a_message_naming_the_problem(edit, args, message, tmp_path, capsys):
    csv = tmp_path / "t.csv"
    df = _csv(csv)
    if edit == "missing":
        df.loc[3, "dose"] = np.nan
    elif edit == "binary":
        df["outcome"] = np.where(df["outcome"] > df["outcome"].median(), "high", "low")
    elif edit == "no rows":
        df = df.iloc[:0]
    df.to_csv(csv, index=False)
    assert main(["--no-compile-cache", "compare", str(csv), *args, *TINY, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _iris_csv(path):
    from sklearn.datasets import load_iris

    iris = load_iris(as_frame=True)
    df = iris.data.rename(columns=lambda c: c.replace(" (cm)", "").replace(" ", "_"))
    df["species"] = iris.target_names[iris.target]
    df.to_csv(path, index=False)
    return sorted(iris.target_names)


@pytest.mark.parametrize("estimator", ["laplace", "horseshoe", "rvm"])
def test_more_than_two_classes_reach_the_comparison(estimator, tmp_path, monkeypatch):
    """Iris (3 classes) through the CLI with a one-vs-all family (the EM probit, the Bernoulli RVM): no
    refusal; the fitted classifier that reaches :func:`sparsebayes.compare` has 3 classes and its model
    record is the one-vs-all record of 3 binary parts (the sampling itself is stubbed here; the slow test
    below samples)."""
    import sparsebayes

    csv = tmp_path / "iris.csv"
    classes = _iris_csv(csv)
    seen = {}

    def fake_compare(est, X, y, **kw):
        seen["record"] = est.posterior_model(X, y, surrogate_eps=kw["surrogate_eps"])
        seen["classes"] = sorted(str(c) for c in est.classes_)
        raise ValueError("stop here")
    monkeypatch.setattr(sparsebayes, "compare", fake_compare)
    assert main(["--no-compile-cache", "compare", str(csv), "--target", "species", "--estimator", estimator,
                 "--draws", "50", "--chains", "1", "--no-progress", "--out", str(tmp_path / "out")]) == 2
    assert seen["classes"] == classes
    assert len(seen["record"].parts) == 3 and sorted(str(c) for c in seen["record"].classes) == classes


@pytest.mark.slow  # about 50 s (NUTS on three binary models, compilation included)
@pytest.mark.parametrize("estimator", ["laplace", "rvm"])
def test_more_than_two_classes_sample_one_vs_all(estimator, tmp_path, capsys):
    """Iris (3 classes) through the CLI with a one-vs-all family: the EM probit (laplace) or the Bernoulli
    RVM fits K = 3 binary models, and NUTS samples the 3 independent binary posteriors, stacked on
    ``classifier`` (the point estimate's dim), class labels as coords."""
    csv = tmp_path / "iris.csv"
    classes = _iris_csv(csv)
    rc = main(["--no-compile-cache", "compare", str(csv), "--target", "species", "--estimator", estimator,
               "--draws", "50", "--warmup", "50", "--chains", "1", "--no-progress", "--out", str(tmp_path / "out")])
    assert rc == 0, capsys.readouterr().err
    idata = compat.from_netcdf(tmp_path / "out" / "compare-iris" / "draws.nc")
    beta = idata.posterior["beta"]
    assert beta.sizes["classifier"] == 3 and beta.sizes["draw"] == 50 and beta.sizes["chain"] == 1
    assert sorted(str(c) for c in beta.classifier.values) == classes
    assert idata.point_estimate["beta"].sizes["classifier"] == 3
    assert np.all(np.isfinite(beta.values))


def test_table_reading_and_task():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "x"], "ok": [True, False, True], "t": [0.5, 1.5, 2.0]})
    import io
    X, y, notes = read_table(io.StringIO(df.to_csv(index=False)), "t")
    assert list(X.columns) == ["a", "ok", "b_y"] and X.dtypes.eq(np.float64).all()
    assert notes and "b" in notes[0]
    assert not is_classification(y) and is_classification(pd.Series(["u", "v", "u"]))
    assert is_classification(pd.Series([0, 1, 1])) and not is_classification(pd.Series([0, 1, 2]))
    assert [default_estimator(pd.Series(v)) for v in ([0.5, 1.5, 2.0], ["u", "v", "u"], ["u", "v", "w"])] == \
        ["bls", "laplace", "smlr"]


def _one_input(n=40, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, 0.8 * x + rng.normal(size=n)


def test_bls_with_lam_zero_has_the_flat_prior_limit_as_its_twin():
    """A one-input table: BLS fits λ = 0 (the type-II λ update with one kept weight and a = 0). Its twin
    is the Laplace prior's limit λ → 0, a flat prior, with a warning, not a refusal; NUTS only."""
    from sparsebayes.inference import BLSRegressor
    from sparsebayes.inference._warnings import DegenerateFitWarning
    from sparsebayes.inference.posterior.twin_posterior import gibbs_able, twin

    x, y = _one_input()
    est = BLSRegressor().fit(x[:, None], y)
    assert est.gamma_ == 0.0 and est.coef_[0] != 0.0
    with pytest.warns(DegenerateFitWarning, match="kept 1 input"):
        t = twin(est, x[:, None], y)
    assert t.kwargs["hierarchy"] == "flat" and "lam" not in t.kwargs and "flat-prior" in t.label
    assert t.gibbs is None and not gibbs_able(est)


@pytest.mark.slow
def test_a_one_input_table_is_a_report_with_a_warning_not_an_error(tmp_path, capsys):
    """BLS (the default for a numeric target) fits λ = 0 with one kept input (the type-II λ update
    ``2 max(n + a − 1, 0)/…`` with a = 0): the table is valid and the fit an answer, so the command writes
    the report, NUTS on the flat-prior limit of the Laplace twin, and warns; the flat-prior posterior
    median of the slope is checked against least squares (its posterior mean under the flat prior)."""
    from sparsebayes.inference._warnings import DegenerateFitWarning

    x, y = _one_input()
    pd.DataFrame({"x": x, "y": y}).to_csv(tmp_path / "one.csv", index=False)
    with pytest.warns(DegenerateFitWarning, match="λ = 0"):
        rc = main(["--no-compile-cache", "compare", str(tmp_path / "one.csv"), "--target", "y", "--no-progress",
                   "--draws", "300", "--warmup", "200", "--chains", "1", "--out", str(tmp_path / "out")])
    assert rc == 0, capsys.readouterr().err
    report = tmp_path / "out" / "compare-one"
    assert "flat-prior" in (report / "report.md").read_text(encoding="utf-8")
    idata = compat.from_netcdf(report / "draws.nc")
    slope = float(np.median(idata.posterior["beta"].values))
    ols = np.polyfit(x, y, 1)[0]
    assert abs(slope - ols) < 0.05
