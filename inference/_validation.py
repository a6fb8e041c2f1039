"""Input checks shared by every estimator and the functional entry points (``run_gibbs``,
``run_nuts``, :func:`check_data`): bad input is a clear ``ValueError``.

scikit-learn's ``validate_data`` already rejects NaN/inf, empty data, wrong dimensions and
non-numeric X with messages that name the problem; these helpers add what it does not
check (regression targets that are strings, a single class) and keep the messages uniform
across the suite. A constant column is allowed, as in scikit-learn's estimators: in
cross-validation a rare binary feature is constant on some training folds.

The validated ``X`` is always C-ordered (a copy only where it is not): a fit depends on the values
and the seed, not on the container. NumPy sums a Fortran-ordered column pairwise and a C-ordered one
row by row, and BLAS takes other paths by layout, so a DataFrame (column-major values), a Fortran
array and a C array of the same values gave standardizations, λ grids and fits that differed in the
last bits (1e-15 to 1e-7 of the weights after the iterations).
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from sparsebayes.models._checks import check_number  # noqa: F401  (re-exported for the estimators)


def numeric_targets(y):
    """``y`` as a NumPy array, strings of numbers converted to float64; ``ValueError`` for
    non-numeric labels (a regressor cannot take categories)."""
    y_arr = np.asarray(y)
    if y_arr.dtype.kind in "OUS":
        try:
            y_arr = y_arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "regression targets must be numeric; got non-numeric labels "
                f"(dtype {y_arr.dtype}). Use a classifier for categorical targets."
            ) from None
    return y_arr


def validate_regression_data(estimator, X, y):
    """Float64 ``X`` (n, d) and ``y`` (n,) for a regressor; raises ``ValueError`` naming the problem."""
    y_arr = numeric_targets(y)
    X, y_arr = validate_data(
        estimator, X, y_arr, dtype=np.float64, order="C", y_numeric=True, ensure_min_samples=2
    )
    return X, np.asarray(y_arr, dtype=np.float64)


def validate_classification_data(estimator, X, y, *, min_classes=2):
    """Float64 ``X`` and encoded labels; sets ``classes_``. One class is a ``ValueError``."""
    X, y = validate_data(estimator, X, y, dtype=np.float64, order="C", ensure_min_samples=2)
    if y.dtype.kind not in "iub":  # 1-D integer or bool labels are always classes: skip its cost
        check_classification_targets(y)  # "Unknown label type: continuous ..." for regression targets
    classes, y_enc = np.unique(y, return_inverse=True)
    if len(classes) < min_classes:
        raise ValueError(
            f"the training labels contain a single class ({np.asarray(classes[0]).item()!r}); "
            f"a classifier needs at least {min_classes} classes"
        )
    estimator.classes_ = classes
    return X, y_enc


def one_vs_all_targets(y_enc, n_classes):
    """The 0/1 float64 targets of the binary classifiers that model the encoded labels ``y_enc``
    (``0 … n_classes − 1``): one, of the second class, for two classes; one per class beyond (one-vs-all,
    002 Sec. 4.2)."""
    return [(y_enc == c).astype(np.float64) for c in ([1] if n_classes == 2 else range(n_classes))]


def regression_likelihood(likelihood):
    """The likelihood object of a regression (by name or as given): a ``ValueError`` for a likelihood of
    labels (binary or categorical support), pointing to the classifier and listing the likelihoods of
    real or count targets."""
    from sparsebayes.models.likelihoods import LIKELIHOODS, make_likelihood

    lik = make_likelihood(likelihood)
    if getattr(lik, "support", "real") in ("binary", "categorical"):
        takes = ", ".join(n for n, c in sorted(LIKELIHOODS.items()) if getattr(c, "support", "real") in ("real", "counts"))
        raise ValueError(f"likelihood {lik.name!r} models labels: use SparseClassifier(link=...) for classification; "
                         f"SparseRegressor takes the likelihoods of real or count targets ({takes})")
    return lik


def check_hierarchy_class(prior, hierarchy, owner, method):
    """``ValueError`` unless the hierarchy object ``prior`` is of the class ``hierarchy`` that the paper class
    ``owner`` fits under ``method`` (an object of another class that calls itself by that hierarchy's name
    would be fitted as if it were one)."""
    if not isinstance(prior, hierarchy):
        raise ValueError(f"{owner} (method={method!r}) fits {hierarchy.__name__}, not {type(prior).__name__}")


def check_flags_at_default(prior, flags, owner, method):
    """``ValueError`` naming each of the hierarchy object ``prior``'s ``flags`` (type-II's ``lambda_update``,
    ``noise_update``) that is not its class's default: the paper class ``owner`` has no parameter for it, so
    ``method`` would fit the default, not what the object says."""
    default = type(prior)()
    dropped = [f"{f}={getattr(prior, f)!r}" for f in flags if getattr(prior, f) != getattr(default, f)]
    if dropped:
        raise ValueError(f"{owner} has no parameter for {type(prior).__name__}'s {', '.join(dropped)}: "
                         f"method={method!r} fits the paper's model; leave {'them' if len(dropped) > 1 else 'it'} "
                         "at the default")


def validate_predict_data(estimator, X):
    """Float64 ``X`` at predict time, with the number of features checked against fit."""
    return validate_data(estimator, X, dtype=np.float64, order="C", reset=False)


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


def as_numeric_array(value, name, *, keep_integers=False):
    """``value`` (a NumPy or JAX array, a pandas object, a list) as a NumPy array: float64, or with
    ``keep_integers`` its own dtype when it holds integers or booleans (class labels, counts).
    ``ValueError`` naming ``name`` for non-numeric values. Converting up front is what lets pandas
    input through JAX: a DataFrame reached the sampler as an object that tracing cannot convert."""
    arr = np.asarray(value)
    if keep_integers and arr.dtype.kind in "iub":
        return arr
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be real-valued, got complex values (dtype {arr.dtype})")
    try:
        return arr.astype(np.float64, copy=False)  # no copy of float64 input: a sampler of p = 10⁵ holds X once
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric, got values of dtype {arr.dtype}") from None


def check_finite(arr, name):
    """Raise ``ValueError`` if the numeric array ``arr`` holds NaN or infinity (one NaN in the data
    makes every draw of a sampler NaN)."""
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")


def check_data(X, y=None, *, min_samples=1, x_ndim=2, y_ndim=1, names=("X", "y"), keep_integer_targets=False):
    """The functional entry points' data check (``run_gibbs``, ``run_nuts``), the counterpart of
    :func:`validate_regression_data` for callers without an estimator.

    Returns ``X`` as a float64 array of ``x_ndim`` dimensions, with at least ``min_samples`` rows
    and one column, and ``y`` (or ``None``) as a numeric array of ``y_ndim`` dimensions and as
    many rows (an ``ndim`` of ``None``: any number, at least one); float64, or integer labels
    kept as they are with ``keep_integer_targets``. ``ValueError`` naming the problem:
    non-numeric values, NaN or infinity, wrong dimensions, too few rows, no columns, lengths that
    differ.
    """
    x_name, y_name = names
    X = as_numeric_array(X, x_name)
    _check_ndim(X, x_name, x_ndim, "samples × features")
    if X.shape[0] < min_samples:
        raise ValueError(f"{x_name} has {X.shape[0]} rows (samples); at least {min_samples} are needed")
    if X.ndim == 2 and X.shape[1] == 0:
        raise ValueError(f"{x_name} has no columns (features)")
    check_finite(X, x_name)
    if y is None:
        return X, None
    y = as_numeric_array(y if keep_integer_targets else numeric_targets(y), y_name,
                         keep_integers=keep_integer_targets)
    _check_ndim(y, y_name, y_ndim, f"one target per row of {x_name}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"{x_name} and {y_name} have different numbers of samples: {X.shape[0]} rows of "
                         f"{x_name}, {y.shape[0]} values of {y_name}")
    check_finite(y, y_name)
    return X, y


def _check_ndim(arr, name, ndim, meaning):
    """Raise ``ValueError`` unless ``arr`` has ``ndim`` dimensions (``None``: at least one)."""
    if (arr.ndim != ndim) if ndim is not None else arr.ndim < 1:
        want = f"a {ndim}-D array ({meaning})" if ndim is not None else "an array of at least 1 dimension"
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")


def feature_labels(X):
    """A DataFrame's column names as an array (to label the weights' dim), else ``None``."""
    columns = getattr(X, "columns", None)
    return None if columns is None else np.asarray(columns)
