"""The Laplace-path type-II route of the generic estimators (``method="type2"`` with a likelihood other than
the Gaussian, and the classifier): the fitting core's record against a dense computation at the mode, the
route and its settings, and the FLAP / BLS classifier's posterior twin against a
direct quadrature of its posterior."""
import numpy as np
import pytest
import scipy.special
import scipy.stats

from sparsebayes.inference import PoissonRVMRegressor, RVMClassifier, SparseClassifier, SparseRegressor
from sparsebayes.inference.estimators._base import raw_weights
from sparsebayes.inference.estimators.typeii_fit import LaplaceOptions, fit_typeii_laplace_model, laplace_basis
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, PoissonLikelihood
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior


def _binary(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1))
    y = (2.0 * X[:, 0] + 1.0 + rng.logistic(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("likelihood, prior", [(BernoulliLogisticLikelihood(), LaplaceVariancePrior(a=1.0, b=1.0)),
                                               (PoissonLikelihood(), ARDPrior())])
def test_the_core_record_is_the_mode_and_the_laplace_covariance_there(likelihood, prior):
    """``fit_typeii_laplace_model``: at the recorded weights the gradient of the log joint over the active
    columns, ``Φ_Aᵀ(t − E[t|η]) − A w``, is zero, and ``covariance`` is ``(Φ_AᵀBΦ_A + A)⁻¹`` computed densely
    (``B`` the likelihood's curvature at the mode, ``A = diag(1/prior_var)``; Tipping 2001, eqs. 26–27)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    eta = 0.5 + 1.5 * X[:, 0] - 1.2 * X[:, 1]
    t = ((eta + rng.logistic(size=60) > 0) if likelihood.name == "bernoulli_logistic"
         else rng.poisson(np.exp(0.5 * eta))).astype(np.float64)
    options = LaplaceOptions(features="linear").check()
    basis = laplace_basis(X, options)
    fit = fit_typeii_laplace_model(basis, t, prior, likelihood, options)
    assert fit.converged and fit.active.sum() >= 2 and fit.prior is prior and fit.likelihood is likelihood
    Phi = basis.design[:, fit.active]
    w = fit.coef[fit.active]
    mean = scipy.special.expit(Phi @ w) if likelihood.name == "bernoulli_logistic" else np.exp(Phi @ w)
    A = np.diag(1.0 / fit.prior_var[fit.active])
    gradient = Phi.T @ (t - mean) - A @ w
    assert np.max(np.abs(gradient)) < 1e-6 * max(1.0, np.max(np.abs(Phi.T @ t)))
    curvature = mean * (1.0 - mean) if likelihood.name == "bernoulli_logistic" else mean
    dense = np.linalg.inv(Phi.T @ (curvature[:, None] * Phi) + A)
    np.testing.assert_allclose(fit.covariance, dense, rtol=1e-6, atol=1e-10)
    assert np.all(fit.coef[~fit.active] == 0) and np.all(fit.prior_var[~fit.active] == 0)


def test_the_generic_estimators_fit_by_the_route_and_equal_the_paper_classes():
    """``_route_`` is ``"typeii_laplace"`` and the fit is the paper class's, bit for bit;
    ``options`` carry the paper class's settings (an unknown one is a ValueError naming it)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    y = rng.poisson(np.exp(0.4 + 0.7 * X[:, 0])).astype(float)
    est = SparseRegressor(method="type2", likelihood="poisson", options={"max_iter": 200, "tol": 1e-7}).fit(X, y)
    ref = PoissonRVMRegressor(max_iter=200, tol=1e-7).fit(X, y)
    assert est._route_ == ref._route_ == "typeii_laplace"
    np.testing.assert_array_equal(est.beta_, ref.beta_)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    with pytest.raises(ValueError, match=r"\['bogus'\] are not parameters of PoissonRVMRegressor"):
        SparseRegressor(method="type2", likelihood="poisson", options={"bogus": 1}).fit(X, y)
    with pytest.raises(ValueError, match="likelihood of counts"):
        PoissonRVMRegressor(likelihood="student_t").fit(X, y)
    Xb, yb = _binary()
    with pytest.raises(ValueError, match="'bernoulli_logistic' likelihood only"):
        SparseClassifier(method="type2", link="probit").fit(Xb, yb)
    clf = SparseClassifier(method="type2", prior="scaled_laplace", features="linear").fit(Xb, yb)
    again = SparseClassifier(method="type2", prior=clf.prior_, link=clf.likelihood_, features="linear").fit(Xb, yb)
    np.testing.assert_array_equal(again.beta_, clf.beta_)  # prior_ and likelihood_ refit the model
    eta = clf.decision_function(Xb)  # the logistic link's log probabilities (not EM's probit, a base too)
    np.testing.assert_array_equal(clf.predict_log_proba(Xb),
                                  np.column_stack([scipy.special.log_expit(-eta), scipy.special.log_expit(eta)]))


def test_the_flap_classifier_twin_has_the_laplace_prior_at_the_fitted_lambda():
    """The Bernoulli FLAP classifier's twin (on every column, pruned or not): its log density is
    ``Σ log σ(±η_n) + Σ log Laplace(w_i | 0, 1/√λ)`` at the fitted λ (``gamma_``), computed directly; a
    surrogate ε is refused (the twin is proper)."""
    from numpyro.infer.util import log_density

    X, y = _binary()
    clf = RVMClassifier(prior=LaplaceVariancePrior(a=1.0, b=1.0), features="linear").fit(X, y)
    record = clf.posterior_model(X, y)
    assert record.kwargs["hierarchy"] == "laplace" and record.kwargs["lam"] == clf.gamma_[0] > 0
    H = clf.feature_map_.transform(X)
    for w in (np.array([0.3, -1.2]), np.array([-2.0, 0.7])):
        density, _ = log_density(record.model, (record.H, record.y), record.kwargs, {"beta": w})
        eta = H @ w
        direct = (scipy.special.log_expit(np.where(y == 1, eta, -eta)).sum()
                  + scipy.stats.laplace.logpdf(w, scale=1.0 / np.sqrt(clf.gamma_[0])).sum())
        assert float(density) == pytest.approx(direct, rel=1e-10)
    with pytest.raises(ValueError, match="proper"):
        clf.posterior_model(X, y, surrogate_eps=1e-3)


@pytest.mark.slow
def test_the_flap_classifier_twin_is_its_laplace_posterior_at_the_fitted_lambda():
    """The Bernoulli FLAP classifier's twin: ``w_i ~ Laplace(0, 1/√λ)`` at the fitted λ (``gamma_``), the
    logistic likelihood (on every column, pruned or not); its NUTS draws (``sample_posterior``) have the
    posterior mean of a dense grid quadrature of that posterior (two weights: the bias and one input), to
    Monte Carlo error. A proper hyperprior on λ (``a, b > 0``) keeps λ > 0 whatever is pruned."""
    X, y = _binary()
    clf = RVMClassifier(prior=LaplaceVariancePrior(a=1.0, b=1.0), features="linear").fit(X, y)
    assert clf.gamma_[0] > 0
    record = clf.posterior_model(X, y)
    assert record.kwargs["hierarchy"] == "laplace" and record.kwargs["lam"] == clf.gamma_[0]
    H = clf.feature_map_.transform(X)
    scale = 1.0 / np.sqrt(clf.gamma_[0])
    grid = np.linspace(-6.0, 6.0, 301)
    W = np.stack(np.meshgrid(grid, grid, indexing="ij"), axis=-1).reshape(-1, 2)
    eta = W @ H.T
    log_post = (scipy.special.log_expit(np.where(y == 1, eta, -eta)).sum(axis=1)
                + scipy.stats.laplace.logpdf(W, scale=scale).sum(axis=1))
    p = np.exp(log_post - log_post.max())
    p /= p.sum()
    mean = p @ W
    sd = np.sqrt(p @ (W - mean) ** 2)
    assert np.all(p.reshape(301, 301)[[0, -1], :] < 1e-8) and np.all(p.reshape(301, 301)[:, [0, -1]] < 1e-8)
    idata = clf.sample_posterior(X, y, draws=500, chains=2, seed=0)
    draws = np.asarray(idata.posterior["beta"]).reshape(-1, 2)
    np.testing.assert_allclose(draws.mean(axis=0), raw_weights(clf.feature_map_, mean),
                               atol=4 * np.max(np.abs(raw_weights(clf.feature_map_, sd))) / np.sqrt(200))


def test_the_one_vs_all_flap_classifier_twin_takes_each_classifier_lambda():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 2))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=60), [-0.5, 0.5])
    clf = SparseClassifier(method="type2", prior=LaplaceVariancePrior(a=1.0, b=1.0), features="linear").fit(X, y)
    record = clf.posterior_model(X, y)
    assert [part.kwargs["lam"] for part in record.parts] == list(clf.gamma_)
    assert all(part.kwargs["hierarchy"] == "laplace" for part in record.parts)
