"""The report's pictures and page: the posterior-predictive check suited to the likelihood, rank plots
of a sampler that failed its health gate, the selection curve, and an HTML page that fits 1,200 px in a
real headless browser."""
import re
import shutil
import subprocess
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr
from sparsebayes.comparisons import report_plots
from sparsebayes.comparisons.report_plots import calibration_table, count_frequencies, ppc_kind

LONG = "a_very_long_input_name_without_any_space_that_a_spreadsheet_export_might_produce"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A short comparison (2 chains × 40 draws: it fails the ESS gate) saved once; its directory."""
    import pandas as pd

    import sparsebayes
    from sparsebayes.inference import AdaptiveSparseRegressor

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(50, 3)), columns=["dose", LONG, "age"])
    y = 1.5 * X["dose"] - X["age"] + rng.normal(size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = sparsebayes.compare(AdaptiveSparseRegressor(prior="laplace"), X, y, samplers=("nuts",), num_warmup=40,
                                  num_samples=40, num_chains=2, progress_bar=False)
        out = cmp.save(tmp_path_factory.mktemp("report") / "r")
    return cmp, out


def test_a_failed_sampler_gets_rank_plots_and_the_regression_a_density_check(saved):
    cmp, out = saved
    assert not cmp.usable["nuts"]  # 80 draws cannot give 400 effective ones
    for name in ("ppc.png", "rank-nuts.png", "selection.png", "forest.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'alt="rank plots, nuts"' in html and 'alt="posterior-predictive check (density)"' in html
    assert 'alt="projection selection"' in html
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "![rank plots, nuts](rank-nuts.png)" in md and "![posterior-predictive check](ppc.png)" in md


def test_the_saved_draws_hold_the_point_estimate_the_pymc_extras_way(saved):
    """draws.nc reloads with ``fit`` (the EM Gaussian conditional's moments) and ``optimizer_result``; the
    report's header names the approximation and cites its measured coverage."""
    from sparsebayes.inference.posterior import arviz_compat as compat
    cmp, out = saved
    back = compat.from_netcdf(out / "draws.nc")
    fit, opt = compat.dataset(back, "fit"), compat.dataset(back, "optimizer_result")
    np.testing.assert_array_equal(fit["mean_vector"].values, cmp.point)
    assert list(fit["rows"].values) == cmp.names and fit.attrs["inference"] == "em-gaussian-conditional"
    assert float(opt["fun"]) == cmp.estimator.objective_ and int(opt["nit"]) == cmp.estimator.n_iter_
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "**its approximate posterior**: em-gaussian-conditional" in md and "em-laplace: 50 % intervals" in md


def test_a_sampler_that_passes_gets_no_rank_plot_and_an_old_one_is_removed(saved, tmp_path, monkeypatch):
    cmp, out = saved
    shutil.copytree(out, tmp_path / "r")
    passed = {s: {**d, "usable": True, "warnings": []} for s, d in cmp.diagnostics().items()}
    monkeypatch.setattr(cmp, "diagnostics", lambda: passed)
    cmp.save(tmp_path / "r", overwrite=True)
    assert not (tmp_path / "r" / "rank-nuts.png").exists()  # the earlier run's rank plot does not linger
    assert "rank plots" not in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")


def test_rank_plots_show_the_worst_mixed_weights_first(saved):
    cmp, _ = saved
    from sparsebayes.inference.posterior.arviz_compat import rhat
    idata = cmp.samples["nuts"]
    chosen = report_plots.rank_variables(idata, panels=2)
    r = rhat(idata, var_names=["beta"])["beta"]
    worst = [str(b) for b in r.basis.values[np.argsort(-r.values)]][:2]
    assert [str(c["basis"]) for v, c in chosen if v == "beta"] == worst[:len([1 for v, _ in chosen if v == "beta"])]
    assert len(chosen) == 2


@pytest.mark.parametrize("name, kwargs, y, kind", [
    ("AdaptiveSparseRegressor", {}, [0.3, 1.2, -0.4], "density"),
    ("AdaptiveSparseRegressor", {"likelihood": "poisson"}, [0, 3, 1], "rootogram"),
    ("SparseProbitClassifier", {}, [0, 1, 1], "calibration"),
    ("SMLRClassifier", {}, ["a", "b", "c"], "class-frequencies"),
    ("BLSRegressor", {}, [0.1, 0.2, 0.5], "density"),
])
def test_the_check_follows_the_likelihood(name, kwargs, y, kind):
    from sparsebayes import inference
    assert ppc_kind(getattr(inference, name)(**kwargs), y) == kind


def test_the_reliability_curve_is_scikit_learns_quantile_calibration_curve():
    from sklearn.calibration import calibration_curve
    rng = np.random.default_rng(0)
    p = rng.uniform(size=1000)
    y = (rng.uniform(size=1000) < p ** 1.5).astype(float)  # miscalibrated on purpose
    mean_p, observed, n = calibration_table(y, p, bins=10)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="quantile")
    np.testing.assert_allclose(observed, prob_true, atol=1e-12)
    np.testing.assert_allclose(mean_p, prob_pred, atol=1e-12)
    assert n.sum() == 1000 and set(n) == {100}
    with pytest.raises(ValueError, match="0/1"):
        calibration_table(y + 2, p)


def test_the_rootograms_expected_frequencies_are_the_poisson_pmf():
    import scipy.stats
    rng = np.random.default_rng(0)
    n, draws, rate = 300, 4000, 2.5
    k, observed, replicated = count_frequencies(rng.poisson(rate, n), rng.poisson(rate, (draws, n)))
    expected = replicated.mean(axis=0)
    pmf = n * scipy.stats.poisson.pmf(k, rate)
    se = np.sqrt(n * scipy.stats.poisson.pmf(k, rate) * (1 - scipy.stats.poisson.pmf(k, rate)) / draws)
    assert np.all(np.abs(expected - pmf) < 5 * se + 1e-9)
    assert observed.sum() <= n and k[0] == 0


def _fake(y, yrep, estimator):
    """What plot_ppc reads of a comparison: the observed and replicated targets, the sampler names."""
    idata = SimpleNamespace(observed_data=xr.Dataset({"y": ("obs", np.asarray(y, float))}),
                            posterior_predictive=xr.Dataset({"y": (("chain", "draw", "obs"),
                                                                   np.asarray(yrep, float)[None])}))
    return SimpleNamespace(idata=idata, samples={"nuts": None}, estimator=estimator)


def test_counts_get_a_rootogram_and_classes_their_frequencies():
    from sparsebayes.inference import AdaptiveSparseRegressor, SMLRClassifier
    rng = np.random.default_rng(0)
    fig, kind = report_plots.plot_ppc(_fake(rng.poisson(2, 80), rng.poisson(2, (200, 80)),
                                            AdaptiveSparseRegressor(likelihood="poisson")))
    assert kind == "rootogram" and fig.axes[0].get_ylabel() == "√frequency"
    est = SMLRClassifier()
    est.classes_ = np.array(["ash", "birch", "oak"])
    fig, kind = report_plots.plot_ppc(_fake(rng.integers(0, 3, 60), rng.integers(0, 3, (100, 60)), est))
    assert kind == "class-frequencies"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["ash", "birch", "oak"]


def _browser():
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.mark.skipif(_browser() is None, reason="no headless browser installed (apt-get install chromium): the "
                                               "page width cannot be measured")
def test_the_report_fits_1200_px_in_a_headless_browser(saved, tmp_path):
    """The saved report in headless Chromium at a 1200 × 900 window: after the page has loaded (its
    images decoded), the document is no wider than the window, though its tables are wider than that
    (they scroll inside their own box). Probed by a script written into a copy of the page."""
    _, out = saved
    page = (out / "report.html").read_text(encoding="utf-8")
    probe = ('<script>window.addEventListener("load", () => {const t = Math.max(...[...document.querySelectorAll('
             '"table")].map(e => e.scrollWidth)); document.body.setAttribute("data-probe", '
             '`${document.documentElement.scrollWidth} ${window.innerWidth} ${t}`);});</script></body>')
    (tmp_path / "probe.html").write_text(page.replace("</body>", probe), encoding="utf-8")
    run = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,900",
                          "--dump-dom", (tmp_path / "probe.html").as_uri()], capture_output=True, text=True,
                         timeout=120)
    found = re.search(r'data-probe="(\d+) (\d+) (\d+)"', run.stdout)
    assert found, run.stderr[-2000:]
    page_width, window, widest_table = map(int, found.groups())
    assert window == 1200
    assert widest_table > 1200  # the check has something to contain
    assert page_width <= 1200, f"the page is {page_width} px wide in a 1200 px window"
