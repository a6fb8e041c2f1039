"""Thread settings for the benchmarks, applied at run time and reported as they really are.

``python -m sparsebayes.comparisons.bench.X`` imports the package, and with it numpy and its
BLAS, before ``main`` runs, so environment variables set in ``main`` come too late for BLAS:
:func:`limit_threads` also limits the loaded thread pools with ``threadpoolctl``, and
:func:`describe` prints what the pools report. XLA reads ``XLA_FLAGS`` when its CPU backend
starts (the first JAX computation), which is after ``main`` sets it. The variables also reach
subprocesses (R's glmnet).
"""
from __future__ import annotations

import os
from contextlib import contextmanager


def _set_env(n):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    if n == 1:
        os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"
    else:
        os.environ.pop("XLA_FLAGS", None)


def describe():
    """One line: the environment variables and the thread count of every loaded BLAS/OpenMP pool."""
    from threadpoolctl import threadpool_info

    pools = sorted({f"{p['internal_api']}={p['num_threads']}" for p in threadpool_info()})
    return (f"threads: OMP/OPENBLAS/MKL_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
            f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '(unset)')!r}, loaded pools: {', '.join(pools) or 'none'}")


@contextmanager
def limit_threads(n):
    """Run the body with ``n`` BLAS/OpenMP threads (and single-threaded XLA when ``n == 1``)."""
    from threadpoolctl import threadpool_limits

    _set_env(n)
    with threadpool_limits(limits=n):
        yield


def run_table(threads, run, header):
    """Run ``run()`` (rows of dicts) under ``threads`` threads; print the pools, ``header`` and the table."""
    import pandas as pd

    with limit_threads(threads):
        res = pd.DataFrame(run())
        print(describe())
    print(header)
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.4g}".format):
        print(res.to_string(index=False))
    return res
