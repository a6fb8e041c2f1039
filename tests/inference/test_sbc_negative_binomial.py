"""Simulation-based calibration (:mod:`sparsebayes.inference.posterior.sbc`) of the augmented Gibbs engine's
negative binomial with its dispersion estimated: the Pólya-Gamma augmentation (Polson, Scott & Windle
2013, Sec. 3.2) for ``(b₀, β)`` and the slice move on ``log r``
(:func:`~sparsebayes.inference.engines.gibbs_augment.negative_binomial_concentration_step`), under the
Laplace hierarchy, ``r`` drawn from the likelihood's declared prior (``DISPERSION_PRIOR``, Gamma(1, 0.1))
and started where the engine starts it (``init_params(y)``). The ranks of β, the intercept and ``r``
must be uniform (χ² per parameter, Bonferroni), and a sampler whose dispersion move counts the
Jacobian ``r`` of ``log r`` twice (the prior Gamma(2, 0.1) where the truth has Gamma(1, 0.1)) must
fail the same check on ``r``. The simulator draws ``y`` by the likelihood's own Gamma-Poisson
``sample`` and β by the hierarchy's NumPyro statement, nothing of the sweep."""
import numpy as np
import pytest

from sparsebayes.inference.engines.gibbs_augment import negative_binomial_concentration_step
from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture
from sparsebayes.models import LaplacePrior
from sparsebayes.models.likelihoods import NegativeBinomialLikelihood
from sparsebayes.models.likelihoods.negative_binomial import DISPERSION_PRIOR

#: n = 30 rows, p = 2 columns at half the unit scale (η of sd about 1 under the Laplace(1) weights)
N, P, SCALE = 30, 2, 0.5
#: 49 ranked draws of a chain thinned by 8 (β and the intercept limit the ESS; r mixes faster), rerun up to 32
SBC_RUN = dict(num_replications=200, num_draws=49, thin=8, max_thin=32, seed=0)


class DoubledJacobianNB(NegativeBinomialLikelihood):
    """A control: the dispersion's move with the Jacobian ``r`` of ``log r`` counted twice, i.e. under the
    prior Gamma(2, 0.1) where the data come from Gamma(1, 0.1): its posterior of ``r`` is too large."""

    def gibbs_param_step(self, key, t, eta, params, omega=None):
        shape, rate = DISPERSION_PRIOR
        return negative_binomial_concentration_step(key, t, eta, params, prior_shape=shape + 1.0,
                                                    prior_rate=rate)[0]


def _dispersion_prior(rng):
    shape, rate = DISPERSION_PRIOR
    return rng.gamma(shape, 1.0 / rate)


def _pair(sampler_likelihood):
    X = SCALE * np.random.default_rng(0).normal(size=(N, P))
    simulate = sbc_pairs.augmented_simulator(LaplacePrior(1.0), X, NegativeBinomialLikelihood(),
                                       param_draw=_dispersion_prior)
    return simulate, sbc_pairs.augmented_gibbs_sampler(LaplaceMixture(1.0), sampler_likelihood, num_warmup=100)


@pytest.mark.slow  # about a minute on one core
def test_the_negative_binomial_gibbs_with_its_dispersion_is_calibrated():
    """β, the intercept and r: no rank histogram fails its χ² test (Bonferroni at 10⁻³), few chains stay
    below 49 effective draws."""
    res = sbc.run(*_pair(NegativeBinomialLikelihood()), **SBC_RUN)
    assert set(res.names) == {"beta[0]", "beta[1]", "intercept", "dispersion"}
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 10, (res.low_ess, res.thin)


@pytest.mark.slow
def test_the_check_rejects_a_doubled_jacobian():
    """The same check has teeth: the dispersion move under the wrong prior fails on r."""
    res = sbc.run(*_pair(DoubledJacobianNB()), **SBC_RUN)
    assert "dispersion" in res.failed(), res.summary()
