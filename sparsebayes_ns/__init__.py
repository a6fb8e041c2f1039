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
import os

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
