"""The Gaussian type-II fitting core: one model of sequential type-II maximum likelihood fitted from
(inputs, targets, hierarchy, options).

The estimators are shells over pure functions. :func:`typeii_basis` builds the design of the feature
map on the inputs (the columns of ``X`` themselves for ``features=None``, the linear model of 004
Sec. 4; the factor ``Φ = QΦ̃`` of a Gaussian kernel design of low numerical rank, 004 Sec. 3), and
:func:`fit_typeii_model` fits one target vector on it under one type-II hierarchy
(:mod:`sparsebayes.models.priors.typeii`: ``ARDPrior``, Tipping & Faul 2003; ``ScaledLaplacePrior``,
Helgøy & Li 004 eqs. 5–9, 13, 16–18; ``LaplaceVariancePrior``, Babacan et al. 2010) by the sequential
engine (:func:`~sparsebayes.inference.engines.typeii.fit_model`, 004 Algorithm 1) and returns the
fitted model as a :class:`TypeIIFit` record. The batched entry point of the paper tables
(:func:`~sparsebayes.inference.estimators.typeii_many.fit_many`) runs the same two halves,
:func:`prepare_typeii` and :func:`finish_typeii`, around one engine call for many designs.

With ``fit_intercept=True`` the design columns and ``y`` are centred first and the intercept has a
flat prior, integrated out: the evidence is then that of the centred data, which span N − 1
dimensions (``N − 1`` stands for ``N`` in 004 eqs. 13 and 18; with ``N`` the constant direction,
which holds no signal, would count as data and bias σ̂² low by about 1/N, and a fit with N − 1
columns could drive σ² to 0).

The warnings a degenerate fit earns (the empty model, a fit that never left its start, a missed
signal, a collapsed σ², a cycle, ``max_iter``: :mod:`.typeii_warnings`) are issued here, under the
name of the estimator that asked (``owner``).

A likelihood other than the Gaussian (Bernoulli-logistic, Poisson, negative binomial) has no closed-form
evidence: :func:`fit_typeii_laplace_model` fits one target vector on a :func:`laplace_basis` design by the
engine's Laplace path (:func:`sparsebayes.inference.engines.typeii.fit_model` of a non-Gaussian model: the
evidence replaced by its Laplace approximation at the posterior mode, Tipping 2001 Sec. 4, Tipping & Faul
2003 Sec. 5; the same hierarchies, with ``σ² = 1`` in their terms) and returns a :class:`TypeIILaplaceFit` record; the estimators
that ask for it issue its warnings (their task decides what is degenerate).
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from sparsebayes.models.features import GaussianKernelFeatures, fit_transform_validated, transform_validated
from sparsebayes.models.likelihoods import GaussianLikelihood
from sparsebayes.inference.engines.typeii_moves import TypeIIModel
from sparsebayes.models.priors.typeii import _log_noise_prior

from sparsebayes.inference._validation import check_count, check_max_iter, check_number
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.engines import typeii, typeii_param
from sparsebayes.inference.engines.lowrank import centred_design_factor
from sparsebayes.inference.engines.typeii_design import GramStatistics, use_gram
from sparsebayes.inference.estimators._base import fit_feature_design, make_feature_map
from sparsebayes.inference.estimators.typeii_warnings import warn_after_fit

#: The type-II fits try the factored kernel design only above this many training points: an engine
#: step costs O(M · slots) either way, and the factor saves the adds' O(NM) and forming the design,
#: which is less than the factorization costs at small N; above this size the factored fit is the
#: faster, and its lead grows with N.
LOW_RANK_MIN_N = 300

#: The hyperprior constants a type-II hierarchy may have and their least values: ``λ ~ Gamma(a, b)``
#: with ``a, b ≥ 0`` (004 eq. 8), ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` with ``c ≥ −1`` (flat) and ``d ≥ 0``
#: (004 eq. 9).
HYPERPRIOR_LEAST = {"a": 0.0, "b": 0.0, "c": -1.0, "d": 0.0}


@dataclasses.dataclass(frozen=True)
class TypeIIOptions:
    """The settings of a type-II fit besides the hierarchy: the basis (``features``, ``kernel_width``,
    ``low_rank``: the factored kernel design above :data:`LOW_RANK_MIN_N` points), ``fit_intercept``
    (centre, flat intercept integrated out), σ²'s start or fixed value ``noise_var`` (``None``: 004
    Algorithm 1's ``0.1 var(y)``, or for a hierarchy with σ² fixed 1 % of ``mean(y²)``, FLAP's
    setting), and the engine's controls (``max_iter``, ``tol``, ``noise_every``, ``max_active``)."""

    features: object = None
    kernel_width: object = "scale"
    fit_intercept: bool = True
    noise_var: float | None = None
    max_iter: int = 2000
    tol: float = 1e-5
    noise_every: int = 1
    max_active: int | None = None
    low_rank: bool = True

    def check(self):
        """``self``, or a ``ValueError`` naming the first setting out of its domain."""
        for flag in ("fit_intercept", "low_rank"):
            value = getattr(self, flag)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        check_max_iter(self.max_iter)
        check_number("tol", self.tol, 0.0)
        check_count("noise_every", self.noise_every, 1)
        if self.max_active is not None:
            check_count("max_active", self.max_active, 1)
        return self

    def engine_controls(self):
        """The keyword arguments of the engine's Gaussian fit (:func:`~.typeii.fit_model`)."""
        return dict(max_iter=self.max_iter, tol=self.tol, noise_every=self.noise_every, max_active=self.max_active)


def check_hyperpriors(values):
    """``ValueError`` unless each hyperprior constant in the mapping ``values`` (those of ``a, b, c, d``
    it has) is a number in its family's domain (:data:`HYPERPRIOR_LEAST`)."""
    for name, least in HYPERPRIOR_LEAST.items():
        if name in values:
            check_number(name, values[name], least)


def hierarchy_of(cls, values, **flags):
    """The hierarchy ``cls`` with its constants (those of ``a, b, c, d`` it has) from ``values`` as
    floats and ``flags`` (``lambda_update``, ``noise_update``) where given."""
    names = {f.name for f in dataclasses.fields(cls)} - {"lambda_update", "noise_update"}
    return cls(**{name: float(values[name]) for name in names}).replace(**flags)


@dataclasses.dataclass(frozen=True)
class TypeIIBasis:
    """The fitted feature map (``None``: the columns of ``X``) and its design on the training inputs:
    ``design`` (N × M), or ``factor`` (a :class:`~sparsebayes.inference.engines.lowrank.DesignFactor` of the
    centred kernel design, ``design = None``) with the design's column means ``factor_offset``."""

    feature_map: object
    design: np.ndarray | None
    factor: object = None
    factor_offset: np.ndarray | None = None

    @property
    def rank(self):
        """The rank ``r`` of the factored design, ``None`` for a dense one."""
        return None if self.factor is None else int(self.factor.basis.shape[1])


def typeii_basis(X, options):
    """The :class:`TypeIIBasis` of validated ``X``: the feature map fitted on ``X``; for Gaussian kernel
    features of low numerical rank (``low_rank``, more than :data:`LOW_RANK_MIN_N` points) the factor of
    the (centred) design (:func:`~sparsebayes.inference.engines.lowrank.centred_design_factor`) and no
    design, else the design (the package's maps with one validation of ``X``:
    :func:`~sparsebayes.models.features.fit_transform_validated`)."""
    fm = None if options.features is None else make_feature_map(options.features, kernel_width=options.kernel_width)
    if options.low_rank and isinstance(fm, GaussianKernelFeatures) and X.shape[0] > LOW_RANK_MIN_N:
        found = centred_design_factor(fm.fit(X), X, fit_intercept=options.fit_intercept)
        if found is not None:
            return TypeIIBasis(fm, None, *found)
        return TypeIIBasis(fm, transform_validated(fm, X))
    return TypeIIBasis(fm, X if fm is None else fit_transform_validated(fm, X))


def empty_objective(y_c, n_obs, noise_var, prior):
    """``L`` of the empty model (no basis function, ``C = σ²I``): ``log N(y | 0, σ²I)`` in ``n_obs``
    dimensions, ``−½[n log 2πσ² + yᵀy/σ²]``, plus ``log p(σ²)`` where σ² is a parameter of ``L`` (004
    eq. 13 with no active τ_i; for the RVM this is its ``L`` exactly). With no τ_i the terms in λ,
    ``A log(λ/2) − λΣτ_i/2 + log p(λ)``, have no maximum in λ under the flat ``p(λ)`` (``−log λ`` as
    λ → 0), so BLS and FLAP leave them out: their empty model's ``L`` is its marginal likelihood and
    noise prior, finite, comparable across empty fits, and never NaN."""
    yy = float(y_c @ y_c)
    loglik = -0.5 * (n_obs * np.log(2.0 * np.pi * noise_var) + yy / noise_var)
    if prior.noise_update == "fixed":
        return float(loglik)
    c, d = prior.typeii_noise_prior()
    return float(loglik + _log_noise_prior(noise_var, c, d))


def initial_noise_var(y_c, prior, options):
    """σ²'s start (its value, for a hierarchy with σ² fixed): ``options.noise_var`` when given; else
    FLAP's fixed ``σ² = 0.01 mean(y²)`` (our reading of 004 Sec. 3's "σ⁻² = 0.01‖y‖²",
    :class:`~.typeii_estimators.FLAPRegressor`) for a hierarchy with σ² fixed, and 004 Algorithm 1's
    ``0.1 var(y)`` otherwise; at least ``1e-10 mean(y²)``."""
    if options.noise_var is not None:
        check_number("noise_var", options.noise_var, 0.0, strict=True)
        start = float(options.noise_var)
    elif prior.noise_update == "fixed":
        start = 0.01 * float(np.mean(y_c**2))
    else:
        start = 0.1 * np.var(y_c)
    return max(start, 1e-10 * float(np.mean(y_c**2)))


class TypeIIProblem(NamedTuple):
    """What the engine is handed: the centred design ``Phi`` (``None`` when factored: ``factor``; kept
    beside the :class:`~.typeii_design.GramStatistics` of a design with many more rows than columns,
    fitted from those, :func:`~.typeii_design.use_gram`) and targets ``y``, the evidence's dimension
    ``n_obs``, σ²'s start ``noise_var``, the hierarchy ``prior`` and, for a hierarchy with σ² fixed, that σ²
    (``fixed_noise``, else ``None``); ``basis``, ``y_offset``, ``design_offset`` and ``options``, which
    :func:`finish_typeii` names in the record."""

    Phi: np.ndarray | None
    y: np.ndarray
    n_obs: int
    noise_var: float
    prior: object
    fixed_noise: float | None
    factor: object
    basis: TypeIIBasis
    y_offset: float
    design_offset: np.ndarray
    options: TypeIIOptions


@dataclasses.dataclass(frozen=True)
class TypeIIFit:
    """One fitted type-II model (:func:`fit_typeii_model`).

    ``coef``: the weights over the design columns (0 where pruned), ``active`` the kept columns,
    ``sigma`` the posterior covariance of the kept weights (004 Sec. 2.4), ``intercept`` (``ȳ − φ̄ᵀμ``)
    and ``intercept_var`` (the flat intercept's variance given the weights, ``σ²/N``; 0 without an
    intercept), ``noise_var`` (σ²), ``rate`` (the engine's λ: the rate of the exponential on the prior
    variances, 0 for the empty model; the RVM has none), ``objective`` (004 eq. 13 or the matching
    evidence), ``n_iter``, ``converged`` (no move gains more than ``tol``, after at least one move),
    ``cycled`` (004 Algorithm 1 went round a cycle of moves), ``prior`` (the hierarchy fitted) and
    ``likelihood`` (the Gaussian); ``basis``, ``y_offset``, ``design_offset`` (the centring) and ``options``."""

    coef: np.ndarray
    active: np.ndarray
    sigma: np.ndarray
    intercept: float
    intercept_var: float
    noise_var: float
    rate: float
    objective: float
    n_iter: int
    converged: bool
    cycled: bool
    prior: object
    likelihood: object
    basis: TypeIIBasis
    y_offset: float
    design_offset: np.ndarray
    options: TypeIIOptions


def prepare_typeii(basis, y, prior, options, *, owner):
    """Everything of a fit before the engine: the centred design (or its low-rank factor) and targets,
    σ²'s start (:func:`initial_noise_var`) and the hierarchy, as a :class:`TypeIIProblem`; or, when there
    is nothing to fit, the empty model's :class:`TypeIIFit` (with its warning, under ``owner``'s name)."""
    y_offset = float(y.mean()) if options.fit_intercept else 0.0
    y_c = y - y_offset
    if basis.factor is None:
        Phi = np.asarray(basis.design, dtype=np.float64)
        design_offset = Phi.mean(axis=0) if options.fit_intercept else np.zeros(Phi.shape[1])
        Phi_c = Phi - design_offset
    else:  # the N × M design is never formed
        Phi_c, design_offset = None, basis.factor_offset
    # the flat intercept integrated out: the evidence of the centred data, N − 1 dimensions
    n_obs = y.size - 1 if options.fit_intercept else y.size
    noise0 = initial_noise_var(y_c, prior, options)
    fixed_noise = noise0 if prior.noise_update == "fixed" else None
    problem = TypeIIProblem(Phi_c, y_c, n_obs, noise0, prior, fixed_noise, basis.factor, basis, y_offset,
                            design_offset, options)
    # nothing to explain (a centred constant y is constant up to rounding; without an intercept only
    # y = 0 is), or nothing to explain it with: the empty model (all weights pruned), no engine run
    if np.all(y_c == y_c[0]) and (options.fit_intercept or y_c[0] == 0):
        warn_degenerate(owner, "y is constant: the fit is the empty model, which predicts it",
                        "nothing to fit; check the target")
        return _empty_fit(problem)
    if basis.factor is None and not np.any(Phi_c):
        warn_degenerate(owner, "every design column is zero" + (" once centred" if options.fit_intercept else "")
                        + ": the fit is the empty model", "give features that vary over the data")
        return _empty_fit(problem)
    if basis.factor is None and use_gram(*Phi_c.shape):  # many more rows than columns: the n-independent form
        problem = problem._replace(factor=GramStatistics.of(Phi_c, y_c))
    return problem


def _empty_fit(problem, *, n_iter=0, converged=True, cycled=False):
    """The empty model's record: no weight, ``σ² = y_cᵀy_c / n_obs`` (its maximum-likelihood noise) or
    the hierarchy's fixed σ², and ``L`` its evidence (:func:`empty_objective`)."""
    y_c, m = problem.y, problem.design_offset.size
    fixed = problem.fixed_noise
    noise_var = max(float(y_c @ y_c) / problem.n_obs if fixed is None else fixed, 1e-12)
    return TypeIIFit(
        coef=np.zeros(m), active=np.zeros(m, bool), sigma=np.zeros((0, 0)), intercept=problem.y_offset,
        intercept_var=noise_var / y_c.size if problem.options.fit_intercept else 0.0, noise_var=noise_var,
        rate=0.0, objective=empty_objective(y_c, problem.n_obs, noise_var, problem.prior), n_iter=n_iter,
        converged=converged, cycled=cycled, prior=problem.prior, likelihood=GaussianLikelihood(), basis=problem.basis,
        y_offset=problem.y_offset, design_offset=problem.design_offset, options=problem.options)


def finish_typeii(problem, state, *, owner):
    """Everything of a fit after the engine: the :class:`TypeIIFit` of its final ``state`` and the
    warnings it calls for (:func:`~.typeii_warnings.warn_after_fit`, under ``owner``'s name). ``converged``
    holds when the engine stopped because no move gained more than ``tol`` *after* moving at least once:
    a fit that never left its start (one basis function, chosen by its projection on ``y``, not by the
    evidence) searched nothing and is not reported as converged."""
    host = typeii.host_result(state)  # first: last_basis_pruned then reads the ``var`` it cached
    pruned = bool(typeii.last_basis_pruned(state, problem.prior))
    moved = int(host.n_moves) > 0
    if pruned:
        # the engine keeps its last basis whatever the hierarchy says (typeii.last_basis_pruned): it prunes it
        fit = _empty_fit(problem, n_iter=int(host.n_iter), converged=bool(host.converged) and moved,
                         cycled=bool(host.cycled))
    else:
        fit = _fit_of_state(problem, host, moved)
    warn_after_fit(owner, fit, host, problem.y, problem.Phi)
    return fit


def _fit_of_state(problem, state, moved):
    """The record of the engine's final (host) ``state``: its kept slots in column order."""
    m = problem.design_offset.size
    finite = bool(np.isfinite(state.objective))
    active_slots = np.asarray(state.basis_of_slot) >= 0
    idx = np.asarray(state.basis_of_slot)[active_slots]
    order = np.argsort(idx)
    idx = idx[order]
    coef = np.zeros(m)
    coef[idx] = np.asarray(state.mu)[active_slots][order]
    active = np.zeros(m, bool)
    active[idx] = True
    noise_var = float(state.noise_var)
    return TypeIIFit(
        coef=coef, active=active,
        sigma=typeii.posterior_covariance(state, None),
        intercept=problem.y_offset - float(problem.design_offset @ coef),
        intercept_var=noise_var / problem.y.size if problem.options.fit_intercept else 0.0,
        noise_var=noise_var, rate=float(state.lam), objective=float(state.objective), n_iter=int(state.n_iter),
        converged=bool(state.converged) and moved and finite,  # a non-finite L converged to nothing
        cycled=bool(state.cycled), prior=problem.prior, likelihood=GaussianLikelihood(), basis=problem.basis,
        y_offset=problem.y_offset, design_offset=problem.design_offset, options=problem.options)


def gaussian_model(prior):
    """The engine's model of a Gaussian type-II fit: ``prior`` (a checked hierarchy) and the Gaussian likelihood."""
    return TypeIIModel(prior, GaussianLikelihood())


def fit_typeii_model(basis, y, prior, options, *, owner):
    """Fit the prior variances, σ² and λ (where the hierarchy has one) of ``y`` on ``basis``
    (:func:`typeii_basis`) under the type-II hierarchy ``prior`` by sequential type-II maximum
    likelihood (Tipping & Faul 2003; 004 Algorithm 1) with ``options`` (:class:`TypeIIOptions`,
    checked); returns the :class:`TypeIIFit`. Warnings are issued under ``owner``'s name."""
    problem = prepare_typeii(basis, y, prior, options, owner=owner)
    if isinstance(problem, TypeIIFit):
        return problem
    state = typeii.fit_model(problem.Phi, problem.y, gaussian_model(prior), params=problem.noise_var,
                             factor=problem.factor, n_obs=problem.n_obs, **options.engine_controls())
    return finish_typeii(problem, state, owner=owner)


@dataclasses.dataclass(frozen=True)
class LaplaceOptions:
    """The settings of a Laplace-path type-II fit besides the hierarchy and the likelihood: the basis
    (``features``, ``kernel_width``, ``bias``: a constant column, with which the linear and quadratic maps act
    on the inputs standardized at their training mean and sd) and the engine's controls (``max_iter``
    steps, ``tol`` the smallest gain in the approximate log evidence that counts as a move)."""

    features: object = "linear"
    kernel_width: object = "scale"
    bias: bool = True
    max_iter: int = 1000
    tol: float = 1e-6

    def check(self):
        """``self``, or a ``ValueError`` naming the first setting out of its domain."""
        if not isinstance(self.bias, (bool, np.bool_)):
            raise ValueError(f"bias must be True or False, got {self.bias!r}")
        check_max_iter(self.max_iter)
        check_number("tol", self.tol, 0.0)
        return self


def laplace_basis(X, options):
    """The :class:`TypeIIBasis` of validated ``X`` for the Laplace path: the feature map of ``options``
    fitted on ``X`` and its design (with ``bias``, linear and quadratic terms of the inputs centred and
    scaled at their training mean and sd: the bias weight is the value at the mean, so the fit does not
    depend on where the origin of ``x`` lies)."""
    fm, Phi = fit_feature_design(X, options.features, kernel_width=options.kernel_width, bias=options.bias,
                                 center=bool(options.bias), scale=bool(options.bias))
    return TypeIIBasis(fm, Phi)


@dataclasses.dataclass(frozen=True)
class TypeIILaplaceFit:
    """One fitted Laplace-path type-II model (:func:`fit_typeii_laplace_model`).

    ``coef``: the posterior mode over the design columns (0 where pruned), ``prior_var`` the prior
    variances ``1/α_i`` (0 where pruned) and ``active`` where they are positive, ``covariance`` the
    Laplace posterior covariance ``Σ = (ΦᵀBΦ + A)⁻¹`` over the active columns (Tipping 2001, eqs. 26–27),
    ``rate`` the fitted λ on the variances (a hierarchy with a rate; the RVM's has none), ``likelihood_param``
    the likelihood's own fitted parameter (the negative binomial's dispersion; ``None`` without one),
    ``objective`` the Laplace-approximate log evidence plus the hierarchy's terms, ``n_iter``, ``stalled``
    (stopped on a cycle of moves, best state kept), ``at_start`` (no move raised the evidence from the
    start), ``converged`` (no move gains more than ``tol``, after at least one move), the ``prior`` and
    ``likelihood`` fitted, the ``basis`` and ``options``."""

    coef: np.ndarray
    prior_var: np.ndarray
    active: np.ndarray
    covariance: np.ndarray
    rate: float
    likelihood_param: float | None
    objective: float
    n_iter: int
    stalled: bool
    at_start: bool
    converged: bool
    prior: object
    likelihood: object
    basis: TypeIIBasis
    options: LaplaceOptions


def fit_typeii_laplace_model(basis, t, prior, likelihood, options):
    """Fit the prior variances (and λ, and the likelihood's own parameter, where they exist) of targets
    ``t`` on ``basis`` (:func:`laplace_basis`) under the type-II hierarchy ``prior`` and ``likelihood`` (an
    object with the engine's Laplace pieces) by sequential type-II maximum likelihood with the Laplace
    approximation at the mode (Tipping & Faul 2003, Sec. 5), with ``options`` (:class:`LaplaceOptions`,
    checked); returns the :class:`TypeIILaplaceFit`. Columns that are zero on every row are not
    candidates."""
    Phi = basis.design
    mask = np.any(Phi != 0, axis=0)
    model = TypeIIModel(prior, likelihood)
    state = typeii.fit_model(Phi, t, model, basis_mask=mask, max_iter=int(options.max_iter), tol=options.tol)
    at_start = bool(typeii.stopped_at_start(state))
    var = np.asarray(state.var)
    return TypeIILaplaceFit(
        coef=np.asarray(typeii.coefficients(state, Phi.shape[1])), prior_var=var, active=var > 0,
        covariance=np.asarray(typeii.posterior_covariance(state, model, Phi, t)),
        rate=float(state.lam),
        likelihood_param=float(state.params) if typeii_param.has_own_parameter(likelihood) else None,
        objective=float(state.objective), n_iter=int(state.n_iter), stalled=bool(state.stalled), at_start=at_start,
        converged=bool(state.converged) and not at_start, prior=prior, likelihood=likelihood, basis=basis,
        options=options)
