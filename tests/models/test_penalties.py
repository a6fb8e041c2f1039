"""The bound-optimization capability of the hierarchy objects (LaplacePrior, GaussianPrior, FlatPrior)
against independent oracles: one-dimensional numerical maximization, one-sided finite differences of
the penalty, autodiff, dense solves, and SciPy's distributions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from numpyro.infer import Predictive

from sparsebayes.inference.engines import bound
from sparsebayes.models.likelihoods import multinomial as mm
from sparsebayes.models.priors.horseshoe import HorseshoePrior
from sparsebayes.models.priors.penalty import FlatPrior, GaussianPrior
from sparsebayes.models.priors import HIERARCHIES, JeffreysPrior, LaplacePrior, make_prior, require, supports

BOUND_PRIORS = [LaplacePrior.from_lam(1.7), GaussianPrior(0.8), FlatPrior()]
IDS = ["laplace", "gaussian", "flat"]


def test_the_registry_holds_the_bound_hierarchies_and_only_they_have_the_capability():
    able = {name for name, cls in HIERARCHIES.items() if supports(cls(), "bound")}
    assert able == {"laplace", "gaussian", "flat"}
    assert make_prior("gaussian") == GaussianPrior(1.0) and make_prior("flat") == FlatPrior()
    assert make_prior(GaussianPrior(2.5)) == GaussianPrior(2.5)
    with pytest.raises(ValueError, match="GaussianPrior.lam"):
        make_prior(GaussianPrior(-1.0))


@pytest.mark.parametrize("prior", BOUND_PRIORS, ids=IDS)
def test_coordinate_update_maximizes_the_one_dimensional_surrogate(prior):
    """eqs. 15–16: ``q(w) = g(w − w₀) + ½ b (w − w₀)² − penalty(w)`` (b < 0) is maximized at
    ``bound_coordinate_update(w₀ − g/b, b)``; oracle: bounded scalar minimization of −q."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        w0, g, b = rng.normal(0, 2), rng.normal(0, 3), -rng.uniform(0.2, 5.0)
        def neg_q(w):
            return -(g * (w - w0) + 0.5 * b * (w - w0) ** 2 - float(prior.neg_log_prior(jnp.asarray([w]))))
        got = float(prior.bound_coordinate_update(jnp.asarray(w0 - g / b), jnp.asarray(b)))
        ref = scipy.optimize.minimize_scalar(neg_q, bounds=(-60, 60), method="bounded",
                                             options={"xatol": 1e-12}).x
        assert neg_q(got) <= neg_q(ref) + 1e-10
        assert got == pytest.approx(ref, abs=1e-6)


def _one_sided_derivatives(prior, w, h=1e-6):
    f = lambda v: float(prior.neg_log_prior(jnp.asarray([v])))  # noqa: E731
    return (f(w) - f(w - h)) / h, (f(w + h) - f(w)) / h


@pytest.mark.parametrize("prior", BOUND_PRIORS, ids=IDS)
def test_residual_is_the_distance_to_the_subdifferential(prior):
    """``bound_residual(w, g)`` is ``dist(g, ∂penalty(w))``; the subdifferential of the convex 1-D penalty
    is ``[f'₋(w), f'₊(w)]``, here by one-sided finite differences of ``neg_log_prior``."""
    rng = np.random.default_rng(1)
    for w in (0.0, -1.3, 0.4, 2.2):
        for g in rng.normal(0, 3, 6):
            lo, hi = _one_sided_derivatives(prior, w)
            expected = max(lo - g, g - hi, 0.0)
            got = float(prior.bound_residual(jnp.asarray([w]), jnp.asarray([g]))[0])
            assert got == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("prior", BOUND_PRIORS, ids=IDS)
def test_newton_terms_are_the_penalty_derivatives_on_the_free_weights(prior):
    """Gradient and curvature of the penalty on the free weights (autodiff of ``neg_log_prior``); the
    projection keeps free weights of their sign and zeroes the rest (an l1 orthant) or keeps all."""
    W = jnp.asarray([[0.0, -1.2], [0.7, 0.0], [2.0, -0.3]])
    free, grad, curv, orthant = prior.bound_newton_terms(W, jnp.zeros_like(W))
    ref_grad = jax.grad(prior.neg_log_prior)(W)
    ref_curv = jnp.diag(jax.hessian(lambda w: prior.neg_log_prior(w.reshape(W.shape)))(W.ravel())).reshape(W.shape)
    np.testing.assert_allclose(np.where(free, grad, 0), np.where(free, ref_grad, 0), rtol=1e-12)
    np.testing.assert_allclose(np.where(free, curv, 0), np.where(free, ref_curv, 0), atol=1e-12)
    moved = W + jnp.asarray([[0.5, 2.0], [-1.0, 0.1], [0.1, 0.1]])
    projected = np.asarray(prior.bound_project(moved, orthant))
    if prior.bound_sparse:
        assert np.array_equal(np.asarray(free), np.asarray(W != 0))
        np.testing.assert_array_equal(projected, np.where([[False, False], [False, False], [True, True]], moved, 0.0))
    else:
        assert np.all(np.asarray(free))
        np.testing.assert_array_equal(projected, moved)


@pytest.mark.parametrize("prior", BOUND_PRIORS, ids=IDS)
def test_block_update_raises_the_surrogate(prior):
    """Eqs. 7, 10, 13: the block update does not lower ``Q(W) = gᵀΔ + ½ vec(Δ)ᵀB vec(Δ) − penalty(W)``
    (Δ = W − W₀); for the smooth priors it is Q's maximizer, ``(B − λI)⁻¹(BW₀ − g)`` by a dense solve."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    bnd = mm.BohningBound.from_data(X, 3, dense=True)
    B = np.asarray(bnd.matrix)
    W0, g = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)) * 3

    def Q(W):
        delta = mm.flatten(W - W0)
        return float(mm.flatten(g) @ delta + 0.5 * delta @ B @ delta - prior.neg_log_prior(W))

    rhs = bnd.apply(W0) - g
    new = prior.bound_block_update(jnp.asarray(W0), rhs, bnd)
    assert Q(new) >= Q(W0)
    if not prior.bound_sparse:
        lam = getattr(prior, "lam", 0.0)
        dense = np.linalg.solve(B - lam * np.eye(B.shape[0]), mm.flatten(rhs))
        np.testing.assert_allclose(mm.flatten(new), dense, rtol=1e-9)


def test_laplace_l1_weight_is_lam_exactly():
    """``from_lam(λ)`` stores ``γ = λ²``; the engine's ``√γ`` gives back λ to the last bit (radix 2), so
    SMLR's penalty is the same number as with λ given directly."""
    lams = np.geomspace(1e-8, 1e8, 20001) * np.random.default_rng(4).uniform(1, 2, 20001)
    priors = LaplacePrior.from_lam(lams)  # one object holding every γ
    np.testing.assert_array_equal(np.asarray(priors.bound_ridge_precision), lams)
    assert float(LaplacePrior.from_lam(0.3).bound_ridge_precision) == 0.3


def test_gaussian_prior_density_and_twin():
    prior = GaussianPrior(2.5)
    beta = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(prior.log_marginal(jnp.asarray(beta)),
                               scipy.stats.norm.logpdf(beta, scale=2.5**-0.5), rtol=1e-12)
    draws = np.asarray(Predictive(lambda: prior.sample_beta(1), num_samples=5000)(jax.random.PRNGKey(0))["beta"]).ravel()
    assert scipy.stats.kstest(draws, scipy.stats.norm(scale=2.5**-0.5).cdf).pvalue > 1e-3


@pytest.mark.parametrize("prior", [HorseshoePrior(), JeffreysPrior()], ids=["horseshoe", "jeffreys"])
def test_the_bound_engine_refuses_a_hierarchy_without_the_capability(prior):
    X = np.random.default_rng(3).normal(size=(20, 3))
    y = np.arange(20) % 3
    name = type(prior).__name__
    with pytest.raises(ValueError, match=rf"{name} has no bound-optimization pieces \(missing: .*bound_block_update"):
        bound.make_problem(X, y, 3, solver="block", prior=prior)
    problem = bound.make_problem(X, y, 3, solver="componentwise", prior=FlatPrior())
    for call in (bound.run, bound.trace):
        with pytest.raises(ValueError, match=f"{name} has no bound-optimization pieces"):
            call(problem, prior, solver="componentwise")
    with pytest.raises(ValueError, match="gamma_prior"):
        bound.run(problem, LaplacePrior(1.0, gamma_prior=(1.0, 1.0)), solver="componentwise")
    assert require(GaussianPrior(), "bound") == GaussianPrior()


def test_the_multinomial_model_and_sparse_classifier_take_the_hierarchy_objects():
    """The NumPyro model refuses a hierarchy without one weight's marginal; ``SparseClassifier(method="map")``
    passes a GaussianPrior object's precision to RMLR as it passes a LaplacePrior's l1 weight to SMLR."""
    from sparsebayes.inference import SparseClassifier

    X = np.random.default_rng(6).normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="HorseshoePrior has no marginal_distribution"):
        Predictive(mm.multinomial_logistic_model, num_samples=1)(jax.random.PRNGKey(0), X, n_classes=2,
                                                                 prior=HorseshoePrior())
    ridge = SparseClassifier(method="map", prior=GaussianPrior(2.5)).fit(X, y)
    assert (ridge._penalty(), ridge.lam_) == ("l2", 2.5)
    lasso = SparseClassifier(method="map", prior=LaplacePrior.from_lam(0.7)).fit(X, y)
    assert (lasso._penalty(), lasso.lam_) == ("l1", 0.7)
