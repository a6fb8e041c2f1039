"""The papers' experiments, data sets, the ``sparsebayes`` CLI and benchmarks."""
import sparsebayes  # noqa: F401  (float64)

from sparsebayes import _lazy_attribute

#: Names imported on first use (name -> submodule): ``compare_estimator`` is
#: :func:`~sparsebayes.comparisons.compare_any.compare` (also ``sparsebayes.compare``); it is not
#: re-exported here as ``compare``, the name of the submodule :mod:`sparsebayes.comparisons.compare`.
_LAZY = {"compare_estimator": "compare_any", "Comparison": "compare_any"}


def __getattr__(name):
    return _lazy_attribute(__name__, globals(), _LAZY, name)
