"""The one NumPyro model of (prior, likelihood, design): :func:`sparsebayes.models.model.sparse_model`.

Its log density is the prior's plus the likelihood's (checked over the likelihood registry and against
scipy.stats for the built-ins), it is the EM objective up to a constant in β (model = solver), and for
the Gaussian and probit cases it is the papers' models' (``sparse_regression_model``,
``sparse_probit_model``) exactly.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from numpyro.handlers import seed, substitute, trace
from numpyro.infer.util import log_density
from sparsebayes.inference.engines.em import EMData, log_posterior
from sparsebayes.models.adaptive import sparse_probit_model, sparse_regression_model
from sparsebayes.models.priors.horseshoe import HorseshoePrior
from sparsebayes.models.likelihoods import LIKELIHOODS, make_likelihood
from sparsebayes.models.model import JeffreysSurrogate, beta_statement, likelihood_params, sparse_model
from sparsebayes.models.priors import JeffreysPrior, LaplacePrior

N, P = 30, 4


def _design(seed_=0):
    rng = np.random.default_rng(seed_)
    return rng.standard_normal((N, P))


def _registered_scalar_likelihoods():
    """Every registered likelihood with an observation statement for one target per row."""
    return [name for name, cls in sorted(LIKELIHOODS.items())
            if hasattr(cls, "observe") and getattr(cls, "support", None) != "categorical"]


def _targets(lik, eta, params, key=1):
    return np.asarray(lik.sample(jax.random.PRNGKey(key), jnp.asarray(eta), params), dtype=np.float64)


def _params(lik, y):
    return None if lik.param_name is None else float(lik.init_params(y)) * 1.3


def _log_density(model, H, y, values, **kwargs):
    return float(log_density(model, (H, y), kwargs, values)[0])


@pytest.mark.parametrize("name", _registered_scalar_likelihoods())
def test_log_density_is_prior_plus_likelihood(name):
    lik = make_likelihood(name)
    H, prior = _design(), LaplacePrior(2.0)
    rng = np.random.default_rng(3)
    beta = 0.3 * rng.standard_normal(P)
    y0 = _targets(lik, H @ beta, 2.0 if lik.param_name else None)
    params = _params(lik, y0)
    for _ in range(3):
        beta = 0.3 * rng.standard_normal(P)
        got = _log_density(sparse_model, H, y0, {"beta": beta}, prior=prior, likelihood=lik, params=params,
                           marginal=True)
        eta = jnp.asarray(H @ beta)
        want = float(jnp.sum(prior.log_marginal(jnp.asarray(beta))) + jnp.sum(lik.log_lik(jnp.asarray(y0), eta, params)))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


#: scipy.stats' log densities of the built-in likelihoods, an oracle independent of their log_lik.
_SCIPY = {
    "gaussian": lambda y, eta, s2: scipy.stats.norm.logpdf(y, eta, np.sqrt(s2)),
    "student_t": lambda y, eta, s2: scipy.stats.t.logpdf(y, 4.0, eta, np.sqrt(s2)),
    "poisson": lambda y, eta, _: scipy.stats.poisson.logpmf(y, np.exp(eta)),
    "bernoulli_logistic": lambda y, eta, _: scipy.stats.bernoulli.logpmf(y, scipy.special.expit(eta)),
    "probit": lambda y, eta, _: scipy.stats.bernoulli.logpmf(y, scipy.stats.norm.cdf(eta)),
    "negative_binomial": lambda y, eta, r: scipy.stats.nbinom.logpmf(y, r, r / (r + np.exp(eta))),
}


@pytest.mark.parametrize("name", sorted(_SCIPY))
def test_likelihood_term_against_scipy(name):
    lik = make_likelihood(name)
    H = _design(1)
    beta = np.array([0.4, -0.3, 0.2, 0.0])
    y = _targets(lik, H @ beta, 2.0 if lik.param_name else None, key=5)
    params = _params(lik, y)
    prior = LaplacePrior(1.5)
    got = _log_density(sparse_model, H, y, {"beta": beta}, prior=prior, likelihood=lik, params=params, marginal=True)
    want = (np.sum(scipy.stats.laplace.logpdf(beta, 0.0, 1.0 / np.sqrt(1.5)))
            + np.sum(_SCIPY[name](y, H @ beta, params)))
    np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("name", ["gaussian", "bernoulli_logistic", "student_t", "poisson", "negative_binomial",
                                  "probit"])
def test_model_equals_em_objective_up_to_a_constant(name):
    """The twin's log density minus EM's objective (its log posterior, Laplace hierarchy with γ fixed)
    is the same number at every β: the MAP EM reports is this model's."""
    lik = make_likelihood(name)
    H, prior = _design(2), LaplacePrior(3.0)
    rng = np.random.default_rng(11)
    y = _targets(lik, H @ (0.3 * rng.standard_normal(P)), 2.0 if lik.param_name else None, key=9)
    params = _params(lik, y)
    data = EMData(jnp.asarray(H), jnp.asarray(y), None)
    diffs = []
    for _ in range(6):
        beta = rng.standard_normal(P) * rng.choice([0.05, 0.5, 1.0])
        model = _log_density(sparse_model, H, y, {"beta": beta}, prior=prior, likelihood=lik, params=params,
                             marginal=True)
        em = float(log_posterior(jnp.asarray(beta), params if params is not None else 1.0, data, prior, lik))
        diffs.append(model - em)
    assert np.ptp(diffs) < 1e-8 * max(1.0, np.max(np.abs(diffs))), diffs


def _draw_sites(model, H, y, key=0, **kwargs):
    """The latent sites' values from one prior draw (an improper σ² held at 0.4)."""
    tr = trace(substitute(seed(model, jax.random.PRNGKey(key)), data={"noise_var": 0.4})).get_trace(H, y, **kwargs)
    return {k: v["value"] for k, v in tr.items() if v["type"] == "sample" and not v["is_observed"]}


@pytest.mark.parametrize("case", [
    dict(prior="laplace", gamma=2.0),
    dict(prior="laplace", gamma=2.0, marginal=True),
    dict(prior="laplace", gamma=2.0, gamma_prior=(2.0, 1.0), marginal=True),
    dict(prior="jeffreys", surrogate_eps=0.1),
    dict(prior=HorseshoePrior(0.5)),
    dict(prior=HorseshoePrior(0.5, 1.0)),
])
@pytest.mark.parametrize("noise_var", [None, 0.7])
def test_gaussian_equals_sparse_regression_model(case, noise_var):
    H = _design(4)
    y = H @ np.array([1.0, 0.0, -0.5, 0.0]) + 0.3 * np.random.default_rng(0).standard_normal(N)
    old = dict(case, noise_var=noise_var)
    values = _draw_sites(sparse_regression_model, H, y, **old)
    statement, marginal = _statement(case)
    lik = make_likelihood("gaussian")
    new = _log_density(sparse_model, H, y, values, prior=statement, likelihood=lik, params=noise_var, marginal=marginal)
    np.testing.assert_allclose(new, _log_density(sparse_regression_model, H, y, values, **old), rtol=1e-12)


def _statement(case):
    """The new model's statement for the papers' model arguments (the mapping :func:`beta_statement` makes)."""
    prior = case["prior"]
    if prior == "laplace":
        return LaplacePrior(case["gamma"], case.get("gamma_prior")), case.get("marginal", False)
    if prior == "jeffreys":
        return JeffreysSurrogate(case["surrogate_eps"]), False
    return prior, False


@pytest.mark.parametrize("case", [dict(prior="laplace", gamma=2.0, marginal=True), dict(prior=HorseshoePrior(0.5)),
                                  dict(prior="jeffreys", surrogate_eps=0.01)])
def test_probit_equals_sparse_probit_model(case):
    H = _design(5)
    y = (H @ np.array([1.0, 0.0, -0.5, 0.0]) + np.random.default_rng(1).standard_normal(N) > 0).astype(float)
    values = _draw_sites(sparse_probit_model, H, y, **case)
    statement, marginal = _statement(case)
    new = _log_density(sparse_model, H, y, values, prior=statement, likelihood=make_likelihood("probit"),
                       marginal=marginal)
    np.testing.assert_allclose(new, _log_density(sparse_probit_model, H, y, values, **case), rtol=1e-12)


def test_same_sites_in_the_same_order_as_the_papers_models():
    """Same names in the same order: NUTS from the same seed gives the same draws on either model."""
    H = _design(6)
    y = H[:, 0]
    for case in (dict(prior="laplace", gamma=2.0, marginal=True), dict(prior=HorseshoePrior(0.5, 1.0))):
        old = list(_draw_sites(sparse_regression_model, H, y, **case))
        statement, marginal = _statement(case)
        new = list(_draw_sites(sparse_model, H, y, prior=statement, likelihood=make_likelihood("gaussian"),
                               marginal=marginal))
        assert new == old


def test_beta_statement_maps_the_hierarchies():
    s, marginal, label = beta_statement(LaplacePrior(2.0))
    assert s == LaplacePrior(2.0) and marginal and "gamma=2" in label
    s, marginal, label = beta_statement(JeffreysPrior(), surrogate_eps=1e-3)
    assert s == JeffreysSurrogate(1e-3) and not marginal and "surrogate" in label
    with pytest.raises(ValueError, match="surrogate_eps"):
        beta_statement(JeffreysPrior())
    with pytest.raises(ValueError, match="surrogate_eps applies"):
        beta_statement(HorseshoePrior(1.0), surrogate_eps=1e-3)
    assert beta_statement(HorseshoePrior(1.0))[0] == HorseshoePrior(1.0)


def test_own_parameter_sampled_under_the_declared_prior():
    """``params=None`` samples the likelihood's parameter at its ``param_name`` under its declared prior:
    the Gaussian's flat σ² (as the papers' model), the t's ``1/s²``, the negative binomial's Gamma(1, 0.1)."""
    H = _design(7)
    beta = np.array([0.2, 0.1, 0.0, -0.1])
    for name, log_prior in (("gaussian", lambda v: 0.0), ("student_t", lambda v: -np.log(v)),
                            ("negative_binomial", lambda v: scipy.stats.gamma.logpdf(v, 1.0, scale=10.0))):
        lik = make_likelihood(name)
        y = _targets(lik, H @ beta, 2.0)
        v = 1.7
        got = _log_density(sparse_model, H, y, {"beta": beta, lik.param_name: v}, prior=LaplacePrior(1.0),
                           likelihood=lik, marginal=True)
        fixed = _log_density(sparse_model, H, y, {"beta": beta}, prior=LaplacePrior(1.0), likelihood=lik, params=v,
                             marginal=True)
        np.testing.assert_allclose(got - fixed, log_prior(v), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="declares no prior"):
        likelihood_params(type("NoPrior", (), {"param_name": "scale"})())


@pytest.mark.slow
@pytest.mark.parametrize("case", [dict(prior="laplace", gamma=2.0, marginal=True), dict(prior=HorseshoePrior(0.5))])
def test_nuts_draws_equal_the_papers_models_at_a_seed(case):
    """The twins moved from the papers' model functions to the one model: NUTS from the same seed gives
    the same draws (same sites, same order, same arithmetic), so fixed-seed expectations still hold."""
    from sparsebayes.inference.engines.nuts import run_nuts

    H = _design(8)
    y = H @ np.array([1.0, 0.0, -0.5, 0.0]) + 0.3 * np.random.default_rng(2).standard_normal(N)
    kw = dict(num_warmup=30, num_samples=20, num_chains=1, seed=3, progress_bar=False, rhat_max=None)
    old = run_nuts(sparse_regression_model, H, y, **kw, **case)
    statement, marginal = _statement(case)
    new = run_nuts(sparse_model, H, y, **kw, prior=statement, likelihood=make_likelihood("gaussian"),
                   **({"marginal": True} if marginal else {}))
    for name in old.posterior.data_vars:
        np.testing.assert_array_equal(new.posterior[name].values, old.posterior[name].values)


def test_one_model_function_per_class_of_statement_and_likelihood():
    """Equal-field objects of different classes compare equal as tuples (the probit and logistic
    likelihoods; a Jeffreys surrogate and the ARD surrogate at one ε), and a runner that caches compiled
    programs by argument values would confuse them: each class pair has a model function of its own."""
    from sparsebayes.inference.posterior.twin_typeii import GammaPrecision
    from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, ProbitLikelihood
    from sparsebayes.models.model import sparse_model_for

    assert ProbitLikelihood() == BernoulliLogisticLikelihood() and JeffreysSurrogate(0.1) == GammaPrecision(0.1)
    probit = sparse_model_for(LaplacePrior(1.0), ProbitLikelihood())
    assert probit is not sparse_model_for(LaplacePrior(1.0), BernoulliLogisticLikelihood())
    assert sparse_model_for(JeffreysSurrogate(0.1), ProbitLikelihood()) is not sparse_model_for(GammaPrecision(0.1),
                                                                                                ProbitLikelihood())
    assert probit is sparse_model_for(LaplacePrior(3.0), ProbitLikelihood()) and probit.__wrapped__ is sparse_model
    H = _design(9)
    y = (H[:, 0] > 0).astype(float)
    beta = np.array([0.3, -0.2, 0.1, 0.0])
    kw = dict(prior=LaplacePrior(1.0), likelihood=ProbitLikelihood(), marginal=True)
    np.testing.assert_allclose(_log_density(probit, H, y, {"beta": beta}, **kw),
                               _log_density(sparse_model, H, y, {"beta": beta}, **kw), rtol=1e-14)
