"""SMLR / RMLR classifiers: thin scikit-learn shells over :mod:`sparsebayes.inference.engines.bound`.

:class:`SMLRClassifier` fits the MAP multinomial logistic regression of Krishnapuram et
al. (2005) with the last class as reference (eq. 1),

    max_W  ℓ(W) − λ‖W‖₁          (penalty="l1": SMLR, eq. 3)
    max_W  ℓ(W) − λ‖W‖²/2        (penalty="l2": RMLR, Sec. 3.3)
    max_W  ℓ(W)                  (penalty=None: ML, Sec. 3.2)

on a basis ``h(x)`` (linear, quadratic or Gaussian kernels centred on the training points,
from :mod:`sparsebayes.models.features`).  :class:`SMLRCV` (:mod:`sparsebayes.inference.
smlr_cv`, re-exported here) picks λ, and the kernel width, by cross-validation.

The paper's prior covers the whole ``w``, the bias weight included (eq. 3; Sec. 3.3 for the Gaussian):
on the raw inputs the penalized intercept then depends on where the origin of ``x`` lies and the fit
on the units of X (an offset of 1e4 moved RMLR's probabilities by 0.17). By default
(``standardize=True``) the linear and quadratic maps act on the standardized inputs, so the bias is
the logit at the training mean (a centred bias, penalized like the other weights, as the EM
estimators' ``standardize``) and the weights are per training SD: offsets and units leave the fit
as it was. ``standardize=False`` is the paper's basis, which its reproductions
(:mod:`sparsebayes.comparisons.experiments.smlr`) ask for.
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import type_of_target
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from sparsebayes.inference.engines import bound
from sparsebayes.inference._backend import on_accelerator
from sparsebayes.inference.estimators._base import atomic_fit, basis_names, has_bias_column, make_feature_map, raw_weights
from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference._validation import (
    check_flags,
    check_max_iter,
    check_number,
    validate_classification_data,
    validate_predict_data,
)
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.estimators.smlr_scale import UNIT_RANGE, bias_scale, lambda_max, scale_bias_row  # noqa: F401
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.models.features import GaussianKernelFeatures, fit_transform_validated, transform_validated
from sparsebayes.models.priors.penalty import penalty_prior
from sparsebayes.models.likelihoods.multinomial import MULTINOMIAL, flatten, hessian, unflatten


def visitation_seed(random_state):
    """The int that seeds the component-wise visitation schedule (Sec. 3.5): an int as given (fits
    stay reproducible); ``None`` or a ``RandomState``, a draw from scikit-learn's
    ``check_random_state`` (``None``: a fresh schedule each fit), as scikit-learn's estimators take
    ``random_state``."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def sklearn_layout(W, bias):
    """``(coef_, intercept_)`` in scikit-learn's layout (``LogisticRegression``'s) from ``W`` (n_basis × m,
    the reference class's zero column last; its first row the bias's where ``bias``).

    ``coef_`` holds the weights of the other design columns, one row per class, and ``intercept_`` the bias
    row (zeros without a bias column), so that the logits are ``Φ_out @ coef_.T + intercept_``. With two
    classes there is one row, the log-odds of class 1 against class 0 (``w_1 − w_0 = −w_0``), the
    two-class ``decision_function``.
    """
    W = np.asarray(W, dtype=np.float64)
    inputs, intercept = (W[1:], W[0]) if bias else (W, np.zeros(W.shape[1]))
    if W.shape[1] == 2:
        return (inputs[:, 1] - inputs[:, 0])[None, :], np.array([intercept[1] - intercept[0]])
    return np.ascontiguousarray(inputs.T), np.array(intercept)


#: ``solver="auto"`` takes the Newton solver up to this many weights ``d(m−1)``, surrogate-cd beyond.
NEWTON_MAX_WEIGHTS = 1024


def choose_solver(solver, n_samples, n_basis, n_classes, backend=None):
    """``"auto"``: block on an accelerator (``backend``, default ``jax.default_backend()``: one
    dense ``dm × dm`` solve per step keeps a GPU busy, where coordinate sweeps are thousands of
    tiny dependent kernels) and on a CPU when ``n > (dm)²`` (the paper's Sec. 5 rule); otherwise,
    where the paper takes component-wise, Newton up to :data:`NEWTON_MAX_WEIGHTS` weights and
    surrogate-cd beyond. All reach the same optimum; on kernel bases Newton reaches the MAP
    (residual 1e-10 or below) where surrogate-cd stops at tol 1e-6 short of it (residual 1e-5 to
    1e-3)."""
    if solver == "auto":
        if on_accelerator(backend):
            return "block"
        if n_samples > (n_basis * n_classes) ** 2:
            return "block"
        return "newton" if n_basis * (n_classes - 1) <= NEWTON_MAX_WEIGHTS else "surrogate-cd"
    if solver not in bound.SOLVERS:
        raise ValueError(f"solver must be 'auto' or one of {bound.SOLVERS}, got {solver!r}")
    return solver


def reference_logits(Phi, W):
    """``[ΦW, 0]``: eq. 1's linear predictors with the reference class's fixed at zero (NumPy)."""
    return np.hstack([Phi @ W, np.zeros((Phi.shape[0], 1))])


def log_softmax(logits):
    """Log class probabilities from logits, row-wise: finite where the probabilities underflow
    (``logits − max − log Σ exp(logits − max)``)."""
    top = np.max(logits, axis=1, keepdims=True)
    return logits - top - np.log(np.sum(np.exp(logits - top), axis=1, keepdims=True))


def fit_coef(Phi, y_enc, n_classes, *, penalty, lam, solver, tol, max_iter, seed, coef0=None, cache=None,
             n_rows=None):
    """One bound-optimization fit on a design ``Phi``; returns ``(W, Info, solver_used)``.

    The design is zero-padded to a bucketed size (rows of the reference class, zero
    columns): padded rows add the constant ``−log m`` each to ``ℓ`` and nothing to the
    gradient, padded columns keep zero weights, so the estimate is unchanged; the reported
    objective has the constant removed.  This only saves jit compilations; with ``n_rows`` the
    rows go to the bucket of ``max(N, n_rows)``: fits on subsets of ``n_rows`` points (SMLRCV's
    folds) share the programs of the fit on all.  ``cache`` (a dict owned by the caller, for one
    design) keeps the precomputed problem across a λ path.
    """
    prior = penalty_prior(penalty, lam)
    n, d = Phi.shape
    solver = choose_solver(solver, n, d, n_classes)
    n_pad, d_pad = bucket(max(n, n_rows or 0), per_octave=4, minimum=16), bucket(d, per_octave=4, minimum=16)
    # on the device before the engine sees them: jnp.asarray of a NumPy array builds a program of its own
    Phi_pad = jax.device_put(pad_to(np.asarray(Phi, dtype=np.float64), (n_pad, d_pad)))
    y_pad = jax.device_put(pad_to(np.asarray(y_enc), (n_pad,), fill=n_classes - 1))
    # zeros (the engine's default) as an array: a warm start and a cold one share a program
    coef0 = pad_to(np.zeros((d, n_classes - 1)) if coef0 is None else np.asarray(coef0, np.float64),
                   (d_pad, n_classes - 1))
    key = (solver, type(prior).__name__)
    if cache is not None and key in cache:
        problem = cache[key]
    else:
        problem = bound.make_problem(Phi_pad, y_pad, n_classes, solver=solver, prior=prior)
        if cache is not None:
            cache[key] = problem
    state, info = bound.run(problem, prior, solver=solver, coef0=coef0, tol=tol,
                            max_iter=max_iter, seed=seed)
    if solver == "block" and not np.all(np.isfinite(state.coef)):
        # eq. 13's system λI − ΥBΥ is lost to rounding where λ is tiny against |w|·ΦᵀΦ
        warnings.warn(f"the block solver broke down (non-finite weights) at lam={lam:.3g}, tiny against this "
                      "design's scale; refitted by solver='surrogate-cd' (standardizing X avoids it)",
                      ConvergenceWarning, stacklevel=2)
        return fit_coef(Phi, y_enc, n_classes, penalty=penalty, lam=lam, solver="surrogate-cd", tol=tol,
                        max_iter=max_iter, seed=seed, coef0=coef0[:d], cache=cache, n_rows=n_rows)
    info = info._replace(objective=np.asarray(info.objective) + (n_pad - n) * np.log(n_classes))
    return np.asarray(state.coef)[:d], info, solver


def separates(W, Phi, y):
    """Whether ``W`` (with the reference class's zero column appended) ranks every training
    point's own class strictly first. Then ``tW`` does too for every ``t > 1`` with a higher
    likelihood (eq. 1), so the ML estimate (no prior) does not exist."""
    eta = reference_logits(Phi, W)
    own = eta[np.arange(y.size), y]
    eta[np.arange(y.size), y] = -np.inf
    return bool(np.all(own > eta.max(axis=1)))


def _digest(X):
    """A fingerprint of the validated float64 inputs: SHA-1 of their shape and bytes, read in
    place (no copy of a large design)."""
    import hashlib

    X = np.ascontiguousarray(X, dtype=np.float64)
    digest = hashlib.sha1(repr(X.shape).encode())
    digest.update(memoryview(X).cast("B"))
    return digest.hexdigest()


class _MultinomialLogisticBase(ClassifierMixin, PosteriorSamplingMixin, BaseEstimator):
    """Prediction, fitted attributes and InferenceData shared by the fit-once and CV estimators."""

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.smlr_model`)."""
        from sparsebayes.inference.posterior.twin_builders import smlr_model
        return smlr_model(self, X, y, surrogate_eps, train)

    def _clear_fitted(self):
        """Delete every fitted attribute (names ending in ``_``): none survives a refit with other
        parameters (a kernel fit's ``relevance_indices_`` after a linear refit)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)

    def _validate(self, X, y):
        check_flags(self)
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise ValueError(f"standardize must be True or False, got {self.standardize!r}")
        check_number("tol", self.tol, 0.0, strict=True)
        check_max_iter(self.max_iter)
        if y is not None and np.asarray(y).dtype == object:
            type_of_target(y, input_name="y", raise_unknown=True)  # "Unknown label type" error
        X, y_enc = validate_classification_data(self, X, y)
        self._training_digest = _digest(X)
        return X, y_enc

    def _training_inputs(self, X, purpose):
        """``X`` validated, or a ``ValueError`` unless it is the data the estimator was fitted on."""
        X = validate_predict_data(self, X)
        if _digest(X) != getattr(self, "_training_digest", None):
            raise ValueError(f"X must be the training inputs: {purpose} is taken on them (these differ from the "
                             "data the estimator was fitted on)")
        return X

    def _feature_map(self, kernel_width):
        """The unfitted map for ``features`` (``None``: raw X), by :func:`make_feature_map`; with
        ``standardize`` the linear and quadratic maps centre and scale the inputs at their training
        mean and SD (kernels and transformers take the inputs as they are)."""
        return make_feature_map(self.features, kernel_width=kernel_width, allow_none=True,
                                center=bool(self.standardize), scale=bool(self.standardize))

    def _standardized(self):
        """Whether the fitted map standardizes the inputs (``standardize`` with linear or quadratic features)."""
        return bool(getattr(self.feature_map_, "center", False) or getattr(self.feature_map_, "scale", False))

    def _design(self, X, *, fit):
        """``h(X)``: the design in the units of the fitted weights (bias column of ones)."""
        if self.feature_map_ is None:
            return X
        return fit_transform_validated(self.feature_map_, X) if fit else transform_validated(self.feature_map_, X)

    def _fit_penalized_design(self, X):
        """Fit the feature map on ``X``, fix ``bias_scale_`` (:func:`bias_scale`) on its design, and
        return the design of the penalized problem (bias column at ``bias_scale_``)."""
        Phi = np.asarray(self._design(X, fit=True), dtype=np.float64)
        self.bias_scale_ = bias_scale(self.feature_map_, Phi)
        return scale_bias_row(Phi.T, self.bias_scale_).T

    def _penalized_design(self, X, *, fit):
        """``h(X)`` with the bias column at the ``bias_scale_`` already fixed (the design the weights
        of the penalized problem multiply); ``fit`` refits the map (a CV fold's kernels)."""
        return scale_bias_row(np.asarray(self._design(X, fit=fit), dtype=np.float64).T, self.bias_scale_).T

    def _penalized_coef(self):
        """``W`` (``_basis_weights_`` without the reference column) in the penalized problem's units: the
        bias row divided by ``bias_scale_``."""
        return scale_bias_row(self._basis_weights_[:, :-1], 1.0 / self.bias_scale_)

    def _warn_if_constant(self, Phi, y_enc, change):
        """:class:`DegenerateFitWarning` when every weight of an input is zero (SMLR): the classifier
        then ignores ``X``; or, whatever the penalty and the weights, when it predicts one class for
        every training point of several classes (:meth:`_warn_if_one_class`: kernels far wider than
        the inputs' spread, every column the bias's). ``Phi`` is the penalized design (for λ_max);
        ``change(lam_max)`` says what to do."""
        W = self._basis_weights_
        inputs = W[1:] if has_bias_column(self.feature_map_) else W
        if self.penalty != "l1" or np.any(inputs != 0):
            self._warn_if_one_class(Phi, y_enc)
            return
        top, label = lambda_max(Phi, y_enc, len(self.classes_)), np.asarray(self.classes_[np.argmax(W[0])])
        warn_degenerate(self, (
            f"every weight is zero at lam={self.lam_:.3g}, at or above λ_max={top:.3g} for these data (the λ that "
            f"zeroes every weight; it grows with the units of X): every class gets probability 1/{len(self.classes_)}"
            if self.n_nonzero_ == 0 else f"every input's weight is zero at lam={self.lam_:.3g} (λ_max={top:.3g} for "
            f"these data), only the bias is not: a constant classifier that predicts {label.item()!r}"), change(top))

    def _warn_if_one_class(self, Phi, y_enc):
        """:class:`DegenerateFitWarning` when the fit predicts one class for every training point though
        ``y`` holds several. Nonzero weights do not rule it out: Gaussian kernels whose width dwarfs the
        inputs' spread (a fixed ``kernel_width`` on X in tiny units) are all ≈ 1, copies of the bias
        column, and the fit is a constant classifier with accuracy the majority share. The advice
        names the kernel width for kernel maps, the inputs' scale and λ otherwise."""
        if np.unique(y_enc).size < 2:
            return
        predicted = np.argmax(reference_logits(Phi, self._penalized_coef()), axis=1)
        if np.unique(predicted).size > 1:
            return
        label = np.asarray(self.classes_[predicted[0]]).item()
        share = float(np.mean(y_enc == predicted[0]))
        if isinstance(self.feature_map_, GaussianKernelFeatures):
            change = (f"the Gaussian kernels' width ({self.feature_map_.width_:.3g}, in the units of X) may not suit "
                      "the data's scale: standardize X, or use kernel_width='scale'")
        else:
            change = ("" if self._standardized() else "standardize X, or ") + f"lower lam (lam={self.lam_:.3g})"
        warn_degenerate(self, f"it predicts one class ({label!r}) for every training point (training accuracy "
                        f"{share:.2f}, the share of that class) though y holds {np.unique(y_enc).size} classes",
                        change, stacklevel=4)

    def _set_fit(self, W, info, solver):
        """Fitted attributes from the penalized problem's ``W`` (bias row in its units)."""
        d = W.shape[0]
        self._basis_weights_ = np.hstack([scale_bias_row(W, self.bias_scale_), np.zeros((d, 1))])
        # coef_ and intercept_ in the raw terms (the basis weights themselves unless the inputs are standardized)
        raw = raw_weights(self.feature_map_, self._basis_weights_.T).T
        self.coef_, self.intercept_ = sklearn_layout(raw, has_bias_column(self.feature_map_))
        self.prior_ = penalty_prior(self.penalty, self.lam_)  # SparseClassifier(method="map", prior=prior_) refits it
        self.likelihood_ = MULTINOMIAL
        self.n_iter_ = int(info.n_iter)
        self.objective_ = float(info.objective)
        self.optimality_residual_ = float(info.residual)
        self.solver_ = solver
        self.active_ = np.any(W != 0, axis=1)
        self.n_active_ = int(np.count_nonzero(self.active_))
        self.n_nonzero_ = int(np.count_nonzero(W))
        if isinstance(self.feature_map_, GaussianKernelFeatures):
            self.relevance_indices_ = self.feature_map_.centers_for(self.active_)
        if not np.isfinite(self.objective_):
            warn_degenerate(self, f"the objective is not finite ({self.objective_}): the bound optimization ({solver}) "
                            "broke down numerically and its weights are not the MAP", "standardize X, or try "
                            "solver='newton'", stacklevel=3)
        elif not bool(info.converged):
            warnings.warn(
                f"bound optimization ({solver}) did not converge in {self.n_iter_} iterations "
                f"(relative change {float(info.rel_change):.2e} > tol={self.tol}); "
                "increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif self.penalty == "l1" and self.optimality_residual_ > self.lam_:
            # the relative change is small, but the gradient is further than λ from λ∂‖W‖₁
            warnings.warn(
                f"bound optimization ({solver}) stopped on its relative change (tol={self.tol}) with an "
                f"optimality residual of {self.optimality_residual_:.2g}, above lam={self.lam_:.2g}: the weights are "
                "not near the MAP yet (the bound's steps crawl where probabilities saturate, near-separable "
                "classes); solver='newton' reaches it, or lower tol",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _logits(self, X):
        """``[XW, 0]``, n × m: eq. 1's linear predictors, the reference class's fixed at zero."""
        check_is_fitted(self)
        X = validate_predict_data(self, X)
        return np.asarray(self._design(X, fit=False) @ self._basis_weights_)

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
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class."""
        logits = self._logits(X)
        return self.classes_[np.argmax(logits, axis=1)]

    def laplace_covariance(self, X):
        """Covariance of RMLR's Laplace approximation ``N(vec W*, (λI − H(W*))⁻¹)`` (``penalty="l2"``).

        ``H`` is the log-likelihood's Hessian at the MAP (Sec. 3.2, :func:`~sparsebayes.models.
        multinomial.hessian`) on the training inputs ``X``; the prior adds ``λI``. Indices follow
        :func:`~sparsebayes.models.likelihoods.multinomial.flatten` (class-major). The l1 posterior has no
        Gaussian approximation at a sparse mode (the prior is not differentiable at 0), so the
        other penalties raise ``ValueError``."""
        check_is_fitted(self)
        if self.penalty != "l2":
            raise ValueError("the Laplace approximation is defined for penalty='l2' (RMLR): the l1 posterior is "
                             "not differentiable at its sparse mode, and without a prior the Hessian can be singular")
        Phi = self._design(self._training_inputs(X, "the Hessian"), fit=False)
        W = self._basis_weights_[:, :-1]
        # the prior's precision λ, on the intercept b = c·w_c (penalty λ w_c²/2) λ/c², c = bias_scale_
        prior = np.asarray(flatten(scale_bias_row(np.full(W.shape, self.lam_), self.bias_scale_ ** -2.0)))
        precision = np.diag(prior) - np.asarray(hessian(jnp.asarray(W), jnp.asarray(Phi)))
        L_inv = scipy.linalg.solve_triangular(np.linalg.cholesky(precision), np.eye(W.size), lower=True)
        return L_inv.T @ L_inv

    def to_inference_data(self, X=None, *, draws=0, seed=0):
        """The MAP estimate ``W`` as ArviZ ``InferenceData`` (``beta`` on ``basis`` × ``class``, the reference
        column zero: ``coef_`` and ``intercept_`` in the engine's layout, :func:`sklearn_layout`); for RMLR
        with the training inputs ``X`` and ``draws > 0``, draws of its Laplace approximation instead."""
        check_is_fitted(self)
        W = self._basis_weights_
        d = W.shape[0]
        coords = {"basis": basis_names(self, self.feature_map_, d), "class": [str(c) for c in self.classes_]}
        attrs = {"penalty": str(self.penalty), "lam": float(self.lam_), "objective": self.objective_,
                 "optimality_residual": self.optimality_residual_, "bias_scale": self.bias_scale_}
        if draws:
            if X is None:
                raise ValueError("Laplace draws need the training inputs X (the Hessian is taken on them)")
            cov = self.laplace_covariance(X)
            flat = gaussian_draws(flatten(W[:, :-1]), cov, n_draws=draws, seed=seed)
            coef = np.zeros((1, draws) + W.shape)
            coef[0, ..., :-1] = jax.vmap(lambda w: unflatten(w, d))(flat[0])
            return draws_idata({"beta": coef}, method="rmlr-laplace-approximation", coords=coords,
                               dims={"beta": ["basis", "class"]}, attrs=attrs)
        return point_estimate_idata({"beta": W}, method=f"bound-optimization-{self.solver_}",
                                    coords=coords, dims={"beta": ["basis", "class"]}, attrs=attrs)

    def generalization_bounds(self, X, y, *, delta=0.05, n_draws=2000, seed=0):
        """Rademacher (Theorem 1) and PAC-Bayes (Theorem 2) bounds on the error rate (binary SMLR).

        ``X, y`` must be the training data.  See :func:`sparsebayes.inference.estimators.smlr_bounds.error_bounds`.
        Both theorems take the prior (λ) and the basis as fixed before the data are seen: with λ
        chosen by cross-validation on the same data (:class:`SMLRCV`), or kernels centred on the
        training points (``features="kernel"``), the figures are indicative, not guarantees.
        """
        from sparsebayes.inference.estimators.smlr_bounds import error_bounds

        check_is_fitted(self)
        if len(self.classes_) != 2 or self.penalty != "l1":
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class SMLRClassifier(_MultinomialLogisticBase):
    """Sparse (l1, SMLR) or ridge (l2, RMLR) multinomial logistic regression by bound optimization.

    Parameters
    ----------
    penalty : {"l1", "l2", None}, default="l1"
        Laplace prior (SMLR, eq. 3), Gaussian prior (RMLR, Sec. 3.3) or none (ML).
    lam : float, default=1.0
        ``λ``: the Laplace parameter, or the Gaussian prior's inverse variance. Its size is
        relative to the units of ``h(x)``: above ``λ_max`` (:func:`lambda_max`) every SMLR weight is
        zero, and the fit warns (:class:`~sparsebayes.inference._warnings.DegenerateFitWarning`).
    lam_relative : bool, default=False
        Take ``lam`` as a fraction of ``λ_max`` of the training data (SMLR only): ``λ = lam · λ_max``,
        in ``lam_``. ``lam=0.01, lam_relative=True`` keeps the same penalty whatever the units of X;
        the default takes ``lam`` as the number ``λ``.
    solver : {"auto", "newton", "surrogate-cd", "componentwise", "block"}, default="auto"
        Component-wise updates (eqs. 15–16), the block update (eqs. 7, 10, 13 with
        over-relaxation), the block surrogate maximized by coordinate sweeps, or an MM step
        followed by a damped Newton step on its support (not in the paper; same optimum)
        (:mod:`sparsebayes.inference.engines.bound`); ``"auto"``: :func:`choose_solver`.
    features : {"linear", "quadratic", "kernel", None} or transformer, default="linear"
        ``h(x)``: inputs with a bias column, quadratic features, Gaussian kernels
        ``exp(−‖x−x'‖²/(2h²))`` on the training points (with a bias), raw ``X``, or any
        transformer (cloned; e.g. ``PolynomialFeatures(3)`` for the paper's polynomial basis).
        Every weight of the basis, the bias included, is penalized, as in the paper (eq. 3 and
        Sec. 3.3 put the prior on the whole ``w``); ``standardize`` says on which basis.
    kernel_width : float or "scale", default="scale"
        ``h`` for ``features="kernel"``; ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)`` (scikit-learn's ``SVC(gamma="scale")`` on centred columns);
        ``feature_map_.width_`` holds the one in use.
    standardize : bool, default=True
        For the linear and quadratic maps: the basis is built on the standardized inputs
        ``z = (x − mean)/sd`` (training mean and SD; :class:`~sparsebayes.models.features.LinearFeatures`
        with ``center`` and ``scale``). The bias weight is then the logit at the training mean (a
        centred bias) and every weight is in units of one SD, so the fit, hence ``predict_proba``,
        does not move when columns are offset or change units: ``λ`` is a unit-free prior precision
        (``l2``) or Laplace weight (``l1``). A binary ``penalty="l2"`` fit is scikit-learn's
        ``LogisticRegression(C=1/λ, solver="liblinear", intercept_scaling=1)`` on the standardized
        inputs, whose intercept is penalized like a weight of a column of ones. ``coef_`` and
        ``intercept_`` give the same function of the raw inputs. ``False``: the paper's eqs. 2-3 (and
        Sec. 3.3's Gaussian prior) on the basis of the raw ``x``, as the reproductions of Krishnapuram
        et al. (2005) fit it: an offset of a column moves the penalized intercept and the fit, and the
        fit depends on the units of X by design; the bias column is then ``bias_scale_`` (a power of
        two; 1 for inputs within a factor 8 of unit size), so that the penalty on the intercept follows
        the units of X (:func:`bias_scale`). Gaussian kernels (translation-invariant, their width
        sets the scale), ``features=None`` and transformers take the inputs as they are either way.
    tol : float, default=1e-6
        Stop when ``max|ΔW| / max|W| < tol``.
    max_iter : int, default=2000
        Iterations (block) or sweeps (component-wise).
    warm_start : bool, default=False
        Start from the previous fit's weights when the shapes agree.
    random_state : int, RandomState or None, default=0
        Seeds the visitation of zero weights (:func:`visitation_seed`; ``None``: a fresh seed each fit).

    Attributes
    ----------
    classes_ : ndarray (m,)
        Class labels; the last is the reference class.
    coef_ : ndarray (m, n_features_out), or (1, n_features_out) for two classes
        ``LogisticRegression``'s layout (:func:`sklearn_layout`): ``decision_function(X)`` is
        ``X_out @ coef_.T + intercept_``, ``X_out`` the raw terms of the design without its bias column
        (``X`` itself for linear features; the terms ``feature_map_.get_feature_names_out`` names; with
        ``standardize=False`` or kernels, ``feature_map_.transform(X)``); the reference class's row is zero.
    intercept_ : ndarray (m,), or (1,) for two classes: the logits at ``x = 0`` (zeros without a bias column).
        ``to_inference_data``, ``active_`` and ``n_nonzero_`` read the weights on ``feature_map_``'s columns
        (with ``standardize``, of the standardized inputs: the bias is the logit at the training mean).
    feature_map_ : transformer or None
    active_ : bool (n_basis,), the basis functions with a nonzero weight in some class (the kept basis);
        ``n_active_`` counts them, ``n_nonzero_`` counts the nonzero weights.
    relevance_indices_ : training points whose kernels are retained (Gaussian kernel bases only).
    bias_scale_ : float
        The bias column's value in the penalized problem: the intercept ``b`` is penalized as
        ``λ|b|/bias_scale_`` (``objective_`` and ``optimality_residual_`` are that problem's; its
        NumPyro twin is the model on the design with the bias column times ``bias_scale_``).
    lam_ : float
        The ``λ`` fitted (``lam``, or ``lam · λ_max`` with ``lam_relative``; 0 without a penalty).
    prior_ : LaplacePrior, GaussianPrior or FlatPrior
        The hierarchy fitted, ``penalty``'s at ``lam_`` (:func:`~sparsebayes.models.priors.penalty.penalty_prior`:
        ``LaplacePrior.from_lam(lam_)``, ``GaussianPrior(lam_)``, ``FlatPrior()``):
        ``SparseClassifier(method="map", prior=prior_)``, with the same features and options (but
        ``lam_relative``: ``prior_`` holds the absolute λ), refits it.
    likelihood_ : MultinomialLogisticLikelihood
        The likelihood fitted (:class:`~sparsebayes.models.likelihoods.multinomial.MultinomialLogisticLikelihood`,
        003 eqs. 1–2, the last class the reference).
    n_nonzero_, n_iter_, objective_, optimality_residual_, solver_

    A fit sets or deletes every fitted attribute; a fit that fails (bad input, or a warning
    turned into an error) leaves the estimator unfitted, the previous model lost, as in
    scikit-learn.
    """

    def __init__(self, *, penalty="l1", lam=1.0, lam_relative=False, solver="auto", features="linear", kernel_width="scale",
                 standardize=True, tol=1e-6, max_iter=2000, warm_start=False, random_state=0):
        self.penalty = penalty
        self.lam = lam
        self.lam_relative = lam_relative
        self.solver = solver
        self.features = features
        self.kernel_width = kernel_width
        self.standardize = standardize
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state

    @atomic_fit
    def fit(self, X, y):
        """Fit the MAP estimate; raises ``ValueError`` on bad input."""
        penalty_prior(self.penalty, self.lam)
        if not isinstance(self.lam_relative, (bool, np.bool_)):
            raise ValueError(f"lam_relative must be True or False, got {self.lam_relative!r}")
        if self.lam_relative and self.penalty != "l1":
            raise ValueError(f"lam_relative=True takes lam as a fraction of SMLR's λ_max: penalty must be 'l1', "
                             f"got {self.penalty!r}")
        old = (self._basis_weights_, self.classes_) if self.warm_start and hasattr(self, "_basis_weights_") else None
        self._clear_fitted()
        X, y_enc = self._validate(X, y)
        self.feature_map_ = self._feature_map(self.kernel_width)
        Phi = self._fit_penalized_design(X)
        m = len(self.classes_)
        coef0 = None
        if old is not None and old[0].shape == (Phi.shape[1], m) and np.array_equal(old[1], self.classes_):
            coef0 = scale_bias_row(old[0][:, :-1], 1.0 / self.bias_scale_)
        lam = float(self.lam) * (lambda_max(Phi, y_enc, m) if self.lam_relative else 1.0)
        W, info, solver = fit_coef(Phi, y_enc, m, penalty=self.penalty, lam=lam, solver=self.solver,
                                   tol=self.tol, max_iter=self.max_iter, seed=visitation_seed(self.random_state),
                                   coef0=coef0)
        self.lam_ = lam if self.penalty is not None else 0.0
        self._set_fit(W, info, solver)
        self._warn_if_constant(Phi, y_enc, lambda top: (
            ("" if self._standardized() else "standardize X (standardize=True, or StandardScaler), or ")
            + f"pass lam well below λ_max={top:.3g} (lam_relative=True takes lam as a fraction of λ_max, e.g. lam=0.01)"))
        if self.penalty is None and separates(W, Phi, y_enc):
            warnings.warn(
                "the classes are separable in the basis: the maximum-likelihood weights do not exist "
                "(scaling up these weights raises the likelihood without bound), and coef_ is where the "
                "stopping rule halted; use penalty='l1' or 'l2'", ConvergenceWarning, stacklevel=3)
        return self


from sparsebayes.inference.estimators.smlr_cv import SMLRCV  # noqa: E402  (re-exported: it builds on the classes above)
