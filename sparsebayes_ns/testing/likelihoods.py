"""The conformance checks every likelihood object must pass (the protocol of
:mod:`sparsebayes.models.likelihoods`), as :mod:`sparsebayes.testing.hierarchies` is for hierarchies.

:func:`likelihood_checks` yields ``(name, check)`` pairs for one likelihood object, chosen by the
pieces it has, and :func:`check_likelihood` runs them all; the test suite parametrizes them over
:data:`~sparsebayes.models.likelihoods.LIKELIHOODS`, so a newly registered likelihood is tested with
no other change, and a user can check their own object before registering it. The data are the
likelihood's own draws (``sample``) at random linear predictors ``η``. Each check raises
``AssertionError`` with the numbers when it fails:

* ``score_autodiff``: ``score`` is ``∂/∂η log_lik`` (JAX autodiff of ``log_lik``);
* ``curvature``: ``curvature`` is ``−∂²/∂η² log_lik`` by autodiff (``curvature_kind = "observed"``),
  or the Fisher information ``E[score²]`` over the likelihood's own draws, within Monte Carlo error
  (``"fisher"``);
* ``working_tangent``: EM's working surrogate ``−½ w (z − η')²`` has the log likelihood's slope at
  the current ``η``: ``w (z − η) = score``;
* ``working_minorizes``: where the likelihood claims a monotone EM (``monotone_em``), the surrogate's
  rise from ``η`` to any ``η'`` is at most the log likelihood's (the surrogate is below it, touching
  at ``η``); without the claim, the working weights are Fisher scoring's (``w = curvature``);
* ``params_update_ascent``: ``update_params`` never lowers the log likelihood in the likelihood's
  own parameter, from starts below and above its maximizer;
* ``neg_log_lik``: EM's objective term is ``−Σ log_lik`` up to a constant in ``η``, and padding rows
  after ``n_obs`` add nothing to it;
* ``observe_log_density``: the NumPyro observation statement's log density
  (``numpyro.infer.util.log_density``) equals ``Σ log_lik``;
* ``predictive_moments``: the predictive draws' mean and variance are ``mean`` and ``variance``
  (within five Monte Carlo standard errors);
* ``declarations``: what the likelihood states of itself for the samplers
  (:data:`~sparsebayes.models.likelihoods.registry.LIKELIHOOD_DECLARATIONS`) holds: an
  ``intercept_prior`` among the known ones; a flat one only where its own log likelihood falls without
  bound as the intercept moves either way (so the likelihood alone makes its posterior proper); and
  ``conjugate_noise`` only for ``log_lik = log N(y | η, params)`` (scipy's normal density), a
  parameter ``params`` under a flat prior (its ``sample_params`` site has the same density at every
  value) and a flat intercept, which the Gaussian sweep that the claim selects assumes;
* ``em_objective_monotone``: EM (:mod:`sparsebayes.inference.engines.em`) with the likelihood under a Laplace
  prior, its parameter estimated, never lowers its objective (by the surrogate's bound where
  ``monotone_em``, by the engine's step-halving otherwise).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats
from numpyro.infer.util import log_density

from sparsebayes.models.likelihoods import conjugate_noise, flat_intercept, identity_link
from sparsebayes.models.priors import LaplacePrior

from sparsebayes.inference.engines import em

__all__ = ["check_likelihood", "likelihood_checks", "example", "check_score_autodiff", "check_curvature",
           "check_working_tangent", "check_working_minorizes", "check_params_update_ascent", "check_neg_log_lik",
           "check_observe_log_density", "check_predictive_moments", "check_declarations", "check_em_objective_monotone"]

#: Rows of the checks' data, and predictive draws per row for the moments.
N_ROWS = 24
N_DRAWS = 20_000
#: The value of a likelihood's own parameter in the checks (σ², a squared scale, a dispersion).
PARAMS = 1.7


def _params(lik):
    return None if getattr(lik, "param_name", None) is None else PARAMS


def example(lik, n=N_ROWS, seed=0):
    """``(y, η, params)``: ``η`` uniform on ``[−2, 2]`` (a vector per row of width 2 for a likelihood
    with ``eta_ndim = 1``) and ``y`` the likelihood's own draw there."""
    rng = np.random.default_rng(seed)
    shape = (n,) if getattr(lik, "eta_ndim", 0) == 0 else (n, 2)
    eta = jnp.asarray(rng.uniform(-2.0, 2.0, shape))
    params = _params(lik)
    y = lik.sample(jax.random.PRNGKey(seed), eta, params)
    return y, eta, params


def _log_lik_sum(lik, y, params):
    return lambda eta: jnp.sum(lik.log_lik(y, eta, params))


def check_score_autodiff(lik):
    y, eta, params = example(lik)
    auto = jax.jit(jax.grad(_log_lik_sum(lik, y, params)))(eta)
    np.testing.assert_allclose(np.asarray(lik.score(y, eta, params)), np.asarray(auto), rtol=1e-10, atol=1e-12,
                               err_msg=f"{type(lik).__name__}.score is not the derivative of log_lik")


def _per_row_second_derivative(lik, y, eta, params):
    second = jax.grad(jax.grad(lambda e, t: lik.log_lik(t, e, params)))
    return jax.jit(jax.vmap(second))(eta, y)


def check_curvature(lik):
    y, eta, params = example(lik)
    got = np.asarray(lik.curvature(y, eta, params))
    if getattr(lik, "curvature_kind", "observed") == "observed":
        want = -np.asarray(_per_row_second_derivative(lik, y, eta, params))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{type(lik).__name__}.curvature is not −∂²/∂η² log_lik")
        return
    # Fisher information E[score²] over draws at each η (a few rows, many draws each)
    rows = eta[:4]
    reps = jnp.repeat(rows[None, :], N_DRAWS, axis=0).reshape(-1)
    draws = jax.jit(lik.sample)(jax.random.PRNGKey(7), reps, params)
    sq = np.asarray(lik.score(draws, reps, params)).reshape(N_DRAWS, -1) ** 2
    mc, se = sq.mean(axis=0), sq.std(axis=0) / np.sqrt(N_DRAWS)
    fisher = np.asarray(lik.curvature(y[:4], rows, params))
    assert np.all(np.abs(mc - fisher) <= 5 * se + 1e-12), (
        f"{type(lik).__name__}.curvature {fisher} is not the Fisher information E[score²] ≈ {mc} (se {se})")


def check_working_tangent(lik):
    y, eta, params = example(lik)
    z, w = lik.em_working(y, eta, params)
    np.testing.assert_allclose(np.asarray(w * (z - eta)), np.asarray(lik.score(y, eta, params)), rtol=1e-9,
                               atol=1e-10, err_msg=f"{type(lik).__name__}.em_working is not tangent at η")
    assert np.all(np.asarray(w) > 0), f"{type(lik).__name__}.em_working gave weights ≤ 0"


def check_working_minorizes(lik):
    y, eta, params = example(lik)
    z, w = lik.em_working(y, eta, params)
    if not getattr(lik, "monotone_em", False):  # IRLS: Fisher scoring's weights
        np.testing.assert_allclose(np.asarray(w), np.asarray(lik.curvature(y, eta, params)), rtol=1e-10,
                                   err_msg=f"{type(lik).__name__}: a non-monotone EM's weights are not Fisher scoring's")
        return
    base = lik.log_lik(y, eta, params)
    for shift in (-6.0, -2.0, -0.5, -1e-3, 1e-3, 0.5, 2.0, 6.0):
        other = eta + shift
        rise = np.asarray(lik.log_lik(y, other, params) - base)
        surrogate = np.asarray(-0.5 * w * ((z - other) ** 2 - (z - eta) ** 2))
        slack = 1e-9 * (1.0 + np.abs(rise))
        assert np.all(rise >= surrogate - slack), (
            f"{type(lik).__name__}: the EM surrogate rises above the log likelihood at η + {shift} "
            f"by {np.max(surrogate - rise):.3g}: it is not a minorizer (set monotone_em = False)")


def check_params_update_ascent(lik):
    y, eta, params = example(lik)
    total = lambda p: float(jnp.sum(lik.log_lik(y, eta, p)))  # noqa: E731
    for start in (0.05 * params, params, 20.0 * params):
        new = float(lik.update_params(y, eta, jnp.asarray(start)))
        assert np.isfinite(new) and new > 0, f"{type(lik).__name__}.update_params gave {new} from {start}"
        assert total(new) >= total(start) - 1e-9 * abs(total(start)), (
            f"{type(lik).__name__}.update_params lowered the log likelihood: {total(start)} at {start} → "
            f"{total(new)} at {new}")


def check_neg_log_lik(lik):
    y, eta, params = example(lik)
    other = eta + 0.3
    diffs = [float(lik.neg_log_lik(y, e, params) + jnp.sum(lik.log_lik(y, e, params))) for e in (eta, other)]
    assert abs(diffs[0] - diffs[1]) <= 1e-9 * (1.0 + abs(diffs[0])), (
        f"{type(lik).__name__}.neg_log_lik is not −Σ log_lik up to a constant: offsets {diffs}")
    padded_y = jnp.concatenate([y, jnp.zeros_like(y[:5])])
    padded_eta = jnp.concatenate([eta, jnp.zeros_like(eta[:5])])
    got = float(lik.neg_log_lik(padded_y, padded_eta, params, n_obs=y.shape[0]))
    want = float(lik.neg_log_lik(y, eta, params, n_obs=y.shape[0]))
    assert got == np.float64(want) or abs(got - want) <= 1e-12 * (1.0 + abs(want)), (
        f"{type(lik).__name__}.neg_log_lik counts padding rows after n_obs: {got} vs {want}")


def check_observe_log_density(lik):
    y, eta, params = example(lik)
    got, _ = log_density(lambda: lik.observe("y", eta, y, params), (), {}, {})
    want = float(jnp.sum(lik.log_lik(y, eta, params)))
    assert float(got) == np.float64(want) or abs(float(got) - want) <= 1e-9 * (1.0 + abs(want)), (
        f"{type(lik).__name__}.observe's log density {float(got)} is not Σ log_lik = {want}")


def check_predictive_moments(lik):
    _, eta, params = example(lik, n=4)
    reps = jnp.repeat(eta[None], N_DRAWS, axis=0)
    draws = np.asarray(jax.jit(lik.sample)(jax.random.PRNGKey(3), reps, params))
    mean, var = np.asarray(lik.mean(eta, params)), np.asarray(lik.variance(eta, params))
    m_hat, v_hat = draws.mean(axis=0), draws.var(axis=0)
    se_m = np.sqrt(var / N_DRAWS)
    fourth = ((draws - mean) ** 4).mean(axis=0)
    se_v = np.sqrt(np.maximum(fourth - var**2, 0.0) / N_DRAWS)
    assert np.all(np.abs(m_hat - mean) <= 5 * se_m + 1e-12), (
        f"{type(lik).__name__}: predictive draws' mean {m_hat} vs mean() {mean} (se {se_m})")
    assert np.all(np.abs(v_hat - var) <= 5 * se_v + 1e-12), (
        f"{type(lik).__name__}: predictive draws' variance {v_hat} vs variance() {var} (se {se_v})")


def check_declarations(lik):
    name = type(lik).__name__
    flat = flat_intercept(lik)  # a ValueError naming the values for an unknown intercept_prior
    y, eta, params = example(lik)
    if flat:  # the intercept c alone: Σ log p(y | η + c) → −∞ as c → ±∞
        at = lambda c: float(jnp.sum(lik.log_lik(y, eta + c, params)))  # noqa: E731
        for sign in (-1.0, 1.0):
            assert at(1e3 * sign) < at(1e2 * sign) < at(0.0) - 1.0, (
                f"{name} states intercept_prior = 'flat', but its log likelihood does not fall without bound as "
                f"the intercept moves {'down' if sign < 0 else 'up'}: a flat intercept prior can be improper")
    if identity_link(lik):  # E[y | η] = η, what reading effects in units of y assumes
        np.testing.assert_allclose(np.asarray(lik.mean(eta, params)), np.asarray(eta), rtol=1e-12, atol=0,
                                   err_msg=f"{name} states identity_link, but its mean is not η")
    if not conjugate_noise(lik):
        return
    assert getattr(lik, "param_name", None) is not None and flat, (
        f"{name} states conjugate_noise: it needs its own parameter σ² (param_name) and intercept_prior = 'flat' "
        "(the Gaussian sweep integrates a flat-prior intercept out)")
    want = scipy.stats.norm.logpdf(np.asarray(y), np.asarray(eta), np.sqrt(params))
    np.testing.assert_allclose(np.asarray(lik.log_lik(y, eta, params)), want, rtol=1e-10, atol=1e-12,
                               err_msg=f"{name} states conjugate_noise, but its log_lik is not log N(y | η, params)")
    densities = [float(log_density(lik.sample_params, (), {}, {lik.param_name: v})[0]) for v in (0.3, 1.0, 7.0)]
    assert np.ptp(densities) == 0.0, (
        f"{name} states conjugate_noise, but the prior of {lik.param_name} is not flat: log densities {densities} "
        "at 0.3, 1, 7")
    # EM on sufficient statistics (the working set, em_working_set): z = y and w = 1/σ² on every row, and
    # the σ² update ‖y − η‖²/n (000 eq. 12), a function of the residual sum of squares alone
    z, w = lik.em_working(y, eta, params)
    assert getattr(lik, "constant_weight", False) and np.allclose(np.asarray(z), np.asarray(y), rtol=1e-12, atol=0) \
        and np.allclose(np.asarray(w), 1.0 / params, rtol=1e-12, atol=0), (
        f"{name} states conjugate_noise, but its EM working response and weights are not (y, 1/σ²) on every row "
        "(constant_weight): EM on sufficient statistics needs them")
    r = np.asarray(y) - np.asarray(eta)
    np.testing.assert_allclose(float(lik.update_params(y, eta, params)), r @ r / r.size, rtol=1e-10,
                               err_msg=f"{name} states conjugate_noise, but its σ² update is not ‖y − η‖²/n")


def check_em_objective_monotone(lik):
    rng = np.random.default_rng(4)
    n, p = 40, 5
    H = np.c_[np.ones(n), rng.standard_normal((n, p - 1))]
    beta = np.array([0.3, 0.8, -0.6, 0.0, 0.0])
    params = _params(lik)
    y = np.asarray(lik.sample(jax.random.PRNGKey(5), jnp.asarray(H @ beta), params))
    data = em.EMData(jnp.asarray(H), jnp.asarray(y), jnp.asarray(H.T @ H))
    start = em.RidgeStart(H)(np.asarray(lik.init_target(y)) if hasattr(lik, "init_target") else y)
    s0 = float(lik.init_params(y))
    estimate = getattr(lik, "param_name", None) is not None and getattr(lik, "fixed_noise_var", None) is None
    model = em.EMModel(LaplacePrior(2.0), lik)
    _, info = em.trace(em.init(data, model, start, s0), data, model, em.EMControls(prune_tol=1e-8),
                       n_steps=25, estimate_noise=estimate)
    obj = np.asarray(info.objective)
    assert np.all(np.isfinite(obj)), f"{type(lik).__name__}: EM objective not finite: {obj}"
    drops = np.diff(obj)
    assert np.all(drops >= -1e-9 * np.maximum(1.0, np.abs(obj[1:]))), (
        f"{type(lik).__name__}: the EM objective fell by {-drops.min():.3g}")


#: ``(pieces, name, check)``, in the order the checks run: a check applies to a likelihood that has every
#: one of its pieces (an attribute that is not None: ``param_name`` is None for a likelihood without a
#: parameter of its own).
_CHECKS = (
    (("log_lik", "score", "sample"), "score_autodiff", check_score_autodiff),
    (("log_lik", "curvature", "sample"), "curvature", check_curvature),
    (("em_working", "score", "sample"), "working_tangent", check_working_tangent),
    (("em_working", "score", "sample"), "working_minorizes", check_working_minorizes),
    (("param_name", "update_params", "log_lik", "sample"), "params_update_ascent", check_params_update_ascent),
    (("neg_log_lik", "log_lik", "sample"), "neg_log_lik", check_neg_log_lik),
    (("observe", "log_lik", "sample"), "observe_log_density", check_observe_log_density),
    (("sample", "mean", "variance"), "predictive_moments", check_predictive_moments),
    (("log_lik", "sample"), "declarations", check_declarations),
    (("em_working", "update_params", "neg_log_lik", "init_params", "sample"), "em_objective_monotone",
     check_em_objective_monotone),
)


def likelihood_checks(lik):
    """``(name, check)`` for each check that applies to ``lik`` (by the pieces it has, :data:`_CHECKS`)."""
    for pieces, name, check in _CHECKS:
        if all(getattr(lik, piece, None) is not None for piece in pieces):
            yield name, check


def check_likelihood(lik):
    """Run every applicable check on ``lik`` (the first failure raises ``AssertionError``); returns the
    names of the checks run."""
    names = []
    for name, check in likelihood_checks(lik):
        check(lik)
        names.append(name)
    return names
