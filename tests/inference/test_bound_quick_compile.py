"""Small bound-optimization problems run the programs compiled at XLA optimization level 0
(:mod:`sparsebayes.inference.engines._compile`), larger ones the optimized programs; both reach the same MAP.

The quick programs exist for the first fit's compile time (``comparisons/bench/first_fit.py``): the
same HLO, less optimized machine code. They may move the estimate in the last bits, so the size rule
(:data:`~sparsebayes.inference.engines.bound_problem.QUICK_MAX_SIZE`) keeps the shapes of the paper
reproductions (kernel bases on 80 or more training points, digits) on the optimized programs.
"""
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sparsebayes.inference.engines import bound, bound_problem
from sparsebayes.inference.estimators.smlr import SMLRClassifier

BENCH = make_classification(n_samples=200, n_features=8, random_state=0)  # the first-fit bench's data


def _fits(monkeypatch, clf, X, y):
    """``clf`` fitted twice, by the size rule and with every problem on the optimized programs, and
    the number of new programs each of ``bound._run_quick`` / ``bound._run`` holds after the first."""
    quick0, full0 = bound._run_quick._cache_size(), bound._run._cache_size()
    by_rule = clf.fit(X, y).coef_.copy()
    built = (bound._run_quick._cache_size() - quick0, bound._run._cache_size() - full0)
    monkeypatch.setattr(bound_problem, "QUICK_MAX_SIZE", 0)
    optimized = clf.fit(X, y).coef_.copy()
    return by_rule, optimized, built


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_a_small_problem_takes_the_quick_program_and_its_map(monkeypatch, penalty):
    X, y = BENCH
    clf = SMLRClassifier(penalty=penalty, lam=1.0, tol=1e-10, random_state=0)  # both programs run to the MAP
    assert bound_problem.is_small((224, 16), 1)  # the bench's padded design: 200 rows to 224, 9 columns to 16
    quick, optimized, built = _fits(monkeypatch, clf, X, y)
    assert clf.solver_ == "newton" and clf.optimality_residual_ < 1e-8
    assert built[1] == 0, "a small problem compiled the optimized program"
    # tol=1e-10 stops both within a residual of 1e-8 of the MAP (the optimized program's path is the longer)
    np.testing.assert_allclose(quick, optimized, rtol=1e-7, atol=1e-9)
    if penalty == "l2":  # the estimator's documented oracle: liblinear on the standardized inputs
        ref = LogisticRegression(C=1.0, solver="liblinear", intercept_scaling=1, tol=1e-12, max_iter=100000)
        ref.fit(StandardScaler().fit_transform(X), y)
        # coef_ is on the raw inputs; the standardized fit's weights divided by the SDs
        np.testing.assert_allclose(quick, ref.coef_ / X.std(axis=0), rtol=1e-5, atol=1e-7)


def test_a_kernel_fit_on_80_points_keeps_the_optimized_program(monkeypatch):
    """The smallest reproduction shape on the Newton solver, crabs' 80 training points with a kernel
    basis (81 columns, padded to 96), stays on the optimized program: its bits do not move."""
    X, y = make_classification(n_samples=80, n_features=5, random_state=1)
    clf = SMLRClassifier(penalty="l1", lam=0.1, features="kernel", standardize=False, random_state=0)
    assert not bound_problem.is_small((80, 96), 1)
    by_rule, optimized, built = _fits(monkeypatch, clf, X, y)
    assert built[0] == 0, "a reproduction-sized problem compiled the quick program"
    np.testing.assert_array_equal(by_rule, optimized)


def test_a_first_smlr_fit_builds_two_programs(first_fit_programs):
    """A first ``SMLRClassifier`` fit in a fresh process on the bench's data builds the problem and the
    solver loop (both the quick twins), and nothing else."""
    fits = first_fit_programs(
        "from sklearn.datasets import make_classification\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "from sparsebayes.inference import SMLRClassifier\n"
        "X, y = make_classification(n_samples=200, n_features=8, random_state=0)\n"
        "FITS = [('SMLRClassifier', SMLRClassifier(), StandardScaler().fit_transform(X), y)]\n")
    assert sorted(fits["SMLRClassifier"]) == ["jit(_build_problem)", "jit(_run)"], fits
