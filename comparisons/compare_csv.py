"""``sparsebayes compare data.csv --target COLUMN``: :func:`sparsebayes.compare` on a user's own table.

The table is read with pandas; the target column is ``y``, every other column an input (named by
its header, so the weights, the report and the NetCDF carry the column names). Non-numeric inputs
are one-hot encoded (first level dropped, so the bias column stays identifiable) and named in a
note; missing values are a ``ValueError`` naming the columns that hold them.

The task follows the target: a non-numeric or two-valued target is classification, anything else
regression. Every classifier family samples any number of classes: SMLR's multinomial model, the
others beyond two classes their one-vs-all model, ``K`` independent binary posteriors
(:mod:`sparsebayes.inference.posterior.twin_one_vs_all`). ``--estimator`` names a model family and the task picks
the estimator of that family (:data:`ESTIMATORS`; by default :func:`default_estimator`: BLS for
regression, whose fit does not depend on the units of ``X`` and ``y``, the probit classifier with the
Laplace prior for two classes, SMLR for more); the samplers are NUTS, and Gibbs too where the
model has Gibbs conditionals. The RVM's posterior is improper, so its draws are of the labelled
proper surrogate (``surrogate_eps``), said in a note and in the report's ``model``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

#: ``--estimator`` name -> (the regression estimator, the classifier) that :func:`make_estimator`
#: builds; ``None``: the family has no estimator for that task.
ESTIMATORS = {
    "laplace": ("AdaptiveSparseRegressor(prior='laplace')", "SparseProbitClassifier(prior='laplace')"),
    "horseshoe": ("AdaptiveSparseRegressor(prior=HorseshoePrior())", "SparseProbitClassifier(prior=HorseshoePrior())"),
    "bayesian-lasso": ("BayesianLassoRegressor()", None),
    "rvm": ("RVMRegressor()", "RVMClassifier()"),
    "bls": ("BLSRegressor()", None),
    "flap": ("FLAPRegressor(estimate_noise=True)", None),
    "smlr": (None, "SMLRClassifier()"),
}
#: Families whose posterior is improper: sampled on the labelled surrogate ``α_i ~ Gamma(ε, ε)``.
IMPROPER = ("rvm",)
#: ``--features`` word -> the estimators' ``features`` argument.
FEATURES = {"linear": "linear", "quadratic": "quadratic", "rbf": "kernel"}


def read_table(path, target):
    """``(X, y, notes)`` from the CSV at ``path``: ``X`` a float DataFrame of every column but
    ``target`` (non-numeric ones one-hot encoded, said in ``notes``), ``y`` the target Series."""
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty: it needs a header row naming the columns and one row per case") from None
    if len(df) == 0:
        raise ValueError(f"{path} has a header ({', '.join(map(str, df.columns))}) but no rows: there is no data to fit")
    if target not in df.columns:
        raise ValueError(f"--target {target!r} is not a column of {path}; its columns: {', '.join(map(str, df.columns))}")
    X, y = df.drop(columns=[target]), df[target]
    if X.shape[1] == 0:
        raise ValueError(f"{path} has no input columns besides the target {target!r}")
    missing = [str(c) for c in df.columns if df[c].isna().any()]
    if missing:
        raise ValueError(f"{path}: missing values in column(s) {', '.join(missing)}; drop or impute them first")
    notes = []
    text = [str(c) for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
    if text:
        X = pd.get_dummies(X, columns=text, drop_first=True, dtype=np.float64)
        notes.append(f"one-hot encoded the non-numeric column(s) {', '.join(text)} (first level of each dropped)")
    X.columns = [str(c) for c in X.columns]
    return X.astype(np.float64), y, notes


def is_classification(y):
    """A non-numeric (or boolean) target, or one with two distinct values, is a class label."""
    import pandas as pd

    numeric = pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y)
    return not numeric or y.nunique() <= 2


def default_estimator(y):
    """The family ``--estimator`` defaults to for target ``y``: ``"bls"`` (regression), ``"laplace"``
    (two classes: the probit classifier) or ``"smlr"`` (more classes)."""
    if not is_classification(y):
        return "bls"
    return "laplace" if y.nunique() == 2 else "smlr"


def make_estimator(name, classification, features=None, *, draws=1000, chains=4, warmup=1000, seed=0,
                   progress=False):
    """The estimator ``name`` (:data:`ESTIMATORS`) for the task; ``features`` a :data:`FEATURES` word
    (default linear). The type-II regressors centre the data (flat-prior intercept), so their feature
    maps have no bias column."""
    from sparsebayes import inference as inf
    from sparsebayes.models import HorseshoePrior
    from sparsebayes.models.features import GaussianKernelFeatures, QuadraticFeatures

    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; choose one of {', '.join(ESTIMATORS)}")
    if features is not None and features not in FEATURES:
        raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {features!r}")
    task = "classification" if classification else "regression"
    if ESTIMATORS[name][classification] is None:
        raise ValueError(f"estimator {name!r} has no {task} form; for this target choose one of "
                         f"{', '.join(k for k, v in ESTIMATORS.items() if v[classification])}")
    features = features or "linear"
    if name == "bayesian-lasso":
        if features != "linear":
            raise ValueError("the Bayesian Lasso samples the weights of the columns themselves: "
                             "--features linear only")
        return inf.BayesianLassoRegressor(num_warmup=warmup, num_samples=draws, num_chains=chains, seed=seed,
                                          progress_bar=progress)
    if name in ("laplace", "horseshoe"):
        cls = inf.SparseProbitClassifier if classification else inf.AdaptiveSparseRegressor
        return cls(prior="laplace" if name == "laplace" else HorseshoePrior(), features=FEATURES[features])
    if name == "smlr":
        return inf.SMLRClassifier(features=FEATURES[features])
    if name == "rvm" and classification:
        return inf.RVMClassifier(features=FEATURES[features])
    typeii = {"linear": None, "quadratic": QuadraticFeatures(bias=False),
              "rbf": GaussianKernelFeatures(width="scale", bias=False)}[features]
    if name == "rvm":
        return inf.RVMRegressor(features=typeii)
    if name == "bls":
        return inf.BLSRegressor(features=typeii)
    return inf.FLAPRegressor(features=typeii, estimate_noise=True)


def report_directory(path, out="results"):
    """The directory :func:`run` writes the report of the CSV at ``path`` into: ``out/compare-<file stem>``."""
    return Path(out) / f"compare-{Path(path).stem}"


def run(path, target, *, estimator=None, features=None, out="results", draws=1000, chains=4, warmup=1000,
        seed=0, progress=False, log=print, surrogate_eps=1e-3, test_fraction=None, overwrite=False):
    """Read the CSV, fit, compare and save the report into ``out/compare-<file stem>/``.

    Returns the :class:`~sparsebayes.comparisons.compare_any.Comparison` and the report's
    directory. ``log`` gets one line per step; ``progress`` turns on the samplers' bars;
    ``surrogate_eps`` is the ε of the RVM's surrogate (the other families ignore it);
    ``test_fraction``: hold out this share of the rows (seeded by ``seed``, stratified by class
    for a classifier), fitted and sampled on the rest and scored in the report's held-out section.
    A report already in that directory is a ``FileExistsError`` before anything is read or fitted,
    unless ``overwrite`` (:meth:`~sparsebayes.comparisons.compare_any.Comparison.save`).
    """
    from .compare_any_report import REPORT_FILES, refuse_overwrite

    directory = report_directory(path, out)
    if not overwrite:
        refuse_overwrite(directory, REPORT_FILES)
    X, y, notes = read_table(path, target)
    for note in notes:
        log(f"note: {note}")
    cmp = compare_table(X, y, directory, source=f"{path}", target=target, estimator=estimator, features=features,
                        draws=draws, chains=chains, warmup=warmup, seed=seed, progress=progress, log=log,
                        surrogate_eps=surrogate_eps, test_fraction=test_fraction, overwrite=overwrite)
    return cmp, directory


def compare_table(X, y, directory, *, source, target, estimator=None, features=None, draws=1000, chains=4,
                  warmup=1000, seed=0, progress=False, log=print, surrogate_eps=1e-3, test_fraction=None,
                  overwrite=False):
    """Fit, compare and save the report into ``directory``: the one path of ``sparsebayes compare`` on a
    CSV (:func:`run`) and on a bundled data set (:func:`sparsebayes.comparisons.compare.compare`).

    ``X`` a float DataFrame of the inputs (its columns name the weights), ``y`` the target Series;
    ``source`` and ``target`` name them in the log lines. The task follows the target
    (:func:`is_classification`), the family is ``estimator`` (:data:`ESTIMATORS`; default
    :func:`default_estimator`), the samplers NUTS and Gibbs where the model has Gibbs conditionals.
    The samplers keep no pointwise log-likelihood (``S × n`` floats per sampler, half of ``draws.nc`` at
    ``n = 442``): the report's leave-one-out computes it from the draws
    (:mod:`sparsebayes.inference.posterior.pointwise_loglik`). Returns the
    :class:`~sparsebayes.comparisons.compare_any.Comparison`."""
    import sparsebayes
    from sparsebayes.inference.posterior.twin_posterior import gibbs_able

    classification = is_classification(y)
    estimator = default_estimator(y) if estimator is None else estimator
    est = make_estimator(estimator, classification, features, draws=draws, chains=chains, warmup=warmup, seed=seed,
                         progress=progress)
    task = f"classification, {y.nunique()} classes" if classification else "regression"
    log(f"read {source}: {len(y)} rows, {X.shape[1]} inputs, target {target!r} ({task})")
    X_test = y_test = None
    if test_fraction is not None:
        from sklearn.model_selection import train_test_split
        X, X_test, y, y_test = train_test_split(X, y, test_size=test_fraction, random_state=seed,
                                                stratify=y if classification else None)
        log(f"holding out {len(y_test)} rows; fitting and sampling on {len(y)}")
    log(f"fitting {type(est).__name__}")
    est.fit(X, y)
    samplers = ("nuts", "gibbs") if gibbs_able(est) else ("nuts",)
    if estimator in IMPROPER:
        log(f"note: the RVM's flat hyperprior makes its posterior improper; sampling the labelled proper surrogate "
            f"alpha_i ~ Gamma(eps, eps), eps = {surrogate_eps:g}")
    cmp = sparsebayes.compare(est, X, y, samplers=samplers, num_warmup=warmup, num_samples=draws, num_chains=chains,
                              seed=seed, progress_bar=progress, log=log, X_test=X_test, y_test=y_test,
                              surrogate_eps=surrogate_eps if estimator in IMPROPER else None,
                              log_likelihood=False)  # the report's LOO computes it from the draws
    log(f"writing the report to {directory}")
    cmp.save(directory, overwrite=overwrite)
    return cmp
