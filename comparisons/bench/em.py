"""Benchmark: Figueiredo's Jeffreys EM beside scikit-learn SVC/SVR and ARDRegression.

Cases (issue 2, "Speed"): Jeffreys kernel probit on Ripley's synth.tr (n = 100, 250; h = 0.5)
and WBC (n = 300, standardized, h = 12); Jeffreys kernel regression on sinc (σ = 0.1,
n = 1000, 2000, 4000; h = 3). Peers on the same data and kernel: ``SVC``/``SVR`` with a
fixed C (no CV) and ``ARDRegression`` on the same Gaussian kernel design (its time includes
building the design, as ours does). Our default fit runs on the factored kernel design when
the kernel matrix is of low numerical rank (:mod:`sparsebayes.inference.engines.lowrank`; the sinc
cases); the same fit on the dense design (``low_rank=False``) is timed beside it.

Our fits are timed twice on the same data: the first call includes JIT compilation of the
EM loop (one compile per active-set width), the second is the run alone; the ratios use the
run time. Each timing is the best of ``--repeats`` calls (one call above n = 1000, and for ARD
above n = 300), or of as many as fit in half a second (at most 100): a millisecond fit on a
shared machine needs more than three tries for a stable best. ARD is skipped above
``--ard-max-n`` (default 1000: its p × p inverse per iteration makes n = 2000 and 4000 take
many minutes).

Run: ``python -m sparsebayes.comparisons.bench.em --threads 1`` (and ``--threads 2``);
``--max-n 300`` runs the probit cases alone (Ripley, WBC: the issue's "n ≤ 300" rows). The
thread count is applied to the loaded BLAS pools and to XLA (:mod:`._threads`), and the pools'
own report is printed. Timings on shared 2-core machines are noisy.

``--large`` runs the large-``n`` linear cases instead (issue 43, "EM at large n"): ``n`` rows
(``--large-n``, default 10,000 and 100,000) of ``p = 1,000`` standard normal inputs, 20 nonzero
weights (±U(0.5, 2)), unit noise, no intercept. Laplace EM (``AdaptiveSparseRegressor`` with
``LaplacePrior(gamma=(αn)²)``, ``noise_var=1``, no bias, raw inputs: the Lasso ``‖y − Xβ‖²/(2n) + α‖β‖₁``,
α = ``--alpha``) beside skglm's and scikit-learn's ``Lasso`` (no intercept) at the same α. Every
solver runs a ladder of tolerances and is timed at the loosest whose objective is within
``--objective-rtol`` (default 1e-9) of the least objective any run reached; Jeffreys EM
(default tolerance, and ``tol=1e-6``) beside them, with its support, whether it holds the true
one, and how many of its weights EM would still prune (the working-set check's test, on the full
design). ``--with-full`` adds the full-Gram EM (``fit_em``, the path below the working set's size)
for both priors. Each solver runs in its own process after a warm-up fit (JIT and numba
compilation excluded), so that its peak resident memory (``peak_mb``, minus the data's,
``data_mb``) is its own; CPU seconds are the process's (one BLAS and XLA thread).
"""
from __future__ import annotations

import argparse
import time


def _best_time(fn, repeats, budget_s=0.5, max_calls=100):
    """Best of ``repeats`` calls, or of more while they fit in ``budget_s`` (at most ``max_calls``)."""
    best, out, spent, calls = float("inf"), None, 0.0, 0
    while calls < repeats or (spent < budget_s and calls < max_calls):
        t0 = time.perf_counter()
        out = fn()
        elapsed = time.perf_counter() - t0
        best, spent, calls = min(best, elapsed), spent + elapsed, calls + 1
    return best, out


def _cases(seed):
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    from sparsebayes.comparisons import datasets, synthetic

    rng = np.random.default_rng(seed)
    train, _ = datasets.ripley_synth()
    idx = rng.choice(train.y.size, 100, replace=False)
    yield "ripley probit", "clf", train.X[idx], train.y[idx], 0.5
    yield "ripley probit", "clf", train.X, train.y, 0.5
    wbc = datasets.breast_cancer()
    part = rng.permutation(wbc.y.size)[:300]
    yield "wbc probit", "clf", StandardScaler().fit_transform(wbc.X[part]), wbc.y[part], 12.0
    for n in (1000, 2000, 4000):
        X, y = synthetic.sinc(n, sigma=0.1, seed=rng)
        yield "sinc regression", "reg", X, y, 3.0


def run(threads, repeats, ard_max_n, seed=0, max_n=None):
    """Time every case (those of at most ``max_n`` points, if given); returns a list of result
    dicts (also printed by :func:`main`)."""
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import ARDRegression
    from sklearn.svm import SVC, SVR

    from sparsebayes.comparisons.baselines import rbf_gamma
    from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
    from sparsebayes.models.features import GaussianKernelFeatures

    results = []
    for name, kind, X, y, width in _cases(seed):
        n = X.shape[0]
        if max_n is not None and n > max_n:
            continue
        Est = SparseProbitClassifier if kind == "clf" else AdaptiveSparseRegressor
        ours = lambda: Est(features="kernel", kernel_width=width).fit(X, y)  # noqa: E731
        dense = lambda: Est(features="kernel", kernel_width=width, low_rank=False).fit(X, y)  # noqa: E731
        if kind == "clf":
            svm = lambda: SVC(C=1.0, gamma=rbf_gamma(width)).fit(X, y)  # noqa: E731
            target = 2.0 * y - 1.0
        else:
            svm = lambda: SVR(C=1.0, epsilon=0.1, gamma=rbf_gamma(width)).fit(X, y)  # noqa: E731
            target = y

        def ard():
            K = GaussianKernelFeatures(width=width, bias=False).fit(X).transform(X)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                return ARDRegression().fit(K, target)

        reps = repeats if n <= 1000 else 1
        t0 = time.perf_counter()
        first = ours()
        t_first = time.perf_counter() - t0
        t_ours, model = _best_time(ours, reps)
        if model.design_rank_ is None:  # the default fit already ran on the dense design
            t_dense = t_ours
        else:
            dense()  # compile the dense design's widths
            t_dense = _best_time(dense, reps)[0]
        t_svm, svm_model = _best_time(svm, reps)
        t_ard = _best_time(ard, reps if n <= 300 else 1)[0] if n <= ard_max_n else float("nan")
        results.append({
            "case": name, "n": n, "threads": threads,
            "ours_first_s": t_first, "ours_compile_s": max(t_first - t_ours, 0.0), "ours_run_s": t_ours,
            "design_rank": model.design_rank_, "ours_dense_s": t_dense,
            "svm_s": t_svm, "ard_s": t_ard,
            "ours_over_svm": t_ours / t_svm, "ours_over_ard": t_ours / t_ard, "dense_over_ours": t_dense / t_ours,
            "ours_kernels": model.n_active_, "svm_support": int(np.size(svm_model.support_)),
            "ours_iters": int(np.max(first.n_iter_)),
        })
        print(f"  done: {name} n={n}: ours {t_ours:.3g} s (first call {t_first:.3g} s; dense design {t_dense:.3g} s), "
              f"svm {t_svm:.3g} s, "
              f"ard {t_ard:.3g} s", flush=True)
    return results


def _large_data(n, p=1000, k=20, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    truth = np.zeros(p)
    support = rng.choice(p, k, replace=False)
    truth[support] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 2.0, k)
    return X, X @ truth + rng.standard_normal(n), truth


def _rss_mb():
    """This process's resident memory now (Linux ``/proc``), MB."""
    with open("/proc/self/statm") as f:
        import os

        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _large_solver(solver, n, alpha, tols):
    """One solver's ladder of tolerances on the large case of ``n`` rows (in a process of its own):
    a warm-up fit, then each ``tol`` timed once; returns a dict of lists and the memory figures."""
    import resource
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from sparsebayes.inference import AdaptiveSparseRegressor
    from sparsebayes.inference.engines.em_slices import fit_em
    from sparsebayes.inference.engines.em_working_set import coordinate_keeps
    from sparsebayes.models.likelihoods import GaussianLikelihood
    from sparsebayes.models.priors import JeffreysPrior, LaplacePrior

    X, y, truth = _large_data(n)
    data_mb = _rss_mb()
    gamma = (alpha * n) ** 2
    laplace = LaplacePrior(gamma=gamma)

    def fit(tol):
        if solver == "laplace_em":
            return AdaptiveSparseRegressor(prior=laplace, noise_var=1.0, bias=False, standardize=False, tol=tol,
                                           max_iter=100_000).fit(X, y).coef_, 1.0
        if solver == "jeffreys_em":
            est = AdaptiveSparseRegressor(prior="jeffreys", bias=False, standardize=False, tol=tol,
                                          max_iter=100_000).fit(X, y)
            return est.coef_, est.noise_var_
        if solver == "laplace_full_em":
            return fit_em(X, y, laplace, GaussianLikelihood(), noise_var=1.0, tol=tol, max_iter=100_000).beta, 1.0
        if solver == "jeffreys_full_em":
            res = fit_em(X, y, JeffreysPrior(), GaussianLikelihood(), tol=tol, max_iter=100_000)
            return res.beta, res.noise_var
        if solver == "skglm":
            from skglm import Lasso as SkglmLasso

            return SkglmLasso(alpha=alpha, fit_intercept=False, tol=tol).fit(X, y).coef_, 1.0
        if solver == "sklearn":
            from sklearn.linear_model import Lasso

            return Lasso(alpha=alpha, fit_intercept=False, tol=tol, max_iter=100_000).fit(X, y).coef_, 1.0
        raise ValueError(solver)

    out = {"solver": solver, "n": n, "tol": [], "cpu_s": [], "wall_s": [], "objective": [], "nonzero": [],
           "holds_truth": [], "would_prune": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit(tols[0])  # compilation (XLA, numba) and first-touch allocations
        for tol in tols:
            c0, w0 = time.process_time(), time.perf_counter()
            beta, s2 = fit(tol)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            r = y - X @ beta
            nz = beta != 0
            out["tol"].append(tol)
            out["cpu_s"].append(cpu)
            out["wall_s"].append(wall)
            out["objective"].append(float(r @ r / (2 * n) + alpha * np.abs(beta).sum()))
            out["nonzero"].append(int(nz.sum()))
            out["holds_truth"].append(bool(np.all(nz[truth != 0])))
            if solver.startswith("jeffreys"):
                d = np.einsum("ij,ij->j", X, X)
                keeps = coordinate_keeps(JeffreysPrior(), X.T @ r + d * beta, d, s2, current=beta)
                out["would_prune"].append(int(np.sum(nz & ~keeps)))
            else:
                out["would_prune"].append(-1)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["data_mb"] = data_mb
    return out


#: Each solver's tolerance ladder in the large cases (loosest first).
LARGE_TOLS = {
    "laplace_em": [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9],
    "skglm": [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10],
    "sklearn": [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10],
    "jeffreys_em": [1e-3, 1e-6],
    "laplace_full_em": [1e-4, 1e-6, 1e-8],
    "jeffreys_full_em": [1e-3, 1e-6],
}


def run_large(threads, ns, alpha, objective_rtol, with_full=False):
    """The large-``n`` rows (module docstring): one process per solver and ``n``; returns the rows."""
    import json
    import subprocess
    import sys

    solvers = ["laplace_em", "skglm", "sklearn", "jeffreys_em"] + (
        ["laplace_full_em", "jeffreys_full_em"] if with_full else [])
    rows = []
    for n in ns:
        runs = {}
        for solver in solvers:
            cmd = [sys.executable, "-m", "sparsebayes.comparisons.bench.em", "--large-one", solver, "--threads",
                   str(threads), "--alpha", repr(alpha), "--large-n", str(n)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"  {solver} n={n} failed:\n{proc.stderr[-2000:]}", flush=True)
                continue
            runs[solver] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"  done: {solver} n={n}", flush=True)
        lasso = [s for s in runs if not s.startswith("jeffreys")]
        best = min(min(runs[s]["objective"]) for s in lasso)
        target = best + objective_rtol * abs(best)

        def at_target(run):
            for i, obj in enumerate(run["objective"]):
                if obj <= target:
                    return i
            return None

        ref = runs.get("skglm")
        ref_i = at_target(ref) if ref else None
        ref_cpu = ref["cpu_s"][ref_i] if ref_i is not None else float("nan")
        ref_wall = ref["wall_s"][ref_i] if ref_i is not None else float("nan")
        for solver, run in runs.items():
            picks = ([at_target(run)] if solver in lasso else range(len(run["tol"])))
            for i in picks:
                if i is None:
                    rows.append({"n": n, "solver": solver, "tol": float("nan"), "note": "never reached the objective"})
                    continue
                rows.append({
                    "n": n, "solver": solver, "tol": run["tol"][i], "cpu_s": run["cpu_s"][i],
                    "wall_s": run["wall_s"][i], "cpu_over_skglm": run["cpu_s"][i] / ref_cpu,
                    "wall_over_skglm": run["wall_s"][i] / ref_wall,
                    "rel_objective": (run["objective"][i] - best) / abs(best) if solver in lasso else float("nan"),
                    "nonzero": run["nonzero"][i], "holds_truth": run["holds_truth"][i],
                    "would_prune": run["would_prune"][i], "peak_mb": run["peak_mb"],
                    "over_data_mb": run["peak_mb"] - run["data_mb"],
                })
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS/XLA threads (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed calls (default 3)")
    parser.add_argument("--ard-max-n", type=int, default=1000, help="skip ARDRegression above this n")
    parser.add_argument("--max-n", type=int, default=None, help="run only the cases of at most this n")
    parser.add_argument("--large", action="store_true", help="the large-n linear cases (module docstring)")
    parser.add_argument("--large-n", type=int, nargs="+", default=[10_000, 100_000], help="rows of the large cases")
    parser.add_argument("--alpha", type=float, default=0.05, help="the Lasso's alpha in the large cases")
    parser.add_argument("--objective-rtol", type=float, default=1e-9,
                        help="the large cases' objective target, relative to the least reached")
    parser.add_argument("--with-full", action="store_true", help="add the full-Gram EM to the large cases")
    parser.add_argument("--large-one", default=None, help=argparse.SUPPRESS)  # one solver's process
    args = parser.parse_args(argv)

    from ._threads import limit_threads, run_table

    if args.large_one is not None:
        import json

        with limit_threads(args.threads):
            print(json.dumps(_large_solver(args.large_one, args.large_n[0], args.alpha, LARGE_TOLS[args.large_one])))
        return None
    if args.large:
        import os

        print(f"load average (1, 5, 15 min): {os.getloadavg()}")
        return run_table(args.threads, lambda: run_large(args.threads, args.large_n, args.alpha, args.objective_rtol,
                                                         args.with_full),
                         f"n x 1000 Gaussian design, 20 true weights; Lasso alpha={args.alpha}; each Lasso solver at "
                         f"the loosest tol whose objective is within {args.objective_rtol:g} of the least reached "
                         "(rel_objective); Jeffreys EM at each tol of its ladder (no peer: ratios to skglm's Lasso "
                         "time); cpu_s/wall_s exclude compilation; peak_mb = the solver process's peak RSS, "
                         "over_data_mb = above the data's; would_prune = kept weights EM would still prune")

    return run_table(args.threads, lambda: run(args.threads, args.repeats, args.ard_max_n, max_n=args.max_n),
                     "times in seconds; ours_run_s excludes JIT compilation (ours_compile_s = first call - best later "
                     "call); ratios use ours_run_s; design_rank = rank of the factored kernel design EM ran on "
                     "(NaN: dense), ours_dense_s = the same fit with low_rank=False; peers: SVC/SVR with C = 1 (no "
                     "CV), ARDRegression on the same kernel design")

if __name__ == "__main__":
    main()
