"""The likelihood conformance checks, at their former path: they live in
:mod:`sparsebayes.testing.likelihoods` (public, for users' own likelihoods); this module re-exports
them for existing imports."""
from sparsebayes.testing.likelihoods import *  # noqa: F401,F403
from sparsebayes.testing.likelihoods import __all__  # noqa: F401
