"""Every registered likelihood passes the protocol's conformance checks
(:mod:`sparsebayes.testing.likelihoods`), parametrized over the registry: a newly
registered likelihood is checked with no other change. Broken likelihoods fail the checks that
should catch them, and a toy likelihood defined here joins the registry, passes and is fitted by EM."""
import jax.numpy as jnp
import numpy as np
import pytest

from sparsebayes.inference.engines.em_slices import fit_em
from sparsebayes.testing.likelihoods import check_likelihood, likelihood_checks
from sparsebayes.models.likelihoods import (LIKELIHOODS, BernoulliLogisticLikelihood, GaussianLikelihood,
                                            PoissonLikelihood, StudentTLikelihood, register_likelihood)
from sparsebayes.models.priors import LaplacePrior

#: Checks slow enough (an EM trace to compile per likelihood) to leave to ``-m slow``.
SLOW = {"em_objective_monotone"}

CASES = [pytest.param(name, check, id=f"{name}-{check}",
                      marks=[pytest.mark.slow] if check in SLOW else [])
         for name in sorted(LIKELIHOODS) for check, _ in likelihood_checks(LIKELIHOODS[name]())]


@pytest.mark.parametrize("name, check", CASES)
def test_registered_likelihood_conforms(name, check):
    lik = LIKELIHOODS[name]()
    dict(likelihood_checks(lik))[check](lik)


def test_every_em_likelihood_is_checked_for_tangency_and_its_monotone_claim():
    for name, cls in LIKELIHOODS.items():
        names = [c for c, _ in likelihood_checks(cls())]
        if hasattr(cls, "em_working"):
            assert {"working_tangent", "working_minorizes", "score_autodiff"} <= set(names), name
        if hasattr(cls, "observe"):
            assert "observe_log_density" in names, name


class _WrongScore(StudentTLikelihood):
    def score(self, y, eta, params=1.0):  # the Gaussian's score: not the t's
        return (y - eta) / params


class _FalseMonotoneClaim(PoissonLikelihood):
    monotone_em = True  # IRLS is an expansion, not a bound


class _WrongWeights(BernoulliLogisticLikelihood):
    def em_working(self, t, eta, params=None):  # Fisher weights σ(1 − σ) with the PG response: not tangent
        z, _ = super().em_working(t, eta, params)
        return z, self.curvature(t, eta)


class _WrongObservation(GaussianLikelihood):
    def observe(self, name, eta, y=None, params=1.0):  # σ in place of σ²
        return super().observe(name, eta, y, params**2)


@pytest.mark.parametrize("broken, check", [(_WrongScore(), "score_autodiff"), (_FalseMonotoneClaim(), "working_minorizes"),
                                           (_WrongWeights(), "working_tangent"),
                                           (_WrongObservation(), "observe_log_density")])
def test_the_checks_catch_a_broken_likelihood(broken, check):
    with pytest.raises(AssertionError):
        dict(likelihood_checks(broken))[check](broken)


def test_a_toy_likelihood_defined_here_conforms_joins_the_registry_and_fits_by_em(monkeypatch):
    """The Student-t with ν = 30 under a name of its own: registered, it passes every check and EM fits
    it with no other change, close to the Gaussian fit (ν = 30 is nearly Gaussian)."""
    monkeypatch.setitem(LIKELIHOODS, "near_gaussian_t", None)

    @register_likelihood
    class NearGaussianT(StudentTLikelihood):
        name = "near_gaussian_t"

    assert LIKELIHOODS["near_gaussian_t"] is NearGaussianT
    toy = NearGaussianT(df=30.0)
    assert "em_objective_monotone" in check_likelihood(toy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = X @ np.array([1.0, -0.5, 0.0, 0.0]) + 0.3 * rng.standard_normal(80)
    fit_t = fit_em(X, y, LaplacePrior(1.0), toy, tol=1e-10, max_iter=5000)
    fit_g = fit_em(X, y, LaplacePrior(1.0), GaussianLikelihood(), tol=1e-10, max_iter=5000)
    assert fit_t.converged
    np.testing.assert_allclose(fit_t.beta, fit_g.beta, atol=0.05)
    assert float(jnp.abs(fit_t.beta[0] - 1.0)) < 0.1
