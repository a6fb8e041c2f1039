"""What a fitted MAP multinomial logistic model answers, as estimator methods: class probabilities and
logits (Krishnapuram et al. 2005, eq. 1, the last class the reference), RMLR's Laplace approximation,
the generalization bounds of Sec. 4, ArviZ ``InferenceData`` and the record of its model
(:meth:`~MapClassifierMethods.posterior_model`, which ``compare`` and ``sample_posterior`` sample).

:class:`MapClassifierMethods` is mixed into
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseClassifier` (and so into its paper
subclass :class:`~sparsebayes.inference.estimators.smlr.SMLRClassifier`), which fits through it under
``method="map"`` (:meth:`~MapClassifierMethods._fit_map`: the fitting core
:func:`~sparsebayes.inference.estimators.map_fit.fit_map_model`) and answers through it; and into
:class:`~sparsebayes.inference.estimators.smlr_cv.SMLRCV`. It names the
:class:`~sparsebayes.inference.estimators.map_fit.MapFit` record in the fitted attributes
(:meth:`~MapClassifierMethods._name_map_fit`) and reads them back.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from sparsebayes.inference._validation import check_hierarchy_class, validate_classification_data, validate_predict_data
from sparsebayes.inference.estimators._base import basis_names, fitted_by, name_record
from sparsebayes.inference.estimators.links import link_likelihood
from sparsebayes.inference.estimators.map_fit import (MapOptions, fit_map_model, log_softmax, map_basis,
                                                      map_feature_map, map_penalty, standardized, training_digest)
from sparsebayes.inference.estimators.smlr_scale import scale_bias_row
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.models.likelihoods.multinomial import flatten, hessian, unflatten
from sparsebayes.models.priors import HIERARCHIES, hierarchy_name, is_hierarchy
from sparsebayes.models.priors.penalty import PENALTY_OF, penalty_prior

#: The parameters of the paper estimator (:class:`~sparsebayes.inference.estimators.smlr.SMLRClassifier`)
#: that ``SparseClassifier(method="map")`` takes in ``options``, and their defaults: ``lam`` (with a
#: hierarchy name) and the :class:`~.map_fit.MapOptions` other than the basis.
MAP_SETTINGS = {"lam": 1.0, **{f.name: f.default for f in dataclasses.fields(MapOptions)
                               if f.name not in ("features", "kernel_width")}}

#: The likelihoods a MAP fit takes as ``link``: the multinomial logistic, the logistic for two classes.
MAP_LIKELIHOODS = ("multinomial", "bernoulli_logistic")


class MapClassifierMethods(PosteriorSamplingMixin):
    """The fit and the methods of a MAP multinomial logistic regression (SMLR, RMLR, ML); module docstring."""

    # --- the fit -----------------------------------------------------------------------------------

    def _map_setup(self):
        """``(penalty, lam, options)`` of ``SparseClassifier(method="map")``: the hierarchy (``prior``, a name
        of :data:`~sparsebayes.models.priors.penalty.PENALTY_OF` at ``options``' ``lam``, by default 1, or
        an object at its own λ, :func:`~.map_fit.map_penalty`), ``link`` (the multinomial logistic, or the
        logistic) and ``options`` (:data:`MAP_SETTINGS`), each checked: ``ValueError`` naming what is wrong."""
        prior = self._given_hierarchy("map")
        name = hierarchy_name(prior)
        if name not in PENALTY_OF:
            label = type(prior).__name__ if is_hierarchy(prior) else repr(prior)
            fits = ", ".join(f"{n!r} ({self._paper('map')})" for n in PENALTY_OF)
            raise ValueError(f"prior {label} has no {'map'!r} engine; method='map' fits the priors {fits}")
        # the penalty is the prior's; a hierarchy object with a penalty sets its λ too
        by_prior = {"penalty", "lam", "lam_relative"} if is_hierarchy(prior) and PENALTY_OF[name] else {"penalty"}
        values = self._route_settings("map", MAP_SETTINGS, by_prior)
        self._check_map_link()
        if is_hierarchy(prior):
            check_hierarchy_class(prior, HIERARCHIES[name], self._paper("map"), self.method)
            penalty, lam = map_penalty(prior)
        else:
            penalty, lam = PENALTY_OF[name], values["lam"]
            penalty_prior(penalty, lam)
        settings = {k: v for k, v in values.items() if k != "lam"}
        return penalty, lam, MapOptions(features=self.features, kernel_width=self.kernel_width, **settings)

    def _check_map_link(self):
        """``ValueError`` unless ``link`` is ``None``, the logistic or the multinomial logistic (a fitted
        ``likelihood_``; :func:`~.links.link_likelihood`): naming the link and the methods that fit it."""
        link_likelihood(self.link, MAP_LIKELIHOODS, "multinomial", self._paper("map"), self.method)

    def _validate_map_data(self, X, y):
        """Validated float64 ``X`` and encoded labels (``classes_``; an object ``y`` of unknown label type is
        scikit-learn's "Unknown label type" error), and the training inputs' fingerprint."""
        if y is not None and np.asarray(y).dtype == object:
            type_of_target(y, input_name="y", raise_unknown=True)
        X, y_enc = validate_classification_data(self, X, y)
        self._training_digest_ = training_digest(X)
        return X, y_enc

    def _fit_map(self, X, y):
        """Fit the MAP of eq. 3 (RMLR, ML) by bound optimization: :func:`~.map_fit.fit_map_model` on the
        basis of the fitted feature map, its record named here; with ``warm_start``, from the previous
        fit's weights where the basis and the classes agree (``_warm_weights``: kept across the clearing of
        the fitted attributes, dropped by a failed fit and by a fit of another route, so that they are
        always the last fit's)."""
        old = vars(self).pop("_warm_weights", None)
        penalty, lam, options = self._map_setup()
        options.check(penalty)
        X, y_enc = self._validate_map_data(X, y)
        basis = map_basis(X, map_feature_map(options.features, options.kernel_width, options.standardize))
        coef0 = old[0] if options.warm_start and old is not None and np.array_equal(old[1], self.classes_) else None
        fit = fit_map_model(basis, y_enc, self.classes_, penalty, lam, options, coef0=coef0, owner=self)
        self._name_map_fit(fit)
        self._warm_weights = (fit.basis_weights, self.classes_)
        return self

    def _name_map_fit(self, fit):
        """The fitted attributes of the record ``fit`` (:class:`~.map_fit.MapFit`): ``feature_map_``,
        ``bias_scale_``, ``lam_``, ``coef_``, ``intercept_``, ``prior_``, ``likelihood_``, ``n_iter_``,
        ``objective_``, ``optimality_residual_``, ``solver_``, ``active_``, ``n_active_``, ``n_nonzero_``,
        ``relevance_indices_`` (Gaussian kernels)."""
        # prior_: SparseClassifier(method="map", prior=prior_) refits it
        name_record(self, fit, ("feature_map", "bias_scale", "lam", "coef", "intercept", "prior", "likelihood",
                                "n_iter", "objective", "optimality_residual", "solver", "active", "n_active",
                                "n_nonzero"))
        self._basis_weights_ = fit.basis_weights
        if fit.relevance_indices is not None:
            self.relevance_indices_ = fit.relevance_indices

    # --- the fitted model --------------------------------------------------------------------------

    def _penalty(self):
        """The fitted penalty: ``"l1"``, ``"l2"`` or ``None`` (:data:`PENALTY_OF` of ``prior_``)."""
        return PENALTY_OF[hierarchy_name(self.prior_)]

    def _training_inputs(self, X, purpose):
        """``X`` validated, or a ``ValueError`` unless it is the data the estimator was fitted on."""
        X = validate_predict_data(self, X)
        if training_digest(X) != getattr(self, "_training_digest_", None):
            raise ValueError(f"X must be the training inputs: {purpose} is taken on them (these differ from the "
                             "data the estimator was fitted on)")
        return X

    def _standardized(self):
        """Whether the fitted map standardizes the inputs (``standardize`` with linear or quadratic features)."""
        return standardized(self.feature_map_)

    def _map_design(self, X, *, fit):
        """``h(X)``: the design in the units of the fitted weights (bias column of ones); ``fit`` refits the
        map (a CV fold's kernels)."""
        from sparsebayes.models.features import fit_transform_validated, transform_validated

        if self.feature_map_ is None:
            return X
        return fit_transform_validated(self.feature_map_, X) if fit else transform_validated(self.feature_map_, X)

    def _penalized_design(self, X, *, fit):
        """``h(X)`` with the bias column at the ``bias_scale_`` already fixed (the design the weights
        of the penalized problem multiply); ``fit`` refits the map (a CV fold's kernels)."""
        return scale_bias_row(np.asarray(self._map_design(X, fit=fit), dtype=np.float64).T, self.bias_scale_).T

    def _penalized_coef(self):
        """``W`` (``_basis_weights_`` without the reference column) in the penalized problem's units: the
        bias row divided by ``bias_scale_``."""
        return scale_bias_row(self._basis_weights_[:, :-1], 1.0 / self.bias_scale_)

    def _logits(self, X):
        """``[XW, 0]``, n × m: eq. 1's linear predictors, the reference class's fixed at zero."""
        check_is_fitted(self)
        X = validate_predict_data(self, X)
        return np.asarray(self._map_design(X, fit=False) @ self._basis_weights_)

    def decision_function(self, X):
        """The logits ``[XW, 0]`` (n × m); for two classes the log-odds of ``classes_[1]``
        against ``classes_[0]``, shape (n,), positive where ``classes_[1]`` is predicted."""
        logits = self._logits(X)
        return logits[:, 1] - logits[:, 0] if logits.shape[1] == 2 else logits

    def predict_log_proba(self, X):
        """Log class probabilities (eq. 1), a log-softmax of the logits: finite where the
        probabilities underflow."""
        return log_softmax(self._logits(X))

    def predict_proba(self, X):
        """Class probabilities (eq. 1), columns in the order of ``classes_``."""
        return np.exp(MapClassifierMethods.predict_log_proba(self, X))

    def predict(self, X):
        """The most probable class."""
        logits = self._logits(X)
        return self.classes_[np.argmax(logits, axis=1)]

    @available_if(fitted_by("map"))
    def laplace_covariance(self, X):
        """Covariance of RMLR's Laplace approximation ``N(vec W*, (λI − H(W*))⁻¹)`` (``penalty="l2"``).

        ``H`` is the log-likelihood's Hessian at the MAP (Sec. 3.2, :func:`~sparsebayes.models.
        multinomial.hessian`) on the training inputs ``X``; the prior adds ``λI``. Indices follow
        :func:`~sparsebayes.models.likelihoods.multinomial.flatten` (class-major). The l1 posterior has no
        Gaussian approximation at a sparse mode (the prior is not differentiable at 0), so the
        other penalties raise ``ValueError``."""
        check_is_fitted(self)
        if self._penalty() != "l2":
            raise ValueError("the Laplace approximation is defined for penalty='l2' (RMLR): the l1 posterior is "
                             "not differentiable at its sparse mode, and without a prior the Hessian can be singular")
        Phi = self._map_design(self._training_inputs(X, "the Hessian"), fit=False)
        W = self._basis_weights_[:, :-1]
        # the prior's precision λ, on the intercept b = c·w_c (penalty λ w_c²/2) λ/c², c = bias_scale_
        prior = np.asarray(flatten(scale_bias_row(np.full(W.shape, self.lam_), self.bias_scale_ ** -2.0)))
        precision = np.diag(prior) - np.asarray(hessian(jnp.asarray(W), jnp.asarray(Phi)))
        L_inv = scipy.linalg.solve_triangular(np.linalg.cholesky(precision), np.eye(W.size), lower=True)
        return L_inv.T @ L_inv

    def to_inference_data(self, X=None, *, draws=0, seed=0):
        """The MAP estimate ``W`` as ArviZ ``InferenceData`` (``beta`` on ``basis`` × ``class``, the reference
        column zero: ``coef_`` and ``intercept_`` in the engine's layout, :func:`~.map_fit.sklearn_layout`);
        for RMLR with the training inputs ``X`` and ``draws > 0``, draws of its Laplace approximation instead."""
        check_is_fitted(self)
        W = self._basis_weights_
        d = W.shape[0]
        coords = {"basis": basis_names(self, self.feature_map_, d), "class": [str(c) for c in self.classes_]}
        attrs = {"penalty": str(self._penalty()), "lam": float(self.lam_), "objective": self.objective_,
                 "optimality_residual": self.optimality_residual_, "bias_scale": self.bias_scale_}
        if draws:
            if X is None:
                raise ValueError("Laplace draws need the training inputs X (the Hessian is taken on them)")
            cov = MapClassifierMethods.laplace_covariance(self, X)
            flat = gaussian_draws(flatten(W[:, :-1]), cov, n_draws=draws, seed=seed)
            coef = np.zeros((1, draws) + W.shape)
            coef[0, ..., :-1] = jax.vmap(lambda w: unflatten(w, d))(flat[0])
            return draws_idata({"beta": coef}, method="rmlr-laplace-approximation", coords=coords,
                               dims={"beta": ["basis", "class"]}, attrs=attrs)
        return point_estimate_idata({"beta": W}, method=f"bound-optimization-{self.solver_}",
                                    coords=coords, dims={"beta": ["basis", "class"]}, attrs=attrs)

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.smlr_model`)."""
        from sparsebayes.inference.posterior.twin_builders import smlr_model
        return smlr_model(self, X, y, surrogate_eps, train)

    @available_if(fitted_by("map"))
    def generalization_bounds(self, X, y, *, delta=0.05, n_draws=2000, seed=0):
        """Rademacher (Theorem 1) and PAC-Bayes (Theorem 2) bounds on the error rate (binary SMLR).

        ``X, y`` must be the training data.  See :func:`sparsebayes.inference.estimators.smlr_bounds.error_bounds`.
        Both theorems take the prior (λ) and the basis as fixed before the data are seen: with λ
        chosen by cross-validation on the same data (:class:`~.smlr_cv.SMLRCV`), or kernels centred on the
        training points (``features="kernel"``), the figures are indicative, not guarantees.
        """
        from sparsebayes.inference.estimators.smlr_bounds import error_bounds

        check_is_fitted(self)
        if len(self.classes_) != 2 or self._penalty() != "l1":
            raise ValueError("the bounds of Sec. 4 are for binary SMLR (two classes, penalty='l1')")
        X = self._training_inputs(X, "each bound")
        y = np.asarray(y)
        if not np.all(np.isin(y, self.classes_)):
            raise ValueError("y holds labels the classifier was not trained on")
        # the paper's ±1 labels for sign(wᵀx): +1 is classes_[0], the class w models
        signs = np.where(y == self.classes_[0], 1.0, -1.0)
        # the theorems' ‖w‖₁ is the penalized one: the penalized problem's weights on its design
        return error_bounds(self._penalized_coef()[:, 0], self._penalized_design(X, fit=False), signs, lam=self.lam_,
                            delta=delta, n_draws=n_draws, seed=seed)

