"""``sparsebayes.compare(..., X_test=, y_test=)``: the held-out predictive comparison of the point estimate
and the posterior predictive, each score recomputed here independently from the estimator and the draws."""
import re

import numpy as np
import pytest
import scipy.stats
from scipy.special import log_ndtr, logsumexp
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor, SMLRClassifier, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat

SAMPLING = dict(num_warmup=150, num_samples=150, num_chains=2, seed=0)


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


@pytest.fixture(scope="module")
def regression():
    X, y = _diabetes()
    est = AdaptiveSparseRegressor(prior="laplace").fit(X[:300], y[:300])
    cmp = sparsebayes.compare(est, X[:300], y[:300], X_test=X[300:], y_test=y[300:], samplers=("nuts",),
                              **SAMPLING)
    return dict(cmp=cmp, est=est, X_test=X[300:], y_test=y[300:])


def _draws(cmp, name):
    v = cmp.samples["nuts"].posterior[name]
    return np.asarray(v.values).reshape(-1, *v.shape[2:])


def test_regression_point_estimate_scores_are_the_plug_in_ones(regression):
    est, X_test, y_test = regression["est"], regression["X_test"], regression["y_test"]
    table = regression["cmp"].predictive()
    assert list(table.index) == ["point estimate", "nuts"]
    assert list(table.columns) == ["log_score", "rmse", "n_test"]
    point = table.loc["point estimate"]
    pred = est.predict(X_test)
    assert point["rmse"] == pytest.approx(np.sqrt(mean_squared_error(y_test, pred)), abs=1e-10)
    expected = scipy.stats.norm.logpdf(y_test, pred, np.sqrt(est.noise_var_)).mean()
    assert point["log_score"] == pytest.approx(expected, abs=1e-10)
    assert (table["n_test"] == len(y_test)).all()


def test_regression_nuts_scores_match_the_draws(regression):
    cmp, est, X_test, y_test = (regression[k] for k in ("cmp", "est", "X_test", "y_test"))
    H = np.asarray(est.feature_map_.transform(X_test), dtype=np.float64)
    np.testing.assert_allclose(H @ cmp.point, est.predict(X_test), atol=1e-10)  # the design is the estimator's
    beta, noise_var = _draws(cmp, "beta"), _draws(cmp, "noise_var")
    log_dens = scipy.stats.norm.logpdf(y_test, beta @ H.T, np.sqrt(noise_var)[:, None])  # (draws, rows)
    expected = np.mean(logsumexp(log_dens, axis=0) - np.log(len(beta)))
    row = cmp.predictive().loc["nuts"]
    assert row["log_score"] == pytest.approx(expected, abs=1e-8)
    assert row["rmse"] == pytest.approx(np.sqrt(np.mean((y_test - (beta @ H.T).mean(axis=0)) ** 2)), abs=1e-8)


@pytest.fixture(scope="module")
def probit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 4))
    y = np.where(X[:, 0] - 0.7 * X[:, 1] + 0.5 * rng.normal(size=160) > 0, "yes", "no")
    est = SparseProbitClassifier(prior="laplace").fit(X[:100], y[:100])
    cmp = sparsebayes.compare(est, X[:100], y[:100], X_test=X[100:], y_test=y[100:], **SAMPLING)
    return dict(cmp=cmp, est=est, X_test=X[100:], y_test=y[100:])


def test_binary_classifier_scores(probit):
    cmp, est, X_test, y_test = (probit[k] for k in ("cmp", "est", "X_test", "y_test"))
    table = cmp.predictive()
    assert list(table.columns) == ["log_score", "error_rate", "n_test"]
    point = table.loc["point estimate"]
    assert point["error_rate"] == pytest.approx(1.0 - est.score(X_test, y_test), abs=1e-12)
    truth = np.searchsorted(est.classes_, y_test)
    assert point["log_score"] == pytest.approx(
        np.mean(np.log(est.predict_proba(X_test)[np.arange(len(y_test)), truth])), abs=1e-10)
    H = np.asarray(est.feature_map_.transform(X_test), dtype=np.float64)
    eta = _draws(cmp, "beta") @ H.T
    sign = 2.0 * (y_test == est.classes_[1]) - 1.0
    expected = np.mean(logsumexp(log_ndtr(sign * eta), axis=0) - np.log(len(eta)))
    row = table.loc["nuts"]
    assert row["log_score"] == pytest.approx(expected, abs=1e-8)
    p_one = np.exp(log_ndtr(eta)).mean(axis=0)
    assert row["error_rate"] == pytest.approx(np.mean(est.classes_[(p_one > 0.5).astype(int)] != y_test), abs=1e-12)


def test_multiclass_point_error_rate():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)) + 0.3 * rng.normal(size=(150, 3)), axis=1)
    est = SMLRClassifier().fit(X[:100], y[:100])
    cmp = sparsebayes.compare(est, X[:100], y[:100], X_test=X[100:], y_test=y[100:],
                              num_warmup=60, num_samples=60, num_chains=1)
    table = cmp.predictive()
    assert table.loc["point estimate", "error_rate"] == pytest.approx(1.0 - est.score(X[100:], y[100:]), abs=1e-12)
    prob = cmp.samples["nuts"].predictions["prob"]
    assert prob.shape[-1] == 3
    np.testing.assert_allclose(prob.values.sum(axis=-1), 1.0, atol=1e-10)  # a distribution over the classes


def test_report_has_the_section(regression, tmp_path):
    cmp = regression["cmp"]
    md = (cmp.save(tmp_path / "with") / "report.md").read_text(encoding="utf-8")
    section = md.split("## Held-out predictive", 1)[1].split("## Forest plot", 1)[0]
    assert f"{cmp.predictive().loc['nuts', 'rmse']:.4g}" in section and "| point estimate" in section
    html = (tmp_path / "with" / "report.html").read_text(encoding="utf-8")
    assert "<h2>Held-out predictive</h2>" in html and "log_score" in html


def test_without_test_data_the_report_says_so(tmp_path):
    X, y = _diabetes()
    cmp = sparsebayes.compare(AdaptiveSparseRegressor(prior="laplace"), X[:80, :3], y[:80],
                              num_warmup=30, num_samples=30, num_chains=1)
    with pytest.raises(ValueError, match="no held-out data"):
        cmp.predictive()
    assert not compat.has_group(cmp.idata, "predictions")
    md = (cmp.save(tmp_path) / "report.md").read_text(encoding="utf-8")
    section = md.split("## Held-out predictive", 1)[1].split("## Forest plot", 1)[0]
    assert "No held-out data were given" in section


def test_test_size_holds_out_seeded_rows_and_refits_on_the_rest():
    X, y = _diabetes()
    X, y = X[:120, :4], y[:120]
    est = AdaptiveSparseRegressor(prior="laplace").fit(X, y)  # fitted on every row: compare must refit
    cmp = sparsebayes.compare(est, X, y, test_size=0.25, samplers=("nuts",), num_warmup=30, num_samples=30,
                              num_chains=1, seed=3)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=3)
    np.testing.assert_array_equal(cmp.X_test, X_test)
    np.testing.assert_array_equal(cmp.y_test, y_test)
    assert cmp.predictive()["n_test"].tolist() == [len(y_test)] * 2
    refit = clone(est).fit(X_train, y_train)
    np.testing.assert_allclose(cmp.estimator.predict(X_test), refit.predict(X_test), atol=1e-10)
    assert not np.allclose(cmp.estimator.predict(X_test), est.predict(X_test))


@pytest.mark.parametrize("kwargs, match", [
    (dict(X_test=np.zeros((5, 4))), "both X_test and y_test"),
    (dict(X_test=np.zeros((5, 4)), y_test=np.zeros(4)), "one target per row"),
    (dict(X_test=np.zeros((5, 3)), y_test=np.zeros(5)), "X_test has 3 columns; X has 4"),
    (dict(X_test=np.zeros((5, 4)), y_test=np.zeros(5), test_size=0.2), "not both"),
])
def test_mismatched_test_data_is_a_value_error(kwargs, match):
    X, y = _diabetes()
    with pytest.raises(ValueError, match=match):
        sparsebayes.compare(AdaptiveSparseRegressor(prior="laplace"), X[:50, :4], y[:50], **kwargs)


@pytest.mark.slow  # the end-to-end CLI run; the split and the scores are tested in-process above
def test_cli_test_fraction_holds_out_rows_of_a_csv(tmp_path, capsys):
    import pandas as pd

    from sparsebayes.comparisons.cli import main

    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.normal(size=70), "b": rng.normal(size=70)})
    df["label"] = np.where(df["a"] + 0.5 * rng.normal(size=70) > 0, "pos", "neg")
    df.to_csv(tmp_path / "t.csv", index=False)
    rc = main(["--no-compile-cache", "compare", str(tmp_path / "t.csv"), "--target", "label", "--test-fraction", "0.3",
               "--draws", "30", "--warmup", "30", "--chains", "1", "--no-progress", "--out", str(tmp_path / "out")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "held-out predictive" in out and "error_rate" in out
    md = (tmp_path / "out" / "compare-t" / "report.md").read_text(encoding="utf-8")
    section = md.split("## Held-out predictive", 1)[1].split("## Forest plot", 1)[0]
    assert "| point estimate" in section
    assert len(re.findall(r"\|\s*21\s*\|", section)) == 2  # n_test: 30 % of 70 rows, for both sources


@pytest.mark.parametrize("argv, message", [
    (["compare", "diabetes", "--target", "y", "--test-fraction", "0.2"], "--target apply to a CSV file"),
    (["compare", "diabetes", "--test-fraction", "1.5"], "--test-fraction: must be in (0, 1)"),
])
def test_cli_test_fraction_usage_errors(argv, message, tmp_path, capsys):
    from sparsebayes.comparisons.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["--no-compile-cache", *argv, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_test_label_the_classifier_never_saw_is_a_value_error():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    with pytest.raises(ValueError, match=r"X_test / y_test: .*among the classifier's classes"):
        sparsebayes.compare(SparseProbitClassifier(prior="laplace"), X, y, X_test=X[:5], y_test=["a", "c", "a", "b", "a"])
