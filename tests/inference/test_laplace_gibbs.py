"""The Laplace hierarchy's own Gibbs conditionals (:class:`~sparsebayes.models.priors.LaplacePrior`,
Park & Casella 2008, Sec. 2): each conditional against SciPy's distribution (KS), and, in the slow
suite, simulation-based calibration of the hierarchy Gibbs engine running it: the Bayesian Lasso
(``scaled``, γ = λ² under a Gamma prior) and EM's hierarchy (unscaled), γ fixed and estimated, on
Rue's and Bhattacharya's β draws, with a deliberately wrong γ conditional that the check rejects."""
import jax
import numpy as np
import pytest
from scipy import stats
from sparsebayes.inference.engines import hierarchy_gibbs
from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture
from sparsebayes.models.priors import LaplacePrior, supports

BETA = np.array([0.0, 1e-3, 0.4, -1.5, 6.0])


def _updates(prior, aux, n=20000, seed=0):
    """``n`` independent draws of ``prior.gibbs_update`` at ``BETA`` and ``aux``: a dict of (n, …) arrays."""
    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    return jax.vmap(lambda k: prior.gibbs_update(k, BETA, aux))(keys)


def test_the_laplace_prior_has_the_gibbs_capability_and_its_auxiliary_state():
    assert supports(LaplacePrior(2.0), "gibbs") and supports(LaplacePrior(2.0, gamma_prior=(1.0, 1.0)), "gibbs")
    assert set(LaplacePrior(2.0).gibbs_init(3)) == {"tau"}
    aux = LaplacePrior(2.0, gamma_prior=(1.0, 1.0)).gibbs_init(3)
    assert set(aux) == {"tau", "gamma"} and float(aux["gamma"]) == 2.0
    np.testing.assert_array_equal(LaplacePrior(2.0).gibbs_prior_variance({"tau": np.arange(3.0)}), np.arange(3.0))


@pytest.mark.parametrize("gamma", [0.3, 4.0])
def test_the_inverse_local_variance_is_inverse_gaussian(gamma):
    """``1/τ_i | β_i, γ ~ IG(√(γ/β_i²), γ)``: KS against ``scipy.stats.invgauss(μ/λ, scale=λ)`` per weight
    (β_i = 0 excluded: its conditional is τ_i ~ Gamma(½, γ/2), checked next)."""
    prior = LaplacePrior(gamma)
    tau = np.asarray(_updates(prior, prior.gibbs_init(BETA.size))["tau"])
    for j, b in enumerate(BETA[1:], start=1):
        mu = np.sqrt(gamma) / abs(b)
        assert stats.kstest(1.0 / tau[:, j], stats.invgauss(mu / gamma, scale=gamma).cdf).pvalue > 1e-3, (gamma, b)
    # β_i = 0: the GIG(½, γ, 0) posterior of τ_i is Gamma(½, rate γ/2)
    assert stats.kstest(tau[:, 0], stats.gamma(0.5, scale=2.0 / gamma).cdf).pvalue > 1e-3


def test_the_rate_given_the_local_variances_is_gamma():
    """``γ | τ ~ Gamma(a + p, b + Σ τ_i/2)`` at the τ drawn in the same update: KS of the standardized draws
    ``γ (b + Σ τ_i/2)`` against ``Gamma(a + p, 1)``, and the τ of the update drawn at the old γ."""
    a, b = 2.0, 0.7
    prior = LaplacePrior(1.0, gamma_prior=(a, b))
    aux = {"tau": np.ones(BETA.size), "gamma": np.float64(3.0)}
    new = _updates(prior, aux)
    gamma, tau = np.asarray(new["gamma"]), np.asarray(new["tau"])
    scaled = gamma * (b + 0.5 * tau.sum(axis=1))
    assert stats.kstest(scaled, stats.gamma(a + BETA.size).cdf).pvalue > 1e-3
    mu = np.sqrt(3.0) / abs(BETA[3])
    assert stats.kstest(1.0 / tau[:, 3], stats.invgauss(mu / 3.0, scale=3.0).cdf).pvalue > 1e-3


def test_the_fixed_rate_mixture_is_the_laplace_prior():
    """The twins' fixed-rate mixture is the Laplace prior itself: the same draws at a key."""
    key = jax.random.PRNGKey(3)
    a = LaplaceMixture(2.0).gibbs_update(key, BETA, {"tau": np.ones(BETA.size)})["tau"]
    b = LaplacePrior(2.0).gibbs_update(key, BETA, {"tau": np.ones(BETA.size)})["tau"]
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_engine_runs_the_bayesian_lasso_from_the_prior():
    """The hierarchy engine takes the prior as it is: ``scaled``, γ estimated, draws of the auxiliary
    ``tau`` and ``gamma`` with the chain's shapes, all finite and positive."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = X @ np.array([2.0, 0.0, -1.0, 0.0]) + rng.standard_normal(30)
    states, _ = hierarchy_gibbs.run(X, y, LaplacePrior(1.0, gamma_prior=(1.0, 1.78)), num_warmup=50,
                                    num_samples=60, num_chains=2, scaled=True, progress_bar=False)
    assert states.aux["tau"].shape == (2, 60, 4) and states.aux["gamma"].shape == (2, 60)
    assert np.all(np.asarray(states.aux["gamma"]) > 0) and np.all(np.asarray(states.aux["tau"]) > 0)


# --- simulation-based calibration (slow) ------------------------------------------------------------
class _WrongRate(LaplacePrior):
    """The control: γ's conditional with ``Σ τ_i`` for ``Σ τ_i/2`` (the rate of another model), stable and wrong."""

    def gibbs_update(self, key, beta, aux):
        new = LaplacePrior.gibbs_update(self, key, beta, aux)
        return {**new, "gamma": new["gamma"] * (self.gamma_prior[1] + 0.5 * new["tau"].sum())
                / (self.gamma_prior[1] + new["tau"].sum())}


def _design(n, p, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X - X.mean(axis=0)


LAPLACE_SBC = dict(num_replications=200, num_draws=99, thin=10, seed=0)


@pytest.mark.slow  # about 20-40 s each
@pytest.mark.parametrize("n, p", [(10, 5), (6, 10)])
@pytest.mark.parametrize("scaled, gamma_prior", [(True, (2.0, 2.0)), (False, (2.0, 2.0)), (False, None)],
                         ids=["bayesian-lasso", "gamma-estimated", "gamma-fixed"])
def test_the_laplace_hierarchy_gibbs_is_calibrated(scaled, gamma_prior, n, p):
    """The hierarchy engine on the Laplace prior's own conditionals, σ² ~ IG(3, 2), Rue's draw at p ≤ n and
    Bhattacharya's at p > n: no rank histogram of β, σ² (and γ) fails its χ² test (Bonferroni at 10⁻³)."""
    prior = LaplacePrior(1.0, gamma_prior=gamma_prior)
    simulate = sbc_pairs.hierarchy_simulator(prior, _design(n, p), scaled=scaled)
    res = sbc.run(simulate, sbc_pairs.hierarchy_gibbs_sampler(prior, scaled=scaled), **LAPLACE_SBC)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 10


@pytest.mark.slow
def test_the_calibration_check_rejects_a_wrong_rate_conditional():
    prior = LaplacePrior(1.0, gamma_prior=(2.0, 2.0))
    simulate = sbc_pairs.hierarchy_simulator(prior, _design(10, 5), scaled=True)
    res = sbc.run(simulate, sbc_pairs.hierarchy_gibbs_sampler(_WrongRate(1.0, gamma_prior=(2.0, 2.0)), scaled=True),
                  **LAPLACE_SBC)
    assert "gamma" in res.failed(), res.summary()
