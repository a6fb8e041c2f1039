"""Benchmark: SMLR under ``solver="auto"`` on whatever backend JAX runs (CPU or GPU), beside
surrogate-cd on the same backend, to the same objective.

    python -m sparsebayes.comparisons.bench.smlr_auto [--sizes 10000 100000] [--cd-up-to 10000]

Data: ``make_classification(n, 500, n_informative=50, n_classes=10, random_state=0)``,
standardized; ``SMLRClassifier(lam=10, features=None)`` (λ = 1/C at the C = 0.1 of
:mod:`sparsebayes.comparisons.bench.smlr`). Each size is fitted twice under ``auto`` (the first
fit includes compiling), and once by surrogate-cd up to ``--cd-up-to`` rows; the solver ``auto``
chose, the seconds, and both objectives are printed, with the ratio of the warm ``auto`` fit to
surrogate-cd's.
"""
from __future__ import annotations

import argparse
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--cd-up-to", type=int, default=10_000)
    args = ap.parse_args(argv)

    import jax
    from sklearn.datasets import make_classification

    import sparsebayes  # noqa: F401  (float64)
    from sparsebayes.inference import SMLRClassifier

    print(f"backend {jax.default_backend()} {jax.devices()}, x64 {jax.config.jax_enable_x64}", flush=True)
    for n in args.sizes:
        X, y = make_classification(n_samples=n, n_features=500, n_informative=50, n_classes=10, random_state=0)
        X = (X - X.mean(0)) / X.std(0)
        times = []
        for _ in range(2):
            t = time.perf_counter()
            auto = SMLRClassifier(lam=10.0, solver="auto", features=None).fit(X, y)
            times.append(time.perf_counter() - t)
        line = (f"n={n}: auto -> {auto.solver_}: first {times[0]:.2f} s, second {times[1]:.2f} s, "
                f"objective {auto.objective_:.6f}, {auto.n_nonzero_} nonzero")
        if n <= args.cd_up_to:
            t = time.perf_counter()
            cd = SMLRClassifier(lam=10.0, solver="surrogate-cd", features=None).fit(X, y)
            dt = time.perf_counter() - t
            line += f"; surrogate-cd {dt:.2f} s, objective {cd.objective_:.6f}; auto/cd {times[1] / dt:.3g}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
