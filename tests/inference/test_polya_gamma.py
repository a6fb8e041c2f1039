"""The Pólya-Gamma sampler against the closed-form moments of PG(b, c) (Polson, Scott & Windle 2013,
Sec. 2) and, in law, against the ``polyagamma`` package (Kolmogorov–Smirnov)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from sparsebayes.inference.engines.polya_gamma import MAX_EXACT_SHAPE, polya_gamma, polya_gamma_mean, polya_gamma_var

B_GRID = (1.0, 2.0, 3.5)
C_GRID = (0.0, 0.5, 2.0, 10.0, 50.0)


def _closed_mean(b, c):
    """E PG(b, c) = b/(2c) tanh(c/2), b/4 at c = 0 (written here apart from the module)."""
    return b / 4.0 if c == 0 else b / (2.0 * c) * np.tanh(c / 2.0)


def _closed_var(b, c):
    """Var PG(b, c) = b (sinh c − c)/(4c³ cosh²(c/2)), b/24 at c = 0; below c = 1, sinh c − c by its
    power series Σ_{k≥1} c^{2k+1}/(2k+1)! (the difference cancels there)."""
    if c == 0:
        return b / 24.0
    diff = sum(c ** (2 * k + 1) / math.factorial(2 * k + 1) for k in range(1, 20)) if c < 1 else np.sinh(c) - c
    return b * diff / (4.0 * c ** 3 * np.cosh(c / 2.0) ** 2)


def _grid_draws(bs, cs, n, seed, method="devroye"):
    """n draws at each (b, c) of the grid: per b, one call of a jitted vmap over per-replicate keys
    (the vmap is part of what is checked). Returns the grid's b and c flattened and a
    (n, len(bs)·len(cs)) array."""
    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    draw = jax.jit(jax.vmap(lambda k, b, c: polya_gamma(k, b, c, method=method), in_axes=(0, None, None)))
    cc = jnp.asarray(cs, dtype=float)
    x = np.concatenate([np.asarray(draw(keys, jnp.full(len(cs), b), cc)) for b in bs], axis=1)
    return np.repeat(np.asarray(bs, dtype=float), len(cs)), np.tile(np.asarray(cs, dtype=float), len(bs)), x


@pytest.fixture(scope="module")
def grid():
    return _grid_draws(B_GRID, C_GRID, 3000, seed=0)


def test_closed_form_moments_of_the_module_are_the_papers():
    for b in (0.5, 1.0, 7.0):
        for c in (0.0, 1e-6, 1e-3, 0.02, 0.5, 2.0, 10.0, 50.0, -3.0):
            np.testing.assert_allclose(float(polya_gamma_mean(b, c)), _closed_mean(b, abs(c)), rtol=1e-9)
            np.testing.assert_allclose(float(polya_gamma_var(b, c)), _closed_var(b, abs(c)), rtol=1e-6)
    assert np.isfinite(float(polya_gamma_var(1.0, 1000.0)))  # sinh overflows there; the module's form does not


def test_first_two_moments_match_the_closed_forms(grid):
    bb, cc, x = grid
    n = x.shape[0]
    assert np.all(np.isfinite(x)) and np.all(x > 0)
    for j, (b, c) in enumerate(zip(bb, cc)):
        m, v = _closed_mean(b, c), _closed_var(b, c)
        z_mean = (x[:, j].mean() - m) / np.sqrt(v / n)
        # standard error of the sample variance from the sample's own fourth central moment
        mu4 = np.mean((x[:, j] - x[:, j].mean()) ** 4)
        z_var = (x[:, j].var() - v) / np.sqrt((mu4 - x[:, j].var() ** 2) / n)
        assert abs(z_mean) < 4 and abs(z_var) < 4, (b, c, z_mean, z_var)


def _ks_pvalues(bb, cc, x, seed):
    """Two-sample KS p-values against the package's ``alternate`` sampler (Windle, Polson & Scott
    2014) for b ≥ 1 and its default below. Its default (``hybrid``) is not the reference at large c:
    in polyagamma 2.0.2 it gives a mean 2.75 times E PG(20, 50) (its saddle-point branch) and 64
    times E PG(1, 200) (its Devroye branch), where ``alternate`` matches the closed forms."""
    from polyagamma import random_polyagamma

    rng = np.random.default_rng(seed)
    return np.array([stats.ks_2samp(x[:, j], random_polyagamma(b, c, size=x.shape[0], random_state=rng,
                                                               method="alternate" if b >= 1 else None)).pvalue
                     for j, (b, c) in enumerate(zip(bb, cc))])


def test_law_matches_the_polyagamma_package(grid):
    pytest.importorskip("polyagamma")
    bb, cc, x = grid
    p = _ks_pvalues(bb, cc, x, seed=1)
    assert p.min() > 1e-3 / len(p), dict(zip(zip(bb, cc), np.round(p, 4)))  # Bonferroni over the grid


def test_the_ks_check_rejects_a_wrong_tilt(grid):
    """The same check on draws compared with the package at 1.5c must fail: it can see a wrong c."""
    pytest.importorskip("polyagamma")
    bb, cc, x = grid
    keep = cc >= 2
    p = _ks_pvalues(bb[keep], 1.5 * cc[keep], x[:, keep], seed=2)
    assert p.max() < 1e-3 / len(p)


def test_bad_parameters_are_refused():
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="b must be > 0"):
        polya_gamma(key, 0.0, 1.0)
    with pytest.raises(ValueError, match="c must be finite"):
        polya_gamma(key, 1.0, np.nan)
    with pytest.raises(ValueError, match="method"):
        polya_gamma(key, 1.0, 1.0, method="saddle")
    assert polya_gamma(key, jnp.ones((2, 0)), 1.0).shape == (2, 0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["devroye", "gamma"])
def test_law_and_moments_on_a_wide_grid(method):
    """Fractional, small and large b, by both methods, at 20,000 draws a point."""
    pytest.importorskip("polyagamma")
    bb, cc, x = _grid_draws((0.3, 1.0, 2.0, 3.5, 7.25, 20.0), (0.0, 0.5, 2.0, 10.0, 50.0, 200.0), 20000, seed=3,
                            method=method)
    n = x.shape[0]
    for j, (b, c) in enumerate(zip(bb, cc)):
        z_mean = (x[:, j].mean() - _closed_mean(b, c)) / np.sqrt(_closed_var(b, c) / n)
        assert abs(z_mean) < 4.5, (b, c, z_mean)
    p = _ks_pvalues(bb, cc, x, seed=4)
    assert p.min() > 1e-3 / len(p), dict(zip(zip(bb, cc), np.round(p, 4)))


def test_a_shape_above_the_exact_limit_is_drawn_by_the_series_and_ends():
    """b above MAX_EXACT_SHAPE (a sum of b Devroye variates would loop b times; 10¹⁰ saturates int32): the
    draws end, are finite, and have the closed-form mean and variance (2,000 draws: z-scores of the mean
    and, at the large b, of the variance's ratio within 4.5), jitted and with an exact element (b = 2) beside them."""
    n = 2000
    bs = jnp.asarray([3.0 * MAX_EXACT_SHAPE, 1e10, 2.0])
    cs = jnp.asarray([0.0, 7.0, 1.0])
    keys = jax.random.split(jax.random.PRNGKey(5), n)
    x = np.asarray(jax.jit(jax.vmap(lambda k: polya_gamma(k, bs, cs)))(keys))
    assert np.all(np.isfinite(x)) and np.all(x > 0)
    for j, (b, c) in enumerate(zip(np.asarray(bs), np.asarray(cs))):
        m, v = _closed_mean(b, c), _closed_var(b, c)
        assert abs(x[:, j].mean() - m) / np.sqrt(v / n) < 4.5, (b, c, x[:, j].mean(), m)
        if b > MAX_EXACT_SHAPE:  # nearly normal there: the sample variance's sd is v √(2/n)
            assert abs(x[:, j].var() / v - 1.0) / np.sqrt(2.0 / n) < 4.5, (b, c, x[:, j].var(), v)


def test_traced_parameters_out_of_range_give_nan_and_end():
    """Inside jit nothing can be refused: a NaN or infinite c (a diverged linear predictor) or b ≤ 0
    gives NaN in its element, the others their draw, and the loops end."""
    x = np.asarray(jax.jit(polya_gamma)(jax.random.PRNGKey(0), jnp.asarray([1.0, 1.0, 1.0, -1.0, 2.5]),
                                        jnp.asarray([np.nan, np.inf, 1.0, 1.0, 3.0])))
    assert np.isnan(x[[0, 1, 3]]).all() and np.isfinite(x[[2, 4]]).all() and (x[[2, 4]] > 0).all()
