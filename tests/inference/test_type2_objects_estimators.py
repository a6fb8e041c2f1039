"""The generic estimators take type-II hierarchy objects: ``SparseRegressor(method="type2",
prior=ScaledLaplacePrior(a=1, b=0.3))`` fits what ``BLSRegressor(a=1, b=0.3)`` fits, and a type-II
estimator's fitted ``prior_`` is that object."""
import itertools

import numpy as np
import pytest
from sklearn.base import clone

from sparsebayes.inference import BLSRegressor, FLAPRegressor, RVMRegressor, SparseClassifier, SparseRegressor
from sparsebayes.models import ARDPrior, LaplacePrior, LaplaceVariancePrior, ScaledLaplacePrior
from sparsebayes.models.priors.typeii import LAMBDA_UPDATES


@pytest.fixture(scope="module")
def sparse_data():
    """A linear model with three of eight weights nonzero and correlated columns."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 8)) @ (np.eye(8) + 0.3 * rng.normal(size=(8, 8)))
    return X, X @ np.array([1.5, 0, -2.0, 0, 0, 1.0, 0, 0]) + 0.8 * rng.normal(size=80)


# non-default constants (and flags) that change the fit: each pair's reference estimator is given them
OBJECT_PAIRS = [
    (ARDPrior(c=2.0, d=0.5), RVMRegressor(features="linear", c=2.0, d=0.5)),
    (ScaledLaplacePrior(a=1.0, b=0.3, c=1.0, d=0.2, lambda_update="profiled", noise_update="variances-fixed"),
     BLSRegressor(features="linear", a=1.0, b=0.3, c=1.0, d=0.2, lambda_update="profiled",
                  noise_update="variances-fixed")),
    (LaplaceVariancePrior(a=1.0, b=0.3, c=1.0, d=0.2, lambda_update="algorithm1", noise_update="variances-fixed"),
     FLAPRegressor(features="linear", a=1.0, b=0.3, c=1.0, d=0.2, estimate_noise=True)),
]


@pytest.mark.parametrize("prior, reference", OBJECT_PAIRS, ids=lambda v: type(v).__name__)
def test_a_type2_object_fits_what_its_estimator_fits_with_those_parameters(sparse_data, prior, reference):
    X, y = sparse_data
    est = SparseRegressor(method="type2", prior=prior).fit(X, y)
    ref = clone(reference).fit(X, y)
    assert est._route_ == ref._route_ == "typeii"  # fitted by the type-II core, as the paper class is
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.noise_var_, ref.noise_var_, rtol=1e-12)
    # the fitted hierarchy is the object given, on the generic estimator and on the named one
    assert est.prior_ == prior and ref.prior_ == prior
    # the constants matter: the estimator at its defaults fits something else (a dropped field would show)
    default = type(reference)(features="linear").fit(X, y)
    assert np.max(np.abs(default.coef_ - ref.coef_)) > 1e-4


@pytest.mark.parametrize("reference", [pair[1] for pair in OBJECT_PAIRS], ids=lambda v: type(v).__name__)
def test_the_fitted_prior_refits_the_same_model(sparse_data, reference):
    X, y = sparse_data
    ref = clone(reference).fit(X, y)
    again = SparseRegressor(method="type2", prior=ref.prior_).fit(X, y)
    np.testing.assert_allclose(again.coef_, ref.coef_, rtol=1e-12, atol=1e-12)


def _every_object():
    """Each type-II hierarchy with every flag combination it takes, at constants off their defaults."""
    for cls, constants in [(ARDPrior, dict(c=0.7, d=1.3)),
                           (ScaledLaplacePrior, dict(a=0.4, b=2.0, c=0.6, d=0.1)),
                           (LaplaceVariancePrior, dict(a=0.4, b=2.0, c=0.6, d=0.1))]:
        for lam, noise in itertools.product(LAMBDA_UPDATES, cls.NOISE_UPDATES):
            yield cls(**constants, lambda_update=lam, noise_update=noise)


@pytest.mark.parametrize("prior", list(_every_object()), ids=repr)
def test_every_field_reaches_the_core_or_is_refused_by_name(prior):
    """Where the paper estimator can carry the object, the hierarchy fitted is the object itself
    (FLAP's ``noise_update`` through ``estimate_noise``); where it cannot (the RVM has no
    ``lambda_update`` nor a fixed noise), the ``ValueError`` names the field."""
    est = SparseRegressor(method="type2", prior=prior)
    if isinstance(prior, ARDPrior) and (prior.lambda_update, prior.noise_update) != ("algorithm1", "variances-fixed"):
        with pytest.raises(ValueError) as err:
            est._typeii_setup()
        wrong = [f"{k}={getattr(prior, k)!r}" for k in ("lambda_update", "noise_update")
                 if getattr(prior, k) != getattr(ARDPrior(), k)]
        for word in ["RVMRegressor", "ARDPrior", *wrong]:
            assert word in str(err.value)
        return
    assert est._typeii_setup()[0] == prior


@pytest.mark.parametrize("est, pattern", [
    (SparseRegressor(method="type2", prior=LaplacePrior(2.0)),
     r"estimates the hyperparameters.*LaplaceVariancePrior.*'laplace'"),
    (SparseRegressor(method="type2", prior=LaplacePrior(1.0, gamma_prior=(1.0, 1.0))), "LaplaceVariancePrior"),
    (SparseRegressor(method="type2", prior=ScaledLaplacePrior(a=1.0), options={"a": 1.0}), r"\['a'\] are set by prior="),
    (SparseRegressor(method="type2", prior=LaplaceVariancePrior(), options={"estimate_noise": True}),
     r"\['estimate_noise'\] are set by prior="),
    (SparseClassifier(method="type2", prior=ARDPrior(c=1.0)), r"RVMClassifier's likelihood has no noise variance .* ARDPrior's c=1.0"),
    (SparseRegressor(method="type2", prior=ScaledLaplacePrior(d=2.0), likelihood="poisson"),
     r"PoissonRVMRegressor's likelihood has no noise variance .* ScaledLaplacePrior's d=2.0"),
])
def test_type2_objects_that_cannot_be_fitted_as_given_say_why(sparse_data, est, pattern):
    X, y = sparse_data
    with pytest.raises(ValueError, match=pattern):
        est.fit(X, (y > 0).astype(int) if isinstance(est, SparseClassifier) else y)


def test_an_object_of_another_class_under_a_type2_name_is_refused():
    class Impostor:  # a user's type-II hierarchy that calls itself "scaled_laplace"
        name = "scaled_laplace"

        def typeii_penalty(self, lam, noise_var):
            """κ (unused)."""
            return 0.0

    with pytest.raises(ValueError, match="BLSRegressor .* fits ScaledLaplacePrior, not Impostor"):
        SparseRegressor(method="type2", prior=Impostor())._typeii_setup()


def test_the_classifier_takes_a_default_ard_object(sparse_data):
    X, y = sparse_data
    labels = (y > 0).astype(int)
    by_object = SparseClassifier(method="type2", prior=ARDPrior(), features="linear").fit(X, labels)
    by_name = SparseClassifier(method="type2", prior="ard", features="linear").fit(X, labels)
    np.testing.assert_array_equal(by_object.coef_, by_name.coef_)
    assert by_object.prior_ == by_name.prior_ == ARDPrior()  # the fitted hierarchy, as on the regressors


def test_the_empty_model_has_its_prior_too():
    X = np.random.default_rng(1).normal(size=(20, 3))
    with pytest.warns(UserWarning):
        est = BLSRegressor(a=2.0).fit(X, np.full(20, 3.0))
    assert est.prior_ == ScaledLaplacePrior(a=2.0)


def test_the_shared_exponential_hyperprior_is_each_hierarchys():
    """BLS and FLAP share λ's update and the prior terms (004 eqs. 13, 17) on their own exponential
    variables: ``τ_i = v_i/σ²`` for BLS, ``γ_i = v_i`` for FLAP; FLAP with fixed σ² adds no noise prior."""
    a, b, c, d, n, sum_var, noise, lam = 1.5, 0.4, 0.8, 0.3, 3.0, 2.0, 0.5, 1.7
    bls = ScaledLaplacePrior(a=a, b=b, c=c, d=d)
    flap = LaplaceVariancePrior(a=a, b=b, c=c, d=d)
    flap_sigma = flap.replace(noise_update="variances-fixed")
    np.testing.assert_allclose(bls.typeii_update_lambda(sum_var, noise, n), 2 * (n + a - 1) / (sum_var / noise + 2 * b))
    np.testing.assert_allclose(flap.typeii_update_lambda(sum_var, noise, n), 2 * (n + a - 1) / (sum_var + 2 * b))

    def exponential(total):  # n log(λ/2) − λΣ/2 + log Gamma(λ | a, b)
        from scipy.stats import gamma

        return n * np.log(lam / 2) - lam * total / 2 + gamma(a, scale=1 / b).logpdf(lam)

    from scipy.stats import invgamma

    log_noise = invgamma(c, scale=d).logpdf(noise)
    np.testing.assert_allclose(bls.typeii_log_hyperprior(sum_var, lam, noise, n),
                               exponential(sum_var / noise) + log_noise, rtol=1e-12)
    np.testing.assert_allclose(flap.typeii_log_hyperprior(sum_var, lam, noise, n), exponential(sum_var), rtol=1e-12)
    np.testing.assert_allclose(flap_sigma.typeii_log_hyperprior(sum_var, lam, noise, n),
                               exponential(sum_var) + log_noise, rtol=1e-12)


def test_the_type2_hierarchies_are_exported_from_models():
    import sparsebayes.models as models
    from sparsebayes.models import FlatPrior, GaussianPrior  # noqa: F401  (the bound engine's, same way)
    from sparsebayes.models.priors.penalty import GaussianPrior as defined

    assert GaussianPrior is defined
    assert {"ARDPrior", "ScaledLaplacePrior", "LaplaceVariancePrior", "GaussianPrior", "FlatPrior"} <= set(dir(models))
