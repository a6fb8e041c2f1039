"""The β draws of :mod:`sparsebayes.inference.engines.gibbs_beta`: Rue's and Bhattacharya et al.'s against a
direct dense computation of the conditional (NumPy's solve and inverse of ``A``, no code shared with
the module), against each other in distribution at ``p = n``, with unit and non-unit row weights ω;
the sufficient-statistics path against the data path."""
import jax
import numpy as np
import pytest
from scipy import stats

from sparsebayes.inference.engines import gibbs_beta as gb


def _problem(n, p, weighted, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 2.0, p)
    z = X[:, : min(p, 3)] @ np.array([1.5, -1.0, 0.5])[: min(p, 3)] + rng.normal(size=n)
    omega = rng.uniform(0.2, 3.0, n) if weighted else None
    v = rng.uniform(0.1, 3.0, p)
    return X, z, omega, v, 0.7


def _dense(X, z, omega, v, s2):
    """Mean and covariance of β | · from an explicit dense solve and inverse of ``A``."""
    w = np.ones(X.shape[0]) if omega is None else omega
    A = X.T @ (w[:, None] * X) / s2 + np.diag(1 / v)
    return np.linalg.solve(A, X.T @ (w * z) / s2), np.linalg.inv(A)


def _draws(method, X, z, omega, v, s2, num, seed):
    keys = jax.random.split(jax.random.PRNGKey(seed), num)
    draw = jax.jit(jax.vmap(lambda k: gb.draw_beta(k, X, z, omega, v, s2, method=method)))
    return np.asarray(draw(keys))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("method", ["rue", "bhattacharya"])
@pytest.mark.parametrize("n, p", [(9, 4), (4, 9)])
def test_each_draw_has_the_dense_conditionals_mean_and_covariance(method, n, p, weighted):
    """Whitened by the dense covariance, the draws are N(0, I): mean within 5 SE, KS against the
    standard normal per coordinate, and sample covariance of the whitened draws near I."""
    X, z, omega, v, s2 = _problem(n, p, weighted, seed=n + p)
    mean, cov = _dense(X, z, omega, v, s2)
    draws = _draws(method, X, z, omega, v, s2, 20000, seed=1)
    white = (draws - mean) @ np.linalg.inv(np.linalg.cholesky(cov)).T
    assert np.all(np.abs(white.mean(0)) < 5 / np.sqrt(len(white)))
    pvals = [stats.kstest(white[:, j], "norm").pvalue for j in range(p)]
    assert min(pvals) > 1e-3 / p, pvals
    np.testing.assert_allclose(np.cov(white.T), np.eye(p), atol=6 / np.sqrt(len(white)))


@pytest.mark.parametrize("weighted", [False, True])
def test_rue_and_bhattacharya_agree_in_distribution_at_p_equal_n(weighted):
    """Two-sample KS per coordinate and on a random projection, Bonferroni over the p + 1 tests."""
    n = p = 6
    X, z, omega, v, s2 = _problem(n, p, weighted, seed=3)
    rue = _draws("rue", X, z, omega, v, s2, 20000, seed=2)
    bha = _draws("bhattacharya", X, z, omega, v, s2, 20000, seed=3)
    direction = np.random.default_rng(4).normal(size=p)
    pvals = [stats.ks_2samp(rue[:, j], bha[:, j]).pvalue for j in range(p)]
    pvals.append(stats.ks_2samp(rue @ direction, bha @ direction).pvalue)
    assert min(pvals) > 1e-3 / (p + 1), pvals


def test_a_wrong_weighting_is_caught():
    """The check has teeth: draws made with ω dropped fail the dense conditional of the weighted model."""
    X, z, omega, v, s2 = _problem(9, 4, True, seed=13)
    mean, cov = _dense(X, z, omega, v, s2)
    draws = _draws("bhattacharya", X, z, None, v, s2, 20000, seed=1)
    white = (draws - mean) @ np.linalg.inv(np.linalg.cholesky(cov)).T
    assert np.any(np.abs(white.mean(0)) > 5 / np.sqrt(len(white)))


def test_the_same_normals_give_the_same_draw_by_both_methods_in_mean():
    """With ``normal = 0`` and ``row_normal = 0``, both methods return the conditional mean exactly."""
    X, z, omega, v, s2 = _problem(7, 11, True, seed=5)
    mean, _ = _dense(X, z, omega, v, s2)
    np.testing.assert_allclose(gb.rue_draw(np.zeros(11), X, z, omega, v, s2), mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb.bhattacharya_draw(np.zeros(11), np.zeros(7), X, z, omega, v, s2), mean,
                               rtol=1e-10, atol=1e-12)


def test_the_sufficient_statistics_give_the_data_paths_draw_and_residual():
    rng = np.random.default_rng(6)
    X, z, _, v, s2 = _problem(500, 5, False, seed=6)
    z = z + 1e3  # a large mean: ‖y‖² ≫ the residual, where expanding about 0 would cancel
    st = gb.gaussian_stats(X, z)
    e = rng.normal(size=5)
    np.testing.assert_allclose(gb.rue_draw_from_stats(e, st, v, s2), gb.rue_draw(e, X, z, None, v, s2), rtol=1e-9)
    beta = np.linalg.lstsq(X, z, rcond=None)[0] + 1e-3 * rng.normal(size=5)
    want = np.sum((z - X @ beta) ** 2)
    np.testing.assert_allclose(gb.stats_rss(st, beta), want, rtol=1e-9)


def test_the_method_follows_the_shape():
    assert gb.choose_method(10, 10) == "rue" and gb.choose_method(10, 11) == "bhattacharya"
    assert gb.choose_method(10, 11, "rue") == "rue"
    with pytest.raises(ValueError, match="β draw must be one of"):
        gb.choose_method(10, 11, "lsqr")


@pytest.mark.parametrize("bad, match", [
    (dict(z=np.zeros(4)), "z must have shape"),
    (dict(omega=np.ones(3)), "omega must have shape"),
    (dict(prior_var=np.ones(2)), "prior_var must have shape"),
    (dict(X=np.zeros(5)), "X must be a 2-D"),
])
def test_shapes_that_do_not_match_are_value_errors(bad, match):
    args = dict(X=np.zeros((5, 3)), z=np.zeros(5), omega=None, prior_var=np.ones(3), noise_var=1.0)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        gb.draw_beta(jax.random.PRNGKey(0), **args)
