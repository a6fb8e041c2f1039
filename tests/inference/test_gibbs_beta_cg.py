"""The prior-preconditioned conjugate-gradient β draw (:func:`sparsebayes.inference.engines.gibbs_beta.cg_draw`,
Nishimura & Suchard 2023): against a direct dense computation of the conditional (NumPy's solve and
inverse), in distribution against Rue's draw at ``p ≤ n`` and Bhattacharya's at ``p > n``, a too-loose
tolerance that the check must catch, its warm start, nothing ``p × p`` (or ``n × n``) in its program,
and (slow) SBC of the horseshoe Gibbs engine with ``beta_draw="cg"``."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from sparsebayes.inference.engines import gibbs_beta as gb

from .test_gibbs_beta import _dense, _draws, _problem

TIGHT = gb.CG(tol=1e-10)


def _whitened_ok(draws, mean, cov):
    """Whitened by the dense covariance the draws are N(0, I): mean within 5 SE, per-coordinate KS
    against the standard normal (Bonferroni), sample covariance near I. Returns the three verdicts."""
    p = draws.shape[1]
    white = (draws - mean) @ np.linalg.inv(np.linalg.cholesky(cov)).T
    mean_ok = np.all(np.abs(white.mean(0)) < 5 / np.sqrt(len(white)))
    ks_ok = min(stats.kstest(white[:, j], "norm").pvalue for j in range(p)) > 1e-3 / p
    cov_ok = np.allclose(np.cov(white.T), np.eye(p), atol=6 / np.sqrt(len(white)), rtol=0)
    return mean_ok, ks_ok, cov_ok


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n, p", [(9, 4), (4, 9)])
def test_the_cg_draw_has_the_dense_conditionals_mean_and_covariance(n, p, weighted):
    X, z, omega, v, s2 = _problem(n, p, weighted, seed=n + p)
    mean, cov = _dense(X, z, omega, v, s2)
    draws = _draws(TIGHT, X, z, omega, v, s2, 20000, seed=1)
    assert _whitened_ok(draws, mean, cov) == (True, True, True)


def test_with_zero_normals_the_cg_draw_is_the_conditional_mean_from_any_start():
    """``ξ₁ = ξ₂ = 0``: CG solves ``Aβ = XᵀΩz/σ²``, the dense mean, to its tolerance, from 0 and from a
    far warm start (which must not change the answer, only the iterations)."""
    X, z, omega, v, s2 = _problem(30, 12, True, seed=7)
    mean, _ = _dense(X, z, omega, v, s2)
    cold, k_cold = gb.cg_draw(np.zeros(12), np.zeros(30), X, z, omega, v, s2, tol=1e-12, return_iterations=True)
    far = gb.cg_draw(np.zeros(12), np.zeros(30), X, z, omega, v, s2, init=100 * np.ones(12), tol=1e-12)
    near, k_near = gb.cg_draw(np.zeros(12), np.zeros(30), X, z, omega, v, s2, init=mean + 1e-6, tol=1e-12,
                              return_iterations=True)
    for got in (cold, far, near):
        np.testing.assert_allclose(got, mean, rtol=1e-9, atol=1e-11)
    assert int(k_near) < int(k_cold)


@pytest.mark.parametrize("n, p, other, weighted", [(40, 10, "rue", False), (10, 40, "bhattacharya", True)])
def test_the_cg_draw_agrees_in_distribution_with_the_direct_draws(n, p, other, weighted):
    """Two-sample KS per coordinate and on a random projection, Bonferroni over the p + 1 tests,
    against Rue's draw where ``p ≤ n`` and Bhattacharya's where ``p > n`` (the default CG settings;
    the row weights on one, the dense test has both)."""
    X, z, omega, v, s2 = _problem(n, p, weighted, seed=11)
    cg = _draws("cg", X, z, omega, v, s2, 5000, seed=2)
    direct = _draws(other, X, z, omega, v, s2, 5000, seed=3)
    direction = np.random.default_rng(4).normal(size=p)
    pvals = [stats.ks_2samp(cg[:, j], direct[:, j]).pvalue for j in range(p)]
    pvals.append(stats.ks_2samp(cg @ direction, direct @ direction).pvalue)
    assert min(pvals) > 1e-3 / (p + 1), pvals


def test_a_too_loose_tolerance_is_caught():
    """The check has teeth: CG stopped at a relative residual of 0.5 (from β = 0) fails the dense
    conditional's check that the tight draw passes."""
    X, z, omega, v, s2 = _problem(9, 4, True, seed=13)
    mean, cov = _dense(X, z, omega, v, s2)
    loose = _draws(gb.CG(tol=0.5), X, z, omega, v, s2, 20000, seed=1)
    assert _whitened_ok(loose, mean, cov) != (True, True, True)


def _shapes(jaxpr):
    """Every shape of every variable of a jaxpr, its sub-jaxprs (the CG loop's body) included."""
    out = []
    for eqn in jaxpr.eqns:
        out += [tuple(getattr(a.aval, "shape", ())) for a in (*eqn.invars, *eqn.outvars) if hasattr(a, "aval")]
        for param in eqn.params.values():
            for sub in (param if isinstance(param, (list, tuple)) else [param]):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None:
                    out += _shapes(getattr(inner, "jaxpr", inner))
    return out


@pytest.mark.parametrize("n, p", [(5, 37), (41, 7)])
def test_nothing_p_by_p_or_n_by_n_is_formed(n, p):
    """The traced program of the CG draw holds no ``p × p`` or ``n × n`` array and none larger than
    ``X``; the direct draw of the other side of the shape (Rue's at ``p > n``, Bhattacharya's at
    ``p < n``) forms its square system there, so the check can fail."""
    X, z, omega, v, s2 = _problem(n, p, True, seed=2)

    def formed(method):
        jaxpr = jax.make_jaxpr(lambda k: gb.draw_beta(k, jnp.asarray(X), z, omega, v, s2, method=method,
                                                      init=jnp.zeros(p)))(jax.random.PRNGKey(0))
        return [s for s in _shapes(jaxpr.jaxpr)
                if np.prod(s, dtype=int) > n * p or s in ((n, n), (p, p))]

    assert formed("cg") == []
    assert (max(n, p), max(n, p)) in formed("rue" if p > n else "bhattacharya")


@pytest.mark.parametrize("bad", [gb.CG(tol=0.0), gb.CG(maxiter=0), "conjugate"])
def test_bad_cg_settings_are_value_errors(bad):
    with pytest.raises(ValueError, match="β draw"):
        gb.choose_method(3, 4, bad)


def test_the_engine_runs_the_cg_draw_and_matches_the_direct_draws_posterior_mean():
    """The hierarchy Gibbs engine with ``beta_draw="cg"`` (p > n, σ² and τ fixed, the horseshoe):
    posterior means of β within Monte Carlo error of Bhattacharya's."""
    from sparsebayes.inference.engines import hierarchy_gibbs
    from sparsebayes.models import HorseshoePrior

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 20))
    y = X[:, :2] @ np.array([2.0, -1.5]) + 0.5 * rng.normal(size=12)
    kw = dict(num_warmup=100, num_samples=1000, num_chains=2, noise_var=0.25, progress_bar=False)
    prior = HorseshoePrior(0.5)
    cg, _ = hierarchy_gibbs.run(X, y, prior, beta_draw="cg", **kw)
    bh, _ = hierarchy_gibbs.run(X, y, prior, beta_draw="bhattacharya", **kw)
    a, b = cg.beta.reshape(-1, 20), bh.beta.reshape(-1, 20)
    se = np.sqrt(a.var(0) + b.var(0)) / np.sqrt(len(a) / 10)  # a generous thinning for autocorrelation
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 5 * se + 1e-3), (a.mean(0), b.mean(0))


@pytest.mark.slow  # about a minute
@pytest.mark.parametrize("n, p", [(8, 16), (16, 8)])
def test_the_horseshoe_gibbs_is_calibrated_on_the_cg_draw(n, p):
    """SBC of the hierarchy Gibbs engine with ``beta_draw="cg"`` (τ ~ C⁺(0, 1), σ² ~ IG(3, 2)), the
    settings of the Rue/Bhattacharya run in ``test_sbc.py``: every β, σ² and τ passes."""
    from sparsebayes.inference.posterior import sbc, sbc_pairs
    from sparsebayes.models import HorseshoePrior

    from .test_sbc import HORSESHOE_SBC, _design

    prior = HorseshoePrior(0.5, tau_prior=1.0)
    res = sbc.run(sbc_pairs.hierarchy_simulator(prior, _design(n, p)), sbc_pairs.hierarchy_gibbs_sampler(prior, beta_draw="cg"),
                  **HORSESHOE_SBC)
    assert res.failed() == [], res.summary()
    assert res.low_ess <= 20
