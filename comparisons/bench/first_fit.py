"""Benchmark: the first fit a user feels, in a fresh process, with and without the compilation cache.

Run ``python -m sparsebayes.comparisons.bench.first_fit [--threads 1] [--cache off|on|both]``.
For every estimator of :mod:`sparsebayes.inference` a new Python process (``subprocess``, with
``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` set, no JAX or sparsebayes cache
variables inherited, and JAX on the backend it picks by itself, a GPU where there is one, unless
``--platform`` names one) times

* ``import``: ``import sparsebayes.inference`` and the first access of the estimator's name (which
  loads its module, scikit-learn and NumPyro where it needs them);
* ``first fit``: the first ``fit`` in the process, compilation of the engine included;
* ``second fit``: a new estimator with the same settings fitted on the same data in the same
  process (what a user feels once the programs are compiled);
* ``programs``: the XLA programs the first fit built (compiled, or loaded from the disk cache),
  eager operations included, a count that does not depend on the machine's load; and
  ``compile_s``, the seconds spent compiling them or loading them from the cache (JAX's own
  account: its compile event wraps both, so each program counts once, hit or not), and per
  program in the rows (``program_s``: name, seconds; ``--json``);
* ``first_fit_cpu_s``: the process's CPU seconds in the first fit (less moved by other processes
  on a loaded machine than the wall time);

on 200 x 8 standardized data (``make_regression``/``make_classification``, ``random_state=0``;
for the Poisson RVM, Poisson counts of rate ``exp(0.5 x₁ − 0.3 x₂ + 0.2 x₃)`` on the regression's
standardized inputs).
Without a disk cache ("cold") and with one ("cache"): a fresh temporary directory per estimator,
turned on with ``SPARSEBAYES_COMPILATION_CACHE=1`` / ``SPARSEBAYES_CACHE_DIR`` (the library's one
switch); a first process fills it and the second process, whose numbers are reported, reads it.
Beside each, the same for a scikit-learn peer in the same run (``ARDRegression`` for the
regressors, ``LogisticRegression`` with an L1 penalty and the saga solver for the classifiers,
``LogisticRegressionCV`` for ``SMLRCV``, ``LassoCV`` for the Bayesian Lasso, ``PoissonRegressor`` for
the Poisson RVM) and the ratio of
first fits (ours cold / peer). The Bayesian Lasso runs a short chain (see the table's note) so
that the compile, not the sampling, is what is timed.

The worker runs as ``python -c`` so that the import it times is the first import of the package
in that process (``python -m`` of this module would import the package before timing it).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

#: estimator -> (task, constructor call in the worker, peer constructor call, peer import)
ESTIMATORS = {
    "AdaptiveSparseRegressor": ("regression", "AdaptiveSparseRegressor()", "ARDRegression()", "sklearn.linear_model"),
    "SparseProbitClassifier": ("classification", "SparseProbitClassifier()",
                               "LogisticRegression(l1_ratio=1.0, solver='saga')", "sklearn.linear_model"),
    "RVMRegressor": ("regression", "RVMRegressor()", "ARDRegression()", "sklearn.linear_model"),
    "RVMClassifier": ("classification", "RVMClassifier()",
                      "LogisticRegression(l1_ratio=1.0, solver='saga')", "sklearn.linear_model"),
    "BLSRegressor": ("regression", "BLSRegressor()", "ARDRegression()", "sklearn.linear_model"),
    "FLAPRegressor": ("regression", "FLAPRegressor()", "ARDRegression()", "sklearn.linear_model"),
    "SMLRClassifier": ("classification", "SMLRClassifier()",
                       "LogisticRegression(l1_ratio=1.0, solver='saga')", "sklearn.linear_model"),
    "SMLRCV": ("classification", "SMLRCV()",
               "LogisticRegressionCV(l1_ratios=(1.0,), solver='saga', cv=5, scoring='accuracy')",
               "sklearn.linear_model"),
    "PoissonRVMRegressor": ("counts", "PoissonRVMRegressor()", "PoissonRegressor()", "sklearn.linear_model"),
    "BayesianLassoRegressor": ("regression", "BayesianLassoRegressor(num_warmup=200, num_samples=200)",
                               "LassoCV()", "sklearn.linear_model"),
}

NOTE = ("BayesianLassoRegressor: num_warmup=200, num_samples=200 (default Gibbs sampler, 4 chains); "
        "every other estimator with its defaults")

#: issue 31's aims for a first fit in a fresh process (the fit alone, import excluded), seconds
AIM_COLD_S, AIM_CACHE_S = 2.0, 0.5

#: the fields of one worker row
FIELDS = ("estimator", "side", "cache", "import_s", "first_fit_s", "second_fit_s", "first_fit_cpu_s", "cache_hits",
          "pools", "backend", "programs", "compile_s", "program_s")

#: the program a fresh process runs: argv = side, estimator, task, constructor, peer import
WORKER = r"""
import json, sys, time
side, name, task, make, peer_module = sys.argv[1:6]
t0 = time.perf_counter()
if side == "ours":
    import sparsebayes.inference as _pkg
    cls = getattr(_pkg, name)
    namespace = {name: cls}
else:
    import importlib
    _pkg = importlib.import_module(peer_module)
    namespace = vars(_pkg)
import_s = time.perf_counter() - t0

hits, compiles = [], []
try:
    from jax._src import monitoring
    monitoring.register_event_listener(
        lambda event, **kw: hits.append(1) if event == "/jax/compilation_cache/cache_hits" else None)
    monitoring.register_event_duration_secs_listener(
        lambda event, secs, **kw: compiles.append((kw.get("fun_name", "?"), secs))
        if event.endswith("backend_compile_duration") else None)
except Exception:  # JAX is not loaded for the peer, or its private monitoring API moved
    pass

import warnings
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.preprocessing import StandardScaler
if task == "regression":
    X, y = make_regression(n_samples=200, n_features=8, n_informative=3, noise=1.0, random_state=0)
    y = (y - y.mean()) / y.std()
elif task == "counts":
    X, _ = make_regression(n_samples=200, n_features=8, random_state=0)
    X = StandardScaler().fit_transform(X)
    y = np.random.default_rng(0).poisson(np.exp(0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.2 * X[:, 2])).astype(float)
else:
    X, y = make_classification(n_samples=200, n_features=8, random_state=0)
X = StandardScaler().fit_transform(X)

times, cpu = [], []
for i in range(2):
    if i == 1:
        first_compiles = len(compiles)
    est = eval(make, namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(X, y)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)

from threadpoolctl import threadpool_info
pools = ", ".join(sorted({f"{p['internal_api']}={p['num_threads']}" for p in threadpool_info()}))
backend = sys.modules["jax"].default_backend() if side == "ours" else "-"
print("ROW " + json.dumps({"import_s": import_s, "first_fit_s": times[0], "second_fit_s": times[1],
                           "first_fit_cpu_s": cpu[0],
                           "cache_hits": len(hits), "pools": pools, "backend": backend,
                           "programs": first_compiles, "compile_s": sum(s for _, s in compiles[:first_compiles]),
                           "program_s": compiles[:first_compiles]}))
"""


def worker_env(threads, cache_dir=None, platform=None):
    """The fresh process's environment: ``threads`` BLAS/OpenMP threads, no inherited caches, and
    ``JAX_PLATFORMS=platform`` when given (``None``: JAX's own choice, a GPU where there is one)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "SPARSEBAYES_", "JAX_PLATFORMS"))}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    if platform is not None:
        env["JAX_PLATFORMS"] = platform
    if threads == 1:
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"
    else:
        env.pop("XLA_FLAGS", None)
    if cache_dir is not None:
        env["SPARSEBAYES_COMPILATION_CACHE"] = "1"
        env["SPARSEBAYES_CACHE_DIR"] = str(cache_dir)
    return env


def run_worker(name, side="ours", threads=1, cache_dir=None, timeout=600, platform=None):
    """Time ``name`` (or its peer, ``side="peer"``) in a fresh process; one row with :data:`FIELDS`."""
    task, make, peer_make, peer_module = ESTIMATORS[name]
    done = subprocess.run(
        [sys.executable, "-c", WORKER, side, name, task, make if side == "ours" else peer_make, peer_module],
        env=worker_env(threads, cache_dir, platform), capture_output=True, text=True, timeout=timeout)
    rows = [line[4:] for line in done.stdout.splitlines() if line.startswith("ROW ")]
    if done.returncode != 0 or not rows:
        raise RuntimeError(f"{side} {name} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    row = json.loads(rows[-1])
    return {"estimator": name, "side": side, "cache": "on" if cache_dir is not None else "off", **row}


def _estimator_rows(name, threads, cache, platform):
    """The rows of one estimator: ours without / with the cache, and the peer."""
    rows = []
    if cache in ("off", "both"):
        rows.append(run_worker(name, threads=threads, platform=platform))
    if cache in ("on", "both"):
        with tempfile.TemporaryDirectory(prefix="sparsebayes-first-fit-") as d:
            run_worker(name, threads=threads, cache_dir=d, platform=platform)  # fills the cache
            rows.append(run_worker(name, threads=threads, cache_dir=d, platform=platform))  # reads it: reported
    rows.append(run_worker(name, side="peer", threads=threads, platform=platform))
    return rows


def bench(names, threads=1, cache="both", platform=None):
    """The rows of every estimator in ``names`` (:func:`_estimator_rows`). An estimator whose worker
    fails is reported on stderr and left out of the rows, so that one failure does not lose the
    others' measurements; the names that failed are returned beside the rows."""
    rows, failed = [], []
    for name in names:
        try:
            rows.extend(_estimator_rows(name, threads, cache, platform))
        except (RuntimeError, subprocess.TimeoutExpired) as err:
            failed.append(name)
            print(f"  FAILED {name}: {str(err)[-600:]}", file=sys.stderr, flush=True)
            continue
        print(f"  done {name}", file=sys.stderr, flush=True)
    return rows, failed


def table(rows):
    """One line per estimator: import, first fit cold / cached, second fit, the peer, and the ratio."""
    out = []
    for name in dict.fromkeys(r["estimator"] for r in rows):
        by = {(r["side"], r["cache"]): r for r in rows if r["estimator"] == name}
        cold, warm, peer = by.get(("ours", "off")), by.get(("ours", "on")), by[("peer", "off")]
        ours = cold or warm
        peer_first = peer["first_fit_s"]
        out.append({
            "estimator": name,
            "import s": ours["import_s"],
            "programs": ours["programs"],
            "XLA compile s": cold["compile_s"] if cold else None,
            "1st fit cold s": cold["first_fit_s"] if cold else None,
            "1st fit cold CPU s": cold.get("first_fit_cpu_s") if cold else None,
            "1st fit cache s": warm["first_fit_s"] if warm else None,
            "cache hits": warm["cache_hits"] if warm else None,
            "2nd fit s": ours["second_fit_s"],
            "import+1st cold s": ours["import_s"] + cold["first_fit_s"] if cold else None,
            "peer": ESTIMATORS[name][2].split("(")[0],
            "peer import s": peer["import_s"],
            "peer 1st fit s": peer_first,
            "peer 2nd fit s": peer["second_fit_s"],
            "aim cold/cache s": f"{AIM_COLD_S:g}/{AIM_CACHE_S:g}",
            "meets": "/".join("-" if r is None else ("yes" if r["first_fit_s"] <= aim else "no")
                              for r, aim in ((cold, AIM_COLD_S), (warm, AIM_CACHE_S))),
            "cold/peer": cold["first_fit_s"] / peer_first if cold else None,
            "cache/peer": warm["first_fit_s"] / peer_first if warm else None,
        })
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", choices=("off", "on", "both"), default="both")
    ap.add_argument("--estimators", nargs="*", default=list(ESTIMATORS), choices=list(ESTIMATORS))
    ap.add_argument("--platform", default=None,
                    help="JAX_PLATFORMS for the workers (e.g. cpu); default: JAX's own choice, a GPU where there is one")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    from tabulate import tabulate

    load_before = os.getloadavg()[0]
    rows, failed = bench(args.estimators, threads=args.threads, cache=args.cache, platform=args.platform)
    pools = sorted({r["pools"] for r in rows if r["side"] == "ours"})
    backends = sorted({r["backend"] for r in rows if r["side"] == "ours"})
    print(f"threads: OMP/OPENBLAS/MKL_NUM_THREADS={args.threads}, JAX backend: {', '.join(backends) or '-'} "
          f"(JAX_PLATFORMS={args.platform or '(unset)'}), "
          f"loaded pools in the workers: {'; '.join(pools) or 'none'}; "
          f"1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (the bench adds about 1)")
    print("fresh process per row; 'cache' = second process on a cache the first one filled; "
          "ratios are first fits (ours / peer)")
    print(NOTE)
    print(tabulate(table(rows), headers="keys", floatfmt=".3g", missingval="-"))
    if failed:
        print(f"failed (left out, see stderr): {', '.join(failed)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "load_before": load_before, "rows": rows, "failed": failed}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
