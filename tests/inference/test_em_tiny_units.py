"""EM on y in tiny units (issue 42, class 6): the Laplace penalty then has no grip, the kernel fit
interpolates, σ² reaches its floor, and the M-step's Cholesky must not break down there."""
import warnings

import jax
import jax.numpy as jnp
import jax.scipy.linalg  # noqa: F401
import numpy as np
import pytest
import scipy.linalg
from sklearn.datasets import load_diabetes

from sparsebayes.inference import AdaptiveSparseRegressor
from sparsebayes.inference.em import EMData, m_step
from sparsebayes.inference.em_covariance import conditional_covariance, solve_floor


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


def test_m_step_falls_back_to_the_least_solvable_noise_var():
    """Where the Cholesky at σ² breaks down (JAX's gives NaN), the M-step solves the system at the
    floor σ² of :func:`solve_floor` to rounding (backward error, checked against the dense system);
    at a σ² that factors, it is the exact update (scipy's LU solve)."""
    H, G, u, s2 = _singular_system()
    v = np.random.default_rng(1).normal(size=H.shape[0]) * 1e-6
    rhs = u * (H.T @ v)
    A = s2 * np.eye(u.size) + u[:, None] * G * u[None, :]
    assert not np.all(np.isfinite(jax.scipy.linalg.cho_factor(jnp.asarray(A), lower=True)[0]))
    data = EMData(jnp.asarray(H), jnp.asarray(v), jnp.asarray(G))
    got = np.asarray(m_step(jnp.asarray(u), jnp.asarray(v), s2, data))
    assert np.all(np.isfinite(got))
    s2_solve = float(solve_floor(u, np.diagonal(G), u.size))
    assert s2_solve > 1e3 * s2
    assert _backward_error(s2_solve * np.eye(u.size) + u[:, None] * G * u[None, :], got / u, rhs) < 1e-12
    got = np.asarray(m_step(jnp.asarray(u), jnp.asarray(v), 1e-8, data))
    want = u * scipy.linalg.solve(1e-8 * np.eye(u.size) + u[:, None] * G * u[None, :], rhs)
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
