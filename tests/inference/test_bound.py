"""The bound-optimization engine (Krishnapuram et al. 2005, Sec. 3) against independent oracles."""
import numpy as np
import pytest
import scipy.optimize
import sklearn
from sklearn.linear_model import LogisticRegression

from sparsebayes.inference.engines import bound
from sparsebayes.models.likelihoods import multinomial as mm
from sparsebayes.models.priors.penalty import FlatPrior, GaussianPrior
from sparsebayes.models.priors import LaplacePrior


def _problem_data(n, d, m, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 0] = 1.0  # a bias feature, penalized like every other weight
    coef = rng.normal(scale=scale, size=(d, m - 1)) * (rng.uniform(size=(d, 1)) < 0.5)
    P = np.asarray(mm.class_probabilities(coef, X))
    y = (P.cumsum(1) > rng.uniform(size=(n, 1))).argmax(1)
    return X, y


def _fit(X, y, m, prior, solver, **kw):
    problem = bound.make_problem(X, y, m, solver=solver, prior=prior)
    state, info = bound.run(problem, prior, solver=solver, **kw)
    return np.asarray(state.coef), info


# scikit-learn >= 1.8 spells the l1 penalty l1_ratio=1 (penalty= is deprecated there)
_L1 = {"l1_ratio": 1.0} if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 8) else {"penalty": "l1"}

CASES = [  # (name, prior, solver)
    ("ml-block", FlatPrior(), "block"),
    ("ml-cw", FlatPrior(), "componentwise"),
    ("rmlr-block", GaussianPrior(2.0), "block"),
    ("rmlr-cw", GaussianPrior(2.0), "componentwise"),
    ("smlr-block", LaplacePrior.from_lam(4.0), "block"),
    ("smlr-cw", LaplacePrior.from_lam(4.0), "componentwise"),
    ("ml-scd", FlatPrior(), "surrogate-cd"),
    ("rmlr-scd", GaussianPrior(2.0), "surrogate-cd"),
    ("smlr-scd", LaplacePrior.from_lam(4.0), "surrogate-cd"),
    ("ml-newton", FlatPrior(), "newton"),
    ("rmlr-newton", GaussianPrior(2.0), "newton"),
    ("smlr-newton", LaplacePrior.from_lam(4.0), "newton"),
]


@pytest.mark.parametrize("name,prior,solver", CASES, ids=[c[0] for c in CASES])
def test_objective_never_decreases(name, prior, solver):
    X, y = _problem_data(150, 6, 4, seed=1)
    problem = bound.make_problem(X, y, 4, solver=solver, prior=prior)
    _, infos = bound.trace(problem, prior, solver=solver, n_steps=60)
    obj = np.asarray(infos.objective)
    assert np.all(np.isfinite(obj))
    # rounding only: a decrease larger than 1e-12 relative fails
    assert np.diff(obj).min() >= -1e-12 * np.abs(obj).max()
    assert obj[-1] > obj[0] + 1.0  # and it actually climbs


@pytest.mark.parametrize("m,lam", [(2, 3.0), (3, 4.0), (6, 3.0)])
def test_all_solvers_reach_same_optimum_and_support(m, lam):
    X, y = _problem_data(120, 8, m, seed=m)
    prior = LaplacePrior.from_lam(lam)
    cb, ib = _fit(X, y, m, prior, "block", tol=1e-11, max_iter=20000)
    cc, ic = _fit(X, y, m, prior, "componentwise", tol=1e-11, max_iter=20000)
    cs, is_ = _fit(X, y, m, prior, "surrogate-cd", tol=1e-11, max_iter=20000)
    cn, in_ = _fit(X, y, m, prior, "newton", tol=1e-11, max_iter=20000)
    cn4, in4 = _fit(X, y, m, prior, "newton", tol=1e-11, max_iter=20000, capacity=4)  # block Newton steps
    assert bool(ib.converged) and bool(ic.converged) and bool(is_.converged) and bool(in_.converged)
    for c, i in ((cn, in_), (cn4, in4)):
        assert bool(i.converged) and float(i.residual) < 1e-6
        assert abs(float(i.objective) - float(ic.objective)) <= 1e-8 * abs(float(ic.objective))
        np.testing.assert_array_equal(c != 0, cc != 0)
    assert abs(float(ib.objective) - float(ic.objective)) <= 1e-8 * abs(float(ic.objective))
    assert abs(float(is_.objective) - float(ic.objective)) <= 1e-8 * abs(float(ic.objective))
    np.testing.assert_array_equal(cb != 0, cc != 0)
    np.testing.assert_array_equal(cs != 0, cc != 0)
    assert 0 < (cc != 0).sum() < cc.size  # a sparse, non-trivial support
    assert float(ib.residual) < 1e-6 and float(ic.residual) < 1e-6 and float(is_.residual) < 1e-6


@pytest.mark.parametrize("lam", [0.5, 2.0, 8.0])
def test_binary_smlr_equals_liblinear_l1(lam):
    X, y = _problem_data(200, 6, 2, seed=7, scale=2.0)
    coef, info = _fit(X, y, 2, LaplacePrior.from_lam(lam), "componentwise", tol=1e-12, max_iter=20000)
    # liblinear: min ||v||_1 + C sum log(1 + exp(-y v'x)), bias as a feature (no intercept)
    lib = LogisticRegression(**_L1, solver="liblinear", C=1.0 / lam, fit_intercept=False,
                             tol=1e-12, max_iter=100000).fit(X, y)
    v = -lib.coef_.ravel()  # ours models class 0 against the reference class 1
    Y1 = mm.one_hot_reference(y, 2)
    obj_lib = float(mm.log_posterior(v[:, None], X, Y1, LaplacePrior.from_lam(lam)))
    assert abs(float(info.objective) - obj_lib) <= 1e-7 * abs(obj_lib)
    np.testing.assert_allclose(coef[:, 0], v, atol=1e-4)
    np.testing.assert_array_equal(coef[:, 0] != 0, np.abs(v) > 1e-8)


def _lbfgs_split(X, y, m, lam, penalty):
    """Generic oracle: L-BFGS-B on the identical objective; l1 via w = w+ - w-, w± >= 0 (exact)."""
    d = X.shape[1]
    Y1 = np.asarray(mm.one_hot_reference(y, m))
    k = d * (m - 1)

    def nll(w):
        W = w.reshape(m - 1, d).T
        eta = X @ W
        lse = np.logaddexp.reduce(np.concatenate([eta, np.zeros((len(X), 1))], 1), axis=1)
        P = np.exp(eta - lse[:, None])
        return -(np.sum(Y1 * eta) - lse.sum()), -(X.T @ (Y1 - P)).T.ravel()

    if penalty == "l1":
        def fun(z):
            f, g = nll(z[:k] - z[k:])
            return f + lam * z.sum(), np.concatenate([g + lam, -g + lam])
        res = scipy.optimize.minimize(fun, np.zeros(2 * k), jac=True, method="L-BFGS-B",
                                      bounds=[(0, None)] * (2 * k),
                                      options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 50000, "maxcor": 30})
        w = res.x[:k] - res.x[k:]
    else:
        def fun(w):
            f, g = nll(w)
            return f + 0.5 * lam * w @ w, g + lam * w
        res = scipy.optimize.minimize(fun, np.zeros(k), jac=True, method="L-BFGS-B",
                                      options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 50000})
        w = res.x
    return w.reshape(m - 1, d).T, -res.fun


@pytest.mark.parametrize("m,penalty,solver", [(3, "l1", "componentwise"), (5, "l1", "block"),
                                               (4, "l2", "componentwise"), (4, "l2", "block"),
                                               (5, "l1", "surrogate-cd"), (4, "l2", "surrogate-cd"),
                                               (5, "l1", "newton"), (4, "l2", "newton")])
def test_multiclass_equals_generic_solver(m, penalty, solver):
    X, y = _problem_data(150, 7, m, seed=11)
    lam = 3.0
    prior = LaplacePrior.from_lam(lam) if penalty == "l1" else GaussianPrior(lam)
    coef, info = _fit(X, y, m, prior, solver, tol=1e-11, max_iter=20000)
    w_ref, obj_ref = _lbfgs_split(X, y, m, lam, penalty)
    assert float(info.objective) >= obj_ref - 1e-9 * abs(obj_ref)  # never worse than the oracle
    assert abs(float(info.objective) - obj_ref) <= 1e-8 * abs(obj_ref)
    np.testing.assert_allclose(coef, w_ref, atol=2e-4)


def test_loglik_hessian_matches_autodiff():
    import jax

    X, y = _problem_data(40, 5, 4, seed=2)
    Y1 = mm.one_hot_reference(y, 4)
    W = np.random.default_rng(0).normal(size=(5, 3))
    H = jax.hessian(lambda w: mm.log_posterior(w.reshape(5, 3), X, Y1, FlatPrior()))(W.ravel())
    P = np.asarray(mm.class_probabilities(W, X))[:, :3]
    every = np.arange(15)
    np.testing.assert_allclose(np.asarray(bound.loglik_hessian(P, X, every)), -np.asarray(H), rtol=1e-10, atol=1e-10)
    some = np.array([7, 0, 13, 4, 5])  # any subset, any order: the matching submatrix
    np.testing.assert_allclose(np.asarray(bound.loglik_hessian(P, X, some)), -np.asarray(H)[np.ix_(some, some)],
                               rtol=1e-10, atol=1e-10)


def test_newton_reaches_the_map_where_the_mm_steps_crawl():
    """Saturated probabilities (a kernel basis, small λ): at the same step budget the MM
    solver is still far from the optimum that Newton reaches, whose residual is ~0."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(60, 2))
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    K = np.exp(-((x[:, None, :] - x[None, :, :]) ** 2).sum(-1) / 2.0)
    X = np.hstack([np.ones((60, 1)), K])
    prior = LaplacePrior.from_lam(0.05)
    cn, in_ = _fit(X, y, 2, prior, "newton", tol=1e-10, max_iter=5000)
    cs, is_ = _fit(X, y, 2, prior, "surrogate-cd", tol=1e-10, max_iter=int(in_.n_iter))
    assert bool(in_.converged) and float(in_.residual) < 1e-6
    assert float(is_.residual) > 100 * float(in_.residual)
    assert float(in_.objective) >= float(is_.objective)
    _, long_run = _fit(X, y, 2, prior, "surrogate-cd", tol=1e-12, max_iter=200000)  # ~10,000 MM steps
    assert abs(float(long_run.objective) - float(in_.objective)) <= 1e-10 * abs(float(in_.objective))


def test_componentwise_is_reproducible_and_warm_start_is_immediate():
    X, y = _problem_data(100, 10, 3, seed=3)
    prior = LaplacePrior.from_lam(5.0)
    c1, i1 = _fit(X, y, 3, prior, "componentwise", tol=1e-9, seed=4)
    c2, _ = _fit(X, y, 3, prior, "componentwise", tol=1e-9, seed=4)
    np.testing.assert_array_equal(c1, c2)
    c3, i3 = _fit(X, y, 3, prior, "componentwise", tol=1e-9, coef0=c1)
    assert int(i3.n_iter) <= 2 and int(i3.n_iter) < int(i1.n_iter)
    np.testing.assert_allclose(c3, c1, atol=1e-7)


def test_max_iter_reports_not_converged():
    X, y = _problem_data(100, 10, 3, seed=3)
    _, info = _fit(X, y, 3, LaplacePrior.from_lam(1.0), "componentwise", tol=1e-14, max_iter=3)
    assert not bool(info.converged) and int(info.n_iter) == 3


def test_block_smlr_readmits_a_pruned_weight_that_the_optimum_needs():
    """Eq. 13 never moves a zero weight, and the block step prunes small weights whose gradient is
    inside [−λ, λ] at that step. A weight whose sign flips on the way to the optimum was pruned for
    good: the fit stopped 0.239 below the MAP with 14 of 15 weights and said it had converged. Zero
    weights with |g| > λ now re-enter; oracle: the Newton solver (the same objective)."""
    rng = np.random.default_rng(9)
    n, d, m = 800, 8, 3
    X = rng.normal(size=(n, d))
    X[:, 0] = 1.0
    X[:, 2] = X[:, 1] + 0.1 * rng.normal(size=n)  # correlated pair: one weight changes sign on the way
    coef = rng.normal(size=(d, m - 1)) * 2 * (rng.uniform(size=(d, 1)) < 0.5)
    P = np.asarray(mm.class_probabilities(coef, X))
    y = (P.cumsum(1) > rng.uniform(size=(n, 1))).argmax(1)
    prior = LaplacePrior.from_lam(2.0)
    block, info = _fit(X, y, m, prior, "block", tol=1e-10, max_iter=20_000)
    newton, info_newton = _fit(X, y, m, prior, "newton", tol=1e-12)
    assert float(info.converged) and float(info.residual) < 1e-6
    assert float(info.objective) == pytest.approx(float(info_newton.objective), rel=1e-10)
    np.testing.assert_array_equal(block != 0, newton != 0)


def test_componentwise_keeps_finite_normalizers_where_a_probability_saturates():
    """A warm start far out (class probabilities rounding to 1): the O(n) upkeep
    ``log(Z(1 − p_c) + exp(η_c'))`` lost the other classes at p_c = 1 and gave NaN weights from the
    third sweep; it recomputes the normalizers there now. Oracle: Newton from the default start."""
    rng = np.random.default_rng(1)
    n, m = 60, 3
    y = np.repeat(np.arange(m), n // m)
    X = np.c_[np.ones(n), rng.normal(size=(n, 2)) + 3 * np.eye(m)[y][:, :2]]
    prior = LaplacePrior.from_lam(1.0)
    coef0 = 10.0 * np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    cw, info = _fit(X, y, m, prior, "componentwise", coef0=coef0, tol=1e-10, max_iter=5000)
    _, info_newton = _fit(X, y, m, prior, "newton", tol=1e-12)
    assert np.all(np.isfinite(cw))
    assert float(info.objective) == pytest.approx(float(info_newton.objective), rel=1e-8)


def test_ml_block_step_climbs_on_a_rank_deficient_basis():
    """RBF basis of 40 points: ``S = XᵀX`` has an eigenvalue that rounding made −9e-15, which the
    pseudo-inverse of eq. 7 divided by, so the ML block iteration went downhill (−2.3 → −201.6, then
    NaN). Eigenvalues at rounding level now count as zero."""
    from sparsebayes.inference.estimators._base import make_feature_map

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)
    Phi = make_feature_map("kernel", kernel_width=1.0).fit_transform(X)
    prior = FlatPrior()
    problem = bound.make_problem(Phi, y, 2, solver="block", prior=prior)
    assert float(np.min(problem.bound.gram_eigvals)) < 0  # the rounding this is about
    _, infos = bound.trace(problem, prior, solver="block", n_steps=20)
    objective = np.asarray(infos.objective)
    assert np.all(np.isfinite(objective)) and np.all(np.diff(objective) >= -1e-9 * np.abs(objective[1:]))
