"""One warning class for fits that ran but mean nothing: every weight zero, a constant classifier,
an empty model, a non-finite objective, a signal that least squares finds and the fit misses
(:func:`missed_signal`). Each estimator issues it through :func:`warn_degenerate`, which says what
happened and what the user should change, so the message reads the same everywhere."""
from __future__ import annotations

import warnings

import numpy as np


class DegenerateFitWarning(UserWarning):
    """The fit ran, but its answer is degenerate (all weights zero, a constant prediction, an empty
    model, a non-finite objective). The message names what to change (units, a hyperparameter,
    the feature map)."""


def warn_degenerate(estimator, what, change, *, stacklevel=3):
    """Issue :class:`DegenerateFitWarning` as ``"<Estimator>: <what>; <change>"``.

    ``estimator``: the estimator (its class name leads the message) or a name; ``what``: what
    happened (``"every weight is zero"``); ``change``: what to do about it (``"standardize X"``).
    """
    name = estimator if isinstance(estimator, str) else type(estimator).__name__
    warnings.warn(f"{name}: {what}; {change}", DegenerateFitWarning, stacklevel=stacklevel)


#: The missed-signal check (:func:`missed_signal`): least squares must find a linear signal at this
#: F-test p-value, and the fit keep less than this share of the variance least squares explains.
SIGNAL_P_VALUE = 1e-3
KEPT_SHARE = 0.01


def missed_signal(design, y, fitted):
    """``(r2_fit, r2_ls, p_value)`` when the data hold a clear linear signal that a fit missed, else ``None``.

    ``design`` (n × p) and ``y`` as the fit saw them, ``fitted`` its values on the training rows. Least
    squares on ``design`` explains a share ``R²_ls`` of ``y``'s variance about its mean at an F-test
    p-value below :data:`SIGNAL_P_VALUE` (``F = (R²_ls/p) / ((1 − R²_ls)/(n − 1 − p))``, the regression
    F-test with an intercept), and ``fitted`` explains less than :data:`KEPT_SHARE` of it. The check is
    the oracle a user would run, so a fit that says nothing about a signal least squares finds at once
    is caught whatever made it miss the signal (tiny units against a fixed prior, uncentred columns
    without an intercept). A real absence of signal fails the F-test and is not reported. ``None``
    also when ``n − 1 ≤ p`` (no residual degrees of freedom) or ``y`` is constant.
    """
    from scipy.special import fdtrc

    design = np.asarray(design, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, p = design.shape
    df = n - 1 - p
    total = float(np.sum((y - y.mean()) ** 2))
    if df < 1 or total == 0.0:
        return None
    r2_fit = 1.0 - float(np.sum((y - fitted) ** 2)) / total
    if r2_fit >= KEPT_SHARE:  # R²_ls ≤ 1: no least squares needed (most fits)
        return None
    ls = np.linalg.lstsq(design, y, rcond=None)[0]
    r2_ls = 1.0 - float(np.sum((y - design @ ls) ** 2)) / total
    p_value = float(fdtrc(p, df, (r2_ls / p) / max(1.0 - r2_ls, np.finfo(float).tiny) * df))
    if p_value < SIGNAL_P_VALUE and r2_fit < KEPT_SHARE * r2_ls:
        return r2_fit, r2_ls, p_value
    return None
