"""The MAP fitting core of multinomial logistic regression (SMLR / RMLR / ML; Krishnapuram et al. 2005).

One model fitted from (basis, encoded labels, penalty at its λ, options) by bound optimization
(:mod:`sparsebayes.inference.engines.bound`), last class the reference (003 eq. 1):

    max_W  ℓ(W) − λ‖W‖₁          (penalty "l1", :class:`~sparsebayes.models.priors.LaplacePrior`: SMLR, eq. 3)
    max_W  ℓ(W) − λ‖W‖²/2        (penalty "l2", :class:`~sparsebayes.models.priors.penalty.GaussianPrior`: RMLR, Sec. 3.3)
    max_W  ℓ(W)                  (penalty None, :class:`~sparsebayes.models.priors.penalty.FlatPrior`: ML, Sec. 3.2)

The estimators are shells over pure functions: :func:`map_penalty` reads a hierarchy object as the
penalty and λ the engine fits (:data:`~sparsebayes.models.priors.penalty.PENALTY_OF`),
:func:`map_basis` builds the penalized design of the feature map (the bias column at ``bias_scale``,
:func:`~sparsebayes.inference.estimators.smlr_scale.bias_scale`), and :func:`fit_map_model` fits it and
returns the fitted model as one :class:`MapFit` record, issuing the warnings a degenerate or
unconverged fit earns under the name of the estimator that asked (``owner``). :func:`fit_coef` is the
engine call the cross-validation paths (:mod:`.smlr_cv`, :mod:`.smlr_cv_path`) share with it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import warnings
from typing import NamedTuple

import jax
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from sparsebayes.inference._backend import on_accelerator
from sparsebayes.inference._validation import check_max_iter, check_number
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.engines import bound
from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference.estimators._base import has_bias_column, make_feature_map, raw_weights
from sparsebayes.inference.estimators.smlr_scale import bias_scale, lambda_max, scale_bias_row
from sparsebayes.models.features import GaussianKernelFeatures, fit_transform_validated
from sparsebayes.models.likelihoods.multinomial import MULTINOMIAL
from sparsebayes.models.priors import hierarchy_name
from sparsebayes.models.priors.penalty import PENALTY_OF, penalty_prior


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


def training_digest(X):
    """A fingerprint of the validated float64 inputs: SHA-1 of their shape and bytes, read in
    place (no copy of a large design); the fitted methods that must be given the training inputs
    (the Hessian, the bounds) check it."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    digest = hashlib.sha1(repr(X.shape).encode())
    digest.update(memoryview(X).cast("B"))
    return digest.hexdigest()


def map_penalty(prior):
    """``(penalty, lam)`` the bound engine fits for the hierarchy object ``prior``
    (:data:`~sparsebayes.models.priors.penalty.PENALTY_OF`): a ``LaplacePrior`` is ``"l1"`` at the l1
    weight of its marginal, ``λ = √γ`` (eq. 3); a ``GaussianPrior`` is ``"l2"`` at its precision (Sec.
    3.3); a ``FlatPrior`` is no penalty (``lam`` 0). ``ValueError`` for another hierarchy, and for a
    ``LaplacePrior`` whose γ is estimated (``gamma_prior``), which bound optimization does not do."""
    name = hierarchy_name(prior)
    if name not in PENALTY_OF:
        raise ValueError(f"prior {type(prior).__name__} has no bound-optimization penalty; method='map' fits "
                         f"{', '.join(repr(n) for n in PENALTY_OF)}")
    if getattr(prior, "gamma_prior", None) is not None:
        raise ValueError("method='map' (SMLR) fits a fixed lam: a LaplacePrior with gamma_prior (γ estimated) "
                         "needs method='em', or give LaplacePrior(gamma) without gamma_prior")
    penalty = PENALTY_OF[name]
    return penalty, (0.0 if penalty is None else float(prior.lam))


@dataclasses.dataclass(frozen=True)
class MapOptions:
    """The settings of a MAP fit besides the penalty: the basis (``features``, ``kernel_width``,
    ``standardize``), ``lam_relative`` (λ as a fraction of the data's λ_max, :func:`lambda_max`), the
    engine's controls (``solver``, ``tol``, ``max_iter``, ``random_state``) and ``warm_start`` (the
    estimator's: start from its previous weights). :class:`~.smlr.SMLRClassifier` documents each."""

    features: object = "linear"
    kernel_width: object = "scale"
    standardize: bool = True
    lam_relative: bool = False
    solver: str = "auto"
    tol: float = 1e-6
    max_iter: int = 2000
    warm_start: bool = False
    random_state: object = 0

    def check(self, penalty):
        """``self`` after checking each setting (``ValueError`` naming the first out of its domain);
        ``penalty`` for ``lam_relative``, which takes λ relative to SMLR's λ_max (l1 only)."""
        if not isinstance(self.lam_relative, (bool, np.bool_)):
            raise ValueError(f"lam_relative must be True or False, got {self.lam_relative!r}")
        if self.lam_relative and penalty != "l1":
            raise ValueError(f"lam_relative=True takes lam as a fraction of SMLR's λ_max: penalty must be 'l1', "
                             f"got {penalty!r}")
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise ValueError(f"warm_start must be True or False, got {self.warm_start!r}")
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise ValueError(f"standardize must be True or False, got {self.standardize!r}")
        check_number("tol", self.tol, 0.0, strict=True)
        check_max_iter(self.max_iter)
        return self


def map_feature_map(features, kernel_width, standardize):
    """The unfitted map for ``features`` (``None``: raw X), by :func:`make_feature_map`; with
    ``standardize`` the linear and quadratic maps centre and scale the inputs at their training
    mean and SD (kernels and transformers take the inputs as they are)."""
    return make_feature_map(features, kernel_width=kernel_width, allow_none=True,
                            center=bool(standardize), scale=bool(standardize))


class MapBasis(NamedTuple):
    """The fitted feature map (``None``: raw X), the penalized design (its bias column at
    ``bias_scale``) and ``bias_scale``."""

    feature_map: object
    design: np.ndarray
    bias_scale: float


def map_basis(X, feature_map):
    """Fit the unfitted ``feature_map`` on validated ``X``, fix ``bias_scale`` (:func:`bias_scale`) on
    its design, and return the :class:`MapBasis` of the penalized problem."""
    Phi = np.asarray(X if feature_map is None else fit_transform_validated(feature_map, X), dtype=np.float64)
    scale = bias_scale(feature_map, Phi)
    return MapBasis(feature_map, scale_bias_row(Phi.T, scale).T, scale)


class MapFit(NamedTuple):
    """One fitted MAP model: ``basis_weights`` ``W`` (n_basis × m, the reference class's zero column
    last, the bias row in the units of the map's bias column), ``coef`` and ``intercept`` in
    scikit-learn's layout on the raw terms (:func:`sklearn_layout`), the fitted ``prior`` (the penalty at
    ``lam``) and ``likelihood``, the engine's ``n_iter``, ``objective`` and ``optimality_residual`` (of the
    penalized problem), ``converged``, the ``solver`` used, the kept basis (``active``, ``n_active``,
    ``n_nonzero``, ``relevance_indices`` for Gaussian kernels, else ``None``), ``feature_map`` and
    ``bias_scale``."""

    basis_weights: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    prior: object
    likelihood: object
    lam: float
    n_iter: int
    objective: float
    optimality_residual: float
    converged: bool
    rel_change: float
    solver: str
    active: np.ndarray
    n_active: int
    n_nonzero: int
    relevance_indices: np.ndarray | None
    feature_map: object
    bias_scale: float


def fit_map_model(basis, y_enc, classes, penalty, lam, options, *, coef0=None, owner, change=None, check=True):
    """Fit the MAP of eq. 3 (Sec. 3.3 for "l2", Sec. 3.2 for ``None``) on ``basis`` (:class:`MapBasis`)
    and return the :class:`MapFit` record.

    ``lam`` is the number λ (``options.lam_relative``: the fraction of λ_max of these data,
    :func:`lambda_max`); ``coef0`` the basis weights of a previous fit to start from (with the
    reference column; used where its shape is this basis's). The warnings a fit earns are issued under
    ``owner``'s name (:func:`warn_map_fit`); ``change(lam_max)`` is the advice when every input's weight
    is zero (``None``: SMLR's). ``check=False`` skips the warnings (the caller issues them).
    """
    Phi, m = basis.design, len(classes)
    if coef0 is not None:
        coef0 = (scale_bias_row(coef0[:, :-1], 1.0 / basis.bias_scale)
                 if coef0.shape == (Phi.shape[1], m) else None)
    lam = float(lam) * (lambda_max(Phi, y_enc, m) if options.lam_relative else 1.0)
    W, info, solver = fit_coef(Phi, y_enc, m, penalty=penalty, lam=lam, solver=options.solver, tol=options.tol,
                               max_iter=options.max_iter, seed=visitation_seed(options.random_state), coef0=coef0)
    lam = lam if penalty is not None else 0.0
    d = W.shape[0]
    basis_weights = np.hstack([scale_bias_row(W, basis.bias_scale), np.zeros((d, 1))])
    # coef_ and intercept_ in the raw terms (the basis weights themselves unless the inputs are standardized)
    raw = raw_weights(basis.feature_map, basis_weights.T).T
    coef, intercept = sklearn_layout(raw, has_bias_column(basis.feature_map))
    active = np.any(W != 0, axis=1)
    fit = MapFit(basis_weights=basis_weights, coef=coef, intercept=intercept, prior=penalty_prior(penalty, lam),
                 likelihood=MULTINOMIAL, lam=lam, n_iter=int(info.n_iter), objective=float(info.objective),
                 optimality_residual=float(info.residual), converged=bool(info.converged),
                 rel_change=float(info.rel_change), solver=solver, active=active,
                 n_active=int(np.count_nonzero(active)), n_nonzero=int(np.count_nonzero(W)),
                 relevance_indices=(basis.feature_map.centers_for(active)
                                    if isinstance(basis.feature_map, GaussianKernelFeatures) else None),
                 feature_map=basis.feature_map, bias_scale=basis.bias_scale)
    if check:
        warn_map_fit(owner, fit, basis, y_enc, classes, options, penalty, change)
    return fit


def standardized(feature_map):
    """Whether the fitted map standardizes the inputs (``standardize`` with linear or quadratic features)."""
    return bool(getattr(feature_map, "center", False) or getattr(feature_map, "scale", False))


def warn_map_fit(owner, fit, basis, y_enc, classes, options, penalty, change=None):
    """The warnings of a fit, under ``owner``'s name: a broken-down or unconverged engine
    (``ConvergenceWarning``; an l1 fit stopped with an optimality residual above λ), a constant
    classifier (:class:`~sparsebayes.inference._warnings.DegenerateFitWarning`: every input's weight zero
    under l1, or one class predicted for every training point), and separable classes without a
    penalty (the ML estimate does not exist)."""
    if not np.isfinite(fit.objective):
        warn_degenerate(owner, f"the objective is not finite ({fit.objective}): the bound optimization ({fit.solver}) "
                        "broke down numerically and its weights are not the MAP", "standardize X, or try "
                        "solver='newton'", stacklevel=3)
    elif not fit.converged:
        warnings.warn(
            f"bound optimization ({fit.solver}) did not converge in {fit.n_iter} iterations "
            f"(relative change {fit.rel_change:.2e} > tol={options.tol}); "
            "increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    elif penalty == "l1" and fit.optimality_residual > fit.lam:
        # the relative change is small, but the gradient is further than λ from λ∂‖W‖₁
        warnings.warn(
            f"bound optimization ({fit.solver}) stopped on its relative change (tol={options.tol}) with an "
            f"optimality residual of {fit.optimality_residual:.2g}, above lam={fit.lam:.2g}: the weights are "
            "not near the MAP yet (the bound's steps crawl where probabilities saturate, near-separable "
            "classes); solver='newton' reaches it, or lower tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    if change is None:
        def change(top):
            return (("" if standardized(fit.feature_map) else "standardize X (standardize=True, or StandardScaler), or ")
                    + f"pass lam well below λ_max={top:.3g} (lam_relative=True takes lam as a fraction of λ_max, "
                    "e.g. lam=0.01)")
    _warn_if_constant(owner, fit, basis.design, y_enc, classes, penalty, change)
    W = scale_bias_row(fit.basis_weights[:, :-1], 1.0 / fit.bias_scale)
    if penalty is None and separates(W, basis.design, y_enc):
        warnings.warn(
            "the classes are separable in the basis: the maximum-likelihood weights do not exist "
            "(scaling up these weights raises the likelihood without bound), and coef_ is where the "
            "stopping rule halted; use penalty='l1' or 'l2'", ConvergenceWarning, stacklevel=3)


def _warn_if_constant(owner, fit, Phi, y_enc, classes, penalty, change):
    """:class:`DegenerateFitWarning` when every weight of an input is zero (SMLR): the classifier
    then ignores ``X``; or, whatever the penalty and the weights, when it predicts one class for
    every training point of several classes (:func:`_warn_if_one_class`: kernels far wider than
    the inputs' spread, every column the bias's). ``Phi`` is the penalized design (for λ_max);
    ``change(lam_max)`` says what to do."""
    W = fit.basis_weights
    inputs = W[1:] if has_bias_column(fit.feature_map) else W
    if penalty != "l1" or np.any(inputs != 0):
        _warn_if_one_class(owner, fit, Phi, y_enc, classes)
        return
    top, label = lambda_max(Phi, y_enc, len(classes)), np.asarray(classes[np.argmax(W[0])])
    warn_degenerate(owner, (
        f"every weight is zero at lam={fit.lam:.3g}, at or above λ_max={top:.3g} for these data (the λ that "
        f"zeroes every weight; it grows with the units of X): every class gets probability 1/{len(classes)}"
        if fit.n_nonzero == 0 else f"every input's weight is zero at lam={fit.lam:.3g} (λ_max={top:.3g} for "
        f"these data), only the bias is not: a constant classifier that predicts {label.item()!r}"), change(top))


def _warn_if_one_class(owner, fit, Phi, y_enc, classes):
    """:class:`DegenerateFitWarning` when the fit predicts one class for every training point though
    ``y`` holds several. Nonzero weights do not rule it out: Gaussian kernels whose width dwarfs the
    inputs' spread (a fixed ``kernel_width`` on X in tiny units) are all ≈ 1, copies of the bias
    column, and the fit is a constant classifier with accuracy the majority share. The advice
    names the kernel width for kernel maps, the inputs' scale and λ otherwise."""
    if np.unique(y_enc).size < 2:
        return
    W = scale_bias_row(fit.basis_weights[:, :-1], 1.0 / fit.bias_scale)
    predicted = np.argmax(reference_logits(Phi, W), axis=1)
    if np.unique(predicted).size > 1:
        return
    label = np.asarray(classes[predicted[0]]).item()
    share = float(np.mean(y_enc == predicted[0]))
    if isinstance(fit.feature_map, GaussianKernelFeatures):
        change = (f"the Gaussian kernels' width ({fit.feature_map.width_:.3g}, in the units of X) may not suit "
                  "the data's scale: standardize X, or use kernel_width='scale'")
    else:
        change = ("" if standardized(fit.feature_map) else "standardize X, or ") + f"lower lam (lam={fit.lam:.3g})"
    warn_degenerate(owner, f"it predicts one class ({label!r}) for every training point (training accuracy "
                    f"{share:.2f}, the share of that class) though y holds {np.unique(y_enc).size} classes",
                    change, stacklevel=4)
