"""The conformance checks every hierarchy (prior) object must pass, for whichever engines it supports.

As :func:`sklearn.utils.estimator_checks.check_estimator` is for estimators:
:func:`hierarchy_checks` yields ``(name, check)`` pairs for one hierarchy object, choosing the checks
by the capabilities it has (:data:`sparsebayes.models.priors.CAPABILITIES`), and
:func:`check_hierarchy` runs them all. The test suite parametrizes them over the registry
(:data:`sparsebayes.models.priors.HIERARCHIES`), so a newly registered hierarchy is tested with no
other change. Each check raises ``AssertionError`` with the numbers when it fails:

* ``e_step_quadrature``: the EM weight ``1/u_i²`` (``em_scale``) equals ``E[1/v | β]`` by quadrature
  over the mixing density ``log_mixing_density`` (002 eq. 12's integral);
* ``e_step_variance_quadrature``: ``expected_variance`` (the E-step mean ``E[v | β]`` that the M-step
  of shared hyperparameters uses, where a hierarchy has it) equals the same ratio of quadratures;
* ``marginal_quadrature``: ``log_marginal`` equals ``log ∫ N(β; 0, v) p(v) dv``;
* ``twin_draws_marginal``: draws of the NumPyro sampling statement ``sample_beta`` follow the
  mixture ``∫ N(β; 0, v) p(v) dv`` (a Kolmogorov–Smirnov distance against its CDF), which
  ``marginal_quadrature`` ties to ``log_marginal``;
* ``model_equals_solver``: the EM engine's objective minus ``log N(y; Hβ, σ²) + Σ log p(β_i)`` is the
  same at random β (the engine climbs the model's log posterior, nothing else);
* ``em_objective_monotone``: EM iterations never decrease that objective (on a fixed active set);
* ``capability_errors``: every engine the hierarchy lacks refuses it with a ``ValueError`` that
  names the hierarchy.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import Predictive
from scipy import integrate, stats

from sparsebayes.models.likelihoods import GaussianLikelihood
from sparsebayes.models.priors import CAPABILITIES, require, supports

from . import em
from .em import EMData, column_norms, log_posterior

#: Weights at which the closed forms are checked (both signs, three orders of magnitude).
BETAS = (-2.5, -0.3, 0.04, 0.6, 3.0)


def _mixture_integral(prior, beta, power):
    """``∫ v^{−power} N(β; 0, v) p(v) dv`` over ``v = e^t`` (the integrand spans decades of v)."""
    def integrand(t):
        v = np.exp(t)
        log_f = (float(prior.log_mixing_density(jnp.asarray(v))) - power * t
                 - 0.5 * np.log(2 * np.pi * v) - beta**2 / (2 * v) + t)
        return np.exp(log_f)

    centre = 2.0 * np.log(abs(beta))
    edges = [-np.inf, centre - 15, centre - 3, centre + 3, centre + 15, np.inf]
    return sum(integrate.quad(integrand, a, b, limit=400, epsabs=0.0, epsrel=1e-11)[0]
               for a, b in zip(edges[:-1], edges[1:]))


def check_e_step_quadrature(prior):
    for beta in BETAS:
        expected = _mixture_integral(prior, beta, 1) / _mixture_integral(prior, beta, 0)
        got = float(prior.em_scale(jnp.asarray([beta]))[0]) ** -2
        assert np.isclose(got, expected, rtol=1e-7), f"{prior}: E[1/v | β={beta}] = {expected}, em_scale gives {got}"


def check_e_step_variance_quadrature(prior):
    for beta in BETAS:
        expected = _mixture_integral(prior, beta, -1) / _mixture_integral(prior, beta, 0)
        got = float(prior.expected_variance(jnp.asarray([beta]))[0])
        assert np.isclose(got, expected, rtol=1e-7), f"{prior}: E[v | β={beta}] = {expected}, expected_variance gives {got}"


def check_marginal_quadrature(prior):
    for beta in BETAS:
        expected = np.log(_mixture_integral(prior, beta, 0))
        got = float(prior.log_marginal(jnp.asarray([beta]))[0])
        assert np.isclose(got, expected, rtol=1e-8, atol=1e-9), f"{prior}: log p(β={beta}) = {expected}, got {got}"


def _mixture_cdf(prior, x, grid=np.linspace(-60.0, 60.0, 24_001)):
    """``P(β ≤ x) = ∫ Φ(x/√v) p(v) dv`` for a scale mixture, on ``t = log v`` by the trapezoid rule
    over a fixed grid (one vectorized evaluation of ``log_mixing_density``, normalized on the grid)."""
    v = np.exp(grid)
    weight = np.exp(np.asarray(prior.log_mixing_density(jnp.asarray(v))) + grid)  # p(v) dv/dt
    weight /= integrate.trapezoid(weight, grid)
    return integrate.trapezoid(weight[None, :] * stats.norm.cdf(np.asarray(x)[:, None] / np.sqrt(v)[None, :]), grid, axis=1)


def check_twin_draws_marginal(prior, n_draws=20_000, seed=0):
    draws = Predictive(lambda: prior.sample_beta(1), num_samples=n_draws)(jax.random.PRNGKey(seed))["beta"]
    draws = np.sort(np.asarray(draws).ravel())
    grid = np.quantile(draws, np.linspace(0.01, 0.99, 99))
    ecdf = np.searchsorted(draws, grid, side="right") / draws.size
    gap = np.max(np.abs(ecdf - _mixture_cdf(prior, grid)))
    bound = 1.95 / np.sqrt(draws.size)  # Kolmogorov's 0.1 % critical value
    assert gap < bound, f"{prior}: the twin's draws are {gap:.4f} from the mixture's CDF (bound {bound:.4f})"


def _regression(seed=0, n=40, p=6):
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((n, p))
    beta = np.where(np.arange(p) < 3, rng.normal(0, 2, p), 0.0)
    y = H @ beta + 0.5 * rng.standard_normal(n)
    return H, y


def _em_data(H, y):
    gram = H.T @ H
    return EMData(jnp.asarray(H), jnp.asarray(y), jnp.asarray(gram), None, np.float64(y.size),
                  jnp.asarray(column_norms(H, gram)))


def check_model_equals_solver(prior, n_points=8, seed=1):
    H, y = _regression()
    data, lik = _em_data(H, y), GaussianLikelihood()
    rng = np.random.default_rng(seed)
    gaps = []
    for _ in range(n_points):
        beta = rng.normal(0, 1.5, H.shape[1])
        noise_var = float(rng.uniform(0.3, 3.0))
        engine = float(log_posterior(jnp.asarray(beta), noise_var, data, prior, lik))
        model = (stats.norm.logpdf(y, H @ beta, np.sqrt(noise_var)).sum()
                 + float(jnp.sum(prior.log_marginal(jnp.asarray(beta)))))
        gaps.append(engine - model)
    spread = np.ptp(gaps)
    assert spread < 1e-8 * max(1.0, np.max(np.abs(gaps))), f"{prior}: engine − model varies by {spread} over β"


def check_em_objective_monotone(prior, n_steps=60):
    H, y = _regression()
    data = _em_data(H, y)
    beta0 = np.linalg.solve(H.T @ H + 1e-6 * np.eye(H.shape[1]), H.T @ y)
    controls = em.EMControls(prune_tol=1e-8, noise_floor=1e-12)
    _, info = em.trace(em.init(beta0, np.var(y), prior), data, GaussianLikelihood(), controls,
                       n_steps=n_steps, estimate_noise=True)
    obj, n_active = np.asarray(info.objective), np.asarray(info.n_active)
    assert np.all(np.isfinite(obj)), f"{prior}: non-finite EM objective {obj}"
    # a pruned weight leaves the objective's sum (an improper or unbounded density at 0 has no
    # value there), so compare steps on the same active set only
    same = n_active[1:] == n_active[:-1]
    drops = np.diff(obj)[same]
    assert same.sum() >= n_steps // 2, f"{prior}: the active set changed at {np.sum(~same)} of {n_steps} steps"
    assert np.all(drops >= -1e-9 * np.abs(obj[1:][same])), f"{prior}: EM objective decreased by {-drops.min():.3g}"


def check_capability_errors(prior):
    for engine in CAPABILITIES:
        if supports(prior, engine):
            assert require(prior, engine) is prior
            continue
        try:
            require(prior, engine)
        except ValueError as err:
            assert type(prior).__name__ in str(err), f"the {engine} error does not name {type(prior).__name__}: {err}"
        else:
            raise AssertionError(f"require({prior}, {engine!r}) accepted a hierarchy without the capability")


def hierarchy_checks(prior):
    """``(name, check)`` for every check that applies to ``prior`` (each ``check()`` takes no argument)."""
    has = lambda *names: all(hasattr(prior, n) for n in names)  # noqa: E731
    yield "capability_errors", lambda: check_capability_errors(prior)
    if has("em_scale", "log_mixing_density"):
        yield "e_step_quadrature", lambda: check_e_step_quadrature(prior)
    if has("expected_variance", "log_mixing_density"):
        yield "e_step_variance_quadrature", lambda: check_e_step_variance_quadrature(prior)
    if has("log_marginal", "log_mixing_density"):
        yield "marginal_quadrature", lambda: check_marginal_quadrature(prior)
    if has("log_mixing_density", "sample_beta"):
        yield "twin_draws_marginal", lambda: check_twin_draws_marginal(prior)
    if supports(prior, "em") and has("log_marginal"):
        yield "model_equals_solver", lambda: check_model_equals_solver(prior)
    if supports(prior, "em"):
        yield "em_objective_monotone", lambda: check_em_objective_monotone(prior)


def check_hierarchy(prior):
    """Run every applicable check of :func:`hierarchy_checks` on ``prior``; returns the names run."""
    names = []
    for name, check in hierarchy_checks(prior):
        check()
        names.append(name)
    return names
