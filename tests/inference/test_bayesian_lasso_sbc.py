"""Simulation-based calibration (:mod:`sparsebayes.inference.posterior.sbc`) of Park & Casella's Bayesian
Lasso as the hierarchy Gibbs engine runs it, from pre-drawn variates
(:func:`~sparsebayes.inference.engines.hierarchy_gibbs_variates.step_from` with
:meth:`~sparsebayes.models.priors.LaplacePrior.gibbs_update_from`), NumPy's variates (the CPU's source),
on Rue's draw (p ≤ n) and Bhattacharya's (p > n), and a control with a wrong λ² conditional that the
check must reject. Slow: about 20 s each."""
import numpy as np
import pytest
from sparsebayes.inference.engines import hierarchy_gibbs
from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.models import HorseshoePrior, LaplacePrior

SBC = dict(num_replications=200, num_draws=99, thin=10, seed=0)


def _design(n, p, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X - X.mean(axis=0)


@pytest.mark.slow
@pytest.mark.parametrize("n, p", [(10, 5), (6, 10)], ids=["rue", "bhattacharya"])
def test_the_routed_bayesian_lasso_is_calibrated(n, p):
    """λ² ~ Gamma(2, 2), σ² ~ IG(3, 2): no rank histogram of β, σ², λ² fails its χ² test (Bonferroni
    at 10⁻³), NumPy's variates named (not ``"auto"``, which is the device's on an accelerator)."""
    simulate = sbc_pairs.hierarchy_simulator(LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), _design(n, p), scaled=True)
    sample = sbc_pairs.bayesian_lasso_sampler(lam2_shape=2.0, lam2_rate=2.0, variates="numpy")
    res = sbc.run(simulate, sample, **SBC)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 10


class _WrongLam2Conditional(LaplacePrior):
    """The Laplace prior with a broken variate-form conditional (the control): γ = G / (2b + Σ τ_i/2),
    the rate of ``Gamma(a, 2b)`` in place of ``Gamma(a, b)``; a stable chain on the wrong posterior."""

    def gibbs_update_from(self, variates, beta, aux):
        a, b = self.gamma_prior
        return LaplacePrior.gibbs_update_from(self._replace(gamma_prior=(a, 2.0 * b)), variates, beta, aux)


def _engine_sampler(prior):
    """``sample(data, num_samples, seed)``: the engine itself (scaled, ``NoisePrior(3, 2)``, one chain,
    NumPy's variates) on ``prior``, with the simulator's names."""
    def sample(data, num_samples, seed):
        X, y = data
        states, _ = hierarchy_gibbs.run(X, y, prior, num_warmup=300, num_samples=num_samples, num_chains=1, seed=seed,
                                        noise_prior=hierarchy_gibbs.NoisePrior(3.0, 2.0), scaled=True,
                                        progress_bar=False, variates="numpy")
        return {"beta": states.beta[0], "noise_var": states.noise_var[0], "gamma": states.aux["gamma"][0]}
    return sample


@pytest.mark.slow
def test_the_calibration_check_rejects_a_wrong_lam2_conditional():
    """The check has teeth on this path: the engine on the right conditionals passes, the same run with
    λ²'s rate doubled fails on ``gamma``."""
    prior = LaplacePrior(1.0, gamma_prior=(2.0, 2.0))
    simulate = sbc_pairs.hierarchy_simulator(prior, _design(10, 5), scaled=True)
    right = sbc.run(simulate, _engine_sampler(prior), **SBC)
    assert right.failed() == [], right.summary()
    wrong = sbc.run(simulate, _engine_sampler(_WrongLam2Conditional(1.0, gamma_prior=(2.0, 2.0))), **SBC)
    assert "gamma" in wrong.failed(), wrong.summary()


@pytest.mark.slow
@pytest.mark.parametrize("n, p", [(8, 16), (16, 8)], ids=["bhattacharya", "rue"])
def test_the_horseshoe_from_variates_is_calibrated(n, p):
    """The horseshoe with τ ~ C⁺(0, 1), σ² ~ IG(3, 2), unscaled, swept from NumPy variates
    (:meth:`~sparsebayes.models.priors.horseshoe.HorseshoePrior.gibbs_update_from`): every β, σ² and τ passes."""
    prior = HorseshoePrior(0.5, tau_prior=1.0)

    def sample(data, num_samples, seed):
        X, y = data
        states, _ = hierarchy_gibbs.run(X, y, prior, num_warmup=300, num_samples=num_samples, num_chains=1, seed=seed,
                                        noise_prior=hierarchy_gibbs.NoisePrior(3.0, 2.0), progress_bar=False,
                                        variates="numpy")
        return {"beta": states.beta[0], "noise_var": states.noise_var[0], "tau_global": np.sqrt(states.aux["tau2"][0])}

    res = sbc.run(sbc_pairs.hierarchy_simulator(prior, _design(n, p)), sample, num_replications=200, num_draws=49, thin=10,
                  max_thin=80, seed=0)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 20
