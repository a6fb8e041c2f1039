"""What a fitted EM model answers, as estimator methods: prediction, its posterior approximation,
ArviZ ``InferenceData`` and the record of its model (:meth:`posterior_model`, which ``compare`` and
``sample_posterior`` sample).

:class:`EMRegressorMethods` and :class:`EMClassifierMethods` are mixed into
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` and
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseClassifier` (and so into their
paper subclasses, :class:`~sparsebayes.inference.estimators.adaptive.AdaptiveSparseRegressor` and
:class:`~sparsebayes.inference.estimators.adaptive.SparseProbitClassifier`), which answer through
them after a ``method="em"`` fit. They read the fitted attributes that the estimator set from the
:class:`~sparsebayes.inference.estimators.em_fit.EMFit` records, and the model the estimator's
parameters name: ``_em_prior()`` (the hierarchy object, or a list of them), ``_em_likelihood()``
and ``_em_options()`` (:class:`~sparsebayes.inference.estimators.em_fit.EMOptions`).

``beta_`` (and ``sigma_``, ``laplace_cov_``, ``to_inference_data``) hold the model's weights on
``feature_map_``'s columns, so they line up with a sampler run on ``feature_map_.transform(X)``
(:mod:`sparsebayes.inference.estimators.adaptive` says why those columns are standardized).
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import transform_validated
from sparsebayes.models.likelihoods import GaussianLikelihood, conjugate_noise
from sparsebayes.models.priors import hierarchy_name

from sparsebayes.inference.estimators._base import OneVsAllLinkClassifier, basis_names, fitted_by
from sparsebayes.inference.estimators.links import link_name
from sparsebayes.inference._validation import validate_predict_data
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata, predictive_sd
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin

def conditioned_on(prior):
    """What the Gaussian draws at an EM fit hold fixed: the final E-step's prior variances
    ``1/E[1/v_i | β_i]`` (``β_i²`` for Jeffreys, where that is the plug-in itself)."""
    if hierarchy_name(prior) == "jeffreys":
        return "plug-in tau_i = beta_i^2"
    return "tau_i = 1/E[1/tau_i | beta_i]"


def likelihood_prediction(lik, params, eta, H_active, cov, return_std):
    """The mean ``E[y | η]`` at ``η = Hβ̂`` and, with ``return_std``, ``√(Var[y | η] + μ'(η)² hᵀΣh)``
    (the delta method through the likelihood's mean)."""
    import jax
    import jax.numpy as jnp

    eta = jnp.asarray(eta)
    mean = np.asarray(lik.mean(eta, params))
    if not return_std:
        return mean
    slope = np.asarray(jax.vmap(jax.grad(lambda e: lik.mean(e, params)))(eta))
    spread = np.einsum("ij,jk,ik->i", H_active, cov, H_active)
    return mean, np.sqrt(np.asarray(lik.variance(eta, params)) + slope**2 * spread)


def fitted_em_model(est):
    """``(hierarchy, EMOptions)`` of ``est``'s EM fit as it was fitted (a later ``set_params`` without a refit
    does not change the model its record states); unfitted, those its parameters name."""
    fitted = getattr(est, "_em_model_", None)
    return fitted if fitted is not None else (est._em_prior(), est._em_options())


class EMRegressorMethods(PosteriorSamplingMixin):
    """The methods of a fitted EM regression (Figueiredo 2003, Sec. 3); module docstring."""

    def predict(self, X, return_std=False):
        """``h(x)ᵀβ̂`` (with another likelihood its mean there: ``e^{h(x)ᵀβ̂}`` for counts) and, with
        ``return_std``, ``√(σ̂² + h_A(x)ᵀΣ h_A(x))`` with ``Σ = sigma_``, the conditional covariance at
        the final E-step (:meth:`gaussian_conditional`; it holds τ̂ fixed, so it understates the
        posterior spread), for a likelihood that states ``conjugate_noise`` (the Gaussian); with
        another likelihood ``√(Var[y | η̂] + μ'(η̂)² h_A(x)ᵀΣ h_A(x))``."""
        check_is_fitted(self)
        X = validate_predict_data(self, X)
        H = transform_validated(self.feature_map_, X)
        mean = H @ self.beta_
        lik = getattr(self, "likelihood_", None)
        if lik is not None and not conjugate_noise(lik):
            return likelihood_prediction(lik, self.likelihood_param_, mean, H[:, self.beta_ != 0], self.sigma_,
                                         return_std)
        if not return_std:
            return mean
        return mean, predictive_sd(H[:, self.beta_ != 0], self.sigma_, self.noise_var_)

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:mod:`sparsebayes.inference.posterior.posterior_model`): the fitted
        hierarchy (with its hyperprior where EM estimated a shared hyperparameter), the likelihood and
        the design ``feature_map_.transform(X)``; the likelihood's own parameter fixed at ``noise_var``
        where it was given, else sampled under the prior the likelihood declares (σ² flat, 000 eq. 6).
        ``X = None``: the record without data (its samplers)."""
        from sparsebayes.inference.posterior.posterior_model import design, regression_targets, sparse_posterior_model
        lik = getattr(self, "likelihood_", None)
        lik = self._em_likelihood() if lik is None else lik
        prior, options = fitted_em_model(self)
        noise_var = options.noise_var
        if X is None:
            return sparse_posterior_model(prior, lik, params=noise_var, surrogate_eps=surrogate_eps)
        H, names = design(self, X)
        return sparse_posterior_model(prior, lik, H, regression_targets(y, H.shape[0], lik), names=names,
                                      params=noise_var, surrogate_eps=surrogate_eps)

    @available_if(fitted_by("em"))
    def gaussian_conditional(self):
        """Mean and covariance of ``β_A | y, τ̂, σ̂²`` on the active set ``A`` at the final E-step.

        ``Σ = σ² U(σ² I + U HᵀH U)⁻¹U`` (:func:`~sparsebayes.inference.engines.em_covariance.conditional_covariance`,
        kept as ``sigma_``) and the mean is the EM fixed point (000 Sec. 3). For the Laplace prior
        with γ and σ² fixed it is the Gaussian conditional of the hierarchy at ``E[τ⁻¹ | β̂]``; for
        Jeffreys the conditional given the plug-in ``τ̂ = β̂²``. Returns ``(active, mean, cov)``,
        ``active`` indexing ``beta_`` (the bias column included).
        """
        check_is_fitted(self)
        active = np.flatnonzero(self.beta_)
        return active, self.beta_[active], self.sigma_

    def to_inference_data(self, *, draws=0, seed=0):
        """ArviZ ``InferenceData`` of the fit.

        By default the ``posterior`` group holds the point estimate (one chain, one draw).
        With ``draws > 0`` it holds draws of the Gaussian conditional at the final
        E-step (:meth:`gaussian_conditional`; zeros off the active set): for the Laplace prior the
        hierarchy's conditional at ``E[τ⁻¹ | β̂]``, for Jeffreys the conditional given the plug-in
        ``τ̂ = β̂²`` (``attrs["conditional_on"]`` says which). Weights are ``beta_``'s, on
        ``feature_map_``'s columns (for linear and quadratic features, terms of the standardized inputs).
        """
        check_is_fitted(self)
        names = basis_names(self, self.feature_map_, self.beta_.size)
        coords, dims = {"basis": names}, {"beta": ["basis"]}
        lik = getattr(self, "likelihood_", GaussianLikelihood())
        gaussian = conjugate_noise(lik)  # sigma_ is the exact Gaussian conditional
        param_name = lik.param_name
        prior = hierarchy_name(self.prior_)
        if draws:
            active, _, cov = self.gaussian_conditional()
            beta = gaussian_draws(self.beta_, cov, n_draws=draws, seed=seed, active=active)
            given = conditioned_on(prior)
            if param_name is not None:
                given += f", {param_name} = {self.likelihood_param_:.6g}"
            return draws_idata({"beta": beta}, method="em-gaussian-conditional" if gaussian else
                               f"em-{lik.name}-laplace", coords=coords, dims=dims,
                               attrs={"prior": prior, "conditional_on": given})
        estimated = getattr(self.prior_, "estimated_sites", dict)()  # γ or τ where EM estimated it: the twin's names
        own = {} if param_name is None else {param_name: self.likelihood_param_}
        return point_estimate_idata({"beta": self.beta_, **own, **estimated},
                                    method=f"em-{prior}" if gaussian else f"em-{lik.name}-{prior}",
                                    coords=coords, dims=dims)


class EMClassifierMethods(OneVsAllLinkClassifier, PosteriorSamplingMixin):
    """The methods of a fitted EM classifier (002; 000 Sec. 4): one-vs-all prediction
    (:class:`~sparsebayes.inference.estimators._base.OneVsAllLinkClassifier`) and the rest; module docstring."""

    def _link_name(self):
        """``"probit"`` or ``"logistic"``: the fitted likelihood's, else the one the parameters name
        (:func:`~.links.link_name`)."""
        lik = getattr(self, "likelihood_", None)
        return link_name(self._em_likelihood() if lik is None else lik)

    def _log_link(self, eta):
        """``log Φ(η)`` (002 eq. 1), or ``log σ(η)`` with the logistic link, finite far in the tails."""
        from scipy.special import log_ndtr

        if self._link_name() == "logistic":
            return -np.logaddexp(0.0, -eta)
        return log_ndtr(eta)

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:mod:`sparsebayes.inference.posterior.posterior_model`): the fitted
        hierarchy, the link's likelihood (probit, 002 eq. 2, or logistic) and the design
        ``feature_map_.transform(X)``, the labels coded 0/1 (1 for ``classes_[1]``). Beyond two classes
        the fit is ``K`` independent binary models (one-vs-all, 002 Sec. 4.2), and so is the record
        (:func:`~sparsebayes.inference.posterior.twin_one_vs_all.one_vs_all_model`): class ``k``'s part has
        the targets ``[y = classes_[k]]``, the point is ``beta_`` on ``(basis, classifier)``.
        ``X = None``: the record without data (its samplers)."""
        from sparsebayes.inference.posterior.posterior_model import binary_targets, design, sparse_posterior_model
        from sparsebayes.inference.posterior.twin_one_vs_all import one_vs_all_model
        lik = getattr(self, "likelihood_", None)
        lik = self._em_likelihood() if lik is None else lik
        prior, link = fitted_em_model(self)[0], self._link_name()
        H, names = design(self, X) if X is not None else (None, None)
        if len(getattr(self, "classes_", ())) > 2:
            estimated = [getattr(p, "estimated_sites", dict)() for p in self.prior_]  # γ per class where EM estimated it
            point = {"beta": self.beta_.T, **{k: np.array([e[k] for e in estimated]) for k in estimated[0]}}
            return one_vs_all_model(
                self, None if X is None else H.shape[0], y,
                lambda t: sparse_posterior_model(prior, lik, H, t, names=names, surrogate_eps=surrogate_eps),
                names=names, point=point, point_label=f"em-{link}-{hierarchy_name(prior)}-one-vs-all",
                point_dims={k: ["classifier"] for k in estimated[0]})
        if X is None:
            return sparse_posterior_model(prior, lik, surrogate_eps=surrogate_eps)
        return sparse_posterior_model(prior, lik, H, binary_targets(self, y, H.shape[0], link), names=names,
                                      surrogate_eps=surrogate_eps)

    def to_inference_data(self, *, draws=0, seed=0):
        """ArviZ ``InferenceData``: the MAP weights per classifier (one chain, one draw), or with
        ``draws > 0`` draws of each classifier's Laplace approximation ``N(β̂_A, laplace_cov_[c])``
        given the final E-step's variances (:func:`~sparsebayes.inference.engines.em_covariance.laplace_covariance`;
        zeros off the active set; ``attrs["conditional_on"]`` says which variances), on ``feature_map_``'s
        columns as ``beta_``."""
        check_is_fitted(self)
        names = basis_names(self, self.feature_map_, self.beta_.shape[1])
        cls = [str(c) for c in (self.classes_[1:] if len(self.classes_) == 2 else self.classes_)]
        coords, dims = {"classifier": cls, "basis": names}, {"beta": ["classifier", "basis"]}
        prior, link = hierarchy_name(self.prior_), self._link_name()
        if draws:
            beta = np.stack([gaussian_draws(b, cov, n_draws=draws, seed=None if seed is None else [seed, c],
                                           active=np.flatnonzero(b))
                             for c, (b, cov) in enumerate(zip(self.beta_, self.laplace_cov_))], axis=2)
            return draws_idata({"beta": beta}, method=f"em-{link}-{prior}-laplace", coords=coords, dims=dims,
                               attrs={"prior": prior, "conditional_on": conditioned_on(prior)})
        estimated = getattr(self.prior_, "estimated_sites", dict)() if len(self.classes_) == 2 else {}  # the twin's names
        return point_estimate_idata({"beta": self.beta_, **estimated}, method=f"em-{link}-{prior}",
                                    coords=coords, dims=dims)
