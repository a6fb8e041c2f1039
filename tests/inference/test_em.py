"""The EM engine: monotonicity, Lasso oracle, model = solver, Fig. 1 of 000, float64."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer.util import log_density
from sklearn.linear_model import Lasso

from sparsebayes.comparisons.synthetic import tibshirani_design
from sparsebayes.inference.engines.lowrank import factor_kernel_design, gaussian_kernel_rows
from sparsebayes.inference.engines import em
from sparsebayes.inference.engines.em import (
    SMALL_SOLVE,
    EMControls,
    EMData,
    RidgeStart,
    _active_gram_solve,
    _gram_solve,
    log_posterior,
)
from sparsebayes.inference.engines import em_slices
from sparsebayes.inference.engines.em_slices import EMDesign, fit_em
from sparsebayes.models.adaptive import sparse_probit_model, sparse_regression_model
from sparsebayes.models.likelihoods import GaussianLikelihood, ProbitLikelihood
from sparsebayes.models.priors import JeffreysPrior, LaplacePrior


def _regression(n=40, p=12, seed=0):
    rng = np.random.default_rng(seed)
    X = tibshirani_design(n, p, seed=rng)
    beta = np.zeros(p)
    beta[[0, 3, 7]] = [3.0, -2.0, 1.5]
    return X, X @ beta + rng.standard_normal(n)


def _probit(n=80, p=10, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[[0, 1]] = [2.0, -1.5]
    return X, (X @ beta + rng.standard_normal(n) > 0).astype(float)


CASES = [
    ("regression", JeffreysPrior()), ("regression", LaplacePrior(2.0)),
    ("probit", JeffreysPrior()), ("probit", LaplacePrior(2.0)),
]


@pytest.mark.parametrize("kind,prior", CASES)
def test_log_posterior_never_decreases(kind, prior):
    X, y = _regression() if kind == "regression" else _probit()
    lik = GaussianLikelihood() if kind == "regression" else ProbitLikelihood()
    y0 = y if kind == "regression" else 2 * y - 1
    beta0 = jnp.asarray(RidgeStart(X)(y0))
    data = EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X))
    s2 = jnp.asarray(float(np.var(y)) if kind == "regression" else 1.0)
    # estimate_noise: σ² by 000 eq. 12 for regression; the probit likelihood's update is its fixed unit variance
    model = em.EMModel(prior, lik)
    _, info = em.trace(em.init(data, model, beta0, s2), data, model, EMControls(prune_tol=1e-8, noise_floor=1e-12),
                       n_steps=60, estimate_noise=True)
    start = float(log_posterior(beta0, s2, data, prior, lik))  # the ridge start's, so step 1 is checked too
    obj = np.r_[start, np.asarray(info.objective)]
    n_active = np.r_[X.shape[1], np.asarray(info.n_active)]
    assert np.all(np.isfinite(obj))
    # the Jeffreys penalty drops a log|β_i| term when β_i is pruned, so there only steps that keep
    # the support are compared; the Laplace penalty is finite at 0 and every step must climb
    checked = n_active[1:] == n_active[:-1] if isinstance(prior, JeffreysPrior) else np.ones(len(obj) - 1, bool)
    assert checked.sum() >= 30  # most steps keep the support: the check is not vacuous
    assert np.all(np.diff(obj)[checked] >= -1e-9 * np.maximum(1.0, np.abs(obj[1:][checked])))


def _lasso_oracle_design(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "tall":
        X = tibshirani_design(60, 10, seed=rng)
    elif kind == "square":
        X = rng.standard_normal((30, 30))
    else:  # p > n
        X = rng.standard_normal((25, 60))
    beta = np.zeros(X.shape[1])
    beta[:3] = [2.0, -3.0, 1.5]
    return X, X @ beta + 0.5 * rng.standard_normal(X.shape[0])


@pytest.mark.parametrize("kind", ["tall", "square", "wide"])
def test_laplace_em_with_fixed_gamma_and_noise_equals_sklearn_lasso(kind):
    X, y = _lasso_oracle_design(kind, seed=3)
    n = X.shape[0]
    gamma, noise_var = 4.0, 0.8
    res = fit_em(X, y, LaplacePrior(gamma), GaussianLikelihood(), beta0=RidgeStart(X, 1e-2)(y),
                 noise_var=noise_var, tol=1e-13, max_iter=100000, prune_tol=1e-12)
    lasso = Lasso(alpha=noise_var * np.sqrt(gamma) / n, fit_intercept=False, tol=1e-14, max_iter=1000000).fit(X, y)
    np.testing.assert_allclose(res.beta, lasso.coef_, atol=1e-5)
    assert res.converged


def test_model_equals_solver_objective_up_to_a_constant():
    """EM's log posterior minus NumPyro's log density of the same (marginal Laplace) model is constant."""
    X, y = _regression()
    gamma, noise_var = 2.5, 0.7
    prior, lik = LaplacePrior(gamma), GaussianLikelihood()
    data = EMData(jnp.asarray(X), jnp.asarray(y), None)
    rng = np.random.default_rng(0)
    gaps = []
    for _ in range(5):
        beta = jnp.asarray(rng.standard_normal(X.shape[1]))
        ld, _ = log_density(sparse_regression_model, (jnp.asarray(X), jnp.asarray(y)),
                            dict(prior="laplace", gamma=gamma, noise_var=noise_var, marginal=True), {"beta": beta})
        gaps.append(float(log_posterior(beta, noise_var, data, prior, lik)) - float(ld))
    assert np.ptp(gaps) < 1e-8

    Xp, yp = _probit()
    datap = EMData(jnp.asarray(Xp), jnp.asarray(yp), None)
    gaps = []
    for _ in range(5):
        beta = jnp.asarray(rng.standard_normal(Xp.shape[1]))
        ld, _ = log_density(sparse_probit_model, (jnp.asarray(Xp), jnp.asarray(yp)),
                            dict(prior="laplace", gamma=gamma, marginal=True), {"beta": beta})
        gaps.append(float(log_posterior(beta, 1.0, datap, prior, ProbitLikelihood())) - float(ld))
    assert np.ptp(gaps) < 1e-8


def _jeffreys_orthogonal_rule(b, noise_var=1.0):
    """Fig. 1 of 000: orthogonal H (HᵀH = I), σ² fixed, EM started at β⁽⁰⁾ = Hᵀy."""
    H = np.eye(1)
    res = fit_em(H, np.array([b]), JeffreysPrior(), GaussianLikelihood(), beta0=np.array([b]),
                 noise_var=noise_var, tol=1e-12, max_iter=10000, prune_tol=1e-12)
    return res.beta[0]


def test_jeffreys_orthogonal_rule_is_between_soft_and_hard_threshold():
    grid = np.linspace(-6, 6, 241)
    est = np.array([_jeffreys_orthogonal_rule(b) for b in grid])
    # the fixed points of b' = b³/(σ² + b²)·... : β = (b + sqrt(b² − 4σ²))/2 when |b| > 2σ, else 0
    zero = np.abs(grid) < 2.0
    assert np.all(est[zero] == 0.0)  # exactly zero below the threshold
    big = np.abs(grid) > 2.0 + 1e-9
    assert np.all(np.abs(est[big]) > 0)
    soft = np.sign(grid) * np.maximum(np.abs(grid) - 2.0, 0.0)
    assert np.all(np.abs(est[big]) >= np.abs(soft[big]) - 1e-9)  # less shrinkage than soft (at the soft threshold 2σ)
    assert np.all(np.abs(est[big]) <= np.abs(grid[big]) + 1e-12)  # never beyond hard thresholding
    assert np.all(np.sign(est[big]) == np.sign(grid[big]))
    # tends to (Hᵀy)_i for large values
    for b in (10.0, 100.0, 1000.0):
        assert abs(_jeffreys_orthogonal_rule(b) - b) < 2.0 / b
    closed = (np.abs(grid[big]) + np.sqrt(grid[big] ** 2 - 4.0)) / 2 * np.sign(grid[big])
    np.testing.assert_allclose(est[big], closed, rtol=1e-6)


def test_solvers_run_in_float64():
    X, y = _regression()
    res = fit_em(X.astype(np.float32), y.astype(np.float32), JeffreysPrior(), GaussianLikelihood(),
                 beta0=RidgeStart(X)(y))
    assert res.beta.dtype == np.float64
    assert jax.config.jax_enable_x64
    assert jnp.zeros(1).dtype == jnp.float64


def test_pruned_weights_stay_zero_and_active_set_compaction_matches_full_run():
    rng = np.random.default_rng(5)
    n, p = 400, 300  # wide enough to pass through several active-set widths (300 -> 128 -> 32)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:4] = [3, -2, 2, 1]
    y = X @ beta + 0.3 * rng.standard_normal(n)
    b0 = RidgeStart(X)(y)
    res = fit_em(X, y, JeffreysPrior(), GaussianLikelihood(), beta0=b0, tol=1e-8, max_iter=500)
    # reference: same iterations on the full basis, no compaction
    data = EMData(jnp.asarray(X), jnp.asarray(y), None)
    s2 = jnp.asarray(float(np.var(y)))
    controls = EMControls(prune_tol=1e-8, noise_floor=1e-10 * float(np.mean(y**2)),
                          prune_floor=1e-8 * float(np.max(np.abs(b0))))
    model = em.EMModel(JeffreysPrior(), GaussianLikelihood())
    final, info = em.trace(em.init(data, model, b0, s2), data, model, controls,
                           n_steps=res.n_iter, estimate_noise=True)
    np.testing.assert_allclose(res.beta, np.asarray(final.beta), rtol=1e-6, atol=1e-9)
    assert np.all(np.diff(np.asarray(info.n_active)) <= 0)  # once zero, always zero
    support = set(np.flatnonzero(res.beta))
    assert {0, 1, 2, 3} <= support and len(support) < 0.1 * p  # the truth, and a sparse fit


def _zero_answer_cases():
    rng = np.random.default_rng(3)
    noise = (rng.standard_normal((30, 5)), 0.1 * rng.standard_normal(30))
    # 1 x 1 Lasso (1 − b)²/2 + √γ|b| with √γ = 2: b = 0; pure noise under γ = 1e4: β = 0;
    # orthogonal Jeffreys rule with |Hᵀy| = 1.5 < 2σ: exactly zero (000 Fig. 1)
    return [pytest.param(LaplacePrior(4.0), np.eye(1), np.array([1.0]), id="laplace-1x1"),
            pytest.param(LaplacePrior(1e4), *noise, id="laplace-noise"),
            pytest.param(JeffreysPrior(), np.eye(1), np.array([1.5]), id="jeffreys-1x1")]


@pytest.mark.parametrize("prior,H,y", _zero_answer_cases())
def test_every_weight_reaches_exact_zero_when_that_is_the_answer(prior, H, y):
    """A threshold relative to max|β| alone never prunes the largest weight: the floor at the start's scale does."""
    res = fit_em(H, y, prior, GaussianLikelihood(), noise_var=1.0, tol=1e-10, max_iter=5000)
    assert res.converged
    assert np.all(res.beta == 0.0)


@pytest.mark.parametrize("n_active", [0, 1, 3, 8])
def test_m_step_on_the_active_block_equals_the_full_width_solve(n_active):
    """With at most SMALL_SOLVE weights active, the M-step factorizes only their block; the
    padded coordinates (u = 0) repeat one inactive index. Same solution as the 20-wide solve."""
    assert n_active <= SMALL_SOLVE
    rng = np.random.default_rng(n_active)
    H = rng.normal(size=(30, 20))
    u = np.zeros(20)
    u[rng.choice(20, n_active, replace=False)] = rng.uniform(0.5, 2.0, n_active)
    rhs = u * (rng.normal(size=30) @ H)
    G = H.T @ H
    full = np.asarray(_gram_solve(jnp.asarray(u), jnp.asarray(G), 0.7, jnp.asarray(rhs)))
    block = np.asarray(_active_gram_solve(jnp.asarray(u), jnp.asarray(G), 0.7, jnp.asarray(rhs)))
    np.testing.assert_allclose(block, full, rtol=1e-12, atol=1e-14)
    assert np.all(block[u == 0] == 0.0)


@pytest.mark.parametrize("n,p", [(30, 8), (10, 25)])
def test_ridge_start_is_the_papers_on_unit_columns_and_scale_free_on_shorter_ones(n, p):
    """002 Step 2: ``(εI + HᵀH)⁻¹Hᵀy₀`` when every ‖h_i‖² ≥ 1 (checked against the ridge as a
    least-squares problem); a column shortened by ``c < 1`` gets the penalty ``εc²``, so its weight
    is the unit column's divided by ``c`` (primal and dual forms)."""
    rng = np.random.default_rng(n)
    H = rng.standard_normal((n, p)) + 1.0
    H /= np.linalg.norm(H, axis=0)
    y0 = rng.standard_normal(n)
    eps = 1e-2  # large enough to matter in the p > n case, so that the check can fail
    direct = np.linalg.lstsq(np.vstack([H, np.sqrt(eps) * np.eye(p)]), np.r_[y0, np.zeros(p)], rcond=None)[0]
    unit = RidgeStart(H, eps)(y0)
    np.testing.assert_allclose(unit, direct, rtol=1e-8, atol=1e-12)
    c = np.ones(p)
    c[:3] = [1e-3, 1e-6, 1e-9]
    np.testing.assert_allclose(RidgeStart(H * c, eps)(y0) * c, unit, rtol=1e-8, atol=1e-12)
    longer = np.linalg.lstsq(np.vstack([3.0 * H, np.sqrt(eps) * np.eye(p)]), np.r_[y0, np.zeros(p)], rcond=None)[0]
    np.testing.assert_allclose(RidgeStart(3.0 * H, eps)(y0), longer, rtol=1e-8, atol=1e-12)  # ε absolute there


@pytest.mark.parametrize("scale", [1e-9, 1e-4, 1e6])
def test_jeffreys_fits_do_not_depend_on_the_units_of_the_inputs(scale):
    """Jeffreys EM is invariant to rescaling a column (β_i scales inversely); with the paper's
    absolute ε = 1e-6 in the ridge start, inputs in units of 1e-9 were all pruned."""
    from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier

    X, y = _regression()
    ref = AdaptiveSparseRegressor(tol=1e-8).fit(X, y)
    fit = AdaptiveSparseRegressor(tol=1e-8).fit(X * scale, y)
    assert ref.n_active_ >= 3
    np.testing.assert_allclose(fit.coef_ * scale, ref.coef_, rtol=1e-5, atol=1e-8 * np.abs(ref.coef_).max())
    Xp, yp = _probit()
    ref = SparseProbitClassifier(tol=1e-8).fit(Xp, yp)
    fit = SparseProbitClassifier(tol=1e-8).fit(Xp * scale, yp)
    assert ref.n_active_ >= 2
    np.testing.assert_allclose(fit.coef_ * scale, ref.coef_, rtol=1e-5, atol=1e-8 * np.abs(ref.coef_).max())


def _padding_cases():
    X, y = _regression(n=37, p=13)
    Xp, yp = _probit(n=81, p=10)
    Xw, yw = _regression(n=20, p=60, seed=2)  # p > DUAL_RATIO · n: the dual M-step
    rng = np.random.default_rng(4)
    xs = np.sort(rng.uniform(-10, 10, (150, 1)), axis=0)
    factor = factor_kernel_design(gaussian_kernel_rows(xs, 3.0), np.ones(150), bias=True)
    ys = np.sinc(xs[:, 0] / np.pi) + 0.1 * rng.standard_normal(150)
    return [
        pytest.param(X, y, JeffreysPrior(), GaussianLikelihood(), {}, id="regression"),
        pytest.param(X, y, LaplacePrior(2.0), GaussianLikelihood(), {"noise_var": 0.5}, id="fixed-noise"),
        pytest.param(Xp, yp, JeffreysPrior(), ProbitLikelihood(), {"y_init": 2 * yp - 1}, id="probit"),
        pytest.param(Xw, yw, JeffreysPrior(), GaussianLikelihood(), {}, id="dual"),
        pytest.param(None, ys, JeffreysPrior(), GaussianLikelihood(), {"factor": factor}, id="factored"),
    ]


@pytest.mark.parametrize("H,y,prior,likelihood,kw", _padding_cases())
def test_padding_to_a_bucket_changes_no_step(monkeypatch, H, y, prior, likelihood, kw):
    """``fit_em`` pads the rows (and a factored design's rank) with zero rows and the first slice
    with zero columns, so that data of nearby sizes share compiled loops. Run on the exact shapes
    instead (``bucket`` the identity), it takes the same steps to the same fit: only the rounding
    of sums over more (zero) terms differs."""
    padded = fit_em(H, y, prior, likelihood, tol=1e-6, **kw)
    monkeypatch.setattr(em_slices, "bucket", lambda k, **_: k)
    exact = fit_em(H, y, prior, likelihood, tol=1e-6, **kw)
    assert padded.converged and exact.converged
    assert padded.n_iter == exact.n_iter
    np.testing.assert_array_equal(padded.beta != 0, exact.beta != 0)
    np.testing.assert_allclose(padded.beta, exact.beta, rtol=1e-9, atol=1e-12 * np.max(np.abs(exact.beta)))
    assert padded.noise_var == pytest.approx(exact.noise_var, rel=1e-9)
    assert padded.objective == pytest.approx(exact.objective, rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(padded.scale, np.asarray(prior.em_scale(jnp.asarray(padded.beta))), rtol=1e-14)


def test_probit_keeps_its_unit_noise_variance_whatever_noise_var_says():
    """002 eq. 3 fixes σ² = 1 for the latent z; a noise_var given to fit_em used to enter the
    M-step (β moved by up to 2.4 at noise_var = 5) while the objective kept σ² = 1."""
    X, y = _probit()
    free = fit_em(X, y, JeffreysPrior(), ProbitLikelihood(), y_init=2 * y - 1)
    given = fit_em(X, y, JeffreysPrior(), ProbitLikelihood(), y_init=2 * y - 1, noise_var=5.0)
    np.testing.assert_array_equal(given.beta, free.beta)
    assert given.noise_var == free.noise_var == 1.0


@pytest.mark.parametrize("H,y,prior,likelihood,kw", _padding_cases())
def test_a_shared_em_design_gives_each_target_the_fit_it_gets_alone(H, y, prior, likelihood, kw):
    """One-vs-all fits share an :class:`EMDesign` (HᵀH and the ridge factor made once): each
    target's fit on it equals, bit for bit, the fit that prepares its own design."""
    shared_kw = {k: v for k, v in kw.items() if k != "factor"}
    design = EMDesign(H, y.size, kw.get("factor"))
    for target in (y, y[::-1].copy()):
        init = {"y_init": 2 * target - 1} if "y_init" in kw else {}
        alone = fit_em(H, target, prior, likelihood, tol=1e-6, **{**kw, **init})
        shared = fit_em(design, target, prior, likelihood, tol=1e-6, **{**shared_kw, **init})
        assert alone.n_iter > 1
        np.testing.assert_array_equal(shared.beta, alone.beta)
        assert (shared.n_iter, shared.noise_var, shared.objective) == (alone.n_iter, alone.noise_var, alone.objective)
    with pytest.raises(ValueError, match="made for"):
        fit_em(design, y[:-1], prior, likelihood)
