"""Simulation-based calibration (:mod:`sparsebayes.inference.posterior.sbc`): the module itself on a conjugate
normal model whose exact posterior draws are known (an exact sampler passes, a too-narrow, too-wide
or autocorrelated one fails), its effective sample size against ArviZ's, its prior simulator
against scipy's Laplace; and, in the slow suite, SBC of every exact Gibbs sampler of the suite
(Park & Casella's Bayesian Lasso; the horseshoe Gibbs, τ fixed and estimated, on the Rue and the
Bhattacharya β draws) with a deliberately wrong τ conditional that the check must reject."""
import arviz as az
import numpy as np
import pytest
from scipy import signal, stats
from sparsebayes.inference.posterior import coverage, sbc, sbc_pairs
from sparsebayes.models import HorseshoePrior, LaplacePrior

N_OBS = 5  # observations of the conjugate model


def _normal_simulator(rng):
    """``θ ~ N(0, 1)``, ``y_i | θ ~ N(θ, 1)``, i = 1…5: the posterior is ``N(Σy/6, 1/6)``."""
    theta = rng.normal()
    return {"theta": theta}, theta + rng.normal(size=N_OBS)


def _normal_sampler(scale=1.0, phi=0.0):
    """Draws of ``N(Σy/6, scale²/6)``: exact at ``scale = 1``; with ``phi`` an AR(1) chain of that
    stationary law (started in it), autocorrelated as MCMC is."""
    def sample(y, num_samples, seed):
        rng = np.random.default_rng(seed)
        sd = scale / np.sqrt(N_OBS + 1.0)
        z = rng.normal(size=num_samples)
        if phi:
            z[1:] *= np.sqrt(1.0 - phi**2)
            z = signal.lfilter([1.0], [1.0, -phi], z)  # z_t = φ z_{t-1} + √(1-φ²) ε_t: N(0, 1) throughout
        return {"theta": y.sum() / (N_OBS + 1.0) + sd * z}
    return sample


def test_effective_sample_size_is_arviz_split_chain_ess():
    """Against ``az.ess(method="mean")`` one row at a time: AR(1) chains from anticorrelated to nearly
    stuck, odd and even lengths, a random walk, a constant row."""
    rng = np.random.default_rng(0)
    rows = [signal.lfilter([1.0], [1.0, -phi], rng.normal(size=n))
            for phi in (-0.6, 0.0, 0.5, 0.95, 0.999) for n in (8, 11, 51, 400, 999)]
    rows += [np.cumsum(rng.normal(size=300))]
    for row in rows:
        assert sbc.effective_sample_size(row) == pytest.approx(az.ess(row[None], method="mean"), rel=1e-10)
    block = rng.normal(size=(2, 3, 64))
    want = [[az.ess(r[None], method="mean") for r in rows_] for rows_ in block]
    np.testing.assert_allclose(sbc.effective_sample_size(block), want, rtol=1e-10)
    assert sbc.effective_sample_size(np.full(20, 3.0)) == 20.0
    with pytest.raises(ValueError, match="at least 8 draws"):
        sbc.effective_sample_size(np.arange(7.0))


def test_the_exact_conjugate_sampler_passes_and_wrong_widths_fail():
    """100 replications, one parameter: the exact posterior's ranks pass the χ² test; half the sd
    piles the truth into the outer bins (∪: P(Φ(2Z) < 0.1) = 0.26 each), twice the sd empties them
    (∩: 0.005 each), outside the 99 % band."""
    kw = dict(num_replications=100, num_draws=99, thin=2, seed=0)
    exact = sbc.run(_normal_simulator, _normal_sampler(), **kw)
    assert exact.failed() == [] and exact.pvalues[0] > 1e-3, exact.pvalues
    assert exact.ranks.shape == (100, 1) and exact.ranks.min() >= 0 and exact.ranks.max() <= 99
    assert exact.low_ess == 0 and np.all(exact.thin == 2)
    low, high = exact.band()
    assert (low, high) == (stats.binom.ppf(0.005, 100, 0.1), stats.binom.ppf(0.995, 100, 0.1))
    narrow = sbc.run(_normal_simulator, _normal_sampler(scale=0.5), **kw)
    assert narrow.failed() == ["theta"]
    assert narrow.counts()[0, 0] + narrow.counts()[0, -1] > 2 * high  # about a quarter of the truths in each
    wide = sbc.run(_normal_simulator, _normal_sampler(scale=2.0), **kw)
    assert wide.failed() == ["theta"]
    assert wide.counts()[0, 0] < low and wide.counts()[0, -1] < low


def test_autocorrelated_draws_are_thinned_to_the_effective_size_or_counted():
    """An AR(1) chain (φ = 0.99: about one effective draw in 99) of the exact posterior: without
    thinning it is counted as low-ESS in every replication and its ranks fail (∪: the draws sit
    together, the truth beside them); with thinning allowed it is rerun at a power of two near
    (1 + φ)/(1 − φ) ≈ 200 and passes."""
    kw = dict(num_replications=100, num_draws=99, thin=1, seed=1)
    stuck = sbc.run(_normal_simulator, _normal_sampler(phi=0.99), max_thin=1, **kw)
    assert stuck.low_ess == 100 and stuck.failed() == ["theta"]
    assert stuck.counts()[0, 0] + stuck.counts()[0, -1] > 2 * stuck.band()[1]
    thinned = sbc.run(_normal_simulator, _normal_sampler(phi=0.99), max_thin=512, **kw)
    assert thinned.failed() == [], thinned.pvalues
    assert set(thinned.thin) <= {128, 256, 512} and thinned.low_ess <= 10


def test_the_result_plots_and_checks_its_arguments():
    res = sbc.run(_normal_simulator, _normal_sampler(), num_replications=20, num_draws=19, thin=1, bins=5,
                  max_thin=1, seed=0)
    assert res.counts().sum() == 20 and res.counts().shape == (1, 5)
    for kind in ("hist", "ecdf"):
        fig = res.plot(kind)
        assert sum(ax.get_visible() for ax in fig.axes) == 1
    assert list(res.summary().index) == ["theta"]
    with pytest.raises(ValueError, match="kind must be"):
        res.plot("bars")
    with pytest.raises(ValueError, match="must divide"):
        sbc.run(_normal_simulator, _normal_sampler(), num_draws=99, bins=7)
    with pytest.raises(ValueError, match="not in the simulator's truth"):
        sbc.run(_normal_simulator, _normal_sampler(), parameters=["mu"])
    with pytest.raises(ValueError, match="returned no draws"):
        sbc.run(_normal_simulator, lambda y, m, s: {"mu": np.zeros(m)})
    with pytest.raises(ValueError, match="proper inverse gamma"):
        sbc_pairs.hierarchy_simulator(HorseshoePrior(), np.eye(3), noise_prior=(0.0, 0.0))


def test_interval_coverage_is_nominal_for_the_exact_posterior_and_low_for_a_narrow_one():
    """The exact posterior's 50 % and 90 % central intervals cover the truth at their level (within
    3 binomial SE over 400 replications); half the sd covers less: 2Φ(½z) − 1, 0.26 and 0.59; a point
    mass at 0 (a pruned weight) covers nothing and is counted as one."""
    def approx(scale):
        return lambda y, seed: _normal_sampler(scale)(y, 2000, seed)
    exact = coverage.interval_coverage(_normal_simulator, approx(1.0), num_replications=400, seed=0)
    assert np.all(np.abs(exact.coverage - [0.5, 0.9]) < 3 * exact.standard_error()), exact.coverage
    narrow = coverage.interval_coverage(_normal_simulator, approx(0.5), num_replications=400, seed=0)
    want = 2 * stats.norm.cdf(0.5 * stats.norm.ppf([0.75, 0.95])) - 1
    assert np.all(np.abs(narrow.coverage - want) < 3 * narrow.standard_error()), (narrow.coverage, want)
    assert exact.point_mass == 0.0
    pruned = coverage.interval_coverage(_normal_simulator, lambda y, seed: {"theta": np.zeros(50)}, num_replications=20)
    assert pruned.point_mass == 1.0 and np.all(pruned.coverage == 0.0)


def test_the_simulator_draws_the_hierarchy_prior_and_proper_noise():
    """The Laplace hierarchy's draws of β are Laplace(0, 1/√γ) (KS against scipy), scaled ones
    σ times that; σ² is IG(3, 2) (KS); the estimated hyperparameter is named as the twin names it."""
    X = np.random.default_rng(0).normal(size=(6, 4))
    rng = np.random.default_rng(1)
    draws = [sbc_pairs.hierarchy_simulator(LaplacePrior(2.0), X)(rng)[0] for _ in range(250)]
    beta = np.concatenate([d["beta"] for d in draws])
    assert stats.kstest(beta, stats.laplace(scale=1 / np.sqrt(2.0)).cdf).pvalue > 1e-3
    assert stats.kstest([d["noise_var"] for d in draws], stats.invgamma(3.0, scale=2.0).cdf).pvalue > 1e-3
    scaled = [sbc_pairs.hierarchy_simulator(LaplacePrior(2.0), X, scaled=True)(rng)[0] for _ in range(250)]
    ratio = np.concatenate([d["beta"] / np.sqrt(d["noise_var"]) for d in scaled])
    assert stats.kstest(ratio, stats.laplace(scale=1 / np.sqrt(2.0)).cdf).pvalue > 1e-3
    truth, (Xd, y) = sbc_pairs.hierarchy_simulator(HorseshoePrior(0.5, tau_prior=1.0), X)(rng)
    assert set(truth) == {"beta", "noise_var", "tau_global"} and Xd.shape == (6, 4) and y.shape == (6,)


# --- the suite's exact samplers (slow) -----------------------------------------------------------
def _design(n, p, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X - X.mean(axis=0)


@pytest.mark.slow  # about 20 s each
@pytest.mark.parametrize("n, p", [(10, 5), (6, 10)])
def test_the_bayesian_lasso_gibbs_is_calibrated(n, p):
    """Park & Casella's Gibbs (Cholesky draw at p ≤ n, Bhattacharya's at p > n), λ² ~ Gamma(2, 2),
    σ² ~ IG(3, 2): no rank histogram of β, σ², λ² fails its χ² test (Bonferroni at 10⁻³)."""
    simulate = sbc_pairs.hierarchy_simulator(LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), _design(n, p), scaled=True)
    sample = sbc_pairs.bayesian_lasso_sampler(lam2_shape=2.0, lam2_rate=2.0)
    res = sbc.run(simulate, sample, num_replications=200, num_draws=99, thin=10, seed=0)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 10


class _WrongTauConditional(HorseshoePrior):
    """The horseshoe with a broken Gibbs conditional (the control): the τ block's auxiliary
    ``ξ | τ² ~ IG(1, 1/s² + 1/τ²)`` (Makalic & Schmidt 2016) takes the half-Cauchy scale ``s`` ten
    times the hierarchy's, the conditional of another (proper) model: the chain is stable and wrong."""

    def gibbs_update(self, key, beta, aux):
        return HorseshoePrior.gibbs_update(self._replace(tau_prior=10.0 * self.tau_prior), key, beta, aux)


HORSESHOE_SBC = dict(num_replications=200, num_draws=49, thin=10, max_thin=80, seed=0)


@pytest.mark.slow  # about 30-60 s each
@pytest.mark.parametrize("n, p", [(8, 16), (16, 8)])
@pytest.mark.parametrize("tau_prior", [None, 1.0])
def test_the_horseshoe_gibbs_is_calibrated_on_both_beta_draws(tau_prior, n, p):
    """The hierarchy Gibbs engine at p = 16 > n = 8 (Bhattacharya's draw) and p = 8 < n = 16 (Rue's
    from the statistics), τ fixed at 0.5 and τ ~ C⁺(0, 1), σ² ~ IG(3, 2): every β, σ² and τ passes."""
    prior = HorseshoePrior(0.5, tau_prior=tau_prior)
    res = sbc.run(sbc_pairs.hierarchy_simulator(prior, _design(n, p)), sbc_pairs.hierarchy_gibbs_sampler(prior), **HORSESHOE_SBC)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 20


@pytest.mark.slow
def test_the_calibration_check_rejects_a_wrong_tau_conditional():
    """The check has teeth: the same run with the τ block's conditional for a ten times wider
    half-Cauchy fails on τ."""
    prior = HorseshoePrior(0.5, tau_prior=1.0)
    broken = _WrongTauConditional(0.5, tau_prior=1.0)
    res = sbc.run(sbc_pairs.hierarchy_simulator(prior, _design(8, 16)), sbc_pairs.hierarchy_gibbs_sampler(broken), **HORSESHOE_SBC)
    assert "tau_global" in res.failed(), res.summary()


@pytest.mark.slow  # about 30 s: run_nuts compiles on each call
def test_the_nuts_and_gibbs_adapters_sample_the_same_bayesian_lasso_posterior():
    """The NUTS adapter (the Bayesian Lasso's Laplace marginal, data centred, ``lam2`` renamed
    ``gamma``) and Park & Casella's Gibbs adapter on one simulated data set: the same names, and
    posterior means within 4 Monte Carlo SE (each SE from its chain's effective sample size)."""
    from sparsebayes.models.bayesian_lasso import bayesian_lasso

    simulate = sbc_pairs.hierarchy_simulator(LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), _design(10, 5), scaled=True)
    _, data = simulate(np.random.default_rng(3))
    nuts = sbc_pairs.nuts_sampler(bayesian_lasso, num_warmup=500, rename={"lam2": "gamma"}, centre=True, lam2_shape=2.0,
                            lam2_rate=2.0, c=3.0, d=2.0, marginal=True)(data, 2000, 0)
    gibbs = sbc_pairs.bayesian_lasso_sampler(lam2_shape=2.0, lam2_rate=2.0)(data, 4000, 0)
    assert set(nuts) == set(gibbs) == {"beta", "noise_var", "gamma"}
    for name in gibbs:
        a, b = (np.asarray(d[name]).reshape(len(d[name]), -1).T for d in (nuts, gibbs))
        se = np.hypot(*(x.std(axis=1) / np.sqrt(sbc.effective_sample_size(x)) for x in (a, b)))
        z = np.abs(a.mean(axis=1) - b.mean(axis=1)) / se
        assert np.all(z < 4), (name, np.round(z, 2))
