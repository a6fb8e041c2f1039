"""The factored kernel design (inference/lowrank.py), and EM and type-II on it, against the dense fits."""
import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from sparsebayes.comparisons import datasets, synthetic
from sparsebayes.inference import (
    AdaptiveSparseRegressor,
    BLSRegressor,
    FLAPRegressor,
    RVMRegressor,
    SparseProbitClassifier,
)
from sparsebayes.inference.engines.lowrank import RANK_TOL, factor_kernel_design, gaussian_kernel_rows, pivoted_cholesky
from sparsebayes.inference.engines.em_slices import fit_em
from sparsebayes.models.features import GaussianKernelFeatures, gaussian_kernel
from sparsebayes.models.likelihoods import GaussianLikelihood, ProbitLikelihood
from sparsebayes.models.priors import JeffreysPrior, LaplacePrior


def _sinc_design(n, seed=0, width=3.0):
    X, y = synthetic.sinc(n, sigma=0.1, seed=seed)
    return X, y, GaussianKernelFeatures(width=width).fit_transform(X)


def _cholesky(K, tol, max_rank):
    return pivoted_cholesky(K.__getitem__, np.diag(K), tol, max_rank)


def factor_gaussian_kernel_design(X, width, bias):
    return factor_kernel_design(gaussian_kernel_rows(X, width), np.ones(len(X)), bias=bias)


def test_pivoted_cholesky_residual_is_within_tol_entrywise():
    X, _, _ = _sinc_design(300)
    K = gaussian_kernel(X, X, 3.0)
    for tol in (1e-6, 1e-10, RANK_TOL):
        L = _cholesky(K, tol, 300)
        assert L is not None and L.shape[1] < 40
        assert np.max(np.abs(K - L @ L.T)) <= tol * (1 + 1e-6) + 1e-15
    assert _cholesky(K, RANK_TOL, 10) is None  # needs more than 10


@pytest.mark.parametrize("bias", [True, False])
def test_factor_reproduces_the_design_with_an_orthonormal_basis(bias):
    X, _, _ = _sinc_design(400)
    H = GaussianKernelFeatures(width=3.0, bias=bias).fit_transform(X)
    f = factor_gaussian_kernel_design(X, 3.0, bias=bias)
    r = f.basis.shape[1]
    assert f.design.shape == (r, H.shape[1]) and r < 40
    np.testing.assert_allclose(f.basis.T @ f.basis, np.eye(r), atol=1e-12)
    assert np.max(np.abs(H - f.basis @ f.design)) < 1e-12


def test_no_factor_for_a_full_rank_kernel():
    train, _ = datasets.ripley_synth()
    assert factor_gaussian_kernel_design(train.X[:100], 0.5, bias=True) is None


def test_laplace_em_on_the_factor_equals_the_dense_em():
    """Laplace with fixed σ² is convex: both runs must reach the same optimum (slowly, on
    collinear kernels: about 10⁴ iterations)."""
    X, y, H = _sinc_design(100)
    f = factor_gaussian_kernel_design(X, 3.0, bias=True)
    kw = dict(noise_var=0.01, tol=1e-6, max_iter=50_000)
    dense = fit_em(H, y, LaplacePrior(2.0), GaussianLikelihood(), **kw)
    fact = fit_em(H, y, LaplacePrior(2.0), GaussianLikelihood(), factor=f, **kw)
    assert dense.converged and fact.converged
    assert np.array_equal(dense.beta != 0, fact.beta != 0)
    np.testing.assert_allclose(fact.beta, dense.beta, atol=1e-8 * np.max(np.abs(dense.beta)))
    assert fact.objective == pytest.approx(dense.objective, rel=1e-10)


def test_jeffreys_regression_and_probit_on_the_factor_equal_the_dense_em():
    X, y, H = _sinc_design(300)
    dense = fit_em(H, y, JeffreysPrior(), GaussianLikelihood())
    fact = fit_em(None, y, JeffreysPrior(), GaussianLikelihood(), factor=factor_gaussian_kernel_design(X, 3.0, bias=True))
    assert np.array_equal(dense.beta != 0, fact.beta != 0)
    np.testing.assert_allclose(fact.beta, dense.beta, atol=1e-5 * np.max(np.abs(dense.beta)))
    assert fact.noise_var == pytest.approx(dense.noise_var, rel=1e-6)
    assert fact.objective == pytest.approx(dense.objective, rel=1e-8)

    train, _ = datasets.ripley_synth()
    Hc = GaussianKernelFeatures(width=2.0).fit_transform(train.X)
    f = factor_gaussian_kernel_design(train.X, 2.0, bias=True)
    assert f is not None
    t = train.y.astype(np.float64)
    dense = fit_em(Hc, t, JeffreysPrior(), ProbitLikelihood(), y_init=2 * t - 1)
    fact = fit_em(Hc, t, JeffreysPrior(), ProbitLikelihood(), y_init=2 * t - 1, factor=f)
    assert np.array_equal(dense.beta != 0, fact.beta != 0)
    np.testing.assert_allclose(fact.beta, dense.beta, atol=1e-6 * np.max(np.abs(dense.beta)))
    assert fact.objective == pytest.approx(dense.objective, rel=1e-8)


def test_estimators_use_the_factor_only_for_low_rank_kernel_designs():
    X, y, _ = _sinc_design(300)
    fast = AdaptiveSparseRegressor(features="kernel", kernel_width=3.0).fit(X, y)
    dense = AdaptiveSparseRegressor(features="kernel", kernel_width=3.0, low_rank=False).fit(X, y)
    assert 10 < fast.design_rank_ < 40 and dense.design_rank_ is None
    np.testing.assert_allclose(fast.predict(X), dense.predict(X), atol=1e-6)
    assert AdaptiveSparseRegressor(features="linear").fit(X, y).design_rank_ is None

    train, _ = datasets.ripley_synth()
    assert SparseProbitClassifier(features="kernel", kernel_width=0.5).fit(train.X, train.y).design_rank_ is None
    wide = SparseProbitClassifier(features="kernel", kernel_width=2.0).fit(train.X, train.y)
    assert wide.design_rank_ is not None
    dense = SparseProbitClassifier(features="kernel", kernel_width=2.0, low_rank=False).fit(train.X, train.y)
    np.testing.assert_allclose(wide.predict_proba(train.X), dense.predict_proba(train.X), atol=1e-6)

    # one-vs-all (three classes by the first input's terciles) shares the factor
    y3 = np.digitize(train.X[:, 0], np.quantile(train.X[:, 0], [1 / 3, 2 / 3]))
    wide = SparseProbitClassifier(features="kernel", kernel_width=2.0).fit(train.X, y3)
    dense = SparseProbitClassifier(features="kernel", kernel_width=2.0, low_rank=False).fit(train.X, y3)
    assert wide.design_rank_ is not None and np.array_equal(wide.beta_ != 0, dense.beta_ != 0)
    np.testing.assert_allclose(wide.predict_proba(train.X), dense.predict_proba(train.X), atol=1e-6)


def test_pivoted_cholesky_gives_up_early_on_a_slowly_decaying_kernel(monkeypatch):
    """Pima's full-rank kernel stops within 16 pivots (the give-up rule), not at ``max_rank``; a
    low-rank one whose residual plateaus first (1-D, narrow kernels) is not given up on."""
    import sparsebayes.inference.engines.lowrank as lowrank

    verdicts = []

    def recording(largest, j, tol, max_rank):
        verdicts.append((j, lowrank_hopeless(largest, j, tol, max_rank)))
        return verdicts[-1][1]

    lowrank_hopeless = lowrank._hopeless
    monkeypatch.setattr(lowrank, "_hopeless", recording)
    train, _ = datasets.pima()
    X = StandardScaler().fit_transform(train.X)  # figueiredo-table4-pima's design (h = 4)
    assert _cholesky(gaussian_kernel(X, X, 4.0), RANK_TOL, 50) is None
    assert verdicts[-1][1] and verdicts[-1][0] <= 16

    verdicts.clear()
    X, _, _ = _sinc_design(300)
    L = _cholesky(gaussian_kernel(X, X, 1.0), RANK_TOL, 75)
    assert L is not None and 50 < L.shape[1] <= 75
    assert not any(v for _, v in verdicts)


def test_the_factor_from_formed_or_on_demand_rows_gives_the_same_fit(monkeypatch):
    """Above ``FORM_KERNEL_DESIGN_MAX_N`` the kernel rows are computed on demand; the fit is the same."""
    import sparsebayes.inference.estimators._base as base

    X, y, _ = _sinc_design(400)
    monkeypatch.setattr(base, "FORM_KERNEL_DESIGN_MAX_N", 10_000)
    formed = AdaptiveSparseRegressor(features="kernel", kernel_width=3.0).fit(X, y)
    monkeypatch.setattr(base, "FORM_KERNEL_DESIGN_MAX_N", 100)
    on_demand = AdaptiveSparseRegressor(features="kernel", kernel_width=3.0).fit(X, y)
    assert formed.design_rank_ == on_demand.design_rank_ is not None
    np.testing.assert_allclose(on_demand.predict(X), formed.predict(X), atol=1e-8)
    # a design that is not low-rank is formed after the factor gives up
    train, _ = datasets.ripley_synth()
    clf = SparseProbitClassifier(features="kernel", kernel_width=0.5).fit(train.X, train.y)
    monkeypatch.setattr(base, "FORM_KERNEL_DESIGN_MAX_N", 10_000)
    ref = SparseProbitClassifier(features="kernel", kernel_width=0.5).fit(train.X, train.y)
    assert clf.design_rank_ is None and np.array_equal(clf.beta_, ref.beta_)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("Est", [RVMRegressor, BLSRegressor, FLAPRegressor])
def test_typeii_on_the_factor_takes_the_steps_of_the_dense_fit(Est, fit_intercept, monkeypatch):
    """Type-II on ``Φ̃``, ``Qᵀy`` with the real ``N`` and ``yᵀy``: the same moves, evidence and fit."""
    import sparsebayes.inference.estimators.typeii_fit as estimators

    X, y, _ = _sinc_design(200)
    assert RVMRegressor(features=GaussianKernelFeatures(width=3.0)).fit(X, y).design_rank_ is None  # N ≤ 300
    monkeypatch.setattr(estimators, "LOW_RANK_MIN_N", 100)
    kw = dict(features=GaussianKernelFeatures(width=3.0), fit_intercept=fit_intercept)
    fact = Est(**kw).fit(X, y)
    dense = Est(low_rank=False, **kw).fit(X, y)
    assert fact.design_rank_ is not None and dense.design_rank_ is None
    assert np.array_equal(fact.active_, dense.active_) and fact.n_iter_ == dense.n_iter_
    assert fact.objective_ == pytest.approx(dense.objective_, abs=1e-5)
    assert fact.noise_var_ == pytest.approx(dense.noise_var_, rel=1e-6)
    np.testing.assert_allclose(fact.design_offset_, dense.design_offset_, atol=1e-12)
    mean_f, std_f = fact.predict(X, return_std=True)
    mean_d, std_d = dense.predict(X, return_std=True)
    np.testing.assert_allclose(mean_f, mean_d, atol=1e-7)
    np.testing.assert_allclose(std_f, std_d, rtol=1e-6)
