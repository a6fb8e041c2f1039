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
                                                 Gaussian; "ard" with the Poisson likelihood (the
                                                 Poisson RVM); "ard" with the logistic link
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

:data:`REGRESSION_ENGINES` and :data:`CLASSIFICATION_ENGINES` are this table, the engine estimator
of each pair.

The engine-specific estimators (:class:`AdaptiveSparseRegressor`, :class:`RVMRegressor`, …) are
what these compose: ``fit`` builds the one the ``(method, prior)`` pair names, with ``features``,
``kernel_width`` and the engine's own ``options``, fits it (``estimator_``), and copies its fitted
attributes, so ``coef_``, ``intercept_``, ``n_iter_`` mean what they mean on that estimator. A pair
that no engine can fit is a ``ValueError`` naming the hierarchy and the missing piece; a likelihood
that the pair's engine cannot fit, one naming the likelihood, the missing piece
(:data:`~sparsebayes.models.likelihoods.LIKELIHOOD_CAPABILITIES`) and the methods that fit it. The
fitted ``likelihood_`` (the object) beside ``prior_``: ``prior=est.prior_, likelihood=est.likelihood_``
(``link=est.likelihood_`` for a classifier) with ``est``'s method refits ``est``'s model.

A type-II hierarchy object (:mod:`sparsebayes.models.typeii_hierarchies`) is its engine estimator's
parameters in one piece: type-II estimates λ and σ², and the object's fields are what it does not
estimate, the hyperprior constants ``a, b, c, d`` (``λ ~ Gamma(a, b)``, 004 eq. 8; ``p(σ²)`` of
004 eq. 9) and the flags ``lambda_update``, ``noise_update``. They become the parameters of the same
names (FLAP's ``noise_update="variances-fixed"`` is ``estimate_noise=True``, FLAPσ), so
``prior=ScaledLaplacePrior(a=1.0, b=0.1)`` fits what ``BLSRegressor(a=1.0, b=0.1)`` fits, and the
fitted ``prior_`` of a type-II estimator refits its model. A field that the engine estimator has no
parameter for (the RVM's ``lambda_update``, the classifier's noise prior) must keep its default.
EM's :class:`~sparsebayes.models.priors.LaplacePrior` fixes γ (or puts EM's proper hyperprior on it)
and is refused under type-II: the Laplace hierarchy of FLAP is ``LaplaceVariancePrior``.

The same holds for the other engines. Under "gibbs" and "nuts" a ``ScaledLaplacePrior`` is Park &
Casella's hierarchy (``τ_j² ~ Exp(λ²/2)`` is ``τ_i ~ Exp(λ/2)`` with the object's λ their λ²), so its
``a, b`` are :class:`BayesianLassoRegressor`'s ``lam2_shape, lam2_rate`` (``λ² ~ Gamma(r, δ)``) and
``c, d`` its noise prior; its flags must keep their defaults, and the name "scaled_laplace" takes the
estimator's defaults (Park & Casella's r = 1, δ = 1.78; the object's are type-II's flat a = b = 0).
Under "map" a ``LaplacePrior`` (without ``gamma_prior``), ``GaussianPrior`` or ``FlatPrior`` is SMLR's
penalty at its λ (:mod:`sparsebayes.models.map_priors`). Every EM, type-II, MAP and sampling estimator
has a fitted ``prior_``, the object of its model: ``prior=est.prior_`` with ``est``'s method,
features and other options refits ``est``'s model.
"""
from __future__ import annotations

import dataclasses

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.likelihoods import LIKELIHOOD_CAPABILITIES, make_likelihood, require_likelihood
from sparsebayes.models.map_priors import PENALTY_OF
from sparsebayes.models.priors import HIERARCHIES, LaplacePrior, hierarchy_name, is_hierarchy, require

#: the hierarchy each method fits when ``prior=None``: the parameter-free (scale-free) ones where they exist
DEFAULT_PRIOR = {"em": "jeffreys", "type2": "ard", "map": "laplace", "gibbs": "scaled_laplace", "nuts": "scaled_laplace"}

#: where the default differs: the samplers' under a likelihood other than the Gaussian (the Bayesian
#: Lasso's σ-scaled hierarchy is the Gaussian's) and for classification, EM's Laplace hierarchy
DEFAULT_PRIOR_NOT_GAUSSIAN = {"gibbs": "laplace", "nuts": "laplace"}

#: the methods a user may name, and the synonyms accepted for them
METHODS = {"em": "em", "type2": "type2", "typeii": "type2", "map": "map", "bound": "map", "gibbs": "gibbs",
           "nuts": "nuts"}

#: The key of an engine table's row that takes every hierarchy with the engine's E-step (EM's, :func:`_em_parameters`).
ANY = "any hierarchy with an EM E-step"
#: The key of the Gibbs rows that take every hierarchy with Gibbs conditionals, and EM's Laplace
#: hierarchy (:func:`sparsebayes.inference.estimators.gibbs_estimators.gibbs_hierarchy`).
ANY_GIBBS = "any hierarchy with Gibbs conditionals, and 'laplace'"
#: The key of the NUTS rows that take every hierarchy with a NumPyro statement
#: (:func:`sparsebayes.models.model.beta_statement`).
ANY_NUTS = "any hierarchy with a NumPyro statement"
#: The rows' keys that stand for every hierarchy the row's engine checks itself (a name of its own comes first).
WILDCARDS = (ANY, ANY_GIBBS, ANY_NUTS)

_BAYESIAN_LASSO = ("bayesian_lasso_estimator", "BayesianLassoRegressor")

#: The engine estimator of each (method, hierarchy) pair for regression: method -> {hierarchy name:
#: (module of ``sparsebayes.inference``, class)}. :func:`_engine_of` and the refusals read it.
REGRESSION_ENGINES = {
    "em": {ANY: ("adaptive", "AdaptiveSparseRegressor")},
    "type2": {"ard": ("typeii_estimators", "RVMRegressor"), "laplace": ("typeii_estimators", "FLAPRegressor"),
              "laplace_variance": ("typeii_estimators", "FLAPRegressor"),
              "scaled_laplace": ("typeii_estimators", "BLSRegressor")},
    "gibbs": {"scaled_laplace": _BAYESIAN_LASSO, ANY_GIBBS: ("gibbs_estimators", "GibbsRegressor")},
    "nuts": {"scaled_laplace": _BAYESIAN_LASSO, ANY_NUTS: ("nuts_estimators", "NutsRegressor")},
}

#: (method, hierarchy, likelihood) -> engine estimator, where a likelihood other than the Gaussian has an
#: engine estimator of its own for the pair (the Poisson RVM: type-II ARD under the Poisson likelihood).
LIKELIHOOD_ENGINES = {("type2", "ard", "poisson"): ("poisson_rvm", "PoissonRVMRegressor")}

#: The same for classification; under "map" SMLR fits each hierarchy of :data:`PENALTY_OF` (its ``penalty``).
CLASSIFICATION_ENGINES = {
    "em": {ANY: ("adaptive", "SparseProbitClassifier")},
    "type2": {"ard": ("rvm_classifier", "RVMClassifier")},
    "map": {name: ("smlr", "SMLRClassifier") for name in PENALTY_OF},
    "gibbs": {ANY_GIBBS: ("gibbs_estimators", "GibbsClassifier")},
    "nuts": {ANY_NUTS: ("nuts_estimators", "NutsClassifier")},
}

#: The likelihood an engine estimator without a ``likelihood`` (or ``link``) parameter fits; those not
#: listed fit the Gaussian. The others take the likelihood as a parameter.
FIXED_LIKELIHOOD = {"PoissonRVMRegressor": "poisson", "RVMClassifier": "bernoulli_logistic",
                    "SMLRClassifier": "multinomial"}

#: The capability (:data:`~sparsebayes.models.likelihoods.LIKELIHOOD_CAPABILITIES`) each method's engine
#: asks of a likelihood it takes as a parameter.
LIKELIHOOD_ENGINE = {"em": "em", "gibbs": "gibbs", "nuts": "nuts"}

#: The classifiers' links: the likelihood each names (``link=``; a likelihood object of the class is its own).
LINK_LIKELIHOODS = {"probit": "probit", "logistic": "bernoulli_logistic"}


def _lazy(module, name):
    """The estimator class ``name`` of ``sparsebayes.inference.estimators.<module>`` (imported on use)."""
    import importlib

    return getattr(importlib.import_module(f"sparsebayes.inference.estimators.{module}"), name)


def _em_parameters(prior, cls, method):
    """The EM estimators' ``prior``: a name of the registry or a hierarchy object with the EM
    E-step (checked here, so the error names the hierarchy before anything is built), or a list of
    such objects, one per one-vs-all classifier (a multiclass fit's ``prior_``, which refits it)."""
    if isinstance(prior, list):
        for p in prior:
            require(p, "em")
    elif not isinstance(prior, str):
        require(prior, "em")
    elif prior not in HIERARCHIES:
        raise ValueError(f"prior {prior!r} is not a registered hierarchy; known: {sorted(HIERARCHIES)}")
    return {"prior": prior}


def _engine_of(table, task, method, prior):
    """(class, keyword arguments) of the engine estimator that ``table`` (:data:`REGRESSION_ENGINES`,
    :data:`CLASSIFICATION_ENGINES`) names for ``(method, prior)``; the keyword arguments are what
    ``prior`` sets (:data:`_PARAMETERS`). A pair the table lacks is a ``ValueError`` listing what
    the method fits."""
    if method not in table:
        *others, last = [repr(m) for m in table]
        raise ValueError(f"method={method!r} has no {task} engine: use {', '.join(others)} or {last}")
    row = table[method]
    key = hierarchy_name(prior)
    if key not in row:
        key = next((k for k in WILDCARDS if k in row), key)
    if key not in row:
        label = type(prior).__name__ if is_hierarchy(prior) else repr(prior)
        fits = ", ".join(f"{name!r} ({cls})" for name, (_, cls) in row.items())
        raise ValueError(f"prior {label} has no {method!r} engine; method={method!r} fits the priors {fits}")
    cls = _lazy(*row[key])
    return cls, _PARAMETERS[method](prior, cls, method)


def _regression_engine(method, prior, likelihood="gaussian"):
    """(class, keyword arguments) of the engine estimator for regression (:data:`REGRESSION_ENGINES`,
    :data:`LIKELIHOOD_ENGINES`) under ``likelihood`` (a registered name or a likelihood object)."""
    lik = make_likelihood(likelihood)
    if getattr(lik, "support", "real") in ("binary", "categorical"):
        raise ValueError(f"likelihood {lik.name!r} models labels: use SparseClassifier(link=...) for classification; "
                         "SparseRegressor takes the likelihoods of real or count targets "
                         f"({_regression_likelihoods()})")
    special = LIKELIHOOD_ENGINES.get((method, hierarchy_name(prior), lik.name))
    if special is not None:
        cls = _lazy(*special)
        kw = _PARAMETERS[method](prior, cls, method)
    else:
        cls, kw = _engine_of(REGRESSION_ENGINES, "regression", method, prior)
    _take_likelihood(cls, kw, "likelihood", likelihood, lik, method, prior)
    return cls, kw


def _classification_engine(method, prior, link=None):
    """(class, keyword arguments) of the engine estimator for classification (:data:`CLASSIFICATION_ENGINES`)
    with ``link`` (``None``: the engine's own; ``"probit"``, ``"logistic"`` or a fitted ``likelihood_``)."""
    cls, kw = _engine_of(CLASSIFICATION_ENGINES, "classification", method, prior)
    if link is None:
        return cls, kw
    if isinstance(link, str):
        if link not in LINK_LIKELIHOODS:
            raise ValueError(f"link must be None, one of {sorted(LINK_LIKELIHOODS)} or a fitted likelihood_, "
                             f"got {link!r}")
        lik = make_likelihood(LINK_LIKELIHOODS[link])
    else:
        lik = make_likelihood(link)
    name = {v: k for k, v in LINK_LIKELIHOODS.items()}.get(lik.name)
    if FIXED_LIKELIHOOD.get(cls.__name__) == "multinomial" and lik.name in ("multinomial", "bernoulli_logistic"):
        return cls, kw  # SMLR's multinomial logistic: the logistic link for two classes
    _take_likelihood(cls, kw, "link", name if name is not None else link, lik, method, prior)
    return cls, kw


def _regression_likelihoods():
    from sparsebayes.models.likelihoods import LIKELIHOODS

    return ", ".join(n for n, c in sorted(LIKELIHOODS.items()) if getattr(c, "support", "real") in ("real", "counts"))


def _take_likelihood(cls, kw, param, value, lik, method, prior):
    """Put the likelihood ``value`` (``lik`` its object) into ``kw`` as ``cls``'s parameter ``param``, after
    checking that ``method``'s engine has what it needs of it (:data:`LIKELIHOOD_ENGINE`); an engine
    estimator that fixes its likelihood (:data:`FIXED_LIKELIHOOD`, the Gaussian for the others) takes it
    only when it is that one. ``ValueError`` naming the likelihood and the missing piece otherwise."""
    if param in cls().get_params():
        if method == "gibbs":
            from sparsebayes.inference.engines.hierarchy_gibbs import require_gibbs_likelihood
            require_gibbs_likelihood(lik)
        elif method in LIKELIHOOD_ENGINE:
            require_likelihood(lik, LIKELIHOOD_ENGINE[method])
        kw[param] = value
        return
    fixed = FIXED_LIKELIHOOD.get(cls.__name__, "gaussian")
    if lik.name != fixed:
        able = [m for m, piece in LIKELIHOOD_ENGINE.items()
                if not [k for k in LIKELIHOOD_CAPABILITIES[piece] if not hasattr(lik, k)]]
        raise ValueError(f"{cls.__name__} (method={method!r}, prior={hierarchy_name(prior)!r}) fits the {fixed!r} "
                         f"likelihood only, not {lik.name!r}; the {lik.name!r} likelihood is fitted by "
                         f"{', '.join(f'method={m!r}' for m in able) or 'no engine estimator yet'}")


def _check_hierarchy_class(prior, cls, method):
    """The hierarchy class the engine estimator ``cls`` fits (its ``_hierarchy``, else the registry's
    class of ``prior``'s name); ``ValueError`` when the object ``prior`` is not one (another class that
    calls itself by that name would be fitted as if it were)."""
    hierarchy = getattr(cls, "_hierarchy", None) or HIERARCHIES[hierarchy_name(prior)]
    if not isinstance(prior, hierarchy):
        raise ValueError(f"{cls.__name__} (method={method!r}) fits {hierarchy.__name__}, not {type(prior).__name__}")
    return hierarchy


#: (engine estimator, hierarchy field) -> (its parameter, the value from the field's), where the two
#: differ and the estimator does not say so itself (an estimator's ``_hierarchy_fields``, field ->
#: parameter, names its own: the Bayesian Lasso's ``a, b`` are ``lam2_shape, lam2_rate``)
_RENAMED = {("FLAPRegressor", "noise_update"): ("estimate_noise", lambda flag: flag == "variances-fixed")}


def _hierarchy_parameters(prior, cls, method):
    """The parameters of the engine estimator ``cls`` that a ``hierarchy`` object ``prior`` sets
    (module docstring), each field's own or the one :data:`_RENAMED` or ``cls._hierarchy_fields``
    names; ``{}`` for a name. A field ``cls`` takes no parameter for must be at its default, else the
    ``ValueError`` names it: the fit would silently drop it."""
    if not is_hierarchy(prior):
        return {}
    if isinstance(prior, LaplacePrior):
        raise ValueError("method='type2' estimates the hyperparameters of the Laplace hierarchy (its rate λ, "
                         "FLAP): LaplacePrior is EM's object, with a fixed gamma or a proper gamma_prior; give "
                         "LaplaceVariancePrior(a=..., b=...) or the name 'laplace'")
    _check_hierarchy_class(prior, cls, method)
    params = cls().get_params()
    own = getattr(cls, "_hierarchy_fields", {})
    kw, unmatched = {}, []
    for field in dataclasses.fields(prior):
        value = getattr(prior, field.name)
        value = value if isinstance(value, str) else float(value)
        param, convert = _RENAMED.get((cls.__name__, field.name), (own.get(field.name, field.name), None))
        if param in params:
            kw[param] = value if convert is None else convert(value)
        elif value != field.default:
            unmatched.append(f"{field.name}={value!r}")
    if unmatched:
        raise ValueError(f"{cls.__name__} has no parameter for {type(prior).__name__}'s {', '.join(unmatched)}: "
                         f"method={method!r} would fit the default; leave {'them' if len(unmatched) > 1 else 'it'} "
                         "at the default")
    return kw


def _sampler_parameters(prior, cls, method):
    """The Bayesian Lasso's: the sampler ``method`` names, and the hyperprior constants of a
    ``ScaledLaplacePrior`` object (:func:`_hierarchy_parameters`; the estimator's defaults for the name).
    An engine estimator of one sampler (no ``sampler`` parameter) takes the hierarchy as it is, after
    its engine's check (:func:`~sparsebayes.inference.estimators.gibbs_estimators.gibbs_hierarchy`), so the error
    names the hierarchy before anything is built."""
    if "sampler" not in cls().get_params():
        if method == "gibbs":
            from sparsebayes.inference.estimators.gibbs_estimators import gibbs_hierarchy
            gibbs_hierarchy(prior)
        else:
            _require_statement(prior)
        return {"prior": prior}
    return {"sampler": method, **_hierarchy_parameters(prior, cls, method)}


def _penalty_parameters(prior, cls, method):
    """SMLR's ``penalty`` for ``prior`` (:data:`PENALTY_OF`) and, for an object, its ``lam``: the Laplace
    marginal's l1 weight or the Gaussian prior's precision (a name keeps the estimator's ``lam``)."""
    kw = {"penalty": PENALTY_OF[hierarchy_name(prior)]}
    if not is_hierarchy(prior):
        return kw
    _check_hierarchy_class(prior, cls, method)
    if getattr(prior, "gamma_prior", None) is not None:
        raise ValueError("method='map' (SMLR) fits a fixed lam: a LaplacePrior with gamma_prior (γ estimated) "
                         "needs method='em', or give LaplacePrior(gamma) without gamma_prior")
    if kw["penalty"] is not None:  # an absolute λ: options may not make it relative to λ_max again
        kw.update(lam=float(prior.lam), lam_relative=False)
    return kw


def _require_statement(prior):
    """``ValueError`` naming the hierarchy unless it has a NumPyro statement (``"nuts"`` capability, or
    the papers' model arguments ``nuts_twin``: the Laplace and Jeffreys hierarchies)."""
    obj = HIERARCHIES[prior]() if isinstance(prior, str) and prior in HIERARCHIES else prior
    if isinstance(obj, str):
        raise ValueError(f"prior {prior!r} is not a registered hierarchy; known: {sorted(HIERARCHIES)}")
    if not hasattr(obj, "nuts_twin"):
        require(obj, "nuts")


#: How each method's engine estimator takes the prior: ``(prior, class, method) -> keyword arguments``.
_PARAMETERS = {"em": _em_parameters, "type2": _hierarchy_parameters, "gibbs": _sampler_parameters,
               "nuts": _sampler_parameters, "map": _penalty_parameters}


class _ComposedEstimator(BaseEstimator):
    """Fit the engine estimator named by ``(method, prior)``; expose its fitted attributes."""

    def _engine_for(self, method, prior):  # the subclasses': (class, kwargs) of the engine estimator
        raise NotImplementedError

    def _default_prior(self, method):
        return DEFAULT_PRIOR[method]

    def _engine(self):
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {self.method!r}")
        method = METHODS[self.method]
        prior = self._default_prior(method) if self.prior is None else self.prior
        listed = isinstance(prior, list) and bool(prior) and all(is_hierarchy(p) for p in prior)
        if not (isinstance(prior, str) or is_hierarchy(prior) or (listed and method == "em")):
            raise ValueError(f"prior must be None, a hierarchy name or a hierarchy object (under method='em', also a "
                             f"multiclass fit's prior_, a list of them), got {prior!r}")
        options = {} if self.options is None else self.options
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict of the engine estimator's parameters, got {type(options).__name__}")
        cls, kw = self._engine_for(method, prior)
        params = cls().get_params()
        unknown = sorted(set(options) - set(params))
        if unknown:
            raise ValueError(f"options {unknown} are not parameters of {cls.__name__} (method={self.method!r}, "
                             f"prior={hierarchy_name(prior)!r}); it takes {sorted(params)}")
        fixed = sorted(set(options) & set(kw))
        if fixed:
            raise ValueError(f"options {fixed} are set by prior= and method= (a hierarchy object sets its fields' "
                             "parameters); remove them from options")
        for key in ("features", "kernel_width"):
            if key in params:
                kw[key] = getattr(self, key)
        if "features" not in params and self.features not in (None, "linear"):
            raise ValueError(f"{cls.__name__} (method={self.method!r}) takes the inputs as they are: "
                             f"features={self.features!r} is not available to it; use features='linear'")
        return cls(**kw, **options)

    def fit(self, X, y):
        """Fit the engine estimator (``estimator_``) and copy its fitted attributes onto ``self``."""
        for key in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, key)
        estimator = self._engine().fit(X, y)
        for key, value in vars(estimator).items():
            if key.endswith("_") and not key.startswith("_"):
                setattr(self, key, value)
        if not hasattr(self, "likelihood_"):  # an engine estimator of one likelihood
            self.likelihood_ = make_likelihood(FIXED_LIKELIHOOD.get(type(estimator).__name__, "gaussian"))
        self.estimator_ = estimator
        return self

    def predict(self, X):
        """The engine estimator's prediction (the mean for regression, the class for classification)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    def to_inference_data(self, *args, **kwargs):
        """The engine estimator's point estimate as ArviZ ``InferenceData`` (its ``to_inference_data``)."""
        check_is_fitted(self, "estimator_")
        if not hasattr(self.estimator_, "to_inference_data"):
            raise ValueError(f"{type(self.estimator_).__name__} has no to_inference_data")
        return self.estimator_.to_inference_data(*args, **kwargs)

    def sample_posterior(self, X, y, sampler="nuts", **kwargs):
        """Draws of the posterior of this fit's model: the engine estimator's ``sample_posterior``
        (:class:`~sparsebayes.inference.posterior.posterior_sampling.PosteriorSamplingMixin`)."""
        check_is_fitted(self, "estimator_")
        if not hasattr(self.estimator_, "sample_posterior"):
            raise ValueError(f"{type(self.estimator_).__name__} (method={self.method!r}) is fitted by posterior draws: "
                             "to_inference_data() returns them")
        return self.estimator_.sample_posterior(X, y, sampler, **kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class SparseRegressor(RegressorMixin, _ComposedEstimator):
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
        are the engine estimator's parameters, module docstring). A fitted estimator's ``prior_``
        refits its model.
    likelihood : str or likelihood object, default="gaussian"
        The observation model: a registered likelihood of real or count targets (``"gaussian"``,
        ``"student_t"``, ``"poisson"``, ``"negative_binomial"``) or an object such as
        ``StudentTLikelihood(df=3.0)``, passed to the engine estimator (module table); a fitted
        ``likelihood_``.
    method : {"em", "type2", "gibbs", "nuts"}, default="em"
        The engine: EM posterior mode, type-II maximum likelihood, or posterior draws by a
        sampler, ``coef_`` their median (``"typeii"`` is a synonym of ``"type2"``).
    features : {"linear", "quadratic", "kernel"} or transformer, default="linear"
        The basis ``h(x)``, passed to the engine estimator (samplers take the inputs as they are).
    kernel_width : float or "scale", default="scale"
        Width of ``features="kernel"``.
    options : dict or None, default=None
        Further parameters of the engine estimator (e.g. ``{"max_iter": 500}``); a name it does
        not take is a ``ValueError`` listing the ones it does.

    Attributes
    ----------
    estimator_ : estimator
        The fitted engine estimator (e.g. :class:`AdaptiveSparseRegressor` for ``method="em"``).
    coef_, intercept_, n_iter_, ... :
        The engine estimator's fitted attributes, copied.
    prior_, likelihood_ :
        The hierarchy and the likelihood objects fitted: ``prior=prior_, likelihood=likelihood_`` refits.
    """

    def __init__(self, *, prior=None, likelihood="gaussian", method="em", features="linear", kernel_width="scale",
                 options=None):
        self.prior = prior
        self.likelihood = likelihood
        self.method = method
        self.features = features
        self.kernel_width = kernel_width
        self.options = options

    def _engine_for(self, method, prior):
        return _regression_engine(method, prior, self.likelihood)

    def _default_prior(self, method):
        if method in DEFAULT_PRIOR_NOT_GAUSSIAN and make_likelihood(self.likelihood).name != "gaussian":
            return DEFAULT_PRIOR_NOT_GAUSSIAN[method]
        return DEFAULT_PRIOR[method]


class SparseClassifier(ClassifierMixin, _ComposedEstimator):
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
    features, kernel_width, options :
        As :class:`SparseRegressor`.

    Attributes
    ----------
    estimator_ : estimator
        The fitted engine estimator.
    classes_, coef_, intercept_, n_iter_, ... :
        The engine estimator's fitted attributes, copied.
    """

    def __init__(self, *, prior=None, link=None, method="em", features="linear", kernel_width="scale", options=None):
        self.prior = prior
        self.link = link
        self.method = method
        self.features = features
        self.kernel_width = kernel_width
        self.options = options

    def _engine_for(self, method, prior):
        return _classification_engine(method, prior, self.link)

    def _default_prior(self, method):
        return DEFAULT_PRIOR_NOT_GAUSSIAN.get(method, DEFAULT_PRIOR[method])

    def predict_proba(self, X):
        """Class probabilities of the engine estimator, columns in ``classes_`` order."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    def decision_function(self, X):
        """The engine estimator's linear predictor(s)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)


def engine_estimator(estimator):
    """The engine estimator behind a generic one (fitted: ``estimator_``; unfitted: the one ``fit``
    would build); any other estimator is returned as it is. :func:`sparsebayes.compare` uses it."""
    if not isinstance(estimator, _ComposedEstimator):
        return estimator
    return estimator.estimator_ if hasattr(estimator, "estimator_") else estimator._engine()
