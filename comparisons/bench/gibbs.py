"""Benchmark: Park–Casella Gibbs vs NUTS (NumPyro, and PyMC when installed), minimum bulk ESS per second over β.

Run ``python -m sparsebayes.comparisons.bench.gibbs [--threads 1]`` (``--problems`` and
``--samplers`` pick the problems and the peers beside Gibbs): diabetes (442 × 10) and a
synthetic p = 200, n = 100 problem; 4 chains, 1000 warm-up + 2000 kept draws each, on the
same Bayesian Lasso (Gibbs: :func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs`; NUTS: the NumPyro
model :func:`~sparsebayes.models.bayesian_lasso.bayesian_lasso`, on the scale mixture Gibbs
samples and with ``marginal=True``, τ² integrated out, its best form; PyMC: the same hierarchy
written in PyMC, :func:`_pymc_bayesian_lasso`, chains one after another). Seconds are warm-up +
sampling. Gibbs excludes its compilation (a first call compiles); NumPyro compiles inside
each run, so NUTS is printed both as
run (with compile) and less the compile time JAX reports inside the run (``run_nuts``'s
``compile_seconds``), and the ratio is given for both; PyMC reports
its sampling time without its compile, and the total is printed beside it.
"""
from __future__ import annotations

import argparse
import sys

from ._threads import describe, limit_threads


PROBLEMS = ("diabetes", "p200_n100")
PEERS = ("nuts", "nuts-marginal", "pymc")


def problem(name):
    """Centred ``(X, y)`` of a bench problem: ``"diabetes"`` or the synthetic ``"p200_n100"`` (10 of
    200 weights 2, the rest 0, unit noise, seed 0)."""
    import numpy as np

    if name == "diabetes":
        from sparsebayes.comparisons.datasets import diabetes

        ds = diabetes()
        return ds.X - ds.X.mean(0), ds.y - ds.y.mean()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 200))
    y = X @ np.r_[np.full(10, 2.0), np.zeros(190)] + rng.standard_normal(100)
    return X - X.mean(0), y - y.mean()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--problems", nargs="*", choices=PROBLEMS, default=list(PROBLEMS))
    ap.add_argument("--samplers", nargs="*", choices=PEERS, default=list(PEERS),
                    help="the peers beside Gibbs, which always runs (the ratios are over it)")
    args = ap.parse_args(argv)
    with limit_threads(args.threads):
        return _bench(args)


def _bench(args):
    import arviz as az
    import numpy as np

    from sparsebayes.inference.engines.bayesian_lasso import run_gibbs
    from sparsebayes.inference.engines.nuts import run_nuts
    from sparsebayes.models.bayesian_lasso import bayesian_lasso

    print(describe() + "; shared 2-core machine, timings are noisy")
    for name in args.problems:
        X, y = problem(name)
        res = {}
        run_gibbs(X, y, num_warmup=2, num_samples=8, num_chains=4, progress_bar=False)  # compile
        for sampler in ["gibbs", *args.samplers]:
            if sampler == "gibbs":
                idata = run_gibbs(X, y, num_warmup=args.warmup, num_samples=args.draws, num_chains=4,
                                  progress_bar=False)  # one compiled call, as timed
            elif sampler == "pymc":
                try:
                    idata, total = _pymc_bayesian_lasso(X, y, args.draws, args.warmup)
                except ImportError:
                    print(f"{name:10s} pymc  not installed (the bench extra)")
                    continue
            else:
                idata = run_nuts(bayesian_lasso, X, y, num_warmup=args.warmup, num_samples=args.draws, num_chains=4,
                                 progress_bar=False, marginal=sampler == "nuts-marginal")
            ess = float(np.min(az.ess(idata, var_names=["beta"], method="bulk")["beta"].values))
            sec = idata.posterior.attrs["sampling_seconds"]
            res[sampler] = ess / sec
            print(f"{name:10s} {sampler:5s} min bulk ESS {ess:8.0f} in {sec:8.2f} s -> {ess / sec:10.1f} per s", flush=True)
            if sampler == "pymc":
                print(f"{name:10s} pymc  with its compile ({total:.2f} s in all): {ess / total:10.1f} per s; ratio gibbs/pymc "
                      f"{res['gibbs'] / res['pymc']:8.1f} (compile included: {res['gibbs'] * total / ess:8.1f})")
            if sampler.startswith("nuts"):
                compile_s = idata.posterior.attrs["compile_seconds"]
                run = ess / max(sec - compile_s, 1e-9)
                print(f"{name:10s} {sampler} less its compile ({compile_s:.2f} s): {run:10.1f} per s; "
                      f"{idata.posterior.attrs['n_divergences']} divergences")
                print(f"{name:10s} ratio gibbs/{sampler} {res['gibbs'] / res[sampler]:8.1f} "
                      f"(NUTS compile excluded: {res['gibbs'] / run:8.1f})")
    return 0


def _pymc_bayesian_lasso(X, y, draws, warmup, seed=0):
    """PyMC NUTS on the posterior of :func:`~sparsebayes.models.bayesian_lasso.bayesian_lasso` at its
    defaults (``λ² ~ Gamma(1, 1.78)``, ``p(σ²) ∝ 1/σ²``, the intercept integrated out: a
    ``+½ log σ²`` term); 4 chains one after another (``cores=1``). Returns the ``InferenceData``
    with ``posterior.attrs["sampling_seconds"]`` set to PyMC's sampling time (compile excluded)
    and the wall time of model building, compile and sampling together."""
    import logging
    import time
    import warnings

    import pymc as pm
    import pytensor.tensor as pt

    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=".*BLAS.*")  # pip's PyTensor: NumPy's C API, no BLAS link
    t0 = time.perf_counter()
    with pm.Model():
        lam2 = pm.Gamma("lam2", 1.0, 1.78)
        noise_var = pm.HalfFlat("noise_var")
        pm.Potential("jeffreys_and_intercept", -0.5 * pt.log(noise_var))  # −log σ² + ½ log σ²
        tau2 = pm.Exponential("tau2", lam2 / 2.0, shape=X.shape[1])
        beta = pm.Normal("beta", 0.0, pt.sqrt(tau2 * noise_var), shape=X.shape[1])
        pm.Normal("y", X @ beta, pt.sqrt(noise_var), observed=y)
        idata = pm.sample(draws=draws, tune=warmup, chains=4, cores=1, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    total = time.perf_counter() - t0
    idata.posterior.attrs["sampling_seconds"] = float(idata.sample_stats.attrs["sampling_time"])
    return idata, total


if __name__ == "__main__":
    sys.exit(main())
