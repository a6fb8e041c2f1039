"""What a posterior-draw fit answers, as estimator methods: the routes ``"gibbs"`` and ``"nuts"`` of
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` and ``SparseClassifier``
(and so of their paper subclasses :class:`~sparsebayes.inference.estimators.gibbs_estimators.GibbsRegressor`,
``GibbsClassifier``, :class:`~sparsebayes.inference.estimators.nuts_estimators.NutsRegressor`,
``NutsClassifier``).

:class:`SamplingRegressorMethods` and :class:`SamplingClassifierMethods` fit by the sampling core
(:func:`~sparsebayes.inference.estimators.sampling_fit.fit_sampling_model`, once, or once per class
one-vs-all), name its :class:`~sparsebayes.inference.estimators.sampling_fit.SamplingFit` records in the
fitted attributes and answer from them: ``coef_`` and ``intercept_`` the posterior medians (as Park &
Casella report theirs), ``predict`` and ``predict_proba`` the posterior predictive means, the draws
(``to_inference_data``: ``beta`` on ``basis``, ``intercept``, the likelihood's own parameter by its
``param_name``, the hierarchy's sites, ``log_likelihood``), ``summary`` and the record of the model
sampled (:meth:`SamplingMethods.posterior_model`).

The settings of a fit besides the model (:class:`~sparsebayes.inference.estimators.sampling_fit.SamplerSettings`)
are the estimator's own parameters where it has them (a paper subclass), else ``options``, else the
sampler's defaults (:data:`SAMPLER_DEFAULTS`).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import transform_validated
from sparsebayes.models.likelihoods import conjugate_noise
from sparsebayes.models.priors import hierarchy_name, is_hierarchy

from sparsebayes.inference.estimators._base import basis_names, fitted_by
from sparsebayes.inference.estimators.links import link_likelihood
from sparsebayes.inference._validation import (one_vs_all_targets, regression_likelihood, validate_classification_data,
                                               validate_predict_data, validate_regression_data)
from sparsebayes.inference.estimators.sampling_fit import (SamplerSettings, check_sampling_likelihood, gibbs_hierarchy,
                                                           draw_gibbs, fit_sampling_model, inference_data,
                                                           sampling_design, sampling_hierarchy)
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin

#: The settings each sampler takes (``options`` of a generic estimator, the parameters of its paper
#: classes) and their defaults; the classifiers take those without the Gaussian's noise prior ``c, d``.
SAMPLER_DEFAULTS = {
    "gibbs": dict(fit_intercept=True, standardize=True, num_warmup=500, num_samples=1000, num_chains=4, seed=0,
                  credible_level=0.95, rhat_max=1.01, progress_bar=False, c=-1.0, d=0.0),
    "nuts": dict(fit_intercept=True, standardize=True, num_warmup=500, num_samples=1000, num_chains=2, seed=0,
                 credible_level=0.95, rhat_max=1.01, progress_bar=False, surrogate_eps=None, target_accept_prob=None),
}

def sampler_defaults(sampler, classifier):
    """The settings (:data:`SAMPLER_DEFAULTS`) ``sampler`` takes for a classifier or a regressor."""
    defaults = dict(SAMPLER_DEFAULTS[sampler])
    if classifier:
        defaults.pop("c", None)
        defaults.pop("d", None)
    return defaults


class SamplingMethods(PosteriorSamplingMixin):
    """What the regressor's and the classifier's posterior-draw fits share (module docstring)."""

    _sampling_classifier = False

    # --- the fit ---------------------------------------------------------------------------------------

    def _sampling_route(self, method):
        """The route of ``method`` (``"gibbs"`` or ``"nuts"``): the method's own; for a regression under the
        Bayesian Lasso's hierarchy (``"scaled_laplace"``), ``"bayesian_lasso"``."""
        prior = self._given_prior(method)
        if not self._sampling_classifier and (isinstance(prior, str) or is_hierarchy(prior)) and \
                hierarchy_name(prior) == "scaled_laplace":
            return "bayesian_lasso"
        return method

    def _check_sampling_setup(self):
        """The checks of :meth:`_sampling_setup` (or the Bayesian Lasso's) for the route the parameters
        name, before any data is read: ``ValueError`` naming what is wrong."""
        route = self._route()
        if route == "bayesian_lasso":
            self._bayesian_lasso_setup()
        else:
            self._sampling_setup(route)

    # --- the settings ---------------------------------------------------------------------------------------

    def _sampling_settings(self, sampler):
        """The :class:`SamplerSettings` of a fit by ``sampler``, checked: the estimator's own parameters of
        :func:`sampler_defaults`' names, then ``options`` (the generic estimators' ``_route_settings``: a
        name the sampler does not take, or that a parameter already sets, is a ``ValueError``)."""
        values = self._route_settings(sampler, sampler_defaults(sampler, self._sampling_classifier))
        return SamplerSettings(sampler, features=self.features, kernel_width=self.kernel_width, **values).check()

    def _sampling_setup(self, sampler):
        """``(hierarchy, its engine form, likelihood, settings)`` of a fit by ``sampler``, each checked
        before any data is read: a ``ValueError`` names what is wrong."""
        settings = self._sampling_settings(sampler)
        lik = self._sampling_likelihood()
        check_sampling_likelihood(lik, settings)
        prior = self._given_hierarchy(sampler)
        prior, engine_prior = sampling_hierarchy(prior, settings)
        return prior, engine_prior, lik, settings

    def _sampling_fit(self, H, y, engine_prior, lik, settings):
        """One posterior on the fitted basis ``H`` (:func:`~.sampling_fit.fit_sampling_model`)."""
        coords = {"basis": basis_names(self, self.feature_map_, H.shape[1])}
        return fit_sampling_model(H, y, engine_prior, lik, settings, feature_map=self.feature_map_, coords=coords,
                                  owner=self)

    def _fit_gibbs(self, X, y):
        """Draw the posterior by the Gibbs engine and summarize it (:meth:`_fit_sampling`)."""
        return self._fit_sampling("gibbs", X, y)

    def _fit_nuts(self, X, y):
        """Draw the posterior by NUTS and summarize it (:meth:`_fit_sampling`)."""
        return self._fit_sampling("nuts", X, y)

    def _name_sampling_fits(self, fits, prior, lik, settings):
        """The attributes every posterior-draw fit has, from its records (one for a regression or two
        classes; a classifier's arrays get one row per one-vs-all classifier)."""
        one = not self._sampling_classifier
        stack = (lambda name: getattr(fits[0], name)) if one else (lambda name: np.array([getattr(f, name) for f in fits]))
        self.idata_ = fits[0].idata if len(fits) == 1 else [f.idata for f in fits]
        self.beta_draws_, self.intercept_draws_ = stack("beta"), stack("intercept")
        self.beta_ = stack("median")
        self.coef_, self.coef_mean_, self.coef_interval_ = stack("coef"), stack("mean"), stack("interval")
        self.active_ = stack("active")
        self.intercept_ = fits[0].raw_intercept if one else stack("raw_intercept")
        rhats = [f.rhat for f in fits]
        self.rhat_ = rhats[0] if len(rhats) == 1 else np.array(rhats)
        self.n_iter_ = int(settings.num_samples)
        self.prior_, self.likelihood_ = prior, lik
        self._sampling_settings_ = settings

    # --- the draws --------------------------------------------------------------------------------------

    @property
    def idata_(self):
        """The draws as ``InferenceData`` (a list of them, one per one-vs-all classifier): NUTS's built from
        the fit's run on first read (:meth:`~sparsebayes.inference.engines.nuts.NutsRun.inference_data`)."""
        try:
            stored = self.__dict__["_idata_"]
        except KeyError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'idata_' (not fitted)") from None
        built = inference_data(stored)
        self.__dict__["_idata_"] = built
        return built

    @idata_.setter
    def idata_(self, value):
        self.__dict__["_idata_"] = value

    def _sampling_basis(self, X):
        check_is_fitted(self, "beta_draws_")
        X = validate_predict_data(self, X)
        return np.asarray(transform_validated(self.feature_map_, X), dtype=np.float64)

    def to_inference_data(self):
        """The draws (chain, draw) as ``InferenceData``, a deep copy, so that editing it (adding groups,
        renaming) leaves the fitted ``idata_`` as it was. The ``"gibbs"`` and ``"nuts"`` routes':
        ``posterior`` ``beta`` (dim ``basis``), ``intercept``, the likelihood's parameter, the hierarchy's
        twin sites; ``sample_stats``, ``log_likelihood``, ``observed_data``, ``posterior_predictive``
        (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.augmented_inference_data`); the
        Bayesian Lasso's: its sampler's draws."""
        from sparsebayes.inference.posterior.arviz_compat import copy

        check_is_fitted(self, "idata_")
        return copy(self.idata_)

    @available_if(fitted_by("gibbs", "nuts", "bayesian_lasso"))
    def summary(self):
        """ArviZ's summary of β (R-hat, bulk/tail ESS, MCSE) of the (first) posterior; the Bayesian Lasso's
        in the installed ArviZ's own layout (1.x gives an equal-tailed interval where 0.x gives the HDI)."""
        from sparsebayes.inference.posterior.arviz_compat import summary

        check_is_fitted(self, "beta_draws_")
        if hasattr(self, "_bayesian_lasso_sampler_"):
            import arviz as az  # on use: ArviZ is 1.3 s of the package's 3 s import
            return az.summary(self.idata_, var_names=["beta"])
        idata = self.idata_[0] if isinstance(self.idata_, list) else self.idata_
        return summary(idata, var_names=["beta"])

    # --- the model sampled ------------------------------------------------------------------------------

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:mod:`sparsebayes.inference.posterior.posterior_model`), the posterior the
        fit sampled: the fitted hierarchy (``prior_``) and likelihood (``likelihood_``) on
        :func:`~sparsebayes.models.model.sparse_model` with the basis ``feature_map_.transform(X)`` as
        ``H`` (no bias column) and, with ``fit_intercept``, the intercept as the fit had it: the model
        :func:`~sparsebayes.inference.estimators.sampling_fit.intercept_model_for` (site ``intercept``, flat under
        the Gaussian likelihood, ``N(0, 10²)`` otherwise, the Gibbs engine's
        :data:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.INTERCEPT_SCALE`; ``beta`` on ``basis`` the basis
        weights alone, as in :meth:`to_inference_data`). The likelihood's own parameter is sampled under
        the prior it declares (the Gaussian σ² flat: a Gibbs fit with another ``c, d`` is a
        ``ValueError``). The Gibbs sampler, where the hierarchy has Gibbs conditionals and the
        likelihood a conjugate augmentation, is the Gibbs route's engine (:func:`gibbs_sampler`) on the
        record's ``H`` and ``y``. The point (``point``) is the posterior median on the record's basis:
        ``beta_``, the intercept draws' median (the value at the training mean for a centred basis;
        ``coef_`` and ``intercept_`` are the same function in the data's units) and the likelihood's
        parameter (``likelihood_param_``), labelled ``<sampler>-posterior-median``. Beyond two classes
        the fit is ``K`` independent binary posteriors (one-vs-all), and so is the record
        (:func:`~sparsebayes.inference.posterior.twin_one_vs_all.one_vs_all_model`): class ``k``'s part is this
        record for the targets ``[y = classes_[k]]``, the point ``beta_`` on ``(basis, classifier)`` and the
        intercepts' medians on ``classifier``. ``X = None``: the record without data (its samplers); unfitted,
        that of the model ``fit`` would sample (the hierarchy and likelihood the parameters name, no point)."""
        from sparsebayes.inference.posterior.posterior_model import binary_targets, design, regression_targets

        if X is None and not hasattr(self, "_sampling_settings_"):
            prior, _, lik, settings = self._sampling_setup(self._route())
            return self._sampling_record(prior, lik, self._record_eps(settings, lik, surrogate_eps), None, None, None,
                                         None, settings)
        check_is_fitted(self, "idata_")
        settings = self._sampling_settings_
        lik, prior = self.likelihood_, self.prior_
        eps = self._record_eps(settings, lik, surrogate_eps)
        classifier = self._sampling_classifier
        point = None
        if not classifier or len(self.classes_) == 2:
            point = {"beta": np.asarray(self.beta_, dtype=np.float64).reshape(-1)}
            if settings.fit_intercept:
                point["intercept"] = float(np.median(self.intercept_draws_))
            name = getattr(lik, "param_name", None)
            if name and not classifier and self.likelihood_param_ is not None:
                point[name] = float(self.likelihood_param_)
        point_label = f"{settings.label.lower()}-posterior-median"
        if classifier and len(self.classes_) > 2:
            from sparsebayes.inference.posterior.twin_one_vs_all import one_vs_all_model
            point = {"beta": np.asarray(self.beta_, dtype=np.float64).T}
            if settings.fit_intercept:
                point["intercept"] = np.median(self.intercept_draws_, axis=1)
            H, names = design(self, X) if X is not None else (None, None)
            return one_vs_all_model(self, None if X is None else H.shape[0], y,
                                    lambda t: self._sampling_record(prior, lik, eps, H, names, t, None),
                                    names=names, point=point, point_label=f"{point_label}-one-vs-all",
                                    point_dims={"intercept": ["classifier"]})
        if X is None:
            record = self._sampling_record(prior, lik, eps, None, None, None, point)
        else:
            H, names = design(self, X)
            target = (binary_targets(self, y, H.shape[0], type(self).__name__) if classifier
                      else regression_targets(y, H.shape[0], lik))
            record = self._sampling_record(prior, lik, eps, H, names, target, point)
        record.point_label = point_label
        return record

    @staticmethod
    def _record_eps(settings, lik, surrogate_eps):
        """The record's ``surrogate_eps`` (the fit's setting, else the one given), after the check that the
        fit's noise prior is the record's flat one."""
        if conjugate_noise(lik) and (settings.c, settings.d) != (-1.0, 0.0):
            raise ValueError("the posterior model puts the flat prior on σ² (000 eq. 6); this fit has c, d = "
                             f"{settings.c}, {settings.d}: refit with the defaults to compare it")
        return surrogate_eps if settings.surrogate_eps is None else settings.surrogate_eps

    def _sampling_record(self, prior, lik, eps, H, names, target, point, settings=None):
        """The record of one model this fit sampled (:meth:`posterior_model`): on design ``H`` with targets
        ``target`` (``H = None``: without data); ``settings`` those of the fit (unfitted: the ones it would take)."""
        from sparsebayes.inference.estimators.sampling_fit import (WithIntercept, intercept_model_for,
                                                                   intercept_prior_model, intercept_scale)
        from sparsebayes.inference.posterior.posterior_model import sparse_posterior_model

        fit_intercept = (self._sampling_settings_ if settings is None else settings).fit_intercept
        scale = intercept_scale(lik)
        if H is None:
            record = sparse_posterior_model(prior, lik, surrogate_eps=eps, point=point)
        else:
            record = sparse_posterior_model(prior, lik, H, target, names=names, surrogate_eps=eps, point=point)
            if fit_intercept:
                label = record.label + ("; intercept flat" if scale is None else f"; intercept N(0, {scale:g}²)")
                record.model = intercept_model_for(record.prior, lik)
                # the statement of all the weights (what the twin asks of ``prior``): not the hierarchy's
                # alone, whose collapsed NUTS form would drop the intercept
                record.prior = WithIntercept(record.prior, scale)
                record.prior_model = intercept_prior_model
                record.kwargs = {**record.kwargs, "intercept_scale": scale}
                record.label = label
        record.gibbs = gibbs_sampler(prior, lik, fit_intercept, owner=self)
        return record


def gibbs_sampler(prior, lik, fit_intercept, *, owner):
    """The record's Gibbs sampler (:mod:`~sparsebayes.inference.posterior.posterior_model`'s ``gibbs`` field)
    of a posterior-draw fit of hierarchy ``prior`` and likelihood ``lik``: the Gibbs route's engine
    (:func:`~.sampling_fit.draw_gibbs`, the Gaussian's flat noise prior) with that intercept, run on the
    record's basis and targets; ``None`` where the hierarchy has no Gibbs conditionals or the
    likelihood no conjugate augmentation."""
    from sparsebayes.inference.engines.hierarchy_gibbs_augmented import require_gibbs_likelihood

    try:
        _, prior_gibbs = gibbs_hierarchy(prior)
        require_gibbs_likelihood(lik)
    except ValueError:
        return None

    def sampler(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar=False):
        settings = SamplerSettings("gibbs", fit_intercept=fit_intercept, num_warmup=num_warmup,
                                   num_samples=num_samples, num_chains=num_chains, seed=seed,
                                   progress_bar=progress_bar).check()
        _, idata = draw_gibbs(np.asarray(t.H, dtype=np.float64), np.asarray(t.y, dtype=np.float64), prior_gibbs, lik,
                              settings, coords, owner=owner)
        idata.posterior.attrs.update(inference="gibbs-estimator")
        return idata

    return sampler


class SamplingRegressorMethods(SamplingMethods):
    """The methods of a fitted posterior-draw regression (module docstring)."""

    def _sampling_likelihood(self):
        """The likelihood object of a regression (by name or as given); a ``ValueError`` for one of labels
        (:func:`~sparsebayes.inference._validation.regression_likelihood`)."""
        return regression_likelihood(self.likelihood)

    def _fit_sampling(self, sampler, X, y):
        """Draw the posterior of ``y`` on the basis of ``X`` by ``sampler`` and name its record.

        Raises ``ValueError`` for a hierarchy the sampler cannot fit (no Gibbs conditionals; no NumPyro
        statement), a likelihood it cannot fit (the Poisson under Gibbs: use NUTS) or of labels, bad
        settings or bad data; warns (``ConvergenceWarning``) when R-hat exceeds ``rhat_max``."""
        prior, engine_prior, lik, settings = self._sampling_setup(sampler)
        X, y = validate_regression_data(self, X, y)
        self.feature_map_, H = sampling_design(X, settings.features, kernel_width=settings.kernel_width,
                                               fit_intercept=settings.fit_intercept,
                                               standardize=settings.standardize, prior=prior)
        fit = self._sampling_fit(H, y, engine_prior, lik, settings)
        self.param_draws_ = fit.param
        self._name_sampling_fits([fit], prior, lik, settings)
        has_param = getattr(lik, "param_name", None) is not None
        self.likelihood_param_ = float(np.median(self.param_draws_)) if has_param else None
        self.noise_var_ = self.likelihood_param_ if conjugate_noise(lik) else None
        return self

    def predict(self, X, return_std=False):
        """The posterior predictive mean ``E[y | x]``: the likelihood's mean averaged over the draws
        (``b₀ + h(x)ᵀE[β]`` for the Gaussian and Student-t, ``E[e^η]`` for counts); with
        ``return_std`` also its sd, ``√(Var_draws[μ(η)] + E_draws[Var(y | η)])``."""
        H = self._sampling_basis(X)
        mean, var = np.empty(H.shape[0]), np.empty(H.shape[0])
        lik, param = self.likelihood_, jnp.asarray(self.param_draws_)
        for start in range(0, H.shape[0], 1024):  # rows in blocks: (block, draws) at a time
            eta = jnp.asarray(H[start:start + 1024] @ self.beta_draws_.T + self.intercept_draws_)
            mu = np.asarray(lik.mean(eta, param))
            mean[start:start + 1024] = mu.mean(axis=1)
            if return_std:
                var[start:start + 1024] = mu.var(axis=1) + np.asarray(lik.variance(eta, param)).mean(axis=1)
        return (mean, np.sqrt(var)) if return_std else mean


class SamplingClassifierMethods(SamplingMethods):
    """The methods of a fitted posterior-draw binary classification (one-vs-all beyond two classes):
    ``P(y = 1 | x) = F(b₀ + h(x)ᵀβ)``, ``F`` the probit ``Φ`` or the logistic ``σ``; ``k > 2`` classes:
    ``k`` one-vs-all posteriors (002 Sec. 4.2), their predictive probabilities normalized over the classes."""

    _sampling_classifier = True

    def _sampling_likelihood(self):
        """The link's likelihood object (``None``: the samplers' probit; :func:`~.links.link_likelihood`)."""
        return link_likelihood(self.link, ("probit", "bernoulli_logistic"), "probit", self._paper(self._method()),
                               self.method)

    def _fit_sampling(self, sampler, X, y):
        """Draw the posterior of each (one-vs-all) classifier by ``sampler`` and name their records."""
        prior, engine_prior, lik, settings = self._sampling_setup(sampler)
        X, y_enc = validate_classification_data(self, X, y)
        self.feature_map_, H = sampling_design(X, settings.features, kernel_width=settings.kernel_width,
                                               fit_intercept=settings.fit_intercept,
                                               standardize=settings.standardize, prior=prior)
        fits = [self._sampling_fit(H, t, engine_prior, lik, settings) for t in one_vs_all_targets(y_enc, len(self.classes_))]
        self._name_sampling_fits(fits, prior, lik, settings)
        return self

    def _log_proba_ova(self, H):
        """``log E_draws[F(η_k)]`` and ``log E_draws[1 − F(η_k)]`` per classifier ``k``: (n, k) each,
        from the likelihood's own ``log_lik`` (finite where a probability rounds to 0 or 1)."""
        lik = self.likelihood_
        ones, zeros = [], []
        for k in range(self.beta_draws_.shape[0]):
            eta = jnp.asarray(H @ self.beta_draws_[k].T + self.intercept_draws_[k])
            s = eta.shape[1]
            ones.append(logsumexp(np.asarray(lik.log_lik(jnp.ones_like(eta), eta)), axis=1) - np.log(s))
            zeros.append(logsumexp(np.asarray(lik.log_lik(jnp.zeros_like(eta), eta)), axis=1) - np.log(s))
        return np.column_stack(ones), np.column_stack(zeros)

    def predict_log_proba(self, X):
        """Binary: ``log [1 − P, P]`` with ``P = E_draws[F(η)]`` the posterior predictive probability;
        one-vs-all: the classifiers' ``log P_k`` normalized over the classes."""
        one, zero = SamplingClassifierMethods._log_proba_ova(self, self._sampling_basis(X))
        if one.shape[1] == 1:
            return np.column_stack([zero[:, 0], one[:, 0]])
        return one - logsumexp(one, axis=1, keepdims=True)

    def predict_proba(self, X):
        """The posterior predictive class probabilities, columns in ``classes_`` order."""
        return np.exp(SamplingClassifierMethods.predict_log_proba(self, X))

    def decision_function(self, X):
        """Binary: ``log P(y = 1) − log P(y = 0)`` of the posterior predictive (positive where ``predict``
        gives the second class); one-vs-all: the normalized log probabilities, (n, n_classes)."""
        logp = SamplingClassifierMethods.predict_log_proba(self, X)
        return logp[:, 1] - logp[:, 0] if logp.shape[1] == 2 else logp

    def predict(self, X):
        """The class of largest posterior predictive probability."""
        logp = SamplingClassifierMethods.predict_log_proba(self, X)
        return self.classes_[np.argmax(logp, axis=1)]

    def to_inference_data(self, classifier=None):
        """The draws as ``InferenceData`` (a deep copy; as :meth:`SamplingMethods.to_inference_data`);
        beyond two classes, ``classifier`` (an index into ``classes_``) picks the one-vs-all posterior."""
        from sparsebayes.inference.posterior.arviz_compat import copy

        check_is_fitted(self, "idata_")
        if not isinstance(self.idata_, list):
            return copy(self.idata_)
        if classifier is None or not (isinstance(classifier, (int, np.integer)) and 0 <= classifier < len(self.idata_)):
            raise ValueError(f"{len(self.idata_)} one-vs-all posteriors: give classifier= an index into classes_ "
                             f"(0 ... {len(self.idata_) - 1}), got {classifier!r}")
        return copy(self.idata_[classifier])


def picklable_state(state):
    """``state`` (an estimator's ``__getstate__``) with a NUTS fit's run made ``InferenceData``: the run
    holds the model function, made in this process, so a pickle keeps the ``InferenceData``."""
    if "_idata_" in state:
        state = {**state, "_idata_": inference_data(state["_idata_"])}
    return state
