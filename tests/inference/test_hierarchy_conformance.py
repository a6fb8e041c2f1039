"""Every registered hierarchy passes the conformance checks its capabilities call for.

Parametrized over the registry at collection time: registering a hierarchy adds its rows here.
The toy test below registers a hierarchy defined in this file and shows the same checks pick it up.
"""
from typing import NamedTuple

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
import pytest

import sparsebayes.models  # noqa: F401  (registers every built-in hierarchy)
from sparsebayes.testing.hierarchies import check_em_objective_monotone, check_hierarchy, hierarchy_checks
from sparsebayes.models.priors.horseshoe import HorseshoePrior
from sparsebayes.models.priors import HIERARCHIES, LaplacePrior, make_prior, register_hierarchy, require

CASES = [(name, check_name) for name, cls in sorted(HIERARCHIES.items())
         for check_name, _ in hierarchy_checks(cls())]


@pytest.mark.parametrize("name, check_name", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_registered_hierarchy_conforms(name, check_name):
    checks = dict(hierarchy_checks(HIERARCHIES[name]()))
    checks[check_name]()


@pytest.mark.parametrize("prior", [LaplacePrior(0.1, gamma_prior=(1.0, 1e-3)), HorseshoePrior(0.05, tau_prior=1.0)],
                         ids=["laplace-gamma-estimated", "horseshoe-tau-estimated"])
def test_em_objective_climbs_with_the_shared_hyperparameters_estimated(prior):
    """The same check with the hierarchy's M-step for γ or τ inside each EM step (the objective then
    holds the hyperprior's terms)."""
    check_em_objective_monotone(prior)


def test_registry_holds_the_built_in_hierarchies_with_their_checks():
    assert {"laplace", "jeffreys", "horseshoe", "ard", "scaled_laplace", "laplace_variance"} <= set(HIERARCHIES)
    for name in ("ard", "scaled_laplace", "laplace_variance"):
        assert {c for n, c in CASES if n == name} == {"capability_errors", "typeii_optimum", "typeii_lambda_update",
                                                      "typeii_evidence"}
    assert ("laplace", "e_step_variance_quadrature") in CASES
    assert {c for n, c in CASES if n == "horseshoe"} >= {"e_step_quadrature", "marginal_quadrature",
                                                        "twin_draws_marginal", "model_equals_solver",
                                                        "em_objective_monotone", "capability_errors"}


def test_missing_capability_is_a_value_error_naming_hierarchy_and_piece():
    with pytest.raises(ValueError, match=r"HorseshoePrior has no type-II update \(missing: typeii_penalty, "):
        require(make_prior("horseshoe"), "type2")
    with pytest.raises(ValueError, match=r"LaplacePrior has no type-II update.*laplace_variance"):
        require(make_prior("laplace"), "type2")
    with pytest.raises(ValueError, match="ARDPrior has no EM E-step"):
        require(make_prior("ard"), "em")
    with pytest.raises(ValueError, match="JeffreysPrior has no NumPyro sampling statement"):
        require(make_prior("jeffreys"), "nuts")


class StudentTPrior(NamedTuple):
    """Toy: ``v ~ IG(ν/2, ν/2)``, so ``β ~ t_ν``; ``E[1/v | β] = (ν + 1)/(ν + β²)``."""

    df: float = 3.0
    name = "toy-student-t"

    def log_mixing_density(self, v):
        a = self.df / 2.0
        return a * jnp.log(a) - jnp.asarray(__import__("scipy").special.gammaln(a)) - (a + 1) * jnp.log(v) - a / v

    def em_scale(self, beta):
        return jnp.sqrt((self.df + beta**2) / (self.df + 1.0))

    def log_marginal(self, beta):
        return dist.StudentT(self.df).log_prob(beta)

    def neg_log_prior(self, beta):
        return -jnp.sum(self.log_marginal(beta))

    def sample_beta(self, p, name="beta"):
        v = numpyro.sample("v", dist.InverseGamma(self.df / 2.0, self.df / 2.0).expand([p]).to_event(1))
        return numpyro.sample(name, dist.Normal(0.0, jnp.sqrt(v)).to_event(1))


def test_a_toy_hierarchy_defined_here_is_picked_up_by_registering_it():
    register_hierarchy(StudentTPrior)
    try:
        assert make_prior("toy-student-t") == StudentTPrior()
        ran = check_hierarchy(HIERARCHIES["toy-student-t"]())
        assert set(ran) == {"capability_errors", "e_step_quadrature", "marginal_quadrature", "twin_draws_marginal",
                            "model_equals_solver", "em_objective_monotone"}
    finally:
        HIERARCHIES.pop("toy-student-t")


def test_a_wrong_e_step_is_caught():
    class Wrong(StudentTPrior):
        def em_scale(self, beta):  # the weight of ν + 2, not ν + 1
            return jnp.sqrt((self.df + beta**2) / (self.df + 2.0))

    class WrongTwin(StudentTPrior):
        def sample_beta(self, p, name="beta"):  # β drawn 10 % too wide
            v = numpyro.sample("v", dist.InverseGamma(self.df / 2.0, self.df / 2.0).expand([p]).to_event(1))
            return numpyro.sample(name, dist.Normal(0.0, 1.1 * jnp.sqrt(v)).to_event(1))

    with pytest.raises(AssertionError, match="twin's draws"):
        dict(hierarchy_checks(WrongTwin()))["twin_draws_marginal"]()
    checks = dict(hierarchy_checks(Wrong()))
    with pytest.raises(AssertionError, match="E\\[1/v"):
        checks["e_step_quadrature"]()
    with pytest.raises(AssertionError):
        checks["em_objective_monotone"]()


def test_a_wrong_type_ii_piece_is_caught():
    """The penalty doubled (no longer minus the derivative of the hyperprior terms in a variance)
    fails the optimum check; λ's update 10 % off its maximiser fails the λ check."""
    import dataclasses

    from sparsebayes.testing.hierarchies import check_typeii_lambda_update, check_typeii_optimum
    from sparsebayes.models.priors.typeii import LaplaceVariancePrior

    @dataclasses.dataclass(frozen=True)
    class DoublePenalty(LaplaceVariancePrior):
        def typeii_penalty(self, lam, noise_var):
            return 2.0 * super().typeii_penalty(lam, noise_var)

    @dataclasses.dataclass(frozen=True)
    class OffLambda(LaplaceVariancePrior):
        def typeii_update_lambda(self, sum_var, noise_var, n_active):
            return 1.1 * super().typeii_update_lambda(sum_var, noise_var, n_active)

    with pytest.raises(AssertionError, match="penalty"):
        check_typeii_optimum(DoublePenalty())
    with pytest.raises(AssertionError, match="a search over λ"):
        check_typeii_lambda_update(OffLambda())
    check_typeii_optimum(LaplaceVariancePrior())
    check_typeii_lambda_update(LaplaceVariancePrior())
