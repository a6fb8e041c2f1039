"""Feature maps h(x) as scikit-learn transformers.

Figueiredo (2003, Sec. 3.1; 002 Sec. 2) writes every model as ``u(x, β) = βᵀ h(x)`` with

* linear features ``h(x) = [1, x_1, ..., x_d]``;
* quadratic features: the d inputs, their squares and pairwise products
  (``d + d(d+1)/2`` features, 000 Sec. 5.2.1), plus the bias;
* kernel features ``h(x) = [1, K(x, x^(1)), ..., K(x, x^(n))]`` with the Gaussian kernel
  ``K(x, x') = exp(-‖x − x'‖² / (2 h²))`` (000 eq. 22, 002 Sec. 4.2) centred on the
  training points.  Helgøy & Li write the same kernel as ``exp(-r² ‖x − x'‖²)``:
  ``GaussianKernelFeatures.from_helgoy_li(r)`` gives it (``h = 1 / (√2 r)``).

Column 0 is the bias whenever ``bias=True``; a fitted model names its "relevance"
training points through :meth:`GaussianKernelFeatures.centers_for`.

Linear and quadratic maps can act on standardized inputs, ``z = (x − mean_) / scale_``
(``center``, ``scale``), as scikit-learn's linear models centre: the bias is then the value at the
training mean, and a fit does not depend on where the origin of ``x`` lies (nor, for a
scale-free prior, on its units).
:meth:`~_PolynomialMap.raw_weights` re-expresses weights on those columns as weights on the
terms of the raw ``x`` that :meth:`get_feature_names_out` names.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sparsebayes.models._checks import check_number


def gaussian_kernel(X, centers, width):
    """Gaussian kernel matrix ``K_ij = exp(-‖X_i − C_j‖² / (2 width²))`` (000 eq. 22)."""
    X = np.asarray(X, dtype=np.float64)
    centers = np.asarray(centers, dtype=np.float64)
    sq = (
        np.sum(X**2, axis=1)[:, None]
        + np.sum(centers**2, axis=1)[None, :]
        - 2.0 * X @ centers.T
    )
    np.maximum(sq, 0.0, out=sq)
    return np.exp(-sq / (2.0 * width**2))


def input_names(fitted):
    """The input names of a fitted scikit-learn object: the DataFrame columns it was fitted on
    (``feature_names_in_``), else ``x0, x1, ...`` (scikit-learn's convention)."""
    default = [f"x{i}" for i in range(fitted.n_features_in_)]
    return [str(name) for name in getattr(fitted, "feature_names_in_", default)]


class _FeatureMap(TransformerMixin, BaseEstimator):
    """Shared plumbing: input checks, bias column, output width.

    A map gives ``_fit_checked(X)`` and ``_transform_checked(X)`` on validated float64 input;
    ``fit``, ``transform`` and ``fit_transform`` validate (``fit_transform`` once, not twice).
    """

    def _check_params(self):
        """Raise ``ValueError`` on a bad hyperparameter (before anything is fitted)."""

    def _fit_validated(self, X):
        """Check the hyperparameters, validate ``X``, fit; returns the validated ``X``."""
        self._check_params()
        X = validate_data(self, X, dtype=np.float64)
        self._fit_checked(X)
        return X

    def fit(self, X, y=None):
        """Learn what the map needs from the training inputs.

        For the polynomial maps, the input count and (with ``center``/``scale``) the columns' means
        and scales; for the kernel map, the training points that become the kernel centres and,
        with ``width="scale"``, the width ``width_``.

        Parameters
        ----------
        X : array-like or pandas DataFrame, shape (n, d)
            Training inputs, finite; a DataFrame's columns name the outputs
            (:meth:`get_feature_names_out`).
        y : None
            Ignored (scikit-learn's transformer signature).

        Returns
        -------
        self
        """
        self._fit_validated(X)
        return self

    def transform(self, X):
        """The design matrix ``H`` with rows ``h(x)`` for the inputs ``X``.

        Parameters
        ----------
        X : array-like or pandas DataFrame, shape (m, d)
            Inputs with the columns the map was fitted on.

        Returns
        -------
        ndarray, shape (m, n_output_features_)
            The bias column first when ``bias=True``, then the map's columns in the order of
            :meth:`get_feature_names_out`.
        """
        check_is_fitted(self)
        return self._transform_checked(validate_data(self, X, dtype=np.float64, reset=False))

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)`` with one validation of ``X``."""
        return self._transform_checked(self._fit_validated(X))

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``"bias"`` first when ``bias=True``, then the map's
        (:meth:`_names_checked`) from the input names (``input_features``, else the fitted
        DataFrame's columns, else ``x0, x1, ...``)."""
        check_is_fitted(self)
        if input_features is None:
            input_features = input_names(self)
        if len(input_features) != self.n_features_in_:
            raise ValueError(f"input_features has {len(input_features)} names, the map was fitted on "
                             f"{self.n_features_in_} features")
        names = self._names_checked([str(name) for name in input_features])
        return np.asarray((["bias"] if self.bias else []) + names, dtype=object)

    def _with_bias(self, F):
        if self.bias:
            return np.hstack([np.ones((F.shape[0], 1)), F])
        return F

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


def fit_transform_validated(feature_map, X):
    """``feature_map.fit_transform(X)`` for ``X`` an estimator has validated already (2-D, finite
    float64, no column names): one of this module's maps skips validating it a second time (a
    sizable share of a small linear fit); another transformer is called as it is."""
    if not isinstance(feature_map, _FeatureMap):
        return feature_map.fit_transform(X)
    feature_map._check_params()
    feature_map.n_features_in_ = X.shape[1]
    feature_map._fit_checked(X)
    return feature_map._transform_checked(X)


def transform_validated(feature_map, X):
    """``feature_map.transform(X)`` for validated ``X`` (:func:`fit_transform_validated`) whose
    width the estimator has checked against the fit."""
    if not isinstance(feature_map, _FeatureMap):
        return feature_map.transform(X)
    check_is_fitted(feature_map)
    return feature_map._transform_checked(X)


class _PolynomialMap(_FeatureMap):
    """Terms of degree at most 2 in the inputs, optionally standardized: ``z = (x − mean_) / scale_``.

    ``center`` subtracts the training mean (the bias then carries the value at the mean; it needs
    ``bias=True``, which absorbs the shift); ``scale`` divides by the training SD (1 for a constant
    input). Both are off by default: the map is then the paper's on the raw ``x``. A subclass gives
    ``_pairs()``, the ``(i, j)`` of its products ``z_i z_j`` (none for linear).
    """

    def __init__(self, *, bias=True, center=False, scale=False):
        self.bias = bias
        self.center = center
        self.scale = scale

    def _check_params(self):
        for name in ("center", "scale"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.center and not self.bias:
            raise ValueError("center=True needs bias=True: the bias column carries the value at the training mean")

    def _fit_inputs(self, X):
        """Set ``mean_`` and ``scale_`` (zeros and ones where ``center`` / ``scale`` are off)."""
        d = X.shape[1]
        self.mean_ = X.mean(axis=0) if self.center else np.zeros(d)
        sd = X.std(axis=0) if self.scale else np.ones(d)
        self.scale_ = np.where(sd > 0, sd, 1.0)

    def _inputs(self, X):
        """``(X − mean_) / scale_``; ``X`` itself when neither is set."""
        return (X - self.mean_) / self.scale_ if (self.center or self.scale) else X

    def _raw_matrix(self):
        """``A`` with ``h(x) = Aᵀ h_raw(x)``: column ``k`` holds the raw terms' coefficients of column
        ``k`` of this map. With ``z_i = (x_i − m_i)/s_i``: ``z_i = x_i/s_i − m_i/s_i`` and
        ``z_i z_j = (x_i x_j − m_j x_i − m_i x_j + m_i m_j)/(s_i s_j)`` (a square collects both middle
        terms; ``m = 0`` without ``center``)."""
        m, s, off = self.mean_, self.scale_, int(self.bias)
        d = m.size
        A = np.zeros((self.n_output_features_, self.n_output_features_))
        lin = off + np.arange(d)
        A[lin, lin] = 1.0 / s
        if self.bias:
            A[0, 0] = 1.0
            A[0, lin] = -m / s
        for k, (i, j) in enumerate(self._pairs(), start=off + d):
            c = 1.0 / (s[i] * s[j])
            A[k, k] = c
            A[off + i, k] -= m[j] * c
            A[off + j, k] -= m[i] * c
            if self.bias:
                A[0, k] += m[i] * m[j] * c
        return A

    def raw_weights(self, beta):
        """Weights on the raw terms (``1, x_i, x_i x_j``, as :meth:`get_feature_names_out` names them)
        of the function ``h(x)ᵀβ`` that ``beta`` (..., n_output_features_) gives on this map's columns:
        ``h(x)ᵀβ = h_raw(x)ᵀ raw_weights(β)``. ``beta`` itself when the inputs are not standardized."""
        check_is_fitted(self)
        beta = np.asarray(beta, dtype=np.float64)
        if not (self.center or self.scale):
            return beta.copy()
        return beta @ self._raw_matrix().T


class LinearFeatures(_PolynomialMap):
    """``h(x) = [1, x_1, ..., x_d]`` (002 Sec. 2, "linear classifiers").

    Parameters
    ----------
    bias : bool, default=True
        Prepend a column of ones.
    center, scale : bool, default=False
        Standardize the inputs first (:class:`_PolynomialMap`): ``h(x) = [1, z]``, ``z = (x − mean_)/scale_``.
    """

    def _fit_checked(self, X):
        self._fit_inputs(X)
        self.n_output_features_ = X.shape[1] + int(self.bias)

    def _transform_checked(self, X):
        return self._with_bias(self._inputs(X))

    def _pairs(self):
        return np.zeros((0, 2), dtype=int)

    def _names_checked(self, names):
        return names


class QuadraticFeatures(_PolynomialMap):
    """Linear terms, squares and pairwise products: ``d + d(d+1)/2`` features (000 Sec. 5.2.1).

    Parameters
    ----------
    bias : bool, default=True
        Prepend a column of ones.
    center, scale : bool, default=False
        Form the terms of the standardized inputs ``z = (x − mean_)/scale_`` (:class:`_PolynomialMap`).
    """

    def _fit_checked(self, X):
        self._fit_inputs(X)
        d = X.shape[1]
        self.pairs_ = np.array(np.triu_indices(d)).T  # (i, j), i <= j: squares and products
        self.n_output_features_ = d + len(self.pairs_) + int(self.bias)

    def _transform_checked(self, X):
        Z = self._inputs(X)
        quad = Z[:, self.pairs_[:, 0]] * Z[:, self.pairs_[:, 1]]
        return self._with_bias(np.hstack([Z, quad]))

    def _pairs(self):
        return self.pairs_

    def _names_checked(self, names):
        """``a``, then ``a^2`` for squares and ``a b`` for products (scikit-learn's spelling)."""
        return names + [f"{names[i]}^2" if i == j else f"{names[i]} {names[j]}" for i, j in self.pairs_]


#: The kernel's distances are taken from the training mean (``GaussianKernelFeatures.offset_``)
#: when that mean lies more than this many root-mean-square spreads from the origin. The kernel
#: is translation-invariant, so this changes only rounding: ``‖x‖² + ‖c‖² − 2xᵀc`` loses about
#: ``2 log2(‖mean‖ / spread)`` bits (at an offset of 1e8 on unit-spread inputs, every one), and
#: beyond 10 spreads it loses over six of them; nearer the origin the distances are computed as
#: they are, so fits on such data do not change by a rounding.
KERNEL_SHIFT_RATIO = 10.0


#: Columns whose standard deviations differ by more than this factor make an isotropic kernel's
#: distances those of the widest columns alone: :func:`warn_unequal_scales` says so.
KERNEL_SCALE_RATIO = 1e3


def warn_unequal_scales(X):
    """A :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` when the non-constant columns of ``X``
    differ in standard deviation by more than :data:`KERNEL_SCALE_RATIO`; returns the ratio (1 for fewer
    than two such columns).

    ``‖x − x'‖² = Σ_j (x_j − x'_j)²`` weighs every column in its own units: a column in units 1e6 times
    another's decides every distance, and with it the ``"scale"`` width (:func:`scale_width`, the
    widest columns' spread), so the kernels see it alone (on columns in units 1e-8 to 1e8 the fits
    explained R² ≈ 0.5 where the standardized ones fit). The map is not changed (a fit's numbers stay
    those of the paper's kernel on the inputs given); the message is the same for every fit, so that
    a cross-validation's folds repeat one warning, not one each."""
    sd = np.std(X, axis=0)
    sd = sd[sd > 0]
    if sd.size < 2:
        return 1.0
    ratio = float(sd.max() / sd.min())
    if ratio > KERNEL_SCALE_RATIO:
        from sparsebayes.inference._warnings import warn_degenerate  # on use: models does not load inference

        warn_degenerate("GaussianKernelFeatures", f"the columns of X differ in standard deviation by more than a "
                        f"factor {KERNEL_SCALE_RATIO:g}, so the kernel's distances (and a 'scale' width) are those "
                        "of the widest columns alone and the others are all but ignored",
                        "standardize X (e.g. StandardScaler) before a kernel map", stacklevel=2)
    return ratio


def scale_width(X):
    """The width ``h = √(Σ_j var(x_j) / 2)``: half the mean squared distance between two training
    points is ``h²``, so the kernel ``exp(−‖x − x'‖²/(2h²))`` sits at ``e^{−1}`` for a typical pair.

    On column-centred data this is scikit-learn's ``gamma="scale"`` (its ``exp(−γ‖x − x'‖²)`` with
    ``γ = 1/(d · var(X))``, ``var`` over all entries): ``d · var(X) = Σ_j var(x_j)`` there. It
    differs where the columns' means differ: scikit-learn's ``var(X)`` counts the spread of the
    means, so a column shifted by a constant, or a constant column, changes its width, while the
    distances between points do not change; the per-column sum keeps the width (and so the fit)
    unchanged by per-column offsets. Constant ``X`` gets ``γ = 1`` (``h = √½``), as there."""
    total = float(np.sum(np.var(X, axis=0)))
    return float(np.sqrt(total / 2.0)) if total != 0 else float(np.sqrt(0.5))


def kernel_offset(X):
    """The point distances are measured from: the mean of ``X`` when it lies more than
    :data:`KERNEL_SHIFT_RATIO` root-mean-square spreads from the origin, else the origin."""
    mean = X.mean(axis=0)
    spread2 = float(np.mean(np.sum((X - mean) ** 2, axis=1)))
    return mean if float(mean @ mean) > KERNEL_SHIFT_RATIO**2 * spread2 else np.zeros_like(mean)


class GaussianKernelFeatures(_FeatureMap):
    """``h(x) = [1, K(x, x^(1)), ..., K(x, x^(n))]``, Gaussian kernels on the training points.

    ``K(x, x') = exp(-‖x − x'‖² / (2 h²))`` (000 eq. 22; 002 Sec. 4.2).

    Parameters
    ----------
    width : float or "scale", default=1.0
        The kernel width ``h``; ``"scale"`` takes it from the training inputs at fit, the width of
        scikit-learn's ``SVC(gamma="scale")`` (:func:`scale_width`).
    bias : bool, default=True
        Prepend a column of ones.

    Attributes
    ----------
    width_ : float
        The width in use (``width``, or the one ``"scale"`` resolved to).
    offset_ : ndarray (d,)
        The point distances are computed from (:func:`kernel_offset`): it changes their rounding only.
    centers_ : ndarray (n, d)
        The training points.
    """

    def __init__(self, *, width=1.0, bias=True):
        self.width = width
        self.bias = bias

    @classmethod
    def from_helgoy_li(cls, r, *, bias=True):
        """Helgøy & Li's parametrization ``exp(-r² ‖x − x'‖²)``, i.e. ``h = 1/(√2 r)``."""
        return cls(width=1.0 / (np.sqrt(2.0) * r), bias=bias)

    def _check_params(self):
        if isinstance(self.width, str):
            if self.width != "scale":
                raise ValueError(f"kernel width must be a finite number > 0 or 'scale', got {self.width!r}")
            return
        check_number("kernel width", self.width, 0.0, strict=True)

    def _fit_checked(self, X):
        warn_unequal_scales(X)
        self.width_ = scale_width(X) if isinstance(self.width, str) else self.width
        self.offset_ = kernel_offset(X)
        self.centers_ = X.copy()
        self.n_output_features_ = X.shape[0] + int(self.bias)

    def kernel(self, X):
        """The kernel block ``K(X, centers_)`` at ``width_``, distances taken from ``offset_``."""
        check_is_fitted(self)
        if not self.offset_.any():
            return gaussian_kernel(X, self.centers_, self.width_)
        return gaussian_kernel(X - self.offset_, self.centers_ - self.offset_, self.width_)

    def _transform_checked(self, X):
        return self._with_bias(self.kernel(X))

    def _names_checked(self, names):
        """``kernel_i``: the kernel centred on training point ``i``."""
        return [f"kernel_{i}" for i in range(self.centers_.shape[0])]

    def centers_for(self, coef_mask):
        """Indices of the training points whose kernel columns are selected by ``coef_mask``.

        ``coef_mask`` runs over the output columns (bias first when ``bias=True``).
        """
        check_is_fitted(self)
        mask = np.asarray(coef_mask, dtype=bool)
        if self.bias:
            mask = mask[1:]
        return np.flatnonzero(mask)
