"""Benchmark: the conjugate Gibbs samplers at scale, per draw, beside the flops of their dominant algebra.

Run ``python -m sparsebayes.comparisons.bench.gibbs_scale [--threads 1] [--models horseshoe bl]
[--wide 200 1000 5000 20000 100000] [--tall 1000 10000 100000 1000000]``: the horseshoe Gibbs
(:func:`~sparsebayes.inference.engines.hierarchy_gibbs.run`, τ = 1 fixed) and the Park–Casella Bayesian
Lasso (:func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs`) at ``n = 100`` and each ``p`` of ``--wide``
(the Bhattacharya draw where ``p > n``), and at ``p = 50`` and each ``n`` of ``--tall`` (the
sufficient statistics; the Bayesian Lasso's QR factor and bordered Gram play that part). One
chain; synthetic data (standard normal design, 10 weights 2, unit noise, seed 0).

Each size runs in its own subprocess, so its peak resident memory (``ru_maxrss``) is its own; the
baseline of a process that has imported the package and run one JAX computation is printed
first. In the subprocess the sampler runs ``sweeps`` and ``2·sweeps`` sweeps (each compiled
first, then timed twice, the faster kept): a draw's wall and CPU seconds (``time.process_time``,
all threads) are the difference over ``sweeps``, so the set-up of the data (statistics, QR, start), the same in both, is not in them;
``setup_cpu_s`` is what the shorter run spent besides its draws. The ratio divides the CPU (and
wall) time per draw by the flops of the dominant algebra (``n²p`` for Bhattacharya's ``n × n``
system, ``p³/3`` for a ``p × p`` Cholesky factor) over this machine's GEMM rate (an XLA float64
``1024³`` product per CPU second, the best of five, in a subprocess with the same threads): 1 is
the GEMM rate itself; a GEMM forming the ``n × n`` system does ``2n²p`` flops, so 2 is the floor of
Bhattacharya's ratio. ``gemm_ms`` is that product ``X diag(d) Xᵀ`` alone at the size (CPU, best of
ten) and ``cpu_over_gemm`` a draw's CPU time over it: what the rest of the sweep adds.

``--cg N:P ...`` (default ``100:20000 10000:1000``): rows of the horseshoe Gibbs with
``beta_draw="cg"`` (the prior-preconditioned conjugate gradient draw, default tolerance, warm-started
at the chain's β; model ``horseshoe-cg``, path ``cg``) at those sizes; its ``flops`` are one
iteration's ``2np`` (the products by ``X`` and ``Xᵀ``), so its ratio counts iterations, not a
complete solve, and ``cg_iters`` is the mean number of CG iterations per draw over the kept draws.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from ._threads import _set_env, describe, limit_threads

WIDE = (200, 1000, 5000, 20000, 100000)
TALL = (1000, 10000, 100000, 1000000)
MODELS = ("horseshoe", "bl")
CG_SIZES = ("100:20000", "10000:1000")


def sweeps_for(n, p):
    """Sweeps timed at a size: enough for the draws to outweigh the noise of the set-up (which the
    difference of two runs takes off), few where a sweep is costly."""
    if p <= n:
        return 20000 if p <= 100 else max(30, int(3e8 / p**3))
    return int(min(500, max(30, 3e8 / (n * n * p))))


def shape_gemm_ms(X):
    """CPU milliseconds of the one product a Bhattacharya draw cannot avoid, ``X diag(d) Xᵀ`` for
    ``X`` (n, p) (as :func:`~sparsebayes.inference.engines.gibbs_beta.bhattacharya_draw` forms it), the
    best of ten."""
    import time

    import jax
    import jax.numpy as jnp

    d = jnp.linspace(0.5, 2.0, X.shape[1])
    product = jax.jit(lambda X, d: jax.lax.dot_general(X * d, X, (((1,), (1,)), ((), ()))))
    product(X, d).block_until_ready()
    best = float("inf")
    for _ in range(10):
        t0 = time.process_time()
        product(X, d).block_until_ready()
        best = min(best, time.process_time() - t0)
    return 1e3 * best


def data(n, p, seed=0):
    """A synthetic regression: standard normal ``X`` (n, p), ``y = Xβ + ε`` with 10 weights 2."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[: min(10, p)] = 2.0
    return X, X @ beta + rng.standard_normal(n)


def gemm_rate(size=1024):
    """Float64 flops per CPU second of an XLA ``size³`` product, the best of five (CPU seconds: on a
    shared machine the wall clock counts other processes' time; with one thread they are the same
    on an idle one)."""
    import time

    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    a = jnp.asarray(data(size, size)[0])
    dot = jax.jit(lambda x: x @ x)
    dot(a).block_until_ready()
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        dot(a).block_until_ready()
        best = min(best, time.process_time() - t0)
    return 2.0 * size**3 / best


def _peak_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _timed(fn):
    import time

    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def one(model, n, p, sweeps):
    """One size, in this process: runs of ``sweeps`` and ``2·sweeps`` sweeps, each compiled first and
    then timed; a draw's cost is the difference over ``sweeps`` (the set-up, the same in both runs,
    cancels; what is left of the shorter run is the set-up). A dict of the figures."""
    import jax
    import numpy as np

    X, y = data(n, p)
    if model == "horseshoe-cg":
        from sparsebayes.inference.engines import hierarchy_gibbs
        from sparsebayes.models import HorseshoePrior

        def sample(m):
            return jax.block_until_ready(hierarchy_gibbs.run(X, y, HorseshoePrior(1.0), num_warmup=m // 5,
                                                            num_samples=m - m // 5, num_chains=1, progress_bar=False,
                                                            beta_draw="cg"))
        path = "cg"
    elif model == "horseshoe":
        from sparsebayes.inference.engines import hierarchy_gibbs
        from sparsebayes.inference.engines.gibbs_beta import choose_method
        from sparsebayes.models import HorseshoePrior

        def sample(m):
            return jax.block_until_ready(hierarchy_gibbs.run(X, y, HorseshoePrior(1.0), num_warmup=m // 5,
                                                            num_samples=m - m // 5, num_chains=1, progress_bar=False))
        path = choose_method(n, p)
    else:
        from sparsebayes.inference.engines.bayesian_lasso import run_gibbs

        def sample(m):
            return run_gibbs(X - X.mean(0), y - y.mean(), num_warmup=m // 5, num_samples=m - m // 5,
                             num_chains=1, progress_bar=False, log_likelihood=False)
        path = "rue" if n >= p else "bhattacharya"
    for m in (sweeps, 2 * sweeps):
        sample(m)  # compile (and a first run)
    # each the best of two: a large n's set-up (copies of X, page faults) varies by more than the draws cost
    (wall1, cpu1), (wall2, cpu2) = (np.min([_timed(lambda: sample(m))[1:] for _ in range(2)], axis=0)
                                    for m in (sweeps, 2 * sweeps))
    wall, cpu = (wall2 - wall1) / sweeps, (cpu2 - cpu1) / sweeps
    flops = {"bhattacharya": n * n * p, "cg": 2 * n * p}.get(path, p**3 / 3)
    peak = _peak_mb()  # before the product below
    out = {"model": model, "n": n, "p": p, "path": path, "sweeps": sweeps, "setup_cpu_s": cpu1 - sweeps * cpu,
           "wall_ms": 1e3 * wall, "cpu_ms": 1e3 * cpu, "peak_MB": peak, "flops": flops}
    if path == "bhattacharya":
        out["gemm_ms"] = shape_gemm_ms(jax.numpy.asarray(X))
    if path == "cg":
        out["cg_iters"] = cg_iterations(X, y, sample(sweeps)[0])
    return out


def cg_iterations(X, y, states, draws=20):
    """The mean CG iterations of a draw at the horseshoe's last ``draws`` states (their prior
    variances and σ², warm-started at the draw before, as the sweep does; centred data, as ``run``)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sparsebayes.inference.engines import gibbs_beta
    from sparsebayes.models import HorseshoePrior

    Xc, yc = jnp.asarray(X - X.mean(0)), jnp.asarray(y - y.mean())
    prior = HorseshoePrior(1.0)
    beta, s2 = np.asarray(states.beta[0]), np.asarray(states.noise_var[0])
    aux = jax.tree_util.tree_map(lambda a: np.asarray(a)[0], states.aux)
    draw = jax.jit(lambda k, v, s, b0: gibbs_beta.cg_draw(jax.random.normal(k, (Xc.shape[1],)),
                                                          jax.random.normal(jax.random.fold_in(k, 1), (Xc.shape[0],)),
                                                          Xc, yc, None, v, s, init=b0, return_iterations=True)[1])
    its = []
    for i in range(max(1, beta.shape[0] - draws), beta.shape[0]):  # draw i: sweep i − 1's state
        v = prior.gibbs_prior_variance(jax.tree_util.tree_map(lambda a: a[i - 1], aux))
        its.append(int(draw(jax.random.PRNGKey(i), jnp.maximum(v, 1e-300), s2[i - 1], beta[i - 1])))
    return float(np.mean(its))


def _child(args):
    import jax

    jax.config.update("jax_enable_x64", True)
    if args.child == "baseline":
        import jax.numpy as jnp

        import sparsebayes.inference.engines.hierarchy_gibbs  # noqa: F401

        (jnp.ones(3) @ jnp.ones(3)).block_until_ready()
        out = {"peak_MB": _peak_mb()}
    elif args.child == "gemm":
        out = {"gemm_flops": gemm_rate()}
    else:
        model, n, p = args.child.split(":")
        n, p = int(n), int(p)
        out = one(model, n, p, args.sweeps or (sweeps_for(n, p) if model != "horseshoe-cg" else 20))
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def _spawn(child, threads, sweeps=None, timeout=900):
    cmd = [sys.executable, "-m", "sparsebayes.comparisons.bench.gibbs_scale", "--threads", str(threads), "--child", child]
    if sweeps:
        cmd += ["--sweeps", str(sweeps)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s"}
    for line in res.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": f"exit {res.returncode}: " + (res.stderr.strip().splitlines() or ["?"])[-1][:120]}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", nargs="*", choices=MODELS, default=list(MODELS))
    ap.add_argument("--wide", nargs="*", type=int, default=list(WIDE), help="p at n = 100")
    ap.add_argument("--tall", nargs="*", type=int, default=list(TALL), help="n at p = 50")
    ap.add_argument("--cg", nargs="*", default=list(CG_SIZES), help="N:P sizes of the horseshoe with the CG draw")
    ap.add_argument("--sweeps", type=int, default=None, help="sweeps per timed run (default: by size)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds allowed to one size")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        with limit_threads(args.threads):
            return _child(args)
    _set_env(args.threads)  # reaches the subprocesses before their BLAS and XLA start
    import pandas as pd

    rate = _spawn("gemm", args.threads)["gemm_flops"]
    base = _spawn("baseline", args.threads)["peak_MB"]
    with limit_threads(args.threads):
        print(describe())
    print(f"GEMM rate (XLA float64 1024³, {args.threads} thread(s)): {rate / 1e9:.2f} GFlop per CPU second; "
          f"baseline process peak {base:.0f} MB")
    rows = []
    sizes = [(100, p) for p in args.wide] + [(n, 50) for n in args.tall]
    runs = [(model, n, p) for model in args.models for n, p in sizes]
    runs += [("horseshoe-cg", *map(int, size.split(":"))) for size in args.cg]
    for model, n, p in runs:
        r = _spawn(f"{model}:{n}:{p}", args.threads, args.sweeps, args.timeout)
        if "error" in r:
            print(f"{model} n={n} p={p}: {r['error']}", flush=True)
            rows.append({"model": model, "n": n, "p": p, "path": r["error"]})
            continue
        r["est_ms"] = 1e3 * r["flops"] / rate
        r["ratio_cpu"] = r["cpu_ms"] / r["est_ms"]
        r["ratio_wall"] = r["wall_ms"] / r["est_ms"]
        if "gemm_ms" in r:
            r["cpu_over_gemm"] = r["cpu_ms"] / r["gemm_ms"]
        rows.append(r)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
