"""A warm EM fit at small n waits on the device only for what the host reads.

At n ≤ 300 a whole Jeffreys probit fit takes milliseconds, and each array read back from the
compiled loop is a wait of its own: :func:`sparsebayes.inference.engines.em_slices.fit_em` reads the state
(weights, σ², iterations, last relative change; the Jeffreys hierarchy has no estimated
hyperparameter) and two entries of the step's info (the E-step scale, the objective) in one
``jax.device_get`` per slice of the active set, and reads nothing else. The M-step's active
block is gathered in the loop by :func:`sparsebayes.inference.engines._active.active_first`, which
must give the order of a stable sort of the inactive flags.
"""
import jax
import numpy as np
import pytest

from sparsebayes.inference import SparseProbitClassifier

from sparsebayes.inference.engines import em_slices
from sparsebayes.inference.engines._active import active_first

#: the concrete class of JAX's arrays, whose ``_value`` is the read back to the host
ArrayImpl = type(jax.device_put(np.float64(0.0)))
#: arrays read back per EM slice: beta, noise_var, n_iter, rel_change, the E-step scale, the objective
READS_PER_SLICE = 6


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return X, y


def test_em_small_a_warm_probit_fit_reads_each_slice_back_once(monkeypatch):
    X, y = _data()

    def fit():
        return SparseProbitClassifier(features="kernel", kernel_width=0.5).fit(X, y)

    fit()  # compiles every slice width
    counts = {"run": 0, "device_get": 0, "reads": 0}
    run, device_get, value = em_slices.run, jax.device_get, ArrayImpl._value

    def counting_run(*args, **kwargs):
        counts["run"] += 1
        return run(*args, **kwargs)

    def counting_get(tree):
        counts["device_get"] += 1
        return device_get(tree)

    def counting_value(self):
        counts["reads"] += 1
        return value.fget(self)

    monkeypatch.setattr(em_slices, "run", counting_run)
    monkeypatch.setattr(jax, "device_get", counting_get)
    monkeypatch.setattr(ArrayImpl, "_value", property(counting_value))
    model = fit()
    monkeypatch.undo()
    assert counts["run"] >= 2, counts  # 121 columns: a slice of 128, then one of at most 64
    assert counts["device_get"] == counts["run"], counts
    assert counts["reads"] == READS_PER_SLICE * counts["run"], counts
    assert model.n_active_ > 0


@pytest.mark.parametrize("size", [1, 3, 8, 17])
def test_em_small_active_first_is_the_stable_sort_of_the_inactive_flags(size):
    rng = np.random.default_rng(size)
    masks = [rng.random(17) < p for p in (0.0, 0.2, 0.5, 0.9, 1.0)]
    for mask in masks:
        got = np.asarray(active_first(mask, size))
        want = np.argsort(~mask, kind="stable")[:size]
        assert np.array_equal(got, want), (mask, got, want)
    batched = jax.vmap(lambda m: active_first(m, size))(np.array(masks))
    assert np.array_equal(np.asarray(batched), np.argsort(~np.array(masks), axis=1, kind="stable")[:, :size])
