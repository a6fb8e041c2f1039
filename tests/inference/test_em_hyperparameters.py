"""Shared hyperparameters estimated inside EM: the Laplace γ and the horseshoe's global scale τ.

The hierarchy ``β_i | τ_i ~ N(0, τ_i)``, ``τ_i ~ Exp(γ/2)`` (000 eq. 5) with ``γ ~ Gamma(a, b)``:
the M-step (:meth:`LaplacePrior.update_shared`) against a brute-force maximization of the expected
complete-data log posterior, the EM objective with γ estimated never decreasing, γ̂ near the γ
that simulated the weights, fixed γ untouched, and the estimators' parameter.
"""
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, optimize
from sklearn.base import clone

from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier

from sparsebayes.inference.engines import em
from sparsebayes.inference.engines._shapes import bucket
from sparsebayes.inference.engines.em import EMControls, EMData, RidgeStart, log_posterior
from sparsebayes.inference.engines.em_slices import PAD_PER_OCTAVE, fit_em
from sparsebayes.models.priors.horseshoe import HorseshoePrior, make_horseshoe
from sparsebayes.models.likelihoods import GaussianLikelihood, ProbitLikelihood
from sparsebayes.models.priors import LaplacePrior, make_prior, neg_log_hyperprior, update_shared


def _posterior_mean_of_tau(beta, gamma):
    """``E[τ | β]`` under ``p(τ | β) ∝ N(β; 0, τ) (γ/2) e^{−γτ/2}`` by quadrature over ``t = log τ``."""
    def weight(t, power):  # τ^power N(β; 0, τ) p(τ) dτ/dt, in logs (β = 0 has no 1/τ term)
        with np.errstate(over="ignore"):
            misfit = 0.0 if beta == 0 else 0.5 * beta**2 * np.exp(-t)
        return np.exp((power + 0.5) * t - 0.5 * np.log(2 * np.pi) - misfit - 0.5 * gamma * np.exp(t))

    centre = np.log(abs(beta) / np.sqrt(gamma) + 1.0 / gamma)
    edges = [-np.inf, centre - 10, centre, centre + 10, np.inf]
    num, den = (sum(integrate.quad(weight, lo, hi, args=(power,), epsabs=0.0, epsrel=1e-12, limit=200)[0]
                    for lo, hi in zip(edges[:-1], edges[1:])) for power in (1, 0))
    return num / den


@pytest.mark.parametrize("beta", [0.0, 0.03, -0.7, 2.5])
@pytest.mark.parametrize("gamma", [0.3, 4.0])
def test_expected_variance_is_the_posterior_mean_of_tau(beta, gamma):
    got = float(LaplacePrior(gamma).expected_variance(jnp.asarray(beta)))
    assert got == pytest.approx(_posterior_mean_of_tau(beta, gamma), rel=1e-9)


@pytest.mark.parametrize("gamma_prior", [(1.0, 1e-3), (3.0, 0.5), (0.5, 2.0)])
def test_gamma_m_step_maximizes_the_expected_complete_data_log_posterior(gamma_prior):
    """``Q(γ) = Σ_i E[log(γ/2) − γτ_i/2] + (a − 1) log γ − bγ`` over ``n_weights`` weights (two of
    them pruned, at 0, and two more outside the slice), each ``E[τ_i]`` by quadrature at the current
    γ, maximized by scipy; the M-step's closed form lands on the maximizer."""
    beta = np.array([1.3, -0.4, 0.0, 2.2, 0.05, 0.0])
    n_weights = beta.size + 2
    gamma_now = 1.7
    a, b = gamma_prior
    e_tau = [_posterior_mean_of_tau(x, gamma_now) for x in beta] + [_posterior_mean_of_tau(0.0, gamma_now)] * 2

    def minus_q(log_gamma):
        g = np.exp(log_gamma)
        return -(sum(np.log(g / 2) - g * t / 2 for t in e_tau) + (a - 1) * np.log(g) - b * g)

    best = optimize.minimize_scalar(minus_q, bracket=(-3.0, 3.0), tol=1e-14)
    prior = LaplacePrior(gamma_now, gamma_prior)
    updated = update_shared(prior, jnp.asarray(beta), jnp.asarray(0.5 * beta), n_weights)  # γ apart from β⁽ᵗ⁺¹⁾
    assert isinstance(updated, LaplacePrior) and updated.gamma_prior == gamma_prior
    assert float(updated.gamma) == pytest.approx(np.exp(best.x), rel=1e-7)
    assert float(updated.gamma) != pytest.approx(gamma_now, rel=1e-2)  # the step moves γ: not vacuous


def test_a_hierarchy_without_shared_hyperparameters_is_its_own_m_step():
    fixed = LaplacePrior(2.0)
    assert update_shared(fixed, jnp.ones(3), jnp.ones(3), 3) is fixed
    assert neg_log_hyperprior(fixed, 3) == 0.0
    jeffreys = make_prior("jeffreys")
    assert update_shared(jeffreys, jnp.ones(3), jnp.ones(3), 3) is jeffreys and neg_log_hyperprior(jeffreys, 3) == 0.0


def _problem(kind, seed=0, n=60, p=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:3] = [2.0, -1.5, 1.0]
    if kind == "regression":
        return X, X @ beta + 0.5 * rng.standard_normal(n), GaussianLikelihood()
    return X, (X @ beta + rng.standard_normal(n) > 0).astype(float), ProbitLikelihood()


def _objective_path(prior, kind, n_steps=80):
    """The EM objective at the ridge start and after each of ``n_steps`` steps, with the γ path."""
    X, y, lik = _problem(kind)
    y0 = y if kind == "regression" else 2 * y - 1
    beta0 = RidgeStart(X)(y0)
    s2 = float(np.var(y)) if kind == "regression" else 1.0
    data = EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X))
    model = em.EMModel(prior, lik)
    state = em.init(data, model, beta0, s2)
    _, info = em.trace(state, data, model, EMControls(prune_tol=1e-8, noise_floor=1e-12), n_steps=n_steps,
                       estimate_noise=True)
    start = float(log_posterior(jnp.asarray(beta0), s2, data, prior, lik))
    return np.r_[start, np.asarray(info.objective)], np.r_[prior.gamma, np.asarray(info.prior.gamma)]


def _assert_climbs(obj):
    assert np.all(np.isfinite(obj))
    assert np.all(np.diff(obj) >= -1e-10 * np.maximum(1.0, np.abs(obj[1:]))), f"EM objective fell by {-np.diff(obj).min():.3g}"


@pytest.mark.parametrize("kind", ["regression", "probit"])
@pytest.mark.parametrize("gamma0", [0.05, 50.0])
def test_em_objective_with_gamma_estimated_never_decreases(kind, gamma0):
    obj, gammas = _objective_path(LaplacePrior(gamma0, (1.0, 1e-3)), kind)
    _assert_climbs(obj)
    assert abs(np.log(gammas[-1] / gamma0)) > 1.0  # γ travelled far from its start: the check is not vacuous


class _PlugInPrior(LaplacePrior):
    """A wrong M-step: ``E[τ_i | β_i]`` replaced by ``|β_i|/√γ``, the GIG mean's ``1/γ`` term dropped."""

    def update_shared(self, beta, new_beta, n_weights):
        a, b = self.gamma_prior
        return self._replace(gamma=(n_weights + a - 1.0) / (0.5 * jnp.sum(jnp.abs(beta)) / jnp.sqrt(self.gamma) + b))


def test_the_monotonicity_check_catches_a_wrong_m_step():
    obj, _ = _objective_path(_PlugInPrior(1.0, (1.0, 1e-3)), "regression")
    with pytest.raises(AssertionError, match="fell"):
        _assert_climbs(obj)


def test_fit_em_counts_the_model_weights_not_the_padded_columns_in_the_gamma_step():
    """fit_em pads 100 columns to 112 (zero weights that are not in the model): γ̂ is the one of the
    same iterations on the unpadded basis, and solves the fixed-point equation
    ``½√γ‖β‖₁ + bγ = p/2 + a − 1`` with ``p = 100`` (the marginal objective's stationarity in γ)."""
    rng = np.random.default_rng(5)
    n, p = 200, 100
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:4] = [3.0, -2.0, 2.0, 1.0]
    y = X @ beta + 0.3 * rng.standard_normal(n)
    a, b = 1.0, 1e-3
    prior = LaplacePrior(1.0, (a, b))
    b0 = RidgeStart(X)(y)
    res = fit_em(X, y, prior, GaussianLikelihood(), beta0=b0, tol=1e-10, max_iter=2000)
    assert res.converged and bucket(p, per_octave=PAD_PER_OCTAVE) > p
    controls = EMControls(prune_tol=1e-8, noise_floor=1e-10 * float(np.mean(y**2)), prune_floor=1e-8 * float(np.max(np.abs(b0))))
    data, model = EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X)), em.EMModel(prior, GaussianLikelihood())
    final, _ = em.trace(em.init(data, model, b0, np.var(y)), data, model, controls, n_steps=res.n_iter,
                        estimate_noise=True)
    np.testing.assert_allclose(res.beta, np.asarray(final.beta), rtol=1e-7, atol=1e-10)
    assert res.prior.gamma == pytest.approx(float(final.prior.gamma), rel=1e-9)
    g = res.prior.gamma
    assert 0.5 * np.sqrt(g) * np.abs(res.beta).sum() + b * g == pytest.approx(p / 2 + a - 1, rel=1e-7)


@pytest.mark.parametrize("gamma_true", [1.0, 25.0])
def test_estimated_gamma_recovers_the_gamma_that_drew_the_weights(gamma_true):
    """200 weights drawn from the hierarchy (τ_i ~ Exp(γ/2), β_i ~ N(0, τ_i)), well determined by 500
    points: γ̂ is the Laplace-rate estimate from the true weights, ``(p/‖β‖₁)²``, to a few per cent,
    and within the sampling spread of that estimate (relative sd ≈ 2/√p = 0.14) of the truth."""
    rng = np.random.default_rng(11)
    n, p = 500, 200
    beta = rng.normal(0.0, np.sqrt(rng.exponential(2.0 / gamma_true, p)))
    X = rng.standard_normal((n, p))
    y = X @ beta + 0.05 * rng.standard_normal(n)
    est = AdaptiveSparseRegressor(prior="laplace", gamma=1.0, gamma_prior=(1.0, 1e-6), bias=False, standardize=False,
                                  tol=1e-8, max_iter=5000).fit(X, y)
    oracle = (p / np.abs(beta).sum()) ** 2
    assert est.gamma_ == pytest.approx(oracle, rel=0.05)
    assert est.gamma_ == pytest.approx(gamma_true, rel=0.3)
    assert isinstance(est.prior_, LaplacePrior) and est.prior_.gamma == est.gamma_


def test_fixed_gamma_is_untouched_and_a_sharp_hyperprior_reproduces_it():
    """``gamma_prior=None`` runs the fixed-γ EM (``gamma_`` is ``gamma``, the fit is fit_em's with
    ``LaplacePrior(γ)``); a hyperprior concentrated at γ (Gamma(c γ, c), c = 1e9) gives the same fit."""
    X, y, lik = _problem("regression")
    gamma = 3.0
    fixed = AdaptiveSparseRegressor(prior="laplace", gamma=gamma, bias=False, standardize=False, tol=1e-10).fit(X, y)
    direct = fit_em(X, y, LaplacePrior(gamma), lik, y_init=y, tol=1e-10)
    np.testing.assert_array_equal(fixed.beta_, direct.beta)
    assert fixed.gamma_ == gamma and fixed.prior_ == LaplacePrior(gamma)
    assert fixed.objective_ == direct.objective
    c = 1e9
    sharp = AdaptiveSparseRegressor(prior="laplace", gamma=1.0, gamma_prior=(c * gamma, c), bias=False, standardize=False,
                                    tol=1e-10).fit(X, y)
    assert sharp.gamma_ == pytest.approx(gamma, rel=1e-6)
    np.testing.assert_allclose(sharp.beta_, fixed.beta_, rtol=1e-6, atol=1e-9)


def test_gamma_prior_survives_clone_and_get_params_and_the_classifier_estimates_gamma():
    est = AdaptiveSparseRegressor(prior="laplace", gamma_prior=(2.0, 0.5))
    assert est.get_params()["gamma_prior"] == (2.0, 0.5)
    twin = clone(est)
    assert twin.gamma_prior == (2.0, 0.5) and twin.get_params() == est.get_params()
    assert clone(AdaptiveSparseRegressor()).gamma_prior is None
    X, y, _ = _problem("probit", n=200)  # 60 points: the empty model is the joint mode (LaplacePrior says why)
    clf = clone(SparseProbitClassifier(prior="laplace", gamma=1.0, gamma_prior=(1.0, 1e-3))).fit(X, y)
    fixed = SparseProbitClassifier(prior="laplace", gamma=1.0).fit(X, y)
    assert fixed.gamma_ == 1.0 and clf.gamma_ != pytest.approx(1.0, rel=0.1)
    assert clf.prior_.gamma == clf.gamma_ and clf.n_active_ >= 3


@pytest.mark.parametrize("gamma_prior, match", [
    ((0.0, 1.0), r"gamma_prior\[0\] \(a"), ((-1.0, 1.0), r"gamma_prior\[0\] \(a"),
    ((1.0, 0.0), r"gamma_prior\[1\] \(b"), ((1.0, np.nan), r"gamma_prior\[1\] \(b"),
    ((1.0,), "gamma_prior must be None"), ("gamma", "gamma_prior must be None"), ((1.0, 2.0, 3.0), "gamma_prior must be None"),
])
def test_bad_gamma_priors_raise_value_errors_naming_the_parameter(gamma_prior, match):
    X, y, _ = _problem("regression", n=20, p=3)
    with pytest.raises(ValueError, match=match):
        AdaptiveSparseRegressor(prior="laplace", gamma_prior=gamma_prior).fit(X, y)
    with pytest.raises(ValueError, match=match):
        make_prior("laplace", 1.0, gamma_prior)


@pytest.mark.parametrize("prior, match", [
    (LaplacePrior(1.0, (1.0, 0.0)), r"LaplacePrior.gamma_prior\[1\] \(b"), (LaplacePrior(-1.0), "LaplacePrior.gamma"),
    (HorseshoePrior(1.0, -2.0), "tau_prior"), (HorseshoePrior(0.0), "tau"),
])
def test_bad_hierarchy_objects_raise_value_errors_naming_the_field(prior, match):
    X, y, _ = _problem("regression", n=20, p=3)
    with pytest.raises(ValueError, match=match):
        AdaptiveSparseRegressor(prior=prior).fit(X, y)


def test_gamma_prior_with_a_prior_that_has_no_gamma_is_a_value_error():
    X, y, _ = _problem("regression", n=20, p=3)
    for prior in ("jeffreys", "horseshoe", LaplacePrior(1.0)):
        with pytest.raises(ValueError, match="gamma_prior applies to prior='laplace' only"):
            AdaptiveSparseRegressor(prior=prior, gamma_prior=(1.0, 1.0)).fit(X, y)


# --- the horseshoe's global scale τ under τ ~ C⁺(0, s), behind the same hook ----------------------

def _expected_inverse_local_variance(beta, tau):
    """``E[1/λ² | β, τ] = τ² E[1/v | β]`` with ``v = λ²τ²``, by quadrature over ``λ ~ C⁺(0, 1)``."""
    def weight(t, power):  # λ^{−2 power} N(β; 0, λ²τ²) p(λ) dλ/dt over t = log λ, in logs
        log_sd = t + np.log(tau)
        with np.errstate(over="ignore"):
            misfit = 0.5 * beta**2 * np.exp(-2.0 * log_sd)
        return np.exp(-2 * power * t - 0.5 * np.log(2 * np.pi) - log_sd - misfit - np.logaddexp(0.0, 2.0 * t) + t)

    centre = np.log(abs(beta) / tau)
    edges = [-np.inf, centre - 10, centre, centre + 10, np.inf]
    num, den = (sum(integrate.quad(weight, lo, hi, args=(power,), epsabs=0.0, epsrel=1e-12, limit=200)[0]
                    for lo, hi in zip(edges[:-1], edges[1:])) for power in (1, 0))
    return num / den


@pytest.mark.parametrize("scale", [0.05, 1.0, 20.0])
def test_tau_m_step_maximizes_the_expected_complete_data_log_posterior(scale):
    """``Q(τ) = Σ_{β_i⁺ ≠ 0} [−log τ − β_i⁺² E[1/λ_i²]/(2τ²)] − log(1 + τ²/s²)`` at the weights' new values
    β⁺, each ``E[1/λ_i²]`` by quadrature at the current (β_i, τ), maximized by scipy; the pruned
    weight is out of the objective."""
    beta = np.array([1.3, -0.4, 0.0, 2.2, 0.05])
    new_beta = np.array([1.1, -0.3, 0.0, 2.3, 0.02])
    tau_now = 0.15
    nz = new_beta != 0
    e_inv = [_expected_inverse_local_variance(x, tau_now) for x in beta[nz]]

    def minus_q(log_tau):
        tau = np.exp(log_tau)
        return -(sum(-np.log(tau) - x**2 * e / (2 * tau**2) for x, e in zip(new_beta[nz], e_inv))
                 - np.log1p((tau / scale) ** 2))

    best = optimize.minimize_scalar(minus_q, bracket=(-3.0, 1.0), tol=1e-14)
    updated = update_shared(HorseshoePrior(tau_now, scale), jnp.asarray(beta), jnp.asarray(new_beta), beta.size)
    assert float(updated.tau) == pytest.approx(np.exp(best.x), rel=1e-7)
    assert float(updated.tau) != pytest.approx(tau_now, rel=1e-2)
    fixed = HorseshoePrior(tau_now)
    assert update_shared(fixed, jnp.asarray(beta), jnp.asarray(new_beta), beta.size) is fixed


@pytest.mark.parametrize("tau0", [0.01, 10.0])
def test_em_objective_with_the_horseshoe_tau_estimated_never_decreases_on_a_fixed_support(tau0):
    """The horseshoe density is infinite at 0, so a pruned weight leaves the objective: steps that keep
    the support are compared (as the conformance check does for fixed τ)."""
    X, y, lik = _problem("regression")
    prior = HorseshoePrior(tau0, 1.0)
    beta0 = RidgeStart(X)(y)
    data = EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X))
    model = em.EMModel(prior, lik)
    _, info = em.trace(em.init(data, model, beta0, np.var(y)), data, model,
                       EMControls(prune_tol=1e-8, noise_floor=1e-12), n_steps=80, estimate_noise=True)
    obj = np.r_[float(log_posterior(jnp.asarray(beta0), float(np.var(y)), data, prior, lik)), np.asarray(info.objective)]
    n_active = np.r_[X.shape[1], np.asarray(info.n_active)]
    same = n_active[1:] == n_active[:-1]
    assert same.sum() >= 40 and np.all(np.isfinite(obj))
    drops = np.diff(obj)[same]
    assert np.all(drops >= -1e-10 * np.maximum(1.0, np.abs(obj[1:][same]))), f"fell by {-drops.min():.3g}"
    taus = np.asarray(info.prior.tau)
    assert abs(np.log(taus[-1] / tau0)) > 1.0 and np.all(np.isfinite(taus))


def test_the_horseshoe_with_tau_estimated_through_the_estimator():
    X, y, _ = _problem("regression", n=200)
    est = AdaptiveSparseRegressor(prior=HorseshoePrior(1.0, 1.0), tol=1e-8).fit(X, y)
    assert isinstance(est.prior_, HorseshoePrior) and est.prior_.tau_prior == 1.0
    assert 0 < est.prior_.tau != 1.0 and est.n_active_ >= 3
    assert not hasattr(est, "gamma_")
    with pytest.raises(ValueError, match="tau_prior"):
        make_horseshoe(1.0, tau_prior=-1.0)


def test_the_engine_contract_vmaps_over_a_grid_of_hyperprior_settings():
    """``init``/``run`` are pure functions of arrays: one ``vmap`` fits a grid of Gamma rates ``b`` (the
    hierarchy in the state is traced), equal to the fits one at a time."""
    import jax

    X, y, lik = _problem("regression", n=40, p=6)
    data = EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X))
    beta0, s2 = RidgeStart(X)(y), float(np.var(y))
    controls = EMControls(tol=1e-9, max_iter=500, prune_tol=1e-8, noise_floor=1e-12)

    def fit(rate):
        model = em.EMModel(LaplacePrior(1.0, (1.0, rate)), lik)
        state, info = em.run(em.init(data, model, jnp.asarray(beta0), s2), data, model, controls, estimate_noise=True)
        return state.prior.gamma, info.objective

    rates = jnp.asarray([1e-3, 0.1, 10.0])
    gammas, objectives = jax.vmap(fit)(rates)
    for rate, g, obj in zip(np.asarray(rates), np.asarray(gammas), np.asarray(objectives)):
        g1, obj1 = fit(float(rate))
        assert g == pytest.approx(float(g1), rel=1e-10) and obj == pytest.approx(float(obj1), rel=1e-10)
    assert np.all(np.diff(np.asarray(gammas)) < 0)  # a larger rate b pulls γ̂ down


def test_a_refit_with_another_gamma_prior_builds_no_program(programs_built):
    """The hyperprior's (a, b) and γ's start are traced values of the compiled loop, like a fixed γ."""
    X, y, _ = _problem("regression")
    est = AdaptiveSparseRegressor(prior="laplace", gamma=1.0, gamma_prior=(1.0, 1e-3)).fit(X, y)
    with programs_built() as built:
        est.set_params(gamma=2.0, gamma_prior=(3.0, 0.5)).fit(X, y)
    assert built == [], f"{len(built)} programs built by a refit with another gamma_prior"
