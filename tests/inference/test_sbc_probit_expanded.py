"""Simulation-based calibration (:mod:`sparsebayes.inference.posterior.sbc`) of the parameter-expanded probit
sweep (:class:`~sparsebayes.models.likelihoods.probit_expanded.ExpandedProbitLikelihood`: Albert & Chib's
latents rescaled by the PX-DA group move before β's draw) under the Laplace hierarchy, on both of the
expansion's systems (Rue's shape, p + 1 ≤ n: Woodbury on p × p; Bhattacharya's, p + 1 > n: Σ itself):
the ranks of every β and the intercept uniform (χ² per parameter, Bonferroni). The simulator draws β
by the hierarchy's NumPyro statement and ``y`` by the probit's own ``sample``, nothing of the sweep."""
import numpy as np
import pytest

from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture
from sparsebayes.models import LaplacePrior
from sparsebayes.models.likelihoods.probit_expanded import ExpandedProbitLikelihood

SHAPES = {"rue": (20, 4), "bhattacharya": (8, 12)}
SBC_RUN = dict(num_replications=200, num_draws=49, thin=10, max_thin=80, seed=1)


@pytest.mark.slow  # about a minute each on one core
@pytest.mark.parametrize("draw", list(SHAPES))
def test_the_parameter_expanded_probit_gibbs_is_calibrated(draw):
    X = np.random.default_rng(0).normal(size=SHAPES[draw])
    lik = ExpandedProbitLikelihood()
    res = sbc.run(sbc_pairs.augmented_simulator(LaplacePrior(1.0), X, lik),
                  sbc_pairs.augmented_gibbs_sampler(LaplaceMixture(1.0), lik, beta_draw=draw), **SBC_RUN)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 20, (res.low_ess, res.thin)
