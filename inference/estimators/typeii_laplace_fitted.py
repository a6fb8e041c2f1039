"""What a fitted Laplace-path type-II model answers, as estimator methods: the count regressions (the
Poisson and negative-binomial RVM, their FLAP and BLS versions) and the Bernoulli-logistic classifier
(Tipping's RVM classifier, one-vs-all beyond two classes), fitted by the type-II fitting core's Laplace
path (:func:`~sparsebayes.inference.estimators.typeii_fit.fit_typeii_laplace_model`).

:class:`TypeIILaplaceRegressorMethods` is mixed into
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` (route ``"typeii_laplace"``:
``method="type2"`` with a likelihood other than the Gaussian; its paper subclass
:class:`~sparsebayes.inference.estimators.poisson_rvm.PoissonRVMRegressor`), and
:class:`TypeIIClassifierMethods` into ``SparseClassifier`` (the same route, ``method="type2"``; its paper
subclass :class:`~sparsebayes.inference.estimators.rvm_classifier.RVMClassifier`). Each has the route's fit,
``_fit_typeii_laplace``, which checks the parameters, builds the basis, calls the fitting core (once, or
once per class) and names the records in the fitted attributes; and the methods that read them back:
prediction, ArviZ ``InferenceData``, the record of the model (:meth:`posterior_model`, which ``compare``
and ``sample_posterior`` sample).

The settings besides the model (``bias``, ``max_iter``, ``tol``: :data:`LAPLACE_SETTINGS`) are the paper
class's parameters, or ``options`` of the generic estimator. The hierarchy's noise-prior fields (``c``,
``d``, ``noise_update``) must keep their defaults: these likelihoods have no noise variance (σ² = 1 in the
hierarchy's terms).

The bias and the origin of ``x``: every basis function, the bias included, has its own prior variance,
so with features of the raw ``x`` the fit would depend on where the origin of ``x`` lies (on raw inputs
far from it each linear column is nearly the bias column, none raises the evidence on its own, and the
greedy search stops at its start). The linear and quadratic maps act on the inputs standardized at their
training mean and sd (with a bias): ``beta_`` (and ``active_``, ``prior_var_``, ``laplace_cov_``) are on
``feature_map_``'s columns, ``coef_`` and ``intercept_`` the raw terms' weights
(:func:`~sparsebayes.inference.estimators._base.raw_weights`).
"""
from __future__ import annotations

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np
from scipy.special import log_expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import GaussianKernelFeatures, transform_validated
from sparsebayes.models.likelihoods import LIKELIHOODS, BernoulliLogisticLikelihood, make_likelihood, methods_fitting, require_likelihood
from sparsebayes.models.priors.typeii import ARDPrior, check_no_noise_settings, typeii_hierarchy

from sparsebayes.inference._validation import (one_vs_all_targets, validate_classification_data, validate_predict_data,
                                               validate_regression_data)
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.estimators._base import OneVsAllLinkClassifier, basis_names, has_bias_column, raw_weights, fitted_by
from sparsebayes.inference.estimators.em_fit import split_bias
from sparsebayes.inference.estimators.links import link_likelihood
from sparsebayes.inference.estimators.typeii_fit import LaplaceOptions, fit_typeii_laplace_model, laplace_basis
from sparsebayes.inference.estimators.typeii_warnings import scale_advice
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin

#: The settings of a Laplace-path fit besides the model and the basis, and their defaults
#: (:class:`~.typeii_fit.LaplaceOptions`): the paper classes' parameters, the generic estimators' ``options``.
LAPLACE_SETTINGS = {f.name: f.default for f in dataclasses.fields(LaplaceOptions)
                    if f.name not in ("features", "kernel_width")}

#: The classifier's likelihood on the engine's Laplace path.
LOGISTIC = BernoulliLogisticLikelihood()

#: A kept kernel below this at every other training point (``‖x_i − x_j‖ > 3.7 h`` for all ``i ≠ j``)
#: reaches no training point but its own.
ISOLATED_KERNEL = 1e-3


def count_likelihood(likelihood, owner="PoissonRVMRegressor"):
    """The likelihood object ``likelihood`` names (or is), checked: counts as its ``support`` and the
    pieces of the engine's Laplace path (``ValueError`` naming what is missing; for a likelihood of real
    targets, that type-II fits the Gaussian one, RVMRegressor's, and the methods that fit it)."""
    lik = make_likelihood(likelihood)
    if getattr(lik, "support", None) != "counts":
        exact = (" (type-II fits the 'gaussian' likelihood of real targets exactly: RVMRegressor, BLSRegressor, "
                 f"FLAPRegressor); the {lik.name!r} likelihood is fitted by {methods_fitting(lik)}"
                 if getattr(lik, "support", "real") == "real" else "")
        counts = ", ".join(sorted(n for n, c in LIKELIHOODS.items() if getattr(c, "support", None) == "counts"))
        raise ValueError(f"{owner} fits a likelihood of counts (registered: {counts}), not "
                         f"{lik.name!r} (support {getattr(lik, 'support', None)!r}){exact}")
    return require_likelihood(lik, "laplace")


def check_counts(y, owner="PoissonRVMRegressor"):
    """``ValueError`` unless every target is a count, ``y ≥ 0``. Non-integer values are allowed, as in
    scikit-learn's ``PoissonRegressor``: the Poisson log likelihood ``tη − e^η − log Γ(t + 1)`` is
    defined for every ``t ≥ 0`` (a quasi-likelihood for rates or averaged counts)."""
    if np.any(y < 0):
        raise ValueError(f"{owner} needs nonnegative counts as targets; y has {int(np.sum(y < 0))} "
                         f"negative value(s) (smallest {float(np.min(y))!r})")


class _LaplacePathMethods(PosteriorSamplingMixin):
    """What the regressor's and the classifier's Laplace-path fits share: their settings and model."""

    def _laplace_likelihood(self):  # the task's: the checked likelihood object
        raise NotImplementedError

    def _laplace_setup(self):
        """``(hierarchy, likelihood, options)`` of a fit, each checked (``ValueError`` naming the problem):
        the type-II hierarchy ``prior`` names or is (``None``: the RVM's ARD) with its noise-prior fields at
        their defaults, the likelihood, the :class:`~.typeii_fit.LaplaceOptions`."""
        options = LaplaceOptions(features=self.features, kernel_width=self.kernel_width,
                                 **self._route_settings("typeii_laplace", LAPLACE_SETTINGS)).check()
        prior = self._given_prior("type2")
        hierarchy = check_no_noise_settings(typeii_hierarchy(prior), self._paper("typeii_laplace"))
        return hierarchy, self._laplace_likelihood(), options

    def _name_laplace_rates(self, fits, *, per_fit):
        """``gamma_`` (the fitted rate λ on the variances) and ``lam_ = √gamma_`` (the Laplace marginal's l1
        weight) for a hierarchy with a rate: numbers, or with ``per_fit`` arrays, one per fit."""
        if self.prior_.has_rate:
            if per_fit:
                self.gamma_ = np.array([fit.rate for fit in fits])
                self.lam_ = np.sqrt(self.gamma_)
            else:
                self.gamma_ = fits[0].rate
                self.lam_ = float(np.sqrt(self.gamma_))


class TypeIILaplaceRegressorMethods(_LaplacePathMethods):
    """The fit and methods of a Laplace-path type-II count regression (module docstring): ``E[t | x]`` the
    likelihood's mean at ``η = wᵀh(x)`` (``exp(η)`` for the Poisson and the negative binomial)."""

    def _laplace_likelihood(self):
        return count_likelihood(self.likelihood, self._paper("typeii_laplace"))

    def _fit_typeii_laplace(self, X, y):
        """Fit nonnegative counts ``y`` on ``X`` by sequential type-II maximum likelihood with the Laplace
        approximation at the mode (Tipping & Faul 2003, Sec. 5): :func:`~.typeii_fit.fit_typeii_laplace_model`,
        its record named here."""
        hierarchy, likelihood, options = self._laplace_setup()
        X, y = validate_regression_data(self, X, y)
        check_counts(y, self._paper("typeii_laplace"))
        basis = laplace_basis(X, options)
        fit = fit_typeii_laplace_model(basis, y, hierarchy, likelihood, options)
        self.feature_map_ = basis.feature_map
        self.beta_ = fit.coef
        self.active_ = fit.active
        first = int(has_bias_column(self.feature_map_))
        coef, intercept = split_bias(self.feature_map_, self.beta_)
        self.coef_, self.intercept_ = coef[0], float(intercept[0])
        self.prior_var_ = fit.prior_var
        self.prior_ = hierarchy
        self.likelihood_ = likelihood
        self.likelihood_param_ = fit.likelihood_param
        self._name_laplace_rates([fit], per_fit=False)
        self.laplace_cov_ = fit.covariance
        self.objective_ = fit.objective
        self.n_iter_ = fit.n_iter
        self.stalled_ = fit.stalled
        self.converged_ = fit.converged
        self.relevance_indices_ = np.flatnonzero(self.beta_[first:] != 0)
        self.n_active_ = int(self.relevance_indices_.size)
        self._warn_laplace_regression(fit)

    def _warn_laplace_regression(self, fit):
        """A :class:`ConvergenceWarning` for a stalled fit or ``max_iter``; a
        :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` for an empty model (no basis
        function but the bias: a constant rate) or a fit that stopped at its start."""
        name = type(self).__name__
        if fit.stalled:
            warnings.warn(f"{name} stopped on a cycle of moves that did not raise the Laplace evidence; the best "
                          "state visited is kept", ConvergenceWarning)
        elif not (fit.converged or fit.at_start):
            warnings.warn(f"{name} did not converge in max_iter={fit.options.max_iter} steps; increase max_iter",
                          ConvergenceWarning)
        if self.relevance_indices_.size == 0:
            warn_degenerate(self, "the model is empty: no basis function but the bias was kept, and it predicts one "
                            "rate for every input", scale_advice(self.feature_map_, "the counts"), stacklevel=5)
        elif fit.at_start:
            warn_degenerate(self, "the fit stopped at its start (no move raised the Laplace evidence from the one "
                            "basis function best aligned with the log counts); converged_ is False",
                            scale_advice(self.feature_map_, "the counts"), stacklevel=5)

    @available_if(fitted_by("typeii_laplace"))
    def predict_log_rate(self, X):
        """``η = wᵀh(x)``, the linear predictor (the log of the predicted mean count)."""
        return self._log_rate(X)

    def _log_rate(self, X):
        """``wᵀh(x)`` of the fit (:meth:`predict_log_rate`)."""
        check_is_fitted(self, "beta_")
        X = validate_predict_data(self, X)
        return np.asarray(transform_validated(self.feature_map_, X), dtype=np.float64) @ self.beta_

    def predict(self, X):
        """The predicted mean count, the likelihood's mean at ``η`` (``exp(wᵀh(x))``)."""
        eta = TypeIILaplaceRegressorMethods._log_rate(self, X)
        if self.likelihood_param_ is None:
            return np.asarray(self.likelihood_.mean(eta))
        return np.asarray(self.likelihood_.mean(eta, self.likelihood_param_))

    def _laplace_label(self):
        """What the fit is, for the ArviZ attrs: the Poisson RVM's own label, else likelihood and hierarchy."""
        if self.likelihood_.name == "poisson" and isinstance(self.prior_, ARDPrior):
            return "poisson-rvm"
        return f"{self.likelihood_.name}-{self.prior_.name}"

    def _laplace_point_params(self):
        """The likelihood's fitted parameter under its site name (``dispersion``), where it has one."""
        name = getattr(self.likelihood_, "param_name", None)
        return {} if name is None or self.likelihood_param_ is None else {name: self.likelihood_param_}

    def to_inference_data(self, *, draws=0, seed=0):
        """ArviZ ``InferenceData``: the mode ``beta`` on ``basis`` (the feature map's columns, one chain,
        one draw), or with ``draws > 0`` draws of the Laplace posterior ``N(w*, Σ)`` at the fitted α
        (Tipping 2001, eqs. 26–27; zeros off the active set). The names are the twin's
        (:meth:`sample_posterior`), so the point and the draws line up."""
        check_is_fitted(self, "beta_")
        coords = {"basis": basis_names(self, self.feature_map_, self.beta_.shape[0])}
        dims = {"beta": ["basis"]}
        attrs = {"objective": float(self.objective_)}
        label = TypeIILaplaceRegressorMethods._laplace_label(self)
        if draws:
            beta = gaussian_draws(self.beta_, self.laplace_cov_, n_draws=draws, seed=seed, active=self.active_)
            method = "rvm-poisson-laplace" if label == "poisson-rvm" else f"typeii-laplace-{label}-laplace-draws"
            return draws_idata({"beta": beta}, method=method, coords=coords, dims=dims, attrs=attrs)
        return point_estimate_idata({"beta": self.beta_, **TypeIILaplaceRegressorMethods._laplace_point_params(self)},
                                    method=f"typeii-laplace-{label}", coords=coords, dims=dims, attrs=attrs)

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`typeii_laplace_model`; unfitted: of the one ``fit`` would fit)."""
        return typeii_laplace_model(self, X, y, surrogate_eps)


def typeii_laplace_model(est, X=None, y=None, surrogate_eps=None):
    """The record (:mod:`sparsebayes.inference.posterior.posterior_model`) of a Laplace-path count regression
    ``est``: ``t_i ~ p(t | η_i)`` with its fitted likelihood, ``η = Hβ`` on the fitted feature map, under its
    hierarchy at the type-II estimate: ARD on its labelled proper surrogate ``α_i ~ Gamma(ε, ε)``
    (:func:`~sparsebayes.inference.posterior.posterior_model.ard_surrogate`, ``surrogate_eps`` required), FLAP's
    and BLS's Laplace prior at the fitted rate λ (``γ = λ``:
    :meth:`~sparsebayes.models.priors.typeii.LaplaceVariancePrior.laplace`; BLS's ``σ² = 1``). The likelihood's
    own parameter (the negative binomial's dispersion) is sampled under the prior the likelihood declares, as
    type-II estimated it; the point is the mode ``beta_`` with that parameter's estimate. A Gibbs sampler where
    the likelihood has a conjugate augmentation and the prior conditionals (the negative binomial under the
    Laplace prior)."""
    from sparsebayes.inference.posterior.posterior_model import (
        ard_surrogate, design, regression_targets, sparse_posterior_model)
    from sparsebayes.models.priors.typeii import LaplaceVariancePrior

    fitted = hasattr(est, "beta_")
    hierarchy, likelihood = (est.prior_, est.likelihood_) if fitted else est._laplace_setup()[:2]
    point = ({"beta": np.asarray(est.beta_, dtype=np.float64),
              **TypeIILaplaceRegressorMethods._laplace_point_params(est)} if fitted else None)
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


class TypeIIClassifierMethods(OneVsAllLinkClassifier, _LaplacePathMethods):
    """The fit and methods of a Laplace-path type-II classifier (module docstring):
    ``P(y = 1 | x) = σ(wᵀh(x))``, one classifier per class beyond two (one-vs-all,
    :class:`~sparsebayes.inference.estimators._base.OneVsAllLinkClassifier`: their ``σ(w_cᵀh(x))``
    normalized into class probabilities)."""

    def _laplace_likelihood(self):
        """The Bernoulli-logistic likelihood: the link must be ``None``, ``"logistic"`` or that likelihood
        (:func:`~.links.link_likelihood`: ``ValueError`` naming the link otherwise)."""
        return link_likelihood(getattr(self, "link", None), (LOGISTIC.name,), LOGISTIC.name,
                               self._paper("typeii_laplace"), self.method)

    def _fit_typeii_laplace(self, X, y):
        """Fit by sequential type-II maximum likelihood with the Laplace approximation at the mode (Tipping
        2001, Sec. 4; Tipping & Faul 2003, Sec. 5), one classifier per class beyond two (one-vs-all), each
        :func:`~.typeii_fit.fit_typeii_laplace_model` on one shared design; their records named here."""
        hierarchy, likelihood, options = self._laplace_setup()
        X, y_enc = validate_classification_data(self, X, y)
        basis = laplace_basis(X, options)
        fits = [fit_typeii_laplace_model(basis, t, hierarchy, likelihood, options)
                for t in one_vs_all_targets(y_enc, len(self.classes_))]
        self.feature_map_ = basis.feature_map
        self.beta_ = np.array([fit.coef for fit in fits])
        self.active_ = np.array([fit.active for fit in fits])
        first = int(has_bias_column(self.feature_map_))
        self.coef_, self.intercept_ = split_bias(self.feature_map_, self.beta_)
        self.prior_var_ = np.array([fit.prior_var for fit in fits])
        self.prior_ = hierarchy
        self.likelihood_ = likelihood
        self.weights_basis_ = "raw"
        self.laplace_cov_ = [fit.covariance for fit in fits]
        self.objective_ = np.array([fit.objective for fit in fits])
        self.n_iter_ = np.array([fit.n_iter for fit in fits])
        self.stalled_ = np.array([fit.stalled for fit in fits])
        self.converged_ = np.array([fit.converged for fit in fits])
        # the kept basis functions of the model (on the centred inputs' terms; coef_ in the raw terms
        # can have more nonzero linear terms with quadratic features)
        self.relevance_indices_ = np.flatnonzero(np.any(self.beta_[:, first:] != 0, axis=0))
        self.n_active_ = int(self.relevance_indices_.size)
        self._name_laplace_rates(fits, per_fit=True)  # per classifier, an array even for two classes
        self._warn_laplace_classifier(basis.design, fits)

    def _warn_laplace_classifier(self, Phi, fits):
        """A :class:`ConvergenceWarning` for stalled fits or ``max_iter``; a :class:`DegenerateFitWarning`
        for a constant classifier, a lookup table of training points or a fit that stopped at its start."""
        name = type(self).__name__
        at_start = np.array([fit.at_start for fit in fits])
        if np.any(self.stalled_):
            warnings.warn(f"{name}: {int(self.stalled_.sum())} of {len(fits)} fits stopped on a cycle of "
                          "moves that did not raise the Laplace evidence (near-separable classes); the best state "
                          "visited is kept", ConvergenceWarning)
        if not np.all(self.converged_ | self.stalled_ | at_start):
            warnings.warn(f"{name} did not converge in max_iter={fits[0].options.max_iter} steps; increase max_iter",
                          ConvergenceWarning)
        eta = Phi @ self.beta_.T
        predicted = (eta[:, 0] > 0).astype(int) if eta.shape[1] == 1 else np.argmax(eta, axis=1)
        if np.unique(predicted).size == 1:
            what = (f"it predicts one class ({self.classes_[predicted[0]]}) for every training point"
                    + (f", and {int(at_start.sum())} of {len(fits)} fits stopped at their start" if at_start.any()
                       else ""))
            warn_degenerate(self, what, scale_advice(self.feature_map_, "the labels"), stacklevel=5)
        elif self._isolated_kernels(Phi):
            warn_degenerate(self, f"each of its {self.n_active_} kernels is below {ISOLATED_KERNEL:g} at every other "
                            "training point: it recalls its training points, and away from them predicts the "
                            "bias's class", scale_advice(self.feature_map_, "the labels"), stacklevel=5)
        elif at_start.any():
            warn_degenerate(self, f"{int(at_start.sum())} of {len(fits)} fits stopped at their start (no move raised "
                            "the Laplace evidence from the one basis function best aligned with the labels); "
                            "converged_ is False there", scale_advice(self.feature_map_, "the labels"), stacklevel=5)

    def _isolated_kernels(self, Phi):
        """Whether every kept Gaussian kernel is below :data:`ISOLATED_KERNEL` at every training point but
        its own centre: the width is far below the spacing of the points (raw breast-cancer inputs,
        in the hundreds, at ``h = 1``), so the fit is a lookup table of training points."""
        if not isinstance(self.feature_map_, GaussianKernelFeatures) or self.n_active_ == 0:
            return False
        first = int(has_bias_column(self.feature_map_))
        kept = self.relevance_indices_  # kernel j is column first + j, centred on training point j
        K = Phi[:, first + kept].copy()
        K[kept, np.arange(kept.size)] = 0.0
        return bool(np.max(K) < ISOLATED_KERNEL)

    def _log_link(self, eta):
        """``log σ(η)``, the logistic link."""
        return log_expit(eta)

    def to_inference_data(self, *, draws=0, seed=0):
        """ArviZ ``InferenceData``: the mode weights per classifier (one chain, one draw), or with
        ``draws > 0`` draws of the Laplace posterior ``N(w*, Σ)`` at the fitted α (zeros
        off the active set), both as weights of the raw terms (:func:`~._base.raw_weights`)."""
        check_is_fitted(self, "coef_")
        cls = [str(c) for c in (self.classes_[1:] if len(self.classes_) == 2 else self.classes_)]
        coords = {"classifier": cls, "basis": basis_names(self, self.feature_map_, self.beta_.shape[1])}
        dims = {"beta": ["classifier", "basis"]}
        if draws:
            per_class = zip(self.beta_, self.prior_var_, self.laplace_cov_)
            beta = np.stack([gaussian_draws(beta, cov, n_draws=draws, seed=None if seed is None else [seed, c],
                                            active=var > 0)
                             for c, (beta, var, cov) in enumerate(per_class)], axis=2)
            return draws_idata({"beta": raw_weights(self.feature_map_, beta)}, method="rvm-bernoulli-laplace",
                               coords=coords, dims=dims, attrs={"objective": self.objective_.tolist()})
        return point_estimate_idata({"beta": raw_weights(self.feature_map_, self.beta_)}, method="rvm-bernoulli-typeii",
                                    coords=coords, dims=dims, attrs={"objective": self.objective_.tolist()})

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.bernoulli_rvm_model`:
        the ARD prior on its labelled proper surrogate, FLAP's and BLS's Laplace prior at each classifier's
        fitted λ)."""
        from sparsebayes.inference.posterior.twin_builders import bernoulli_rvm_model
        return bernoulli_rvm_model(self, X, y, surrogate_eps, train)
