"""EM with per-row working weights (:func:`sparsebayes.inference.engines.em.weighted_m_step`): logistic,
Poisson, Student-t and negative-binomial sparse regression by EM, each against an independent
oracle, through the estimators' ``likelihood=`` and ``link=``."""
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, special
from sklearn.linear_model import LogisticRegression

from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier

from sparsebayes.inference.engines import em
from sparsebayes.inference.engines.em import EMControls, EMData, RidgeStart
from sparsebayes.models.likelihoods import GaussianLikelihood, NegativeBinomialLikelihood, StudentTLikelihood
from sparsebayes.models.priors import LaplacePrior


def _design(n, p, seed):
    rng = np.random.default_rng(seed)
    return rng, rng.standard_normal((n, p))


@pytest.mark.parametrize("C", [0.05, 0.5])
def test_logistic_laplace_em_is_sklearns_l1_logistic_regression(C):
    """Laplace prior with γ fixed: EM's fixed point is ``argmin Σ log-loss + √γ‖β‖₁``, scikit-learn's
    ``LogisticRegression(penalty="l1", C=1/√γ)``; both penalize the bias (ours: ``standardize=False``,
    the bias column is ones; scikit-learn's: that column among the inputs, ``fit_intercept=False``)."""
    rng, X = _design(150, 6, 0)
    w = np.array([0.4, 1.5, -1.0, 0.0, 0.7, 0.0, 0.0])
    t = (rng.random(150) < special.expit(w[0] + X @ w[1:])).astype(int)
    gamma = 1.0 / C**2
    ours = SparseProbitClassifier(link="logistic", prior=LaplacePrior(gamma), standardize=False, tol=1e-13,
                                  max_iter=100_000).fit(X, t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        sk = LogisticRegression(penalty="l1", C=C, solver="liblinear", fit_intercept=False, tol=1e-12,
                                max_iter=100_000).fit(np.c_[np.ones(150), X], t)
    np.testing.assert_allclose(ours.beta_[0], sk.coef_[0], rtol=0, atol=1e-5)
    assert np.count_nonzero(sk.coef_) < 7  # the penalty prunes: the comparison covers the zeros
    proba = ours.predict_proba(X)[:, 1]
    np.testing.assert_allclose(proba, special.expit(np.c_[np.ones(150), X] @ sk.coef_[0]), atol=1e-5)


def _l1_poisson(H, y, lam):
    """``argmin Σ(e^η − yη) + λ‖β‖₁`` by L-BFGS-B on ``β = b⁺ − b⁻``, ``b± ≥ 0`` (smooth), then
    Newton on the support it finds (the sign-fixed problem is smooth and strictly convex)."""
    p = H.shape[1]

    def f(b):
        beta = b[:p] - b[p:]
        eta = H @ beta
        g = H.T @ (np.exp(eta) - y)
        return np.sum(np.exp(eta) - y * eta) + lam * b.sum(), np.r_[g + lam, -g + lam]

    res = optimize.minimize(f, np.zeros(2 * p), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * p),
                            options=dict(ftol=1e-16, gtol=1e-12, maxiter=50_000))
    beta = res.x[:p] - res.x[p:]
    support = np.abs(beta) > 1e-6
    sign = np.sign(beta[support])
    Hs = H[:, support]
    for _ in range(50):
        mu = np.exp(Hs @ beta[support])
        grad = Hs.T @ (mu - y) + lam * sign
        beta[support] -= np.linalg.solve(Hs.T @ (mu[:, None] * Hs), grad)
    beta[~support] = 0.0
    return beta


def test_poisson_laplace_em_map_is_the_l1_poisson_optimum():
    rng, X = _design(120, 6, 1)
    H = np.c_[np.ones(120), X]
    y = rng.poisson(np.exp(H @ np.array([0.5, 0.6, -0.4, 0.0, 0.3, 0.0, 0.0]))).astype(float)
    gamma = 36.0
    est = AdaptiveSparseRegressor(likelihood="poisson", prior=LaplacePrior(gamma), standardize=False, tol=1e-13,
                                  max_iter=100_000).fit(X, y)
    oracle = _l1_poisson(H, y, np.sqrt(gamma))
    assert 0 < np.count_nonzero(oracle) < 7
    np.testing.assert_allclose(est.beta_, oracle, rtol=0, atol=1e-6)
    np.testing.assert_allclose(est.predict(X), np.exp(H @ oracle), rtol=1e-5)
    assert est.likelihood_param_ is None and est.noise_var_ is None


def _outlier_problem(seed=2, n=120):
    rng, X = _design(n, 5, seed)
    w = np.array([2.0, -1.5, 0.0, 1.0, 0.0])
    y = X @ w + 0.3 * rng.standard_normal(n)
    bad = rng.choice(n, n // 10, replace=False)
    y[bad] += rng.choice([-1, 1], bad.size) * rng.uniform(15, 30, bad.size)
    return X, y, w


def test_student_t_em_recovers_the_weights_under_gross_outliers_where_the_gaussian_does_not():
    X, y, w = _outlier_problem()
    robust = AdaptiveSparseRegressor(likelihood="student_t", prior="laplace", gamma=1.0, tol=1e-8).fit(X, y)
    plain = AdaptiveSparseRegressor(likelihood="gaussian", prior="laplace", gamma=1.0, tol=1e-8).fit(X, y)
    assert np.max(np.abs(robust.coef_ - w)) < 0.15
    assert np.max(np.abs(plain.coef_ - w)) > 0.5
    assert isinstance(robust.likelihood_, StudentTLikelihood) and 0 < robust.likelihood_param_ < 1.0


def test_student_t_em_objective_never_decreases_with_its_scale_estimated():
    X, y, _ = _outlier_problem()
    H = np.c_[np.ones(y.size), X]
    lik = StudentTLikelihood()
    data = EMData(jnp.asarray(H), jnp.asarray(y), jnp.asarray(H.T @ H))
    model = em.EMModel(LaplacePrior(1.0), lik)
    _, info = em.trace(em.init(data, model, RidgeStart(H)(y), lik.init_params(y)), data, model,
                       EMControls(prune_tol=1e-8), n_steps=60, estimate_noise=True)
    obj = np.asarray(info.objective)
    assert np.all(np.isfinite(obj))
    assert np.all(np.diff(obj) >= -1e-10 * np.maximum(1.0, np.abs(obj[1:]))), f"fell by {-np.diff(obj).min():.3g}"
    assert obj[-1] - obj[0] > 1.0 and np.ptp(np.asarray(info.noise_var)) > 0  # it climbed, and s² moved


def test_negative_binomial_em_estimates_the_dispersion_and_the_weights():
    rng, X = _design(3000, 3, 3)
    w = np.array([1.0, 0.5, -0.4, 0.0])
    mu = np.exp(w[0] + X @ w[1:])
    r = 2.0
    y = rng.negative_binomial(r, r / (r + mu)).astype(float)
    est = AdaptiveSparseRegressor(likelihood=NegativeBinomialLikelihood(), prior="laplace", gamma=1.0,
                                  tol=1e-8).fit(X, y)
    assert est.likelihood_param_ == pytest.approx(r, rel=0.15)
    np.testing.assert_allclose(np.r_[est.intercept_, est.coef_], w, atol=0.06)
    # the dispersion is the likelihood's maximizer at the fitted weights (a direct 1-D search)
    eta = est.intercept_ + X @ est.coef_
    best = optimize.minimize_scalar(lambda lr: -float(jnp.sum(NegativeBinomialLikelihood().log_lik(
        jnp.asarray(y), jnp.asarray(eta), np.exp(lr)))), bounds=(-3, 5), method="bounded", options=dict(xatol=1e-10))
    assert est.likelihood_param_ == pytest.approx(np.exp(best.x), rel=1e-4)


def test_gaussian_by_name_or_object_is_the_default_fit_bit_for_bit():
    X, y, _ = _outlier_problem()
    a = AdaptiveSparseRegressor(prior="laplace").fit(X, y)
    b = AdaptiveSparseRegressor(prior="laplace", likelihood=GaussianLikelihood()).fit(X, y)
    assert np.array_equal(a.beta_, b.beta_) and a.noise_var_ == b.noise_var_ == b.likelihood_param_


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # equal iterations either way
def test_a_weighted_likelihood_on_a_low_rank_kernel_design_fits_as_on_the_dense_one():
    """A factored kernel design is formed densely for a weighted likelihood (``HᵀWH`` has no form in H̃
    alone): ``low_rank=True`` fits as ``low_rank=False``."""
    rng, X = _design(80, 1, 4)
    y = rng.poisson(np.exp(np.sin(2 * X[:, 0]))).astype(float)
    kw = dict(likelihood="poisson", prior=LaplacePrior(4.0), features="kernel", kernel_width=2.0, tol=1e-6, max_iter=300)
    low = AdaptiveSparseRegressor(low_rank=True, **kw).fit(X, y)
    dense = AdaptiveSparseRegressor(low_rank=False, **kw).fit(X, y)
    assert low.design_rank_ is not None  # the design was factored
    np.testing.assert_allclose(low.predict(X), dense.predict(X), rtol=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    (dict(likelihood="probit"), "models labels"),
    (dict(likelihood="bernoulli_logistic"), "models labels"),
    (dict(likelihood="no_such"), "likelihood must be one of"),
    (dict(likelihood="poisson", noise_var=1.0), "no parameter of its own"),
])
def test_the_regressor_refuses_a_wrong_likelihood_naming_it(kwargs, match):
    X, y, _ = _outlier_problem()
    with pytest.raises(ValueError, match=match):
        AdaptiveSparseRegressor(**kwargs).fit(X, np.abs(np.round(y)))


def test_counts_likelihoods_refuse_non_counts_and_unknown_links_are_refused():
    """Count likelihoods refuse non-count targets; an unknown link is refused by name (the Student-t
    twin's sampling is tested in tests/inference/test_twin_any_likelihood.py)."""
    X, y, _ = _outlier_problem()
    with pytest.raises(ValueError, match="models counts"):
        AdaptiveSparseRegressor(likelihood="poisson").fit(X, y)
    with pytest.raises(ValueError, match="link must be one of"):
        SparseProbitClassifier(link="cauchit").fit(X, (y > 0).astype(int))
