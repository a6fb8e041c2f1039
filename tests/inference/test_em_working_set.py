"""Working-set EM (:mod:`sparsebayes.inference.engines.em_working_set`) against the full EM, scikit-learn's
Lasso, and the closed forms of its check."""
import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from sparsebayes.inference import AdaptiveSparseRegressor
from sparsebayes.inference.engines import em_working_set as ws
from sparsebayes.inference.engines.em_slices import fit_em
from sparsebayes.inference.engines.em_working_set import coordinate_keeps, fit_em_working_set, sufficient_design
from sparsebayes.models.priors.horseshoe import HorseshoePrior
from sparsebayes.models.likelihoods import GaussianLikelihood
from sparsebayes.models.priors import JeffreysPrior, LaplacePrior

LIK = GaussianLikelihood()
TIGHT = dict(tol=1e-13, max_iter=100_000)


def _known_support(n=400, p=60, k=5, seed=0):
    """A design whose sparse answer is clear: ``k`` strong weights, and noise whose part inside the
    columns' span is a tenth of its size (so no noise column reaches a z-statistic near 2)."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, p))
    truth = np.zeros(p)
    support = np.sort(rng.choice(p, k, replace=False))
    truth[support] = rng.choice([-1.0, 1.0], k) * rng.uniform(1.0, 3.0, k)
    e = rng.normal(size=n)
    inside = H @ np.linalg.lstsq(H, e, rcond=None)[0]
    y = H @ truth + 0.5 * (e - inside) + 0.05 * inside
    return H, y, truth, support


def _leading_support(n, p, k, sizes, seed):
    """A Gaussian design ``(n, p)`` and ``y`` with unit noise, whose first ``k`` weights have sizes uniform
    in ``sizes`` and random signs, the others 0."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, p))
    truth = np.zeros(p)
    truth[:k] = rng.uniform(*sizes, k) * rng.choice([-1, 1], k)
    return H, H @ truth + rng.normal(size=n)


def _bad_screen(support, p):
    """A first working set that leaves out every true column but the first, and holds three others."""
    others = np.setdiff1d(np.arange(p), support)[:3]
    return np.concatenate([support[:1], others])


@pytest.mark.parametrize("prior, noise_var", [
    (LaplacePrior(gamma=400.0), 0.25),
    (LaplacePrior(gamma=400.0), None),
    (JeffreysPrior(), None),
    (HorseshoePrior(tau=0.1), None),
], ids=["laplace-fixed-noise", "laplace", "jeffreys", "horseshoe"])
def test_working_set_em_equals_full_em(prior, noise_var):
    """From a first working set missing all but one of the true columns, the check re-admits them and
    the fit equals the full EM's (both at tol 1e-13) to 1e-8, the support included."""
    H, y, _, support = _known_support()
    full = fit_em(H, y, prior, LIK, noise_var=noise_var, **TIGHT)
    got = fit_em_working_set(H, y, prior, LIK, noise_var=noise_var, working_set=_bad_screen(support, H.shape[1]),
                             **TIGHT)
    assert full.converged and got.converged
    np.testing.assert_array_equal(np.flatnonzero(got.beta), np.flatnonzero(full.beta))
    assert set(support) <= set(np.flatnonzero(got.beta))
    np.testing.assert_allclose(got.beta, full.beta, rtol=0, atol=1e-8 * np.max(np.abs(full.beta)))
    np.testing.assert_allclose(got.noise_var, full.noise_var, rtol=1e-8)
    np.testing.assert_allclose(got.objective, full.objective, rtol=1e-9)


def test_the_check_finds_a_wrongly_excluded_column():
    """EM on a working set without a true column (one round: no re-admission) stops with that column
    violating the Lasso's KKT condition ``|h_jᵀr| ≤ σ²√γ`` (computed here directly), the check says to
    admit it, and the full working-set fit re-admits it and satisfies the condition everywhere."""
    H, y, _, support = _known_support(seed=1)
    prior, s2 = LaplacePrior(gamma=400.0), 0.25
    lam = s2 * np.sqrt(prior.gamma)
    first = _bad_screen(support, H.shape[1])
    with pytest.warns(RuntimeWarning, match="after 1 rounds"):
        one = fit_em_working_set(H, y, prior, LIK, noise_var=s2, working_set=first, max_rounds=1, **TIGHT)
    assert not one.converged
    missing = np.setdiff1d(support, first)
    assert np.all(one.beta[missing] == 0)
    corr = np.abs(H.T @ (y - H @ one.beta))
    assert np.all(corr[missing] > lam * 1.01)  # the KKT check the screen failed
    keeps = coordinate_keeps(prior, corr + np.einsum("ij,ij->j", H, H) * np.abs(one.beta),
                             np.einsum("ij,ij->j", H, H), s2, current=one.beta)
    assert np.all(keeps[missing])
    fixed = fit_em_working_set(H, y, prior, LIK, noise_var=s2, working_set=first, **TIGHT)
    assert np.all(fixed.beta[missing] != 0)
    zero = fixed.beta == 0
    assert np.all(np.abs(H.T @ (y - H @ fixed.beta))[zero] <= lam * (1 + 1e-9))


@pytest.mark.parametrize("noise_var", [0.25, None], ids=["fixed-noise", "estimated-noise"])
def test_laplace_working_set_em_equals_sklearn_lasso(noise_var):
    """Laplace EM's answer is the Lasso at ``α = σ²√γ/n`` (scikit-learn's scaling, no intercept), with
    σ² fixed or at EM's estimate; on the working-set path from the default screen, to 1e-6."""
    n, p = 600, 150
    H, y = _leading_support(n, p, 12, (0.5, 2.0), seed=2)
    prior = LaplacePrior(gamma=900.0)
    got = fit_em_working_set(H, y, prior, LIK, noise_var=noise_var, start_size=16, **TIGHT)
    assert got.converged
    alpha = got.noise_var * np.sqrt(prior.gamma) / n
    lasso = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(H, y)
    np.testing.assert_allclose(got.beta, lasso.coef_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got.beta != 0, lasso.coef_ != 0)


def test_coordinate_keeps_matches_the_closed_forms():
    """Laplace: kept iff ``|z| ≥ σ²√γ``; Jeffreys: iff ``|z| ≥ 2σ‖h‖`` (the one-weight EM map's fixed
    points); checked 1e-3 either side of each threshold."""
    rng = np.random.default_rng(3)
    d = rng.uniform(0.5, 50.0, 40)
    s2 = 0.3
    for prior, threshold in [(LaplacePrior(gamma=7.0), np.full(40, s2 * np.sqrt(7.0))),
                             (JeffreysPrior(), 2.0 * np.sqrt(s2 * d))]:
        for side, want in [(1.001, True), (0.999, False)]:
            z = threshold * side * rng.choice([-1.0, 1.0], 40)
            assert np.all(coordinate_keeps(prior, z, d, s2) == want)


def test_sufficient_design_has_the_data_s_statistics():
    """``H̃ᵀH̃ = HᵀH``, ``H̃ᵀỹ = Hᵀy`` and ``‖ỹ − H̃β‖ = ‖y − Hβ‖``, also for collinear columns (the
    eigenvalue branch)."""
    rng = np.random.default_rng(4)
    H = rng.normal(size=(50, 6))
    for X in (H, np.column_stack([H, H[:, 0] + H[:, 1]])):
        y = rng.normal(size=50)
        b = rng.normal(size=X.shape[1])
        Hs, ys = sufficient_design(X.T @ X, X.T @ y, y @ y)
        assert Hs.shape == (X.shape[1] + 1, X.shape[1])
        np.testing.assert_allclose(Hs.T @ Hs, X.T @ X, atol=1e-10)
        np.testing.assert_allclose(Hs.T @ ys, X.T @ y, atol=1e-10)
        np.testing.assert_allclose(np.linalg.norm(ys - Hs @ b), np.linalg.norm(y - X @ b), rtol=1e-10)


def test_jeffreys_ends_on_its_support():
    """At the working-set fit no nonzero weight is one EM would still prune (the check's test, on the
    weights and the residual computed here), and every column left out is one it would not keep;
    the full EM at the default tolerance stops with weights in transit to 0."""
    n, p = 2000, 200
    H, y = _leading_support(n, p, 10, (0.3, 1.0), seed=5)
    prior = JeffreysPrior()
    d = np.einsum("ij,ij->j", H, H)

    def would_keep(res):
        z = H.T @ (y - H @ res.beta) + d * res.beta
        return coordinate_keeps(prior, z, d, res.noise_var, current=res.beta)

    got = fit_em_working_set(H, y, prior, LIK, start_size=32)
    np.testing.assert_array_equal(would_keep(got), got.beta != 0)
    assert set(range(10)) <= set(np.flatnonzero(got.beta))
    full = fit_em(H, y, prior, LIK)
    assert np.any((full.beta != 0) & ~would_keep(full))


def test_the_estimator_takes_the_working_set_at_large_n_p(monkeypatch):
    """``AdaptiveSparseRegressor`` takes the working-set path once ``n · p`` reaches MIN_ENTRIES (lowered
    here) and fits what the full EM fits (both at tol 1e-12); below it, the full EM as before."""
    H, y, _, support = _known_support(n=300, p=40, seed=6)
    calls = []
    real = ws.fit_em_working_set
    monkeypatch.setattr("sparsebayes.inference.estimators.em_fit.fit_em_working_set",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    kw = dict(prior="laplace", gamma=400.0, tol=1e-12, max_iter=100_000)
    small = AdaptiveSparseRegressor(**kw).fit(H, y)
    assert not calls
    monkeypatch.setattr(ws, "MIN_ENTRIES", 1000)
    big = AdaptiveSparseRegressor(**kw).fit(H, y)
    assert calls
    np.testing.assert_allclose(big.beta_, small.beta_, rtol=0, atol=1e-8 * np.max(np.abs(small.beta_)))
    np.testing.assert_allclose(big.noise_var_, small.noise_var_, rtol=1e-8)
    np.testing.assert_allclose(big.sigma_, small.sigma_, rtol=1e-6, atol=1e-12)


def test_bad_input():
    H, y, _, _ = _known_support(n=100, p=10)
    from sparsebayes.models.likelihoods import make_likelihood
    with pytest.raises(ValueError, match="Gaussian"):
        fit_em_working_set(H, (y > 0).astype(float), JeffreysPrior(), make_likelihood("poisson"))
    with pytest.raises(ValueError, match="working_set"):
        fit_em_working_set(H, y, JeffreysPrior(), LIK, working_set=[10])
    with pytest.raises(ValueError, match="one value per row"):
        fit_em_working_set(H, y[:-1], JeffreysPrior(), LIK)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_em_working_set(H, y, JeffreysPrior(), LIK)
