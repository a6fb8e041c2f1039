"""The likelihood registry: every likelihood is one registered object, its pieces agree with
autodiff of its own log likelihood, and an engine that lacks a piece says which."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsebayes.models.likelihoods import (LIKELIHOOD_CAPABILITIES, LIKELIHOODS, BernoulliLogisticLikelihood,
                                            PoissonLikelihood, register_likelihood, require_likelihood)
from sparsebayes.models.multinomial import MULTINOMIAL, bohning_bound, flatten, hessian, log_likelihood


def test_the_registry_holds_the_five_likelihoods_by_name():
    assert sorted(LIKELIHOODS) == ["bernoulli_logistic", "gaussian", "multinomial", "poisson", "probit"]
    for name, cls in LIKELIHOODS.items():
        assert cls.name == name


def _supporting(engine):
    return [n for n, c in LIKELIHOODS.items() if all(hasattr(c, m) for m in LIKELIHOOD_CAPABILITIES[engine])]


def test_each_engine_has_its_likelihoods():
    assert sorted(_supporting("em")) == ["gaussian", "probit"]
    assert sorted(_supporting("laplace")) == ["bernoulli_logistic", "poisson"]
    assert _supporting("bound") == ["multinomial"]


@pytest.mark.parametrize("name", ["bernoulli_logistic", "poisson"])
def test_laplace_pieces_are_the_derivatives_of_the_log_likelihood(name):
    """``mean(η) − t = −∂/∂η log p`` and ``curvature = −∂²/∂η² log p`` (autodiff of ``log_lik``)."""
    lik = LIKELIHOODS[name]()
    eta = jnp.linspace(-4.0, 3.0, 15)
    t = jnp.asarray(np.random.default_rng(0).integers(0, 2 if name != "poisson" else 6, 15), jnp.float64)
    grad = jax.vmap(jax.grad(lambda e, y: lik.log_lik(y, e)))(eta, t)
    curv = jax.vmap(jax.grad(jax.grad(lambda e, y: lik.log_lik(y, e))))(eta, t)
    np.testing.assert_allclose(grad, t - lik.mean(eta), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(-curv, lik.curvature(t, eta), rtol=1e-12, atol=1e-14)
    assert np.all(np.isfinite(lik.log_lik(t, lik.init_target(t))))


def test_the_multinomial_pieces_are_the_papers():
    """003 eq. 2 summed from the per-row terms; the mean is the gradient in η; Böhning's bound is
    below the Hessian at random W (eq. 8): ``H(W) − B`` is positive semidefinite."""
    rng = np.random.default_rng(1)
    X, m = rng.normal(size=(30, 4)), 3
    y = rng.integers(0, m, 30)
    Y1 = (y[:, None] == np.arange(m - 1)).astype(float)
    for _ in range(3):
        W = rng.normal(size=(4, m - 1))
        eta = X @ W
        assert float(jnp.sum(MULTINOMIAL.log_lik(Y1, eta))) == pytest.approx(float(log_likelihood(W, X, Y1)), rel=1e-12)
        g = jax.grad(lambda e: jnp.sum(MULTINOMIAL.log_lik(Y1, e)))(jnp.asarray(eta))
        np.testing.assert_allclose(g, Y1 - MULTINOMIAL.mean(eta), rtol=1e-10, atol=1e-14)
        gap = np.asarray(hessian(W, X)) - np.asarray(bohning_bound(X, m))
        assert np.linalg.eigvalsh(0.5 * (gap + gap.T)).min() > -1e-10
    bound = MULTINOMIAL.bohning_bound(jnp.asarray(X), m, dense=True)
    np.testing.assert_allclose(bound.matrix, bohning_bound(X, m), rtol=1e-12)
    assert flatten(W).shape == (4 * (m - 1),)


def test_an_engine_names_the_missing_piece():
    from sparsebayes.inference.em import fit_em
    from sparsebayes.inference.typeii_laplace import fit
    from sparsebayes.models.priors import JeffreysPrior

    X = np.random.default_rng(2).normal(size=(20, 3))
    with pytest.raises(ValueError, match="PoissonLikelihood has no expected_targets, noise_update, neg_log_lik: "
                                         "the 'em' engine needs .* likelihoods that have them: gaussian, probit"):
        fit_em(X, np.ones(20), JeffreysPrior(), PoissonLikelihood())
    with pytest.raises(ValueError, match="ProbitLikelihood has no log_lik, mean, init_target.*bernoulli_logistic, poisson"):
        fit(X, np.ones(20), np.ones(3, bool), likelihood=LIKELIHOODS["probit"]())
    with pytest.raises(ValueError, match="BernoulliLogisticLikelihood has no log_normalizer, bohning_bound"):
        require_likelihood(BernoulliLogisticLikelihood(), "bound")
    with pytest.raises(ValueError, match="engine must be one of"):
        require_likelihood(MULTINOMIAL, "gibbs")


def test_a_likelihood_defined_here_joins_the_registry_and_its_engine(monkeypatch):
    """A toy likelihood defined here (the logistic under a name of its own), once registered, passes the Laplace
    engine's check and fits: the engine asks the object only."""
    monkeypatch.setitem(LIKELIHOODS, "tempered_logistic", None)

    @register_likelihood
    class TemperedLogistic(BernoulliLogisticLikelihood):  # the toy: only its name is its own
        name = "tempered_logistic"

    assert LIKELIHOODS["tempered_logistic"] is TemperedLogistic
    assert "tempered_logistic" in _supporting("laplace")
    from sparsebayes.inference.typeii_laplace import fit

    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(40, 5))
    t = (Phi[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(float)
    ours = fit(Phi, t, np.ones(5, bool), likelihood=TemperedLogistic())
    ref = fit(Phi, t, np.ones(5, bool), likelihood=BernoulliLogisticLikelihood())
    np.testing.assert_allclose(ours.var, ref.var, rtol=1e-10)
    with pytest.raises(ValueError, match="a likelihood needs a class attribute 'name'"):
        register_likelihood(type("Nameless", (), {}))
