"""Hyperparameter checks shared by the feature maps, the priors and the estimators."""
from __future__ import annotations

import numpy as np


def check_number(name, value, least=0.0, *, strict=False):
    """Raise ``ValueError`` unless ``value`` is a finite real number ``≥ least`` (``> least`` if
    ``strict``). Hyperparameters outside their family do not fail loudly by themselves: a
    negative Gamma rate ``b`` gave BLS a λ of 2e300 and a negative ``d`` a σ² of 1e-12; a string
    or ``None`` failed inside NumPy with a ``TypeError`` that named no parameter."""
    ok = (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
          and np.isfinite(value) and (value > least if strict else value >= least))
    if not ok:
        raise ValueError(f"{name} must be a finite number {'>' if strict else '≥'} {least:g}, got {value!r}")
