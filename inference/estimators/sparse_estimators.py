"""Generic sparse estimators: a hierarchy (``prior=``), a likelihood, an engine (``method=``), a feature map.

``SparseRegressor`` and ``SparseClassifier`` are the two estimators a user needs to know: the
model is the prior (a hierarchy object such as ``HorseshoePrior(tau=0.1)``, or its registry
name), the likelihood (``likelihood=`` for regression, Gaussian by default, any registered
likelihood of real or count targets: ``"student_t"``, ``"poisson"``, ``"negative_binomial"``;
``link=`` for classification, ``"probit"`` or ``"logistic"``, by default the engine's own: probit
under EM and Gibbs and NUTS, logistic under type-II, multinomial logistic under MAP), and the basis
``features``. ``method`` picks the engine that computes the estimate of that model:

=========  ====================================  ==============================================
method     what it computes                      hierarchies (``prior=``) × likelihoods
=========  ====================================  ==============================================
"em"       the posterior mode by Figueiredo's    any with an EM E-step: "laplace", "jeffreys",
           EM (2003, Sec. 3), per-row weights    "horseshoe", or a registered object; any
           for a likelihood other than the       likelihood with EM working weights (Gaussian,
           Gaussian                              Student-t, Poisson, negative binomial; probit,
                                                 logistic)
"type2"    type-II maximum likelihood of the     "ard" or ``ARDPrior`` (Tipping's RVM, flat
           prior variances (Tipping & Faul       hyperprior on α_i = 1/v_i), "laplace" or
           2003)                                 ``LaplaceVariancePrior`` (FLAP, Babacan et al.
                                                 2010), "scaled_laplace" or
                                                 ``ScaledLaplacePrior`` (BLS, Helgøy & Li):
                                                 Gaussian exactly; any of the three with the
                                                 Poisson or negative-binomial likelihood or the
                                                 logistic link by the Laplace approximation at
                                                 the mode (the Poisson / NB RVM, the RVM
                                                 classifier, their FLAP and BLS versions)
"map"      the MAP by bound optimization          "laplace" (l1), "gaussian" (l2), "flat" (ML):
           (Krishnapuram et al. 2005)             SMLR (classification only, multinomial logistic)
"gibbs"    posterior draws by Gibbs sampling;    "scaled_laplace" or ``ScaledLaplacePrior``: Park
           ``coef_`` the posterior median        & Casella's Bayesian Lasso (Gaussian regression,
                                                 :class:`BayesianLassoRegressor`); any hierarchy
                                                 with Gibbs conditionals ("horseshoe") and
                                                 "laplace" (``LaplacePrior``, γ fixed or
                                                 estimated) under any likelihood with a conjugate
                                                 augmentation: Gaussian, Student-t, negative
                                                 binomial; probit, logistic
                                                 (:mod:`.gibbs_estimators`)
"nuts"     posterior draws by NumPyro's NUTS;    "scaled_laplace" (the Bayesian Lasso, Gaussian);
           ``coef_`` the posterior median        any hierarchy with a NumPyro statement
                                                 ("laplace", "horseshoe", "gaussian", "jeffreys"
                                                 with ``options={"surrogate_eps": ε}``) under any
                                                 likelihood with an observation statement, the
                                                 Poisson included (:mod:`.nuts_estimators`, the
                                                 model of :mod:`sparsebayes.models.model`)
=========  ====================================  ==============================================

Under "gibbs" and "nuts" with a hierarchy other than the Bayesian Lasso's, both samplers draw one
posterior (the intercept flat under the Gaussian, ``N(0, 10²)`` otherwise), so their draws compare
directly. With ``prior=None`` each method takes its :data:`DEFAULT_PRIOR` (the samplers' the Bayesian
Lasso for Gaussian regression, "laplace" otherwise: :data:`DEFAULT_PRIOR_NOT_GAUSSIAN`).

Every pair fits by a fitting core and answers through the core's fitted methods (the estimator's
*route*, :meth:`_ComposedEstimator._route`): the core checks the parameters, builds the basis, fits, and
returns one record of the fitted model, whose fields the estimator names in its attributes
(``coef_``, ``intercept_``, ``n_iter_``, ``objective_``, ``active_``, ``prior_``, ``likelihood_``, the
approximation or the draws); the route's class (:data:`SparseRegressor._ROUTES`) answers ``predict``,
``to_inference_data``, ``posterior_model`` and ``sample_posterior``. The routes:

=================  ======================================================  ==================================
route              fitting core                                            fitted methods
=================  ======================================================  ==================================
"em"               :func:`~.em_fit.fit_em_model` (once, or once per class   :mod:`.em_fitted`
                   one-vs-all)
"typeii"           :func:`~.typeii_fit.fit_typeii_model` (Gaussian)         :mod:`.typeii_fitted`
"typeii_laplace"   :func:`~.typeii_fit.fit_typeii_laplace_model`            :mod:`.typeii_laplace_fitted`
"map"              :func:`~.map_fit.fit_map_model`                          :mod:`.map_fitted`
"gibbs", "nuts"    :func:`~.sampling_fit.fit_sampling_model`                :mod:`.sampling_fitted`
"bayesian_lasso"   :func:`~.bayesian_lasso_fit.fit_bayesian_lasso`          :mod:`.bayesian_lasso_fitted`
=================  ======================================================  ==================================

A method's settings other than the model go in ``options`` (EM's :data:`EM_OPTIONS`: ``gamma``,
``gamma_prior``, ``bias``, ``standardize``, ``noise_var``, ``tol``, ``max_iter``, ``low_rank``; each
core's own for the others). The paper estimators are these two with the method (and the hierarchy or
likelihood) fixed and those settings as parameters, as scikit-learn's ``Lasso`` is an ``ElasticNet``:
:class:`AdaptiveSparseRegressor` and :class:`SparseProbitClassifier` (EM), :class:`RVMRegressor`,
:class:`BLSRegressor`, :class:`FLAPRegressor`, :class:`PoissonRVMRegressor` and :class:`RVMClassifier`
(type-II), :class:`SMLRClassifier` (MAP), :class:`GibbsRegressor`, :class:`GibbsClassifier`,
:class:`NutsRegressor`, :class:`NutsClassifier` and :class:`BayesianLassoRegressor` (the samplers). A pair
that no core can fit is a ``ValueError`` naming the hierarchy and the missing piece; a likelihood
that the pair's engine cannot fit, one naming the likelihood, the missing piece
(:data:`~sparsebayes.models.likelihoods.LIKELIHOOD_CAPABILITIES`) and the methods that fit it. The
fitted ``likelihood_`` (the object) beside ``prior_``: ``prior=est.prior_, likelihood=est.likelihood_``
(``link=est.likelihood_`` for a classifier) with ``est``'s method refits ``est``'s model.

A type-II hierarchy object (:mod:`sparsebayes.models.priors.typeii`) is the type-II paper estimator's
parameters in one piece: type-II estimates λ and σ², and the object's fields are what it does not
estimate, the hyperprior constants ``a, b, c, d`` (``λ ~ Gamma(a, b)``, 004 eq. 8; ``p(σ²)`` of
004 eq. 9) and the flags ``lambda_update``, ``noise_update``. They become the parameters of the same
names (FLAP's ``noise_update="variances-fixed"`` is ``estimate_noise=True``, FLAPσ), so
``prior=ScaledLaplacePrior(a=1.0, b=0.1)`` fits what ``BLSRegressor(a=1.0, b=0.1)`` fits, and the
fitted ``prior_`` of a type-II estimator refits its model. A field that the paper estimator has no
parameter for (the RVM's ``lambda_update``, the classifier's noise prior) must keep its default.
EM's :class:`~sparsebayes.models.priors.LaplacePrior` fixes γ (or puts EM's proper hyperprior on it)
and is refused under type-II: the Laplace hierarchy of FLAP is ``LaplaceVariancePrior``.

The same holds for the other engines. Under "gibbs" and "nuts" a ``ScaledLaplacePrior`` is Park &
Casella's hierarchy (``τ_j² ~ Exp(λ²/2)`` is ``τ_i ~ Exp(λ/2)`` with the object's λ their λ²), so its
``a, b`` are :class:`BayesianLassoRegressor`'s ``lam2_shape, lam2_rate`` (``λ² ~ Gamma(r, δ)``) and
``c, d`` its noise prior; its flags must keep their defaults, and the name "scaled_laplace" takes the
estimator's defaults (Park & Casella's r = 1, δ = 1.78; the object's are type-II's flat a = b = 0).
Under "map" a ``LaplacePrior`` (without ``gamma_prior``), ``GaussianPrior`` or ``FlatPrior`` is SMLR's
penalty at its λ (:mod:`sparsebayes.models.priors.penalty`). Every EM, type-II, MAP and sampling estimator
has a fitted ``prior_``, the object of its model: ``prior=est.prior_`` with ``est``'s method,
features and other options refits ``est``'s model.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.likelihoods import conjugate_noise, make_likelihood, require_likelihood
from sparsebayes.models.priors import HIERARCHIES, LaplacePrior, hierarchy_name, is_hierarchy, make_prior, require

from sparsebayes.inference.estimators._base import atomic_fit, has_bias_column, set_init_params
from sparsebayes.inference._validation import (check_flags_at_default, check_hierarchy_class, one_vs_all_targets,
                                               regression_likelihood, validate_classification_data, validate_regression_data)
from sparsebayes.inference.estimators.em_fit import EMOptions, check_targets, em_basis, fit_em_model, split_bias
from sparsebayes.inference.estimators.em_fitted import EMClassifierMethods, EMRegressorMethods
from sparsebayes.inference.estimators.links import link_likelihood
from sparsebayes.inference.estimators.map_fitted import MapClassifierMethods
from sparsebayes.inference.estimators.typeii_fit import check_hyperpriors, fit_typeii_model, hierarchy_of, typeii_basis
from sparsebayes.inference.estimators.typeii_fitted import TypeIIRegressorMethods
from sparsebayes.inference.estimators.typeii_laplace_fitted import TypeIIClassifierMethods, TypeIILaplaceRegressorMethods
from sparsebayes.inference.estimators.bayesian_lasso_fitted import BayesianLassoMethods
from sparsebayes.inference.estimators.sampling_fitted import (SamplingClassifierMethods, SamplingRegressorMethods,
                                                              picklable_state)

#: the hierarchy each method fits when ``prior=None``: the parameter-free (scale-free) ones where they exist
DEFAULT_PRIOR = {"em": "jeffreys", "type2": "ard", "map": "laplace", "gibbs": "scaled_laplace", "nuts": "scaled_laplace"}

#: where the default differs: the samplers' under a likelihood other than the Gaussian (the Bayesian
#: Lasso's σ-scaled hierarchy is the Gaussian's) and for classification, EM's Laplace hierarchy
DEFAULT_PRIOR_NOT_GAUSSIAN = {"gibbs": "laplace", "nuts": "laplace"}

#: the methods a user may name, and the synonyms accepted for them
METHODS = {"em": "em", "type2": "type2", "typeii": "type2", "map": "map", "bound": "map", "gibbs": "gibbs",
           "nuts": "nuts"}

#: The type-II paper estimator of each hierarchy name (module of ``sparsebayes.inference.estimators``,
#: class): a name under ``method="type2"`` takes its model and defaults (:meth:`SparseRegressor._typeii_setup`).
TYPEII_PAPER_ESTIMATORS = {"ard": ("typeii_estimators", "RVMRegressor"), "laplace": ("typeii_estimators", "FLAPRegressor"),
                           "laplace_variance": ("typeii_estimators", "FLAPRegressor"),
                           "scaled_laplace": ("typeii_estimators", "BLSRegressor")}


def _lazy(module, name):
    """The estimator class ``name`` of ``sparsebayes.inference.estimators.<module>`` (imported on use)."""
    import importlib

    return getattr(importlib.import_module(f"sparsebayes.inference.estimators.{module}"), name)


def _typeii_paper(prior):
    """The type-II paper estimator class of ``prior`` (:data:`TYPEII_PAPER_ESTIMATORS`), or a ``ValueError``
    listing the hierarchies type-II fits."""
    key = hierarchy_name(prior)
    if key not in TYPEII_PAPER_ESTIMATORS:
        label = type(prior).__name__ if is_hierarchy(prior) else repr(prior)
        fits = ", ".join(f"{name!r} ({cls})" for name, (_, cls) in TYPEII_PAPER_ESTIMATORS.items())
        raise ValueError(f"prior {label} has no 'type2' engine; method='type2' fits the priors {fits}")
    return _lazy(*TYPEII_PAPER_ESTIMATORS[key])


def _refuse_em_laplace(prior):
    """``ValueError`` for EM's Laplace hierarchy under type-II (whose Laplace hierarchy is FLAP's)."""
    if isinstance(prior, LaplacePrior):
        raise ValueError("method='type2' estimates the hyperparameters of the Laplace hierarchy (its rate λ, "
                         "FLAP): LaplacePrior is EM's object, with a fixed gamma or a proper gamma_prior; give "
                         "LaplaceVariancePrior(a=..., b=...) or the name 'laplace'")


#: EM's settings besides the model (:class:`~.em_fit.EMOptions`, with the Laplace hierarchy's ``gamma`` and
#: ``gamma_prior`` that a name takes, :func:`~sparsebayes.models.priors.make_prior`) and their defaults:
#: ``options`` under ``method="em"``, the parameters of :class:`AdaptiveSparseRegressor` (the classifiers'
#: without ``noise_var``).
EM_OPTIONS = {"gamma": 1.0, "gamma_prior": None, **{f.name: f.default for f in dataclasses.fields(EMOptions)
                                                    if f.name not in ("features", "kernel_width")}}


def _is_prior_list(prior):
    """A list of hierarchies, one per one-vs-all classifier (a multiclass fit's ``prior_``), not one
    hierarchy object (some are NamedTuples, so tuples themselves)."""
    return isinstance(prior, (list, tuple)) and not is_hierarchy(prior)


def _classifier_prior(prior, c, n_classifiers):
    """The hierarchy of one-vs-all classifier ``c`` of ``n_classifiers``: ``prior`` itself, or its
    ``c``-th entry when it is a list (``ValueError`` unless the list has one per classifier)."""
    if not isinstance(prior, list):
        return prior
    if len(prior) != n_classifiers:
        raise ValueError(f"prior holds {len(prior)} hierarchies but the data have {n_classifiers} one-vs-all "
                         f"classifier(s): a list prior (a multiclass fit's prior_) refits data with as many classes")
    return prior[c]


class _ComposedEstimator(BaseEstimator):
    """Fit the model named by ``(prior, likelihood or link, method, features)`` by the fitting core of
    its route (:meth:`_route`), and answer through the route's fitted methods (:data:`_ROUTES`)."""

    #: The EM settings (:data:`EM_OPTIONS`) this estimator takes.
    _em_settings = tuple(EM_OPTIONS)

    def _default_prior(self, method):
        return DEFAULT_PRIOR[method]

    def _given_prior(self, method):
        """``prior`` as given, or for ``None`` the hierarchy ``method`` fits by default (:meth:`_default_prior`)."""
        return self._default_prior(method) if self.prior is None else self.prior

    def _given_hierarchy(self, method):
        """:meth:`_given_prior`, checked to be one hierarchy (a name or an object; ``ValueError`` otherwise)."""
        prior = self._given_prior(method)
        if not (isinstance(prior, str) or is_hierarchy(prior)):
            raise ValueError(f"prior must be None, a hierarchy name or a hierarchy object (under method='em', also a "
                             f"multiclass fit's prior_, a list of them), got {prior!r}")
        return prior

    def _method(self):
        """The method's canonical name (:data:`METHODS`), or a ``ValueError`` listing them."""
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {self.method!r}")
        return METHODS[self.method]

    # --- every route: the settings besides the model -------------------------------------------------

    #: route -> the paper class whose parameters the route's settings are (:meth:`_paper`). Set by each
    #: generic class; the Gaussian type-II route's is the hierarchy's (:data:`TYPEII_PAPER_ESTIMATORS`).
    _PAPERS = {}

    def _paper(self, route):
        """The name of the paper class whose parameters the settings of a fit by ``route`` are (named in
        the errors about the fit's settings and model): :data:`_PAPERS`, or for the Gaussian type-II route
        the paper estimator of the hierarchy (:func:`_typeii_paper`)."""
        if route == "typeii":
            return _typeii_paper(self._given_prior("type2")).__name__
        return self._PAPERS[route]

    def _route_settings(self, route, defaults, set_by_prior=()):
        """The settings ``defaults`` names (name -> default) of a fit by ``route``: the estimator's own
        parameters of those names (a paper subclass's), else ``options``, else the defaults. A
        ``ValueError`` for ``options`` that is not a dict; for a key of it that is none of these settings
        (naming the route's paper class, :meth:`_paper`, and listing what it takes); for a key that a
        parameter of the estimator, or the hierarchy object (``set_by_prior``: its fields' parameters),
        already sets."""
        params = self.get_params(deep=False)
        values = {name: params.get(name, default) for name, default in defaults.items()}
        options = params.get("options")
        if options is None:
            return values
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict of {self._paper(route)}'s parameters, got {type(options).__name__}")
        fixed = set(options) & (set(params) | set(set_by_prior) | {"prior", "likelihood", "link", "method"})
        unknown = sorted(set(options) - set(defaults) - fixed)
        if unknown:
            raise ValueError(f"options {unknown} are not parameters of {self._paper(route)} (method={self.method!r}, "
                             f"prior={hierarchy_name(self._given_prior(self._method()))!r}); it takes {sorted(defaults)}")
        if fixed:
            raise ValueError(f"options {sorted(fixed)} are set by prior= and method= (a hierarchy object sets its "
                             f"fields' parameters, {type(self).__name__} its own); remove them from options")
        return {**values, **options}

    # --- method="em": the fitting core, the settings, the attribute names ------------------------

    def _em_values(self):
        """The EM settings (:data:`EM_OPTIONS`) this estimator takes, as the parameters give them
        (:meth:`_route_settings`)."""
        return self._route_settings("em", {name: EM_OPTIONS[name] for name in self._em_settings})

    def _em_options(self):
        """The :class:`~.em_fit.EMOptions` of an EM fit (unchecked: :meth:`~.em_fit.EMOptions.check`)."""
        values = self._em_values()
        fields = {f.name for f in dataclasses.fields(EMOptions)}
        return EMOptions(features=self.features, kernel_width=self.kernel_width,
                         **{k: v for k, v in values.items() if k in fields})

    def _em_prior(self):
        """The checked hierarchy object of an EM fit (:func:`~sparsebayes.models.priors.make_prior` of
        ``prior`` with ``gamma`` and ``gamma_prior``; a hierarchy with the EM E-step), or a list of them,
        one per one-vs-all classifier, for a classifier's list ``prior`` (a multiclass fit's ``prior_``)."""
        values = self._em_values()
        prior = self._given_prior("em")
        gamma, gamma_prior = values["gamma"], values["gamma_prior"]
        if not _is_prior_list(prior):
            return require(make_prior(prior, gamma, gamma_prior), "em")
        if not isinstance(self, ClassifierMixin):
            raise ValueError(f"{type(self).__name__} fits one hierarchy: prior must be a name or a hierarchy object, "
                             f"not a list ({prior!r}); a list, one per one-vs-all classifier, is the prior_ of "
                             "a multiclass SparseProbitClassifier")
        if not prior or not all(is_hierarchy(p) for p in prior) or len({hierarchy_name(p) for p in prior}) != 1:
            raise ValueError(f"a list prior must hold hierarchy objects of one kind, one per one-vs-all classifier "
                             f"(a multiclass fit's prior_), got {prior!r}")
        return [require(make_prior(p, gamma, gamma_prior), "em") for p in prior]

    def _em_likelihood(self):  # the subclasses': the checked likelihood object of an EM fit
        raise NotImplementedError

    def _em_setup(self):
        """``(options, prior, likelihood)`` of an EM fit, each checked: a ``ValueError`` names what is wrong."""
        options = self._em_options().check()
        prior = self._em_prior()
        likelihood = self._em_likelihood()
        if options.noise_var is not None and likelihood.param_name is None:
            raise ValueError(f"noise_var={options.noise_var!r} was given, but likelihood={self.likelihood!r} has no "
                             "parameter of its own to fix; leave noise_var=None")
        return options, prior, likelihood

    def _name_em_fit(self, basis, beta):
        """The attributes every EM fit has: ``feature_map_``, ``design_rank_``, ``beta_`` (one row per
        one-vs-all classifier for a classifier), the raw-term ``coef_`` and ``intercept_``, the kept
        basis (``active_``, ``relevance_indices_``, ``n_active_``: nonzero in any classifier, the bias
        excluded; with quadratic features the terms of the centred inputs, the model's basis)."""
        self.feature_map_ = basis.feature_map
        self.design_rank_ = basis.rank
        self.beta_ = beta
        coef, intercept = split_bias(basis.feature_map, beta)
        if beta.ndim == 1:
            coef, intercept = coef[0], float(intercept[0])
        self.coef_, self.intercept_ = coef, intercept
        kept = np.atleast_2d(beta)[:, int(has_bias_column(basis.feature_map)):]
        self.active_ = np.any(kept != 0, axis=0)
        self.relevance_indices_ = np.flatnonzero(self.active_)
        self.n_active_ = int(self.relevance_indices_.size)

    def _name_em_prior(self, fits):
        """``prior_`` (and, for a hierarchy with a γ, ``gamma_`` and ``lam_ = √γ``, the l1 weight) from
        the fitted hierarchy of each fit (one for a regression or two classes)."""
        priors = [fit.prior for fit in fits]
        self.prior_ = priors[0] if len(priors) == 1 else priors
        if all(hasattr(p, "gamma") for p in priors):
            gammas = [float(p.gamma) for p in priors]
            self.gamma_ = gammas[0] if len(gammas) == 1 else np.array(gammas)
            self.lam_ = np.sqrt(self.gamma_)

    # --- every method: the route -------------------------------------------------------------------

    #: route -> the class whose methods answer for a fit by that route (a base of the estimator class,
    #: called explicitly, so that several of them mix into one class without MRO fights); the route's
    #: fit is the method ``_fit_<route>``. Set by each generic class.
    _ROUTES = {}

    #: route -> the method that checks a fit's parameters before any data is read (``ValueError`` naming
    #: what is wrong) and returns what the fit needs of them
    _SETUPS = {"em": "_em_setup", "typeii": "_typeii_setup", "typeii_laplace": "_laplace_setup", "map": "_map_setup",
               "gibbs": "_check_sampling_setup", "nuts": "_check_sampling_setup",
               "bayesian_lasso": "_check_sampling_setup"}

    def _route(self):
        """The route ``fit`` takes for the parameters: ``"em"``, ``"typeii"`` (the Gaussian type-II core),
        ``"typeii_laplace"`` (its Laplace path), ``"map"``, ``"gibbs"``, ``"nuts"`` or ``"bayesian_lasso"``;
        a ``ValueError`` for an unknown method or one without a route for this task."""
        method = self._method()
        if method == "em":
            return "em"
        if self._typeii_route():
            return "typeii"
        if method == "type2":  # another likelihood: the type-II core's Laplace path
            return "typeii_laplace"
        if method in ("gibbs", "nuts"):  # the sampling core ("bayesian_lasso" under ScaledLaplacePrior)
            return self._sampling_route(method)
        if method == "map" and "map" in self._ROUTES:  # the MAP fitting core (bound optimization)
            return "map"
        task = "classification" if isinstance(self, ClassifierMixin) else "regression"
        *others, last = [repr(m) for m in dict.fromkeys(METHODS.values()) if m != "map" or "map" in self._ROUTES]
        raise ValueError(f"method={method!r} has no {task} engine: use {', '.join(others)} or {last}")

    def _check_model(self):
        """The checks of the route's set-up (:data:`_SETUPS`), before any data is read: ``ValueError``
        naming what is wrong with the parameters."""
        getattr(self, self._SETUPS[self._route()])()

    def _fitted_route(self):
        """The route of the fit (``NotFittedError`` when there is none)."""
        check_is_fitted(self)
        return self._route_

    def _answering(self, fitted=True):
        """The class of :data:`_ROUTES` whose methods answer for the fit (``fitted=False``: for the fit
        ``fit`` would make)."""
        return self._ROUTES[self._fitted_route() if fitted else self._route()]

    @atomic_fit
    def fit(self, X, y):
        """Fit the model by the fitting core of the route the parameters name (:meth:`_route`); returns ``self``. A failed fit leaves nothing fitted, and the fit's
        warnings name the line that called it."""
        route = self._route()
        _clear_fitted(self)
        if route != "map":  # MAP's warm start resumes from the last fit only (map_fitted's _fit_map)
            vars(self).pop("_warm_weights", None)
        getattr(self, f"_fit_{route}")(X, y)
        self._route_ = route
        return self

    def _typeii_route(self):
        """Whether ``fit`` fits by the Gaussian type-II core (:meth:`SparseRegressor._fit_typeii`)."""
        return False

    def predict(self, X, **kwargs):
        """The prediction (the mean for regression, the class for classification) of the fit's route."""
        return self._answering().predict(self, X, **kwargs)

    def to_inference_data(self, *args, **kwargs):
        """The fit as ArviZ ``InferenceData`` (the route's ``to_inference_data``)."""
        return self._answering().to_inference_data(self, *args, **kwargs)

    def posterior_model(self, X=None, y=None, **kwargs):
        """The record of this fit's model (:mod:`sparsebayes.inference.posterior.posterior_model`), the
        route's. Unfitted, ``X = None`` gives the record without data of the model ``fit`` would build (its
        hierarchy and likelihood, no point) on every route; a record on data ``X`` is the fit's, so unfitted
        it is scikit-learn's ``NotFittedError``."""
        fitted = hasattr(self, "_route_")
        if not fitted and X is not None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: posterior_model(X, y) is "
                                 "the fitted model's record on data; call 'fit' first (posterior_model() without "
                                 "data is the record of the model fit would build)")
        return self._answering(fitted).posterior_model(self, X, y, **kwargs)

    def sample_posterior(self, X, y, sampler="nuts", **kwargs):
        """Draws of the posterior of this fit's model
        (:class:`~sparsebayes.inference.posterior.posterior_sampling.PosteriorSamplingMixin`), the route's."""
        return self._answering().sample_posterior(self, X, y, sampler, **kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    def __getstate__(self):
        return picklable_state(super().__getstate__())  # a NUTS fit's run holds its model function


class SparseRegressor(RegressorMixin, _ComposedEstimator, EMRegressorMethods, TypeIIRegressorMethods,
                      TypeIILaplaceRegressorMethods, SamplingRegressorMethods, BayesianLassoMethods):
    """Sparse Bayesian regression: one estimator for every (hierarchy, engine) pair.

    Parameters
    ----------
    prior : None, str or hierarchy object, default=None
        The hierarchy on the weights (the module's table lists what each ``method`` fits;
        ``None`` takes the method's :data:`DEFAULT_PRIOR`: Jeffreys for EM, whose estimate does
        not depend on the units of ``y`` or ``X``):
        ``"laplace"``, ``"jeffreys"``, ``"horseshoe"``, ``"ard"``, ``"scaled_laplace"``, or an
        object such as ``HorseshoePrior(tau=0.1)`` or ``LaplacePrior(gamma=2.0)`` (EM), or
        ``ScaledLaplacePrior(a=1.0, b=0.1)`` (type-II, or the samplers' Bayesian Lasso: its fields
        are the paper estimator's parameters, module docstring). A fitted estimator's ``prior_``
        refits its model.
    likelihood : str or likelihood object, default="gaussian"
        The observation model: a registered likelihood of real or count targets (``"gaussian"``,
        ``"student_t"``, ``"poisson"``, ``"negative_binomial"``) or an object such as
        ``StudentTLikelihood(df=3.0)`` (the module's table says which method fits which); a fitted
        ``likelihood_``.
    method : {"em", "type2", "gibbs", "nuts"}, default="em"
        The engine: EM posterior mode, type-II maximum likelihood, or posterior draws by a
        sampler, ``coef_`` their median (``"typeii"`` is a synonym of ``"type2"``).
    features : {"linear", "quadratic", "kernel"} or transformer, default="linear"
        The basis ``h(x)``.
    kernel_width : float or "scale", default="scale"
        Width of ``features="kernel"``.
    options : dict or None, default=None
        Under ``method="em"`` EM's settings (:data:`EM_OPTIONS`: ``gamma``, ``gamma_prior``, ``bias``,
        ``standardize``, ``noise_var``, ``tol``, ``max_iter``, ``low_rank``, as
        :class:`AdaptiveSparseRegressor` documents them); otherwise the settings of the method's fitting
        core, as its paper estimator names them (e.g. ``{"max_iter": 500}``). A name that is neither is a ``ValueError`` listing them.

    Attributes
    ----------
    coef_, intercept_, n_iter_, objective_, active_, ... :
        Under ``method="em"`` those :class:`AdaptiveSparseRegressor` documents (EM's fitted model,
        :func:`~.em_fit.fit_em_model`); otherwise those the method's paper estimator documents (the
        record of its fitting core, module docstring).
    prior_, likelihood_ :
        The hierarchy and the likelihood objects fitted: ``prior=prior_, likelihood=likelihood_`` refits.
    """

    _PAPERS = {"em": "AdaptiveSparseRegressor", "typeii_laplace": "PoissonRVMRegressor", "gibbs": "GibbsRegressor",
               "nuts": "NutsRegressor", "bayesian_lasso": "BayesianLassoRegressor"}
    _ROUTES = {"em": EMRegressorMethods, "typeii": TypeIIRegressorMethods, "typeii_laplace": TypeIILaplaceRegressorMethods,
               "gibbs": SamplingRegressorMethods, "nuts": SamplingRegressorMethods,
               "bayesian_lasso": BayesianLassoMethods}

    def __init__(self, *, prior=None, likelihood="gaussian", method="em", features="linear", kernel_width="scale",
                 options=None):
        set_init_params(self, locals())


    def _em_likelihood(self):
        """The likelihood object with EM's pieces (by name or as given), else a ``ValueError`` naming it
        (a likelihood of labels points to the classifier)."""
        return require_likelihood(regression_likelihood(self.likelihood), "em")

    def _fit_em(self, X, y):
        """Fit the sparse MAP of ``y`` on ``X`` (a DataFrame's columns name the weights) by EM
        (Figueiredo 2003, Sec. 3, eqs. 12–16): :func:`~.em_fit.fit_em_model`, its record named here."""
        options, prior, lik = self._em_setup()
        X, y = validate_regression_data(self, X, y)
        check_targets(lik, y)
        basis = em_basis(X, prior, options, owner=self)
        fit = fit_em_model(basis, y, prior, lik, options, owner=self)
        self._name_em_fit(basis, fit.beta)
        self._em_model_ = (prior, options)  # the model the record states (posterior_model), whatever set_params does
        self.likelihood_ = lik
        self.likelihood_param_ = fit.likelihood_param
        self.noise_var_ = fit.likelihood_param if conjugate_noise(lik) else None
        self.n_iter_ = fit.n_iter
        self.objective_ = fit.objective
        self._name_em_prior([fit])
        self.sigma_ = fit.covariance
        return self

    def _default_prior(self, method):
        # the samplers' default, the Bayesian Lasso, is Park & Casella's Gaussian regression (its engine fits
        # the Gaussian likelihood only): any other likelihood takes the Laplace hierarchy
        if method in DEFAULT_PRIOR_NOT_GAUSSIAN and make_likelihood(self.likelihood).name != "gaussian":
            return DEFAULT_PRIOR_NOT_GAUSSIAN[method]
        return DEFAULT_PRIOR[method]

    def _typeii_route(self):
        """``method="type2"`` with the Gaussian likelihood: fitted by the type-II core (the others by its
        Laplace path, route ``"typeii_laplace"``)."""
        return self._method() == "type2" and conjugate_noise(regression_likelihood(self.likelihood))

    def _typeii_setup(self):
        """(hierarchy, :class:`~.typeii_fit.TypeIIOptions`) of a Gaussian type-II fit: the hierarchy object
        as given (its constants as floats), or for a name the paper estimator's (:data:`TYPEII_PAPER_ESTIMATORS`)
        at its defaults and ``options``; the other settings those of the paper estimator, its defaults
        and ``options``. ``ValueError`` naming a prior that type-II does not fit and options that are
        not the paper estimator's parameters or that the hierarchy object sets."""
        prior = self._given_hierarchy("type2")
        if is_hierarchy(prior):
            _refuse_em_laplace(prior)
        paper = _typeii_paper(prior)
        defaults = {k: v for k, v in paper().get_params().items() if k not in ("features", "kernel_width")}
        values = self._route_settings("typeii", defaults, paper._hierarchy_params if is_hierarchy(prior) else ())
        hierarchy, settings = paper._typeii_model({**values, "features": self.features, "kernel_width": self.kernel_width})
        if is_hierarchy(prior):
            # the class the paper estimator fits: its _hierarchy, else the registry's of the object's name
            check_hierarchy_class(prior, getattr(paper, "_hierarchy", None) or HIERARCHIES[hierarchy_name(prior)],
                                  paper.__name__, self.method)
            flags = ("lambda_update", "noise_update")
            check_flags_at_default(prior, [f for f in flags if f not in paper._carried_flags], paper.__name__, self.method)
            constants = {f.name: getattr(prior, f.name) for f in dataclasses.fields(prior) if f.name not in flags}
            check_hyperpriors(constants)
            hierarchy = hierarchy_of(type(prior), constants, **{f: getattr(prior, f) for f in flags})
        return hierarchy, settings

    def _fit_typeii(self, X, y):
        """Fit the prior variances, σ² and λ (where the hierarchy has one) by sequential type-II maximum
        likelihood (Tipping & Faul 2003; Helgøy & Li, Algorithm 1): :func:`~.typeii_fit.fit_typeii_model`,
        its record named here (:class:`~.typeii_fitted.TypeIIRegressorMethods`)."""
        prior, options = self._typeii_setup()
        X, y = validate_regression_data(self, X, y)
        fit = fit_typeii_model(typeii_basis(X, options), y, prior, options, owner=self)
        self._name_typeii_fit(fit)
        return self


class SparseClassifier(ClassifierMixin, _ComposedEstimator, EMClassifierMethods, TypeIIClassifierMethods,
                       SamplingClassifierMethods, MapClassifierMethods):
    """Sparse Bayesian classification: one estimator for every (hierarchy, engine) pair.

    The likelihood is ``link``'s, by default the engine's own: probit under ``"em"`` (Figueiredo
    2003, Sec. 4, one classifier per class beyond two), ``"gibbs"`` and ``"nuts"``, Bernoulli-logistic
    under ``"type2"`` (Tipping's RVM), multinomial logistic under ``"map"`` (SMLR, Krishnapuram et
    al. 2005).

    Parameters
    ----------
    prior : None, str or hierarchy object, default=None
        ``None``: the method's :data:`DEFAULT_PRIOR`; ``"laplace"``, ``"jeffreys"``, ``"horseshoe"`` (EM); ``"ard"`` or
        ``ARDPrior()`` (type-II; its noise-prior fields must keep their defaults); ``"laplace"``,
        ``"gaussian"`` or ``"flat"`` (MAP, the l1 / l2 penalty or none); or an object (EM; a
        ``LaplacePrior`` or ``GaussianPrior`` under MAP gives SMLR its ``lam``, so that an SMLR
        fit's ``prior_`` refits it).
    link : None, {"probit", "logistic"} or likelihood object, default=None
        ``P(y = 1 | x) = F(βᵀh(x))``: the probit ``Φ`` or the logistic ``σ`` (EM, Gibbs, NUTS; type-II
        and MAP fit the logistic only); ``None``: the engine's own; a fitted ``likelihood_`` refits.
    method : {"em", "type2", "map", "gibbs", "nuts"}, default="em"
        ``"bound"`` is a synonym of ``"map"``, ``"typeii"`` of ``"type2"``; the samplers' ``prior=None``
        is ``"laplace"``.
    features, kernel_width :
        As :class:`SparseRegressor`.
    options : dict or None, default=None
        As :class:`SparseRegressor`; EM's settings are :class:`SparseProbitClassifier`'s (no ``noise_var``:
        the latent noise is N(0, 1)).

    Attributes
    ----------
    classes_, coef_, intercept_, n_iter_, objective_, laplace_cov_, ... :
        Under ``method="em"`` those :class:`SparseProbitClassifier` documents (one EM fit per class
        beyond two, one-vs-all); otherwise those the method's paper estimator documents.
    """

    _PAPERS = {"em": "SparseProbitClassifier", "typeii_laplace": "RVMClassifier", "map": "SMLRClassifier",
               "gibbs": "GibbsClassifier", "nuts": "NutsClassifier"}
    _ROUTES = {"em": EMClassifierMethods, "typeii_laplace": TypeIIClassifierMethods, "gibbs": SamplingClassifierMethods,
               "nuts": SamplingClassifierMethods, "map": MapClassifierMethods}
    _em_settings = tuple(name for name in EM_OPTIONS if name != "noise_var")

    def __init__(self, *, prior=None, link=None, method="em", features="linear", kernel_width="scale", options=None):
        set_init_params(self, locals())


    def _default_prior(self, method):
        return DEFAULT_PRIOR_NOT_GAUSSIAN.get(method, DEFAULT_PRIOR[method])

    def _em_likelihood(self):
        """The link's likelihood (``None``: EM's probit; :func:`~.links.link_likelihood`), or a ``ValueError``
        naming the links EM fits."""
        return link_likelihood(self.link, ("probit", "bernoulli_logistic"), "probit", self._paper("em"), self.method)

    def _fit_em(self, X, y):
        """Fit the sparse probit (or logistic) MAP by EM over the latent targets (Figueiredo 2003, Sec. 4):
        one model for two classes, one per class (one-vs-all, 002 Sec. 4.2) beyond, each
        :func:`~.em_fit.fit_em_model` on one shared design; their records named here."""
        options, prior, lik = self._em_setup()
        X, y_enc = validate_classification_data(self, X, y)
        basis = em_basis(X, prior, options, owner=self)
        targets = one_vs_all_targets(y_enc, len(self.classes_))
        shared = basis.share(y_enc.size)  # HᵀH and the ridge factor, shared by the classifiers
        fits = [fit_em_model(shared, t, _classifier_prior(prior, c, len(targets)), lik, options,
                             owner=self, which="" if len(targets) == 1 else
                             f" of class {self.classes_[c]} (one-vs-all)") for c, t in enumerate(targets)]
        self._name_em_fit(basis, np.array([fit.beta for fit in fits]))
        self._em_model_ = (prior, options)  # the model the record states (posterior_model), whatever set_params does
        iters, objs = [fit.n_iter for fit in fits], [fit.objective for fit in fits]
        self.n_iter_ = iters[0] if len(iters) == 1 else np.array(iters)
        self.objective_ = objs[0] if len(objs) == 1 else np.array(objs)
        self.laplace_cov_ = [fit.covariance for fit in fits]
        self.likelihood_ = lik
        self._name_em_prior(fits)
        return self

    def predict_proba(self, X):
        """Class probabilities, columns in ``classes_`` order (the route's)."""
        return self._answering().predict_proba(self, X)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, taken in log space where the route can (the route's)."""
        return self._answering().predict_log_proba(self, X)

    def decision_function(self, X):
        """The linear predictor(s) (the route's: EM's ``βᵀh(x)`` per classifier)."""
        return self._answering().decision_function(self, X)

    def _log_link(self, eta):
        """``log P(y = 1 | η)`` of the route's link (the one-vs-all methods ask for it through ``self``)."""
        return self._answering()._log_link(self, eta)


def _clear_fitted(estimator):
    """Remove every fitted attribute of an earlier fit, so that none (``gamma_``, ``lam_`` of a Laplace
    fit after ``set_params(prior="jeffreys")``, another route's) outlives the fit that set it."""
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]:
        delattr(estimator, name)


def check_model(estimator):
    """``estimator`` itself, after the checks its fit makes of its parameters before reading any data (a
    generic estimator's or a paper estimator's route set-up: a ``ValueError`` names a pair no core fits, a
    likelihood the core cannot fit, an option it does not take). :func:`sparsebayes.compare` calls it
    first, so that a model it cannot fit is refused before any sampling."""
    if isinstance(estimator, _ComposedEstimator):
        estimator._check_model()
    return estimator
