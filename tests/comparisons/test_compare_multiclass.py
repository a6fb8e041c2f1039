"""``sparsebayes.compare`` on every public multiclass estimator (issue 39), three classes, small draws.

One-vs-all estimators (the EM probit, the Bernoulli RVM, the Gibbs and NUTS classifiers, and the
``SparseClassifier`` methods that fit them) compare as ``K`` independent binary posteriors on
``(basis, classifier)``; SMLR (``SMLRClassifier``, ``SMLRCV``, ``SparseClassifier(method="map")``) as its
multinomial posterior on ``(basis, class)``. For each: the point estimate and the draws share names,
``az.loo`` reads the log-likelihood (one value per row), the posterior-predictive check has class codes,
the verdict has a row per (input, class), the held-out scores are the estimator's ``predict_proba``'s
beside the draws', and projection selection refuses with the reason.
"""
import numpy as np
import pytest
import scipy.special
from multiclass_data import CLASSES, SMALL, three_classes

import sparsebayes
from sparsebayes.inference import (
    GibbsClassifier,
    NutsClassifier,
    RVMClassifier,
    SMLRCV,
    SMLRClassifier,
    SparseClassifier,
    SparseProbitClassifier,
)
from sparsebayes.inference.posterior.posterior_sampling import same_layout
from sparsebayes.inference.posterior.twin_one_vs_all import CLASS_DIM, LOO_NOTE

slow = pytest.mark.slow


#: name -> (unfitted estimator, surrogate_eps, one-vs-all?)
ESTIMATORS = {
    "SparseProbitClassifier": (lambda: SparseProbitClassifier(prior="laplace"), None, True),
    "SMLRClassifier": (lambda: SMLRClassifier(), None, False),
    "SMLRCV": (lambda: SMLRCV(), None, False),
    "RVMClassifier": (lambda: RVMClassifier(), 1e-2, True),
    "GibbsClassifier": (lambda: GibbsClassifier(**SMALL), None, True),
    "NutsClassifier": (lambda: NutsClassifier(**SMALL), None, True),
    "SparseClassifier-em": (lambda: SparseClassifier(prior="laplace", method="em"), None, True),
    "SparseClassifier-type2": (lambda: SparseClassifier(method="type2"), 1e-2, True),
    "SparseClassifier-map": (lambda: SparseClassifier(prior="laplace", method="map"), None, False),
    "SparseClassifier-gibbs": (lambda: SparseClassifier(prior="laplace", method="gibbs", options=SMALL), None, True),
    "SparseClassifier-nuts": (lambda: SparseClassifier(prior="laplace", method="nuts", options=SMALL), None, True),
}
FAST = ("SparseProbitClassifier", "SMLRClassifier", "SMLRCV", "SparseClassifier-em", "SparseClassifier-map")


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=slow) for n in ESTIMATORS])
def test_compare_multiclass(name):
    make, eps, one_vs_all = ESTIMATORS[name]
    X, y = three_classes()
    X_test, y_test = three_classes(n=15, seed=1)
    est = make().fit(X, y)
    draws = est.sample_posterior(X, y, draws=15, chains=1, surrogate_eps=eps)  # the estimator's own method
    assert draws.posterior["beta"].sizes["draw"] == 15
    cmp = sparsebayes.compare(est, X, y, progress_bar=False, prior_draws=50, surrogate_eps=eps, X_test=X_test,
                              y_test=y_test, **SMALL)
    post, point = cmp.idata.posterior, cmp.idata.point_estimate
    class_dim = CLASS_DIM if one_vs_all else "class"
    assert cmp.weight_dims == ("basis", class_dim)
    # names line up: the point estimate and every sampler's draws on the same dims and coords
    for s, idata in cmp.samples.items():
        assert same_layout(point, idata.posterior, "beta"), s
    assert [str(c) for c in post["beta"].coords[class_dim].values] == list(CLASSES)
    assert cmp.point.size == len(cmp.names) == post["beta"].sizes["basis"] * len(CLASSES)
    assert list(cmp.summary().index) == cmp.names
    # LOO on one log-likelihood value per row; a note saying what the one-vs-all elpd is of
    loo = cmp.az.loo(cmp.idata)
    assert np.isfinite(float(np.asarray(loo["elpd_loo"] if "elpd_loo" in loo else loo.elpd_loo)))
    assert cmp.idata.log_likelihood["y"].shape[-1] == len(y)
    table = cmp.loo()
    assert set(cmp.samples) <= set(table.index)
    assert (LOO_NOTE in table.attrs["notes"]) == one_vs_all
    # the posterior-predictive check: class codes of the observed rows
    rep = cmp.idata.posterior_predictive["y"].values
    assert rep.shape == (1, SMALL["num_samples"], len(y)) and set(np.unique(rep)) <= {0.0, 1.0, 2.0}
    np.testing.assert_array_equal(cmp.idata.observed_data["y"].values, np.searchsorted(CLASSES, y))
    # the verdict: one row per (input, class), the bias left out (and SMLR's reference class, zero by definition)
    verdict = cmp.verdict()
    inputs = int(np.sum(np.std(cmp.design, axis=0) > 0))  # design columns that are not constant
    assert len(verdict) == inputs * (len(CLASSES) - (0 if one_vs_all else 1))
    # held-out scores: the point's is the estimator's predict_proba; a sampler's from its draws
    scores = cmp.predictive()
    proba = est.predict_proba(X_test)
    expected = np.mean(np.log(proba[np.arange(len(y_test)), np.searchsorted(est.classes_, y_test)]))
    np.testing.assert_allclose(scores.loc["point estimate", "log_score"], expected, rtol=1e-12)
    for s, idata in cmp.samples.items():
        prob = idata.predictions["prob"].values
        np.testing.assert_allclose(prob.sum(axis=-1), 1.0, rtol=1e-10)
        log_lik = idata.predictions["log_lik"].values.reshape(-1, len(y_test))
        mean_log = np.mean(scipy.special.logsumexp(log_lik, axis=0) - np.log(log_lik.shape[0]))
        np.testing.assert_allclose(scores.loc[s, "log_score"], mean_log, rtol=1e-12)
        assert 0.0 <= scores.loc[s, "error_rate"] <= 1.0
    # projection selection: refused, naming why; a one-vs-all posterior's per class
    with pytest.raises(ValueError, match="one-vs-all" if one_vs_all else "multinomial"):
        cmp.select()
    if one_vs_all:
        table = cmp.select(classifier=CLASSES[0], num_draws=15)
        assert table.attrs["classifier"] == CLASSES[0] and np.all(np.isfinite(table["elpd"]))


def test_one_vs_all_report_says_what_its_loo_is(tmp_path):
    X, y = three_classes()
    cmp = sparsebayes.compare(SparseProbitClassifier(prior="laplace").fit(X, y), X, y, samplers=("nuts",),
                              progress_bar=False, prior_draws=50, **SMALL)
    report = (cmp.save(tmp_path / "report") / "report.md").read_text(encoding="utf-8")
    assert "one-vs-all" in report and "not comparable with a multinomial" in report
    for c in CLASSES:  # the selection per class, on its k-vs-rest model
        assert f"### class {c} (vs rest)" in report
    assert (tmp_path / "report" / "selection.png").exists()


def test_one_vs_all_selection_per_class_is_the_k_vs_rest_models():
    """``select(classifier=k)`` of a one-vs-all comparison is the projection selection of the binary
    comparison of ``y == k`` whose draws are class ``k``'s (the same seed): the same table."""
    from sklearn.base import clone

    from sparsebayes.inference.posterior.twin_one_vs_all import class_seed

    X, y = three_classes()
    est = SparseProbitClassifier(prior="laplace").fit(X, y)
    cmp = sparsebayes.compare(est, X, y, samplers=("nuts",), progress_bar=False, prior_draws=50, seed=4, **SMALL)
    with pytest.raises(ValueError, match=r"select\(classifier=k\)"):
        cmp.select()
    with pytest.raises(ValueError, match="one of the classes"):
        cmp.select(classifier="z")
    k, label = 1, CLASSES[1]
    table = cmp.select(classifier=label, num_draws=15)
    assert table.attrs["classifier"] == label
    binary = sparsebayes.compare(clone(est).fit(X, y == label), X, y == label, samplers=("nuts",), progress_bar=False,
                                 prior_draws=50, seed=class_seed(4, k), **SMALL)
    expected = binary.select(num_draws=15)
    assert list(table["added"]) == list(expected["added"])
    numeric = [c for c in expected.columns if c != "added"]
    np.testing.assert_allclose(table[numeric].to_numpy(dtype=float), expected[numeric].to_numpy(dtype=float),
                               rtol=1e-10, atol=1e-12)
    assert table.attrs["suggested_size"] == expected.attrs["suggested_size"]
    with pytest.raises(ValueError, match="one model"):
        binary.select(classifier=label)
