"""The EM fitting core (:mod:`sparsebayes.inference.estimators.em_fit`) and the estimators composed on it:
the core against scikit-learn's Lasso and against its own unshared fits; the generic estimators under
``method="em"`` fit through it directly, and Figueiredo's estimators are their subclasses."""
import numpy as np
import pytest
from public_estimators import assert_fit_refused
from sklearn.datasets import load_iris
from sklearn.linear_model import Lasso

from sparsebayes.inference import AdaptiveSparseRegressor, SparseClassifier, SparseProbitClassifier, SparseRegressor
from sparsebayes.inference.estimators.em_fit import EMBasis, EMOptions, fit_em_model
from sparsebayes.models import LaplacePrior
from sparsebayes.models.likelihoods import GaussianLikelihood, ProbitLikelihood


@pytest.fixture(scope="module")
def sparse_regression():
    rng = np.random.default_rng(3)
    H = rng.normal(size=(60, 6))
    y = H @ np.array([2.0, 0.0, -1.5, 0.0, 0.0, 1.0]) + 0.5 * rng.normal(size=60)
    return H, y


def test_the_core_is_the_lasso_map(sparse_regression):
    """Laplace EM with γ and σ² fixed climbs to the MAP of ``−½‖y − Hβ‖² − √γ‖β‖₁``, the Lasso at
    ``α = √γ / n`` (000 Sec. 3): oracle scikit-learn's coordinate descent."""
    H, y = sparse_regression
    gamma = 900.0
    fit = fit_em_model(EMBasis(None, H), y, LaplacePrior(gamma), GaussianLikelihood(),
                       EMOptions(noise_var=1.0, tol=1e-12, max_iter=100_000).check(), owner="test")
    lasso = Lasso(alpha=np.sqrt(gamma) / y.size, fit_intercept=False, tol=1e-14, max_iter=100_000).fit(H, y)
    assert np.any(lasso.coef_ == 0) and np.any(lasso.coef_ != 0)
    np.testing.assert_array_equal(fit.beta != 0, lasso.coef_ != 0)
    np.testing.assert_allclose(fit.beta, lasso.coef_, atol=1e-6)
    np.testing.assert_array_equal(fit.active, lasso.coef_ != 0)  # no bias column: every column a basis function
    assert fit.converged and fit.likelihood_param == 1.0
    assert fit.covariance.shape == (np.count_nonzero(fit.beta),) * 2


def test_one_vs_all_on_the_shared_design_is_each_class_fitted_alone():
    """The classifier fits one model per class on one shared design (``HᵀH`` and the ridge start
    computed once); oracle: the core on the unshared basis, class by class."""
    X, y = load_iris(return_X_y=True)
    est = SparseClassifier(prior="laplace", options={"gamma": 2.0}).fit(X, y)
    assert est._route_ == "em"
    H = est.feature_map_.transform(X)
    for c, prior in enumerate(est.prior_):
        alone = fit_em_model(EMBasis(est.feature_map_, H), (y == c).astype(float), LaplacePrior(2.0),
                             ProbitLikelihood(), EMOptions(), owner="test")
        np.testing.assert_allclose(est.beta_[c], alone.beta, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(est.laplace_cov_[c], alone.covariance, rtol=1e-8, atol=1e-12)
        assert prior.gamma == alone.prior.gamma


def test_the_paper_estimators_are_the_generic_ones_with_method_em_fixed(sparse_regression):
    """``AdaptiveSparseRegressor`` and ``SparseProbitClassifier`` subclass the generic estimators, as
    ``Lasso`` does ``ElasticNet``: their parameters are their own, and the generic estimator under
    ``method="em"`` with those settings in ``options`` fits the same model, answers the same
    (``predict(return_std=True)``, ``gaussian_conditional``, ``to_inference_data``) and has no engine
    estimator behind it."""
    H, y = sparse_regression
    assert issubclass(AdaptiveSparseRegressor, SparseRegressor)
    assert issubclass(SparseProbitClassifier, SparseClassifier)
    assert "method" not in AdaptiveSparseRegressor().get_params()
    assert "options" not in SparseProbitClassifier().get_params()
    paper = AdaptiveSparseRegressor(prior="laplace", gamma=4.0, noise_var=0.3).fit(H, y)
    generic = SparseRegressor(prior="laplace", options={"gamma": 4.0, "noise_var": 0.3}).fit(H, y)
    assert generic._route_ == paper._route_ == "em"
    np.testing.assert_array_equal(generic.beta_, paper.beta_)
    for a, b in zip(generic.predict(H, return_std=True), paper.predict(H, return_std=True)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(generic.gaussian_conditional()[2], paper.gaussian_conditional()[2])
    np.testing.assert_array_equal(generic.to_inference_data().posterior["beta"],
                                  paper.to_inference_data().posterior["beta"])


@pytest.mark.parametrize("est, words", [
    (SparseRegressor(options={"noise": 1.0}), ["'noise'", "AdaptiveSparseRegressor", "noise_var"]),
    (SparseClassifier(options={"noise_var": 1.0}), ["'noise_var'", "SparseProbitClassifier"]),
    (SparseRegressor(options={"features": "kernel"}), ["'features'", "remove them from options"]),
    (SparseRegressor(options={"tol": -1.0}), ["tol"]),
    (SparseRegressor(options={"low_rank": "no"}), ["low_rank must be True or False"]),
    (SparseClassifier(link="cauchit"), ["link must be one of", "'probit'"]),
    (SparseRegressor(prior=[LaplacePrior(1.0)]), ["fits one hierarchy"]),
])
def test_em_settings_are_checked_by_name(est, words):
    assert_fit_refused(est, words)
    assert not [k for k in vars(est) if k.endswith("_")]  # nothing fitted


def test_the_record_states_the_model_fitted_not_parameters_set_after_the_fit(sparse_regression):
    """``posterior_model`` pairs the fitted weights with the model that produced them: a ``set_params``
    after the fit (another prior, a fixed σ²) changes what the next ``fit`` does, not this fit's record."""
    H, y = sparse_regression
    est = SparseRegressor(prior="laplace", options={"gamma": 4.0}).fit(H, y)
    before = est.posterior_model(H, y)
    est.set_params(prior="horseshoe", options={"noise_var": 0.7})
    after = est.posterior_model(H, y)
    assert type(after.prior) is type(before.prior) and type(after.prior).__name__ == "LaplacePrior"
    assert after.params is None and before.params is None  # σ² was estimated by this fit, not fixed
    clf = SparseClassifier(prior="laplace").fit(H, (y > 0).astype(int))
    clf.set_params(prior="horseshoe")
    assert type(clf.posterior_model(H, (y > 0).astype(int)).prior).__name__ == "LaplacePrior"
    refit = est.fit(H, y).posterior_model(H, y)  # the next fit takes the new parameters
    assert type(refit.prior).__name__ == "HorseshoePrior" and refit.params == 0.7
