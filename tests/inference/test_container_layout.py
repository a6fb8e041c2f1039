"""Fits depend on the values of X only, not on its container: a DataFrame, a Fortran-ordered
array and a C-ordered array of the same values give bit-identical fits and predictions.

NumPy's column means of a column-major array sum in another order than a row-major one's (pairwise
along a contiguous column, row by row otherwise), and BLAS products take other paths, so the
standardization of the linear maps, λ_max (SMLRCV's grid) and the type-II statistics differed in
the last bits by layout, and the iterations carried the difference into the fits (1e-15 to 1e-7 of
the weights). The estimators' validation hands every engine a C-ordered array.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

from sparsebayes.inference import (
    AdaptiveSparseRegressor,
    RVMClassifier,
    RVMRegressor,
    SMLRCV,
    SMLRClassifier,
    SparseProbitClassifier,
)


def _data():
    rng = np.random.default_rng(1)
    # columns of different units and offsets: the standardization's sums are not trivial
    X = rng.normal(size=(60, 5)) * [1.0, 3.0, 0.2, 5.0, 1.0] + [2.0, -1.0, 0.5, 10.0, 0.0]
    signal = X @ np.array([1.0, 0.0, -0.5, 0.2, 0.0])
    y_reg = signal + 0.3 * rng.normal(size=60)
    y_two = (y_reg > np.median(y_reg)).astype(int)
    y_three = np.digitize(y_reg, np.quantile(y_reg, [1 / 3, 2 / 3]))
    return X, {"regression": y_reg, "two": y_two, "three": y_three}


CASES = {  # name: (estimator factory, target); EM, type-II and SMLR estimators
    "em-probit-linear": (lambda: SparseProbitClassifier(), "two"),
    "em-regressor-linear": (lambda: AdaptiveSparseRegressor(), "regression"),
    "typeii-rvm-regressor": (lambda: RVMRegressor(), "regression"),
    "typeii-rvm-classifier-linear": (lambda: RVMClassifier(features="linear"), "two"),
    "smlr-l2": (lambda: SMLRClassifier(penalty="l2"), "three"),
    "smlr-l1-relative": (lambda: SMLRClassifier(lam=0.05, lam_relative=True), "three"),
    "smlrcv": (lambda: SMLRCV(cv=3, n_lams=3), "two"),
}


def _outputs(est, X):
    """Every fitted number a user reads: weights, intercept, and the predictions on ``X``."""
    out = [np.ravel(np.asarray(getattr(est, name), dtype=np.float64))
           for name in ("coef_", "intercept_", "lam_") if hasattr(est, name)]
    out.append(np.ravel(est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)))
    return np.concatenate(out)


@pytest.mark.parametrize("case", list(CASES))
def test_a_dataframe_a_fortran_array_and_a_c_array_give_bit_identical_fits(case):
    make, target = CASES[case]
    X, targets = _data()
    y = targets[target]
    containers = {"C": np.ascontiguousarray(X), "Fortran": np.asfortranarray(X),
                  "DataFrame": pd.DataFrame(X, columns=list("abcde"))}
    assert not containers["Fortran"].flags.c_contiguous  # the layouts do differ
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {name: make().fit(data, y) for name, data in containers.items()}
        outputs = {name: _outputs(fit, containers[name]) for name, fit in fits.items()}
    for name in ("Fortran", "DataFrame"):
        np.testing.assert_array_equal(outputs[name], outputs["C"], err_msg=f"{case}: {name} differs from C order")
