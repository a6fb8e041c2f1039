"""Engines that run the papers' algorithms, and thin sklearn estimators over them.

The public names are loaded on first access (PEP 562 ``__getattr__``), so that ``import
sparsebayes.inference`` does not pay for scikit-learn, NumPyro's samplers and every engine
module before any of them is used. ``from sparsebayes.inference import RVMRegressor``,
attribute access and ``dir()`` work as if the names were imported eagerly; submodules
(``sparsebayes.inference.typeii`` and the like) load on first attribute access too.
"""
from sparsebayes._exports import lazy_exports as _lazy_exports

#: The public names, each once: name -> submodule that defines it (imported when first used).
_LAZY = {
    "SparseClassifier": "sparse_estimators",
    "SparseRegressor": "sparse_estimators",
    "AdaptiveSparseRegressor": "adaptive",
    "SparseProbitClassifier": "adaptive",
    "BayesianLassoRegressor": "bayesian_lasso_estimator",
    "GibbsRegressor": "gibbs_estimators",
    "GibbsClassifier": "gibbs_estimators",
    "NutsRegressor": "nuts_estimators",
    "NutsClassifier": "nuts_estimators",
    "PoissonRVMRegressor": "poisson_rvm",
    "SMLRCV": "smlr",
    "SMLRClassifier": "smlr",
    "BLSRegressor": "typeii_estimators",
    "FLAPRegressor": "typeii_estimators",
    "RVMClassifier": "typeii_estimators",
    "RVMRegressor": "typeii_estimators",
    "run_nuts": "nuts",
}

__all__, __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
