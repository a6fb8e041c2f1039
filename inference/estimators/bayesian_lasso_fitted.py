"""What a Bayesian Lasso fit answers, as estimator methods: the route ``"bayesian_lasso"`` of
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` (``method="gibbs"`` or ``"nuts"``
under ``ScaledLaplacePrior``) and of its paper subclass
:class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`: Park & Casella's
(2008) σ-scaled Laplace hierarchy for the Gaussian regression on the centred inputs.

:class:`BayesianLassoMethods` reads the settings (a ``ScaledLaplacePrior`` object's fields, else the paper
class's parameters or ``options``, else :data:`BAYESIAN_LASSO_DEFAULTS`), fits by the route's core
(:func:`~sparsebayes.inference.estimators.bayesian_lasso_fit.fit_bayesian_lasso`), names its
:class:`~sparsebayes.inference.estimators.bayesian_lasso_fit.BayesianLassoFit` record in the fitted
attributes and answers from them: ``coef_`` the posterior medians (as Park & Casella report theirs),
``predict`` the posterior predictive mean, the draws and ``summary`` as the sampling routes' base
(:class:`~sparsebayes.inference.estimators.sampling_fitted.SamplingMethods`) has them, and the record of the
model sampled (:meth:`BayesianLassoMethods.posterior_model`).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.likelihoods import make_likelihood
from sparsebayes.models.priors import is_hierarchy

from sparsebayes.inference.estimators._base import basis_names
from sparsebayes.inference._validation import (check_flags_at_default, check_hierarchy_class, validate_predict_data,
                                               validate_regression_data)
from sparsebayes.inference.estimators.bayesian_lasso_fit import BAYESIAN_LASSO_SAMPLERS, fit_bayesian_lasso
from sparsebayes.inference.estimators.sampling_fit import SamplerSettings
from sparsebayes.inference.estimators.sampling_fitted import SamplingMethods

#: The Bayesian Lasso's settings (``options`` of a generic estimator, the parameters of
#: :class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`) and their
#: defaults: Park & Casella's ``λ² ~ Gamma(1, 1.78)`` and ``p(σ²) ∝ 1/σ²``.
BAYESIAN_LASSO_DEFAULTS = dict(lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000, num_samples=2000,
                               num_chains=4, seed=0, credible_level=0.95, rhat_max=1.01, progress_bar=False)

#: The ``ScaledLaplacePrior`` fields and the settings that carry them: Park & Casella's ``τ_j² ~ Exp(λ²/2)``,
#: ``λ² ~ Gamma(r, δ)`` is BLS's ``τ_i ~ Exp(λ/2)``, ``λ ~ Gamma(a, b)`` (004 eqs. 7–8) with its rate λ
#: standing for λ²; both put ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` on the noise. The object's flags
#: (``lambda_update``, ``noise_update``) are type-II's, with no meaning for a sampler.
BAYESIAN_LASSO_FIELDS = {"a": "lam2_shape", "b": "lam2_rate", "c": "c", "d": "d"}


class BayesianLassoMethods(SamplingMethods):
    """The methods of a fitted Bayesian Lasso (Park & Casella 2008): route ``"bayesian_lasso"``, taken by
    ``method="gibbs"`` or ``"nuts"`` under ``ScaledLaplacePrior`` (or ``"scaled_laplace"``) for the
    Gaussian regression, and by :class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`."""

    def _bayesian_lasso_setup(self):
        """``(hyper, settings, sampler)`` of a Bayesian Lasso fit, each checked before the data is read: the
        sampler (a ``sampler`` parameter, else a generic estimator's ``options["sampler"]``, one of its
        ``method``'s: ``"nuts-marginal"`` for ``"nuts"``, else ``method``), the hyperprior constants (a ``ScaledLaplacePrior``
        object's fields, else the parameters or ``options``, else :data:`BAYESIAN_LASSO_DEFAULTS`) and the
        chains' settings. ``ValueError`` naming what is wrong."""
        from sparsebayes.inference.engines.bayesian_lasso import checked_hyper
        from sparsebayes.models.priors.typeii import ScaledLaplacePrior

        params = self.get_params(deep=False)
        if "sampler" in params:
            sampler = params["sampler"]
        else:  # a generic estimator: the sampler of its method, NUTS on the mixture or (options) the marginal
            options = self.options if isinstance(self.options, dict) else {}
            sampler = options.get("sampler", self.method)
            if sampler in BAYESIAN_LASSO_SAMPLERS and ("gibbs" if sampler == "gibbs" else "nuts") != self.method:
                raise ValueError(f"options sampler={sampler!r} is not a sampler of method={self.method!r}: "
                                 f"method='gibbs' samples by 'gibbs', method='nuts' by 'nuts' or 'nuts-marginal'")
        if sampler not in BAYESIAN_LASSO_SAMPLERS:
            raise ValueError(f"sampler must be 'gibbs', 'nuts' or 'nuts-marginal', got {sampler!r}")
        prior, by_prior = self.prior, {}
        if is_hierarchy(prior):
            check_hierarchy_class(prior, ScaledLaplacePrior, "BayesianLassoRegressor", self.method)
            check_flags_at_default(prior, ("lambda_update", "noise_update"), "BayesianLassoRegressor", self.method)
            by_prior = {param: float(getattr(prior, field)) for field, param in BAYESIAN_LASSO_FIELDS.items()}
        values = {**self._route_settings("bayesian_lasso", {**BAYESIAN_LASSO_DEFAULTS, "sampler": self.method},
                                         set_by_prior=set(by_prior)), **by_prior}
        self._bayesian_lasso_model_checks()
        settings = SamplerSettings("gibbs" if sampler == "gibbs" else "nuts",
                                   **{k: values[k] for k in ("num_warmup", "num_samples", "num_chains", "seed",
                                                             "credible_level", "rhat_max", "progress_bar")}).check()
        hyper = checked_hyper(values["lam2_shape"], values["lam2_rate"], values["c"], values["d"])
        return hyper, dataclasses.replace(settings, c=hyper.c, d=hyper.d), sampler

    def _bayesian_lasso_model_checks(self):
        """``ValueError`` for a likelihood other than the Gaussian or a basis other than the inputs (the
        Bayesian Lasso's model is the Gaussian regression on the centred inputs)."""
        lik = make_likelihood(self.likelihood)
        if lik.name != "gaussian":  # Park & Casella's engine: the Gaussian likelihood itself
            from sparsebayes.models.likelihoods import methods_fitting

            raise ValueError(f"BayesianLassoRegressor (method={self.method!r}, prior='scaled_laplace') fits the 'gaussian' "
                             f"likelihood only, not {lik.name!r}; the {lik.name!r} likelihood is fitted by "
                             f"{methods_fitting(lik)} under another prior ('laplace', 'horseshoe', ...)")
        if self.features not in (None, "linear"):
            raise ValueError(f"BayesianLassoRegressor (method={self.method!r}) takes the inputs as they are: "
                             f"features={self.features!r} is not available to it; use features='linear'")

    def _fit_bayesian_lasso(self, X, y):
        """Sample the Bayesian Lasso posterior of ``y`` on ``X`` (:func:`~.bayesian_lasso_fit.fit_bayesian_lasso`)
        and name its record."""
        from sparsebayes.models.likelihoods import GaussianLikelihood
        from sparsebayes.models.priors.typeii import ScaledLaplacePrior

        hyper, settings, sampler = self._bayesian_lasso_setup()
        X, y = validate_regression_data(self, X, y)
        coords = {"basis": basis_names(self, None, X.shape[1])}
        fit = fit_bayesian_lasso(X, y, hyper, settings, sampler, coords=coords, owner=self)
        self.x_mean_, self.y_mean_ = fit.x_mean, fit.y_mean
        self.idata_ = fit.idata
        self.likelihood_ = GaussianLikelihood()
        self.prior_ = ScaledLaplacePrior(**{field: getattr(hyper, param) for field, param in BAYESIAN_LASSO_FIELDS.items()})
        self.beta_draws_, self.noise_var_draws_ = fit.beta, fit.noise_var
        self.coef_, self.coef_mean_, self.coef_interval_, self.active_ = fit.coef, fit.coef_mean, fit.coef_interval, fit.active
        self.noise_var_, self.lam_ = fit.noise_var_median, fit.lam
        self.intercept_, self.intercept_var_ = fit.intercept, fit.intercept_var
        self.n_iter_ = int(settings.num_samples)
        self.rhat_ = fit.rhat
        self._bayesian_lasso_sampler_ = sampler
        return self

    def predict(self, X, return_std=False):
        """Posterior predictive mean ``x̃ᵀE[β] + ȳ`` (``x̃ = x − x̄``); with ``return_std`` its sd,
        ``√(Var[x̃ᵀβ] + E[σ²] + E[σ²]/n)`` over the draws: the last term is the integrated-out
        intercept's (``intercept_var_``)."""
        check_is_fitted(self, "coef_")
        X = validate_predict_data(self, X)
        Xc = X - self.x_mean_
        mean = Xc @ self.coef_mean_ + self.y_mean_
        if not return_std:
            return mean
        draws = Xc @ self.beta_draws_.T
        return mean, np.sqrt(draws.var(axis=1) + self.noise_var_draws_.mean() + self.intercept_var_)

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.bayesian_lasso_model`)."""
        from sparsebayes.inference.posterior.twin_builders import bayesian_lasso_model

        return bayesian_lasso_model(self, X, y, surrogate_eps, train)
