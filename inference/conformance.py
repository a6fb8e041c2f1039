"""The hierarchy conformance checks, at their former path: they live in
:mod:`sparsebayes.testing.hierarchies` (public, for users' own hierarchies); this module re-exports
them for existing imports."""
from sparsebayes.testing.hierarchies import *  # noqa: F401,F403
from sparsebayes.testing.hierarchies import __all__  # noqa: F401
