"""The type-II Laplace path with any hierarchy (ARD, FLAP's Laplace on the variances, BLS's scaled
Laplace) under any likelihood with the Laplace pieces (Bernoulli-logistic, Poisson, negative binomial),
the likelihood's own parameter (the negative binomial's dispersion ``r``) estimated between moves.

Oracles: the objective recomputed densely at the fitted state (the mode by scipy's BFGS on a log
posterior written with ``jax.scipy.stats``' log mass functions, the log-determinant of its autodiff
Hessian, the hierarchy's terms from ``scipy.stats``' exponential and gamma densities); the engine's
sparsity and quality factors against the linearized Gaussian problem built from autodiff of the
likelihood's own ``log_lik``; the Poisson fit as the negative binomial's limit ``r → ∞``; and the
estimators the generic ones build for these pairs.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from jax.scipy import stats as jstats

from sparsebayes.inference import PoissonRVMRegressor, RVMClassifier, SparseClassifier, SparseRegressor
from sparsebayes.inference.engines import typeii_laplace as tl
from sparsebayes.inference.engines import typeii_laplace_mode, typeii_param
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, NegativeBinomialLikelihood, PoissonLikelihood
from sparsebayes.models.priors import LaplacePrior
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior

BERNOULLI, POISSON, NB = BernoulliLogisticLikelihood(), PoissonLikelihood(), NegativeBinomialLikelihood()
#: A proper Gamma(2, 0.5) on λ, so that log p(λ) has its constant and the oracle its scipy density.
HIERARCHIES = {"ard": ARDPrior(), "flap": LaplaceVariancePrior(a=2.0, b=0.5),
               "bls": ScaledLaplacePrior(a=2.0, b=0.5)}


def _problem(likelihood, n=40, seed=0):
    """A bias and four Gaussian columns, two of them in the model; over-dispersed counts (Gamma-Poisson,
    r = 2) for the negative binomial."""
    rng = np.random.default_rng(seed)
    Phi = np.column_stack([np.ones(n), rng.normal(size=(n, 4))])
    eta = Phi @ np.array([0.8, 0.9, -0.6, 0.0, 0.0])
    if likelihood.name == "bernoulli_logistic":
        return Phi, (rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * eta))).astype(float)
    rate = np.exp(eta) * (rng.gamma(2.0, 0.5, n) if likelihood.name == "negative_binomial" else 1.0)
    return Phi, rng.poisson(rate).astype(float)


def _log_lik(name, t, eta, r):
    """``Σ log p(t | η)`` written with jax.scipy.stats (not the likelihood objects)."""
    if name == "bernoulli_logistic":
        return jnp.sum(jstats.bernoulli.logpmf(t, jax.nn.sigmoid(eta)))
    if name == "poisson":
        return jnp.sum(jstats.poisson.logpmf(t, jnp.exp(eta)))
    return jnp.sum(jstats.nbinom.logpmf(t, r, r / (r + jnp.exp(eta))))


def _dense_objective(name, prior, Phi, t, var, lam, r):
    """The Laplace evidence at the prior variances ``var`` (mode by BFGS, ``log|Σ⁻¹|`` by autodiff) plus
    the hierarchy's terms: ``Σ_A log Exp(v_i | λ/2) + log Gamma(λ | a, b)`` (``v_i = τ_i`` at ``σ² = 1``)."""
    A = np.flatnonzero(var > 0)
    P, v = jnp.asarray(Phi[:, A]), var[A]

    def log_joint(w):
        return _log_lik(name, t, P @ w, r) - 0.5 * jnp.sum(w * w / v)

    f = jax.jit(lambda w: -log_joint(w))
    g = jax.jit(jax.grad(f))
    w = scipy.optimize.minimize(lambda w: float(f(w)), np.zeros(A.size), jac=lambda w: np.asarray(g(w)),
                                method="BFGS", options={"gtol": 1e-11}).x
    hess = -np.asarray(jax.hessian(log_joint)(jnp.asarray(w)))
    evidence = float(log_joint(w)) - 0.5 * np.sum(np.log(v)) - 0.5 * np.linalg.slogdet(hess)[1]
    if isinstance(prior, ARDPrior):
        return evidence, A, w
    hyper = (np.sum(scipy.stats.expon.logpdf(v, scale=2.0 / lam))
             + scipy.stats.gamma.logpdf(lam, prior.a, scale=1.0 / prior.b))
    return evidence + hyper, A, w


#: Each hierarchy with one likelihood in the default suite (the pairs the issue names: a negative binomial
#: RVM, a Poisson FLAP, a Bernoulli BLS); the other six pairs in the slow suite.
PAIRS = [(h, lik, () if (h, lik.name) in {("ard", "negative_binomial"), ("flap", "poisson"),
                                          ("bls", "bernoulli_logistic")} else (pytest.mark.slow,))
         for h in HIERARCHIES for lik in (BERNOULLI, POISSON, NB)]


@pytest.mark.parametrize("hierarchy, likelihood", [pytest.param(h, lik, marks=m, id=f"{h}-{lik.name}")
                                                   for h, lik, m in PAIRS])
def test_the_objective_is_the_laplace_evidence_plus_the_hierarchys_terms(hierarchy, likelihood):
    """For every hierarchy × likelihood: a fit that converges, keeps the model's columns, and whose
    ``L`` (and mode) equal the dense computation at its variances, λ and dispersion."""
    prior = HIERARCHIES[hierarchy]
    Phi, t = _problem(likelihood)
    st = tl.fit(Phi, t, np.ones(Phi.shape[1], bool), likelihood=likelihood, prior=prior)
    var = np.asarray(st.var)
    assert bool(st.converged) and not bool(st.stalled)
    assert var[1] > 0 and var[2] > 0
    r = float(st.params)
    if likelihood.name == "negative_binomial":
        assert 0.5 < r < 20.0  # estimated (the data's r is 2; the start is the moments')
    ev, A, w = _dense_objective(likelihood.name, prior, Phi, t, var, float(st.lam), r)
    assert float(st.objective) == pytest.approx(ev, abs=1e-7 * max(1.0, abs(ev)))
    np.testing.assert_allclose(tl.coefficients(st, Phi.shape[1])[A], w, rtol=1e-6, atol=1e-8)
    if prior.has_rate:  # λ is its update at the fitted variances (004 eq. 17 with a, b)
        assert float(st.lam) == pytest.approx(2 * (A.size + prior.a - 1) / (var.sum() + 2 * prior.b), rel=1e-12)


def test_flap_and_bls_differ_from_ard_only_by_the_hierarchys_terms():
    """At one fixed state the objective under FLAP is ARD's plus ``Σ log Exp(v_i | λ/2) + log p(λ)``, and
    BLS's (``σ² = 1``: ``v_i = τ_i``) equals FLAP's: the hierarchy enters ``L`` through its terms alone."""
    Phi, t = _problem(POISSON, seed=3)
    var = np.array([1.0, 0.5, 0.8, 0.0, 0.0])
    state = tl.State(var=var, basis_of_slot=np.array([0, 1, 2, -1], np.int32), w=np.zeros(4), objective=0.0,
                     n_iter=0, converged=False, capacity_hit=False, last_gain=0.0, stalled=False, lam=1.3,
                     params=1.0)
    L = {k: float(typeii_laplace_mode._settle(POISSON, Phi, t, state, prior=p)[0].objective) for k, p in HIERARCHIES.items()}
    terms = np.sum(scipy.stats.expon.logpdf(var[:3], scale=2 / 1.3)) + scipy.stats.gamma.logpdf(1.3, 2.0, scale=2.0)
    assert L["flap"] - L["ard"] == pytest.approx(terms, rel=1e-12)
    assert L["bls"] == pytest.approx(L["flap"], rel=1e-14)


def test_sparsity_quality_and_the_mode_come_from_the_likelihoods_own_score_and_curvature():
    """At a negative binomial fit: the gradient of ``Σ log_lik − ½Σw²/v`` by autodiff of the likelihood's
    own ``log_lik`` vanishes at the engine's mode, its Hessian is the engine's ``−Σ⁻¹``, and ``S, Q`` are
    the linearized Gaussian problem's with ``B`` and the score by autodiff (not the engine's formulas)."""
    Phi, t = _problem(NB, n=50, seed=1)
    st = tl.fit(Phi, t, np.ones(5, bool), likelihood=NB, prior=HIERARCHIES["flap"])
    r, var = float(st.params), np.asarray(st.var)
    A = np.flatnonzero(var > 0)
    w = tl.coefficients(st, 5)[A]

    def log_joint(w):
        return jnp.sum(NB.log_lik(t, Phi[:, A] @ w, r)) - 0.5 * jnp.sum(w * w / var[A])

    assert np.max(np.abs(np.asarray(jax.grad(log_joint)(jnp.asarray(w))))) < 1e-6
    np.testing.assert_allclose(-np.asarray(jax.hessian(log_joint)(jnp.asarray(w))),
                               np.linalg.inv(tl.posterior_covariance(Phi, t, st, likelihood=NB)), rtol=1e-8)
    eta = Phi @ tl.coefficients(st, 5)
    score = np.asarray(jax.vmap(jax.grad(lambda e, y: NB.log_lik(y, e, r)))(jnp.asarray(eta), jnp.asarray(t)))
    b = -np.asarray(jax.vmap(jax.hessian(lambda e, y: NB.log_lik(y, e, r)))(jnp.asarray(eta), jnp.asarray(t)))
    C = np.diag(1 / b) + Phi[:, A] @ np.diag(var[A]) @ Phi[:, A].T  # the linearized problem's covariance
    t_hat = eta + score / b
    S = np.einsum("nm,nm->m", Phi, np.linalg.solve(C, Phi))
    Q = Phi.T @ np.linalg.solve(C, t_hat)
    S_e, Q_e, _, _ = typeii_laplace_mode.sparsity_quality(NB, jnp.asarray(Phi), jnp.asarray(t), st, jnp.asarray(st.chol))
    np.testing.assert_allclose(S_e, S, rtol=1e-7)
    np.testing.assert_allclose(Q_e, Q, rtol=1e-6, atol=1e-8)


def test_each_dispersion_step_never_lowers_the_evidence_and_the_fit_climbs_it():
    """The engine's claim for the likelihood's parameter (:func:`typeii_param.param_step`): from every
    state of a negative binomial fit the step takes a dispersion whose ``L`` is not below the state's,
    and moves it while the fit runs; the fit's ``r`` is then a stationary point of ``L`` in ``r``
    (a nearby ``r`` on either side, the mode settled there, is not higher)."""
    Phi, t = _problem(NB, n=60, seed=2)
    Phi, t, mask = jnp.asarray(Phi), jnp.asarray(t), np.ones(5, bool)
    prior = HIERARCHIES["ard"]
    data, model = tl.LaplaceData(Phi, t, mask), tl.make_model(NB, prior)
    move = jax.jit(lambda s: tl.take_step(s, data, model, tol=1e-6, estimate_params=False)[0])
    param = jax.jit(lambda s: typeii_param.param_step(s, NB, Phi, t, prior=prior))
    state = tl.start(data, model, 5, params=20.0)  # a start far from the data's r = 2
    moved_r = 0
    for _ in range(40):
        before = move(state)
        state, change = param(before)
        assert float(state.objective) >= float(before.objective)
        moved_r += float(change) > 1e-3
        if bool(before.converged) and float(change) < 1e-8:
            break
    assert bool(before.converged) and moved_r >= 2 and 0.5 < float(state.params) < 8.0
    settle = jax.jit(lambda s: typeii_laplace_mode._settle(NB, Phi, t, s, prior=prior)[0])
    for factor in (0.99, 1.01):
        assert float(settle(state._replace(params=state.params * factor)).objective) <= float(state.objective) + 1e-9


def test_the_negative_binomial_at_a_huge_dispersion_is_the_poisson_fit():
    """``r → ∞`` is the Poisson limit: with ``r`` held at 10⁸ the negative binomial fit keeps the Poisson
    fit's columns, its weights and its ``L`` (the log mass differs by ``O(μ²/r)``)."""
    Phi, t = _problem(POISSON, n=40, seed=4)
    mask = np.ones(5, bool)
    pois = tl.fit(Phi, t, mask, likelihood=POISSON)
    nb = tl.fit(Phi, t, mask, likelihood=NB, params=1e8, estimate_params=False)
    assert float(nb.params) == 1e8
    np.testing.assert_array_equal(np.asarray(nb.var) > 0, np.asarray(pois.var) > 0)
    np.testing.assert_allclose(tl.coefficients(nb, 5), tl.coefficients(pois, 5), rtol=1e-5, atol=1e-7)
    assert float(nb.objective) == pytest.approx(float(pois.objective), abs=1e-4)


def test_the_generic_estimators_build_these_models():
    """``SparseRegressor(method="type2", likelihood=...)`` and ``SparseClassifier(method="type2", link="logistic")``
    with any type-II hierarchy fit by the type-II core's Laplace path (route ``"typeii_laplace"``, no engine
    estimator), as the paper classes do; ``prior_`` and ``likelihood_`` refit the model; FLAP's fitted
    ``gamma_`` is the engine's λ; EM's LaplacePrior is refused by name."""
    Phi, t = _problem(NB, n=60, seed=5)
    X = Phi[:, 1:]
    est = SparseRegressor(method="type2", prior="laplace", likelihood="negative_binomial").fit(X, t)
    assert est._route_ == "typeii_laplace"
    assert isinstance(est.prior_, LaplaceVariancePrior)
    assert est.likelihood_.name == "negative_binomial" and est.likelihood_param_ > 0 and est.gamma_ > 0
    again = SparseRegressor(method="type2", prior=est.prior_, likelihood=est.likelihood_).fit(X, t)
    np.testing.assert_array_equal(again.coef_, est.coef_)
    assert again.likelihood_param_ == est.likelihood_param_
    direct = PoissonRVMRegressor(prior=LaplaceVariancePrior(), likelihood=NB).fit(X, t)
    np.testing.assert_array_equal(direct.coef_, est.coef_)
    record = direct.posterior_model()  # the twin's record without data: the point with r, and NB's Gibbs sampler
    assert record.point["dispersion"] == direct.likelihood_param_ and record.gibbs is not None
    assert PoissonRVMRegressor().posterior_model().gibbs is None  # the Poisson has no conjugate augmentation
    y = (X[:, 0] - X[:, 1] + np.random.default_rng(6).normal(size=60) > 0).astype(int)
    clf = SparseClassifier(method="type2", prior=ScaledLaplacePrior(), link="logistic", features="linear").fit(X, y)
    assert clf._route_ == "typeii_laplace"
    assert isinstance(clf.prior_, ScaledLaplacePrior)
    np.testing.assert_array_equal(clf.beta_, RVMClassifier(prior=ScaledLaplacePrior(), features="linear").fit(X, y).beta_)
    assert clf.gamma_.shape == (1,) and clf.lam_[0] == pytest.approx(np.sqrt(clf.gamma_[0]))
    with pytest.raises(ValueError, match="LaplaceVariancePrior"):
        PoissonRVMRegressor(prior=LaplacePrior(1.0)).fit(X, t)
    with pytest.raises(ValueError, match="counts"):
        PoissonRVMRegressor(likelihood="gaussian").fit(X, t)


def test_on_counts_without_over_dispersion_the_estimated_dispersion_goes_to_the_poisson_limit():
    """With ``r`` estimated on Poisson counts the negative binomial RVM climbs to the Poisson limit
    (``r`` above 10⁶, no stall) and is the Poisson RVM: the same kept inputs, weights and ``L``."""
    Phi, t = _problem(POISSON, n=80, seed=0)
    X = Phi[:, 1:]
    nb = PoissonRVMRegressor(likelihood="negative_binomial").fit(X, t)
    pois = PoissonRVMRegressor().fit(X, t)
    assert nb.converged_ and not nb.stalled_ and nb.likelihood_param_ > 1e6
    np.testing.assert_array_equal(nb.active_, pois.active_)
    np.testing.assert_allclose(nb.coef_, pois.coef_, atol=1e-4)
    assert nb.objective_ == pytest.approx(pois.objective_, abs=1e-3)
