"""The papers' experiments, data sets, the ``sparsebayes`` CLI and benchmarks.

``compare_estimator`` is :func:`~sparsebayes.comparisons.compare_any.compare` (also
``sparsebayes.compare``); it is not exported here as ``compare``, the name of the submodule
:mod:`sparsebayes.comparisons.compare`. Both load on first use (PEP 562 ``__getattr__``).
"""
from sparsebayes._exports import lazy_exports as _lazy_exports

#: The public names, each once: name -> submodule (or (submodule, attribute)) that defines it.
_LAZY = {"compare_estimator": ("compare_any", "compare"), "Comparison": "compare_any"}

__all__, __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
