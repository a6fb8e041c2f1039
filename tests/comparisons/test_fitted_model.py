"""What compare asks of a fitted estimator (:mod:`sparsebayes.comparisons.fitted_model`): its likelihood
from the attributes it states, never its class; the selection family and the outcome's scale from it."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from sparsebayes.comparisons.fitted_model import (
    draws_on_raw_terms,
    likelihood_name,
    on_link_scale,
    per_basis_matrix,
    to_raw_terms,
)
from sparsebayes.comparisons.selection import family_of
from sparsebayes.inference import (
    AdaptiveSparseRegressor,
    PoissonRVMRegressor,
    RVMClassifier,
    SMLRClassifier,
    SparseProbitClassifier,
)
from sparsebayes.models import LIKELIHOODS, LinearFeatures


class _Stated(RegressorMixin, BaseEstimator):
    """A regressor known only by the likelihood it states (no class of the package)."""

    def __init__(self, likelihood_=None):
        if likelihood_ is not None:
            self.likelihood_ = likelihood_


class _StatedClassifier(ClassifierMixin, BaseEstimator):
    def __init__(self, link=None):
        self.link = link


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)


@pytest.mark.parametrize("name", sorted(LIKELIHOODS))
def test_the_stated_likelihood_object_or_name_is_read(name):
    lik = LIKELIHOODS[name]()
    assert likelihood_name(_Stated(lik)) == name == likelihood_name(_Stated(name))


def test_the_family_follows_the_stated_likelihood():
    assert family_of(_Stated(LIKELIHOODS["poisson"]())) == "poisson"
    assert family_of(_Stated()) == "gaussian"  # a regressor stating none: the package's Gaussian
    assert family_of(_StatedClassifier("logistic")) == "logit"
    assert family_of(_StatedClassifier("probit")) == "probit"
    for name in ("student_t", "negative_binomial"):
        with pytest.raises(ValueError, match="no projection"):
            family_of(_Stated(name))
    with pytest.raises(ValueError, match="multinomial"):
        family_of(_Stated("multinomial"))


def test_the_logistic_link_of_the_em_classifier_is_projected_as_a_logit(binary):
    # Its twin observes y by the logistic likelihood: the class of the estimator (the probit one by
    # default) does not say which.
    X, y = binary
    logistic = SparseProbitClassifier(link="logistic").fit(X, y)
    probit = SparseProbitClassifier().fit(X, y)
    assert (family_of(logistic), family_of(probit)) == ("logit", "probit")
    assert on_link_scale(logistic) and on_link_scale(probit)


def test_the_outcome_scale_by_likelihood(binary):
    X, y = binary
    assert not on_link_scale(AdaptiveSparseRegressor().fit(X, X[:, 0] + 0.5 * np.cos(np.arange(len(X)))))
    assert not on_link_scale(_Stated("student_t"))  # an identity link: sd(y)
    assert on_link_scale(_Stated("poisson")) and on_link_scale(_Stated("negative_binomial"))


def test_the_outcome_scale_is_what_the_likelihood_states():
    """Read from the likelihood's ``identity_link`` declaration, not its name: a user's likelihood object
    stating it is read in units of y, the same object without it on the link scale."""
    from sparsebayes.models.likelihoods import PoissonLikelihood

    class MyIdentity(PoissonLikelihood):  # any object: only the statement is read here
        name = "my_identity"
        identity_link = True

    assert not on_link_scale(_Stated(MyIdentity()))
    assert on_link_scale(_Stated(PoissonLikelihood()))


def test_the_estimators_without_likelihood_yet(binary):
    X, y = binary
    counts = PoissonRVMRegressor(features="linear").fit(X, np.random.default_rng(2).poisson(np.exp(0.5 * X[:, 0])))
    assert (likelihood_name(counts), family_of(counts), on_link_scale(counts)) == ("poisson", "poisson", True)
    rvm = RVMClassifier(features="linear").fit(X, y)
    assert likelihood_name(rvm) == "bernoulli_logistic" and family_of(rvm) == "logit"
    assert draws_on_raw_terms(rvm) and not draws_on_raw_terms(SparseProbitClassifier().fit(X, y))
    assert likelihood_name(SMLRClassifier().fit(X, y)) == "multinomial"


def test_the_raw_terms_map_is_the_feature_maps_and_its_matrix():
    rng = np.random.default_rng(1)
    X = rng.normal(3.0, 2.0, size=(40, 3))
    fm = LinearFeatures(center=True, scale=True).fit(X)
    beta = rng.normal(size=4)
    A = per_basis_matrix(to_raw_terms(fm), 4)
    np.testing.assert_allclose(A @ beta, fm.raw_weights(beta), rtol=1e-12)
    # the same function of x: h(x)ᵀβ on the map's columns = [1, x]ᵀ(Aβ) on the raw terms
    np.testing.assert_allclose(fm.transform(X) @ beta, np.column_stack([np.ones(40), X]) @ (A @ beta), rtol=1e-10)
    np.testing.assert_array_equal(per_basis_matrix(to_raw_terms(None), 3), np.eye(3))
