"""The Poisson relevance vector machine: count regression by sequential type-II maximum likelihood
on the Laplace path of the type-II engine (:mod:`sparsebayes.inference.engines.typeii_laplace`), as a
scikit-learn regressor; with ``prior=`` and ``likelihood=`` any type-II hierarchy (ARD, FLAP's
Laplace on the variances, BLS's scaled Laplace) under any count likelihood of the registry with the
engine's pieces (Poisson, the over-dispersed negative binomial, whose dispersion ``r`` the engine
estimates between moves).

``t_n ~ Poisson(exp(η_n))``, ``η = wᵀh(x)``, ``w_i ~ N(0, α_i⁻¹)`` with flat hyperpriors on the
``α_i`` (Tipping 2001; Tipping & Faul 2003, Sec. 5, with the Poisson likelihood of
:class:`~sparsebayes.models.likelihoods.PoissonLikelihood` in place of the Bernoulli one, as
Tipping's SparseBayes has it). The marginal likelihood is replaced by its Laplace approximation at
the posterior mode; the engine adds, re-estimates and deletes basis functions one at a time as for
the RVM classifier, and the pruned ones have exactly zero weight.

The basis ``h(x)`` is built as for :class:`~sparsebayes.inference.estimators.rvm_classifier.RVMClassifier`
(the same feature maps, the linear and quadratic ones on inputs standardized at their training
mean and sd, kernels of width ``"scale"`` by default), so ``coef_`` and ``intercept_`` are the raw
terms' weights of the log rate (:func:`~sparsebayes.inference.estimators._base.raw_weights`).
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import transform_validated
from sparsebayes.models.likelihoods import PoissonLikelihood, make_likelihood, require_likelihood
from sparsebayes.models.priors.typeii import ARDPrior, check_no_noise_settings, typeii_hierarchy

from sparsebayes.inference.engines import typeii_laplace
from sparsebayes.inference.estimators._base import atomic_fit, basis_names, fit_feature_design, has_bias_column, raw_weights
from sparsebayes.inference._validation import check_flags, check_max_iter, check_number, validate_predict_data, validate_regression_data
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.inference.estimators.typeii_warnings import scale_advice

#: The regressor's likelihood on the engine's Laplace path.
LIKELIHOOD = PoissonLikelihood()


def count_likelihood(likelihood):
    """The likelihood object ``likelihood`` names (or is), checked: counts as its ``support`` and the
    pieces of the engine's Laplace path (``ValueError`` naming what is missing)."""
    lik = make_likelihood(likelihood)
    if getattr(lik, "support", None) != "counts":
        raise ValueError(f"PoissonRVMRegressor fits a likelihood of counts (poisson, negative_binomial), not "
                         f"{lik.name!r} (support {getattr(lik, 'support', None)!r})")
    return require_likelihood(lik, "laplace")


def check_counts(y):
    """``ValueError`` unless every target is a count, ``y ≥ 0``. Non-integer values are allowed, as in
    scikit-learn's ``PoissonRegressor``: the Poisson log likelihood ``tη − e^η − log Γ(t + 1)`` is
    defined for every ``t ≥ 0`` (a quasi-likelihood for rates or averaged counts)."""
    if np.any(y < 0):
        raise ValueError(f"PoissonRVMRegressor needs nonnegative counts as targets; y has {int(np.sum(y < 0))} "
                         f"negative value(s) (smallest {float(np.min(y))!r})")


class PoissonRVMRegressor(RegressorMixin, PosteriorSamplingMixin, BaseEstimator):
    """Poisson relevance vector machine: sparse count regression by sequential type-II ML (Laplace).

    ``E[t | x] = exp(wᵀh(x))``, ``w_i ~ N(0, α_i⁻¹)``, flat hyperpriors (Tipping 2001; Tipping &
    Faul 2003); engine :mod:`sparsebayes.inference.engines.typeii_laplace` with
    :class:`~sparsebayes.models.likelihoods.PoissonLikelihood`. With ``prior=`` another type-II
    hierarchy and ``likelihood="negative_binomial"`` the same engine fits a Poisson FLAP or BLS, or
    an over-dispersed RVM (``Var = μ + μ²/r``, ``r`` estimated); ``SparseRegressor(method="type2",
    likelihood="poisson" | "negative_binomial", prior=...)`` builds this estimator.

    Parameters
    ----------
    prior : str or type-II hierarchy object, default="ard"
        ``"ard"`` / :class:`~sparsebayes.models.priors.typeii.ARDPrior` (the RVM),
        ``"laplace"`` / :class:`~sparsebayes.models.priors.typeii.LaplaceVariancePrior` (FLAP:
        ``w_i ~ N(0, γ_i)``, ``γ_i ~ Exp(λ/2)``) or ``"scaled_laplace"`` /
        :class:`~sparsebayes.models.priors.typeii.ScaledLaplacePrior` (BLS's, with ``σ² = 1``:
        a count likelihood has no noise variance); its flags and ``a, b`` are the fit's, its
        noise-prior fields unused.
    likelihood : str or likelihood object, default="poisson"
        A count likelihood with the engine's Laplace pieces: ``"poisson"`` or ``"negative_binomial"``.
    features : {"linear", "quadratic", "kernel"} or transformer, default="linear"
        The basis ``h(x)``, as for :class:`RVMClassifier`: the linear or quadratic terms of the
        inputs standardized at their training mean and sd (with ``bias=True``; the default is the
        log-linear model of a Poisson GLM, as ``PoissonRegressor`` fits), or Gaussian kernels
        ``exp(−‖x − x'‖²/(2h²))`` on the training points; a transformer is used as it is.
    kernel_width : float or "scale", default="scale"
        The kernel width ``h`` in the units of ``X``; ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)``.
    bias : bool, default=True
        Whether ``h(x)`` has a constant column (its weight is the log rate at the mean input).
    max_iter, tol : int, float
        Engine steps and the smallest gain in the approximate log evidence that counts as a move.

    Attributes
    ----------
    beta_ (n_basis: the mode on ``feature_map_``'s columns, zeros where pruned), active_ (bool),
    coef_ / intercept_ (the raw terms' weights of the log rate, scikit-learn's layout),
    relevance_indices_ (columns of ``coef_`` kept), objective_ (Laplace-approximate log evidence plus
    the hierarchy's terms), prior_var_ (``1/α``, 0 where pruned), prior_ (the hierarchy fitted: by
    default ``ARDPrior()``, flat on every ``α_i``, as :class:`RVMClassifier`'s), gamma_ and lam_
    (the hierarchy's fitted rate λ on the variances and its square root, for FLAP and BLS only),
    likelihood_param_ (the likelihood's fitted parameter, the negative binomial's dispersion ``r``;
    ``None`` for the Poisson), laplace_cov_ (``Σ`` over the active basis functions),
    n_iter_, converged_ (no move gains more than ``tol``, after at least one move), stalled_
    (stopped on a cycle of moves, best state kept), likelihood_ (the
    :class:`~sparsebayes.models.likelihoods.PoissonLikelihood`: ``prior_`` and ``likelihood_`` name the model).
    """

    def __init__(self, *, prior="ard", likelihood="poisson", features="linear", kernel_width="scale", bias=True,
                 max_iter=1000, tol=1e-6):
        self.prior = prior
        self.likelihood = likelihood
        self.features = features
        self.kernel_width = kernel_width
        self.bias = bias
        self.max_iter = max_iter
        self.tol = tol

    @atomic_fit
    def fit(self, X, y):
        """Fit to inputs ``X`` (n, d) and nonnegative counts ``y`` (n,)."""
        check_flags(self)
        check_max_iter(self.max_iter)
        check_number("tol", self.tol, 0.0)
        hierarchy = check_no_noise_settings(typeii_hierarchy(self.prior), "PoissonRVMRegressor")
        likelihood = count_likelihood(self.likelihood)
        X, y = validate_regression_data(self, X, y)
        check_counts(y)
        self.feature_map_, Phi = fit_feature_design(X, self.features, kernel_width=self.kernel_width, bias=self.bias,
                                                    center=bool(self.bias), scale=bool(self.bias))
        mask = np.any(Phi != 0, axis=0)
        state = typeii_laplace.fit(Phi, y, mask, likelihood=likelihood, prior=hierarchy, max_iter=int(self.max_iter),
                                   tol=self.tol)
        self._set_fitted(Phi, y, state, hierarchy, likelihood)
        self._warn(state)
        return self

    def _set_fitted(self, Phi, y, state, hierarchy, likelihood):
        """The fitted attributes from the engine state."""
        self.beta_ = typeii_laplace.coefficients(state, Phi.shape[1])
        self.active_ = np.asarray(state.var) > 0
        first = int(has_bias_column(self.feature_map_))
        raw = np.asarray(raw_weights(self.feature_map_, self.beta_), dtype=np.float64)
        self.coef_ = raw[first:]
        self.intercept_ = float(raw[0]) if first else 0.0
        self.prior_var_ = np.asarray(state.var)
        self.prior_ = hierarchy
        self.likelihood_ = likelihood
        self.likelihood_param_ = float(state.params) if typeii_laplace.has_own_parameter(likelihood) else None
        if hierarchy.has_rate:
            self.gamma_ = float(state.lam)
            self.lam_ = float(np.sqrt(self.gamma_))
        self.laplace_cov_ = typeii_laplace.posterior_covariance(Phi, y, state, likelihood=likelihood)
        self.objective_ = float(state.objective)
        self.n_iter_ = int(state.n_iter)
        self.stalled_ = bool(state.stalled)
        self.converged_ = bool(state.converged) and not typeii_laplace.stopped_at_start(state)
        self.relevance_indices_ = np.flatnonzero(self.beta_[first:] != 0)
        self.n_active_ = int(self.relevance_indices_.size)

    def _warn(self, state):
        """A :class:`ConvergenceWarning` for a stalled fit or ``max_iter``; a
        :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` for an empty model (no basis
        function but the bias: a constant rate) or a fit that stopped at its start."""
        at_start = typeii_laplace.stopped_at_start(state)
        if self.stalled_:
            warnings.warn("PoissonRVMRegressor stopped on a cycle of moves that did not raise the Laplace evidence; "
                          "the best state visited is kept", ConvergenceWarning)
        elif not (self.converged_ or at_start):
            warnings.warn(f"PoissonRVMRegressor did not converge in max_iter={self.max_iter} steps; increase max_iter",
                          ConvergenceWarning)
        if self.relevance_indices_.size == 0:
            warn_degenerate(self, "the model is empty: no basis function but the bias was kept, and it predicts one "
                            "rate for every input", scale_advice(self.feature_map_, "the counts"), stacklevel=5)
        elif at_start:
            warn_degenerate(self, "the fit stopped at its start (no move raised the Laplace evidence from the one "
                            "basis function best aligned with the log counts); converged_ is False",
                            scale_advice(self.feature_map_, "the counts"), stacklevel=5)

    def predict_log_rate(self, X):
        """``η = wᵀh(x)``, the log of the predicted mean count."""
        check_is_fitted(self, "beta_")
        X = validate_predict_data(self, X)
        return np.asarray(transform_validated(self.feature_map_, X), dtype=np.float64) @ self.beta_

    def predict(self, X):
        """The predicted mean count ``exp(wᵀh(x))``."""
        eta = self.predict_log_rate(X)
        if self.likelihood_param_ is None:
            return np.asarray(self.likelihood_.mean(eta))
        return np.asarray(self.likelihood_.mean(eta, self.likelihood_param_))

    def _label(self):
        """What the fit is, for the ArviZ attrs: the Poisson RVM's own label, else likelihood and hierarchy."""
        if self.likelihood_.name == "poisson" and isinstance(self.prior_, ARDPrior):
            return "poisson-rvm"
        return f"{self.likelihood_.name}-{self.prior_.name}"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.positive_only = True
        return tags

    def to_inference_data(self, *, draws=0, seed=0):
        """ArviZ ``InferenceData``: the mode ``beta`` on ``basis`` (the feature map's columns, one chain,
        one draw), or with ``draws > 0`` draws of the Laplace posterior ``N(w*, Σ)`` at the fitted α
        (Tipping 2001, eq. 26-27; zeros off the active set). The names are the twin's
        (:meth:`sample_posterior`), so the point and the draws line up."""
        check_is_fitted(self, "beta_")
        coords = {"basis": basis_names(self, self.feature_map_, self.beta_.shape[0])}
        dims = {"beta": ["basis"]}
        attrs = {"objective": float(self.objective_)}
        label = self._label()
        if draws:
            beta = gaussian_draws(self.beta_, self.laplace_cov_, n_draws=draws, seed=seed, active=self.active_)
            method = "rvm-poisson-laplace" if label == "poisson-rvm" else f"typeii-laplace-{label}-laplace-draws"
            return draws_idata({"beta": beta}, method=method, coords=coords, dims=dims, attrs=attrs)
        return point_estimate_idata({"beta": self.beta_, **self._point_params()}, method=f"typeii-laplace-{label}",
                                    coords=coords, dims=dims, attrs=attrs)

    def _point_params(self):
        """The likelihood's fitted parameter under its site name (``dispersion``), where it has one."""
        name = getattr(self.likelihood_, "param_name", None)
        return {} if name is None or self.likelihood_param_ is None else {name: self.likelihood_param_}

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`typeii_laplace_model`)."""
        return typeii_laplace_model(self, X, y, surrogate_eps)


def typeii_laplace_model(est, X=None, y=None, surrogate_eps=None):
    """The record (:mod:`sparsebayes.inference.posterior.posterior_model`) of a fitted
    :class:`PoissonRVMRegressor`: ``t_i ~ p(t | η_i)`` with its fitted likelihood, ``η = Hβ`` on the
    fitted feature map, under its hierarchy at the type-II estimate: ARD on its labelled proper
    surrogate ``α_i ~ Gamma(ε, ε)`` (:func:`~sparsebayes.inference.posterior.posterior_model.ard_surrogate`,
    ``surrogate_eps`` required), FLAP's and BLS's Laplace prior at the fitted rate λ (``γ = λ``:
    :meth:`~sparsebayes.models.priors.typeii.LaplaceVariancePrior.laplace`; BLS's ``σ² = 1``). The
    likelihood's own parameter (the negative binomial's dispersion) is sampled under the prior the
    likelihood declares, as type-II estimated it; the point is the mode ``beta_`` with that
    parameter's estimate. A Gibbs sampler where the likelihood has a conjugate augmentation and the
    prior conditionals (the negative binomial under the Laplace prior)."""
    from sparsebayes.inference.posterior.posterior_model import (
        ard_surrogate, design, regression_targets, sparse_posterior_model)
    from sparsebayes.models.priors.typeii import LaplaceVariancePrior

    fitted = hasattr(est, "beta_")
    likelihood = est.likelihood_ if fitted else count_likelihood(est.likelihood)
    hierarchy = est.prior_ if fitted else typeii_hierarchy(est.prior)
    point = {"beta": np.asarray(est.beta_, dtype=np.float64), **est._point_params()} if fitted else None
    poisson_rvm = likelihood.name == "poisson" and isinstance(hierarchy, ARDPrior)
    point_label = "typeii-laplace-poisson-rvm" if poisson_rvm else f"typeii-laplace-{likelihood.name}-{hierarchy.name}"
    if isinstance(hierarchy, ARDPrior):
        make_statement = lambda: ard_surrogate(surrogate_eps, "rvm-poisson" if poisson_rvm  # noqa: E731
                                               else f"rvm-{likelihood.name}")
    else:
        def make_statement():
            if surrogate_eps is not None:
                raise ValueError(f"surrogate_eps applies to the RVM's improper hyperprior; the {hierarchy.name} "
                                 "hierarchy's twin is proper (its Laplace prior at the fitted λ)")
            lam = float(est.gamma_)
            if not lam > 0:
                raise ValueError(f"{type(est).__name__} fitted λ = 0 (at most one weight kept): its Laplace prior "
                                 "has no shrinkage left and no proper posterior to sample; give the hierarchy a "
                                 "proper hyperprior on λ (a > 0, b > 0)")
            return LaplaceVariancePrior.laplace(lam), f"{hierarchy.name}-{likelihood.name}-laplace-gamma={lam:.6g}-fixed-at-typeii"
    if X is None:  # the data-free record: which samplers the model has (they depend on the statement's class)
        if not fitted and not isinstance(hierarchy, ARDPrior):
            return SimpleNamespace(gibbs=None, point=point, point_label=point_label, likelihood=likelihood)
        # ARD: any ε gives the surrogate's class, all the record's samplers depend on
        statement, label = ard_surrogate(1.0, "rvm") if isinstance(hierarchy, ARDPrior) else make_statement()
        record = sparse_posterior_model(statement, likelihood, point=point, label=label)
        record.point_label = point_label
        return record
    statement, label = make_statement()
    H, names = design(est, X)
    record = sparse_posterior_model(statement, likelihood, H, regression_targets(y, H.shape[0], likelihood),
                                    names=names, point=point, label=label)
    record.point_label = point_label
    return record
