"""Engines that run the papers' algorithms, and thin sklearn estimators over them.

The public names are loaded on first access (PEP 562 ``__getattr__``), so that ``import
sparsebayes.inference`` does not pay for scikit-learn, NumPyro's samplers and every engine
module before any of them is used. ``from sparsebayes.inference import RVMRegressor``,
attribute access and ``dir()`` work as if the names were imported eagerly; submodules
(``sparsebayes.inference.engines.typeii`` and the like) load on first attribute access too.
"""
from sparsebayes._exports import lazy_exports as _lazy_exports

#: The public names, each once: name -> submodule that defines it (imported when first used).
_LAZY = {
    "SparseClassifier": "estimators.sparse_estimators",
    "SparseRegressor": "estimators.sparse_estimators",
    "AdaptiveSparseRegressor": "estimators.adaptive",
    "SparseProbitClassifier": "estimators.adaptive",
    "BayesianLassoRegressor": "estimators.bayesian_lasso_estimator",
    "GibbsRegressor": "estimators.gibbs_estimators",
    "GibbsClassifier": "estimators.gibbs_estimators",
    "NutsRegressor": "estimators.nuts_estimators",
    "NutsClassifier": "estimators.nuts_estimators",
    "PoissonRVMRegressor": "estimators.poisson_rvm",
    "SMLRCV": "estimators.smlr_cv",
    "SMLRClassifier": "estimators.smlr",
    "BLSRegressor": "estimators.typeii_estimators",
    "FLAPRegressor": "estimators.typeii_estimators",
    "RVMClassifier": "estimators.rvm_classifier",
    "RVMRegressor": "estimators.typeii_estimators",
    "run_nuts": "engines.nuts",
}

__all__, __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
