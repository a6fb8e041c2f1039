"""Engines that run the papers' algorithms, and thin sklearn estimators over them.

The estimators and ``run_nuts`` are loaded on first access (PEP 562 ``__getattr__``), so that
``import sparsebayes.inference`` does not pay for scikit-learn, NumPyro's samplers and every
engine module before any of them is used. ``from sparsebayes.inference import RVMRegressor``,
attribute access and ``dir()`` work as if the names were imported eagerly; submodules
(``sparsebayes.inference.typeii`` and the like) load on first attribute access too.
"""
import sparsebayes  # noqa: F401  (float64)

#: public name -> submodule that defines it (imported when the name is first used)
_LAZY = {
    "AdaptiveSparseRegressor": "adaptive",
    "SparseProbitClassifier": "adaptive",
    "BayesianLassoRegressor": "bayesian_lasso_estimator",
    "run_nuts": "nuts",
    "PoissonRVMRegressor": "poisson_rvm",
    "SMLRCV": "smlr",
    "SMLRClassifier": "smlr",
    "SparseClassifier": "sparse_estimators",
    "SparseRegressor": "sparse_estimators",
    "BLSRegressor": "typeii_estimators",
    "FLAPRegressor": "typeii_estimators",
    "RVMClassifier": "typeii_estimators",
    "RVMRegressor": "typeii_estimators",
}

__all__ = [
    "AdaptiveSparseRegressor",
    "BLSRegressor",
    "BayesianLassoRegressor",
    "FLAPRegressor",
    "PoissonRVMRegressor",
    "RVMClassifier",
    "RVMRegressor",
    "SMLRCV",
    "SMLRClassifier",
    "SparseClassifier",
    "SparseProbitClassifier",
    "SparseRegressor",
    "run_nuts",
]


def __getattr__(name):
    return sparsebayes._lazy_attribute(__name__, globals(), _LAZY, name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
