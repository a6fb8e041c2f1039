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

import sparsebayes.inference as inference
from sparsebayes.inference import (
    SMLRCV,
    AdaptiveSparseRegressor,
    BayesianLassoRegressor,
    BLSRegressor,
    FLAPRegressor,
    PoissonRVMRegressor,
    RVMClassifier,
    RVMRegressor,
    SMLRClassifier,
    SparseClassifier,
    SparseProbitClassifier,
    SparseRegressor,
)
import pytest

from sparsebayes.inference import GibbsClassifier, GibbsRegressor, NutsClassifier, NutsRegressor
from sparsebayes.models.features import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures

#: The Gibbs estimators' draws (short chains: the checks fit on data too small for R-hat to mean anything).
_SHORT = dict(num_warmup=20, num_samples=40, num_chains=2, rhat_max=np.inf)

ESTIMATORS = [
    AdaptiveSparseRegressor(),
    AdaptiveSparseRegressor(prior="laplace", gamma=2.0),
    SparseProbitClassifier(),
    SparseProbitClassifier(prior="laplace"),
    RVMRegressor(),
    BLSRegressor(),
    FLAPRegressor(),
    FLAPRegressor(estimate_noise=True),
    RVMClassifier(),
    PoissonRVMRegressor(),
    SMLRClassifier(),
    SMLRCV(cv=3, n_lams=4),
    BayesianLassoRegressor(num_warmup=50, num_samples=100, num_chains=2, rhat_max=np.inf),
    SparseRegressor(),
    SparseClassifier(method="map"),
    GibbsRegressor(**_SHORT),
    GibbsClassifier(**_SHORT),
    LinearFeatures(),
    QuadraticFeatures(),
    GaussianKernelFeatures(),
]


#: The NUTS estimators (each check compiles a NUTS program for its own shapes: about a minute each, so slow).
SLOW_ESTIMATORS = [
    NutsRegressor(num_warmup=20, num_samples=40, num_chains=1, rhat_max=np.inf),
    NutsClassifier(num_warmup=20, num_samples=40, num_chains=1, rhat_max=np.inf),
]


def test_every_exported_estimator_is_checked():
    exported = {name for name in inference.__all__ if isinstance(getattr(inference, name), type)}
    assert exported <= {type(est).__name__ for est in ESTIMATORS + SLOW_ESTIMATORS}


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(SLOW_ESTIMATORS)
def test_sklearn_compatible_samplers(estimator, check):
    check(estimator)
