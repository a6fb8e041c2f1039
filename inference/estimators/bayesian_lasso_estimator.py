"""``BayesianLassoRegressor``: Park & Casella's Bayesian Lasso sampled by Gibbs or NUTS.

Both samplers target the same model, :func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`
(``X`` and ``y`` centred, the intercept integrated out), so their draws can be compared
directly with ArviZ. The Gibbs sampler, its hyperparameters and its functional entry points
(:func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs`,
:func:`~sparsebayes.inference.engines.bayesian_lasso.sample_gibbs`) are
:mod:`sparsebayes.inference.engines.bayesian_lasso`.
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.sparse_estimators import SparseRegressor


class BayesianLassoRegressor(SparseRegressor):
    """Park & Casella (2008) Bayesian Lasso: :class:`SparseRegressor` with ``prior=ScaledLaplacePrior(a=lam2_shape,
    b=lam2_rate, c=c, d=d)`` and ``method`` the sampler's (route ``"bayesian_lasso"``, fitted by
    :func:`~sparsebayes.inference.estimators.bayesian_lasso_fit.fit_bayesian_lasso`, answering through
    :class:`~sparsebayes.inference.estimators.bayesian_lasso_fitted.BayesianLassoMethods`).

    Parameters
    ----------
    sampler : {"gibbs", "nuts", "nuts-marginal"}
        Park–Casella Gibbs (:func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs`) or NumPyro NUTS on
        :func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`: on the scale mixture
        (``"nuts"``, the model Gibbs samples, ``tau2`` among the draws) or with ``τ²``
        integrated out (``"nuts-marginal"``: the same posterior over β, σ², λ², without the
        funnel where NUTS on the mixture diverges).
    lam2_shape, lam2_rate : float
        ``λ² ~ Gamma(r, δ)``; defaults (1, 1.78) are Park & Casella's for the diabetes data.
        ``r ≥ 0`` and ``δ > 0``: with ``δ = 0`` the posterior is improper (a ``ValueError``).
        ``λ`` has the units of ``X`` (``β_j``'s prior scale is ``σ/λ``), so ``δ`` has those of
        ``1/X²``: the model is not equivariant in the units of ``X``. Columns ``s`` times the
        scale ``δ`` was set for want ``δ/s²``; with ``δ`` far too small for ``X``'s units
        (``X`` in tiny units) the posterior shrinks every coefficient to about zero, and ``fit``
        says so in a :class:`~sparsebayes.inference._warnings.DegenerateFitWarning`
        (:func:`~sparsebayes.inference.estimators.bayesian_lasso_fit.warn_if_shrunk_to_zero`). Standardize ``X`` or set ``δ`` for its units.
    c, d : float
        ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``; 0, 0 is ``1/σ²``.
    num_warmup, num_samples, num_chains, seed : int
        Sampler controls.
    credible_level : float
        Level of the equal-tailed intervals in ``coef_interval_``.
    rhat_max : float, default=1.01
        A ``ConvergenceWarning`` is raised when the largest rank-normalized split R-hat over β
        exceeds this (Vehtari et al. 2021); it needs at least two chains. ``inf``: no check.
    progress_bar : bool, default=False
        Show the sampler's tqdm progress bar (for long runs).

    Attributes
    ----------
    coef_ : posterior medians of β (Park & Casella report medians); ``coef_mean_`` the means;
    coef_interval_ : (2, p) equal-tailed credible interval;
    active_ : bool (p,), the selected variables: those whose interval excludes zero (the
        Bayesian Lasso never sets a coefficient exactly to zero);
    intercept_ : ``ȳ − x̄ᵀ coef_mean_``: ``predict`` is ``intercept_ + X coef_mean_``, the
        posterior predictive mean;
    noise_var_, lam_ : posterior medians of σ² and λ = √λ²; ``rhat_`` the largest rank-normalized split
        R-hat over β (:func:`~sparsebayes.inference.posterior.split_rhat.max_split_rhat`, ArviZ's ``rhat`` in NumPy);
    intercept_var_ : ``E[σ²]/n``, the flat-prior intercept's variance given β and σ² averaged over
        the draws (``b | β, σ² ~ N(ȳ − x̄ᵀβ, σ²/n)``);
    n_iter_ : draws per chain; the draws themselves are the :attr:`idata_` property (``InferenceData``
        built from the Gibbs draws on first access, so that a fit needs no ArviZ);
    prior_ : the hierarchy fitted, ``ScaledLaplacePrior(a=lam2_shape, b=lam2_rate, c=c, d=d)``
        (:data:`~sparsebayes.inference.estimators.bayesian_lasso_fitted.BAYESIAN_LASSO_FIELDS`): ``SparseRegressor(method="gibbs", prior=prior_)`` (``"nuts"``
        for ``sampler="nuts"``; ``method="nuts"`` with ``options={"sampler": "nuts-marginal"}`` for
        ``"nuts-marginal"``) with the other parameters as options refits this model, the same draws
        for the same ``seed``;
    likelihood_ : the :class:`~sparsebayes.models.likelihoods.GaussianLikelihood` (σ² sampled: ``noise_var_``).
    """

    likelihood = "gaussian"
    features = "linear"
    kernel_width = "scale"
    prior = None
    options = None

    @property
    def method(self):
        """The sampler's method: ``"gibbs"``, else ``"nuts"`` (NUTS on the mixture or the marginal)."""
        return "gibbs" if self.sampler == "gibbs" else "nuts"

    def _sampling_route(self, method):
        return "bayesian_lasso"

    def __init__(self, *, sampler="gibbs", lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000,
                 num_samples=2000, num_chains=4, seed=0, credible_level=0.95, rhat_max=1.01, progress_bar=False):
        set_init_params(self, locals())
