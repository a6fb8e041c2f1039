"""E-step closed forms against independent computations (numerical integration, scipy)."""
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

from sparsebayes.models.likelihoods import GaussianLikelihood, ProbitLikelihood, probit_mills_ratio, scaled_erfc
from sparsebayes.models.priors import JeffreysPrior, LaplacePrior, make_prior


def _posterior_mean_inverse_tau(beta, log_hyper):
    """E[1/τ | β] ∝ ∫ τ⁻¹ N(β | 0, τ) p(τ) dτ / ∫ N(β | 0, τ) p(τ) dτ, by quadrature over log τ."""

    def weight(s, power):
        tau = np.exp(s)
        return tau * tau**power * np.exp(stats.norm.logpdf(beta, 0, np.sqrt(tau)) + log_hyper(tau))

    num = integrate.quad(weight, -40, 40, args=(-1,), limit=400)[0]
    den = integrate.quad(weight, -40, 40, args=(0,), limit=400)[0]
    return num / den


@pytest.mark.parametrize("beta", [0.05, 0.7, 3.0])
@pytest.mark.parametrize("gamma", [0.5, 4.0])
def test_laplace_estep_matches_numerical_integration(beta, gamma):
    numeric = _posterior_mean_inverse_tau(beta, lambda t: np.log(gamma / 2) - gamma * t / 2)
    closed = float(LaplacePrior(gamma).expected_inverse_variance(beta))
    assert closed == pytest.approx(numeric, rel=1e-6)
    u = float(LaplacePrior(gamma).em_scale(beta))
    assert 1.0 / u**2 == pytest.approx(closed, rel=1e-12)


@pytest.mark.parametrize("beta", [0.05, 0.7, 3.0])
def test_jeffreys_estep_matches_numerical_integration(beta):
    numeric = _posterior_mean_inverse_tau(beta, lambda t: -np.log(t))
    assert float(JeffreysPrior().expected_inverse_variance(beta)) == pytest.approx(numeric, rel=1e-6)
    assert float(JeffreysPrior().em_scale(beta)) == pytest.approx(beta)


def test_em_scales_vanish_with_beta():
    for prior in (LaplacePrior(2.0), JeffreysPrior()):
        assert float(prior.em_scale(jnp.array(0.0))) == 0.0


def test_laplace_marginal_penalty_is_minus_log_laplace_density():
    gamma = 3.0
    b = np.array([-1.2, 0.0, 0.4])
    ref = -stats.laplace.logpdf(b, scale=1 / np.sqrt(gamma)).sum() + b.size * np.log(np.sqrt(gamma) / 2)
    assert float(LaplacePrior(gamma).neg_log_prior(jnp.asarray(b))) == pytest.approx(ref, rel=1e-12)


def test_jeffreys_penalty_skips_pruned_weights():
    b = jnp.array([0.0, 2.0, -0.5])
    assert float(JeffreysPrior().neg_log_prior(b)) == pytest.approx(np.log(2.0) + np.log(0.5))


@pytest.mark.parametrize("eta", [-3.0, -0.4, 0.0, 1.1, 5.0])
@pytest.mark.parametrize("label", [0.0, 1.0])
def test_probit_expected_latent_matches_truncnorm(eta, label):
    # z ~ N(eta, 1) truncated to z >= 0 (y = 1) or z < 0 (y = 0): 002 eq. 6
    a, b = ((-eta, np.inf) if label == 1 else (-np.inf, -eta))
    ref = stats.truncnorm.mean(a, b, loc=eta, scale=1.0)
    v = float(ProbitLikelihood().expected_targets(jnp.array([label]), jnp.array([eta]))[0])
    assert v == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_probit_estep_is_finite_and_correct_at_40():
    lik = ProbitLikelihood()
    y = jnp.array([1.0, 0.0, 1.0, 0.0])
    eta = jnp.array([-40.0, 40.0, 40.0, -40.0])
    v = np.asarray(lik.expected_targets(y, eta))
    assert np.all(np.isfinite(v))
    # far in the wrong tail the truncated mean sits just inside the boundary: |v| ≈ 1/40; exactly
    # v = η + φ(η)/Φ(η) (y = 1) with φ(x)/Φ(−x) = √(2/π)/erfcx(x/√2) from SciPy (the sum cancels
    # three digits of 40, so 1e-9 relative is what float64 leaves)
    tail = -40.0 + np.sqrt(2 / np.pi) / special.erfcx(40.0 / np.sqrt(2))
    np.testing.assert_allclose(v[:2], [tail, -tail], rtol=1e-9)
    assert 1 / 40 * (1 - 2e-3) < tail < 1 / 40
    # on the right side the truncation is irrelevant
    np.testing.assert_allclose(v[2:], [40.0, -40.0], rtol=1e-12)
    assert np.isfinite(float(lik.neg_log_lik(y, eta, 1.0)))


def test_mills_ratio_matches_scipy_over_the_whole_range():
    # dense over ±80, and densest where erfc underflows before exp(z²) overflows (x ≈ −37.6,
    # z = −x/√2 ≈ 26.6: the gap where JAX 0.10's own erfcx returns 0)
    x = np.concatenate([np.linspace(-80, 80, 160_001), np.linspace(-37.8, -37.4, 4_001)])
    ours = np.asarray(probit_mills_ratio(jnp.ones_like(x), jnp.asarray(x)))
    ref = np.sqrt(2 / np.pi) / special.erfcx(-x / np.sqrt(2))
    assert np.all(np.isfinite(ours))
    normal = ref > 1e-300  # beyond, the ratio is subnormal or 0 in float64
    np.testing.assert_allclose(ours[normal], ref[normal], rtol=1e-12)
    assert np.all(np.abs(ours[~normal]) <= 1e-300)
    z = np.linspace(-26.5, 60, 20_001)
    np.testing.assert_allclose(np.asarray(scaled_erfc(jnp.asarray(z))), special.erfcx(z), rtol=1e-14)


def test_probit_curvature_is_one_minus_the_truncated_latent_variance():
    """``w = −∂²/∂η² log Φ(sη)`` equals ``1 − Var(z | y)`` for the truncated latent of 002 eq. 6
    (SciPy's ``truncnorm``), on both labels; it stays in [0, 1] far in the tails."""
    eta = np.linspace(-6, 3, 91)
    lik = ProbitLikelihood()
    for label, (a, b) in ((1.0, (-eta, np.inf)), (0.0, (-np.inf, -eta))):
        w = np.asarray(lik.curvature(np.full(eta.size, label), jnp.asarray(eta)))
        ref = 1.0 - stats.truncnorm(a, b, loc=eta).var()  # 1 − var carries ~1e-16 absolute rounding
        np.testing.assert_allclose(w, ref, rtol=1e-9, atol=1e-15)
    far = np.asarray(lik.curvature(jnp.ones(4), jnp.array([-1e3, -40.0, 40.0, 1e3])))
    assert np.all((far >= 0) & (far <= 1)) and far[0] > 0.99 and far[-1] == 0.0


def test_gaussian_noise_update_is_mean_squared_residual():
    y, eta = jnp.array([1.0, 2.0, 3.0]), jnp.array([1.5, 2.0, 2.0])
    assert float(GaussianLikelihood().noise_update(y, eta)) == pytest.approx((0.25 + 0 + 1) / 3)


def test_make_prior_rejects_unknown_and_bad_gamma():
    with pytest.raises(ValueError, match="prior must be one of"):
        make_prior("horse-shoe")
    with pytest.raises(ValueError, match="gamma"):
        make_prior("laplace", -1.0)
