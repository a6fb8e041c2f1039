"""The horseshoe hierarchy's closed forms against quadrature over the local scale λ ~ C⁺(0, 1)."""
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

from sparsebayes.models.priors.horseshoe import HorseshoePrior, make_horseshoe, one_minus_q, scaled_exp1


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


def _posterior_cdf_of_tau(beta, scale, grid):
    """``P(τ ≤ x | β)`` for ``τ ~ C⁺(0, s)`` with the local scales integrated out: the density
    ``∝ p(τ) Π_i p(β_i | τ)`` (the closed-form marginal, itself checked against quadrature above) on
    ``t = log τ`` by the trapezoid rule."""
    t = np.linspace(-12.0, 8.0, 8001)
    tau = np.exp(t)
    import jax

    marginal = jax.jit(lambda tau_, beta_: HorseshoePrior(tau_).log_marginal(beta_))  # one program, not eager ops
    log_lik = marginal(jnp.asarray(tau)[:, None], jnp.asarray(beta)[None, :]).sum(axis=1)
    log_post = np.asarray(log_lik) - np.log1p((tau / scale) ** 2) + t
    dens = np.exp(log_post - log_post.max())
    cdf = integrate.cumulative_trapezoid(dens, t, initial=0.0)
    return np.interp(np.log(grid), t, cdf / cdf[-1])


def test_gibbs_draws_of_the_estimated_tau_follow_its_conditional_given_beta():
    """With β held fixed, the Gibbs sweeps over (λ², ν, τ², ξ) (Makalic & Schmidt 2016) target
    ``p(τ | β) ∝ C⁺(τ; 0, s) Π_i p(β_i | τ)``: the τ of 1000 independent chains after 100 sweeps is
    within the Kolmogorov 0.1 % bound of that distribution's CDF."""
    import jax

    beta = jnp.asarray([1.5, -0.2, 0.03, 0.8, -2.5, 0.01])
    prior = HorseshoePrior(1.0, tau_prior=0.5)

    def chain(key):
        def sweep(aux, k):
            return prior.gibbs_update(k, beta, aux), None

        aux, _ = jax.lax.scan(sweep, prior.gibbs_init(beta.shape[0]), jax.random.split(key, 100))
        return jnp.sqrt(aux["tau2"])

    draws = np.sort(np.asarray(jax.jit(jax.vmap(chain))(jax.random.split(jax.random.PRNGKey(0), 1000))))
    grid = np.quantile(draws, np.linspace(0.01, 0.99, 99))
    gap = np.max(np.abs(np.searchsorted(draws, grid, side="right") / draws.size - _posterior_cdf_of_tau(beta, 0.5, grid)))
    assert gap < 1.95 / np.sqrt(draws.size), f"Gibbs τ draws are {gap:.4f} from p(τ | β)"
    assert prior.gibbs_prior_variance(prior.gibbs_init(3)).shape == (3,)


def test_the_twin_samples_tau_when_it_is_estimated():
    import jax
    from numpyro.infer import Predictive

    draws = Predictive(lambda: HorseshoePrior(1.0, tau_prior=0.5).sample_beta(2), num_samples=4000)(jax.random.PRNGKey(1))
    assert draws["tau_global"].shape == (4000,) and "tau" not in draws  # "tau": per-weight variances elsewhere
    assert stats.kstest(np.asarray(draws["tau_global"]), stats.halfcauchy(scale=0.5).cdf).pvalue > 1e-3
    assert "tau_global" not in Predictive(lambda: HorseshoePrior(1.0).sample_beta(2), num_samples=10)(jax.random.PRNGKey(1))


@pytest.mark.parametrize("tau_prior", [None, 0.5])
def test_gibbs_draws_carry_the_twins_sites(tau_prior):
    """``gibbs_twin_sites`` gives the twin's sites (:meth:`sample_beta`) at Gibbs draws: ``β = τ λ z``
    with each draw's τ, and ``tau_global`` exactly when the twin samples it."""
    import jax
    from numpyro.infer import Predictive

    prior = HorseshoePrior(0.7, tau_prior=tau_prior)
    rng = np.random.default_rng(0)
    beta = rng.normal(size=(2, 5, 3))  # (chain, draw, p)
    aux = {"lam2": rng.gamma(1.0, size=(2, 5, 3)), "nu": np.ones((2, 5, 3))}
    if tau_prior is not None:
        aux["tau2"] = rng.gamma(1.0, size=(2, 5))
    sites = prior.gibbs_twin_sites(beta, aux)
    twin = Predictive(lambda: prior.sample_beta(3), num_samples=2)(jax.random.PRNGKey(0))
    assert set(sites) == set(twin) - {"beta"}
    tau = 0.7 if tau_prior is None else sites["tau_global"][..., None]
    np.testing.assert_allclose(tau * sites["lam_local"] * sites["beta_raw"], beta, rtol=1e-12)


def test_declares_its_nuts_settings():
    """The horseshoe's NUTS needs a higher target acceptance than NumPyro's default; a hierarchy that
    declares nothing gets the defaults."""
    from sparsebayes.models.priors import NUTS_SETTINGS, LaplacePrior, nuts_settings
    declared = nuts_settings(HorseshoePrior(tau=0.3))
    assert set(declared) <= set(NUTS_SETTINGS) and 0.95 <= declared["target_accept_prob"] < 1.0
    assert nuts_settings(LaplacePrior()) == {}
    assert HorseshoePrior(tau=0.3) == (0.3, None)  # the declaration is a class attribute, not a field


@pytest.mark.parametrize("tau_prior", [None, 2.0])
def test_sample_variance_is_sample_beta_without_beta(tau_prior):
    """The collapsed statement makes sample_beta's scale sites with the same draws (same seed, same
    order), returns v = τ²λ², and twin_sites_given_beta gives back sample_beta's beta_raw."""
    import numpyro
    from numpyro import handlers
    prior = HorseshoePrior(tau=0.7, tau_prior=tau_prior)
    full = handlers.trace(handlers.seed(lambda: prior.sample_beta(4), 3)).get_trace()
    part = handlers.trace(handlers.seed(lambda: numpyro.deterministic("v", prior.sample_variance(4)), 3)).get_trace()
    sites = {k: np.asarray(full[k]["value"]) for k in ("lam_local", "tau_global") if k in full}
    for k in sites:
        np.testing.assert_array_equal(np.asarray(part[k]["value"]), sites[k])
    tau = 0.7 if tau_prior is None else sites["tau_global"]
    np.testing.assert_allclose(np.asarray(part["v"]["value"]), (tau * sites["lam_local"]) ** 2, rtol=1e-12)
    back = prior.twin_sites_given_beta(np.asarray(full["beta"]["value"])[None, None], {k: np.asarray(v)[None, None]
                                                                                       for k, v in sites.items()})
    np.testing.assert_allclose(back["beta_raw"][0, 0], np.asarray(full["beta_raw"]["value"]), rtol=1e-12)
