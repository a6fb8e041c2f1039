"""The horseshoe's blocked τ update (:class:`sparsebayes.models.priors.horseshoe.BlockedTauHorseshoe`: τ drawn
with β integrated out, Johndrow, Orenstein & Bhattacharya 2020) and its pieces: the marginal
likelihood of the prior variances (:func:`sparsebayes.inference.engines.gibbs_beta.log_marginal`, both sides
of the shape switch and the Gram form) against scipy's multivariate normal density, the slice move
(:func:`sparsebayes.inference.engines.gibbs_augment.slice_step`) against known densities (KS), and in the
slow suite simulation-based calibration of the engine with it on both β draws, with a wrong
conditional (the Jacobian of ``τ = eᵘ`` dropped) that the check must reject."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from sparsebayes.inference.engines import gibbs_beta, hierarchy_gibbs

from sparsebayes.inference.posterior import sbc, sbc_pairs
from sparsebayes.inference.engines.gibbs_augment import slice_step
from sparsebayes.models import HorseshoePrior
from sparsebayes.models.priors.horseshoe import BlockedTauHorseshoe


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n, p", [(9, 4), (4, 9)])
def test_the_marginal_is_the_dense_gaussian_density_up_to_a_constant(n, p, weighted):
    """``log N(z; 0, σ²Ω⁻¹ + X diag(v) Xᵀ)`` by scipy at three ``v``: differences between them equal
    the module's, for the Rue form, the n × n form and the Gram form alike."""
    rng = np.random.default_rng(n * p + weighted)
    X, z = rng.normal(size=(n, p)), rng.normal(size=n)
    omega = rng.uniform(0.3, 3.0, n) if weighted else np.ones(n)
    s2 = 0.7
    vs = [rng.uniform(0.01, 3.0, p) for _ in range(3)]
    dense = [stats.multivariate_normal(np.zeros(n), s2 * np.diag(1 / omega) + X @ np.diag(v) @ X.T).logpdf(z) for v in vs]
    for method in ("rue", "bhattacharya"):
        ours = [float(gibbs_beta.log_marginal(jnp.asarray(X), jnp.asarray(z), None if not weighted else jnp.asarray(omega),
                                              jnp.asarray(v), s2, method)) for v in vs]
        np.testing.assert_allclose(np.diff(ours), np.diff(dense), rtol=1e-9, atol=1e-9)
    gram = [float(gibbs_beta.log_marginal_from_gram(X.T @ (omega[:, None] * X), X.T @ (omega * z), v, s2)) for v in vs]
    np.testing.assert_allclose(np.diff(gram), np.diff(dense), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name, log_density, dist", [
    ("normal", lambda x: -0.5 * ((x - 3.0) / 0.1) ** 2, stats.norm(3.0, 0.1)),  # far narrower than the width
    ("gamma", lambda x: jnp.where(x > 0, 1.5 * jnp.log(jnp.maximum(x, 1e-300)) - x / 20.0, -jnp.inf),
     stats.gamma(2.5, scale=20.0)),  # wider than the width, a boundary
])
def test_the_slice_move_leaves_its_density_invariant(name, log_density, dist):
    """4,000 chains started in the law, 3 slice moves each: their ends are that law (KS); for the
    narrow normal, chains started 30 sd off reach it in 40 moves."""
    starts = jnp.asarray(dist.rvs(size=4000, random_state=1))

    @jax.jit
    def moves(keys, x, count):
        def one(k, x0):
            return jax.lax.fori_loop(0, count, lambda i, x: slice_step(jax.random.fold_in(k, i), x, log_density), x0)
        return jax.vmap(one)(keys, x)

    ends = np.asarray(moves(jax.random.split(jax.random.PRNGKey(0), 4000), starts, 3))
    assert stats.kstest(ends, dist.cdf).pvalue > 1e-3
    assert np.mean(ends != np.asarray(starts)) > 0.99
    if name == "normal":  # 30 sd (3 widths) off: the stepping out and shrinkage bring it in
        far = np.asarray(moves(jax.random.split(jax.random.PRNGKey(1), 4000), jnp.full(4000, 6.0), 40))
        assert stats.kstest(far, dist.cdf).pvalue > 1e-3


def test_the_blocked_update_is_a_named_choice_and_keeps_the_old_sweep():
    """``with_tau_update``: "blocked" gives the blocked class, "makalic" the old one, τ fixed has nothing to update, anything else is a ValueError."""
    hs = HorseshoePrior(0.5, tau_prior=1.0)
    assert type(hs.with_tau_update("blocked")) is BlockedTauHorseshoe
    assert type(hs.with_tau_update("makalic")) is HorseshoePrior
    assert HorseshoePrior(0.5).with_tau_update("blocked") == HorseshoePrior(0.5)
    with pytest.raises(ValueError, match="τ update"):
        hs.with_tau_update("slice")
    X = np.random.default_rng(0).normal(size=(30, 4))
    y = X[:, 0] + np.random.default_rng(1).normal(size=30)
    kw = dict(num_warmup=20, num_samples=30, num_chains=2, progress_bar=False)
    a, _ = hierarchy_gibbs.run(X, y, hs, **kw)
    c, _ = hierarchy_gibbs.run(X, y, hs.with_tau_update("blocked"), **kw)
    assert np.all(np.isfinite(c.beta)) and np.all(c.aux["tau2"] > 0) and not np.array_equal(a.aux["tau2"], c.aux["tau2"])


class _NoJacobian(BlockedTauHorseshoe):
    """The control: the blocked τ move on ``log τ`` with the Jacobian ``+u`` of ``τ = eᵘ`` dropped (the
    target is then ``p(log τ)`` read as ``p(τ)``: a stable chain of the wrong law, τ pulled down)."""

    def gibbs_global_step(self, key, aux, log_marginal):
        s2 = self.tau_prior**2

        def log_density(u):
            return log_marginal(aux["lam2"] * jnp.exp(2.0 * u)) - jnp.log1p(jnp.exp(2.0 * u) / s2)

        return {**aux, "tau2": jnp.exp(2.0 * slice_step(key, 0.5 * jnp.log(aux["tau2"]), log_density))}


BLOCKED_SBC = dict(num_replications=200, num_draws=49, thin=10, max_thin=80, seed=0)


def _design(n, p, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X - X.mean(axis=0)


@pytest.mark.slow  # about 40-60 s each on one core
@pytest.mark.parametrize("n, p", [(8, 16), (16, 8)])
def test_the_blocked_tau_gibbs_is_calibrated_on_both_beta_draws(n, p):
    """The engine with the blocked τ (Bhattacharya's draw at p = 16 > n = 8, Rue's from the statistics
    at p = 8 < n = 16), τ ~ C⁺(0, 1), σ² ~ IG(3, 2): every β, σ² and τ passes (the simulator is the
    horseshoe's own NumPyro statement)."""
    prior = HorseshoePrior(0.5, tau_prior=1.0)
    res = sbc.run(sbc_pairs.hierarchy_simulator(prior, _design(n, p)),
                  sbc_pairs.hierarchy_gibbs_sampler(prior.with_tau_update("blocked")), **BLOCKED_SBC)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 20


@pytest.mark.slow
def test_the_calibration_check_rejects_the_blocked_update_without_its_jacobian():
    prior = HorseshoePrior(0.5, tau_prior=1.0)
    # no reruns at a larger thinning (the wrong chain mixes slowly, and its ranks fail at any thinning)
    res = sbc.run(sbc_pairs.hierarchy_simulator(prior, _design(8, 16)), sbc_pairs.hierarchy_gibbs_sampler(_NoJacobian(0.5, 1.0)),
                  **{**BLOCKED_SBC, "max_thin": BLOCKED_SBC["thin"]})
    assert "tau_global" in res.failed(), res.summary()
