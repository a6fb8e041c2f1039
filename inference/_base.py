"""Plumbing shared by the estimators: atomic fits and feature-map construction."""
from __future__ import annotations

import functools

from sklearn.base import clone

from sparsebayes.models.features import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures


def atomic_fit(fit):
    """Decorate ``fit`` so that a failing fit leaves no fitted attribute behind (no half-fitted state)."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            raise

    return wrapper


def make_feature_map(features, *, kernel_width=1.0, bias=True):
    """``"linear"``, ``"quadratic"``, ``"kernel"`` (Gaussian, width ``kernel_width``) or a transformer."""
    if isinstance(features, str):
        if features == "linear":
            return LinearFeatures(bias=bias)
        if features == "quadratic":
            return QuadraticFeatures(bias=bias)
        if features == "kernel":
            return GaussianKernelFeatures(width=kernel_width, bias=bias)
        raise ValueError(f"features must be 'linear', 'quadratic', 'kernel' or a transformer, got {features!r}")
    if hasattr(features, "fit") and hasattr(features, "transform"):
        return clone(features)
    raise ValueError(f"features must be 'linear', 'quadratic', 'kernel' or a transformer, got {features!r}")
