"""``em_slices._gather``: the slice EM runs on holds the active columns (and Gram block) first, zeros after."""
import numpy as np
import pytest
from sparsebayes.inference.engines.em_slices import _gather


@pytest.mark.parametrize("active", [np.arange(7), np.array([0, 2, 6]), np.array([5])])
def test_the_slice_is_the_fancy_indexed_copy_zero_padded(active):
    rng = np.random.default_rng(0)
    H = rng.normal(size=(9, 7))
    gram, beta = H.T @ H, rng.normal(size=7)
    k = active.size
    Hb, G, bb = _gather(H, gram, beta, active, 8, 12)
    assert Hb.shape == (12, 8) and G.shape == (8, 8) and bb.shape == (8,)
    assert np.array_equal(Hb[:9, :k], H[:, active]) and not Hb[9:].any() and not Hb[:, k:].any()
    assert np.array_equal(G[:k, :k], gram[np.ix_(active, active)]) and not G[k:].any() and not G[:, k:].any()
    assert np.array_equal(bb[:k], beta[active]) and not bb[k:].any()
    Hb2, G2, bb2 = _gather(H, None, beta, active, 8, 12)  # the dual form: no Gram block
    assert G2 is None and np.array_equal(Hb2, Hb) and np.array_equal(bb2, bb)
