"""One warning class for fits that ran but mean nothing: every weight zero, a constant classifier,
an empty model, a NaN objective. Each estimator issues it through :func:`warn_degenerate`, which
says what happened and what the user should change, so the message reads the same everywhere."""
from __future__ import annotations

import warnings


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
