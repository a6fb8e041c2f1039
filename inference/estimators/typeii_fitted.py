"""What a fitted Gaussian type-II model answers, as estimator methods: prediction with its predictive
sd (004 Sec. 2.4), ArviZ ``InferenceData`` and the record of its model (:meth:`posterior_model`,
which ``compare`` and ``sample_posterior`` sample).

:class:`TypeIIRegressorMethods` is mixed into
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` (and so into its paper
subclasses :class:`~sparsebayes.inference.estimators.typeii_estimators.RVMRegressor`, ``BLSRegressor``
and ``FLAPRegressor``), which answers through it after a ``method="type2"`` fit of the Gaussian
likelihood. It names the :class:`~sparsebayes.inference.estimators.typeii_fit.TypeIIFit` record in the
fitted attributes (:meth:`_name_typeii_fit`) and reads them back.

λ and γ mean one thing across the package (:class:`~sparsebayes.models.priors.LaplacePrior`):
``gamma_`` is the rate of the exponential on the prior variances, what these papers call λ (FLAP's
``γ_i ~ Exp(λ/2)``, Babacan et al. 2010; BLS's ``τ_i ~ Exp(λ/2)``, 004 eq. 7), EM's γ and Park &
Casella's λ²; ``lam_ = √gamma_`` is the l1 weight of the Laplace marginal (``−log p(β) = λ‖β‖₁``, per
unit σ for BLS), SMLR's λ and the Bayesian Lasso's λ.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import transform_validated
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior

from sparsebayes.inference.estimators._base import basis_names, name_record
from sparsebayes.inference._validation import validate_predict_data
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata, predictive_sd
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin

#: Each type-II hierarchy's label (the ``method`` of its ``InferenceData``) and its twin's hierarchy
#: (:data:`sparsebayes.inference.posterior.twin_builders.TYPEII_HIERARCHIES`).
TYPEII_LABELS = {ARDPrior: ("rvm-typeii", "ard"), ScaledLaplacePrior: ("bls-typeii", "scaled-laplace"),
                 LaplaceVariancePrior: ("flap-typeii", "laplace")}


class TypeIIRegressorMethods(PosteriorSamplingMixin):
    """The methods of a fitted Gaussian type-II regression (Tipping & Faul 2003; Helgøy & Li 004;
    Babacan et al. 2010); module docstring."""

    def _name_typeii_fit(self, fit):
        """The fitted attributes of the record ``fit``: ``feature_map_``, ``design_rank_``, ``y_offset_``,
        ``design_offset_`` (the centring), ``prior_``, ``likelihood_``, ``coef_``, ``active_``, ``sigma_``,
        ``noise_var_``, ``intercept_var_``, ``gamma_`` and ``lam_`` (a hierarchy with a rate), ``objective_``,
        ``n_iter_``, ``converged_``, ``cycled_``, ``intercept_``, ``relevance_indices_``, ``n_active_``."""
        self.feature_map_ = fit.basis.feature_map
        self.design_rank_ = fit.basis.rank
        name_record(self, fit, ("y_offset", "design_offset", "prior", "likelihood", "coef", "active", "sigma",
                                "noise_var", "intercept_var", "objective", "n_iter", "converged", "cycled", "intercept"))
        if fit.prior.has_rate:
            self.gamma_, self.lam_ = fit.rate, fit.rate**0.5
        if hasattr(self.feature_map_, "centers_for"):  # (None without a feature map)
            self.relevance_indices_ = self.feature_map_.centers_for(self.active_)
        else:
            self.relevance_indices_ = np.flatnonzero(self.active_)
        self.n_active_ = int(self.active_.sum())
        self._typeii_options_ = fit.options  # what the twin and predict read besides the model

    def _design(self, X):
        """The design of validated ``X``: the fitted feature map's, or ``X`` itself (``features=None``)."""
        return X if self.feature_map_ is None else transform_validated(self.feature_map_, X)

    def _typeii_label(self):
        """(``InferenceData`` label, twin hierarchy) of the fitted hierarchy (:data:`TYPEII_LABELS`)."""
        return TYPEII_LABELS[type(self.prior_)]

    def _hyperparameters(self):
        """The fitted hyperparameters as point-estimate variables: σ², and γ and λ where the model has them."""
        rates = {"gamma": self.gamma_, "lam": self.lam_} if self.prior_.has_rate else {}
        return {"noise_var": self.noise_var_, **rates}

    def predict(self, X, return_std=False):
        """Predictive mean ``φ(x)ᵀμ`` and, with ``return_std``, ``√(σ² + φ(x)ᵀΣφ(x))`` (004 Sec. 2.4).

        With ``fit_intercept`` the intercept ``b`` has a flat prior and ``b | w ~ N(ȳ − φ̄ᵀw, σ²/N)``,
        so the variance is ``σ² + σ²/N + (φ(x) − φ̄)ᵀΣ(φ(x) − φ̄)`` (the ``σ²/N`` is ``intercept_var_``).
        With FLAP's default fixed noise (σ² fixed, no ``noise_var`` given) the sd is built on
        ``σ² = 0.01 mean(y²)``, the paper's setting and not an estimate, and a ``UserWarning`` says so:
        on data whose noise variance was 30 times that, the 95 % intervals covered 29 % of held-out
        points (FLAPσ's: 98 %)."""
        check_is_fitted(self, "coef_")
        X = validate_predict_data(self, X)
        Phi = np.asarray(self._design(X), dtype=np.float64)
        mean = Phi @ self.coef_ + self.intercept_
        if not return_std:
            return mean
        sd = predictive_sd((Phi - self.design_offset_)[:, self.active_], self.sigma_,
                           self.noise_var_ + self.intercept_var_)
        if self.prior_.noise_update == "fixed" and self._typeii_options_.noise_var is None:
            warnings.warn(
                f"FLAPRegressor(estimate_noise=False) fixes the noise variance at 1% of the targets' mean square "
                f"({self.noise_var_:.3g}; Babacan et al.'s setting, not an estimate), so the predictive sd is "
                "not calibrated; use estimate_noise=True (FLAPσ) or give noise_var", UserWarning, stacklevel=3)
        return mean, sd

    def to_inference_data(self, *, draws=0, seed=0):
        """Point estimates (``beta``: ``coef_`` on the dim ``basis``, ``intercept``, ``noise_var``, ``lam``) as ``InferenceData``, or
        with ``draws > 0`` draws of the weights' Gaussian posterior ``N(μ, Σ)`` at the fitted
        hyperparameters (004 Sec. 2.4; zeros off the active set), each with its intercept drawn from
        ``N(ȳ − φ̄ᵀw, intercept_var_)``; σ², λ and ``L`` go to the attributes."""
        check_is_fitted(self, "coef_")
        label = self._typeii_label()[0]
        coords = {"basis": basis_names(self, self.feature_map_, self.coef_.size)}
        if draws:
            coef = gaussian_draws(self.coef_, self.sigma_, n_draws=draws, seed=seed, active=self.active_)
            spread = np.sqrt(self.intercept_var_) * np.random.default_rng([seed, 1]).standard_normal(coef.shape[:-1])
            return draws_idata({"beta": coef, "intercept": self.y_offset_ - coef @ self.design_offset_ + spread},
                               method=f"{label}-gaussian-posterior", coords=coords,
                               dims={"beta": ["basis"]},
                               attrs={**self._hyperparameters(), "objective": self.objective_})
        return point_estimate_idata(
            {"beta": self.coef_, "intercept": self.intercept_, **self._hyperparameters()},
            method=label,
            coords=coords,
            dims={"beta": ["basis"]},
            attrs={"objective": self.objective_, "n_iter": self.n_iter_},
        )

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.typeii_model`,
        under the twin hierarchy of the fitted one, :data:`TYPEII_LABELS`; unfitted: of the one ``fit``
        would fit)."""
        from sparsebayes.inference.posterior.twin_builders import typeii_model
        hierarchy = type(self.prior_) if hasattr(self, "prior_") else type(self._typeii_setup()[0])
        return typeii_model(self, X, y, surrogate_eps, train, hierarchy=TYPEII_LABELS[hierarchy][1])
