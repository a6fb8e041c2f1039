"""One NumPyro model for every sparse estimator: ``β`` from the hierarchy, ``y`` from the likelihood.

The model the suite's estimators fit a point of (EM's MAP, a type-II fit's posterior) and whose full
posterior the twins sample (:mod:`sparsebayes.inference.posterior.twin_posterior`) is one statement for every
(prior, likelihood, design):

* ``β ~ p(β)`` by the hierarchy's own sampling statement, ``prior.sample_beta(p)`` (002 eqs. 9–10 for
  the Laplace hierarchy, Carvalho et al. 2010 for the horseshoe, ...);
* ``η = Hβ`` with ``H`` the design of the fitted feature map (its columns are the basis ``h_i(x)``);
* the likelihood's own parameter θ (the Gaussian σ², the Student-t's squared scale, the negative
  binomial's dispersion) fixed (``params``), or sampled under the prior the likelihood declares
  (its ``sample_params()``: the papers' flat prior on σ², 000 eq. 6, for the Gaussian);
* ``y_i ~ p(y_i | η_i, θ)`` by the likelihood's own observation statement, ``likelihood.observe``,
  in one plate (one site ``y`` with a pointwise term per row, for ``az.loo``).

Its log density is therefore ``log p(β) [+ log p(θ)] + Σ_i log_lik(y_i, η_i, θ)``: with θ fixed, the
EM objective (:func:`sparsebayes.inference.engines.em.log_posterior`, the marginal prior's
``−neg_log_prior``) up to a constant in β, so the MAP an engine reports and the posterior the twin
samples are two views of one model (checked in ``tests/models/test_sparse_model.py``).

:func:`beta_statement` turns a hierarchy as an estimator holds it into the object whose
``sample_beta`` the model calls: the Laplace hierarchy's marginal (``β_i ~ Laplace(0, 1/√γ)``, the
same posterior without the τ funnel), the Jeffreys prior's labelled proper surrogate (its own
posterior is improper), any other hierarchy with the ``"nuts"`` capability as it is.
"""
from __future__ import annotations

from typing import NamedTuple

import numpyro

from .priors import hierarchy_name, require

#: The observation site of :func:`sparse_model` (the suite's name for the data in every group).
OBSERVED_SITE = "y"


def sparse_model(H, y=None, *, prior, likelihood, params=None, marginal=False):
    """``β ~ prior``, ``y_i ~ likelihood(η_i = h_iᵀβ, θ)``: the NumPyro model of (prior, likelihood, design).

    Parameters
    ----------
    H : array (n, p)
        The design (the fitted feature map applied to the inputs).
    y : array (n,) or None
        Observations; ``None`` leaves the site unobserved (prior / posterior predictive draws).
    prior : object with ``sample_beta(p)``
        A hierarchy of :mod:`sparsebayes.models.priors` with the ``"nuts"`` capability, or a
        statement from :func:`beta_statement`.
    likelihood : object with ``observe``
        A likelihood of :mod:`sparsebayes.models.likelihoods`.
    params : float or None
        The likelihood's own parameter held fixed; ``None`` samples it under the prior the
        likelihood declares (``sample_params()``; site ``likelihood.param_name``). Ignored by a
        likelihood without a parameter (``param_name = None``).
    marginal : bool
        Passed to ``prior.sample_beta`` when true: the Laplace hierarchy's marginal statement.
    """
    beta = prior.sample_beta(H.shape[1], marginal=True) if marginal else prior.sample_beta(H.shape[1])
    eta = H @ beta
    params = likelihood_params(likelihood, params)
    with numpyro.plate("data", H.shape[0]):  # one site, n pointwise terms (for az.loo)
        likelihood.observe(OBSERVED_SITE, eta, y, params)


#: :func:`sparse_model_for`'s functions, one per (statement class, its inner hierarchy's class, likelihood class).
_MODELS = {}


def sparse_model_for(prior, likelihood):
    """:func:`sparse_model` as a function of its own per class of the statement ``prior`` (and of an inner
    hierarchy it wraps, ``prior.inner``) and of the likelihood, for a runner that keeps compiled programs
    by the model function and the values of its non-array keyword arguments
    (:func:`sparsebayes.inference.engines.nuts.run_nuts`): objects of different classes with equal fields compare
    and hash equal as tuples (``ProbitLikelihood() == PoissonLikelihood()``, ``JeffreysSurrogate(0.1) ==
    GammaPrecision(0.1)``), so with the one function a later run would reuse the program compiled for
    the other model. The function's ``__wrapped__`` is :func:`sparse_model`."""
    key = (type(prior), type(getattr(prior, "inner", None)), type(likelihood))
    if key not in _MODELS:
        def model(H, y=None, *, prior, likelihood, params=None, marginal=False):
            return sparse_model(H, y, prior=prior, likelihood=likelihood, params=params, marginal=marginal)

        model.__name__ = model.__qualname__ = f"sparse_model_{'_'.join(k.__name__ for k in key)}"
        model.__doc__ = sparse_model.__doc__
        model.__wrapped__ = sparse_model
        _MODELS[key] = model
    return _MODELS[key]


def sparse_prior_model(H, y=None, *, prior, likelihood=None, params=None, marginal=False):
    """The prior half of :func:`sparse_model` alone (same arguments): ``β`` by the hierarchy's statement,
    no observation. Prior draws of the weights from it never draw ``y``, whose law at a prior draw of a
    heavy-tailed hierarchy (the RVM's surrogate) can be a rate of ``e^{10³⁰⁰}``."""
    return prior.sample_beta(H.shape[1], marginal=True) if marginal else prior.sample_beta(H.shape[1])


def likelihood_params(likelihood, params=None):
    """The likelihood's own parameter inside a model: ``params`` when given, else its statement
    ``likelihood.sample_params()`` (``ValueError`` when it declares no prior to sample it under); the
    protocol's default ``None`` for a likelihood without a parameter."""
    if getattr(likelihood, "param_name", None) is None:
        return None if params is None else params
    if params is not None:
        return params
    statement = getattr(likelihood, "sample_params", None)
    if statement is None:
        raise ValueError(f"{type(likelihood).__name__} declares no prior for its {likelihood.param_name!r} "
                         "(sample_params): pass its value as params to hold it fixed")
    return statement()


class JeffreysSurrogate(NamedTuple):
    """The Jeffreys hyperprior's labelled proper surrogate ``1/τ_i ~ Gamma(ε, ε)`` (site
    ``precision_surrogate``, then the deterministic ``tau``), ``β_i | τ_i ~ N(0, τ_i)``: what is
    sampled in place of the improper Jeffreys posterior (:mod:`sparsebayes.models.adaptive`)."""

    eps: float

    def sample_beta(self, p, name="beta"):
        """``1/τ_i ~ Gamma(ε, ε)``, ``β_i ~ N(0, τ_i)`` (sites ``precision_surrogate``, ``tau``, ``beta``)."""
        from .adaptive import jeffreys_surrogate_beta

        return jeffreys_surrogate_beta(p, self.eps, name)


def beta_statement(prior, surrogate_eps=None):
    """``(statement, marginal, label)`` for :func:`sparse_model` from a hierarchy as an estimator holds it.

    A hierarchy that writes its twin through the papers' model arguments (``nuts_twin``) is read
    from them: the Laplace hierarchy's marginal (γ fixed, or sampled under its ``gamma_prior``), the
    Jeffreys prior's :class:`JeffreysSurrogate` (``surrogate_eps`` required: its own posterior is
    improper). Any other hierarchy must have a sampling statement (``"nuts"`` capability) and takes no
    ``surrogate_eps``. ``ValueError`` naming the problem otherwise.
    """
    if hasattr(prior, "nuts_twin"):
        kwargs, label = prior.nuts_twin(surrogate_eps)
        if kwargs.get("prior") == "jeffreys":
            return JeffreysSurrogate(float(kwargs["surrogate_eps"])), False, label
        if kwargs.get("prior") == "laplace":
            from .priors import LaplacePrior
            return LaplacePrior(kwargs["gamma"], kwargs.get("gamma_prior")), bool(kwargs.get("marginal")), label
        raise ValueError(f"{hierarchy_name(prior)}.nuts_twin names an unknown statement {kwargs.get('prior')!r}")
    if surrogate_eps is not None:
        raise ValueError(f"surrogate_eps applies to the Jeffreys prior, not to {hierarchy_name(prior)!r}")
    return require(prior, "nuts"), False, hierarchy_name(prior)
