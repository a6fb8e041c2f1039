"""Input checks shared by every estimator: bad input is a clear ``ValueError``.

scikit-learn's ``validate_data`` already rejects NaN/inf, empty data, wrong dimensions and
non-numeric X with messages that name the problem; these helpers add what it does not
check (regression targets that are strings, a single class) and keep the messages uniform
across the suite. A constant column is allowed, as in scikit-learn's estimators: in
cross-validation a rare binary feature is constant on some training folds.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from sparsebayes.models._checks import check_number  # noqa: F401  (re-exported for the estimators)


def validate_regression_data(estimator, X, y):
    """Float64 ``X`` (n, d) and ``y`` (n,) for a regressor; raises ``ValueError`` naming the problem."""
    y_arr = np.asarray(y)
    if y_arr.dtype.kind in "OUSb" and y_arr.dtype.kind != "b":
        try:
            y_arr = y_arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "regression targets must be numeric; got non-numeric labels "
                f"(dtype {y_arr.dtype}). Use a classifier for categorical targets."
            ) from None
    X, y_arr = validate_data(
        estimator, X, y_arr, dtype=np.float64, y_numeric=True, ensure_min_samples=2
    )
    return X, np.asarray(y_arr, dtype=np.float64)


def validate_classification_data(estimator, X, y, *, min_classes=2):
    """Float64 ``X`` and encoded labels; sets ``classes_``. One class is a ``ValueError``."""
    X, y = validate_data(estimator, X, y, dtype=np.float64, ensure_min_samples=2)
    if y.dtype.kind not in "iub":  # 1-D integer or bool labels are always classes: skip its 0.17 ms
        check_classification_targets(y)  # "Unknown label type: continuous ..." for regression targets
    classes, y_enc = np.unique(y, return_inverse=True)
    if len(classes) < min_classes:
        raise ValueError(
            f"the training labels contain a single class ({np.asarray(classes[0]).item()!r}); "
            f"a classifier needs at least {min_classes} classes"
        )
    estimator.classes_ = classes
    return X, y_enc


def validate_predict_data(estimator, X):
    """Float64 ``X`` at predict time, with the number of features checked against fit."""
    return validate_data(estimator, X, dtype=np.float64, reset=False)


def check_count(name, value, least=1):
    """Raise ``ValueError`` unless ``value`` is an integer (not a bool) of at least ``least``."""
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= least):
        raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")


def check_max_iter(max_iter):
    """Raise ``ValueError`` unless ``max_iter`` is a positive integer."""
    check_count("max_iter", max_iter, 1)


#: The estimators' on/off parameters: each, where an estimator has it, must be a bool.
FLAGS = ("bias", "fit_intercept", "estimate_noise", "warm_start", "low_rank", "progress_bar")


def check_flags(estimator):
    """Raise ``ValueError`` unless each of the estimator's :data:`FLAGS` is a bool (a string such
    as ``"no"`` is truthy, and was taken for ``True``)."""
    params = estimator.get_params(deep=False)
    for name in FLAGS:
        if name in params and not isinstance(params[name], (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {params[name]!r}")


def check_sampler_counts(num_warmup, num_samples, num_chains):
    """Raise ``ValueError`` unless the chains, warm-up and kept draws are integers that a sampler
    can run (``num_warmup ≥ 0``, ``num_samples ≥ 1``, ``num_chains ≥ 1``)."""
    check_count("num_warmup", num_warmup, 0)
    check_count("num_samples", num_samples, 1)
    check_count("num_chains", num_chains, 1)
