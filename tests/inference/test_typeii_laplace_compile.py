"""What the type-II Laplace engine compiles: one copy of the step for a small fit, and nothing on a refit.

A small fit (``N · M · K`` at most ``typeii_laplace_mode.NARROW_ABOVE``) runs its step on all ``K`` slots,
at XLA's optimization level 0 (``QUICK_COMPILE``); a larger one gathers the active slots into the
narrow widths of ``ACTIVE_WIDTHS`` (one ``lax.switch`` branch, one compiled copy of the step, per
width). Free slots are decoupled from the active ones, so both compute the same fit: checked here
against each other, the narrow path forced by ``NARROW_ABOVE = 0``.
"""
import jax
import numpy as np
import pytest
from jax._src import monitoring

from sparsebayes.inference import PoissonRVMRegressor, RVMClassifier
from sparsebayes.inference.engines import typeii_laplace as tl
from sparsebayes.inference.engines import typeii_laplace_mode
from sparsebayes.inference.estimators._base import fit_feature_design
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, PoissonLikelihood


@pytest.fixture
def fresh_programs(request):
    """No program compiled under another width rule is reused, nor left for later tests."""
    jax.clear_caches()
    request.addfinalizer(jax.clear_caches)


def test_the_width_rule():
    assert typeii_laplace_mode._widths((224, 224), 16) == (16,)  # small: one copy of the step
    assert typeii_laplace_mode._widths((2048, 2048), 16) == (4, 8, 16)
    assert typeii_laplace_mode._widths((2048, 2048), 8) == (4, 8)
    assert typeii_laplace_mode._widths((2048, 2048), 32) == (32,)  # a fit that outgrew 16 slots: more than 8 active


def _kernel_problem(likelihood, n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    eta = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    t = (rng.random(n) < 1 / (1 + np.exp(-2 * eta))).astype(float) if isinstance(
        likelihood, BernoulliLogisticLikelihood) else rng.poisson(np.exp(eta)).astype(float)
    _, Phi = fit_feature_design(X, "kernel", kernel_width=0.7, bias=True, center=True, scale=True)
    return Phi, t, np.ones(Phi.shape[1], bool)


@pytest.mark.parametrize("likelihood", [PoissonLikelihood(), BernoulliLogisticLikelihood()], ids=lambda k: k.name)
def test_one_width_and_the_narrow_widths_give_the_same_fit(likelihood, monkeypatch, fresh_programs):
    Phi, t, mask = _kernel_problem(likelihood)
    one = tl.fit(Phi, t, mask, likelihood=likelihood)
    monkeypatch.setattr(typeii_laplace_mode, "NARROW_ABOVE", 0)
    jax.clear_caches()
    narrow = tl.fit(Phi, t, mask, likelihood=likelihood)
    assert int(one.n_iter) == int(narrow.n_iter) and bool(one.converged) == bool(narrow.converged)
    b1, b2 = tl.coefficients(one, Phi.shape[1]), tl.coefficients(narrow, Phi.shape[1])
    np.testing.assert_array_equal(b1 != 0, b2 != 0)  # the same basis functions kept
    # the modes are found to a Newton step of 1e-8 relative and the weakest weights sit near their
    # pruning threshold, where α = s²/(q² − s) amplifies rounding (as between XLA's optimization levels)
    assert float(one.objective) == pytest.approx(float(narrow.objective), rel=1e-9)
    np.testing.assert_allclose(b1, b2, rtol=1e-5, atol=1e-9 * np.max(np.abs(b1)))


def _count_compiles(fn):
    names = []

    def listen(event, secs, **kw):
        if event.endswith("backend_compile_duration"):
            names.append(kw.get("fun_name"))

    monitoring.register_event_duration_secs_listener(listen)
    try:
        fn()
    finally:
        monitoring.unregister_event_duration_listener(listen)
    return names


def test_a_refit_with_new_hyperparameters_or_rows_of_the_same_bucket_compiles_nothing(fresh_programs):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(210, 4))
    y = rng.poisson(np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1])).astype(float)
    first = _count_compiles(lambda: PoissonRVMRegressor().fit(X[:200], y[:200]))
    assert "jit(_start_and_run)" in first
    again = _count_compiles(lambda: PoissonRVMRegressor(tol=1e-3, max_iter=50).fit(X, y))  # 210 rows: 224 padded
    assert again == [], again
    Xc = rng.normal(size=(120, 3))
    yc = (Xc[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    RVMClassifier().fit(Xc, yc)
    assert _count_compiles(lambda: RVMClassifier(tol=1e-4, max_iter=300).fit(Xc[:118], yc[:118])) == []
