"""scikit-learn's estimator checks over every estimator of the package, with no expected failures.

One ``parametrize_with_checks`` over every estimator :mod:`sparsebayes.inference` exports (both
adaptive priors, FLAP with its noise fixed and estimated) and the feature maps of
:mod:`sparsebayes.models.features`. Nothing is excluded, nothing is expected to fail, and no
warning is silenced: a check that fails is a bug of the estimator.

The Bayesian Lasso's chains are short (its Gibbs sweeps compile once per shape) and its R-hat
check is off: the checks fit on data too small for R-hat to mean anything.
"""
import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

import pytest
from public_estimators import SHORT_GIBBS, SHORT_NUTS, uncovered

import sparsebayes.inference as inference
from sparsebayes.models.features import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures

ESTIMATORS = [
    inference.AdaptiveSparseRegressor(),
    inference.AdaptiveSparseRegressor(prior="laplace", gamma=2.0),
    inference.SparseProbitClassifier(),
    inference.SparseProbitClassifier(prior="laplace"),
    inference.RVMRegressor(),
    inference.BLSRegressor(),
    inference.FLAPRegressor(),
    inference.FLAPRegressor(estimate_noise=True),
    inference.RVMClassifier(),
    inference.PoissonRVMRegressor(),
    inference.SMLRClassifier(),
    inference.SMLRCV(cv=3, n_lams=4),
    inference.BayesianLassoRegressor(num_warmup=50, num_samples=100, num_chains=2, rhat_max=np.inf),
    inference.SparseRegressor(),
    inference.SparseClassifier(method="map"),
    inference.GibbsRegressor(**SHORT_GIBBS),
    inference.GibbsClassifier(**SHORT_GIBBS),
    LinearFeatures(),
    QuadraticFeatures(),
    GaussianKernelFeatures(),
]


#: The NUTS estimators (each check compiles a NUTS program for its own shapes: about a minute each, so slow).
SLOW_ESTIMATORS = [
    inference.NutsRegressor(**SHORT_NUTS),
    inference.NutsClassifier(**SHORT_NUTS),
]


def test_every_exported_estimator_is_checked():
    assert uncovered(ESTIMATORS + SLOW_ESTIMATORS) == set()


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(SLOW_ESTIMATORS)
def test_sklearn_compatible_samplers(estimator, check):
    check(estimator)
