"""Krishnapuram et al. (2005), SMLR: seconds per component-wise sweep, block iteration and
surrogate-cd step as n and d grow (``smlr-scaling``; the paper: sweep O(ndm), block O((dm)^3)).
"""
from __future__ import annotations

import time

import numpy as np
from tqdm.auto import tqdm

from sparsebayes.comparisons.experiments.smlr import _threads
from sparsebayes.comparisons.registry import Result, experiment


def _time_steps(problem, prior, solver, n_steps):
    from sparsebayes.inference.engines import bound

    bound.trace(problem, prior, solver=solver, n_steps=n_steps)[0].coef.block_until_ready()  # compile
    t0 = time.perf_counter()
    bound.trace(problem, prior, solver=solver, n_steps=n_steps)[0].coef.block_until_ready()
    return (time.perf_counter() - t0) / n_steps


@experiment("smlr-scaling", default_reps=1,
            description="Seconds per component-wise sweep, block iteration and surrogate-cd step vs n and d")
def scaling(reps, seed, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    from sparsebayes.inference.engines import bound
    from sparsebayes.models.priors import LaplacePrior

    rng = np.random.default_rng(seed)
    m, prior = 3, LaplacePrior.from_lam(1.0)
    rows = []
    for vary, values in (("n", (1000, 2000, 4000, 8000, 16000)), ("d", (25, 50, 100, 200, 400))):
        for v in tqdm(values, desc=f"smlr-scaling {vary}"):
            n, d = (v, 50) if vary == "n" else (2000, v)
            X = rng.normal(size=(n, d))
            y = rng.integers(0, m, n)
            for solver in ("componentwise", "block", "surrogate-cd"):
                if solver == "block" and d * (m - 1) > 600:
                    continue
                problem = bound.make_problem(X, y, m, solver=solver, prior=prior)
                sec = _time_steps(problem, prior, solver, 5)
                rows.append({"method": "smlr", "solver": solver, "vary": vary, "n": n, "d": d, "seconds": sec})
    slopes = {}
    units = {"componentwise": "one sweep", "block": "one iteration", "surrogate-cd": "one outer step"}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, vary in zip(axes, ("n", "d")):
        fixed = "d = 50" if vary == "n" else "n = 2000"
        for solver in ("componentwise", "block", "surrogate-cd"):
            sel = [r for r in rows if r["vary"] == vary and r["solver"] == solver]
            x = np.array([r[vary] for r in sel], dtype=float)
            t = np.array([r["seconds"] for r in sel])
            slope = float(np.polyfit(np.log(x), np.log(t), 1)[0])
            slopes[f"{solver}_vs_{vary}"] = slope
            skipped = " (d(m−1) ≤ 600 only)" if vary == "d" and solver == "block" else ""
            ax.loglog(x, t, "o-", label=f"{solver}, {units[solver]}: slope {slope:.2f}{skipped}")
        xs = np.array(sorted({r[vary] for r in rows if r["vary"] == vary}), dtype=float)
        seconds = [r["seconds"] for r in rows if r["vary"] == vary]
        for power, style in ((1, (0, (4, 3))), (3, (0, (1, 2)))) if vary == "d" else ((1, (0, (4, 3))),):
            ax.loglog(xs, min(seconds) * (xs / xs[0]) ** power, color="gray", lw=0.8, ls=style,
                      label=f"slope {power} guide")
        ax.set_ylim(min(seconds) / 2, max(seconds) * 3)
        ax.set_xticks(xs, [f"{v:g}" for v in xs])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(vary)
        ax.set_ylabel("seconds per step (unit in the legend)")
        ax.set_title(f"vary {vary} at {fixed}, m = {m}", fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path = str(out / "smlr-scaling.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    notes = [f"fitted log-log slopes: {', '.join(f'{k} = {v:.2f}' for k, v in slopes.items())}",
             "the paper: sweep O(ndm) (slope 1 in n and in d), block O((dm)^3) per iteration plus O(n d m) "
             "for the gradient (slope 1 in n, up to 3 in d); surrogate-cd: the O(ndm) gradient per outer step plus "
             "O(d) per moved weight in its sweeps (slope 1 in n, up to 2 in d)",
             "timings exclude jit compilation; 2 shared cores, noisy"]
    print(notes[0])
    return Result({"m": m, "lam": 1.0, "threads": _threads(), "slopes": slopes}, rows, [], plots=[path], notes=notes)
