"""The batched type-II driver chooses by the backend: one fit after another on a CPU, ``vmap``-ed
lanes on an accelerator (the backend stubbed), with the fits of the single estimators either way."""
import jax
import numpy as np
import pytest

from sparsebayes.inference.engines import typeii_design
from sparsebayes.inference.engines.typeii_design import ACCELERATOR_LANES, batch_lanes
from sparsebayes.inference.estimators.typeii_estimators import RVMRegressor
from sparsebayes.inference.estimators.typeii_many import fit_many


@pytest.mark.parametrize("backend, n_fits, capacity, want", [
    ("cpu", 100, 128, 1), ("gpu", 100, 128, 100), ("cuda", 5000, 128, ACCELERATOR_LANES), ("tpu", 3, 16, 3),
    ("gpu", 500, 4096, 32),  # 2^32 bytes of 4096² covariances: 32 lanes
    ("gpu", 500, 2**17, 1),  # none fits the budget: one lane, never zero
])
def test_lanes_by_backend_and_memory(backend, n_fits, capacity, want):
    assert batch_lanes(n_fits, capacity, backend=backend) == want


def test_on_a_stubbed_accelerator_fit_many_takes_lanes_and_gives_the_single_fits(monkeypatch):
    rng = np.random.default_rng(4)
    Xs = rng.normal(size=(6, 40, 5))
    ys = Xs @ np.array([1.0, 0.0, -2.0, 0.0, 0.5]) + 0.3 * rng.normal(size=(6, 40))
    est = RVMRegressor(features="linear")
    single = [RVMRegressor(features="linear").fit(X, y) for X, y in zip(Xs, ys)]
    used = []
    real = typeii_design.fit_batch

    def spy(*args, lanes, **kw):
        used.append(lanes)
        return real(*args, lanes=lanes, **kw)

    monkeypatch.setattr(typeii_design, "fit_batch", spy)
    monkeypatch.setattr(typeii_design.jax, "default_backend", lambda: "gpu")  # the backend stubbed
    batched = fit_many(est, Xs, ys)
    assert used == [6]
    for b, s in zip(batched, single):
        np.testing.assert_allclose(b.coef_, s.coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(b.noise_var_, s.noise_var_, rtol=1e-8)
        assert np.array_equal(b.active_, s.active_)
    assert jax.default_backend() == "gpu"  # (the stub was in force)
