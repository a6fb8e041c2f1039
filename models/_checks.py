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


def check_design(X, y=None, name="X"):
    """Raise ``ValueError`` unless ``X`` is a 2-D design matrix (``(n, d)``, ``n, d ≥ 1``) and ``y``
    (if given) a 1-D target with ``n`` entries; ``name`` is ``X``'s name in the message. Shapes
    only, so it holds under JAX tracing inside a NumPyro model, where a mismatch failed with
    "Incompatible shapes for broadcasting"."""
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2 or min(shape) < 1:
        raise ValueError(f"{name} must be a 2-D array (samples × features) with at least one of each, "
                         f"got shape {shape}")
    if y is not None and tuple(getattr(y, "shape", ())) != shape[:1]:
        raise ValueError(f"y must be a 1-D array with one target per row of {name} ({shape[0]}), "
                         f"got shape {getattr(y, 'shape', None)}")


def _host_scalar(x):
    """A 0-d NumPy or JAX array as a Python float (a fitted hierarchy's values), else ``x``."""
    return float(x) if getattr(x, "shape", None) == () else x
