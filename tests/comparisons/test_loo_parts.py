"""PSIS-LOO of each part of a comparison (:meth:`Comparison.loo`): each sampler's ``az.loo`` with a
pass/fail line (``k̂ < 0.7`` for all rows), and the importance-corrected approximate-posterior LOO of
the estimator's own approximate draws (its oracles: tests/comparisons/test_approximation_loo.py).

Oracle: ``az.loo`` called directly on the same groups (for the approximation, the corrected LOO of its
draws with the pointwise Gaussian log-likelihood computed here by scipy). The samplers' draws are exact draws of
the conjugate Gaussian posterior (the verdict tests' helpers), so no sampler compiles."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from sparsebayes.comparisons import approximation_check as ac
from sparsebayes.comparisons.compare_any_report import loo_sections
from sparsebayes.inference import AdaptiveSparseRegressor
from sparsebayes.inference.posterior import arviz_compat as compat

_spec = importlib.util.spec_from_file_location("_verdict_helpers", Path(__file__).with_name("test_verdict.py"))
V = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(V)

#: How far the outlier row of the bad part sits from its fitted mean, in noise sds.
OUTLIER_SDS = 40.0


def _with_log_lik(idata, H, y, noise_var=1.0):
    beta = idata.posterior["beta"].values
    ll = scipy.stats.norm.logpdf(y, beta @ H.T, np.sqrt(noise_var))
    compat.set_group(idata, "log_likelihood", compat.group_from_dict("log_likelihood", {"y": ll}, dims={"y": ["obs"]}))
    return idata


@pytest.fixture(scope="module")
def cmp():
    """A Laplace EM fit beside two parts on the same exact draws: ``exact`` (the data's own
    log-likelihood) and ``bad`` (one row moved :data:`OUTLIER_SDS` noise sds away: an influential
    outlier whose leave-one-out posterior the draws cannot reach)."""
    std, _, y = V._frames()
    c = V._regression_comparison(std, y, AdaptiveSparseRegressor(prior="laplace", gamma=1e-8))
    good = _with_log_lik(c.samples["exact"], c.design, np.asarray(y, dtype=float))
    bad_y = np.asarray(y, dtype=float).copy()
    bad_y[0] += OUTLIER_SDS
    bad = _with_log_lik(compat.copy(good), c.design, bad_y)
    c.samples = {"exact": good, "bad": bad}
    return c


def test_loo_of_each_part_equals_az_loo(cmp):
    table = cmp.loo(num_draws=2000, seed=0)
    assert list(table.index) == ["exact", "bad", "approximation"]
    est = cmp.estimator
    draws = np.asarray(est.to_inference_data(draws=2000, seed=0).posterior["beta"].values).reshape(2000, -1)
    y = np.asarray(cmp.idata.observed_data["y"].values)
    ll = scipy.stats.norm.logpdf(y, draws @ cmp.design.T, np.sqrt(est.noise_var_))
    a = ac.approximation_draws(est, cmp.design, y, num_draws=2000, seed=0)
    corrected = ac.approximate_posterior_loo(ll, a["log_p"], a["log_q"])
    assert table.loc["approximation", "elpd_loo"] == pytest.approx(corrected["elpd_loo"], rel=1e-12)
    assert table.loc["approximation", "pareto_k_max"] == pytest.approx(np.max(corrected["pareto_k"]), rel=1e-12)
    for part, idata in (("exact", cmp.samples["exact"]), ("bad", cmp.samples["bad"])):
        direct = compat.loo(idata)  # az.loo under ArviZ 0.x's names, whichever ArviZ is installed
        row = table.loc[part]
        assert row.elpd_loo == pytest.approx(direct["elpd_loo"], rel=1e-12)
        assert row.se == pytest.approx(direct["se"], rel=1e-12)
        assert row.p_loo == pytest.approx(direct["p_loo"], rel=1e-12)
        assert row.pareto_k_max == pytest.approx(float(np.max(direct["pareto_k"])), rel=1e-12)
    assert "importance-corrected" in table.loc["approximation", "line"]
    assert list(table.method) == [ac.PSIS_LOO, ac.PSIS_LOO, ac.APPROXIMATE_LOO]


def test_an_influential_outlier_row_fails_and_the_exact_part_passes(cmp):
    table = cmp.loo(num_draws=2000, seed=0)
    assert table.loc["exact", "passed"] and "pass: k-hat < 0.7 for all rows" in table.loc["exact", "line"]
    bad = table.loc["bad"]
    assert not bad.passed and bad.n_bad_k >= 1 and bad.pareto_k_max > ac.KHAT_MAX and "FAIL" in bad.line
    # the outlier is the one bad row: the same rows with the data's own value pass
    assert table.loc["exact", "n_bad_k"] == 0


def test_report_section_lists_each_part_with_its_line(cmp):
    md, page = loo_sections(cmp)
    for text in (md, page):
        assert "Leave-one-out of each part" in text and "FAIL" in text and "importance-corrected approximate-posterior" in text
    assert md.count("PSIS-LOO elpd") == 3

