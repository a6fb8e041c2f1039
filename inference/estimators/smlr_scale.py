"""The scale of SMLR's penalty: λ_max (where every weight is zero) and the bias column's units.

Eq. 3's ``λ`` is in the units of the design: :func:`lambda_max` tells where it zeroes every weight
for given data, and :func:`bias_scale` puts the bias column in the inputs' units so that the units
of X do not decide whether the intercept is penalized to zero.
"""
from __future__ import annotations

import numpy as np

from sparsebayes.inference.estimators._base import has_bias_column
from sparsebayes.models.features import LinearFeatures, QuadraticFeatures


def lambda_max(Phi, y_enc, n_classes):
    """Smallest λ at which the SMLR estimate is all zeros: ``max_k |g_k(0)|`` (eq. 15). At
    ``W = 0`` every class has probability ``1/m``, so eq. 9 gives ``g(0) = Φᵀ(Y' − 1/m)``
    (NumPy: no compilation for each new number of training points).

    Rounded up by twice the error bound of summing the n terms, ``n ε Σ_i |Φ_ik||y'_i − 1/m|``:
    the engine sums the same gradient in another order, and at a λ_max below its own value by
    an ulp its estimate kept a weight of 1e-16 instead of none.
    """
    Y1 = (np.asarray(y_enc)[:, None] == np.arange(n_classes - 1)[None, :]).astype(np.float64)
    R = Y1 - 1.0 / n_classes
    slack = 2.0 * Phi.shape[0] * np.finfo(np.float64).eps * (np.abs(Phi).T @ np.abs(R))
    return float(np.max(np.abs(Phi.T @ R) + slack))


#: Designs whose columns (other than the bias) have a root mean square within this factor of 1 keep
#: the bias column of ones: eq. 3 as the paper writes it, on the map's own design (the NumPyro twin's).
UNIT_RANGE = 8.0


def bias_scale(feature_map, Phi):
    """The value ``c`` of the bias column in the penalized problem: for the linear and quadratic
    maps (whose columns carry the units of X), ``2^round(log₂ r)``, ``r`` the root mean square of
    the design's other columns, where ``r`` is outside ``[1/UNIT_RANGE, UNIT_RANGE]``; 1 otherwise
    (inputs of about unit size; kernels, whose values lie in [0, 1], without units; raw inputs and
    transformers, which have no bias column of ours).

    Eq. 3 penalizes every weight alike, the bias ``b`` included. With a column of ones, ``λ|b|``
    weighs a unit-free number against weights in units of 1/X: inputs in large units gave a
    λ_max (and an SMLRCV grid) at which the bias is zero for every λ that restrains the inputs'
    weights, and inputs in small units a λ_max set by the bias alone. With the column at ``c``
    the penalty on the intercept is ``λ|b|/c``, in the inputs' units. A power of two scales the
    column and the intercept exactly: where both designs follow the rounding (``r`` within
    ``[2^-½, 2^½]`` for X, say, and ``|k| > 3``), ``X·2^k`` with ``λ·2^k`` is the fit on X with
    the inputs' weights divided by ``2^k`` and the same intercept.
    """
    if not (isinstance(feature_map, (LinearFeatures, QuadraticFeatures)) and has_bias_column(feature_map)):
        return 1.0
    rest = Phi[:, 1:]
    top = float(np.max(np.abs(rest))) if rest.size else 0.0
    if not 0.0 < top < np.inf:
        return 1.0
    rms = top * np.sqrt(np.mean((rest / top) ** 2))  # no overflow of the squares
    return 1.0 if 1.0 / UNIT_RANGE <= rms <= UNIT_RANGE else float(2.0 ** np.round(np.log2(rms)))


def scale_bias_row(W, factor):
    """``W`` with its first row (the bias's) times ``factor``; ``W`` itself when ``factor`` is 1."""
    if factor == 1.0:
        return W
    W = np.array(W, dtype=np.float64)
    W[0] *= factor
    return W
