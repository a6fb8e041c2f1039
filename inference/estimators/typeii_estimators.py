"""The papers' type-II regressors: BLS, RVM, FLAP / FLAPσ.

All three are :class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` with
``method="type2"`` and the hierarchy fixed (:mod:`sparsebayes.models.priors.typeii`:
``ARDPrior``, ``ScaledLaplacePrior``, ``LaplaceVariancePrior``), its constants and flags their
parameters; they fit by the type-II fitting core
(:func:`~sparsebayes.inference.estimators.typeii_fit.fit_typeii_model`) and answer through
:class:`~sparsebayes.inference.estimators.typeii_fitted.TypeIIRegressorMethods`. The design is ``features`` applied to ``X``
(``None``: the columns of ``X`` themselves, the linear BLS of 004 Sec. 4; a transformer such as
``GaussianKernelFeatures.from_helgoy_li(r)``: kernel regression, 004 Sec. 3). With
``fit_intercept=True`` the design columns and ``y`` are centred first and the intercept has a
flat prior, integrated out: the evidence is then that of the centred data, which span N − 1
dimensions (``N − 1`` stands for ``N`` in 004 eqs. 13 and 18; with ``N`` the constant
direction, which holds no signal, would count as data and bias σ̂² low by about 1/N, and a fit
with N − 1 columns could drive σ² to 0). For the kernel models of 004 Sec. 3 use
``fit_intercept=False`` and the bias column of the feature map (``w_0`` in 004 eq. 1), as the
paper does.

Fitted attributes: ``coef_`` (weights over the design columns, 0 where pruned), ``intercept_``,
``active_`` (mask of the kept columns), ``relevance_indices_`` (training points of the kept
kernel columns; for a plain design the kept column indices), ``sigma_`` (posterior
covariance of the kept weights), ``noise_var_``, ``intercept_var_`` (with ``fit_intercept``,
the flat-prior intercept's variance given the weights, ``σ²/N``; else 0), ``gamma_`` and
``lam_`` (BLS and FLAP; the RVM has no such hyperparameter), ``prior_`` (the hierarchy object
fitted, as ``SparseRegressor(method="type2", prior=...)`` takes it: its hyperprior constants and
flags; the estimated hyperparameters are ``gamma_`` and ``noise_var_``), ``likelihood_`` (the
:class:`~sparsebayes.models.likelihoods.GaussianLikelihood`),
``objective_`` (004 eq. 13 or the matching evidence), ``n_iter_``, ``converged_`` (no move gains
more than ``tol``, reached after at least one move: a fit that never left its start is not
converged), ``cycled_`` (004 Algorithm 1 went round a cycle of moves; the fit stopped at the
cycle's best ``L``, see :func:`sparsebayes.inference.engines.typeii_moves.note_cycle`).

λ and γ mean one thing across the package (:class:`~sparsebayes.models.priors.LaplacePrior`):
``gamma_`` is the rate of the exponential on the prior variances, what these papers call λ
(FLAP's ``γ_i ~ Exp(λ/2)``, Babacan et al. 2010; BLS's ``τ_i ~ Exp(λ/2)``, 004 eq. 7), EM's γ
and Park & Casella's λ²; ``lam_ = √gamma_`` is the l1 weight of the Laplace marginal
(``−log p(β) = λ‖β‖₁``, per unit σ for BLS), SMLR's λ and the Bayesian Lasso's λ.

Degenerate fits (the empty model, a fit that never left its start) warn with what to change
(:mod:`.typeii_warnings`).

The Bernoulli RVM, :class:`~sparsebayes.inference.estimators.rvm_classifier.RVMClassifier`, is re-exported here.
"""
from __future__ import annotations

import numpy as np

from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.sparse_estimators import SparseRegressor
from sparsebayes.inference.estimators.typeii_fit import TypeIIOptions, check_hyperpriors, hierarchy_of
from sparsebayes.inference._validation import FLAGS


class _TypeIIPaperRegressor(SparseRegressor):
    """A paper's type-II regressor: :class:`SparseRegressor` with ``method="type2"`` and the hierarchy
    ``_hierarchy`` fixed, whose constants (those of ``a, b, c, d`` it has) and flags are parameters of
    the same names (:meth:`_typeii_model` reads them)."""

    #: The type-II hierarchy class fitted; its hyperprior constants are parameters of the same names.
    _hierarchy = None
    #: The parameters that a hierarchy object holds (``SparseRegressor(method="type2", prior=<object>)``
    #: takes the others in ``options``).
    _hierarchy_params = ()
    #: The hierarchy's flags (``lambda_update``, ``noise_update``) that the parameters carry; a hierarchy
    #: object with another flag off its default is not this estimator's model.
    _carried_flags = ("lambda_update", "noise_update")
    #: The generic estimator's arguments this paper class fixes (class attributes, not parameters).
    method = "type2"
    likelihood = "gaussian"
    options = None

    @property
    def prior(self):
        """The hierarchy fixed, ``_hierarchy`` at its defaults (the parameters carry its constants)."""
        return self._hierarchy()

    def _typeii_setup(self):
        """(hierarchy, :class:`~.typeii_fit.TypeIIOptions`) of this estimator's parameters."""
        return self._typeii_model(self.get_params(deep=False))

    @classmethod
    def _typeii_model(cls, values):
        """(hierarchy, :class:`~.typeii_fit.TypeIIOptions`) of the parameter ``values`` (a mapping with
        every parameter of ``cls``), each checked: ``ValueError`` naming the first one out of its domain."""
        for flag in FLAGS:
            if flag in values and not isinstance(values[flag], (bool, np.bool_)):
                raise ValueError(f"{flag} must be True or False, got {values[flag]!r}")
        options = TypeIIOptions(**{k: values[k] for k in ("features", "kernel_width", "fit_intercept", "max_iter", "tol",
                                                          "noise_every", "max_active", "low_rank")},
                                noise_var=values.get("noise_var")).check()
        check_hyperpriors(values)
        return cls._hierarchy_of(values), options

    @classmethod
    def _hierarchy_of(cls, values):
        """The hierarchy of the parameter ``values``: its constants, its flags at their defaults."""
        return hierarchy_of(cls._hierarchy, values)


class RVMRegressor(_TypeIIPaperRegressor):
    """Relevance vector machine by Tipping & Faul's (2003) sequential type-II maximum likelihood.

    ``w_i ~ N(0, α_i⁻¹)`` with flat hyperpriors; ``α_i = s_i²/(q_i² − s_i)`` when
    ``q_i² > s_i`` else pruned; σ² re-estimated (flat prior on σ² by default, ``c = -1``).

    Parameters
    ----------
    features : None, {"linear", "quadratic", "kernel"} or transformer
        Feature map applied to ``X``. ``None``: ``X`` itself; a string: the feature maps of
        :class:`AdaptiveSparseRegressor` and :class:`RVMClassifier`, with a bias column (centred
        away, and so never selected, when ``fit_intercept=True``); a transformer such as
        ``GaussianKernelFeatures.from_helgoy_li(r)`` is cloned and fitted.
    kernel_width : float or "scale", default="scale"
        Width ``h`` of ``features="kernel"`` (``exp(−‖x − x'‖²/(2h²))``); unused otherwise.
        ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)`` (scikit-learn's ``SVC(gamma="scale")`` on centred columns);
        ``feature_map_.width_`` holds the one in use.
    fit_intercept : bool
        Centre the design and ``y`` (unpenalised intercept).
    c, d : float
        Noise prior ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``.
    max_iter, tol, noise_every, max_active :
        Engine controls (steps, smallest gain, σ² schedule, cap on the active set). σ² is
        re-estimated every ``noise_every`` steps (5, as Tipping's SparseBayes does by default)
        and always before the fit may stop.
    low_rank : bool
        With more than ``LOW_RANK_MIN_N`` (300) training points and ``GaussianKernelFeatures``
        whose kernel matrix has numerical rank ``r ≤ N/4`` (pivoted Cholesky to 1e-14,
        :mod:`sparsebayes.inference.engines.lowrank`), run the engine on the factored design
        ``Φ = QΦ̃`` (:func:`~sparsebayes.inference.engines.typeii_design.fit_design`): the same steps,
        an add costs ``O(rM)`` instead of ``O(NM)``, and the N × M design is never formed. ``design_rank_`` is ``r`` then,
        ``None`` otherwise.
    """

    _hierarchy = ARDPrior
    _hierarchy_params = ("c", "d")
    _carried_flags = ()

    def __init__(self, *, features=None, kernel_width="scale", fit_intercept=True, c=-1.0, d=0.0, max_iter=2000,
                 tol=1e-9, noise_every=5, max_active=None, low_rank=True):
        set_init_params(self, locals())


class BLSRegressor(_TypeIIPaperRegressor):
    """Bayesian Lasso Sparse model (Helgøy & Li, 004) by sequential type-II maximum likelihood.

    004 eqs. 5–9 with ``τ_i`` by eq. 16 (pruned when ``q_i² − s_i ≤ λσ⁻²``), ``λ`` by eq. 17
    and ``σ²`` by eq. 18; ``a = b = c = d = 0`` (flat hyperpriors) as in the paper.

    Parameters
    ----------
    features, kernel_width, fit_intercept, max_iter, tol, noise_every, max_active, low_rank :
        As for :class:`RVMRegressor`.
    a, b : float
        ``λ ~ Gamma(a, b)`` (004 eq. 8).
    c, d : float
        ``σ² ~ InvGamma(c, d)`` (004 eq. 9).
    lambda_update : {"algorithm1", "profiled"}
        ``"algorithm1"`` (default): 004 Algorithm 1 — each move takes eq. 16 at the current λ
        and λ follows by eq. 17 afterwards. ``"profiled"``: every move is scored with λ
        re-maximised, an exact ascent of eq. 13 (with ``A`` active τ_i counted, see
        :mod:`sparsebayes.models.priors.typeii`); it charges each added basis the change of
        ``A log(λ/2)`` and so ends sparser than the paper's algorithm.
    noise_update : {"eq18", "variances-fixed"}
        ``"eq18"`` (default): σ² by 004 eq. 18 with the τ_i held fixed. ``"variances-fixed"``:
        Tipping & Faul's σ² update with the prior variances σ²τ_i held fixed, as the RVM's; on
        kernel bases it keeps more kernels and gives 004's bump table more closely (see
        :class:`sparsebayes.models.priors.typeii.ScaledLaplacePrior`).
    tol : float
        Smallest gain of a move (nats); 1e-5 by default, since Algorithm 1 can end in a limit
        cycle of moves gaining < 1e-6 nats at the current λ.
    """

    _hierarchy = ScaledLaplacePrior
    _hierarchy_params = ("a", "b", "c", "d", "lambda_update", "noise_update")

    def __init__(self, *, features=None, kernel_width="scale", fit_intercept=True, a=0.0, b=0.0, c=0.0, d=0.0,
                 lambda_update="algorithm1", noise_update="eq18", max_iter=2000, tol=1e-5, noise_every=1,
                 max_active=None, low_rank=True):
        set_init_params(self, locals())

    @classmethod
    def _hierarchy_of(cls, values):
        return hierarchy_of(cls._hierarchy, values, lambda_update=values["lambda_update"],
                            noise_update=values["noise_update"])


class FLAPRegressor(_TypeIIPaperRegressor):
    """Fast Laplace (Babacan et al. 2010): ``w_i ~ N(0, γ_i)``, ``γ_i ~ Exp(λ/2)``.

    Parameters
    ----------
    estimate_noise : bool
        ``False``: FLAP with σ² fixed (``noise_var``, or by default 1 % of the mean square of
        the targets, our reading of 004 Sec. 3's "σ⁻² = 0.01‖y‖²", see below); ``True``:
        FLAPσ, σ² re-estimated with prior ``InvGamma(c, d)`` (004 Sec. 3).
    noise_var : float or None
        Fixed σ² for ``estimate_noise=False`` (initial value otherwise).
    a, b : float
        ``λ ~ Gamma(a, b)``.
    lambda_update : {"algorithm1", "profiled"} or None
        As for :class:`BLSRegressor`; ``None`` (default): Algorithm 1 for FLAPσ, the profiled
        ascent for FLAP with fixed noise (see :mod:`sparsebayes.models.priors.typeii`).
    tol : float
        Smallest gain of a move (nats), 1e-5 by default as for :class:`BLSRegressor`.
    features, kernel_width, fit_intercept, max_iter, noise_every, max_active, low_rank :
        As for :class:`RVMRegressor`.

    Notes
    -----
    004 writes the fixed noise as ``σ⁻² = 0.01‖y‖²``, which is not dimensionally a
    precision. We read it as ``σ² = 0.01 ‖y‖²/N`` (1 % of the mean square, the convention of
    the Bayesian compressive sensing codes Babacan et al. build on). ``predict(X, return_std=True)``
    with that default fixed noise warns that its sd is not calibrated.

    With its noise fixed, FLAP's fit depends on the units of ``y`` and ``X``: ``γ_i`` has the
    units of ``w_i²``, and the profiled ascent compares models of different sizes through
    ``A log λ`` (measured: ``y × 1e4`` kept 2 weights where ``y`` kept 4). FLAPσ, BLS (whose
    ``τ_i = v_i/σ²`` is unit-free) and the RVM do not (``test_fits_do_not_depend_on_the_units_of_y_or_x``).
    """

    _hierarchy = LaplaceVariancePrior
    _hierarchy_params = ("estimate_noise", "a", "b", "c", "d", "lambda_update")

    def __init__(self, *, features=None, kernel_width="scale", fit_intercept=True, estimate_noise=False,
                 noise_var=None, a=0.0, b=0.0, c=0.0, d=0.0, lambda_update=None, max_iter=2000, tol=1e-5,
                 noise_every=1, max_active=None, low_rank=True):
        set_init_params(self, locals())

    @classmethod
    def _hierarchy_of(cls, values):
        """FLAP (σ² fixed, profiled λ by default) or, with ``estimate_noise``, FLAPσ (004 Algorithm 1 by
        default); ``lambda_update`` as given (``None``: that default)."""
        prior = hierarchy_of(cls._hierarchy, values)
        if values["estimate_noise"]:  # FLAPσ: 004 Algorithm 1 by default
            prior = prior.replace(noise_update="variances-fixed", lambda_update="algorithm1")
        return prior.replace(lambda_update=values["lambda_update"])
