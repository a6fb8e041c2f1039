"""Benchmark: Park–Casella Gibbs in minimum bulk ESS per second over β as the chains grow, on
the backend JAX runs, beside the same sampler on this machine's CPU in one run.

    python -m sparsebayes.comparisons.bench.gibbs_chains [--chains 4 32 128] [--cpu-chains 4]
        [--problem p200_n100] [--draws 2000] [--warmup 1000] [--threads 1]

The problem is the synthetic ``p = 200, n = 100`` one of :mod:`.gibbs` (or ``diabetes``;
:func:`.gibbs.problem`).
Each row runs :func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs` once to compile, then once timed
(``posterior.attrs["sampling_seconds"]``: warm-up + sampling, variates included, compile
excluded), for each chain count and each place the variates are drawn (``numpy`` on the host,
``device`` by JAX where the sweeps run). The CPU baseline runs in a subprocess with
``JAX_PLATFORMS=cpu`` and ``--threads`` BLAS threads (4 chains by default, the count
:mod:`.gibbs` compares with NUTS); every row's ratio is over it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from ._threads import describe, limit_threads
from .gibbs import problem


def _rows(problem_name, chain_counts, sources, draws, warmup):
    import arviz as az
    import jax
    import numpy as np

    from sparsebayes.inference.engines.bayesian_lasso import run_gibbs

    X, y = problem(problem_name)
    rows = []
    for chains in chain_counts:
        for source in sources:
            kw = dict(num_warmup=warmup, num_samples=draws, num_chains=chains, progress_bar=False, variates=source,
                      log_likelihood=False)
            run_gibbs(X, y, **kw)  # compile
            idata = run_gibbs(X, y, seed=1, **kw)
            ess = float(np.min(az.ess(idata, var_names=["beta"], method="bulk")["beta"].values))
            sec = idata.posterior.attrs["sampling_seconds"]
            rows.append(dict(backend=jax.default_backend(), chains=chains, variates=source, seconds=sec,
                             min_ess=ess, ess_per_s=ess / sec))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chains", type=int, nargs="+", default=[4, 32, 128])
    ap.add_argument("--cpu-chains", type=int, nargs="*", default=[4])
    ap.add_argument("--variates", nargs="+", choices=("numpy", "device"), default=["numpy", "device"])
    ap.add_argument("--problem", choices=("p200_n100", "diabetes"), default="p200_n100")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rows-only", action="store_true", help=argparse.SUPPRESS)  # the CPU baseline's subprocess
    args = ap.parse_args(argv)
    with limit_threads(args.threads):
        if args.rows_only:
            print(json.dumps(_rows(args.problem, args.chains, args.variates, args.draws, args.warmup)))
            return 0
        import jax

        print(describe())
        print(f"backend {jax.default_backend()} {jax.devices()}; problem {args.problem}; "
              f"{args.warmup} warm-up + {args.draws} draws per chain")
        base = []
        if args.cpu_chains:
            cmd = [sys.executable, "-m", "sparsebayes.comparisons.bench.gibbs_chains", "--rows-only",
                   "--chains", *map(str, args.cpu_chains), "--variates", "numpy", "--problem", args.problem,
                   "--draws", str(args.draws), "--warmup", str(args.warmup), "--threads", str(args.threads)]
            out = subprocess.run(cmd, env={**os.environ, "JAX_PLATFORMS": "cpu"}, capture_output=True, text=True,
                                 check=True)
            base = json.loads(out.stdout.strip().splitlines()[-1])
        rows = base + _rows(args.problem, args.chains, args.variates, args.draws, args.warmup)
        ref = base[0]["ess_per_s"] if base else rows[0]["ess_per_s"]
        print(f"{'backend':8s} {'chains':>6s} {'variates':8s} {'seconds':>8s} {'min ESS':>9s} {'ESS/s':>10s} "
              f"{'ratio':>7s}")
        for r in rows:
            print(f"{r['backend']:8s} {r['chains']:6d} {r['variates']:8s} {r['seconds']:8.2f} {r['min_ess']:9.0f} "
                  f"{r['ess_per_s']:10.1f} {r['ess_per_s'] / ref:7.2f}", flush=True)
        print(f"ratio: ESS/s over the first row ({'the CPU baseline' if base else 'no CPU baseline'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
