"""``BayesianLassoRegressor``: Park & Casella's Bayesian Lasso sampled by Gibbs or NUTS.

Both samplers target the same model, :func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`
(``X`` and ``y`` centred, the intercept integrated out), so their draws can be compared
directly with ArviZ. The Gibbs sampler, its hyperparameters and its functional entry points
(:func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs`,
:func:`~sparsebayes.inference.engines.bayesian_lasso.sample_gibbs`) are
:mod:`sparsebayes.inference.engines.bayesian_lasso`.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.bayesian_lasso import bayesian_lasso
from sparsebayes.models.likelihoods import GaussianLikelihood
from sparsebayes.models.priors.typeii import ScaledLaplacePrior

from sparsebayes.inference.estimators._base import atomic_fit, basis_names
from sparsebayes.inference._validation import (
    check_count,
    check_flags,
    check_number,
    validate_predict_data,
    validate_regression_data,
)
from sparsebayes.inference._warnings import missed_signal, warn_degenerate
from sparsebayes.inference.engines.bayesian_lasso import checked_hyper, gibbs_inference_data, sample_gibbs
from sparsebayes.inference.engines.nuts import run_nuts
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.inference.posterior.split_rhat import max_split_rhat


class BayesianLassoRegressor(RegressorMixin, PosteriorSamplingMixin, BaseEstimator):
    """Park & Casella (2008) Bayesian Lasso.

    Parameters
    ----------
    sampler : {"gibbs", "nuts", "nuts-marginal"}
        Park–Casella Gibbs (:func:`run_gibbs`) or NumPyro NUTS on
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
        (:func:`_warn_if_shrunk_to_zero`). Standardize ``X`` or set ``δ`` for its units.
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
        (:attr:`_hierarchy_fields`): ``SparseRegressor(method="gibbs", prior=prior_)`` (``"nuts"``
        for ``sampler="nuts"``) with the other parameters as options refits this model, the same
        draws for the same ``seed``;
    likelihood_ : the :class:`~sparsebayes.models.likelihoods.GaussianLikelihood` (σ² sampled: ``noise_var_``).
    """

    #: The hierarchy object of this model: Park & Casella's ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)`` is
    #: BLS's ``τ_i ~ Exp(λ/2)``, ``λ ~ Gamma(a, b)`` (004 eqs. 7–8) with its rate λ standing for λ², and
    #: both put ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` on the noise.
    _hierarchy = ScaledLaplacePrior
    #: The object's fields and the parameters that carry them (``c``, ``d``: the same names); its flags
    #: (``lambda_update``, ``noise_update``) are type-II's, with no meaning for a sampler.
    _hierarchy_fields = {"a": "lam2_shape", "b": "lam2_rate", "c": "c", "d": "d"}

    def __init__(self, *, sampler="gibbs", lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000,
                 num_samples=2000, num_chains=4, seed=0, credible_level=0.95, rhat_max=1.01, progress_bar=False):
        self.sampler = sampler
        self.lam2_shape = lam2_shape
        self.lam2_rate = lam2_rate
        self.c = c
        self.d = d
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.seed = seed
        self.credible_level = credible_level
        self.rhat_max = rhat_max
        self.progress_bar = progress_bar

    @atomic_fit
    def fit(self, X, y):
        """Sample the Bayesian Lasso posterior of ``y`` on ``X`` and summarize it.

        ``X`` and ``y`` are centred and the flat-prior intercept integrated out; the chosen
        sampler draws ``β``, ``σ²``, ``λ²`` (and ``τ²`` on the scale mixture) from Park & Casella's
        hierarchy (Park & Casella 2008, Sec. 2), and the fitted attributes summarize those draws (medians,
        equal-tailed intervals, the support whose interval excludes zero).

        Parameters
        ----------
        X : array-like or pandas DataFrame, shape (n, p)
            Inputs, finite; a DataFrame's columns name the coefficients in ``idata_``.
        y : array-like, shape (n,)
            Targets, finite.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On a bad hyperparameter or bad data (NaN/inf, wrong shapes).

        Warns
        -----
        ConvergenceWarning
            When the largest R-hat over ``β`` exceeds ``rhat_max``.
        DegenerateFitWarning
            When the prior shrinks every coefficient to about zero (``lam2_rate`` far too small
            for the units of ``X``).
        """
        if self.sampler not in ("gibbs", "nuts", "nuts-marginal"):
            raise ValueError(f"sampler must be 'gibbs', 'nuts' or 'nuts-marginal', got {self.sampler!r}")
        check_number("credible_level", self.credible_level, 0.0, strict=True)
        if not self.credible_level < 1.0:
            raise ValueError(f"credible_level must lie in (0, 1), got {self.credible_level!r}")
        check_count("seed", self.seed, 0)
        hyper = checked_hyper(self.lam2_shape, self.lam2_rate, self.c, self.d)  # Gamma / inverse-Gamma; 0: flat (not the rate)
        r = self.rhat_max  # checked before the sampling, not after it; inf turns the check off
        if not (isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, bool) and r > 1):
            raise ValueError(f"rhat_max must be a number > 1 (inf: no check), got {r!r}")
        check_flags(self)
        X, y = validate_regression_data(self, X, y)
        X = np.ascontiguousarray(X)  # NumPy's column means depend on the layout (a DataFrame's is column-major)
        self.x_mean_ = X.mean(axis=0)
        self.y_mean_ = float(y.mean())
        Xc, yc = X - self.x_mean_, y - self.y_mean_
        p = X.shape[1]
        coords = {"basis": basis_names(self, None, p)}
        if self.sampler == "gibbs":
            draws = sample_gibbs(Xc, yc, lam2_shape=self.lam2_shape, lam2_rate=self.lam2_rate, c=self.c, d=self.d,
                                 num_warmup=self.num_warmup, num_samples=self.num_samples,
                                 num_chains=self.num_chains, seed=self.seed, progress_bar=bool(self.progress_bar))
            self._idata_ = (draws, coords)  # built by ``idata_`` on first access
            posterior = draws.posterior
        else:
            marginal = self.sampler == "nuts-marginal"
            dims = {"beta": ["basis"], "y": ["obs"], **({} if marginal else {"tau2": ["basis"]})}
            idata = run_nuts(bayesian_lasso, Xc, yc, num_warmup=self.num_warmup, num_samples=self.num_samples,
                             num_chains=self.num_chains, seed=self.seed, progress_bar=bool(self.progress_bar),
                             rhat_max=None, coords=coords, dims=dims, lam2_shape=hyper.lam2_shape,
                             lam2_rate=hyper.lam2_rate, c=hyper.c, d=hyper.d, marginal=marginal)
            self._idata_ = idata
            posterior = {name: np.asarray(idata.posterior[name]) for name in ("beta", "noise_var", "lam2")}
        self.likelihood_ = GaussianLikelihood()
        self.prior_ = self._hierarchy(**{field: getattr(hyper, param) for field, param in
                                         self._hierarchy_fields.items()})
        beta = np.asarray(posterior["beta"]).reshape(-1, p)
        self.beta_draws_ = beta
        self.noise_var_draws_ = np.asarray(posterior["noise_var"]).ravel()
        self.coef_ = np.median(beta, axis=0)
        self.coef_mean_ = beta.mean(axis=0)
        tail = 0.5 * (1.0 - self.credible_level)
        self.coef_interval_ = np.quantile(beta, [tail, 1.0 - tail], axis=0)
        self.active_ = (self.coef_interval_[0] > 0) | (self.coef_interval_[1] < 0)
        self.noise_var_ = float(np.median(self.noise_var_draws_))
        self.lam_ = float(np.median(np.sqrt(np.asarray(posterior["lam2"]))))
        self.intercept_ = self.y_mean_ - float(self.x_mean_ @ self.coef_mean_)
        self.intercept_var_ = float(self.noise_var_draws_.mean()) / X.shape[0]
        self.n_iter_ = int(self.num_samples)
        _warn_if_shrunk_to_zero(self, Xc, yc)
        self.rhat_ = float("nan")
        if self.num_chains >= 2 and self.num_samples >= 4:
            self.rhat_ = max_split_rhat(posterior["beta"])
            if self.rhat_ > self.rhat_max:
                warnings.warn(f"{self.sampler} chains have not mixed: max R-hat over beta {self.rhat_:.3f} > "
                              f"{self.rhat_max}; increase num_warmup / num_samples", ConvergenceWarning, stacklevel=2)
        return self

    @property
    def idata_(self):
        """The draws as ``InferenceData`` (ArviZ 1.x: ``xarray.DataTree``): the NUTS sampler's own, or
        the Gibbs draws' (:func:`gibbs_inference_data`, with the
        ``observed_data`` and pointwise ``log_likelihood`` groups), built on first access and kept."""
        try:
            stored = self.__dict__["_idata_"]
        except KeyError:
            raise AttributeError("'BayesianLassoRegressor' object has no attribute 'idata_' (not fitted)") from None
        if isinstance(stored, tuple):
            draws, coords = stored
            stored = self.__dict__["_idata_"] = gibbs_inference_data(draws, coords=coords)
        return stored

    def predict(self, X, return_std=False):
        """Posterior predictive mean ``x̃ᵀE[β] + ȳ`` (``x̃ = x − x̄``); with ``return_std`` its sd,
        ``√(Var[x̃ᵀβ] + E[σ²] + E[σ²]/n)`` over the draws: the last term is the integrated-out
        intercept's (``intercept_var_``)."""
        check_is_fitted(self, "coef_")
        X = validate_predict_data(self, X)
        Xc = X - self.x_mean_
        mean = Xc @ self.coef_mean_ + self.y_mean_
        if not return_std:
            return mean
        draws = Xc @ self.beta_draws_.T
        return mean, np.sqrt(draws.var(axis=1) + self.noise_var_draws_.mean() + self.intercept_var_)

    def to_inference_data(self):
        """The sampler's draws (chain, draw) as ``InferenceData`` (ArviZ 1.x: ``xarray.DataTree``): a deep
        copy, so that editing it (adding groups, renaming) leaves the fitted ``idata_`` as it was."""
        from sparsebayes.inference.posterior.arviz_compat import copy
        check_is_fitted(self, "idata_")
        return copy(self.idata_)

    def summary(self):
        """ArviZ's own summary of β (R-hat, bulk/tail ESS, MCSE), in the installed ArviZ's layout
        (1.x gives an equal-tailed interval where 0.x gives the HDI)."""
        import arviz as az  # on use: ArviZ is 1.3 s of the package's 3 s import
        return az.summary(self.idata_, var_names=["beta"])

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.bayesian_lasso_model`)."""
        from sparsebayes.inference.posterior.twin_builders import bayesian_lasso_model
        return bayesian_lasso_model(self, X, y, surrogate_eps, train)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags


#: The units check of :func:`_warn_if_shrunk_to_zero`: the prior variance of every ``β_j`` below this
#: share of the variance the likelihood alone leaves it (``σ²/‖x̃_j‖²``) means the data cannot move it.
PRIOR_SHARE = 1e-4


def _warn_if_shrunk_to_zero(estimator, Xc, yc):
    """``DegenerateFitWarning`` when the λ² prior has shrunk every coefficient to about zero, by either of two
    checks on the fitted posterior:

    - the data hold a clear linear signal that the posterior mean misses (:func:`~._warnings.missed_signal`:
      least squares explains ``R²_ls`` at an F-test p-value below 1e-3, the posterior mean ``x̃ᵀE[β]``
      less than 1 % of it);
    - the prior alone pins every coefficient: the Laplace prior's variance of ``β_j`` at the fitted λ,
      ``2σ²/λ²`` (Park & Casella 2008, eq. 1 with scale ``σ/λ``), is below :data:`PRIOR_SHARE` of the
      variance the likelihood leaves it, ``σ²/‖x̃_j‖²``, for every column: ``2‖x̃_j‖²/λ² < PRIOR_SHARE``.
      This one is a matter of units, needs no residual degrees of freedom (``p ≥ n − 1``) and holds
      whatever the signal's strength (a weak signal passes no F-test at 1e-3).

    With ``X`` in tiny units (``X · 1e-8``) the λ² prior, whose rate has the units of ``1/X²``
    (class docstring), holds ``λ`` far above what the data's units need, and the posterior is the
    prior's point mass at ``β ≈ 0``: training R² 1e-10, chains mixed. A real absence of signal in
    standardized data fails both checks (``‖x̃_j‖² = n`` against ``λ²`` of order 1) and gives no warning."""
    advice = ("standardize X: λ has the units of X and lam2_rate those of 1/X², so X in small units needs a "
              "larger lam2_rate (δ/s² for columns s times the scale δ was set for)")
    missed = missed_signal(Xc, yc, Xc @ estimator.coef_mean_)
    if missed is not None:
        r2_post, r2_ls, p_value = missed
        warn_degenerate(
            estimator,
            f"the posterior mean explains R² = {r2_post:.2g} of the training data where least squares explains "
            f"{r2_ls:.2g} (F-test p = {p_value:.1g}): the λ² prior has shrunk every coefficient to about zero",
            advice)
        return
    share = 2.0 * float(np.max(np.sum(Xc**2, axis=0))) / estimator.lam_**2 if estimator.lam_ > 0 else np.inf
    if share < PRIOR_SHARE:
        warn_degenerate(
            estimator,
            f"the prior variance of every coefficient, 2σ²/λ² at the fitted λ = {estimator.lam_:.3g}, is at most "
            f"{share:.2g} of the variance the data leave it (σ²/‖x_j − x̄_j‖²): the λ² prior has pinned every "
            "coefficient at about zero, whatever the data say",
            advice)
