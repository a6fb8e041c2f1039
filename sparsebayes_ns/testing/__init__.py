"""Conformance checks, public so that users can check their own hierarchies and likelihoods.

As :func:`sklearn.utils.estimator_checks.check_estimator` is for estimators: the suite runs these
checks over every registered hierarchy (:data:`sparsebayes.models.HIERARCHIES`) and likelihood
(:data:`sparsebayes.models.LIKELIHOODS`), and a user runs them on an object of their own, before
or after registering it::

    from sparsebayes.testing import check_hierarchy, check_likelihood
    check_hierarchy(MyPrior())        # the checks its capabilities call for; names of those run
    check_likelihood(MyLikelihood())

Each check raises ``AssertionError`` with the numbers when it fails. :mod:`.hierarchies` holds the
hierarchy checks (E-steps and marginals against quadrature, model = solver, objective monotone,
type-II pieces against scalar searches), :mod:`.likelihoods` the likelihood protocol's (score and
curvature against autodiff, EM's working surrogate, the observation statement's density, the
predictive draw's moments). The names load on first use (the checks import SciPy and NumPyro).
"""
from sparsebayes._exports import lazy_exports as _lazy_exports

#: The public names, each once: name -> submodule that defines it.
_LAZY = {
    "check_hierarchy": "hierarchies",
    "hierarchy_checks": "hierarchies",
    "check_likelihood": "likelihoods",
    "likelihood_checks": "likelihoods",
}

__all__, __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
