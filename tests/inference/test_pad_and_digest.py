"""The set-up helpers a large fit passes through: :func:`pad_to` puts the data in the corner of
an array of the fill, in a new array of the data's dtype; SMLR's training-data fingerprint
changes with any one entry and not with the memory layout."""
import numpy as np
import pytest

from sparsebayes.inference.engines._shapes import pad_to
from sparsebayes.inference.estimators.map_fit import training_digest as _digest


@pytest.mark.parametrize("shape, target", [((3, 4), (3, 4)), ((3, 4), (5, 4)), ((3, 4), (3, 7)), ((3, 4), (6, 9)),
                                           ((5,), (8,)), ((2, 3, 2), (4, 3, 5)), ((0, 3), (2, 3))])
def test_pad_to_is_the_filled_array_with_the_data_in_its_corner(shape, target):
    a = np.random.default_rng(1).normal(size=shape)
    want = np.full(target, -7.5)
    want[tuple(slice(0, k) for k in shape)] = a
    got = pad_to(a, target, fill=-7.5)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == a.dtype and not np.shares_memory(got, a)
    ints = pad_to(np.arange(3), (5,), fill=2)
    assert ints.dtype == np.arange(3).dtype and ints.tolist() == [0, 1, 2, 2, 2]


def test_the_fingerprint_changes_with_any_one_entry():
    X = np.random.default_rng(2).normal(size=(40, 6))
    base = _digest(X)
    assert _digest(X.copy()) == base and _digest(np.asfortranarray(X)) == base
    for i, j in [(0, 0), (17, 3), (39, 5)]:
        other = X.copy()
        other[i, j] = np.nextafter(other[i, j], np.inf)  # one ulp
        assert _digest(other) != base, (i, j)
    assert _digest(X[:, ::-1]) != base and _digest(X.reshape(60, 4)) != base
