"""EM on y in tiny units (issue 42, class 6): the Laplace penalty then has no grip, the kernel fit
interpolates, σ² reaches its floor, and the M-step's Cholesky must not break down there."""
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from sklearn.datasets import load_diabetes

from sparsebayes.inference import AdaptiveSparseRegressor
from sparsebayes.inference.engines.em import EMData, m_step
from sparsebayes.inference.engines.em_covariance import conditional_covariance, solve_floor


def _diabetes(n=150):
    X, y = load_diabetes(return_X_y=True)
    y = y[:n]
    return X[:n], (y - y.mean()) / y.std()


@pytest.mark.parametrize("scale", [1e-6, 1e-8])
def test_laplace_kernel_em_survives_y_in_tiny_units(scale):
    """Before, EM stopped with FloatingPointError (a non-finite weight from a Cholesky that broke
    down with σ² ~ 1e-22 beside u² ~ 1e-6). Now the fit ends at the noise floor, says so, and
    interpolates the training data, as the same model does with y in units of 1e-2."""
    X, y = _diabetes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = AdaptiveSparseRegressor(prior="laplace", features="kernel").fit(X, y * scale)
    assert np.all(np.isfinite(est.beta_)) and np.all(np.isfinite(est.sigma_))
    assert any("fell to its floor" in str(w.message) for w in caught)
    pred, sd = est.predict(X, return_std=True)
    assert np.all(np.isfinite(sd))
    np.testing.assert_allclose(pred / scale, y, atol=1e-6)  # interpolates: R² = 1 on the training data


def _singular_system(seed=0):
    """A Gaussian kernel Gram (numerical rank far below its width), Laplace u² ~ 1e-6, σ² = 1e-22."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-3, 3, 60))
    H = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / 2.0**2)
    u = np.sqrt(rng.uniform(0.5e-6, 2e-6, 60))
    return H, H.T @ H, u, 1e-22


def _backward_error(A, x, b):
    """``‖Ax − b‖ / (‖A‖ ‖x‖ + ‖b‖)``: the solve's own rounding, whatever the system's conditioning."""
    return np.linalg.norm(A @ x - b) / (np.linalg.norm(A, 2) * np.linalg.norm(x) + np.linalg.norm(b))


def test_the_guarded_m_step_solves_at_the_least_solvable_noise_var():
    """At σ² = 1e-22 beside u² ~ 1e-6 the M-step's Cholesky breaks down (a non-finite solution, what
    EM raised FloatingPointError on); guarded, it solves the system at :func:`solve_floor`'s σ² to
    rounding (backward error on the dense system). At a σ² that factors, guarded or not, it is the
    exact update (scipy's LU solve)."""
    H, G, u, s2 = _singular_system()
    v = np.random.default_rng(1).normal(size=H.shape[0]) * 1e-6
    rhs = u * (H.T @ v)
    data = EMData(jnp.asarray(H), jnp.asarray(v), jnp.asarray(G))
    assert not np.all(np.isfinite(np.asarray(m_step(jnp.asarray(u), jnp.asarray(v), s2, data))))
    got = np.asarray(m_step(jnp.asarray(u), jnp.asarray(v), s2, data, guard=True))
    assert np.all(np.isfinite(got))
    s2_solve = float(solve_floor(u, np.diagonal(G), u.size))
    assert s2_solve > 1e3 * s2
    assert _backward_error(s2_solve * np.eye(u.size) + u[:, None] * G * u[None, :], got / u, rhs) < 1e-12
    want = u * scipy.linalg.solve(1e-8 * np.eye(u.size) + u[:, None] * G * u[None, :], rhs)
    for guard in (False, True):
        got = np.asarray(m_step(jnp.asarray(u), jnp.asarray(v), 1e-8, data, guard=guard))
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=0)


def test_conditional_covariance_falls_back_like_the_m_step():
    """``Σ = σ²U(σ²I + UGU)⁻¹U`` at the floor σ² where σ² itself does not factor: ``(σ²I + UGU) U⁻¹Σ = σ²U``
    to rounding."""
    H, G, u, s2 = _singular_system()
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(s2 * np.eye(u.size) + u[:, None] * G * u[None, :])
    cov = conditional_covariance(G, u, s2)
    assert np.all(np.isfinite(cov))
    s2_solve = float(solve_floor(u, np.diagonal(G), u.size))
    A = s2_solve * np.eye(u.size) + u[:, None] * G * u[None, :]
    for j in range(0, u.size, 7):
        assert _backward_error(A, cov[:, j] / u, s2_solve * u[j] * np.eye(u.size)[:, j]) < 1e-10
