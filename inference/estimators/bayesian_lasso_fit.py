"""The fitting core of the Bayesian Lasso route (``"bayesian_lasso"``): Park & Casella's (2008, Sec. 2)
σ-scaled Laplace hierarchy for the Gaussian regression,

``y | μ, X, β, σ² ~ N(μ1 + X̃β, σ² I)``, ``β_j | τ_j², σ² ~ N(0, σ² τ_j²)``, ``τ_j² ~ Exp(λ²/2)``,
``λ² ~ Gamma(r, δ)``, ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``

on the centred inputs ``X̃ = X − 1x̄ᵀ``, the flat-prior intercept ``μ`` integrated out (so ``y`` is centred
too); the mixture over ``τ_j²`` is their eq. 1's conditional Laplace prior
``β_j | σ² ~ (λ / 2σ) e^{-λ|β_j|/σ}``. It is taken by ``method="gibbs"`` or ``"nuts"`` under ``ScaledLaplacePrior`` (or
``"scaled_laplace"``) and by :class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`;
the draws are Park & Casella's Gibbs sampler
(:func:`~sparsebayes.inference.engines.bayesian_lasso.sample_gibbs`) or NUTS on
:func:`~sparsebayes.models.bayesian_lasso.bayesian_lasso` (the scale mixture, or with ``τ²`` integrated
out), summarized as a :class:`BayesianLassoFit` record (:func:`fit_bayesian_lasso`). The estimator's methods
on that record are :mod:`~sparsebayes.inference.estimators.bayesian_lasso_fitted`.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.inference._warnings import warn_degenerate

#: The Bayesian Lasso's samplers: Park & Casella's Gibbs, NUTS on the scale mixture, NUTS with τ²
#: integrated out (:func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`, ``marginal``).
BAYESIAN_LASSO_SAMPLERS = ("gibbs", "nuts", "nuts-marginal")


@dataclasses.dataclass(frozen=True)
class BayesianLassoFit:
    """The Bayesian Lasso's draws and summaries (:func:`fit_bayesian_lasso`).

    ``idata``: the draws as the sampler left them: under ``"nuts"`` and ``"nuts-marginal"`` the
    ``InferenceData`` :func:`~sparsebayes.inference.engines.nuts.run_nuts` built, under ``"gibbs"`` the
    pair ``(GibbsDraws, coords)``, which the estimator's ``idata_`` makes ``InferenceData`` on its first
    read (:func:`~.sampling_fit.inference_data`); ``x_mean``, ``y_mean`` the training means the model is
    centred at; ``beta`` (draws, p) and ``noise_var`` (draws,), the chains concatenated; ``coef`` the
    medians, ``coef_mean`` the means, ``coef_interval`` (2, p), ``active`` where it excludes zero;
    ``noise_var_median``, ``lam`` (the median of √λ²); ``intercept = ȳ − x̄ᵀE[β]`` and
    ``intercept_var = E[σ²]/n``; ``rhat`` the largest split R-hat over β."""

    idata: object
    x_mean: np.ndarray
    y_mean: float
    beta: np.ndarray
    noise_var: np.ndarray
    coef: np.ndarray
    coef_mean: np.ndarray
    coef_interval: np.ndarray
    active: np.ndarray
    noise_var_median: float
    lam: float
    intercept: float
    intercept_var: float
    rhat: float


def fit_bayesian_lasso(X, y, hyper, settings, sampler, *, coords, owner):
    """Park & Casella's (2008, Sec. 2) Bayesian Lasso of ``y`` on ``X`` (validated float64), drawn by
    ``sampler`` (:data:`BAYESIAN_LASSO_SAMPLERS`) under ``hyper``
    (:class:`~sparsebayes.inference.engines.bayesian_lasso.Hyper`, checked) with ``settings``' chains:
    ``X`` and ``y`` centred and the flat-prior intercept integrated out, then the draws summarized
    (:class:`BayesianLassoFit`). Warns (naming ``owner``) when the λ² prior has shrunk every coefficient
    to about zero (:func:`warn_if_shrunk_to_zero`) and (``ConvergenceWarning``) when R-hat exceeds
    ``settings.rhat_max``."""
    from sparsebayes.inference.engines.bayesian_lasso import sample_gibbs
    from sparsebayes.inference.posterior.split_rhat import max_split_rhat

    X = np.ascontiguousarray(X)  # NumPy's column means depend on the layout (a DataFrame's is column-major)
    x_mean, y_mean = X.mean(axis=0), float(y.mean())
    Xc, yc = X - x_mean, y - y_mean
    p = X.shape[1]
    if sampler == "gibbs":
        draws = sample_gibbs(Xc, yc, lam2_shape=hyper.lam2_shape, lam2_rate=hyper.lam2_rate, c=hyper.c, d=hyper.d,
                             num_warmup=settings.num_warmup, num_samples=settings.num_samples,
                             num_chains=settings.num_chains, seed=settings.seed, progress_bar=bool(settings.progress_bar))
        stored, posterior = (draws, coords), draws.posterior  # InferenceData built on first read
    else:
        from sparsebayes.inference.engines.nuts import run_nuts
        from sparsebayes.models.bayesian_lasso import bayesian_lasso

        marginal = sampler == "nuts-marginal"
        dims = {"beta": ["basis"], "y": ["obs"], **({} if marginal else {"tau2": ["basis"]})}
        stored = run_nuts(bayesian_lasso, Xc, yc, num_warmup=settings.num_warmup, num_samples=settings.num_samples,
                          num_chains=settings.num_chains, seed=settings.seed, progress_bar=bool(settings.progress_bar),
                          rhat_max=None, coords=coords, dims=dims, lam2_shape=hyper.lam2_shape,
                          lam2_rate=hyper.lam2_rate, c=hyper.c, d=hyper.d, marginal=marginal)
        posterior = {name: np.asarray(stored.posterior[name]) for name in ("beta", "noise_var", "lam2")}
    beta = np.asarray(posterior["beta"]).reshape(-1, p)
    noise_var = np.asarray(posterior["noise_var"]).ravel()
    coef_mean = beta.mean(axis=0)
    tail = 0.5 * (1.0 - settings.credible_level)
    interval = np.quantile(beta, [tail, 1.0 - tail], axis=0)
    lam = float(np.median(np.sqrt(np.asarray(posterior["lam2"]))))
    warn_if_shrunk_to_zero(owner, Xc, yc, coef_mean, lam)
    rhat = float("nan")
    if settings.num_chains >= 2 and settings.num_samples >= 4:
        rhat = max_split_rhat(posterior["beta"])
        if rhat > settings.rhat_max:
            warnings.warn(f"{sampler} chains have not mixed: max R-hat over beta {rhat:.3f} > "
                          f"{settings.rhat_max}; increase num_warmup / num_samples", ConvergenceWarning, stacklevel=2)
    return BayesianLassoFit(idata=stored, x_mean=x_mean, y_mean=y_mean, beta=beta, noise_var=noise_var,
                            coef=np.median(beta, axis=0), coef_mean=coef_mean, coef_interval=interval,
                            active=(interval[0] > 0) | (interval[1] < 0), noise_var_median=float(np.median(noise_var)),
                            lam=lam, intercept=y_mean - float(x_mean @ coef_mean),
                            intercept_var=float(noise_var.mean()) / X.shape[0], rhat=rhat)


#: The units check of :func:`warn_if_shrunk_to_zero`: the prior variance of every ``β_j`` below this
#: share of the variance the likelihood alone leaves it (``σ²/‖x̃_j‖²``) means the data cannot move it.
PRIOR_SHARE = 1e-4


def warn_if_shrunk_to_zero(owner, Xc, yc, coef_mean, lam):
    """``DegenerateFitWarning`` (naming ``owner``) when the λ² prior has shrunk every coefficient of a
    Bayesian Lasso fit (posterior mean ``coef_mean``, median λ ``lam`` on the centred ``Xc``, ``yc``) to
    about zero, by either of two checks on the fitted posterior:

    - the data hold a clear linear signal that the posterior mean misses (:func:`~._warnings.missed_signal`:
      least squares explains ``R²_ls`` at an F-test p-value below 1e-3, the posterior mean ``x̃ᵀE[β]``
      less than 1 % of it);
    - the prior alone pins every coefficient: the Laplace prior's variance of ``β_j`` at the fitted λ,
      ``2σ²/λ²`` (Park & Casella 2008, eq. 1 with scale ``σ/λ``), is below :data:`PRIOR_SHARE` of the
      variance the likelihood leaves it, ``σ²/‖x̃_j‖²``, for every column: ``2‖x̃_j‖²/λ² < PRIOR_SHARE``.
      This one is a matter of units, needs no residual degrees of freedom (``p ≥ n − 1``) and holds
      whatever the signal's strength (a weak signal passes no F-test at 1e-3).

    With ``X`` in tiny units (``X · 1e-8``) the λ² prior, whose rate has the units of ``1/X²``, holds
    ``λ`` far above what the data's units need, and the posterior is the prior's point mass at
    ``β ≈ 0``: training R² 1e-10, chains mixed. A real absence of signal in standardized data fails
    both checks (``‖x̃_j‖² = n`` against ``λ²`` of order 1) and gives no warning."""
    from sparsebayes.inference._warnings import missed_signal

    advice = ("standardize X: λ has the units of X and lam2_rate those of 1/X², so X in small units needs a "
              "larger lam2_rate (δ/s² for columns s times the scale δ was set for)")
    missed = missed_signal(Xc, yc, Xc @ coef_mean)
    if missed is not None:
        r2_post, r2_ls, p_value = missed
        warn_degenerate(
            owner,
            f"the posterior mean explains R² = {r2_post:.2g} of the training data where least squares explains "
            f"{r2_ls:.2g} (F-test p = {p_value:.1g}): the λ² prior has shrunk every coefficient to about zero",
            advice)
        return
    share = 2.0 * float(np.max(np.sum(Xc**2, axis=0))) / lam**2 if lam > 0 else np.inf
    if share < PRIOR_SHARE:
        warn_degenerate(
            owner,
            f"the prior variance of every coefficient, 2σ²/λ² at the fitted λ = {lam:.3g}, is at most "
            f"{share:.2g} of the variance the data leave it (σ²/‖x_j − x̄_j‖²): the λ² prior has pinned every "
            "coefficient at about zero, whatever the data say",
            advice)
