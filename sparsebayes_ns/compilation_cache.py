"""The opt-in persistent compilation cache: XLA's compiled programs kept on disk across processes.

:func:`enable_compilation_cache` is the one switch (also reached by ``SPARSEBAYES_COMPILATION_CACHE=1``
at ``import sparsebayes``); nothing here runs unless it is called.
"""
import os
import stat

import jax


def default_compilation_cache_dir():
    """``$SPARSEBAYES_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparsebayes/jax`` (``~/.cache`` when unset)."""
    if os.environ.get("SPARSEBAYES_CACHE_DIR"):
        return os.environ["SPARSEBAYES_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sparsebayes", "jax")


def compilation_cache_key():
    """The name of the cache's subdirectory: ``sparsebayes-<version>-jax-<version>-<backend>``
    (the backend JAX runs on, e.g. ``cpu``, ``gpu``; asking for it starts JAX's backend)."""
    from sparsebayes import __version__

    return f"sparsebayes-{__version__}-jax-{jax.__version__}-{jax.default_backend()}"


def _check_private(path):
    """``PermissionError`` unless ``path`` is a directory owned by this user that no one else can write."""
    if not hasattr(os, "getuid"):  # not POSIX: no owner or mode bits to check
        return
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"compilation cache {path!r} is not a directory")
    if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(
            f"compilation cache {path!r} is owned by another user or writable by others (mode "
            f"{stat.S_IMODE(st.st_mode):o}): the cache holds code that JAX runs unchecked; use a directory only you "
            f"can write to")


def enable_compilation_cache(directory=None):
    """Keep XLA's compiled programs on disk, so that a new process skips compiling them again.

    Each engine is compiled on its first call in a process, and that compile is most of a first
    fit; a later process that finds the program in this cache loads it instead (the timings, with
    and without the cache, are in ``python -m sparsebayes.comparisons.bench.first_fit``).

    Off by default for the library, one switch to turn it on: call this function once per process
    (a notebook's first cell), or set the environment variable ``SPARSEBAYES_COMPILATION_CACHE=1``
    (also ``true``/``yes``/``on``) before ``import sparsebayes``, which calls it at import with the
    default directory. It stays off by default because the cache holds executable code that JAX
    loads and runs without checking it (JAX's own warning): a library should not start writing
    such files under a user's home directory as a side effect of ``import``, nor load them from a
    directory another user or process could write to (shared homes, containers, CI caches). The
    ``sparsebayes`` command turns it on unless given ``--no-compile-cache``.

    Where: ``directory`` if given; else JAX's own setting (``jax_compilation_cache_dir`` or
    ``JAX_COMPILATION_CACHE_DIR``) if set; else :func:`default_compilation_cache_dir`
    (``$SPARSEBAYES_CACHE_DIR``, else the user cache directory). The programs go in a
    subdirectory named by :func:`compilation_cache_key`, the package's and JAX's versions and the
    backend (``sparsebayes-0.1.0-jax-0.10.2-cpu``), so that an upgrade or a GPU machine sharing a
    home directory starts its own cache and an old one can be deleted whole; a directory that
    already ends in that name is used as it is (calling this twice, or a worker process given the
    directory of its parent, adds no second level). The subdirectory is created private to the
    user (mode 0700) and is refused (``PermissionError``) if it exists owned by someone else or
    writable by group or others. Every program is cached, however short its compile.

    Returns the directory used (the subdirectory).
    """
    if directory is None:
        directory = jax.config.jax_compilation_cache_dir or default_compilation_cache_dir()
    directory = os.fspath(directory)
    key = compilation_cache_key()
    if os.path.basename(os.path.normpath(directory)) != key:
        directory = os.path.join(directory, key)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    _check_private(directory)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return str(directory)


#: values of ``SPARSEBAYES_COMPILATION_CACHE`` that turn the persistent compilation cache on
_SWITCH_ON = {"1", "true", "yes", "on"}


def compilation_cache_switch():
    """Whether ``$SPARSEBAYES_COMPILATION_CACHE`` asks for the on-disk compilation cache."""
    return os.environ.get("SPARSEBAYES_COMPILATION_CACHE", "").strip().lower() in _SWITCH_ON
