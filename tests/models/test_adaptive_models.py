"""The NumPyro hierarchies: log densities as the papers write them."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer import Predictive
from numpyro.infer.util import log_density
from scipy import stats

from sparsebayes.models.adaptive import sparse_probit_model, sparse_regression_model


def test_jeffreys_log_density_is_normal_times_one_over_tau():
    rng = np.random.default_rng(0)
    H = rng.standard_normal((10, 3))
    y = rng.standard_normal(10)
    beta, tau, s2 = np.array([0.5, -1.0, 0.1]), np.array([0.3, 2.0, 0.05]), 0.7
    ld, _ = log_density(sparse_regression_model, (jnp.asarray(H), jnp.asarray(y)), dict(prior="jeffreys"),
                        {"beta": jnp.asarray(beta), "tau": jnp.asarray(tau), "noise_var": jnp.asarray(s2)})
    ref = (stats.norm.logpdf(y, H @ beta, np.sqrt(s2)).sum() + stats.norm.logpdf(beta, 0, np.sqrt(tau)).sum()
           - np.log(tau).sum())
    assert float(ld) == pytest.approx(ref, rel=1e-10)


def test_laplace_hierarchy_log_density():
    beta, tau, gamma = np.array([0.5, -1.0]), np.array([0.3, 2.0]), 3.0
    H = np.eye(2)
    y = np.array([0.1, 0.2])
    ld, _ = log_density(sparse_regression_model, (jnp.asarray(H), jnp.asarray(y)),
                        dict(prior="laplace", gamma=gamma, noise_var=1.0),
                        {"beta": jnp.asarray(beta), "tau": jnp.asarray(tau)})
    ref = (stats.norm.logpdf(y, beta, 1.0).sum() + stats.norm.logpdf(beta, 0, np.sqrt(tau)).sum()
           + stats.expon.logpdf(tau, scale=2 / gamma).sum())
    assert float(ld) == pytest.approx(ref, rel=1e-10)


def test_jeffreys_surrogate_is_proper_and_samples():
    H = jnp.asarray(np.random.default_rng(1).standard_normal((20, 2)))
    draws = Predictive(sparse_probit_model, num_samples=50)(jax.random.PRNGKey(0), H, prior="jeffreys",
                                                            surrogate_eps=0.1)
    assert draws["y"].shape == (50, 20) and set(np.unique(draws["y"])) <= {0, 1}
    assert np.all(draws["tau"] > 0)


def test_probit_likelihood_is_log_phi():
    H = np.array([[1.0, 0.5], [1.0, -2.0], [1.0, 40.0]])
    y = np.array([1.0, 0.0, 0.0])
    beta = np.array([0.2, 1.0])
    ld, _ = log_density(sparse_probit_model, (jnp.asarray(H), jnp.asarray(y)),
                        dict(prior="laplace", gamma=1.0, marginal=True), {"beta": jnp.asarray(beta)})
    eta = H @ beta
    ref = stats.norm.logcdf(np.where(y == 1, eta, -eta)).sum() + stats.laplace.logpdf(beta).sum()
    assert float(ld) == pytest.approx(ref, rel=1e-10)
    assert np.isfinite(float(ld))


def test_observations_are_pointwise_and_probit_draws_follow_phi():
    """One ``y`` site with a term per observation (what ``az.loo`` needs), in log space for probit."""
    from numpyro.infer.util import log_likelihood

    from sparsebayes.models.adaptive import ProbitBernoulli

    H = jnp.asarray(np.array([[1.0, 0.5], [1.0, -2.0], [1.0, 40.0]]))
    beta = jnp.asarray([[0.2, 1.0]])
    probit = log_likelihood(sparse_probit_model, {"beta": beta}, H, jnp.asarray([1.0, 0.0, 0.0]),
                            prior="laplace", marginal=True)["y"]
    np.testing.assert_allclose(probit[0], stats.norm.logcdf([0.7, 1.8, -40.2]), rtol=1e-12)
    gauss = log_likelihood(sparse_regression_model, {"beta": beta}, H, jnp.asarray([1.0, 0.0, 2.0]),
                           prior="laplace", marginal=True, noise_var=0.5)["y"]
    np.testing.assert_allclose(gauss[0], stats.norm.logpdf([1.0, 0.0, 2.0], np.asarray(H @ beta[0]), np.sqrt(0.5)),
                               rtol=1e-12)
    eta = jnp.asarray([-1.0, 0.0, 0.5, 2.0])
    draws = ProbitBernoulli(eta).sample(jax.random.PRNGKey(0), (40000,))
    p = stats.norm.cdf(np.asarray(eta))
    assert np.all(np.abs(draws.mean(0) - p) < 4 * np.sqrt(p * (1 - p) / 40000))


def test_latent_z_probit_joint_is_gaussian_on_the_labelled_side_and_its_mean_is_the_e_step():
    """002 Sec. 2: p(z, y | β) = N(z; Hβ, 1) 1[(2y − 1) z > 0]; E[z | y, β] is the EM's E-step (002 eq. 6)."""
    from sparsebayes.models.likelihoods import ProbitLikelihood

    rng = np.random.default_rng(1)
    H = rng.standard_normal((6, 2))
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    beta = np.array([0.7, -1.2])
    sign = 2 * y - 1
    z = sign * rng.uniform(0.1, 2.0, 6)
    args, kw = (jnp.asarray(H), jnp.asarray(y)), dict(prior="laplace", gamma=2.0, marginal=True, latent=True)
    ld, _ = log_density(sparse_probit_model, args, kw, {"beta": jnp.asarray(beta), "u": jnp.asarray(sign * z)})
    ref = stats.norm.logpdf(z, H @ beta, 1.0).sum() + stats.laplace.logpdf(beta, scale=1 / np.sqrt(2.0)).sum()
    assert float(ld) == pytest.approx(ref, rel=1e-10)
    predictive = Predictive(sparse_probit_model, num_samples=4000, params={"beta": jnp.asarray(beta)})
    z_draws = np.asarray(predictive(jax.random.PRNGKey(0), *args, **kw)["z"])
    assert np.all(np.sign(z_draws) == sign)
    e_step = np.asarray(ProbitLikelihood().expected_targets(jnp.asarray(y), jnp.asarray(H @ beta)))
    np.testing.assert_allclose(z_draws.mean(0), e_step, atol=4 * z_draws.std(0).max() / np.sqrt(4000))
