"""What a likelihood states for the samplers (``conjugate_noise``, ``intercept_prior``:
:data:`sparsebayes.models.likelihoods.registry.LIKELIHOOD_DECLARATIONS`): the engines read the
statement, not the likelihood's name or class, so a user's own Gaussian gets the Gaussian's conjugate
sweep and flat intercept; the conformance check holds a likelihood to what it states."""
import numpy as np
import pytest

from sparsebayes.testing.likelihoods import check_declarations, likelihood_checks
from sparsebayes.models.likelihoods import (LIKELIHOODS, BernoulliLogisticLikelihood, GaussianLikelihood,
                                            PoissonLikelihood, StudentTLikelihood, conjugate_noise, flat_intercept,
                                            identity_link)

#: A Gaussian of the user's own: the Gaussian's pieces under another name, in a class of its own (not a
#: GaussianLikelihood, not registered).
MyGaussian = type("MyGaussian", (), {**{k: v for k, v in vars(GaussianLikelihood).items() if not k.startswith("_")},
                                     "name": "my_gaussian"})


def test_the_built_ins_state_what_the_engines_used_to_ask_by_name():
    for name, cls in LIKELIHOODS.items():
        assert conjugate_noise(cls()) == (name == "gaussian"), name
        assert flat_intercept(cls()) == (name == "gaussian"), name
        assert identity_link(cls()) == (name in ("gaussian", "student_t")), name
    assert conjugate_noise(MyGaussian()) and flat_intercept(MyGaussian()) and not isinstance(MyGaussian(), GaussianLikelihood)


def test_a_users_gaussian_gets_the_gaussian_sweep_and_flat_intercept():
    """The Gibbs estimator runs the conjugate σ² sweep for the user's Gaussian: the same draws at a seed as
    for the built-in Gaussian (an augmented sweep with an N(0, 10²) intercept would differ); NUTS's intercept
    is flat; the model record's Gibbs sampler and NUTS's collapsed form are the Gaussian's."""
    from types import SimpleNamespace

    from sparsebayes.inference import GibbsRegressor
    from sparsebayes.inference.estimators.sampling_fit import gibbs_hierarchy, intercept_scale
    from sparsebayes.inference.posterior.posterior_model import _gibbs_sampler, hierarchy_gibbs_sampler
    from sparsebayes.inference.posterior.twin_posterior import _collapsible
    from sparsebayes.models.priors.horseshoe import HorseshoePrior

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = 1.0 + X @ np.array([1.5, 0.0, -1.0]) + 0.5 * rng.normal(size=30)
    fit = dict(prior="laplace", num_warmup=20, num_samples=20, num_chains=1, seed=3, rhat_max=np.inf)
    ours = GibbsRegressor(likelihood=MyGaussian(), **fit).fit(X, y)
    ref = GibbsRegressor(likelihood="gaussian", **fit).fit(X, y)
    np.testing.assert_array_equal(ours.beta_draws_, ref.beta_draws_)
    np.testing.assert_array_equal(ours.intercept_draws_, ref.intercept_draws_)
    assert ours.noise_var_ == ref.noise_var_ is not None
    from sparsebayes.inference.engines import hierarchy_gibbs  # the engine itself routes by the statement too
    prior_gibbs = gibbs_hierarchy(ref.prior_)[1]
    run = dict(num_warmup=20, num_samples=20, num_chains=1, seed=3, progress_bar=False)
    np.testing.assert_array_equal(hierarchy_gibbs.run(X, y, prior_gibbs, likelihood=MyGaussian(), **run)[0].beta,
                                  hierarchy_gibbs.run(X, y, prior_gibbs, **run)[0].beta)
    assert intercept_scale(MyGaussian()) is None and intercept_scale(StudentTLikelihood()) == 10.0
    assert _gibbs_sampler(HorseshoePrior(), MyGaussian(), None) is hierarchy_gibbs_sampler
    assert _collapsible(SimpleNamespace(likelihood=MyGaussian(), prior=HorseshoePrior(), H=X))


class _TClaimingConjugacy(StudentTLikelihood):
    conjugate_noise = True  # the t is not N(η, s²)
    intercept_prior = "flat"


class _GaussianWithNormalIntercept(GaussianLikelihood):
    intercept_prior = "normal"  # the conjugate sweep integrates a flat-prior intercept out


class _AlwaysOne(BernoulliLogisticLikelihood):
    intercept_prior = "flat"  # with every label 1, the likelihood never falls as the intercept rises

    def sample(self, key, eta, params=None):
        return np.ones(np.shape(eta))


class _GaussianWithBiasedNoiseUpdate(GaussianLikelihood):
    def update_params(self, y, eta, params, n_obs=None):  # ‖y − η‖²/(n − 1): not what EM's working set assumes
        r = y - eta
        return (r @ r) / (r.shape[0] - 1)


class _PoissonClaimingIdentity(PoissonLikelihood):
    identity_link = True  # its mean is exp(η)


class _UnknownIntercept(GaussianLikelihood):
    intercept_prior = "cauchy"


@pytest.mark.parametrize("broken", [_TClaimingConjugacy(), _GaussianWithNormalIntercept(), _AlwaysOne(),
                                    _GaussianWithBiasedNoiseUpdate(), _PoissonClaimingIdentity()])
def test_the_check_catches_a_false_statement(broken):
    assert "declarations" in dict(likelihood_checks(broken))
    with pytest.raises(AssertionError):
        check_declarations(broken)


def test_an_unknown_intercept_prior_is_named():
    with pytest.raises(ValueError, match="intercept_prior must be one of .*'flat', 'normal'.*'cauchy'"):
        check_declarations(_UnknownIntercept())


def test_the_samplers_default_prior_for_a_users_gaussian_is_the_laplace_hierarchy_not_the_bayesian_lasso():
    """The Bayesian Lasso (the samplers' default for the Gaussian) is Park & Casella's engine, which fits the
    built-in Gaussian only: a user's Gaussian-like likelihood takes the Laplace hierarchy by default, and the
    Bayesian Lasso's refusal names the methods and the priors that fit it."""
    from sparsebayes.inference import SparseRegressor
    from sparsebayes.inference.estimators.sparse_estimators import check_model

    for method in ("gibbs", "nuts"):
        est = check_model(SparseRegressor(method=method, likelihood=MyGaussian()))
        assert est._route() == method and est._default_prior(method) == "laplace"
    with pytest.raises(ValueError, match=r"not 'student_t'.*method='em'.*under another prior"):
        check_model(SparseRegressor(method="nuts", prior="scaled_laplace", likelihood="student_t"))


def test_a_users_gaussian_passes_the_check():
    check_declarations(MyGaussian())
