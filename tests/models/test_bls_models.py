import numpy as np
import pytest
from numpyro.handlers import seed, substitute, trace
from numpyro.infer.util import log_density
from scipy import stats

from sparsebayes.models.bayesian_lasso import bayesian_lasso, bls_model, flap_model, rvm_model


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(6, 3)), rng.normal(size=6)


def test_bls_model_density_matches_eqs_5_to_9():
    Phi, y = _data()
    params = {"lam": 1.3, "noise_var": 0.7, "tau": np.array([0.5, 1.2, 2.0]), "w": np.array([0.3, -0.4, 1.0])}
    a, b, c, d = 2.0, 1.5, 3.0, 0.5
    lp, _ = log_density(bls_model, (Phi, y), dict(a=a, b=b, c=c, d=d), params)
    s2 = params["noise_var"]
    expect = (stats.gamma(a, scale=1 / b).logpdf(params["lam"]) + stats.invgamma(c, scale=d).logpdf(s2)
              + stats.expon(scale=2 / params["lam"]).logpdf(params["tau"]).sum()
              + stats.norm(0, np.sqrt(params["tau"] * s2)).logpdf(params["w"]).sum()
              + stats.norm(Phi @ params["w"], np.sqrt(s2)).logpdf(y).sum())
    assert float(lp) == pytest.approx(expect, rel=1e-10)


def test_bayesian_lasso_density_with_jeffreys_noise_prior():
    X, y = _data()
    params = {"lam2": 0.8, "noise_var": 1.1, "tau2": np.array([0.5, 1.2, 2.0]), "beta": np.array([0.3, -0.4, 1.0])}
    lp, _ = log_density(bayesian_lasso, (X, y), dict(lam2_shape=1.0, lam2_rate=1.78), params)
    s2 = params["noise_var"]
    expect = (stats.gamma(1.0, scale=1 / 1.78).logpdf(0.8) - np.log(s2)
              + stats.expon(scale=2 / 0.8).logpdf(params["tau2"]).sum()
              + stats.norm(0, np.sqrt(s2 * params["tau2"])).logpdf(params["beta"]).sum()
              + stats.norm(X @ params["beta"], np.sqrt(s2)).logpdf(y).sum()
              + 0.5 * np.log(s2))  # the flat-prior intercept integrated out (n − 1 degrees of freedom)
    assert float(lp) == pytest.approx(expect, rel=1e-10)


@pytest.mark.parametrize("model, scale_site, weight_site, lam_site",
                         [(bayesian_lasso, "tau2", "beta", "lam2"), (bls_model, "tau", "w", "lam")])
def test_the_marginal_models_are_the_scale_mixtures_with_the_scales_integrated_out(model, scale_site, weight_site,
                                                                                     lam_site):
    """``marginal=True`` against the scale mixture's density integrated over each scale by
    quadrature (split where ``N(w | 0, v σ²)`` peaks, ``v = w²/σ²``): equal to 1e-9 at three points."""
    from scipy.integrate import quad

    X, y = _data()
    for s2, lam, w in ((0.7, 0.8, [0.3, -0.4, 1.0]), (2.5, 3.0, [1e-3, 2.0, -0.2]), (0.1, 0.05, [0.5, 0.01, -3.0])):
        w = np.asarray(w)
        point = {"noise_var": s2, lam_site: lam, weight_site: w}
        marginal, _ = log_density(model, (X, y), dict(marginal=True), point)
        rest = {k: v for k, v in point.items() if k != weight_site}
        scales = np.ones(3)
        base, _ = log_density(model, (X, y), {}, {**rest, scale_site: scales, weight_site: w})
        # the mixture's log density is base + Σ_i [its terms at (v_i, w_i)] − [those at v_i = 1]
        total = float(base)
        for i in range(3):
            def term(v):
                return (stats.expon(scale=2 / lam).logpdf(v) + stats.norm(0, np.sqrt(v * s2)).logpdf(w[i]))
            peak = w[i] ** 2 / s2
            integral = sum(quad(lambda v: np.exp(term(v)), a, b, limit=200)[0]
                           for a, b in ((0, peak), (peak, 100 * peak), (100 * peak, np.inf)))
            total += np.log(integral) - term(1.0)
        assert float(marginal) == pytest.approx(total, rel=1e-9, abs=1e-9)


def test_bayesian_lasso_intercept_term_is_the_integral_over_a_flat_intercept():
    """log ∫ Π N(y_i | μ + x_iᵀβ, σ²) dμ − (Σ log N(y_c | X_cβ, σ²) + ½ log σ²) is the same for every σ², β."""
    from scipy.integrate import quad

    X, y = _data()
    X, y = X - X.mean(0), y - y.mean()
    gaps = []
    for s2, beta in ((0.5, [0.3, -0.4, 1.0]), (2.0, [1.0, 0.0, -0.5]), (7.0, [0.0, 0.2, 0.1])):
        r = y - X @ np.asarray(beta)
        base = stats.norm(0, np.sqrt(s2)).logpdf(r).sum()
        integral, _ = quad(lambda mu: np.exp(stats.norm(mu, np.sqrt(s2)).logpdf(r).sum() - base), -50, 50, points=[0.0])
        gaps.append(np.log(integral) - 0.5 * np.log(s2))
    assert np.ptp(gaps) < 1e-8


@pytest.mark.parametrize("model", [bls_model, rvm_model, flap_model])
def test_flat_hyperpriors_run_on_labelled_surrogates(model):
    Phi, y = _data()
    tr = trace(substitute(seed(model, 0), {"noise_var": 1.0, "alpha": np.ones(3)})).get_trace(Phi, y)
    assert "surrogate_eps" in tr and float(tr["surrogate_eps"]["value"]) == pytest.approx(1e-3)
    assert tr["y"]["is_observed"]


def test_rvm_and_flap_densities():
    Phi, y = _data()
    p = {"alpha": np.array([0.5, 2.0, 3.0]), "w": np.array([0.1, 0.2, -0.3]), "noise_var": 0.4}
    # rates other than 1, so that a rate read as a scale shows (Gamma(a, rate b) on α, InvGamma(c, d) on σ²)
    lp, _ = log_density(rvm_model, (Phi, y), dict(a=2.0, b=1.7, c=2.0, d=0.6), p)
    expect = (stats.gamma(2.0, scale=1 / 1.7).logpdf(p["alpha"]).sum() + stats.invgamma(2.0, scale=0.6).logpdf(0.4)
              + stats.norm(0, 1 / np.sqrt(p["alpha"])).logpdf(p["w"]).sum()
              + stats.norm(Phi @ p["w"], np.sqrt(0.4)).logpdf(y).sum())
    assert float(lp) == pytest.approx(expect, rel=1e-10)
    q = {"lam": 0.9, "gamma": np.array([0.5, 2.0, 3.0]), "w": np.array([0.1, 0.2, -0.3])}
    lp, _ = log_density(flap_model, (Phi, y), dict(a=2.0, b=1.7, noise_var=0.4), q)
    expect = (stats.gamma(2.0, scale=1 / 1.7).logpdf(0.9) + stats.expon(scale=2 / 0.9).logpdf(q["gamma"]).sum()
              + stats.norm(0, np.sqrt(q["gamma"])).logpdf(q["w"]).sum()
              + stats.norm(Phi @ q["w"], np.sqrt(0.4)).logpdf(y).sum())
    assert float(lp) == pytest.approx(expect, rel=1e-10)
