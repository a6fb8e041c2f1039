"""The papers' experiments, data sets, the ``sparsebayes`` CLI and benchmarks."""
import sparsebayes  # noqa: F401  (float64)
