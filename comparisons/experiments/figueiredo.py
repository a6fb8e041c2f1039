"""Figueiredo's experiments (000: TPAMI 2003; 002: CVPR 2001) beside the baselines they cite.

Every ``figueiredo-*`` id of ``TARGETS.md``. Kernels are Figueiredo's
``K(x, x') = exp(-‖x − x'‖² / (2h²))`` (000 eq. 22, 002 Sec. 4.2) with width ``h``; the SVMs
use the same kernel (scikit-learn ``gamma = 1/(2h²)``). Our methods: ``jeffreys-em``
(:class:`~sparsebayes.inference.AdaptiveSparseRegressor` /
:class:`~sparsebayes.inference.SparseProbitClassifier` at their defaults, Jeffreys prior,
δ = 1e-3). Baselines are in :mod:`sparsebayes.comparisons.baselines`; ``rvm`` is our type-II
RVM (:class:`~sparsebayes.inference.RVMRegressor` / :class:`~sparsebayes.inference.RVMClassifier`).
This module holds the classification experiments and the helpers both halves share; the regression
experiments are in :mod:`sparsebayes.comparisons.experiments.figueiredo_regression`.
"""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from sparsebayes.comparisons import baselines as bl
from sparsebayes.comparisons import datasets, synthetic
from sparsebayes.comparisons.registry import Result, experiment
from sparsebayes.inference import RVMClassifier, SparseProbitClassifier
from sparsebayes.inference.parallel import parallel_map

RVM_NOTE = ("rvm = our type-II RVM (Tipping & Faul's sequential algorithm) on the same Gaussian kernel design: "
            "RVMRegressor (unpenalized intercept) for regression, RVMClassifier (Bernoulli-logistic likelihood, "
            "Laplace approximation; one-vs-all for k > 2) for classification")
RVM_CRABS_NOTE = ("rvm on crabs: from its first basis function no single kernel raises the Laplace evidence "
                  "(wide kernels on 5 standardized inputs are nearly collinear), so the sequential algorithm stops "
                  "with one kernel of weight ≈ 0 and predicts one class. fastrvm (Tipping's C++ SparseBayes) on the "
                  "same design stops at the identical fit (checked on the seed-0 split, log evidence -55.488 both)")
KERNELS_NOTE = ("n_kernels counts nonzero kernel weights, bias excluded (the paper does not say whether its counts "
                "include the bias)")
SVM_NOTE = "svm = scikit-learn SVC/SVR, RBF kernel with gamma = 1/(2h²), C (and ε for SVR) by 5-fold CV"


def _one_blas_thread(func):
    """Run ``func`` with BLAS limited to one thread.

    On these small dense problems (n ≤ 500) more BLAS threads only add overhead: two
    OpenBLAS threads made ``ARDRegression`` about 10× slower than one (DESIGN.md).
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper


def _rng(seed):
    return np.random.default_rng(seed)


def _progress(iterable, desc, total=None):
    """A tqdm bar (on stderr) for the longer loops."""
    return tqdm(iterable, desc=desc, total=total, leave=False, mininterval=0.5)


def _map(func, tasks, desc, total=None):
    """``[func(*args) for args in tasks]`` through :func:`~sparsebayes.inference.parallel.parallel_map`
    (joblib: serial by default, parallel under ``sparsebayes reproduce --n-jobs`` or a joblib
    backend), with a progress bar over the tasks handed out."""
    return parallel_map(func, _progress(tasks, desc, total))


def _mean_sd(values):
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _standardize(X_train, X_test):
    """Zero mean, unit variance with the training part's statistics (002 Sec. 4.2)."""
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test)


def _jeffreys_classifier(width=None, features="kernel"):
    kw = {"kernel_width": width} if features == "kernel" else {}
    # standardize=False: the paper's bias at x = 0 (the two-Gaussian classes' true intercept is 0)
    return SparseProbitClassifier(prior="jeffreys", features=features, standardize=False, **kw)


# ----------------------------------------------------------------------------- classification


def _kernel_classification_run(X_train, y_train, X_test, y_test, width, methods, seed):
    """Fit each method on one split; returns ``{method: (n_test_errors, n_kernels or None)}``."""
    out = {}
    for name in methods:
        if name == "jeffreys-em":
            model = _jeffreys_classifier(width).fit(X_train, y_train)
            n_k = model.n_active_
        elif name == "svm":
            model = bl.svm_classifier(X_train, y_train, width=width, seed=seed)
            n_k = int(model.n_support_.sum())
        elif name == "rvm":
            model = RVMClassifier(kernel_width=width).fit(X_train, y_train)
            n_k = model.n_active_
        elif name == "logistic":
            model, n_k = bl.logistic_classifier(X_train, y_train), None
        elif name == "plug-in":
            model, n_k = bl.PlugInGaussianClassifier().fit(X_train, y_train), None
        else:
            raise ValueError(f"unknown method {name!r}")
        out[name] = (int(np.sum(model.predict(X_test) != y_test)), n_k)
    return out


def _summarize(per_split, n_test, extra=None):
    """Rows of mean (sd) test errors, error rate and kernels per method over the splits."""
    rows = []
    for name in per_split[0]:
        errs = [r[name][0] for r in per_split]
        kern = [r[name][1] for r in per_split]
        e, e_sd = _mean_sd(errs)
        row = {"method": name, **(extra or {}), "errors": e, "errors_sd": e_sd,
               "error_rate": e / n_test, "error_rate_sd": e_sd / n_test}
        if kern[0] is not None:
            row["n_kernels"], row["n_kernels_sd"] = _mean_sd(kern)
        rows.append(row)
    return rows


def _plot_ripley(model, X, y, path, title):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    g0, g1 = np.meshgrid(np.linspace(-1.3, 1.1, 300), np.linspace(-0.3, 1.15, 250))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    p = model.predict_proba(grid)[:, 1].reshape(g0.shape)
    ax.contour(g0, g1, p, levels=[0.5], colors="k", linewidths=1.5)
    ax.plot([], [], "k-", lw=1.5, label="P(class 1) = 0.5")
    for c, marker, color in ((0, "o", "tab:blue"), (1, "+", "tab:red")):
        ax.scatter(X[y == c, 0], X[y == c, 1], marker=marker, c=color, s=22, label=f"class {c}")
    kept = model.relevance_indices_
    ax.scatter(X[kept, 0], X[kept, 1], marker="s", s=110, facecolors="none", edgecolors="k",
               label=f"kept kernels ({kept.size})")
    ax.set_xlabel("x₁")
    ax.set_ylabel("x₂")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="best", framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _ripley_subsets(n, reps, seed):
    """Table 3's training sets: ``reps`` random 100-point subsets of synth.tr's ``n`` points."""
    rng = _rng(seed)
    return [rng.choice(n, 100, replace=False) for _ in range(reps)]


@experiment("figueiredo-table3-ripley", default_reps=20,
            description="Ripley's synthetic data, 20 subsets of 100, h=0.5 (002 Table 1 / 000 Table 3)")
@_one_blas_thread
def ripley(reps, seed, out):
    """Ripley's synthetic data: random 100-point subsets of synth.tr, tested on synth.te."""
    width = 0.5
    train, test = datasets.ripley_synth()
    methods = ("jeffreys-em", "svm", "rvm")
    subsets = _ripley_subsets(train.y.size, reps, seed)
    per_split = _map(_kernel_classification_run,
                     ((train.X[idx], train.y[idx], test.X, test.y, width, methods, seed + i)
                      for i, idx in enumerate(subsets)), "ripley subsets", len(subsets))
    rows = _summarize(per_split, test.y.size)
    for r in rows:
        r.pop("errors"), r.pop("errors_sd")
    first = _jeffreys_classifier(width).fit(train.X[subsets[0]], train.y[subsets[0]])
    plot = Path(out) / "figueiredo-table3-ripley-boundary.png"
    _plot_ripley(first, train.X[subsets[0]], train.y[subsets[0]], plot,
                 f"Jeffreys-EM probit, h = {width}: boundary on subset 1 "
                 f"(test error {np.mean(first.predict(test.X) != test.y):.3f})")
    paper = [
        {"method": "jeffreys-em", "error_rate": 0.095, "n_kernels": 4.8},
        {"method": "svm", "error_rate": 0.106, "n_kernels": 38},
        {"method": "rvm", "error_rate": 0.093, "n_kernels": 4},
        {"method": "vrvm", "error_rate": 0.092, "n_kernels": 4},
    ]
    return Result({"kernel_width": width, "n_train": 100, "n_test": int(test.y.size), "subsets": reps},
                  rows, paper, [str(plot)],
                  ["n_kernels for svm = support vectors", KERNELS_NOTE, SVM_NOTE, RVM_NOTE,
                   "the paper's SVM/RVM/VRVM figures are quoted from Bishop & Tipping (2000)"])


def _paper_errors(dataset, quoted):
    """Table 4's rows for ``dataset`` from its ``(method, test errors, kernels kept or None)`` triples:
    ``n_kernels`` only where the paper gives it."""
    return [{"method": m, "dataset": dataset, "errors": e, **({"n_kernels": k} if k is not None else {})}
            for m, e, k in quoted]


def _run_cls(Xa, Xb, ya, yb, width, methods, seed):
    return _kernel_classification_run(Xa, ya, Xb, yb, width, methods, seed)


#: The methods of Table 4 we run (the paper's and our baselines).
TABLE4_METHODS = ("jeffreys-em", "svm", "rvm", "logistic", "plug-in")


def _table4_rows(dataset, splits, width, seed, reps, n_test, desc):
    """Our rows of Table 4 for ``dataset``: :data:`TABLE4_METHODS` fitted with kernel width ``width`` on
    each of the ``reps`` splits ``(X_train, y_train, X_test, y_test)`` (split ``r`` with seed ``seed + r``),
    mean (sd) errors over the ``n_test`` test points (``desc`` labels the progress bar)."""
    per_split = _map(_kernel_classification_run,
                     ((*split, width, TABLE4_METHODS, seed + r) for r, split in enumerate(splits)), desc, reps)
    return _summarize(per_split, n_test, {"dataset": dataset})


@experiment("figueiredo-table4-pima", default_reps=1,
            description="Pima Indians: Pima.tr 200 / Pima.te 332, standardized, h=4 (000 Table 4)")
@_one_blas_thread
def pima(reps, seed, out):
    """Pima: the predefined split; ``reps`` > 1 repeats only the SVM's CV folds."""
    width = 4.0
    train, test = datasets.pima()
    Xa, Xb = _standardize(train.X, test.X)
    rows = _table4_rows("pima", ((Xa, train.y, Xb, test.y) for _ in range(reps)), width, seed, reps, test.y.size,
                        "pima")
    paper = _paper_errors("pima", (("jeffreys-em", 61, 6), ("svm", 64, 110), ("rvm", 65, 4), ("vrvm", 65, None),
                                   ("neural-network", 75, None), ("logistic", 66, None), ("lda", 67, None),
                                   ("gaussian-process", 67.5, None)))
    return Result({"kernel_width": width, "n_train": int(train.y.size), "n_test": int(test.y.size),
                   "standardized": True, "reps": reps}, rows, paper, [],
                  ["inputs standardized with the training set's mean and SD",
                   "paper's GP: 67-68 errors (shown as 67.5)", KERNELS_NOTE, SVM_NOTE, RVM_NOTE,
                   "plug-in = Gaussian classes with their own covariances (QDA)"])


def _crabs_split(data, random_state):
    """One random stratified 80/120 split of crabs, standardized with the training part's statistics."""
    Xa, Xb, ya, yb = train_test_split(data.X, data.y, train_size=80, test_size=120, stratify=data.y,
                                      random_state=random_state)
    Xa, Xb = _standardize(Xa, Xb)
    return Xa, ya, Xb, yb


@experiment("figueiredo-table4-crabs", default_reps=30,
            description="Crabs sex, random stratified 80/120 splits, standardized, h=4 (000 Table 4)")
@_one_blas_thread
def crabs(reps, seed, out):
    """Crabs: sex from 5 measurements; random stratified 80/120 splits (the paper's split is unavailable)."""
    width = 4.0
    data = datasets.crabs()
    rows = _table4_rows("crabs", (_crabs_split(data, seed + r) for r in range(reps)), width, seed, reps, 120,
                        "crabs splits")
    paper = _paper_errors("crabs", (("jeffreys-em", 0, 5), ("svm", 4, None), ("neural-network", 3, None),
                                    ("logistic", 4, None), ("lda", 3, None), ("gaussian-process", 3, None)))
    return Result({"kernel_width": width, "n_train": 80, "n_test": 120, "splits": reps, "standardized": True},
                  rows, paper, [],
                  ["the paper's predefined 80/120 split is not available: we use random stratified 80/120 "
                   "splits and report mean (sd) errors over them; the paper's figures are for one split",
                   "inputs standardized with the training part's mean and SD", KERNELS_NOTE, SVM_NOTE, RVM_NOTE,
                   RVM_CRABS_NOTE])


@experiment("figueiredo-table4-wbc", default_reps=30,
            description="Wisconsin breast cancer, 30 random 300/269 partitions, standardized, h=12 (000 Table 4)")
@_one_blas_thread
def wbc(reps, seed, out):
    """WBC (569 × 30): random 300/269 partitions."""
    width = 12.0
    data = datasets.breast_cancer()
    rng = _rng(seed)

    def partitions():  # drawn in order from one generator, in this process
        for _ in range(reps):
            perm = rng.permutation(data.y.size)
            tr, te = perm[:300], perm[300:]
            Xa, Xb = _standardize(data.X[tr], data.X[te])
            yield Xa, data.y[tr], Xb, data.y[te]

    rows = _table4_rows("wbc", partitions(), width, seed, reps, 269, "wbc partitions")
    paper = _paper_errors("wbc", (("jeffreys-em", 8.5, 5), ("svm", 9, None), ("lda", 19, None),
                                  ("gaussian-process", 8, None)))
    return Result({"kernel_width": width, "n_train": 300, "n_test": 269, "partitions": reps, "standardized": True},
                  rows, paper, [],
                  ["scikit-learn's copy of WDBC (569 × 30)", "inputs standardized with the training part's statistics",
                   "logistic on 30 standardized features can separate 300 points: unpenalized fits then stop at max_iter",
                   KERNELS_NOTE, SVM_NOTE, RVM_NOTE])


def _ten_folds(y, random_state):
    """Stratified, shuffled 10-fold CV of the labels ``y`` (glass's Table 5, and SMLR's Table 2), quiet
    about a class of fewer than 10 members (glass's smallest has 9)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        return list(StratifiedKFold(10, shuffle=True, random_state=random_state).split(np.zeros(len(y)), y))


@experiment("figueiredo-table5-glass", default_reps=1,
            description="Forensic glass (6 classes), 10-fold CV, standardized, h=4, one-vs-all (000 Table 5)")
@_one_blas_thread
def glass(reps, seed, out):
    """Forensic glass: 10-fold CV error (%); ``reps`` repeats the CV with new folds."""
    width = 4.0
    data = datasets.forensic_glass()
    methods = ("jeffreys-em", "svm", "logistic")
    folds = [_ten_folds(data.y, seed + r) for r in range(reps)]
    results = _map(_run_cls, ((*_standardize(data.X[tr], data.X[te]), data.y[tr], data.y[te], width, methods, seed + i)
                              for rep_folds in folds for i, (tr, te) in enumerate(rep_folds)),
                   "glass 10-fold CV", 10 * reps)
    rows_per_rep = []
    for r in range(reps):
        per_fold = results[10 * r:10 * (r + 1)]
        rows_per_rep.append({m: (sum(f[m][0] for f in per_fold),
                                 None if per_fold[0][m][1] is None else np.mean([f[m][1] for f in per_fold]))
                             for m in methods})
    rows = _summarize(rows_per_rep, data.y.size, {"dataset": "glass"})
    paper = [{"method": m, "dataset": "glass", "error_rate": e}
             for m, e in (("jeffreys-em", 0.215), ("neural-network", 0.238), ("gaussian-mixture", 0.308),
                          ("gaussian-process", 0.233))]
    return Result({"kernel_width": width, "folds": 10, "cv_repeats": reps, "standardized": True},
                  rows, paper, [],
                  ["errors = total CV errors over the 214 points; n_kernels = mean over folds of the distinct "
                   "training points kept by any one-vs-all classifier",
                   "stratified 10-fold CV (folds seeded); inputs standardized within each training fold",
                   "svm is scikit-learn's one-vs-one multiclass SVC; logistic is multinomial",
                   "no rvm here (the paper has none for glass)", SVM_NOTE])


# ----------------------------------------------------------------------------- feature selection (Figs. 5, 6)

DIMENSIONS = (2, 5, 10, 15, 20, 25, 30)


def _two_gaussian_rep(X, y, Xt, yt, features):
    """One repetition of Figs. 5-6: the Jeffreys-EM probit's kept weights and the test error
    rates of ``{jeffreys-em, plug-in, plug-in-pooled}``."""
    em = _jeffreys_classifier(features=features).fit(X, y)
    errs = {"jeffreys-em": np.mean(em.predict(Xt) != yt)}
    for name, shared in (("plug-in", False), ("plug-in-pooled", True)):
        errs[name] = np.mean(bl.PlugInGaussianClassifier(shared_covariance=shared).fit(X, y).predict(Xt) != yt)
    return em.n_active_, errs


def _two_gaussian_curve(features, n_per_class, reps, seed, label):
    rng = _rng(seed)

    def data_sets():  # drawn in order from one generator, in this process
        for d in DIMENSIONS:
            for _ in range(reps):
                yield (*synthetic.two_gaussians(n_per_class, d, seed=rng), *synthetic.two_gaussians(500, d, seed=rng),
                       features)

    results = _map(_two_gaussian_rep, data_sets(), f"{label}: d x reps", len(DIMENSIONS) * reps)
    rows = []
    for i, d in enumerate(DIMENSIONS):
        per_rep = results[i * reps:(i + 1) * reps]
        kept = [k for k, _ in per_rep]
        errs = {name: [e[name] for _, e in per_rep] for name in ("jeffreys-em", "plug-in", "plug-in-pooled")}
        for name, e in errs.items():
            m, sd = _mean_sd(e)
            row = {"method": name, "d": d, "error_rate": m, "error_rate_sd": sd}
            if name == "jeffreys-em":
                row["n_nonzero"], row["n_nonzero_sd"] = _mean_sd(kept)
            rows.append(row)
    return rows


#: How the two-Gaussian figures name their curves, with their markers.
CURVE_STYLES = (("jeffreys-em", "o-", "proposed (Jeffreys EM)"),
                ("plug-in", "s--", "plug-in, own covariances (QDA)"),
                ("plug-in-pooled", "^:", "plug-in, pooled covariance (LDA)"))


def _plot_curve(rows, reps, path, title):
    """Mean test error against d, ± one standard error over the ``reps`` repetitions; the
    curves are set 0.25 apart in d so that their bars do not hide each other."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for offset, (name, style, label) in zip((-0.25, 0.0, 0.25), CURVE_STYLES):
        r = [x for x in rows if x["method"] == name]
        ax.errorbar([x["d"] + offset for x in r], [x["error_rate"] for x in r],
                    yerr=[x["error_rate_sd"] / np.sqrt(reps) for x in r], fmt=style, capsize=2, label=label)
    ax.axhline(0.1587, color="gray", lw=0.8, label="Bayes error Φ(−1)")
    ax.set_xlabel("dimension d")
    ax.set_ylabel(f"mean test error rate (± 1 SE, {reps} repetitions)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


_CURVE_NOTES = [
    "plug-in = Gaussian classes with their own sample covariances (QDA), as the paper describes; "
    "plug-in-pooled = the same with the pooled covariance (a linear rule), shown for reference",
    "error bars: ± 1 standard error of the mean over the repetitions (SD / √reps); test sets 500 + 500 "
    "per repetition",
    "the d grid is ours (the paper's figure is not legible): (2, 5, 10, 15, 20, 25, 30)",
]


def _two_gaussian_experiment(features, n_per_class, reps, seed, out, exp_id, figure, notes):
    """Probit classifiers on ``features`` vs the plug-in Gaussian classifier as irrelevant dimensions grow."""
    rows = _two_gaussian_curve(features, n_per_class, reps, seed, exp_id.split("-")[1])
    plot = Path(out) / f"{exp_id}.png"
    _plot_curve(rows, reps, plot, f"{features.capitalize()} probit classifiers, {n_per_class}/class "
                                  f"(cf. 000 Fig. {figure})")
    paper = [{"method": "jeffreys-em", "claim": "degrades much less than plug-in as d grows"},
             {"method": "plug-in", "claim": "degrades strongly with d"}]
    basis = "linear+quadratic (d + d(d+1)/2)" if features == "quadratic" else "linear"
    return Result({"features": basis, "n_per_class": n_per_class, "n_test": 1000, "dims": list(DIMENSIONS),
                   "reps": reps, "bayes_error": 0.1587},
                  rows, paper, [str(plot)], _CURVE_NOTES + notes)


@experiment("figueiredo-fig5-quadratic", default_reps=30,
            description="Two Gaussians, linear+quadratic features, 100/class, error vs d (002 Fig. 2 / 000 Fig. 5)")
@_one_blas_thread
def fig5_quadratic(reps, seed, out):
    """Quadratic probit classifiers vs the plug-in Gaussian classifier as irrelevant dimensions grow."""
    return _two_gaussian_experiment("quadratic", 100, reps, seed, out, "figueiredo-fig5-quadratic", 5,
                                    ["n_nonzero: nonzero weights of the quadratic basis (bias excluded)",
                                     "the paper averages 30 (002) / 90 (000) repetitions"])


@experiment("figueiredo-fig6-linear", default_reps=30,
            description="Two Gaussians, linear features, 50/class, error vs d (002 Fig. 3 / 000 Fig. 6)")
@_one_blas_thread
def fig6_linear(reps, seed, out):
    """Linear probit classifiers vs the plug-in Gaussian classifier as irrelevant dimensions grow."""
    return _two_gaussian_experiment("linear", 50, reps, seed, out, "figueiredo-fig6-linear", 6,
                                    ["n_nonzero: nonzero input weights (bias excluded); the Bayes rule uses 2"])
