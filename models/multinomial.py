"""Transitional: moved to :mod:`sparsebayes.models.likelihoods.multinomial` (removed before this change lands)."""
from sparsebayes.models.likelihoods.multinomial import *  # noqa: F401,F403
