"""Device-aware choices, with JAX's backend stubbed (the suite runs where there is no GPU).

``solver="auto"`` (:func:`sparsebayes.inference.estimators.map_fit.choose_solver`) takes the dense block update
on an accelerator; the cross-validated estimator reaches that choice through every fold's fit and
through the refit, not only through the single-fit estimator (whose own tests are in
``test_smlr_estimator.py``).
"""
import numpy as np
import pytest
from sparsebayes.inference import SMLRCV


def _three_blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat([0, 1, 2], n // 3)
    return centers[y] + rng.normal(size=(n, 2)), y


@pytest.mark.parametrize("backend, expected", [("cuda", "block"), ("cpu", "newton")])
def test_smlrcv_folds_and_refit_choose_by_the_backend(backend, expected, monkeypatch):
    from sparsebayes.inference.estimators import map_fit

    chosen = []
    choose = map_fit.choose_solver

    def spy(solver, *args, **kwargs):
        chosen.append(choose(solver, *args, **kwargs))
        return chosen[-1]

    monkeypatch.setattr(map_fit.jax, "default_backend", lambda: backend)  # the backend stubbed
    monkeypatch.setattr(map_fit, "choose_solver", spy)
    X, y = _three_blobs(30)  # n ≤ (dm)² = 81 in every fold: Newton on a CPU, block on an accelerator
    est = SMLRCV(cv=2, n_lams=2, solver="auto").fit(X, y)
    assert len(chosen) >= 3  # two folds (every λ of their paths) and the refit
    assert set(chosen) == {expected} and est.solver_ == expected
