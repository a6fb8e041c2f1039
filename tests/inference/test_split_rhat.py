"""The NumPy rank-normalized split R-hat equals ArviZ's ``rhat`` (method "rank") to 1e-10."""
import zlib

import arviz as az
import numpy as np
import pytest
from scipy.stats import rankdata

from sparsebayes.inference.posterior.split_rhat import average_ranks, max_split_rhat, split_rhat


def _chains(kind, shape, rng):
    if kind == "mixed":
        return rng.normal(size=shape)
    if kind == "heavy":
        return rng.standard_t(2, size=shape)
    if kind == "shifted":  # chains stuck apart: R-hat well above 1
        return rng.normal(size=shape) + np.arange(shape[0])[:, None]
    if kind == "scaled":  # same centre, different spreads: only the tail (folded) R-hat sees it
        return rng.normal(size=shape) * (1.0 + 3.0 * np.arange(shape[0]))[:, None]
    if kind == "ties":  # rounded draws: many ties, average ranks
        return np.round(rng.normal(size=shape), 1)
    if kind == "trend":  # a drift within each chain: the split catches it
        return rng.normal(size=shape) + np.linspace(0.0, 3.0, shape[1])
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["mixed", "heavy", "shifted", "scaled", "ties", "trend"])
@pytest.mark.parametrize("shape", [(4, 200), (2, 7), (3, 51), (2, 4)])
def test_split_rhat_is_arviz(kind, shape):
    draws = _chains(kind, shape, np.random.default_rng(zlib.crc32(f"{kind}{shape}".encode())))
    np.testing.assert_allclose(split_rhat(draws), float(az.rhat(draws, method="rank")), rtol=0, atol=1e-10)


def test_the_cases_are_not_trivial():
    """The test cases reach R-hat far from 1 (a wrong formula could not pass by R-hat ≈ 1 everywhere)."""
    rng = np.random.default_rng(0)
    assert split_rhat(_chains("shifted", (4, 200), rng)) > 1.5
    assert split_rhat(_chains("scaled", (4, 200), rng)) > 1.1
    assert split_rhat(_chains("trend", (4, 200), rng)) > 1.1


def test_average_ranks_is_scipys():
    values = np.round(np.random.default_rng(1).normal(size=(3, 40)), 1)
    np.testing.assert_array_equal(average_ranks(values).ravel(), rankdata(values, method="average"))


def test_max_over_coefficients_is_arviz_on_a_vector_variable():
    rng = np.random.default_rng(2)
    shift = np.array([0.0, 0.0, 0.5, 0.0, 0.0])  # the third coefficient's chains sit apart
    draws = rng.normal(size=(3, 80, 5)) + shift * np.arange(3)[:, None, None]
    expected = float(np.max(az.rhat(az.from_dict(posterior={"beta": draws}))["beta"].values))
    np.testing.assert_allclose(max_split_rhat(draws), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", [(1, 100), (4, 3)])
def test_too_few_chains_or_draws_give_nan(shape):
    assert np.isnan(split_rhat(np.random.default_rng(0).normal(size=shape)))


def test_a_non_finite_draw_gives_nan_and_a_bad_shape_an_error():
    draws = np.random.default_rng(0).normal(size=(2, 10))
    draws[1, 3] = np.nan
    assert np.isnan(split_rhat(draws))
    assert np.isnan(max_split_rhat(np.stack([draws, draws + 1.0], axis=-1)))
    with pytest.raises(ValueError, match="chain, draw"):
        split_rhat(np.zeros(10))
