"""The likelihood registry: every likelihood is one registered object, its pieces agree with
autodiff of its own log likelihood, and an engine that lacks a piece says which."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsebayes.models.likelihoods import (LIKELIHOOD_CAPABILITIES, LIKELIHOODS, BernoulliLogisticLikelihood,
                                            register_likelihood, require_likelihood)
from sparsebayes.models._registry import able
from sparsebayes.models.likelihoods.multinomial import MULTINOMIAL, bohning_bound, flatten, hessian, log_likelihood


def test_every_registered_likelihood_is_registered_under_its_name_and_has_a_label():
    assert LIKELIHOODS, "the registry is empty"
    for name, cls in LIKELIHOODS.items():
        assert cls.name == name
        assert isinstance(cls().label, str) and cls().label


@pytest.mark.parametrize("engine", sorted(LIKELIHOOD_CAPABILITIES))
def test_require_likelihood_passes_exactly_the_likelihoods_with_the_engines_pieces(engine):
    pieces = LIKELIHOOD_CAPABILITIES[engine]
    for name, cls in LIKELIHOODS.items():
        lik = cls()
        if all(hasattr(lik, m) for m in pieces):
            assert require_likelihood(lik, engine) is lik
        else:
            with pytest.raises(ValueError, match=f"{cls.__name__} has no .*the '{engine}' engine needs"):
                require_likelihood(lik, engine)


@pytest.mark.parametrize("name", sorted(n for n, c in LIKELIHOODS.items() if hasattr(c, "init_target")))
def test_laplace_starts_are_finite(name):
    lik = LIKELIHOODS[name]()
    t = jnp.asarray(np.random.default_rng(0).integers(0, 2, 15), jnp.float64)
    params = None if lik.param_name is None else 1.5
    assert np.all(np.isfinite(lik.log_lik(t, lik.init_target(t), params)))


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
    from sparsebayes.inference.engines.em_slices import fit_em
    from sparsebayes.inference.engines.typeii_laplace import fit
    from sparsebayes.models.priors import JeffreysPrior

    X = np.random.default_rng(2).normal(size=(20, 3))
    with pytest.raises(ValueError, match="MultinomialLogisticLikelihood has no em_working, update_params, neg_log_lik: "
                                         "the 'em' engine needs .* likelihoods that have them: .*gaussian"):
        fit_em(X, np.ones(20), JeffreysPrior(), MULTINOMIAL)
    with pytest.raises(ValueError, match="ProbitLikelihood has no init_target.*bernoulli_logistic.*poisson"):
        fit(X, np.ones(20), np.ones(3, bool), likelihood=LIKELIHOODS["probit"]())
    with pytest.raises(ValueError, match="BernoulliLogisticLikelihood has no log_normalizer, bohning_bound"):
        require_likelihood(BernoulliLogisticLikelihood(), "bound")
    with pytest.raises(ValueError, match="engine must be one of"):
        require_likelihood(MULTINOMIAL, "no_such_engine")


def test_a_likelihood_defined_here_joins_the_registry_and_its_engine(monkeypatch):
    """A toy likelihood defined here (the logistic under a name of its own), once registered, passes the Laplace
    engine's check and fits: the engine asks the object only."""
    monkeypatch.setitem(LIKELIHOODS, "tempered_logistic", None)

    @register_likelihood
    class TemperedLogistic(BernoulliLogisticLikelihood):  # the toy: only its name is its own
        name = "tempered_logistic"

    assert LIKELIHOODS["tempered_logistic"] is TemperedLogistic
    assert "tempered_logistic" in able(LIKELIHOODS, LIKELIHOOD_CAPABILITIES["laplace"])
    from sparsebayes.inference.engines.typeii_laplace import fit

    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(40, 5))
    t = (Phi[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(float)
    ours = fit(Phi, t, np.ones(5, bool), likelihood=TemperedLogistic())
    ref = fit(Phi, t, np.ones(5, bool), likelihood=BernoulliLogisticLikelihood())
    np.testing.assert_allclose(ours.var, ref.var, rtol=1e-10)
    with pytest.raises(ValueError, match="a likelihood needs a class attribute 'name'"):
        register_likelihood(type("Nameless", (), {}))
