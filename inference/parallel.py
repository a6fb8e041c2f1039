"""Independent tasks through joblib, so that a sweep runs on whatever backend the caller picks.

:func:`parallel_map` is ``[func(*args) for args in tasks]`` run by :class:`joblib.Parallel`:
serially in this process for ``n_jobs=None`` (outside any ``joblib.parallel_config``) or 1, on
joblib's default ``loky`` backend (worker processes started fresh, never forked, which JAX
requires once it has started) for ``n_jobs > 1``, and across machines under
``joblib.parallel_backend("dask")`` with a ``dask.distributed`` client. ``func`` must be a
module-level function (the workers import it by name) and every task must depend on its
arguments alone, so that the results do not depend on where or in which order the tasks run.

A task run in another process gets the caller's BLAS thread count (the count changes the
rounding of dense algebra, and with it, rarely, a fit's support) and sends its warnings back
to be issued again in the caller, where its filters and ``catch_warnings`` blocks see them.
"""
from __future__ import annotations

import os
import warnings

from joblib import Parallel, delayed
from threadpoolctl import threadpool_info, threadpool_limits


def blas_threads():
    """The fewest threads any loaded BLAS library uses here (``None`` when none is loaded)."""
    counts = [lib["num_threads"] for lib in threadpool_info() if lib.get("user_api") == "blas"]
    return min(counts) if counts else None


def _run_task(func, args, caller_pid, n_blas):
    """``(func(*args), warnings)``: in the caller's process the warnings go out as usual (an
    empty list returns); elsewhere they are recorded, with BLAS at ``n_blas`` threads."""
    if os.getpid() == caller_pid:
        return func(*args), []
    with threadpool_limits(limits=n_blas, user_api="blas"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args)
    return result, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def parallel_map(func, tasks, *, n_jobs=None):
    """``[func(*args) for args in tasks]``, the tasks run by :class:`joblib.Parallel`.

    Parameters
    ----------
    func : callable
        A module-level function (picklable by reference).
    tasks : iterable of tuple
        The positional arguments of each call.
    n_jobs : int or None, default=None
        joblib's ``n_jobs``: ``None`` takes the active ``joblib.parallel_config`` /
        ``parallel_backend`` (serial outside one), ``1`` runs serially, ``-1`` uses every core.

    Returns
    -------
    list
        The results in the order of ``tasks``.
    """
    caller, n_blas = os.getpid(), blas_threads()
    out = Parallel(n_jobs=n_jobs)(delayed(_run_task)(func, tuple(args), caller, n_blas) for args in tasks)
    results = []
    for result, caught in out:
        for message, category, filename, lineno in caught:
            warnings.warn_explicit(message, category, filename, lineno)
        results.append(result)
    return results
