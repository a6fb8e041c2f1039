"""Engines that run the papers' algorithms, and thin sklearn estimators over them."""
import sparsebayes  # noqa: F401  (float64)

from .adaptive import AdaptiveSparseRegressor, SparseProbitClassifier
from .nuts import run_nuts

__all__ = ["AdaptiveSparseRegressor", "SparseProbitClassifier", "run_nuts"]
