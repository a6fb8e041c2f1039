"""Simulation-based calibration of the default NUTS of each hierarchy (slow suite).

The NUTS that ``compare`` and the twins run by default, each on a small problem drawn from its own
prior (:func:`sparsebayes.inference.posterior.sbc_pairs.hierarchy_simulator`): the Bayesian Lasso's Laplace marginal
(``bayesian_lasso(marginal=True)``, τ² integrated out: its scale mixture diverged in 55 % of such
fits), the Laplace hierarchy's marginal with γ sampled under its hyperprior (the twin of an EM fit
that estimated γ), and the horseshoe's collapsed NUTS with τ estimated (β integrated out, the
scales by NUTS at the hierarchy's declared ``target_accept_prob``: NUTS on the hierarchy itself
diverged in 96 % of fits). 200 replications each, 49 ranks (Talts et al. 2018, Algorithm 2: thinned
to 49 effective draws); every parameter's χ² p-value passes (Bonferroni at 10⁻³) and no fit
diverges. The control, the same collapsed NUTS with the half-Cauchy scale of τ ten times the
simulator's (a stable, wrong posterior), must fail on τ. Where σ² is held fixed it is because the
twin's σ² prior is flat (000 eq. 6), which no simulator can draw from.
"""
import warnings

import numpy as np
import pytest
from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.models import HorseshoePrior, LaplacePrior
from sparsebayes.models.adaptive import sparse_regression_model
from sparsebayes.models.bayesian_lasso import bayesian_lasso

#: The calibration runs: 200 replications, L = 49 kept draws (bins of 5 ranks) thinned 4 (8 when the
#: effective size of the 196 draws falls below 49), NUTS warm-up 200 (one chain each).
RUN = dict(num_replications=200, num_draws=49, thin=4, max_thin=8, bins=10, seed=0, progress_bar=False)
WARMUP = 200
NOISE_VAR = 0.5  # σ² held where the twin's σ² prior is flat


def _design(n, p, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X - X.mean(axis=0)


def _calibrate(simulate, sample, parameters=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # divergences are counted from the records, not warned
        return sbc.run(simulate, sample, parameters=parameters, **RUN)


def _report(res, records):
    runs_diverged, draws_diverged = sbc_pairs.divergence_rates(records)
    return (f"\n{res.summary()}\nlow ESS {res.low_ess}, runs with a divergence {runs_diverged:.1%}, "
            f"divergent draws {draws_diverged:.2%}")


def _names(p, *sites):
    return [f"beta[{i}]" for i in range(p)] + list(sites)


@pytest.mark.slow
def test_the_bayesian_lasso_laplace_marginal_nuts_is_calibrated():
    """``bayesian_lasso(marginal=True)`` on centred data (n = 10, p = 5), λ² ~ Gamma(2, 2), σ² ~ IG(3, 2):
    β, σ² and λ² (named ``gamma``) calibrated; no divergent transition in any fit."""
    records = []
    simulate = sbc_pairs.hierarchy_simulator(LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), _design(10, 5), scaled=True)
    sample = sbc_pairs.nuts_sampler(bayesian_lasso, num_warmup=WARMUP, rename={"lam2": "gamma"}, centre=True,
                              lam2_shape=2.0, lam2_rate=2.0, c=3.0, d=2.0, marginal=True, record=records)
    res = _calibrate(simulate, sample)
    assert res.failed() == [], _report(res, records)
    assert res.low_ess <= 10 and sbc_pairs.divergence_rates(records)[0] == 0.0, _report(res, records)


@pytest.mark.slow
def test_the_laplace_marginal_nuts_with_gamma_sampled_is_calibrated():
    """The Laplace twin of an EM fit that estimated γ (``sparse_regression_model(prior="laplace",
    gamma_prior=(2, 2), marginal=True)``, n = 10, p = 5, σ² held): β and γ calibrated, no divergence."""
    records = []
    simulate = sbc_pairs.hierarchy_simulator(LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), _design(10, 5), noise_var=NOISE_VAR)
    kwargs, _ = LaplacePrior(1.0, gamma_prior=(2.0, 2.0)).nuts_twin()
    sample = sbc_pairs.nuts_sampler(sparse_regression_model, num_warmup=WARMUP, target_accept_prob=None,
                              noise_var=NOISE_VAR, record=records, **kwargs)
    res = _calibrate(simulate, sample, _names(5, "gamma"))
    assert res.failed() == [], _report(res, records)
    assert res.low_ess <= 10 and sbc_pairs.divergence_rates(records)[0] == 0.0, _report(res, records)


HORSESHOE = HorseshoePrior(0.5, tau_prior=1.0)


@pytest.mark.slow
def test_the_horseshoe_collapsed_nuts_with_tau_estimated_is_calibrated():
    """The horseshoe twin's NUTS (β integrated out, τ ~ C⁺(0, 1), the declared target 0.99; n = 8,
    p = 6, σ² held): β and τ calibrated, no divergence."""
    records = []
    simulate = sbc_pairs.hierarchy_simulator(HORSESHOE, _design(8, 6), noise_var=NOISE_VAR)
    sample = sbc_pairs.collapsed_nuts_sampler(HORSESHOE, noise_var=NOISE_VAR, num_warmup=WARMUP, record=records)
    res = _calibrate(simulate, sample, _names(6, "tau_global"))
    assert res.failed() == [], _report(res, records)
    assert res.low_ess <= 10 and sbc_pairs.divergence_rates(records)[0] == 0.0, _report(res, records)


@pytest.mark.slow
def test_the_calibration_check_rejects_a_collapsed_nuts_with_the_wrong_tau_scale():
    """The control: the same runs with the sampler's τ ~ C⁺(0, 10), ten times the simulator's scale
    (the posterior of another, proper model), fail on τ."""
    simulate = sbc_pairs.hierarchy_simulator(HORSESHOE, _design(8, 6), noise_var=NOISE_VAR)
    sample = sbc_pairs.collapsed_nuts_sampler(HorseshoePrior(0.5, tau_prior=10.0), noise_var=NOISE_VAR, num_warmup=WARMUP)
    res = _calibrate(simulate, sample, _names(6, "tau_global"))
    assert "tau_global" in res.failed(), res.summary()


def test_the_nuts_adapters_record_divergences_and_check_their_arguments():
    """``divergence_rates`` over recorded runs: the share of runs with a divergence and of divergent
    draws; bad arguments are ``ValueError``s naming the problem."""
    recs = [sbc_pairs.NutsHealth(0, 100), sbc_pairs.NutsHealth(3, 100), sbc_pairs.NutsHealth(0, 200)]
    assert sbc_pairs.divergence_rates(recs) == (pytest.approx(1 / 3), pytest.approx(3 / 400))
    with pytest.raises(ValueError, match="no NUTS runs"):
        sbc_pairs.divergence_rates([])
    with pytest.raises(ValueError, match="noise_var must be a positive number"):
        sbc_pairs.collapsed_nuts_sampler(HORSESHOE, noise_var=0.0)
    with pytest.raises(ValueError, match="LaplacePrior"):
        sbc_pairs.collapsed_nuts_sampler(LaplacePrior(1.0), noise_var=1.0)  # no collapsed form
