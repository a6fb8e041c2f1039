"""``sparsebayes compare DATASET``: the comparison on a bundled data set, by the same path as a CSV.

A bundled data set (:data:`DATASETS`) is read into a table (:func:`load`: the inputs in their own
units, named by their columns; the target) and handed to
:func:`sparsebayes.comparisons.compare_csv.compare_table`, the path of ``sparsebayes compare
data.csv --target COLUMN``: the same default family for the task (BLS for regression, the probit
classifier with the Laplace prior for two classes, SMLR for more), the same samplers (NUTS, and Gibbs
where the model has Gibbs conditionals) and the same report
(:meth:`~sparsebayes.comparisons.compare_any.Comparison.save`: the verdict, the selection, the
diagnostics, then the tables and plots) in ``out/compare-<name>/``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

#: The bundled data sets: regression (diabetes, boston), binary (pima, crabs, wbc), multiclass (iris, glass).
DATASETS = ("diabetes", "boston", "pima", "crabs", "wbc", "iris", "glass")


def load(name):
    """``(X, y)`` of bundled data set ``name``: ``X`` a float DataFrame of the inputs in their own units
    (diabetes unscaled; Pima.tr and Pima.te together), ``y`` the target Series (class labels for the
    classification sets: 0/1 for pima, crabs and wbc, the class names for iris and glass)."""
    import pandas as pd

    from . import datasets

    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}")
    if name == "pima":
        tr, te = datasets.pima()
        d = datasets.Dataset(np.vstack([tr.X, te.X]), np.r_[tr.y, te.y], tr.feature_names, "pima")
    else:
        d = {"diabetes": lambda: datasets.diabetes(scaled=False), "boston": datasets.boston,
             "crabs": datasets.crabs, "wbc": datasets.breast_cancer, "iris": datasets.iris,
             "glass": datasets.forensic_glass}[name]()
    y = np.asarray(d.class_names)[d.y] if d.class_names is not None else d.y
    X = pd.DataFrame(np.asarray(d.X, dtype=np.float64), columns=[str(c) for c in d.feature_names])
    return X, pd.Series(y, name="target")


def report_directory(name, out="results"):
    """The directory :func:`compare` writes the report of data set ``name`` into: ``out/compare-<name>``."""
    return Path(out) / f"compare-{name}"


def compare(name, *, out="results", estimator=None, features=None, draws=1000, chains=4, warmup=1000, seed=0,
            progress=False, log=print, test_fraction=None, surrogate_eps=1e-3, overwrite=False):
    """Compare on bundled data set ``name`` and save the report into :func:`report_directory`.

    The arguments are those of :func:`sparsebayes.comparisons.compare_csv.run` (the family
    ``estimator``, ``features``, the samplers' ``draws``/``chains``/``warmup``/``seed``, a held-out
    ``test_fraction``). A report already in the directory is a ``FileExistsError`` before the data are
    read or anything is fitted, unless ``overwrite``. Returns the
    :class:`~sparsebayes.comparisons.compare_any.Comparison` and the directory."""
    from .compare_any_report import REPORT_FILES, refuse_overwrite
    from .compare_csv import compare_table

    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}")
    directory = report_directory(name, out)
    if not overwrite:
        refuse_overwrite(directory, REPORT_FILES)
    X, y = load(name)
    cmp = compare_table(X, y, directory, source=f"the bundled data set {name}", target="target", estimator=estimator,
                        features=features, draws=draws, chains=chains, warmup=warmup, seed=seed, progress=progress,
                        log=log, surrogate_eps=surrogate_eps, test_fraction=test_fraction, overwrite=overwrite)
    return cmp, directory
