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
  names the hierarchy;
* ``typeii_optimum``: the penalty ``κ`` is minus the derivative of ``typeii_log_hyperprior`` in a
  variance, and the per-basis optimum, :func:`~sparsebayes.models.priors.typeii.optimal_variance`
  at the hierarchy's penalty ``κ = typeii_penalty(λ, σ²)``, maximises ``ℓ(v)`` of 004 eq. 14 (against
  a bounded scalar search), and the move gain ``variance_objective_change`` is ``ℓ(v') − ℓ(v)``;
* ``typeii_lambda_update``: ``typeii_update_lambda`` maximises ``typeii_log_hyperprior`` over λ
  (against a scalar search in ``log λ``; a hierarchy without λ: the hyperprior does not depend on it);
* ``typeii_evidence``: a few engine steps, scored with λ re-maximised and with the hierarchy's own
  σ² update (which must then be an ascent: not ``ScaledLaplacePrior(noise_update="variances-fixed")``,
  see :mod:`sparsebayes.models.priors.typeii`), never lower ``L``, each
  step's :class:`~sparsebayes.inference.engines.typeii_moves.Info` gain is at most its rise, and the engine's
  ``L`` is the directly computed ``log N(y; 0, σ²I + ΦVΦᵀ)`` plus the hierarchy's hyperprior terms.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import Predictive
from scipy import integrate, optimize, stats

from sparsebayes.models.likelihoods import GaussianLikelihood
from sparsebayes.models.priors import CAPABILITIES, require, supports

from sparsebayes.inference.engines import em
from sparsebayes.inference.engines.em import EMData, log_posterior
from sparsebayes.inference.engines.em_slices import column_norms

__all__ = ["check_hierarchy", "hierarchy_checks", "check_capability_errors", "check_e_step_quadrature",
           "check_e_step_variance_quadrature", "check_marginal_quadrature", "check_twin_draws_marginal",
           "check_model_equals_solver", "check_em_objective_monotone", "check_typeii_optimum",
           "check_typeii_lambda_update", "check_typeii_evidence"]

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
    model = em.EMModel(prior, GaussianLikelihood())
    _, info = em.trace(em.init(data, model, beta0, np.var(y)), data, model, controls,
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


#: (s, q, λ, σ²) at which the type-II pieces are checked: pruned (q² − s ≤ 2κ) and kept bases, small and large λ.
TYPEII_POINTS = ((1.0, 0.5, 0.3, 1.0), (2.0, 3.0, 0.3, 1.0), (0.7, 4.0, 2.5, 0.4), (5.0, 2.6, 0.05, 2.0),
                 (0.2, 1.1, 8.0, 0.1))


def _ell(v, s, q, kappa):
    """004 eq. 14: ``½[−log(1 + vs) + q²v/(1 + vs)] − κv``, written out (no engine code)."""
    return 0.5 * (-np.log1p(v * s) + q * q * v / (1.0 + v * s)) - kappa * v


def _ell_neg(v, s, q, kappa):
    return -_ell(v, s, q, kappa)


def check_typeii_optimum(prior):
    from sparsebayes.models.priors.typeii import optimal_variance, variance_objective_change

    for s, q, lam, noise_var in TYPEII_POINTS:
        kappa = float(prior.typeii_penalty(jnp.asarray(lam), jnp.asarray(noise_var)))
        assert kappa >= 0.0, f"{prior}: negative penalty {kappa}"
        # κ is the linear penalty of the hyperprior terms in one variance: minus their derivative in Σv
        # (λ, σ² and the active count held), by a central difference
        h, total = 1e-5, 3.0
        terms = [float(prior.typeii_log_hyperprior(jnp.asarray(total + e), jnp.asarray(lam), jnp.asarray(noise_var),
                                                   jnp.asarray(3))) for e in (h, -h)]
        slope = (terms[0] - terms[1]) / (2 * h)
        assert np.isclose(kappa, -slope, rtol=1e-6, atol=1e-8), \
            f"{prior}: penalty κ = {kappa}, but the hyperprior terms fall by {-slope} per unit of variance"
        got = float(optimal_variance(s, q, kappa))
        top = 10.0 * q * q / (s * s) + 10.0
        res = optimize.minimize_scalar(_ell_neg, args=(s, q, kappa), bounds=(0.0, top), method="bounded",
                                       options={"xatol": 1e-12 * top})
        best = max(-res.fun, _ell(0.0, s, q, kappa))
        assert _ell(got, s, q, kappa) >= best - 1e-9, f"{prior}: v = {got} is not the maximiser at (s, q, κ) = {(s, q, kappa)}"
        for v_old in (0.0, 0.3, 2.0):
            gain = float(variance_objective_change(got, v_old, s, q, kappa))
            assert np.isclose(gain, _ell(got, s, q, kappa) - _ell(v_old, s, q, kappa), rtol=1e-9, atol=1e-12), \
                f"{prior}: the gain from v = {v_old} is {gain}"


def check_typeii_lambda_update(prior):
    for sum_var, noise_var, n_active in ((0.7, 1.0, 2), (12.0, 0.3, 5), (0.05, 2.0, 9)):
        args = (jnp.asarray(sum_var), jnp.asarray(noise_var), jnp.asarray(n_active))
        lam = float(prior.typeii_update_lambda(*args))

        def value(lam_, args=args):
            return float(prior.typeii_log_hyperprior(args[0], jnp.asarray(lam_), args[1], args[2]))

        if value(1.0) == value(3.0):  # no λ (ARD): nothing depends on it
            assert lam == 0.0, f"{prior}: λ = {lam} for a hyperprior that does not depend on λ"
            assert not prior.has_rate, f"{prior}: has_rate is True, but its hyperprior does not depend on λ"
            continue
        assert prior.has_rate, f"{prior}: has_rate is False, but its hyperprior depends on λ (the estimators drop it)"
        res = optimize.minimize_scalar(lambda t: -value(np.exp(t)), bracket=(-5.0, 5.0), tol=1e-12)
        assert lam > 0 and value(lam) >= -res.fun - 1e-9 * max(1.0, abs(res.fun)), \
            f"{prior}: λ = {lam} gives {value(lam)}, a search over λ {-res.fun} at λ = {np.exp(res.x)}"


def check_typeii_evidence(prior, n_steps=25):
    from sparsebayes.inference.engines import typeii, typeii_exact

    H, y = _regression(seed=2, n=30, p=8)
    H, y = H - H.mean(0), y - y.mean()
    prior = prior.replace(lambda_update="profiled")
    data, model = typeii_exact.make_data(H, y), typeii.make_model(prior)
    start = typeii.init(data, model, H.shape[1], params=0.1 * np.var(y))
    state, info = typeii.trace(start, data, model, n_steps=n_steps, tol=1e-9)
    L = np.r_[float(start.objective), np.asarray(info.objective)]
    rise, moved = np.diff(L), np.asarray(info.kind) < 2
    slack = 1e-8 * np.maximum(1.0, np.abs(L[1:]))
    assert moved.sum() >= 2, f"{prior}: the engine moved {moved.sum()} times"
    assert np.all(rise >= -slack), f"{prior}: L fell by {-rise.min():.3g}"
    assert np.all(rise[moved] >= np.asarray(info.gain)[moved] - slack[moved]), f"{prior}: a step rose less than its gain"
    v, noise_var, lam = np.asarray(state.var), float(state.noise_var), float(state.lam)
    cov = noise_var * np.eye(y.size) + (H * v) @ H.T
    direct = stats.multivariate_normal(np.zeros(y.size), cov).logpdf(y) + float(
        prior.typeii_log_hyperprior(jnp.asarray(v.sum()), jnp.asarray(lam), jnp.asarray(noise_var),
                                    jnp.asarray(int((v > 0).sum()))))
    assert np.isclose(float(state.objective), direct, rtol=1e-9, atol=1e-9), \
        f"{prior}: the engine's L {float(state.objective)} against the direct {direct}"


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
    if supports(prior, "type2"):
        yield "typeii_optimum", lambda: check_typeii_optimum(prior)
        yield "typeii_lambda_update", lambda: check_typeii_lambda_update(prior)
        yield "typeii_evidence", lambda: check_typeii_evidence(prior)


def check_hierarchy(prior):
    """Run every applicable check of :func:`hierarchy_checks` on ``prior``; returns the names run."""
    names = []
    for name, check in hierarchy_checks(prior):
        check()
        names.append(name)
    return names
