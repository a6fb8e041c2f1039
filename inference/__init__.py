"""Engines that run the papers' algorithms, and thin sklearn estimators over them."""
import sparsebayes  # noqa: F401  (float64)
