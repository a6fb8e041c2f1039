"""Every EM, type-II, MAP and sampling estimator has a fitted ``prior_``, the hierarchy object of the
model it fitted, and giving it back to the generic estimator refits that model: SMLR / SMLRCV (the
penalty's hierarchy at the fitted λ), the Bayesian Lasso (``ScaledLaplacePrior`` with Park & Casella's
``λ² ~ Gamma(r, δ)`` as its ``a, b``) and the Poisson RVM (``ARDPrior()``)."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

from sparsebayes.inference import (
    SMLRCV,
    BayesianLassoRegressor,
    PoissonRVMRegressor,
    SMLRClassifier,
    SparseClassifier,
    SparseRegressor,
)
from sparsebayes.inference.estimators.sparse_estimators import TYPEII_PAPER_ESTIMATORS, check_model
from sparsebayes.models import ARDPrior, FlatPrior, GaussianPrior, LaplacePrior, ScaledLaplacePrior


@pytest.fixture(scope="module")
def binary():
    """test_sparse_estimators' data: in one session the fits share its compiled programs."""
    return make_classification(n_samples=120, n_features=5, n_informative=3, n_redundant=0, random_state=0)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4))
    return X, X @ np.array([1.5, 0.0, -1.0, 0.0]) + 0.5 * rng.normal(size=40)


# (SMLR's parameters, the hierarchy its prior_ must be at the fitted lam_)
SMLR_CASES = [
    (dict(penalty="l1", lam=0.3), lambda lam: LaplacePrior.from_lam(lam)),
    (dict(penalty="l1", lam=0.05, lam_relative=True), lambda lam: LaplacePrior.from_lam(lam)),
    (dict(penalty="l2", lam=2.0), lambda lam: GaussianPrior(lam)),
    (dict(penalty=None), lambda lam: FlatPrior()),
]


@pytest.mark.parametrize("params, expected", SMLR_CASES, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_smlr_prior_is_the_penalty_at_lam_and_refits_the_same_model(binary, params, expected):
    X, y = binary
    clf = SMLRClassifier(**params).fit(X, y)
    assert clf.prior_ == expected(clf.lam_)
    if params.get("lam_relative"):
        assert clf.lam_ != params["lam"]  # the λ fitted (lam · λ_max), not the fraction given
    options = {k: v for k, v in params.items() if k not in ("penalty", "lam", "lam_relative")}
    again = SparseClassifier(method="map", prior=clf.prior_, options=options).fit(X, y)
    assert again.lam_ == clf.lam_ and again.prior_ == clf.prior_
    np.testing.assert_allclose(again.coef_, clf.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(again.intercept_, clf.intercept_, rtol=1e-10, atol=1e-10)


def test_smlrcv_prior_is_the_chosen_lam_and_refits_the_final_model(binary):
    X, y = binary
    cv = SMLRCV(penalty="l1", lams=[1.0, 0.3, 0.1], cv=3).fit(X, y)
    assert cv.prior_ == LaplacePrior.from_lam(cv.lam_)
    again = SparseClassifier(method="map", prior=cv.prior_).fit(X, y)
    np.testing.assert_allclose(again.coef_, cv.coef_, rtol=1e-10, atol=1e-10)
    ridge = SMLRCV(penalty="l2", lams=[3.0, 0.5], cv=3).fit(X, y)
    assert ridge.prior_ == GaussianPrior(ridge.lam_)


GIBBS = dict(num_warmup=30, num_samples=40, num_chains=1, seed=3)


def test_bayesian_lasso_prior_maps_r_delta_c_d_and_refits_the_same_draws(regression):
    """``prior_`` carries the non-default ``λ² ~ Gamma(r, δ)`` and noise prior; under the generic
    estimator they reach the sampler (the old ``{"sampler": method}`` dropped them, and the chain then
    differed), so the same seed gives the same draws."""
    X, y = regression
    est = BayesianLassoRegressor(lam2_shape=2.0, lam2_rate=0.5, c=1.0, d=0.1, **GIBBS).fit(X, y)
    assert est.prior_ == ScaledLaplacePrior(a=2.0, b=0.5, c=1.0, d=0.1)
    again = SparseRegressor(method="gibbs", prior=est.prior_, options=GIBBS).fit(X, y)
    np.testing.assert_array_equal(again.beta_draws_, est.beta_draws_)
    np.testing.assert_array_equal(again.coef_mean_, est.coef_mean_)
    assert again.prior_ == est.prior_
    # the fields matter: the estimator's defaults draw another chain
    default = BayesianLassoRegressor(**GIBBS).fit(X, y)
    assert default.prior_ == ScaledLaplacePrior(a=1.0, b=1.78)
    assert np.max(np.abs(default.coef_mean_ - est.coef_mean_)) > 1e-6


def test_a_scaled_laplace_object_sets_the_samplers_hyperpriors_and_its_flags_must_stay_default():
    nuts = check_model(SparseRegressor(method="nuts", prior=ScaledLaplacePrior(a=3.0, b=0.2, c=0.5, d=0.7)))
    hyper, settings, sampler = nuts._bayesian_lasso_setup()  # the Bayesian Lasso's route, its settings
    assert nuts._route() == "bayesian_lasso" and sampler == "nuts"
    assert tuple(hyper) == (3.0, 0.2, 0.5, 0.7)
    by_name = check_model(SparseRegressor(method="gibbs", prior="scaled_laplace"))
    assert by_name._bayesian_lasso_setup() == BayesianLassoRegressor()._bayesian_lasso_setup()  # the estimator's defaults
    for flag in [dict(noise_update="variances-fixed"), dict(lambda_update="profiled")]:
        with pytest.raises(ValueError, match=f"BayesianLassoRegressor has no parameter for ScaledLaplacePrior's "
                                             f"{next(iter(flag))}=.*method='gibbs'"):
            check_model(SparseRegressor(method="gibbs", prior=ScaledLaplacePrior(**flag)))
    with pytest.raises(ValueError, match=r"\['lam2_rate'\] are set by prior="):
        check_model(SparseRegressor(method="gibbs", prior=ScaledLaplacePrior(b=1.0),
                                         options={"lam2_rate": 2.0}))


def test_poisson_rvm_prior_is_ard():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))  # test_poisson_rvm's shape: in one session the programs are shared
    y = rng.poisson(np.exp(0.5 + 0.8 * X[:, 0])).astype(float)
    est = PoissonRVMRegressor().fit(X, y)
    assert est.prior_ == ARDPrior()


def test_each_type2_name_fits_its_paper_estimators_model_and_the_refusal_lists_them():
    """The table is what ``SparseRegressor(method="type2", prior=<name>)`` fits, and what its refusal lists."""
    import sparsebayes.inference as inference

    for name, (_, cls_name) in TYPEII_PAPER_ESTIMATORS.items():
        est = check_model(SparseRegressor(method="type2", prior=name))
        assert est._typeii_setup()[0] == getattr(inference, cls_name)()._typeii_setup()[0]
    with pytest.raises(ValueError) as err:
        check_model(SparseRegressor(method="type2", prior="horseshoe"))
    for name, (_, cls_name) in TYPEII_PAPER_ESTIMATORS.items():
        assert f"{name!r} ({cls_name})" in str(err.value)


def test_a_method_without_a_route_for_the_task_is_refused_by_name():
    with pytest.raises(ValueError, match="method='map' has no regression engine: use 'em', 'type2', 'gibbs' or 'nuts'"):
        check_model(SparseRegressor(method="map"))


def test_an_object_sets_an_absolute_lam_that_options_cannot_make_relative(binary):
    """A hierarchy object holds SMLR's absolute λ: ``lam_relative=True`` in ``options`` would multiply
    it by λ_max again (a silent wrong λ); it is refused as a parameter that ``prior=`` sets."""
    X, y = binary
    with pytest.raises(ValueError, match=r"options \['lam_relative'\] are set by prior="):
        SparseClassifier(method="map", prior=LaplacePrior.from_lam(0.3), options={"lam_relative": True}).fit(X, y)
