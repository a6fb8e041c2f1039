"""Transitional: moved to :mod:`sparsebayes.models.priors.horseshoe` (removed before this change lands)."""
from sparsebayes.models.priors.horseshoe import *  # noqa: F401,F403
