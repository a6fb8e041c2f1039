"""NUTS with the weights integrated out (:mod:`sparsebayes.inference.engines.collapsed_nuts`): the marginal
likelihood against scipy's multivariate normal on ``σ² I + H diag(v) Hᵀ``, the weights' conditional
against the dense Gaussian posterior (explicit covariance), and the sampled posterior against the
Gibbs sampler of the same horseshoe model (slow)."""
import numpy as np
import pytest
import scipy.stats

from sparsebayes.inference.engines import collapsed_nuts as C


def _problem(seed=0, n=40, p=5):
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, p))
    y = H @ np.array([2.0, 0.0, -1.0, 0.0, 0.5])[:p] + rng.normal(size=n)
    v = np.exp(rng.normal(size=p) * 2.0)  # variances over four orders of magnitude
    v[1] = 1e-12  # one weight shrunk to nothing: M stays well conditioned
    return H, y, v


@pytest.mark.parametrize("noise_var", [0.3, 2.0])
def test_log_marginal_likelihood_is_the_gaussian_marginal(noise_var):
    H, y, v = _problem()
    got = float(C.log_marginal_likelihood(H.T @ H, H.T @ y, float(y @ y), H.shape[0], v, noise_var))
    cov = noise_var * np.eye(len(y)) + H @ np.diag(v) @ H.T
    assert got == pytest.approx(scipy.stats.multivariate_normal(np.zeros(len(y)), cov).logpdf(y), rel=1e-10)


def test_conditional_draws_have_the_dense_posterior_mean_and_covariance():
    """``β | v, σ², y`` with ``V = (HᵀH/σ² + diag(v)⁻¹)⁻¹`` written densely (here v > 0 everywhere):
    the draws' map from ``z`` is affine, so its offset is μ and its linear part's square is V."""
    H, y, v = _problem(1)
    v[1] = 0.05
    s2 = 0.7
    V = np.linalg.inv(H.T @ H / s2 + np.diag(1.0 / v))
    mu = V @ H.T @ y / s2
    G, b, p = H.T @ H, H.T @ y, H.shape[1]
    at = lambda z: C.conditional_beta(G, b, v, np.asarray(s2), z)  # noqa: E731
    np.testing.assert_allclose(at(np.zeros(p)), mu, rtol=1e-10, atol=1e-12)
    A = np.stack([at(e) - at(np.zeros(p)) for e in np.eye(p)], axis=1)  # β = μ + A z
    np.testing.assert_allclose(A @ A.T, V, rtol=1e-9, atol=1e-12)
    # batched over leading axes as the NUTS draws are (chain, draw, p)
    z = np.random.default_rng(2).normal(size=(2, 3, p))
    batch = C.conditional_beta(G, b, np.broadcast_to(v, (2, 3, p)), np.full((2, 3), s2), z)
    np.testing.assert_allclose(batch[1, 2], at(z[1, 2]), rtol=1e-12)


@pytest.mark.slow
def test_collapsed_nuts_agrees_with_gibbs_on_the_horseshoe():
    """The same horseshoe posterior by collapsed NUTS and by Makalic & Schmidt's Gibbs: posterior
    means of β and σ² within 4 MCSE, both passing the health gate, no divergence."""
    import sparsebayes
    from sparsebayes.comparisons.sampler_health import gated_variables, health
    from sparsebayes.inference import AdaptiveSparseRegressor
    from sparsebayes.inference.posterior import arviz_compat as compat
    from sparsebayes.models import HorseshoePrior
    H, y, _ = _problem(3, n=80, p=5)
    for prior in (HorseshoePrior(tau=0.5), HorseshoePrior(tau=0.5, tau_prior=1.0)):
        est = AdaptiveSparseRegressor(prior=prior, features="linear").fit(H, y)
        cmp = sparsebayes.compare(est, H, y, num_warmup=1000, num_samples=2000, progress_bar=False)
        assert list(cmp.samples) == ["nuts", "gibbs"]
        assert cmp.samples["nuts"].posterior.attrs["inference"] == "nuts-collapsed"
        for s, idata in cmp.samples.items():
            stats = health(idata, gated_variables(idata.posterior))
            assert stats["divergences"] == 0 and stats["r_hat_max"] < 1.01, (prior, s, stats)
        names = ["beta", "noise_var"] + (["tau_global"] if prior.tau_prior else [])
        a, b = (compat.summary(cmp.samples[s], var_names=names) for s in ("nuts", "gibbs"))
        mcse = np.sqrt(a["mcse_mean"].to_numpy() ** 2 + b["mcse_mean"].to_numpy() ** 2)
        assert np.all(np.abs(a["mean"].to_numpy() - b["mean"].to_numpy()) < 4 * mcse + 1e-4), (prior, a, b)
