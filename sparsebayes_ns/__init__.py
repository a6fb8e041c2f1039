"""sparsebayes: sparse Bayesian learning with NumPyro models and fast custom inference.

Subpackages
-----------
sparsebayes.models       priors, likelihoods, NumPyro model functions, feature maps
sparsebayes.inference    EM, bound optimization, type-II ML, Gibbs and NUTS runners; estimators
sparsebayes.comparisons  compare, datasets, paper reproductions, the ``sparsebayes`` CLI, benchmarks
sparsebayes.testing      the conformance checks, to test your own hierarchy or likelihood

The top level re-exports every public name of ``models``, ``inference`` and ``comparisons`` (their
``__all__``, each written once in its package), plus :func:`compare` and the compilation cache.
Every name loads on first use (PEP 562), so ``import sparsebayes`` stays light.
"""

import jax

# Every solver of the suite runs in float64 (a test guards it).
jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

#: The subpackages, exported by name.
_SUBPACKAGES = ("models", "inference", "comparisons", "testing")


def _export_table():
    """Install this package's exports on first use: ``_LAZY`` (public name -> where it is defined,
    relative to ``sparsebayes``: ``compare``, and every subpackage's ``__all__``, read from the
    subpackage and never written here again), ``__all__``, ``__getattr__`` and ``__dir__``
    (:func:`sparsebayes._exports.lazy_exports`). Deferred so that ``import sparsebayes`` imports
    no more than JAX."""
    import importlib

    from sparsebayes._exports import lazy_exports

    # import_module, not ``from sparsebayes import models``: that would ask this module's __getattr__
    table = {"compare": ("comparisons.compare_any", "compare"),  # sparsebayes.compare(est, X, y)
             **{name: (sub, name) for sub in ("models", "inference", "comparisons")
                for name in importlib.import_module(f"{__name__}.{sub}").__all__}}
    all_, getattr_, dir_ = lazy_exports(
        __name__, table, own=("default_compilation_cache_dir", "enable_compilation_cache", *_SUBPACKAGES))
    globals().update(_LAZY=table, __all__=all_, __getattr__=getattr_, __dir__=dir_)


def __getattr__(name):
    # First use of any exported name (or of __all__ / _LAZY): install the exports, then resolve.
    _export_table()
    return globals()[name] if name in ("__all__", "_LAZY") else globals()["__getattr__"](name)


def __dir__():
    _export_table()
    return globals()["__dir__"]()


from sparsebayes.compilation_cache import (  # noqa: E402  (the opt-in disk cache: nothing runs until called)
    compilation_cache_switch as _compilation_cache_switch, default_compilation_cache_dir, enable_compilation_cache)

if _compilation_cache_switch():  # the one switch: same as calling enable_compilation_cache()
    enable_compilation_cache()
