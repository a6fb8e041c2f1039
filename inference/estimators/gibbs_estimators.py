"""The Gibbs engine (:mod:`sparsebayes.inference.engines.hierarchy_gibbs`) as scikit-learn estimators:
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` and ``SparseClassifier``
with ``method="gibbs"`` fixed and the sampler's settings as parameters, fitted by the sampling core
(:func:`~sparsebayes.inference.estimators.sampling_fit.fit_sampling_model`) and answering through
:mod:`~sparsebayes.inference.estimators.sampling_fitted`.

:class:`GibbsRegressor` and :class:`GibbsClassifier` draw the posterior of ``y_i ~ likelihood(η_i)``,
``η_i = b₀ + h(x_i)ᵀβ``, under a hierarchy on β with Gibbs conditionals, and report it in
scikit-learn's layout: ``coef_`` and ``intercept_`` are the posterior medians (as Park & Casella
report theirs, :class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`),
``predict`` and ``predict_proba`` the posterior predictive means, and the draws are kept
(``to_inference_data``: ``beta`` on ``basis``, ``intercept``, the likelihood's own parameter by its
``param_name``, the hierarchy's twin sites, ``log_likelihood``, ``posterior_predictive``).

* The Gaussian likelihood: :func:`~sparsebayes.inference.engines.hierarchy_gibbs.run` (Rue's or
  Bhattacharya et al.'s β draw by shape); the intercept has a flat prior and is integrated out of
  the sweep (``X``, ``y`` centred), then drawn from ``b₀ | β, σ² ~ N(ȳ − h̄ᵀβ, σ²/n)``; σ² under
  ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (``c = −1, d = 0``: flat, the EM engine's 000 eq. 6).
* Other likelihoods by their conjugate augmentation
  (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`): probit (Albert & Chib 1993) and
  logistic (Pólya-Gamma, Polson, Scott & Windle 2013) for the classifier, Student-t (Gamma scales)
  and negative binomial (Pólya-Gamma) for the regressor; the intercept ``b₀ ~ N(0, 10²)``. The
  Poisson has no conjugate augmentation: a ``ValueError`` says to use NUTS.

The hierarchies: any with Gibbs conditionals (:data:`sparsebayes.models.priors.CAPABILITIES`
``"gibbs"``: the horseshoe, Makalic & Schmidt 2016, τ fixed or estimated, or a registered one), and
EM's :class:`~sparsebayes.models.priors.LaplacePrior`, whose exponential mixture ``τ_i ~ Exp(γ/2)``,
``β_i | τ_i ~ N(0, τ_i)`` (002 eqs. 9–10) has Park & Casella's conditional ``1/τ_i | β_i ~
IG(√(γ/β_i²), γ)`` (Park & Casella 2008, Sec. 2; unscaled by σ) and, with ``gamma_prior = (a, b)``,
``γ | τ ~ Gamma(a + p, b + Σ τ_i/2)`` (the hierarchy's own conditionals,
:meth:`~sparsebayes.models.priors.LaplacePrior.gibbs_update`). So the posterior drawn is the one
whose mode the EM estimators compute (the bias apart: EM penalizes it, here it has its flat or wide
Gaussian prior). Park & Casella's σ-scaled Bayesian Lasso is
:class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`.

The basis, the origin and the units of ``x``: the basis is ``features`` without a bias column (the
intercept is the engine's), built as the EM estimators build theirs
(:mod:`sparsebayes.inference.estimators.adaptive`, ``standardize=True``): the linear and quadratic maps act on
inputs centred at their training mean (with ``fit_intercept``) and, under a scale-free hierarchy (the
Jeffreys prior), divided by their training SD. So the hierarchy is on the same weights as the EM
estimator's with the same prior (the EM basis without its bias column, :class:`~.sampling_fit.CentredBasis`), the
intercept is the value at the training mean, and a fit on ``X + c`` samples what the fit on ``X``
does (an offset of 1e8 would otherwise make the posterior numerically singular). Under the flat intercept of the
Gaussian likelihood the centring changes nothing but the rounding; under the ``N(0, 10²)`` intercept of
the others it puts that prior on the value at the mean, not at ``x = 0``. A hierarchy with a fixed
scale (``HorseshoePrior(tau=1)``, ``LaplacePrior(gamma=1)``) has the units of β, as it has under EM:
its inputs are centred, not scaled, and the units of ``X`` (and ``y``) remain part of the model.
Gaussian kernels are translation-invariant and are used as they are. The draws (``beta_draws_``,
``to_inference_data``, the ``posterior_model`` record) are on ``feature_map_``'s columns, as EM's
``beta_`` is; ``coef_`` and ``intercept_`` give the posterior medians' function in the data's units
(the raw terms, :meth:`~.sampling_fit.CentredBasis.raw_weights`; ``intercept_`` the value at ``x = 0``).
``standardize=False`` takes the inputs as they are.
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier, SparseRegressor


class FixedSampler:
    """The paper classes of a sampler: ``method`` fixed (a class attribute, not a parameter), no ``options``
    (the settings are parameters), and the sampler's route whatever the hierarchy (a hierarchy it
    cannot fit is its error, not another estimator's fit)."""

    method = None
    options = None

    def _sampling_route(self, method):
        return method


_DOC_SAMPLER = """
    features : {"linear", "quadratic", "kernel"} or transformer, default="linear"
        The basis ``h(x)``, without a bias column (the intercept is the engine's); linear and
        quadratic terms of the standardized inputs (``standardize``, module docstring).
    kernel_width : float or "scale", default="scale"
        Width of ``features="kernel"``.
    fit_intercept : bool, default=True
        An intercept ``b₀``: flat prior, integrated out of the sweep (Gaussian); ``N(0, 10²)`` otherwise.
    standardize : bool, default=True
        As the EM estimators': the linear and quadratic maps act on inputs centred at their training
        mean (with ``fit_intercept``; ``b₀`` is then the value at the mean) and, under a scale-free
        hierarchy (Jeffreys), divided by their training SD; ``False``: the inputs as they are.
    num_warmup, num_samples, num_chains, seed : int, default=500, 1000, 4, 0
        Sweeps discarded and kept per chain, the chains (``vmap``), the seed (the same draws for
        the same seed).
    credible_level : float, default=0.95
        Level of the equal-tailed intervals in ``coef_interval_``.
    rhat_max : float, default=1.01
        A ``ConvergenceWarning`` when the largest rank-normalized split R-hat over β exceeds it (two
        or more chains); ``inf``: no check.
    progress_bar : bool, default=False
        A tqdm bar over the sweeps.
"""


class GibbsRegressor(FixedSampler, SparseRegressor):
    """Sparse Bayesian regression by Gibbs sampling under a hierarchy with Gibbs conditionals.

    Parameters
    ----------
    prior : str or hierarchy object, default="horseshoe"
        ``"horseshoe"``/``HorseshoePrior(tau, tau_prior)``, ``"laplace"``/``LaplacePrior(gamma,
        gamma_prior)`` (module docstring) or any hierarchy with Gibbs conditionals.
    likelihood : str or likelihood object, default="gaussian"
        ``"gaussian"``, ``"student_t"`` (robust regression, ``StudentTLikelihood(df)``; its squared
        scale under Jeffreys' prior), ``"negative_binomial"`` (counts; dispersion ~ Gamma(1, 0.1)), or
        another registered likelihood with a conjugate augmentation for real or count targets.
    c, d : float, default=-1, 0
        The Gaussian's noise prior ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (flat by default); other
        likelihoods' parameters have their own priors, and these must keep their defaults.
    """ + _DOC_SAMPLER + """
    Attributes
    ----------
    beta_ : ndarray (n_basis,)
        Posterior medians of β on ``feature_map_``'s columns (the model's weights, as EM's ``beta_``;
        the bias apart); ``active_`` those whose equal-tailed interval there excludes zero.
    coef_ : ndarray (n_basis,)
        The posterior medians' weights in the data's units (the raw terms ``get_feature_names_out``
        names; ``beta_`` itself for kernels, transformers or ``standardize=False``); ``coef_mean_``
        the posterior means, ``coef_interval_`` (2, n_basis) the equal-tailed interval, both in those units.
    intercept_ : float
        The value at ``x = 0`` of the posterior medians' function (the median of ``b₀``, the value at
        the training mean, moved to the origin of the data).
    likelihood_param_ : float or None
        Posterior median of the likelihood's own parameter (σ², the Student-t's ``s²``, the
        dispersion; ``None`` for a likelihood without one); ``noise_var_`` the Gaussian's σ².
    beta_draws_, intercept_draws_, param_draws_ : the draws, chains concatenated (β on ``feature_map_``'s
        columns, ``b₀`` the value at the training mean for a centred basis).
    idata_ : the draws as ``InferenceData``; ``rhat_`` the largest R-hat over β; ``n_iter_`` draws per chain.
    prior_, likelihood_ : the hierarchy and likelihood objects fitted: ``prior=prior_,
        likelihood=likelihood_`` refits this model (the same draws for the same seed).
    feature_map_ : the fitted basis.
    """

    method = "gibbs"

    def __init__(self, *, prior="horseshoe", likelihood="gaussian", c=-1.0, d=0.0, features="linear",
                 kernel_width="scale", fit_intercept=True, standardize=True, num_warmup=500, num_samples=1000,
                 num_chains=4, seed=0, credible_level=0.95, rhat_max=1.01, progress_bar=False):
        set_init_params(self, locals())


class GibbsClassifier(FixedSampler, SparseClassifier):
    """Sparse Bayesian binary classification by Gibbs sampling (one-vs-all beyond two classes).

    ``P(y = 1 | x) = F(b₀ + h(x)ᵀβ)`` with ``F = Φ`` (probit, Albert & Chib's truncated-normal
    augmentation) or the logistic ``σ`` (Pólya-Gamma augmentation); ``k > 2`` classes: ``k`` one-vs-all
    posteriors (002 Sec. 4.2), their predictive probabilities normalized over the classes.

    Parameters
    ----------
    prior : str or hierarchy object, default="laplace"
        As :class:`GibbsRegressor`'s (one object for every one-vs-all classifier).
    link : {"probit", "logistic"} or likelihood object, default="probit"
        ``F``; a fitted ``likelihood_`` (``ProbitLikelihood()``, ``BernoulliLogisticLikelihood()``) too.
    """ + _DOC_SAMPLER + """
    Attributes
    ----------
    classes_ : ndarray
    beta_, coef_ : ndarray (1, n_basis) for two classes, (n_classes, n_basis) otherwise
        Posterior medians of β per classifier on ``feature_map_``'s columns, and in the data's units;
        ``coef_mean_``, ``coef_interval_`` (n_classifiers, 2, n_basis), ``active_`` as :class:`GibbsRegressor`'s.
    intercept_ : ndarray (1,) or (n_classes,)
        As :class:`GibbsRegressor`'s, per classifier.
    beta_draws_, intercept_draws_ : per classifier, the draws (chains concatenated).
    idata_ : InferenceData, or a list of them (one per one-vs-all classifier); ``rhat_``, ``n_iter_``.
    prior_, likelihood_ : the hierarchy and likelihood objects: ``prior=prior_, link=likelihood_`` refits.
    feature_map_ : the fitted basis.
    """

    method = "gibbs"

    def __init__(self, *, prior="laplace", link="probit", features="linear", kernel_width="scale", fit_intercept=True,
                 standardize=True, num_warmup=500, num_samples=1000, num_chains=4, seed=0, credible_level=0.95,
                 rhat_max=1.01, progress_bar=False):
        set_init_params(self, locals())
