"""Plumbing shared by the estimators: atomic fits, feature-map construction, one-vs-all prediction."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import scipy.special
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import (GaussianKernelFeatures, LinearFeatures, QuadraticFeatures,
                                         fit_transform_validated, input_names, transform_validated)

from sparsebayes.inference.engines.lowrank import factor_kernel_design, kernel_feature_rows
from sparsebayes.inference._validation import validate_predict_data


def set_init_params(estimator, params):
    """Store each constructor argument on ``estimator`` under its own name, as given: scikit-learn's
    rule for ``__init__`` (no validation and no other attribute there; ``fit`` checks the values), so
    that ``get_params``, which reads the constructor's signature, ``set_params`` and ``clone``
    round-trip them. Called as the first statement of every estimator's ``__init__`` with
    ``locals()`` (``params``: the arguments and ``self``, which is skipped). A paper class fixes the
    generic estimator's other arguments (``method``, ``options``, a fixed ``prior``) as class
    attributes, so that they are not parameters and its ``get_params`` is its signature's."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def name_record(estimator, record, fields):
    """Set ``<field>_`` on ``estimator`` to ``record.<field>`` for each of ``fields``: the fitted
    attributes that are a fitting core's record fields under scikit-learn's trailing-underscore names
    (each route's fitted methods name the rest, the attributes it derives or renames)."""
    for field in fields:
        setattr(estimator, field + "_", getattr(record, field))


def atomic_fit(fit):
    """Decorate ``fit`` so that a failing fit leaves no fitted attribute behind (no half-fitted state),
    and so that the warnings raised inside it (a ``ConvergenceWarning``, say) name the line that
    called ``fit``, not a line of this package: they are collected during the fit and issued again
    from here, through the caller's warning filters (a filter that turns one into an error then
    fails the fit, which leaves nothing fitted as any failure does)."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = fit(self, *args, **kwargs)
            for w in caught:
                warnings.warn(w.message, stacklevel=2)
            return result
        except BaseException:
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            raise

    return wrapper


def fitted_by(*routes):
    """The check of :func:`sklearn.utils.metaestimators.available_if` that shows a route's own method
    (``summary``, ``predict_log_rate``, ``laplace_covariance``, ...) only on an estimator whose fit took
    one of ``routes`` (its ``_route_``): the generic estimators inherit every route's methods, and one
    found on another route's fit would answer from attributes that fit did not set. An unfitted
    estimator has no route, so the method is hidden (``hasattr`` is False) until a fit takes one of
    them; an estimator without routes (no ``_ROUTES`` table, e.g. ``SMLRCV``) fits by its one core and
    always has its methods."""

    def check(est):
        if not hasattr(type(est), "_ROUTES"):
            return True
        return getattr(est, "_route_", None) in routes

    check.__name__ = f"fitted_by_{'_'.join(routes)}"
    return check


def make_feature_map(features, *, kernel_width=1.0, bias=True, allow_none=False, center=False, scale=False):
    """``"linear"``, ``"quadratic"``, ``"kernel"`` (Gaussian, width ``kernel_width``: a number or
    ``"scale"``) or a transformer (cloned); with ``allow_none``, ``None`` too (no map: returns
    ``None``, the raw inputs). ``center`` / ``scale`` standardize the inputs of the linear and
    quadratic maps (:class:`~sparsebayes.models.features.LinearFeatures`); kernels are
    translation-invariant and their width sets the scale, so they take neither."""
    if features is None and allow_none:
        return None
    if isinstance(features, str):
        if features == "linear":
            return LinearFeatures(bias=bias, center=center, scale=scale)
        if features == "quadratic":
            return QuadraticFeatures(bias=bias, center=center, scale=scale)
        if features == "kernel":
            return GaussianKernelFeatures(width=kernel_width, bias=bias)
    elif hasattr(features, "fit") and hasattr(features, "transform"):
        return clone(features)
    allowed = "'linear', 'quadratic', 'kernel', None" if allow_none else "'linear', 'quadratic', 'kernel'"
    raise ValueError(f"features must be {allowed} or a transformer, got {features!r}")


def standardization(standardize, bias, prior):
    """The ``center`` and ``scale`` of :func:`make_feature_map` under ``standardize=True``, the EM
    estimators' rule (:mod:`sparsebayes.inference.estimators.adaptive`): linear and quadratic inputs centred at
    their training mean where a bias (or an intercept) takes the value there, and divided by their
    training SD only under a ``scale_free`` hierarchy (Jeffreys), whose fit does not depend on a
    column's units; a hierarchy with a scale (γ, τ) has the units of the weights and keeps them."""
    return dict(center=bool(standardize and bias), scale=bool(standardize and getattr(prior, "scale_free", False)))


def has_bias_column(feature_map):
    """Whether a fitted feature map's first output column is the bias: one of this package's maps
    (a string ``features``, or such a map given as the transformer) built with ``bias=True``.
    Another transformer's columns are all basis functions, a constant one it makes included
    (e.g. ``PolynomialFeatures(include_bias=True)``): the estimators' ``bias`` parameter does not
    reach a transformer, which is used as it is."""
    return isinstance(feature_map, (LinearFeatures, QuadraticFeatures, GaussianKernelFeatures)) and bool(feature_map.bias)


def raw_weights(feature_map, beta):
    """``beta`` (..., n_columns) on a fitted map's columns, as weights of the raw terms its
    ``get_feature_names_out`` names: the map's ``raw_weights`` (linear and quadratic maps on
    standardized inputs, :class:`~sparsebayes.models.features.LinearFeatures`), else ``beta``."""
    convert = getattr(feature_map, "raw_weights", None)
    return np.asarray(beta, dtype=np.float64) if convert is None else convert(beta)


def fit_feature_design(X, features, **map_kw):
    """Fit the feature map (:func:`make_feature_map` of ``features`` and ``map_kw``) on ``X``;
    returns ``(map, design)``."""
    fm = make_feature_map(features, **map_kw)
    return fm, np.asarray(fit_transform_validated(fm, X), dtype=np.float64)


def basis_names(estimator, feature_map, width):
    """Names of a fitted estimator's ``width`` design columns, for ArviZ coordinates: the feature
    map's ``get_feature_names_out`` on the training inputs' names (a DataFrame's columns, else
    ``x0, x1, ...``), the input names themselves when there is no map (``None``), and ``h0, h1,
    ...`` for a transformer that cannot name its outputs."""
    inputs = input_names(estimator)
    if feature_map is None:
        names = inputs
    else:
        try:
            names = feature_map.get_feature_names_out(inputs)
        except (AttributeError, ValueError):  # a transformer that does not name its outputs
            names = []
    names = [str(name) for name in names]
    return names if len(names) == width else [f"h{i}" for i in range(width)]


#: Up to this many training points a Gaussian kernel design is formed before it is factored (the
#: factor then reads its rows, and a design that is not low-rank is at hand at no extra cost);
#: above it the factor computes its pivot rows alone and the n × n design is formed only if
#: needed. The two ways cost about the same at this size; above it, computing the pivot rows
#: alone is the faster.
FORM_KERNEL_DESIGN_MAX_N = 300


def fit_design_or_factor(X, features, **map_kw):
    """``(map, H, factor)``: Gaussian kernel features of low numerical rank give the
    :class:`~sparsebayes.inference.engines.lowrank.DesignFactor` of their design and ``H = None``
    (:func:`~sparsebayes.inference.engines.lowrank.factor_kernel_design`; the kernel at the map's
    resolved ``width_``); otherwise ``factor`` is ``None`` and ``H`` is :func:`fit_feature_design`'s."""
    fm = make_feature_map(features, **map_kw)
    if not isinstance(fm, GaussianKernelFeatures):
        return (*fit_feature_design(X, fm), None)
    n = X.shape[0]
    if n <= FORM_KERNEL_DESIGN_MAX_N:
        H = np.asarray(fit_transform_validated(fm, X), dtype=np.float64)
        K = H[:, 1:] if fm.bias else H
        factor = factor_kernel_design(K.__getitem__, np.diagonal(K), bias=fm.bias)
    else:
        fm.fit(X)
        factor = factor_kernel_design(kernel_feature_rows(fm, X), np.ones(n), bias=fm.bias)
        H = None if factor is not None else np.asarray(transform_validated(fm, X), dtype=np.float64)
    return (fm, None, factor) if factor is not None else (fm, H, None)


class OneVsAllLinkClassifier:
    """Prediction of a binary-link classifier, one-vs-all for ``k > 2`` classes (002 Sec. 4.2).

    The fit sets ``classes_``, ``feature_map_`` and ``beta_`` (one row per classifier: one for
    two classes, ``k`` otherwise); a subclass gives ``_log_link(η) = log P(y = 1 | η)`` (probit:
    ``log Φ``; logistic: ``log σ``). One-vs-all probabilities are the link probabilities
    normalized over the classes (our choice: 002 learns the k classifiers but does not say
    how to combine their probabilities; the predicted class, the largest ``η_c``, is the same).
    """

    def _log_link(self, eta):
        raise NotImplementedError

    def decision_function(self, X):
        """``βᵀh(x)``: shape (n,) for two classes, (n, n_classes) for one-vs-all."""
        check_is_fitted(self, "beta_")
        X = validate_predict_data(self, X)
        eta = np.asarray(transform_validated(self.feature_map_, X), dtype=np.float64) @ self.beta_.T
        return eta[:, 0] if eta.shape[1] == 1 else eta

    def predict_proba(self, X):
        """Binary: ``[1 − g(η), g(η)]``; one-vs-all: ``g(η_c) / Σ_c' g(η_c')``, in log space."""
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, taken in log space (finite where a probability underflows)."""
        eta = self.decision_function(X)
        if eta.ndim == 1:
            return np.column_stack([self._log_link(-eta), self._log_link(eta)])
        logp = np.asarray(self._log_link(eta))
        return logp - scipy.special.logsumexp(logp, axis=1, keepdims=True)

    def predict(self, X):
        """The class of largest linear predictor ``η_c`` (for two classes: the second class where ``η > 0``)."""
        eta = self.decision_function(X)
        idx = (eta > 0).astype(int) if eta.ndim == 1 else np.argmax(eta, axis=1)
        return self.classes_[idx]
