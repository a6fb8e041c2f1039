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

The estimator is :class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` with
``method="type2"`` fixed: it fits by the type-II fitting core's Laplace path
(:func:`~sparsebayes.inference.estimators.typeii_fit.fit_typeii_laplace_model`) and answers through
:class:`~sparsebayes.inference.estimators.typeii_laplace_fitted.TypeIILaplaceRegressorMethods`.
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.sparse_estimators import SparseRegressor


class PoissonRVMRegressor(SparseRegressor):
    """Poisson relevance vector machine: sparse count regression by sequential type-II ML (Laplace).

    ``E[t | x] = exp(wᵀh(x))``, ``w_i ~ N(0, α_i⁻¹)``, flat hyperpriors (Tipping 2001; Tipping &
    Faul 2003); engine :mod:`sparsebayes.inference.engines.typeii_laplace` with
    :class:`~sparsebayes.models.likelihoods.PoissonLikelihood`. With ``prior=`` another type-II
    hierarchy and ``likelihood="negative_binomial"`` the same engine fits a Poisson FLAP or BLS, or
    an over-dispersed RVM (``Var = μ + μ²/r``, ``r`` estimated). It is ``SparseRegressor(method="type2",
    likelihood=..., prior=...)`` with ``method`` fixed and the settings ``bias``, ``max_iter``, ``tol`` as
    parameters (the generic estimator's ``options``).

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

    #: The generic estimator's arguments this paper class fixes (class attributes, not parameters).
    method = "type2"
    options = None

    def __init__(self, *, prior="ard", likelihood="poisson", features="linear", kernel_width="scale", bias=True,
                 max_iter=1000, tol=1e-6):
        set_init_params(self, locals())

    def _typeii_route(self):
        """Never the Gaussian core: the route is the Laplace path, whose likelihood check names a Gaussian
        ``likelihood`` as one this estimator does not fit."""
        return False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags
