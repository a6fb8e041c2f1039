"""Transitional: moved to :mod:`sparsebayes.models.priors.penalty` (removed before this change lands)."""
from sparsebayes.models.priors.penalty import *  # noqa: F401,F403
