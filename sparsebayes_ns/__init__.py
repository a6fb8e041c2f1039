"""sparsebayes: sparse Bayesian learning with NumPyro models and fast custom inference.

Subpackages
-----------
sparsebayes.models       priors, likelihoods, NumPyro model functions, feature maps
sparsebayes.inference    EM, bound optimization, type-II ML, Gibbs and NUTS runners; estimators
sparsebayes.comparisons  datasets, paper reproductions, the ``sparsebayes`` CLI, benchmarks
"""
import importlib
import importlib.util
import os

import jax

# Every solver of the suite runs in float64 (a test guards it).
jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

#: lazily exported names of this package: name -> submodule (relative to ``sparsebayes``) defining it
_LAZY = {
    "compare": "comparisons.compare_any",  # sparsebayes.compare(est, X, y)
    "SparseRegressor": "inference.sparse_estimators",
    "SparseClassifier": "inference.sparse_estimators",
    "HorseshoePrior": "models.horseshoe",
    "LaplacePrior": "models.priors",
    "JeffreysPrior": "models.priors",
    **{name: f"inference.{module}" for name, module in {
        "AdaptiveSparseRegressor": "adaptive", "SparseProbitClassifier": "adaptive",
        "BayesianLassoRegressor": "bayesian_lasso_estimator", "RVMRegressor": "typeii_estimators",
        "BLSRegressor": "typeii_estimators", "FLAPRegressor": "typeii_estimators",
        "RVMClassifier": "rvm_classifier", "SMLRClassifier": "smlr", "SMLRCV": "smlr"}.items()},
}


def _lazy_attribute(package, namespace, lazy, name):
    """PEP 562 ``__getattr__`` body shared by the package ``__init__`` files.

    ``name`` in ``lazy`` (public name -> submodule) is imported from that submodule; any other
    non-dunder name that is a submodule of ``package`` is imported as one (so that attribute
    access such as ``sparsebayes.inference.typeii`` keeps working without an explicit import).
    The value is stored in ``namespace`` so that ``__getattr__`` runs once per name. Deferring
    these imports keeps ``import sparsebayes.inference`` from loading scikit-learn, NumPyro's
    samplers and every engine before one is used.
    """
    if name in lazy:
        value = getattr(importlib.import_module(f"{package}.{lazy[name]}"), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
        value = importlib.import_module(f"{package}.{name}")
    else:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    namespace[name] = value
    return value


def __getattr__(name):
    # ``sparsebayes.models`` / ``.inference`` / ``.comparisons`` (and names in ``_LAZY``) load on first use.
    return _lazy_attribute(__name__, globals(), _LAZY, name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"comparisons", "inference", "models"})


def default_compilation_cache_dir():
    """``$SPARSEBAYES_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparsebayes/jax`` (``~/.cache`` when unset)."""
    if os.environ.get("SPARSEBAYES_CACHE_DIR"):
        return os.environ["SPARSEBAYES_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sparsebayes", "jax")


def enable_compilation_cache(directory=None):
    """Keep XLA's compiled programs on disk, so that a new process skips compiling them again.

    Each engine is compiled on its first call in a process, and that compile is most of a first
    fit; a later process that finds the program in this cache loads it instead (the timings, with
    and without the cache, are in ``python -m sparsebayes.comparisons.bench.first_fit``).

    Off by default for the library, one switch to turn it on: call this function, or set the
    environment variable ``SPARSEBAYES_COMPILATION_CACHE=1`` (also ``true``/``yes``/``on``) before
    ``import sparsebayes``, which calls it at import with the default directory. It stays off by
    default because the cache holds executable code that JAX loads and runs without checking it
    (JAX's own warning): a library should not start writing such files under a user's home
    directory as a side effect of ``import``, nor load them from a directory another user or
    process could write to (shared homes, containers, CI caches). The ``sparsebayes`` command
    turns it on unless given ``--no-compile-cache``.

    JAX's own setting wins: if ``jax_compilation_cache_dir`` (or ``JAX_COMPILATION_CACHE_DIR``) is
    set and ``directory`` is not given, that directory is used; otherwise
    :func:`default_compilation_cache_dir` (``$SPARSEBAYES_CACHE_DIR``, else the user cache
    directory). The directory is created private to the user (mode 0700). Every program is
    cached, however short its compile.

    The cache is trusted code: keep it in a directory only you can write to.
    Returns the directory used.
    """
    if directory is None:
        directory = jax.config.jax_compilation_cache_dir or default_compilation_cache_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return str(directory)


#: values of ``SPARSEBAYES_COMPILATION_CACHE`` that turn the persistent compilation cache on
_SWITCH_ON = {"1", "true", "yes", "on"}


def _compilation_cache_switch():
    """Whether ``$SPARSEBAYES_COMPILATION_CACHE`` asks for the on-disk compilation cache."""
    return os.environ.get("SPARSEBAYES_COMPILATION_CACHE", "").strip().lower() in _SWITCH_ON


if _compilation_cache_switch():  # the one switch: same as calling enable_compilation_cache()
    enable_compilation_cache()
