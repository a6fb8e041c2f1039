"""Engines that run the papers' algorithms, and thin sklearn estimators over them."""
import sparsebayes  # noqa: F401  (float64)

from .adaptive import AdaptiveSparseRegressor, SparseProbitClassifier
from .bayesian_lasso_estimator import BayesianLassoRegressor
from .nuts import run_nuts
from .smlr import SMLRCV, SMLRClassifier
from .typeii_estimators import BLSRegressor, FLAPRegressor, RVMClassifier, RVMRegressor

__all__ = [
    "AdaptiveSparseRegressor",
    "BLSRegressor",
    "BayesianLassoRegressor",
    "FLAPRegressor",
    "RVMClassifier",
    "RVMRegressor",
    "SMLRCV",
    "SMLRClassifier",
    "SparseProbitClassifier",
    "run_nuts",
]
