"""The Gaussian type-II fitting core (:mod:`sparsebayes.inference.estimators.typeii_fit`) and the estimators
composed on it: the core's record against the dense evidence and posterior computed here from its
fitted variances (Tipping & Faul 2003; 004 eqs. 10–13), the empty model against scipy; the generic
estimator under ``method="type2"`` fits through the core directly, and the
papers' RVM, BLS and FLAP are its subclasses with their parameters."""
import numpy as np
import pytest
import scipy.stats
from sklearn.base import clone

from sparsebayes.inference import BLSRegressor, FLAPRegressor, RVMRegressor, SparseRegressor
from sparsebayes.inference.estimators.typeii_fit import (TypeIIBasis, TypeIIOptions, empty_objective,
                                                         fit_typeii_model)
from sparsebayes.inference.estimators.typeii_many import fit_many
from sparsebayes.models import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior


@pytest.fixture(scope="module")
def sparse_regression():
    rng = np.random.default_rng(11)
    H = rng.normal(size=(50, 7))
    y = H @ np.array([1.5, 0.0, -2.0, 0.0, 0.0, 0.8, 0.0]) + 0.6 * rng.normal(size=50)
    return H, y


def _dense_reference(H, y, fit):
    """The evidence ``log N(y | 0, σ²I + H_A V H_Aᵀ)`` and the posterior mean ``Σ H_Aᵀy/σ²`` with
    ``Σ = (H_AᵀH_A/σ² + V⁻¹)⁻¹``, from the prior variances ``V`` that the record's ``Σ`` and σ² imply
    (``V⁻¹ = Σ⁻¹ − H_AᵀH_A/σ²``), each computed directly (scipy's density, dense solves)."""
    Ha, s2 = H[:, fit.active], fit.noise_var
    V = np.linalg.inv(np.linalg.inv(fit.sigma) - Ha.T @ Ha / s2)
    evidence = scipy.stats.multivariate_normal(np.zeros(y.size), s2 * np.eye(y.size) + Ha @ V @ Ha.T).logpdf(y)
    mean = np.linalg.solve(Ha.T @ Ha / s2 + np.linalg.inv(V), Ha.T @ y / s2)
    return evidence, mean, np.diag(V)


def test_the_core_is_the_dense_evidence_maximum(sparse_regression):
    """The RVM's record (flat hyperpriors, no intercept): its objective is the dense log evidence at its
    fitted variances and σ², its weights that evidence's posterior mean, and each kept variance is at
    Tipping & Faul's stationary point ``1/α_i = (q_i² − s_i)/s_i²``: no coordinate of the evidence rises."""
    H, y = sparse_regression
    options = TypeIIOptions(fit_intercept=False, tol=1e-12, noise_every=1).check()
    fit = fit_typeii_model(TypeIIBasis(None, H), y, ARDPrior(), options, owner="test")
    assert fit.converged and 0 < fit.active.sum() < H.shape[1]
    evidence, mean, v = _dense_reference(H, y, fit)
    assert fit.objective == pytest.approx(evidence, abs=1e-8)
    np.testing.assert_allclose(fit.coef[fit.active], mean, rtol=1e-8)
    np.testing.assert_array_equal(fit.coef[~fit.active], 0.0)
    # each kept variance maximizes the evidence along its own coordinate (a crude check: ±1 % moves lose)
    Ha, s2 = H[:, fit.active], fit.noise_var
    for i in range(v.size):
        for step in (0.99, 1.01):
            w = v.copy()
            w[i] *= step
            moved = scipy.stats.multivariate_normal(np.zeros(y.size), s2 * np.eye(y.size) + Ha @ np.diag(w) @ Ha.T)
            assert moved.logpdf(y) < evidence


def test_the_empty_model_is_the_noise_only_density():
    """A constant target: the empty model, σ² its maximum-likelihood value and ``L`` scipy's
    ``log N(y_c | 0, σ²I)`` in N − 1 dimensions (the flat intercept integrated out)."""
    rng = np.random.default_rng(0)
    H, y = rng.normal(size=(20, 3)), np.full(20, 2.5)
    with pytest.warns(Warning, match="y is constant"):
        fit = fit_typeii_model(TypeIIBasis(None, H), y, ARDPrior(), TypeIIOptions().check(), owner="test")
    assert not fit.active.any() and fit.intercept == 2.5 and fit.n_iter == 0
    assert fit.noise_var == pytest.approx(np.var(y - 2.5) if np.var(y) else 1e-12)
    # the formula, against scipy, on a non-degenerate y_c: the flat noise prior of ARD(c=-1, d=0) adds nothing
    y_c = np.linspace(-1, 1, 20)
    want = scipy.stats.norm(0, np.sqrt(0.3)).logpdf(y_c).sum() + 0.5 * np.log(2 * np.pi * 0.3)
    assert empty_objective(y_c, 19, 0.3, ARDPrior()) == pytest.approx(want, rel=0, abs=1e-12)


@pytest.mark.parametrize("Est, prior", [(RVMRegressor, ARDPrior()), (BLSRegressor, ScaledLaplacePrior()),
                                        (FLAPRegressor, LaplaceVariancePrior())],
                         ids=["rvm", "bls", "flap"])
def test_the_paper_estimators_are_the_generic_one_with_type2_fixed(sparse_regression, Est, prior):
    """RVM, BLS and FLAP are ``SparseRegressor`` with ``method="type2"`` and their hierarchy fixed: the
    generic estimator on the hierarchy object fits the same numbers, both by the
    type-II core, and the core called directly gives the record both name."""
    H, y = sparse_regression
    assert issubclass(Est, SparseRegressor)
    paper = Est().fit(H, y)
    generic = SparseRegressor(method="type2", prior=prior, features=None).fit(H, y)
    for est in (paper, generic):
        assert est._route_ == "typeii"  # the type-II core fitted both
    for name in ("coef_", "intercept_", "noise_var_", "objective_", "n_iter_", "sigma_", "active_"):
        np.testing.assert_array_equal(getattr(generic, name), getattr(paper, name))
    assert paper.prior_ == generic.prior_ == prior
    setup_prior, options = paper._typeii_setup()
    fit = fit_typeii_model(TypeIIBasis(None, H), y, setup_prior, options, owner="test")
    np.testing.assert_array_equal(fit.coef, paper.coef_)
    assert fit.objective == paper.objective_
    # its answers are the fitted methods': the predictive mean, the InferenceData label, the twin record
    np.testing.assert_allclose(generic.predict(H[:3]), H[:3] @ paper.coef_ + paper.intercept_, rtol=1e-12)
    np.testing.assert_array_equal(generic.to_inference_data().posterior["beta"].values,
                                  paper.to_inference_data().posterior["beta"].values)
    eps = 1e-3 if Est is RVMRegressor else None  # the RVM's flat hyperprior is improper: its twin takes a surrogate
    np.testing.assert_array_equal(generic.posterior_model(H, y, surrogate_eps=eps).H,
                                  paper.posterior_model(H, y, surrogate_eps=eps).H)


def test_the_paper_estimators_keep_their_parameters():
    """The parameters (names and defaults) of the papers' estimators are theirs, not the generic one's."""
    assert RVMRegressor().get_params() == dict(features=None, kernel_width="scale", fit_intercept=True, c=-1.0,
                                               d=0.0, max_iter=2000, tol=1e-9, noise_every=5, max_active=None,
                                               low_rank=True)
    assert BLSRegressor().get_params() == dict(features=None, kernel_width="scale", fit_intercept=True, a=0.0,
                                               b=0.0, c=0.0, d=0.0, lambda_update="algorithm1", noise_update="eq18",
                                               max_iter=2000, tol=1e-5, noise_every=1, max_active=None, low_rank=True)
    assert set(FLAPRegressor().get_params()) == {"features", "kernel_width", "fit_intercept", "estimate_noise",
                                                 "noise_var", "a", "b", "c", "d", "lambda_update", "max_iter", "tol",
                                                 "noise_every", "max_active", "low_rank"}
    assert clone(BLSRegressor(a=1.0)).get_params()["a"] == 1.0


def test_fit_many_takes_the_generic_estimator(sparse_regression):
    """The batched entry point fits ``SparseRegressor(method="type2")`` as each single fit does."""
    H, y = sparse_regression
    est = SparseRegressor(method="type2", prior="ard", features=None)
    many = fit_many(est, [H, H[:40]], [y, y[:40]])
    for fitted, (X, t) in zip(many, [(H, y), (H[:40], y[:40])]):
        single = clone(est).fit(X, t)
        np.testing.assert_allclose(fitted.coef_, single.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("options, pattern", [
    (dict(tol=-1.0), "tol"), (dict(noise_every=0), "noise_every"), (dict(fit_intercept="no"), "fit_intercept"),
    (dict(max_iter=0), "max_iter"), (dict(c=-2.0), "c"), (dict(bogus=1), r"\['bogus'\] are not parameters of RVM"),
])
def test_type2_settings_are_refused_by_name(sparse_regression, options, pattern):
    H, y = sparse_regression
    with pytest.raises(ValueError, match=pattern):
        SparseRegressor(method="type2", prior="ard", options=options).fit(H, y)
