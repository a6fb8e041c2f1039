"""Math of the multinomial logistic model (Krishnapuram et al. 2005, eqs. 1-13)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer.util import log_density

from sparsebayes.models.likelihoods import multinomial as mm
from sparsebayes.models import penalties
from sparsebayes.models.priors.penalty import FlatPrior, GaussianPrior
from sparsebayes.models.priors import LaplacePrior


def _data(n=40, d=4, m=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, m, size=n)
    return X, y, mm.one_hot_reference(y, m)


@pytest.mark.parametrize("m", [2, 3, 5])
def test_gradient_and_hessian_match_autodiff(m):
    X, y, Y1 = _data(m=m)
    coef = np.random.default_rng(1).normal(size=(X.shape[1], m - 1))
    np.testing.assert_allclose(mm.gradient(coef, X, Y1), jax.grad(mm.log_likelihood)(coef, X, Y1), rtol=1e-10, atol=1e-10)
    flat_ll = lambda w: mm.log_likelihood(mm.unflatten(w, X.shape[1]), X, Y1)  # noqa: E731
    H_auto = jax.hessian(flat_ll)(mm.flatten(coef))
    np.testing.assert_allclose(mm.hessian(coef, X), H_auto, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("m", [2, 3, 4, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hessian_minus_bohning_bound_is_psd(m, seed):
    """eq. 8: H(w) - B is positive semidefinite at random w and random data."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 3)) * rng.uniform(0.5, 3.0, size=3)
    B = mm.bohning_bound(X, m)
    for _ in range(5):
        coef = rng.normal(scale=3.0, size=(3, m - 1))
        gap = np.asarray(mm.hessian(coef, X) - B)
        assert np.linalg.eigvalsh(0.5 * (gap + gap.T)).min() >= -1e-10


@pytest.mark.parametrize("m", [2, 3, 5])
def test_bohning_bound_is_eq8_exactly_and_tight_for_two_classes_at_zero(m):
    """The PSD test above passes any looser bound (2B too, which halves every MM step): check
    eq. 8 itself, built here in NumPy, its diagonal, and that at m = 2, W = 0 it is the Hessian."""
    X, _, _ = _data(n=20, d=3, m=m)
    k = m - 1
    B = -0.5 * np.kron(np.eye(k) - np.ones((k, k)) / m, X.T @ X)
    np.testing.assert_allclose(mm.bohning_bound(X, m), B, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(np.asarray(mm.bound_diagonal(X, m)), np.diag(B).reshape(k, -1).T, rtol=1e-13)
    if m == 2:  # p = ½ at W = 0: −Σ p(1 − p) x xᵀ = −¼ XᵀX = B
        np.testing.assert_allclose(mm.hessian(np.zeros((3, 1)), X), B, rtol=1e-12)


def test_bound_pieces_match_dense_bound():
    X, _, _ = _data(n=25, d=4, m=4)
    bound = mm.BohningBound.from_data(X, 4, dense=True)
    B = np.asarray(mm.bohning_bound(X, 4))
    R = np.random.default_rng(3).normal(size=(4, 3))
    np.testing.assert_allclose(mm.flatten(bound.apply(R)), B @ mm.flatten(R), rtol=1e-10)
    lam = 0.7
    dense = np.linalg.solve(B - lam * np.eye(12), mm.flatten(R))
    np.testing.assert_allclose(mm.flatten(bound.solve_shifted(R, lam)), dense, rtol=1e-9)
    np.testing.assert_allclose(np.diag(B), mm.flatten(bound.diag), rtol=1e-12)


def test_safe_laplace_update_equals_eq12():
    """eq. 13 is eq. 12, (B - λA)^-1 (Bw - g), without the inverse weights."""
    X, _, Y1 = _data(n=30, d=3, m=3)
    bound = mm.BohningBound.from_data(X, 3, dense=True)
    rng = np.random.default_rng(4)
    coef, rhs = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    lam = 1.3
    B = np.asarray(bound.matrix)
    eq12 = np.linalg.solve(B - lam * np.diag(1 / np.abs(mm.flatten(coef))), mm.flatten(rhs))
    np.testing.assert_allclose(mm.flatten(LaplacePrior.from_lam(lam).bound_block_update(coef, rhs, bound)), eq12, rtol=1e-9)


def test_soft_threshold():
    np.testing.assert_allclose(penalties.soft_threshold(jnp.array([-3.0, -0.5, 0.2, 2.0]), 1.0), [-2.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("prior", [LaplacePrior.from_lam(2.0), GaussianPrior(0.5), FlatPrior()])
def test_numpyro_model_equals_solver_objective_up_to_constant(prior):
    X, y, Y1 = _data(n=20, d=3, m=3)
    rng = np.random.default_rng(5)
    diffs = []
    for _ in range(4):
        coef = rng.normal(size=(3, 2))
        lp, _ = log_density(mm.multinomial_logistic_model, (X, y), {"n_classes": 3, "prior": prior}, {"coef": coef})
        diffs.append(float(lp) - float(mm.log_posterior(coef, X, Y1, prior)))
    np.testing.assert_allclose(diffs, diffs[0], rtol=0, atol=1e-9)


def test_class_probabilities_reference_class_last():
    X, _, _ = _data(n=5, d=2, m=3)
    P = np.asarray(mm.class_probabilities(np.zeros((2, 2)), X))
    np.testing.assert_allclose(P, 1 / 3)
    coef = np.ones((2, 2))
    P = np.asarray(mm.class_probabilities(coef, X))
    eta = X @ coef
    np.testing.assert_allclose(P[:, 2], 1 / (1 + np.exp(eta).sum(1)), rtol=1e-12)


@pytest.mark.slow
def test_nuts_samples_small_rmlr_posterior():
    from sparsebayes.inference.engines.nuts import run_nuts

    X, y, _ = _data(n=60, d=2, m=3)
    idata = run_nuts(mm.multinomial_logistic_model, X, y, n_classes=3, prior=LaplacePrior.from_lam(1.0),
                     num_warmup=300, num_samples=300, num_chains=2, progress_bar=False)
    import arviz as az

    assert float(az.rhat(idata)["coef"].max()) < 1.05
    assert idata.posterior.attrs["n_divergences"] == 0
