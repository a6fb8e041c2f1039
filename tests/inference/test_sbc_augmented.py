"""Simulation-based calibration (:mod:`sparsebayes.inference.posterior.sbc`) of the augmented Gibbs engine
(:func:`sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`): probit (Albert & Chib 1993), logistic and
negative binomial (Pólya-Gamma; Polson, Scott & Windle 2013) and Student-t (Gamma scales) under the
Laplace hierarchy, on Rue's β draw (``p + 1 ≤ n``) and Bhattacharya's (``p + 1 > n``), the horseshoe
with τ estimated under the logistic; every β, the intercept and the likelihood's own parameter
ranked (the Student-t's s² under a proper IG(3, 2) prior; the negative binomial's dispersion held
fixed here, its augmentation alone checked: see ``R_FIXED``; the dispersion is sampled, and ranked, in
tests/inference/test_sbc_negative_binomial.py). Two deliberately wrong augmentations (the logistic's pseudo-response halved; its Pólya-Gamma
variates not tilted by ``η``) must fail the same check. The simulator draws the data from the likelihood's own ``sample`` and the weights from the
hierarchy's NumPyro statement, so nothing of the Gibbs sweep is shared with the truth.

A quick default test checks the two adapters' names and shapes; the calibration runs are slow
(about 1-2 minutes each on one core)."""
import jax.numpy as jnp
import numpy as np
import pytest

from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.inference.engines.gibbs_augment import student_t_scale2_draw
from sparsebayes.inference.engines.polya_gamma import polya_gamma
from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture
from sparsebayes.models import HorseshoePrior, LaplacePrior
from sparsebayes.models.likelihoods import (BernoulliLogisticLikelihood, NegativeBinomialLikelihood, ProbitLikelihood,
                                            StudentTLikelihood)

#: the hierarchy's NumPyro statement for the truth (τ_i ~ Exp(γ/2), β_i ~ N(0, τ_i)) and its Gibbs plug-in
TRUTH_PRIOR, GIBBS_PRIOR = LaplacePrior(1.0), LaplaceMixture(1.0)
#: s² ~ IG(3, 2) for the Student-t's SBC (Jeffreys' prior, the likelihood's default, cannot be drawn from)
S2_SHAPE, S2_RATE = 3.0, 2.0
#: the negative binomial's dispersion, held fixed in this SBC of the Pólya-Gamma augmentation (an integer:
#: PG(y + r) is then an exact sum of Devroye variates). The engine samples r (the slice move on log r under
#: the likelihood's DISPERSION_PRIOR): its SBC with r drawn and ranked is
#: tests/inference/test_sbc_negative_binomial.py (slow).
R_FIXED = 2.0


class ProperStudentT(StudentTLikelihood):
    """The Student-t likelihood with the proper prior ``s² ~ IG(3, 2)`` in its scale's conditional
    (:func:`student_t_scale2_draw`'s ``prior_shape``, ``prior_rate``), so the truth can be drawn."""

    def gibbs_param_step(self, key, y, eta, params, omega):
        return student_t_scale2_draw(key, y, eta, omega * params, prior_shape=S2_SHAPE, prior_rate=S2_RATE)


class FixedDispersionNB(NegativeBinomialLikelihood):
    """The negative binomial with its dispersion held at the value the sampler is given (no own-parameter
    move: the engine skips a likelihood whose ``gibbs_param_step`` is ``None``)."""

    gibbs_param_step = None


class HalvedResponse(BernoulliLogisticLikelihood):
    """A control: the Pólya-Gamma variates right, the pseudo-response a factor 2 off,
    ``z = (y − ½)/(2ω)`` (a slip between ``κ/ω`` and the negative binomial's ``(y − r)/(2ω)``): a stable
    chain whose weights are shrunk toward 0 by about half."""

    def gibbs_augment(self, key, t, eta, params=None):
        z, omega = BernoulliLogisticLikelihood.gibbs_augment(self, key, t, eta, params)
        return 0.5 * z, omega


class FlatPolyaGamma(BernoulliLogisticLikelihood):
    """A control: ``ω ~ PG(1, 0)`` whatever ``η`` (the variates not tilted by ``η``)."""

    def gibbs_augment(self, key, t, eta, params=None):
        omega = polya_gamma(key, jnp.ones_like(eta), jnp.zeros_like(eta))
        return (t - 0.5) / omega, omega


def _s2_prior(rng):
    return S2_RATE / rng.gamma(S2_SHAPE)


#: likelihood, its parameter's prior draw (None: no parameter), the sampler's start for it, the design's scale
CASES = {
    "probit": (ProbitLikelihood(), None, None, 1.0),
    "logistic": (BernoulliLogisticLikelihood(), None, None, 1.0),
    "student_t": (ProperStudentT(4.0), _s2_prior, None, 1.0),
    # the design at a fifth of the scale: η of sd about 1.2, so the counts and the Pólya-Gamma sums of
    # y + r variates stay short (at half scale the Laplace's tails gave a replication with y = 35,140)
    "negative_binomial": (FixedDispersionNB(), None, R_FIXED, 0.2),
}
SHAPES = {"rue": (20, 4), "bhattacharya": (8, 12)}
SBC_RUN = dict(num_replications=200, num_draws=49, thin=20, max_thin=160, seed=0)


def _design(n, p, scale=1.0, seed=0):
    return scale * np.random.default_rng(seed).normal(size=(n, p))


def _pair(case, draw, truth_prior=TRUTH_PRIOR, gibbs_prior=GIBBS_PRIOR, likelihood=None):
    lik, param_draw, start, scale = CASES[case]
    lik = lik if likelihood is None else likelihood  # (a likelihood without fields is an empty, falsy tuple)
    X = _design(*SHAPES[draw], scale)
    return (sbc_pairs.augmented_simulator(truth_prior, X, lik, param_draw=param_draw, param=start or 1.0),
            sbc_pairs.augmented_gibbs_sampler(gibbs_prior, lik, likelihood_param=start, beta_draw=draw))


def test_the_augmented_adapters_name_the_truth_and_the_draws_alike():
    """The simulator's truth and the sampler's draws carry the same names (β, the intercept; the
    likelihood's parameter and the horseshoe's τ in the slow runs below), the draws one chain of the
    length asked for; the counts are non-negative integers."""
    rng = np.random.default_rng(0)
    simulate, sample = _pair("probit", "bhattacharya")
    truth, data = simulate(rng)
    draws = sample(data, 12, 0)
    assert set(truth) == set(draws) == {"beta", "intercept"}
    assert draws["beta"].shape == (12, 12) and truth["beta"].shape == (12,) and np.all(np.isfinite(draws["beta"]))
    assert set(np.unique(data[1])) <= {0.0, 1.0}
    _, (_, y) = _pair("negative_binomial", "rue")[0](rng)
    assert np.all((y >= 0) & (y == np.round(y)))
    hs = HorseshoePrior(0.5, tau_prior=1.0)
    truth, _ = sbc_pairs.augmented_simulator(hs, _design(10, 3), "probit", intercept_scale=None)(rng)
    assert set(truth) == {"beta", "tau_global"}
    with pytest.raises(ValueError, match="intercept_scale"):
        sbc_pairs.augmented_simulator(hs, _design(10, 3), "probit", intercept_scale=-1.0)


@pytest.mark.slow  # 30-110 s each on one core (compilation included)
@pytest.mark.parametrize("draw", ["rue", "bhattacharya"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_augmented_gibbs_is_calibrated(case, draw):
    """Each augmentation × Laplace on Rue's draw (n = 20, p = 4) and Bhattacharya's (n = 8, p = 12),
    intercept ~ N(0, 1): no rank histogram of β, the intercept or the likelihood's parameter fails
    its χ² test (Bonferroni at 10⁻³), and few replications stay below 49 effective draws."""
    res = sbc.run(*_pair(case, draw), **SBC_RUN)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 20, (res.low_ess, res.thin)


@pytest.mark.slow
def test_the_horseshoe_logistic_gibbs_is_calibrated_with_tau_estimated():
    """The horseshoe (τ ~ C⁺(0, 1), Makalic & Schmidt's conditionals) under the Pólya-Gamma logistic
    on Rue's draw: every β, the intercept and τ pass."""
    prior = HorseshoePrior(0.5, tau_prior=1.0)
    res = sbc.run(*_pair("logistic", "rue", truth_prior=prior, gibbs_prior=prior), **SBC_RUN)
    assert res.failed() == [], res.summary()
    # τ mixes slowly under the Pólya-Gamma augmentation: 67 of the 200 chains stayed below 49 effective
    # draws at a thinning of 160 (70 with the blocked τ update); their ranks are kept and still pass
    assert res.low_ess <= 90, (res.low_ess, res.thin)


@pytest.mark.slow
@pytest.mark.parametrize("wrong", [HalvedResponse(), FlatPolyaGamma()], ids=["halved-response", "pg-untilted"])
def test_the_calibration_check_rejects_a_wrong_augmentation(wrong):
    """The check has teeth: the logistic Gibbs with either wrong augmentation fails on the weights."""
    res = sbc.run(*_pair("logistic", "rue", likelihood=wrong), **SBC_RUN)
    assert any(name.startswith("beta") or name == "intercept" for name in res.failed()), res.summary()
