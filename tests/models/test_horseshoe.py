"""The horseshoe hierarchy's closed forms against quadrature over the local scale λ ~ C⁺(0, 1)."""
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

from sparsebayes.models.horseshoe import HorseshoePrior, make_horseshoe, one_minus_q, scaled_exp1


def _mixture_integrals(beta, tau):
    """``(p(β), E[1/v | β])`` by quadrature over λ, with ``v = λ²τ²``, ``λ ~ C⁺(0, 1)``."""
    def integrand(lam, power):
        v = (lam * tau) ** 2
        return v**-power * stats.norm.pdf(beta, scale=np.sqrt(v)) * 2.0 / (np.pi * (1.0 + lam**2))

    kw = dict(limit=400, epsabs=0.0, epsrel=1e-11)
    # split at the scale where the Gaussian factor turns on, so quad sees the peak
    edges = [0.0, abs(beta) / tau / 10, abs(beta) / tau, 10 * abs(beta) / tau + 10, np.inf]
    dens = sum(integrate.quad(integrand, a, b, args=(0,), **kw)[0] for a, b in zip(edges[:-1], edges[1:]))
    mom = sum(integrate.quad(integrand, a, b, args=(1,), **kw)[0] for a, b in zip(edges[:-1], edges[1:]))
    return dens, mom / dens


@pytest.mark.parametrize("tau", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("beta", [1e-3, 0.05, 0.7, 2.0, 9.0])
def test_marginal_and_e_step_match_quadrature(beta, tau):
    prior = HorseshoePrior(tau)
    dens, weight = _mixture_integrals(beta, tau)
    b = jnp.array([beta])
    np.testing.assert_allclose(float(jnp.exp(prior.log_marginal(b))[0]), dens, rtol=1e-8)
    np.testing.assert_allclose(float(prior.expected_inverse_variance(b)[0]), weight, rtol=1e-8)
    np.testing.assert_allclose(float(prior.em_scale(b)[0]) ** -2, weight, rtol=1e-8)


def test_series_and_direct_forms_agree_at_the_switch_and_tend_to_two_over_beta_squared():
    u = np.array([1e-9, 0.5, 1.0, 1.0000001, 2.0, 5.0, 39.9, 40.0, 40.1, 60.0, 300.0])
    _, t = one_minus_q(jnp.asarray(u))
    np.testing.assert_allclose(np.asarray(t), 1.0 - u * special.exp1(u) * np.exp(u), rtol=1e-11)
    np.testing.assert_allclose(np.asarray(scaled_exp1(jnp.asarray(u))), special.exp1(u) * np.exp(u), rtol=1e-13)
    prior = HorseshoePrior(1.0)
    big = jnp.array([30.0, 1e3, 1e8])  # u = 450, 5e5, 5e15: far past e^u's range
    w = np.asarray(prior.expected_inverse_variance(big))
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w * np.asarray(big) ** 2, 2.0, rtol=1e-2)
    np.testing.assert_allclose(w[-1] * 1e16, 2.0, rtol=1e-12)


def test_zero_weight_is_finite_in_the_u_form():
    prior = HorseshoePrior(0.5)
    b = jnp.array([0.0, 1e-200, 1.0])
    scale = np.asarray(prior.em_scale(b))
    assert scale[0] == 0.0 and np.all(np.isfinite(scale)) and scale[1] < 1e-190
    assert np.isfinite(float(prior.neg_log_prior(b)))  # the pruned weight is excluded
    # below u = 1e-12 the log density is log(−γ − log u) (β² underflows before the density does)
    tiny = jnp.array([1e-7, 1e-200])
    expected = np.log(-np.euler_gamma - (2 * np.log([1e-7, 1e-200]) - np.log(0.5))) - np.log(0.5) - 0.5 * np.log(2 * np.pi**3)
    np.testing.assert_allclose(np.asarray(prior.log_marginal(tiny)), expected, rtol=1e-12)


def test_tau_must_be_positive():
    with pytest.raises(ValueError, match="tau"):
        make_horseshoe(0.0)
    with pytest.raises(ValueError, match="tau"):
        make_horseshoe("big")
