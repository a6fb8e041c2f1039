"""The conjugate augmentations: the truncated normal against scipy, the NB dispersion move against a
quadrature of its conditional, and each augmentation's exact Gibbs sampler on a tiny model (a dense
β draw written here) against the quadrature of the posterior (scalar β) and NumPyro's NUTS on the
same model (p = 2, slow), with a deliberately wrong augmentation that the same checks reject."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from draws_agreement import mcse_agreement
from jax.scipy.linalg import cho_solve, solve_triangular
from scipy import stats

from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.engines.gibbs_augment import (logistic_augment, negative_binomial_augment,
                                                 negative_binomial_concentration_step, negative_binomial_log_lik,
                                                 probit_augment, student_t_augment, student_t_scale2_draw,
                                                 truncated_normal_above)

PRIOR_VAR = 4.0  # β_j ~ N(0, 4) in every model here


# ------------------------------------------------------------------------------------------------
# truncated normal (probit latents)
# ------------------------------------------------------------------------------------------------

A_GRID = (-40.0, -3.0, 0.0, 1.5, 2.99, 3.01, 8.0, 40.0)


def test_truncated_normal_matches_scipy_far_into_the_tails():
    n = 2000
    a = jnp.repeat(jnp.asarray(A_GRID), n)
    x = np.asarray(jax.jit(truncated_normal_above)(jax.random.PRNGKey(0), a)).reshape(len(A_GRID), n)
    p = []
    for ai, xi in zip(A_GRID, x):
        assert np.all(np.isfinite(xi)) and np.all(xi >= ai)
        p.append(stats.kstest(xi, stats.truncnorm(ai, np.inf).cdf).pvalue)
    assert min(p) > 1e-3 / len(p), dict(zip(A_GRID, np.round(p, 4)))
    # the same check sees a truncation point off by a tenth of a standard deviation
    wrong = [stats.kstest(xi, stats.truncnorm(ai + 0.1, np.inf).cdf).pvalue for ai, xi in zip(A_GRID[2:], x[2:])]
    assert max(wrong) < 1e-3


def test_probit_latents_are_truncated_by_the_label():
    eta = jnp.asarray([-40.0, -2.0, 0.5, 40.0])
    n = 1500
    draw = jax.jit(probit_augment)
    for label in (0, 1):
        y = jnp.full(eta.size * n, float(label))
        u, omega = draw(jax.random.PRNGKey(label), y, jnp.repeat(eta, n))
        u = np.asarray(u).reshape(eta.size, n)
        assert np.all(np.asarray(omega) == 1.0)
        for e, ui in zip(np.asarray(eta), u):
            lo, hi = (-np.inf, -e) if label == 0 else (-e, np.inf)  # standardized bounds of u − η
            assert np.all(ui > 0) if label else np.all(ui <= 0)
            assert stats.kstest(ui - e, stats.truncnorm(lo, hi).cdf).pvalue > 1e-4, (label, e)


# ------------------------------------------------------------------------------------------------
# negative binomial: parametrization and the dispersion move
# ------------------------------------------------------------------------------------------------

def test_negative_binomial_log_lik_is_numpyros_negative_binomial2():
    import numpyro.distributions as dist

    y = jnp.asarray([0.0, 1.0, 3.0, 17.0, 250.0])
    eta = jnp.asarray([-2.0, 0.3, 1.0, 2.5, 5.0])
    for r in (0.4, 2.0, 30.0):
        np.testing.assert_allclose(negative_binomial_log_lik(y, eta, r),
                                   dist.NegativeBinomial2(jnp.exp(eta), r).log_prob(y), rtol=1e-7)


def _concentration_conditional(y, eta, shape, rate, grid):
    """The normalized conditional of r given η on a grid: NB likelihood times the Gamma(shape, rate) prior."""
    logp = np.array(jax.vmap(lambda g: jnp.sum(negative_binomial_log_lik(y, eta, g)))(jnp.asarray(grid)))
    logp += (shape - 1) * np.log(grid) - rate * grid
    w = np.exp(logp - logp.max())
    return w / w.sum()


@pytest.mark.parametrize("method", ["slice", "random_walk"])
def test_concentration_move_samples_its_conditional(method):
    """The chain of r given η (the slice move on log r, or the random walk) against the normalized
    conditional on a grid (quadrature)."""
    rng = np.random.default_rng(0)
    eta = jnp.asarray(1.0 + 0.5 * rng.standard_normal(60))
    y = jnp.asarray(rng.negative_binomial(3.0, 3.0 / (3.0 + np.exp(np.asarray(eta)))), dtype=float)
    shape, rate = 2.0, 0.5

    def step(r, k):
        r, _ = negative_binomial_concentration_step(k, y, eta, r, prior_shape=shape, prior_rate=rate, method=method,
                                                    step_size=0.4)
        return r, r

    keys = jax.random.split(jax.random.PRNGKey(1), 4 * 5000).reshape(4, 5000, 2)
    draws = np.asarray(jax.jit(jax.vmap(lambda ks: jax.lax.scan(step, 2.0, ks)[1]))(keys))[:, 500:]
    grid = np.linspace(0.05, 40.0, 8000)
    w = _concentration_conditional(y, eta, shape, rate, grid)
    mean, sd = np.sum(w * grid), np.sqrt(np.sum(w * grid ** 2) - np.sum(w * grid) ** 2)
    idata = compat.from_dict({"posterior": {"r": draws}})
    s = compat.summary(idata, var_names=["r"])
    assert abs(s["mean"].iloc[0] - mean) < 4 * s["mcse_mean"].iloc[0], (s, mean)
    assert abs(s["sd"].iloc[0] - sd) < 4 * s["mcse_sd"].iloc[0], (s, sd)
    if method == "slice":  # a draw from the conditional in about one step: its chains mix far faster
        assert s["ess_bulk"].iloc[0] > 0.3 * draws.size, s


@pytest.mark.parametrize("n,p", [(30, 4), (6, 9)], ids=["woodbury", "n-by-n"])
def test_probit_expansion_scale_draws_g_from_its_conditional(n, p):
    """The PX-DA scale: ``g z`` with ``g² zᵀΣ⁻¹z ~ χ²_n`` (``g² ~ Gamma(n/2, zᵀΣ⁻¹z/2)``), ``Σ = I + X diag(v) Xᵀ``
    formed and solved densely here (NumPy), against SciPy's χ² by Kolmogorov–Smirnov, on both of the
    function's systems (p ≤ n: Woodbury on p × p; p > n: Σ itself)."""
    from scipy import stats

    from sparsebayes.inference.engines.gibbs_augment import probit_expansion_scale

    rng = np.random.default_rng(6)
    X = rng.normal(size=(n, p))
    v = rng.uniform(0.1, 3.0, p)
    z = rng.normal(size=n) * 2.0
    quad = z @ np.linalg.solve(np.eye(n) + (X * v) @ X.T, z)
    keys = jax.random.split(jax.random.PRNGKey(7), 4000)
    out = np.asarray(jax.jit(jax.vmap(lambda k: probit_expansion_scale(k, z, X, v)))(keys))
    g = out[:, 0] / z[0]
    np.testing.assert_allclose(out, g[:, None] * z[None, :], rtol=1e-12)  # one scale for every latent
    assert np.all(g > 0)
    assert stats.kstest(g ** 2 * quad, stats.chi2(n).cdf).pvalue > 1e-3


def test_concentration_move_keeps_r_under_its_bound():
    """Counts with no over-dispersion (Poisson) under a nearly flat prior: the conditional of r rises to the
    Poisson limit, and the move keeps r at most ``max_concentration``, a start above it moved onto it; the
    draws follow the conditional truncated there (quadrature on log r)."""
    rng = np.random.default_rng(2)
    eta = jnp.asarray(0.3 * rng.standard_normal(50))
    y = jnp.asarray(rng.poisson(np.exp(np.asarray(eta))), dtype=float)
    bound = 50.0

    def step(r, k):
        r, _ = negative_binomial_concentration_step(k, y, eta, r, prior_shape=1.0, prior_rate=1e-3,
                                                    max_concentration=bound)
        return r, r

    keys = jax.random.split(jax.random.PRNGKey(3), 4 * 3000).reshape(4, 3000, 2)
    draws = np.asarray(jax.jit(jax.vmap(lambda ks: jax.lax.scan(step, 1e8, ks)[1]))(keys))
    assert np.all(np.isfinite(draws)) and draws.max() <= bound and draws[:, 0].max() <= bound
    draws = draws[:, 300:]
    x = np.linspace(np.log(1e-3), np.log(bound), 8000)  # log r, the Jacobian r in the density
    w = _concentration_conditional(y, eta, 1.0, 1e-3, np.exp(x)) * np.exp(x)
    w /= w.sum()
    mean = np.sum(w * x)
    s = compat.summary(compat.from_dict({"posterior": {"x": np.log(draws)}}), var_names=["x"])
    assert abs(s["mean"].iloc[0] - mean) < 4 * s["mcse_mean"].iloc[0], (s, mean)


# ------------------------------------------------------------------------------------------------
# Gibbs with each augmentation against NUTS on the same model
# ------------------------------------------------------------------------------------------------

def _design(n, p, seed):
    """An intercept and p − 1 standard normal columns; with p = 1 one column N(0.5, 1)."""
    rng = np.random.default_rng(seed)
    if p == 1:
        return rng, 0.5 + rng.standard_normal((n, 1))
    return rng, np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])


def _data(kind, p):
    beta = {"probit": [-0.3, 1.2], "logistic": [-0.3, 1.2], "negbin": [1.0, 0.6], "student_t": [0.5, -1.0]}[kind]
    beta = np.array(beta[-p:])
    n = 50 if kind in ("probit", "logistic") else 40
    rng, X = _design(n, p, {"probit": 1, "logistic": 1, "negbin": 2, "student_t": 3}[kind])
    eta = X @ beta
    if kind in ("probit", "logistic"):
        prob = stats.norm.cdf(eta) if kind == "probit" else 1 / (1 + np.exp(-eta))
        return X, (rng.uniform(size=n) < prob).astype(float)
    if kind == "negbin":
        return X, rng.negative_binomial(NB_R, NB_R / (NB_R + np.exp(eta))).astype(float)
    return X, eta + 0.7 * rng.standard_t(T_DF, size=n)


NB_R = 2.0
T_DF = 4.0
T_PRIOR = (2.0, 1.0)  # s² ~ InvGamma(2, 1)


def _augment(kind):
    """(augment(key, y, eta, s2, wrong), update of s2): the augmentation under test and, at
    wrong = 1, a deliberately wrong one, traced (one compiled program serves both)."""
    keep = lambda k, y, eta, omega, s2: s2  # noqa: E731  (no parameter of its own)
    if kind == "probit":  # wrong: the latent's mean halved
        return lambda k, y, eta, s2, w: probit_augment(k, y, eta * (1.0 - 0.5 * w)), keep
    if kind == "logistic":  # wrong: PG(1, 0) for PG(1, η)
        return lambda k, y, eta, s2, w: logistic_augment(k, y, eta * (1.0 - w)), keep
    if kind == "negbin":  # wrong: PG(y + r, η), the offset −log r left out of the tilt
        return lambda k, y, eta, s2, w: negative_binomial_augment(k, y, eta + w * math.log(NB_R), NB_R), keep

    def update(k, y, eta, omega, s2):  # s² | λ, β; λ = ω s²
        return student_t_scale2_draw(k, y, eta, omega * s2, prior_shape=T_PRIOR[0], prior_rate=T_PRIOR[1])

    # wrong: the latent scales drawn with 3ν degrees of freedom
    return lambda k, y, eta, s2, w: student_t_augment(k, y, eta, T_DF * (1.0 + 2.0 * w), jnp.sqrt(s2)), update


def _gibbs(kind, X, y, wrong, *, sweeps, chains=4, burn=200, seed=0):
    """Exact Gibbs on (β ~ N(0, 4 I), the likelihood by its augmentation): β | z, ω drawn densely,
    N(A⁻¹XᵀΩz, A⁻¹) with A = XᵀΩX + I/4, by a Cholesky factor of A; the t scale by its update."""
    augment, update = _augment(kind)
    X, y = jnp.asarray(X), jnp.asarray(y)
    p = X.shape[1]

    def sweep(carry, k):
        beta, s2, w = carry
        k_aug, k_beta, k_par = jax.random.split(k, 3)
        z, omega = augment(k_aug, y, X @ beta, s2, w)
        chol = jnp.linalg.cholesky(X.T @ (omega[:, None] * X) + jnp.eye(p) / PRIOR_VAR)
        mean = cho_solve((chol, True), X.T @ (omega * z))
        beta = mean + solve_triangular(chol.T, jax.random.normal(k_beta, (p,)), lower=False)
        s2 = update(k_par, y, X @ beta, omega, s2)
        return (beta, s2, w), (beta, s2)

    def chain(k, w):
        _, (beta, s2) = jax.lax.scan(sweep, (jnp.zeros(p), jnp.float64(1.0), w), jax.random.split(k, sweeps))
        return beta[burn:], s2[burn:]

    run = _gibbs_programs.setdefault((kind, sweeps, chains), jax.jit(jax.vmap(chain, in_axes=(0, None))))
    beta, s2 = run(jax.random.split(jax.random.PRNGKey(seed), chains), jnp.float64(wrong))
    post = {"beta": np.asarray(beta)}
    if kind == "student_t":
        post["s2"] = np.asarray(s2)
    return compat.from_dict({"posterior": post})


_gibbs_programs = {}


def _nuts(kind, X, y, *, samples, seed=0):
    import numpyro
    import numpyro.distributions as dist
    from jax.scipy.special import ndtr
    from numpyro.infer import MCMC, NUTS

    def model(X, y):
        beta = numpyro.sample("beta", dist.Normal(0.0, math.sqrt(PRIOR_VAR)).expand([X.shape[1]]).to_event(1))
        eta = X @ beta
        if kind == "probit":
            numpyro.sample("y", dist.Bernoulli(probs=ndtr(eta)), obs=y)
        elif kind == "logistic":
            numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)
        elif kind == "negbin":
            numpyro.sample("y", dist.NegativeBinomial2(jnp.exp(eta), NB_R), obs=y)
        else:
            s2 = numpyro.sample("s2", dist.InverseGamma(*T_PRIOR))
            numpyro.sample("y", dist.StudentT(T_DF, eta, jnp.sqrt(s2)), obs=y)

    mcmc = MCMC(NUTS(model), num_warmup=500, num_samples=samples, num_chains=2, chain_method="sequential",
                progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), jnp.asarray(X), jnp.asarray(y))
    return compat.from_numpyro(mcmc)


def _log_lik(kind, y, eta, s2=None):
    """Pointwise log likelihood by scipy (the oracle's own, apart from the module)."""
    if kind == "probit":
        return np.where(y == 1, stats.norm.logcdf(eta), stats.norm.logcdf(-eta))
    if kind == "logistic":
        return y * eta - np.logaddexp(0.0, eta)
    if kind == "negbin":
        return stats.nbinom.logpmf(y, NB_R, NB_R / (NB_R + np.exp(eta)))
    return stats.t.logpdf(y, T_DF, loc=eta, scale=np.sqrt(s2))


def _quadrature(kind, x, y):
    """Posterior mean and sd of the scalar β (and of s² for the t) by quadrature: β on 401 points
    of ±8 prior sd's, then on 401 points of ±12 posterior sd's around the mean so found; s² on 400
    points of log s² over (0.02, 20) (Jacobian s²)."""
    log_s2 = np.linspace(np.log(0.02), np.log(20.0), 400)
    s2 = np.exp(log_s2)

    def moments(b):
        eta = b[:, None] * x[None, :]
        logp = stats.norm.logpdf(b, scale=math.sqrt(PRIOR_VAR))
        if kind != "student_t":
            lp = logp + _log_lik(kind, y, eta).sum(1)
            w = np.exp(lp - lp.max())
            grids = {"beta": b}
        else:
            lp = (logp[:, None] + stats.invgamma.logpdf(s2, T_PRIOR[0], scale=T_PRIOR[1])[None, :] + log_s2[None, :]
                  + _log_lik(kind, y[None, None, :], eta[:, None, :], s2[None, :, None]).sum(-1))
            w = np.exp(lp - lp.max())
            grids = {"beta": b[:, None], "s2": s2[None, :]}
        w /= w.sum()
        return {name: (np.sum(w * v), np.sqrt(np.sum(w * v * v) - np.sum(w * v) ** 2)) for name, v in grids.items()}

    m, sd = moments(np.linspace(-8.0, 8.0, 401))["beta"]
    return moments(np.linspace(m - 12 * sd, m + 12 * sd, 401))


def _agreement_exact(idata, exact):
    """Largest |difference| / MCSE of the Gibbs posterior means and sds against exact values."""
    worst = 0.0
    for name, (mean, sd) in exact.items():
        s = compat.summary(idata, var_names=[name])
        worst = max(worst, abs(s["mean"].iloc[0] - mean) / s["mcse_mean"].iloc[0],
                    abs(s["sd"].iloc[0] - sd) / s["mcse_sd"].iloc[0])
    return worst


KINDS = ("probit", "logistic", "negbin", "student_t")
#: sweeps per chain (4 chains, 200 burnt) of the quick checks: more where a sweep is cheap (no
#: Pólya-Gamma loop); the t's has four statistics, two of them sds, whose MCSE is the noisiest
QUICK_SWEEPS = {"probit": 2400, "logistic": 1200, "negbin": 1200, "student_t": 2400}


@pytest.mark.parametrize("kind", KINDS)
def test_gibbs_with_the_augmentation_matches_quadrature(kind):
    """Scalar β: the Gibbs means and sds (and s²'s for the t) within 4 MCSE of the quadrature of
    the posterior; the wrong augmentation, through the same compiled sampler and the same check,
    lies outside."""
    X, y = _data(kind, 1)
    exact = _quadrature(kind, X[:, 0], y)
    sweeps = QUICK_SWEEPS[kind]
    assert _agreement_exact(_gibbs(kind, X, y, 0.0, sweeps=sweeps), exact) < 4
    assert _agreement_exact(_gibbs(kind, X, y, 1.0, sweeps=sweeps), exact) > 4


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_gibbs_with_the_augmentation_matches_nuts(kind):
    """p = 2 (intercept and slope): means and sds of β (and s² for the t) within 4 combined MCSE
    of NumPyro's NUTS on the same model; the wrong augmentation lies outside."""
    X, y = _data(kind, 2)
    names = ["beta", "s2"] if kind == "student_t" else ["beta"]
    nuts = _nuts(kind, X, y, samples=3000)
    assert mcse_agreement(_gibbs(kind, X, y, 0.0, sweeps=3200), nuts, names) < 4
    assert mcse_agreement(_gibbs(kind, X, y, 1.0, sweeps=3200), nuts, names) > 4


def test_bad_input_is_named():
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="only 0 and 1"):
        probit_augment(key, jnp.asarray([0.0, 2.0]), jnp.zeros(2))
    with pytest.raises(ValueError, match="non-negative integer counts"):
        negative_binomial_augment(key, jnp.asarray([1.5]), jnp.zeros(1), 2.0)
    with pytest.raises(ValueError, match="concentration"):
        negative_binomial_augment(key, jnp.asarray([1.0]), jnp.zeros(1), 0.0)
    with pytest.raises(ValueError, match="df"):
        student_t_augment(key, jnp.zeros(2), jnp.zeros(2), -1.0, 1.0)
    with pytest.raises(ValueError, match="method"):
        negative_binomial_concentration_step(key, jnp.ones(2), jnp.zeros(2), 2.0, method="metropolis")
    with pytest.raises(ValueError, match="max_concentration"):
        negative_binomial_concentration_step(key, jnp.ones(2), jnp.zeros(2), 2.0, max_concentration=0.0)
    with pytest.raises(ValueError, match=r"\[0, trials\]"):
        logistic_augment(key, jnp.asarray([2.0]), jnp.zeros(1))


def test_truncation_points_at_infinity_end():
    """a = −∞ is the untruncated normal; a = +∞ and NaN give NaN (the rejection loop must not run on them)."""
    x = np.asarray(jax.jit(truncated_normal_above)(jax.random.PRNGKey(0), jnp.asarray([-np.inf, np.inf, np.nan, 50.0])))
    assert np.isfinite(x[0]) and np.isnan(x[1:3]).all() and x[3] > 50.0
