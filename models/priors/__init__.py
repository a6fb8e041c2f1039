"""The hierarchies (priors), one module per family, and the registry every engine asks.

* :mod:`~sparsebayes.models.priors.laplace`: :class:`LaplacePrior`, Gaussian scale mixture with
  exponential variances, the Laplacian marginal (002 eqs. 9-10); :func:`make_prior` (a hierarchy
  from its registry name);
* :mod:`~sparsebayes.models.priors.jeffreys`: :class:`JeffreysPrior`, ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3);
* :mod:`~sparsebayes.models.priors.horseshoe`: the horseshoe (Carvalho, Polson & Scott 2010);
* :mod:`~sparsebayes.models.priors.typeii`: the type-II variance hierarchies, ARD (Tipping 2001),
  scaled Laplace (BLS, Helgøy & Li 2019) and Laplace variance (FLAP, Babacan et al. 2010);
* :mod:`~sparsebayes.models.priors.penalty`: the Gaussian (ℓ2) and flat priors of SMLR's MAP
  (Krishnapuram et al. 2005, Secs. 3.2-3.3);
* :mod:`~sparsebayes.models.priors.registry`: :data:`HIERARCHIES`, what each engine asks of a hierarchy
  (:data:`CAPABILITIES`, :func:`require`, :func:`supports`) and the EM hooks for shared hyperparameters.

A hierarchy is one object; a new one is one module and its registration
(:func:`register_hierarchy`), with no engine edit.
"""
from sparsebayes._exports import lazy_exports as _lazy_exports

#: The names of the package: name -> the module that defines it (imported when first used), so that
#: importing the registry imports no hierarchy family until it is read.
_LAZY = {
    "LaplacePrior": "laplace",
    "check_gamma_prior": "laplace",
    "make_prior": "laplace",
    "JeffreysPrior": "jeffreys",
    "BUILT_IN": "registry",
    "CAPABILITIES": "registry",
    "HIERARCHIES": "registry",
    "NUTS_SETTINGS": "registry",
    "able": "registry",
    "has_piece": "registry",
    "hierarchy_name": "registry",
    "is_hierarchy": "registry",
    "missing_pieces": "registry",
    "neg_log_hyperprior": "registry",
    "nuts_settings": "registry",
    "register_hierarchy": "registry",
    "require": "registry",
    "supports": "registry",
    "update_shared": "registry",
    "variance_of_precision": "registry",
}

__all__, __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
