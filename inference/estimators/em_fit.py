"""The EM fitting core: one model of Figueiredo's EM fitted from (design, targets, prior, likelihood, options).

The estimators are shells over two pure functions. :func:`em_basis` builds the design of the
feature map on the inputs (standardized as :mod:`sparsebayes.inference.estimators.adaptive` says,
factored when a Gaussian kernel design has low rank), and :func:`fit_em_model` runs EM on it for
one target vector (a regression, or one binary classifier of a one-vs-all fit) under one hierarchy
and one likelihood (:func:`~sparsebayes.inference.engines.em_slices.fit_em`: 000 Sec. 3, eqs. 12–16; 002
Secs. 2–3) and returns the fitted model as an :class:`EMFit` record: the weights on the design's
columns, the iterations, the objective, the fitted hierarchy and likelihood parameter, and the
estimator's own approximation of the posterior at the fit (the Gaussian conditional at the final
E-step for the Gaussian likelihood, the Laplace approximation otherwise). What is a user's
concern (validation, one-vs-rest, the bias in the raw terms, the attribute names) is the estimator's
(:mod:`sparsebayes.inference.estimators.sparse_estimators`).

The warnings a degenerate fit earns (dependent columns, every weight pruned, σ² at its floor, EM
stopped at ``max_iter``) are issued here, under the name of the estimator that asked (``owner``).
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.models.features import GaussianKernelFeatures, scale_width
from sparsebayes.models.likelihoods import conjugate_noise
from sparsebayes.models.priors import hierarchy_name

from sparsebayes.inference.estimators._base import (
    fit_design_or_factor,
    fit_feature_design,
    has_bias_column,
    raw_weights,
    standardization,
)
from sparsebayes.inference._validation import check_max_iter, check_number
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.engines.em_slices import EMDesign, fit_em
from sparsebayes.inference.engines.em_covariance import conditional_covariance, laplace_covariance
from sparsebayes.inference.engines.em_working_set import fit_em_working_set, large_design, use_working_set


@dataclasses.dataclass(frozen=True)
class EMOptions:
    """The settings of an EM fit besides the model (hierarchy, likelihood): the basis ``features``
    (``kernel_width``, ``bias``, ``standardize``: :mod:`~sparsebayes.inference.estimators.adaptive`),
    the likelihood's own parameter fixed (``noise_var``, ``None``: estimated, 000 eq. 12), the stopping
    rule (``tol``, ``max_iter``: 002 Step 4) and ``low_rank`` (EM on the factor of a low-rank kernel
    design). The defaults are :class:`~sparsebayes.inference.estimators.adaptive.AdaptiveSparseRegressor`'s."""

    features: object = "linear"
    kernel_width: object = "scale"
    bias: bool = True
    standardize: bool = True
    noise_var: float | None = None
    tol: float = 1e-3
    max_iter: int = 1000
    low_rank: bool = True

    def check(self):
        """``self``, or a ``ValueError`` naming the first setting out of its domain."""
        for flag in ("bias", "low_rank", "standardize"):
            value = getattr(self, flag)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        check_number("tol", self.tol, 0.0, strict=True)
        check_max_iter(self.max_iter)
        if self.noise_var is not None:
            check_number("noise_var (None: estimated)", self.noise_var, 0.0, strict=True)
        return self


@dataclasses.dataclass(frozen=True)
class EMBasis:
    """The fitted feature map and its design on the training inputs: ``H`` (n × p), or ``factor`` (the
    :class:`~sparsebayes.inference.engines.lowrank.DesignFactor` ``H = QH̃`` of a low-rank kernel design,
    ``H = None``); ``shared``, an :class:`~sparsebayes.inference.engines.em_slices.EMDesign` that several fits on
    the one design share (``HᵀH`` and the ridge start's factor, the one-vs-all classifiers of 002 Sec. 4.2)."""

    feature_map: object
    H: np.ndarray | None
    factor: object = None
    shared: EMDesign | None = None

    @property
    def rank(self):
        """The rank ``r`` of the factored design, ``None`` for a dense one."""
        return None if self.factor is None else int(self.factor.basis.shape[1])

    def share(self, n_obs):
        """This basis with one :class:`EMDesign` for every target fitted on it (``n_obs`` rows)."""
        return dataclasses.replace(self, shared=EMDesign(self.H, n_obs, self.factor))

    def active_columns(self, active, *, dense):
        """The design's columns ``active``: of ``H``, or of the factor (``H̃``, whose Gram matrix is
        ``HᵀH``, unless ``dense``: then ``QH̃``, the columns themselves)."""
        if self.factor is None:
            return self.H[:, active]
        return self.factor.basis @ self.factor.design[:, active] if dense else self.factor.design[:, active]


@dataclasses.dataclass(frozen=True)
class EMFit:
    """One fitted EM model (:func:`fit_em_model`).

    ``beta``: the weights on the basis' columns (the bias column's included); ``objective``: the
    log posterior EM climbs, up to a constant; ``n_iter``, ``converged``; ``prior``: the hierarchy at the
    fit (its shared hyperparameters at their estimates where estimated); ``likelihood`` and
    ``likelihood_param`` (σ², a Student-t's squared scale, a dispersion; ``None`` without one);
    ``covariance``: the covariance of the nonzero weights of the estimator's approximation at the fit
    given the final E-step's variances (:func:`~sparsebayes.inference.engines.em_covariance.conditional_covariance`
    for a likelihood that states ``conjugate_noise``, the Gaussian,
    :func:`~sparsebayes.inference.engines.em_covariance.laplace_covariance` otherwise); ``active``: the
    kept basis functions, the bias excluded."""

    beta: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    prior: object
    likelihood: object
    likelihood_param: float | None
    covariance: np.ndarray
    active: np.ndarray


def em_basis(X, prior, options, *, owner):
    """The :class:`EMBasis` of ``options.features`` on ``X``: linear and quadratic inputs standardized
    by :func:`~sparsebayes.inference.estimators._base.standardization` under ``prior`` (a hierarchy
    object, or a list of one kind), a low-rank kernel design factored with ``options.low_rank``. A
    linear or quadratic design with dependent columns earns a ``DegenerateFitWarning`` (checked here
    unless it is large: then on the kept columns, :func:`fit_em_model`)."""
    prior = prior[0] if isinstance(prior, list) else prior
    kw = dict(kernel_width=options.kernel_width, bias=options.bias,
              **standardization(options.standardize, options.bias, prior))
    if options.low_rank:
        fm, H, factor = fit_design_or_factor(X, options.features, **kw)
    else:
        (fm, H), factor = fit_feature_design(X, options.features, **kw), None
    if H is not None and not isinstance(fm, GaussianKernelFeatures) and not large_design(H):
        warn_if_collinear(owner, H)
    return EMBasis(fm, H, factor)


def check_targets(likelihood, y):
    """Counts for a likelihood of counts (``support = "counts"``: Poisson, negative binomial), else a
    ``ValueError`` naming the likelihood and a bad value."""
    if getattr(likelihood, "support", "real") == "counts":
        bad = (y < 0) | (y != np.round(y))
        if np.any(bad):
            raise ValueError(f"likelihood {likelihood.name!r} models counts (nonnegative integers); y has "
                             f"{int(np.sum(bad))} other values, e.g. {y[bad][0]!r}")


def initial_target(likelihood, y):
    """What EM's ridge start is fitted to: ``y`` for a likelihood that states ``conjugate_noise``
    (``y ~ N(η, σ²)``, the Gaussian: ``y`` is a noisy ``η``); the ±1 coding of binary labels
    (002 Step 2 takes "the labels as data", {0, 1}, but the symmetric coding did better on every table
    here: Pima 69 vs 76 errors, Ripley 0.103 vs 0.104, glass 32.2 vs 33.6 %); ``None`` otherwise (the
    likelihood's own ``init_target``, e.g. the log counts)."""
    if getattr(likelihood, "support", "real") == "binary":
        return 2.0 * y - 1.0
    return y if conjugate_noise(likelihood) else None


def fit_em_model(basis, y, prior, likelihood, options, *, owner, which=""):
    """Fit one EM model of ``y`` on ``basis`` (:class:`EMBasis`) under the hierarchy ``prior`` and
    ``likelihood`` with ``options`` (:class:`EMOptions`, checked); returns its :class:`EMFit`.

    On a large dense design under a likelihood that states ``conjugate_noise`` (the Gaussian) EM runs
    on the working set of
    :func:`~sparsebayes.inference.engines.em_working_set.fit_em_working_set`, which never forms
    ``HᵀH``; on ``basis.shared`` where a one-vs-all fit shares one. ``which`` names the one-vs-all
    classifier in the warnings (empty for a single fit); ``owner`` is the estimator (or its name)
    that leads them."""
    fm, H, factor = basis.feature_map, basis.H, basis.factor
    gaussian = conjugate_noise(likelihood)  # N(η, σ²), σ² flat: its noise floor, the exact conditional covariance
    linear = basis.shared is None and H is not None and not isinstance(fm, GaussianKernelFeatures)
    kw = dict(noise_var=options.noise_var, tol=options.tol, max_iter=options.max_iter)
    if basis.shared is not None:
        res = fit_em(basis.shared, y, prior, likelihood, y_init=initial_target(likelihood, y), **kw)
    elif H is not None and use_working_set(H, likelihood, factor):
        res = fit_em_working_set(H, y, prior, likelihood, **kw)
        if linear:
            warn_if_collinear(owner, H[:, np.flatnonzero(res.beta)], "the kept columns")
    else:
        if linear and large_design(H):
            warn_if_collinear(owner, H)
        res = fit_em(H, y, prior, likelihood, y_init=initial_target(likelihood, y), factor=factor, **kw)
    if not res.converged:
        warnings.warn(
            f"EM stopped at max_iter={options.max_iter} before the relative change fell below "
            f"tol={options.tol}; increase max_iter", ConvergenceWarning, stacklevel=3)
    warn_if_constant(owner, res.beta, fm, likelihood, res.prior, which)
    param = None if likelihood.param_name is None else res.noise_var
    if gaussian and options.noise_var is None and res.noise_var <= res.noise_floor:
        warnings.warn(
            f"the estimated noise variance fell to its floor ({res.noise_var:.3g}): the fit interpolates "
            f"the training data with {np.count_nonzero(res.beta)} basis functions for {y.size} points, where "
            "the flat prior on sigma^2 has no maximum (Figueiredo 2003, eq. 6); set noise_var, or use fewer basis "
            "functions than points", UserWarning, stacklevel=3)
    active = np.flatnonzero(res.beta)
    if gaussian:  # HᵀH = H̃ᵀH̃
        H_active = basis.active_columns(active, dense=False)
        cov = conditional_covariance(H_active.T @ H_active, res.scale[active], res.noise_var)
    else:
        cov = laplace_covariance(basis.active_columns(active, dense=True), y, res.beta[active], res.scale[active],
                                 likelihood, *(() if param is None else (param,)))
    kept = res.beta[int(has_bias_column(fm)):] != 0
    return EMFit(res.beta, res.objective, res.n_iter, bool(res.converged), res.prior, likelihood, param, cov, kept)


def split_bias(feature_map, beta):
    """``(coef, intercept)`` in the raw terms (:func:`~sparsebayes.inference.estimators._base.raw_weights`)
    of ``beta`` (one row per model) on the fitted ``feature_map``'s columns: ``coef`` (k, n_basis),
    ``intercept`` (k,), zero without a bias column."""
    beta = np.atleast_2d(raw_weights(feature_map, beta))
    if has_bias_column(feature_map):
        return beta[:, 1:], beta[:, 0]
    return beta, np.zeros(beta.shape[0])


def kernel_width_hint(fm):
    """What to change about a fitted Gaussian kernel map's width when EM kept none of its kernels:
    kernels much narrower than the data's spread each fit one point, much wider ones are all
    nearly the bias; the ``"scale"`` width (:func:`~sparsebayes.models.features.scale_width`) is
    the yardstick."""
    scale = scale_width(fm.centers_)
    if isinstance(fm.width, str):
        return f"the Gaussian kernels have the 'scale' width {scale:.3g}: try a smaller kernel_width"
    side = "narrower" if fm.width_ < scale else "wider"
    return (f"the Gaussian kernels' width {fm.width_:.3g} is {side} than the data's 'scale' width {scale:.3g}: "
            "use kernel_width='scale', or standardize X")


def warn_if_collinear(owner, H, what="the design", stacklevel=5):
    """``DegenerateFitWarning`` when a linear or quadratic design (not wider than it is tall) has
    numerically dependent columns (duplicated inputs, an exact linear relation): the sparse MAP is
    then not unique (the Jeffreys and Laplace penalties are flat along the dependence), so which
    of the dependent columns EM keeps, or how it splits the weight between them, depends on the
    start and on rounding. Kernel designs are left out: their columns are near-dependent by design.
    ``what`` names the columns checked (the working-set path checks the kept ones)."""
    H = H[:, np.any(H != H[:1], axis=0) | np.all(H != 0, axis=0)]  # constant columns beside the bias are fitted as zero
    n, p = H.shape
    if p > n or p == 0:
        return
    sv = np.linalg.svd(H, compute_uv=False)
    rank = int(np.sum(sv > sv[0] * max(n, p) * np.finfo(float).eps * 1e3))
    if rank < p:
        warn_degenerate(owner, f"{what} has {p} columns but rank {rank} (duplicated or collinear inputs): "
                        "the sparse estimate is not unique, and which of the dependent columns is kept depends on "
                        "rounding", "drop or combine the dependent inputs", stacklevel=stacklevel)


def warn_if_constant(owner, beta, fm, likelihood, prior, which):
    """:func:`~sparsebayes.inference._warnings.warn_degenerate` when EM pruned every basis weight, with
    or without the bias: the fit is then one number (a prediction, or a class) whatever ``x``.
    ``which`` names the one-vs-all classifier (empty for a single fit)."""
    has_bias = has_bias_column(fm)
    if np.any(beta[int(has_bias):]):
        return
    classifier = getattr(likelihood, "support", "real") in ("binary", "categorical")
    subject = ("the classifier" if classifier else "the fit") + which
    if np.any(beta):
        what = (f"EM pruned every weight but the bias: {subject} predicts "
                f"{'one class' if classifier else 'one value'} everywhere")
    else:
        what = (f"EM pruned every weight{', the bias included' if has_bias else ''}: {subject} predicts "
                f"{'probability 1/2' if classifier else '0'} everywhere")
    target = "the labels" if classifier else "y"
    change = ("the Laplace penalty sqrt(gamma)·Σ|β_i| depends on the units of y and of the features: "
              "standardize them or lower gamma" if hierarchy_name(prior) == "laplace" else
              f"no basis function explained enough of {target} to be kept")
    if isinstance(fm, GaussianKernelFeatures):
        change += "; " + kernel_width_hint(fm)
    warn_degenerate(owner, what, change, stacklevel=4)
