"""Transitional: moved to :mod:`sparsebayes.models.priors.typeii` (removed before this change lands)."""
from sparsebayes.models.priors.typeii import *  # noqa: F401,F403
