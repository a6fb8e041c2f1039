"""Helgøy & Li (004) on the diabetes data: coefficients with their intervals (Table 6) and test
RMSE over random 70/30 splits (Table 7), BLS beside the Bayesian Lasso (Gibbs) and the Lasso.
The simulations and kernel experiments are in :mod:`sparsebayes.comparisons.experiments.bls`.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LassoCV

from sparsebayes.inference.estimators.bayesian_lasso_estimator import BayesianLassoRegressor
from sparsebayes.inference.engines.bayesian_lasso import Hyper, engine_settings
from sparsebayes.inference.engines.hierarchy_gibbs_batch import posterior_mean_batch
from sparsebayes.inference.estimators.typeii_estimators import BLSRegressor

from ..datasets import diabetes
from ..registry import Result, experiment
from .bls import _refused_note

DIABETES_NAMES = ["age", "sex", "bmi", "map", "tc", "ldl", "hdl", "tch", "ltg", "glu"]
PAPER_T6 = [  # with the 95 % credible intervals (the BLS prints "NA" for its zeros)
    {"method": "bayesian-lasso", **dict(zip(DIABETES_NAMES, [-3.08, -203.27, 523.32, 301.08, -144.05, -18.60, -164.54, 90.31, 506.27, 62.18])),
     "ci_low": [-89.91, -302.67, 413.92, 192.61, -414.08, -215.22, -339.62, -78.20, 356.19, -31.35],
     "ci_high": [83.01, -103.68, 632.28, 408.54, 66.37, 195.23, 8.82, 290.18, 663.89, 163.78]},
    {"method": "bls", **dict(zip(DIABETES_NAMES, [0, -196.87, 533.52, 304.81, -100.60, 0, -221.77, 0, 529.17, 20.69])),
     "ci_low": [None, -316.87, 391.62, 182.91, -214.90, None, -373.67, None, 373.87, -30.51],
     "ci_high": [None, -76.87, 675.45, 426.71, 13.70, None, -69.87, None, 684.47, 71.89]},
    {"method": "lasso-cv", **dict(zip(DIABETES_NAMES, [0, -188.55, 521.18, 292.36, -92.98, 0, -220.82, 0, 508.26, 50.20]))},
]


@experiment("bls-table6-diabetes", description="Helgøy & Li Table 6: diabetes coefficients and 95% intervals")
def table6_diabetes(reps, seed, out):
    """Diabetes with scikit-learn's scaling (columns centred, unit L2 norm), y centred.

    One data set, so the protocol's randomness is the Bayesian Lasso's Gibbs seed and the Lasso's
    CV folds: ``reps`` > 1 re-runs both with seeds ``seed, seed + 1, ...`` and gives the mean of
    each coefficient over the runs with its SD (``<name>_sd``); BLS has no randomness (SD 0).
    """
    n_runs = reps or 1
    ds = diabetes(scaled=True)
    X, y = ds.X, ds.y - ds.y.mean()
    bls = BLSRegressor().fit(X, y)
    sd = np.zeros(10)
    sd[bls.active_] = np.sqrt(np.diag(bls.sigma_))
    bl = [BayesianLassoRegressor(sampler="gibbs", num_warmup=1000, num_samples=5000, num_chains=4, seed=seed + r)
          .fit(X, y) for r in range(n_runs)]
    lasso = [LassoCV(cv=10, random_state=seed + r).fit(X, y).coef_ for r in range(n_runs)]
    rows = [
        {"method": "bayesian-lasso", **_over_runs([b.coef_ for b in bl]),
         "ci_low": np.mean([b.coef_interval_[0] for b in bl], axis=0).tolist(),
         "ci_high": np.mean([b.coef_interval_[1] for b in bl], axis=0).tolist()},
        {"method": "bls", **_over_runs([bls.coef_] * n_runs), "ci_low": (bls.coef_ - 1.96 * sd).tolist(),
         "ci_high": (bls.coef_ + 1.96 * sd).tolist()},
        {"method": "lasso-cv", **_over_runs(lasso)},
    ]
    zero = [n for n, c in zip(DIABETES_NAMES, bls.coef_) if c == 0]
    notes = [f"BLS sets to zero: {', '.join(zero) or 'none'} (paper: age, ldl, tch).",
             "Bayesian Lasso: Gibbs medians, 4 chains x 5000 draws, Gamma(1, 1.78) on lambda^2 (Park & Casella).",
             "BLS intervals: posterior mean +- 1.96 sd of the Gaussian posterior at the type-II estimates."]
    if n_runs > 1:
        notes.append(f"coefficients (and the Bayesian Lasso's intervals): means over {n_runs} runs, Gibbs seeds and "
                     f"LassoCV folds seeded {seed}..{seed + n_runs - 1}; <name>_sd: their SD over the runs")
    settings = {"scaling": "sklearn load_diabetes(scaled=True): centred, unit L2 norm columns; y centred", "seed": seed,
                "runs": n_runs}
    return Result(settings, rows, PAPER_T6, [], notes)


def _over_runs(coefs):
    """``{name: mean over the runs, name_sd: SD over them (None for one run)}`` per coefficient."""
    coefs = np.asarray(coefs)
    sd = coefs.std(axis=0, ddof=1) if len(coefs) > 1 else [None] * coefs.shape[1]
    return {k: v for name, m, s in zip(DIABETES_NAMES, coefs.mean(axis=0), sd) for k, v in ((name, m), (f"{name}_sd", s))}


@experiment("bls-table7-diabetes", default_reps=100, description="Helgøy & Li Table 7: diabetes, random 70/30 splits")
def table7_diabetes(reps, seed, out, num_warmup=1000, num_samples=5000):
    """Test RMSE and number of coefficients over ``reps`` random 70/30 splits."""
    ds = diabetes(scaled=True)
    rng = np.random.default_rng(seed)
    n = len(ds.y)
    n_train = int(round(0.7 * n))
    splits = [rng.permutation(n) for _ in range(reps)]
    train = [(ds.X[s[:n_train]], ds.y[s[:n_train]]) for s in splits]
    test = [(ds.X[s[n_train:]], ds.y[s[n_train:]]) for s in splits]
    coefs = {"bls": [], "lasso-cv": []}
    icpt = {"bls": [], "lasso-cv": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for X, y in train:
            b = BLSRegressor().fit(X, y)
            coefs["bls"].append(b.coef_); icpt["bls"].append(b.intercept_)
            las = LassoCV(cv=10, random_state=seed).fit(X, y)
            coefs["lasso-cv"].append(las.coef_); icpt["lasso-cv"].append(las.intercept_)
    Xs = np.stack([X - X.mean(0) for X, _ in train]); ys = np.stack([y - y.mean() for _, y in train])
    B, refused = posterior_mean_batch(Xs, ys, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
                                      variates="numpy",  # the table's stream on every backend
                                      **engine_settings(Hyper(1.0, 1.78, 0.0, 0.0)))
    B = np.asarray(B)
    notes = _refused_note(refused)
    coefs["bayesian-lasso"] = list(B)
    icpt["bayesian-lasso"] = [y.mean() - X.mean(0) @ b for (X, y), b in zip(train, B)]
    rows = []
    for name in ("bls", "bayesian-lasso", "lasso-cv"):
        rmse = np.array([np.sqrt(np.mean((yt - Xt @ c - i) ** 2)) for (Xt, yt), c, i in zip(test, coefs[name], icpt[name])])
        noc = np.array([np.sum(c != 0) for c in coefs[name]])
        rows.append({"method": name, "rmse": rmse.mean(), "rmse_sd": rmse.std(ddof=1) if reps > 1 else 0.0,
                     "n_nonzero": noc.mean(), "n_nonzero_sd": noc.std(ddof=1) if reps > 1 else 0.0})
    paper = [{"method": "bls", "rmse": 55.10, "rmse_sd": 2.64, "n_nonzero": 6.35, "n_nonzero_sd": 0.73},
             {"method": "bayesian-lasso", "rmse": 55.06, "rmse_sd": 2.67, "n_nonzero": 10, "n_nonzero_sd": 0},
             {"method": "lasso-cv", "rmse": 55.11, "rmse_sd": 2.69, "n_nonzero": 7.97, "n_nonzero_sd": 1.26}]
    settings = {"reps": reps, "seed": seed, "train_fraction": 0.7, "bl": f"Gibbs posterior mean, {num_samples} draws, Gamma(1, 1.78)"}
    return Result(settings, rows, paper, [], notes)
