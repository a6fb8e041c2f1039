"""The scikit-learn estimators: the fitting core, the generic estimators, the paper aliases."""

from sparsebayes._exports import lazy_exports as _lazy_exports

#: Nothing is exported here (the public names are :mod:`sparsebayes.inference`'s); submodules load on
#: first attribute access.
__all__, __getattr__, __dir__ = _lazy_exports(__name__, {})
