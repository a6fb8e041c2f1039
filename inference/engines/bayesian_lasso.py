"""Park & Casella's (2008) Bayesian Lasso on the hierarchy Gibbs engine: its hyperparameters
(:class:`Hyper`), its hierarchy as the engine runs it (:func:`bayesian_lasso_prior`,
:func:`engine_settings`) and the functional entry points :func:`run_gibbs` and :func:`sample_gibbs`
(the estimator is :class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`).

Model (:func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`, ``X`` and ``y`` centred, the
intercept integrated out): ``β | σ², τ² ~ N(0, σ² D_τ)``, ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)``,
``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (``c = d = 0``: Park & Casella's ``1/σ²``). The Gibbs sampler is the
hierarchy engine (:mod:`sparsebayes.inference.engines.hierarchy_gibbs`) on the Laplace prior's own
conditionals (:meth:`~sparsebayes.models.priors.LaplacePrior.gibbs_update_from`, γ = λ² under
``gamma_prior = (r, δ)``), run ``scaled`` with ``NoisePrior(c, d)``; its full conditionals (Park &
Casella 2008, Sec. 2), one sweep in this order:

* ``β | · ~ N(A⁻¹Xᵀy, σ² A⁻¹)``, ``A = XᵀX + D_τ⁻¹``: Rue's draw from the bordered Gram matrix when
  ``p ≤ n``, Bhattacharya, Chakraborty & Mallick's (2016) when ``p > n`` (:mod:`.gibbs_beta`;
  nothing ``p × p`` on that path);
* ``σ² | · ~ InvGamma((n − 1)/2 + p/2 + c, ‖y − Xβ‖²/2 + βᵀD_τ⁻¹β/2 + d)``
  (``n − 1``: the intercept is integrated out, as in Park & Casella);
* ``1/τ_j² | · ~ InverseGaussian(√(λ²σ²/β_j²), λ²)``, drawn by Michael, Schucany & Haas (1976);
* ``λ² | · ~ Gamma(p + r, Σ τ_j²/2 + δ)``,

every random number drawn ahead of its sweep (:mod:`sparsebayes.inference.engines.gibbs_variates`:
NumPy's generators on a CPU, JAX's on an accelerator), so the compiled sweep holds no sampler.
Posterior means over a batch of data sets (the BLS tables) are the engine's
:func:`~sparsebayes.inference.engines.hierarchy_gibbs_batch.posterior_mean_batch` with
:func:`engine_settings`.
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from sparsebayes.inference._validation import check_count, check_data, check_number, check_sampler_counts, feature_labels
from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_variates
from sparsebayes.models.priors import LaplacePrior


class Hyper(NamedTuple):
    """The hyperparameters: ``λ² ~ Gamma(lam2_shape, lam2_rate)`` and ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``.

    The defaults ``(1, 1.78)`` are Park & Casella's for the diabetes data; ``c = d = 0`` is their ``1/σ²``.
    """

    lam2_shape: float = 1.0
    lam2_rate: float = 1.78
    c: float = 0.0
    d: float = 0.0


def checked_hyper(lam2_shape, lam2_rate, c, d):
    """:class:`Hyper` of float64 numbers, each checked finite and ``≥ 0``, and ``lam2_rate > 0``
    (``ValueError`` naming it).

    ``0`` is the flat limit of ``r``, ``c`` and ``d`` and keeps every full conditional proper
    (``λ² | ·`` has shape ``p + r ≥ 1``, ``σ² | ·`` shape ``(n − 1)/2 + p/2 + c > 0``); a negative
    rate made ``λ²`` draws negative, and a negative ``d`` a negative ``σ²``. The rate ``δ`` must be
    positive: with ``p(λ²) ∝ (λ²)^{r−1}`` the conditionals are still proper, but the joint
    posterior is not (integrating λ² out leaves ``∝ (Σ|β_j|/σ)^{−(p+2r)}`` near ``β = 0``, whose
    integral diverges there in ``p`` dimensions for ``r ≥ 0``), so a sampler would run on a posterior
    that does not exist."""
    values = {"lam2_shape": lam2_shape, "lam2_rate": lam2_rate, "c": c, "d": d}
    for name, value in values.items():
        check_number(name, value, 0.0)
    if float(lam2_rate) == 0.0:
        raise ValueError("lam2_rate must be > 0: with a zero rate the hyperprior on λ² is improper and so is the "
                         "posterior (it piles up at β = 0); Park & Casella's default is lam2_shape=1, lam2_rate=1.78 "
                         "(a type-II ScaledLaplacePrior's flat b=0 is for evidence maximisation, not for sampling)")
    return Hyper(*(float(v) for v in values.values()))


def bayesian_lasso_prior(hyper):
    """The Bayesian Lasso's hierarchy as the engine runs it: :class:`~sparsebayes.models.priors.LaplacePrior`
    with ``γ = λ²`` under ``Gamma(lam2_shape, lam2_rate)`` (its chains starting at ``λ² = 1``), for
    :func:`~sparsebayes.inference.engines.hierarchy_gibbs.run` with ``scaled=True``
    (``β_j | σ², τ_j² ~ N(0, σ²τ_j²)``) and ``NoisePrior(c, d)``."""
    return LaplacePrior(1.0, gamma_prior=(hyper.lam2_shape, hyper.lam2_rate))


def engine_settings(hyper):
    """The Bayesian Lasso as the hierarchy engine's arguments, for ``hyper`` (a :class:`Hyper` or its four
    numbers, checked by :func:`checked_hyper`): ``prior`` (:func:`bayesian_lasso_prior`), ``noise_prior``
    ``NoisePrior(c, d)``, ``scaled=True`` (``β_j | σ², τ_j² ~ N(0, σ²τ_j²)``) and ``fit_intercept=True``
    (the flat intercept integrated out), e.g.
    ``hierarchy_gibbs_batch.posterior_mean_batch(Xs, ys, num_warmup=…, num_samples=…, **engine_settings(Hyper()))``."""
    hyper = checked_hyper(*hyper)
    return {"prior": bayesian_lasso_prior(hyper), "noise_prior": hierarchy_gibbs.NoisePrior(hyper.c, hyper.d),
            "scaled": True, "fit_intercept": True}


class GibbsDraws(NamedTuple):
    """What :func:`sample_gibbs` returns: ``posterior`` (``beta``, ``noise_var``, ``tau2``, ``lam2``, each
    (chain, draw, …)), the checked float64 ``X`` and ``y`` it sampled on, ``features`` (a DataFrame's
    column labels, else ``None``) and ``attrs`` (``inference``, ``sampling_seconds``, ``refused_sweeps``,
    ``variates``)."""
    posterior: dict
    X: np.ndarray
    y: np.ndarray
    features: object
    attrs: dict


def run_gibbs(X, y, *, lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000, num_samples=2000,
              num_chains=4, seed=0, coords=None, progress_bar=None, log_likelihood=True, variates="auto"):
    """Park–Casella Gibbs on centred ``X``, ``y`` (module docstring); returns ``InferenceData`` (chain, draw).

    Posterior variables ``beta`` (dim ``basis``), ``noise_var``, ``tau2``, ``lam2``; the wall time of
    warm-up + sampling (compile excluded) is in ``posterior.attrs["sampling_seconds"]``. With
    ``log_likelihood`` (default), also the ``observed_data`` ``y`` and the pointwise ``log_likelihood``
    ``log N(y_i | x_iᵀβ, σ²)`` of every draw, the groups (and names) that ``run_nuts`` gives for the same
    NumPyro model (:func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`), so ``az.loo`` and
    ``az.compare`` take Gibbs and NUTS fits alike. The sampling is :func:`sample_gibbs`'s (its
    docstring: the progress bar, ``variates``, the checks of the input) and the object
    :func:`gibbs_inference_data`'s."""
    draws = sample_gibbs(X, y, lam2_shape=lam2_shape, lam2_rate=lam2_rate, c=c, d=d, num_warmup=num_warmup,
                         num_samples=num_samples, num_chains=num_chains, seed=seed, progress_bar=progress_bar,
                         variates=variates)
    return gibbs_inference_data(draws, coords=coords, log_likelihood=log_likelihood)


def sample_gibbs(X, y, *, lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000, num_samples=2000,
                 num_chains=4, seed=0, progress_bar=None, variates="auto"):
    """Park–Casella Gibbs on centred ``X``, ``y``: the draws of :func:`run_gibbs` as NumPy arrays
    (:class:`GibbsDraws`), without ArviZ; the hierarchy engine's
    :func:`~sparsebayes.inference.engines.hierarchy_gibbs_variates.run_with_variates` on :func:`bayesian_lasso_prior`.

    With a progress bar (``progress_bar=True``; ``None``, the default: when standard error is a
    terminal) the sweeps run in about 20 compiled calls with a tqdm bar between them; the draws are
    the same however the sweeps are cut. ``variates`` says where the random numbers are drawn
    (:mod:`~sparsebayes.inference.engines.gibbs_variates`): ``"numpy"`` on the host, ``"device"`` by
    JAX where the sweeps run, ``"auto"`` (default) the device on an accelerator and NumPy on a CPU,
    the faster of the two on each. The two give different draws of the same posterior for a seed.

    ``X`` (n, p) and ``y`` (n,) may be NumPy arrays, pandas objects or lists; they are checked and
    converted to float64 first (:func:`~sparsebayes.inference._validation.check_data`), and the
    hyperparameters must be finite and ``≥ 0``, ``lam2_rate > 0`` (:func:`checked_hyper`: a zero rate
    makes the posterior improper): bad input is a ``ValueError`` naming the problem. Sweeps that left
    float64 and were refused (:func:`~sparsebayes.inference.engines.hierarchy_gibbs.guarded`) are a
    ``RuntimeWarning``."""
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    hyper = checked_hyper(lam2_shape, lam2_rate, c, d)
    features = feature_labels(X)
    X, y = check_data(X, y, min_samples=2)  # pandas and lists too; n ≥ 2: the intercept takes one degree of freedom
    states, _, attrs = hierarchy_gibbs_variates.run_with_variates(
        X, y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
        progress_bar=progress_bar, variates=variates, **engine_settings(hyper))
    _warn_refused(attrs["refused_sweeps"], num_chains * num_samples)
    posterior = {"beta": states.beta, "noise_var": states.noise_var, "tau2": states.aux["tau"],
                 "lam2": states.aux["gamma"]}
    return GibbsDraws(posterior, X, y, features, {"inference": "gibbs", **attrs})


def gibbs_inference_data(draws, *, coords=None, log_likelihood=True):
    """The ``InferenceData`` of :func:`run_gibbs` from :func:`sample_gibbs`'s :class:`GibbsDraws`:
    the posterior (``beta`` and ``tau2`` on dim ``basis``, labelled by the DataFrame's columns
    unless ``coords`` names them), its ``attrs``, and with ``log_likelihood`` the ``observed_data``
    ``y`` and the pointwise ``log_likelihood`` (:func:`gaussian_log_likelihood`)."""
    from sparsebayes.inference.posterior.arviz_compat import from_dict
    posterior, X, y = draws.posterior, draws.X, draws.y
    groups = {}
    if log_likelihood:
        groups = {"observed_data": {"y": y},
                  "log_likelihood": {"y": gaussian_log_likelihood(posterior["beta"], posterior["noise_var"], X, y)}}
    p = X.shape[1]
    idata = from_dict(
        {"posterior": posterior, **groups},
        coords={"basis": np.arange(p) if draws.features is None else draws.features, **(coords or {})},
        dims={"beta": ["basis"], "tau2": ["basis"], "y": ["obs"]},
    )
    for key, value in draws.attrs.items():
        idata.posterior.attrs[key] = value
    return idata


def gaussian_log_likelihood(beta, noise_var, X, y):
    """Pointwise ``log N(y_i | x_iᵀβ, σ²)`` for draws ``beta`` (…, p) and ``noise_var`` (…): shape (…, n).
    (Written out: SciPy's ``norm.logpdf`` on a draws × data array can cost more than the
    sampling itself.)"""
    s2 = np.asarray(noise_var)[..., None]
    resid = y - np.asarray(beta) @ X.T
    return -0.5 * (np.log(2.0 * np.pi * s2) + resid * resid / s2)


def _warn_refused(n_refused, n_sweeps):
    if n_refused:
        warnings.warn(
            f"Gibbs: {n_refused} of {n_sweeps} sweeps left float64 (the chain drifted towards σ² → 0, "
            "τ² → ∞, typical of p > n with a vague prior on λ²) and were refused; the draws after "
            "them do not follow the posterior",
            RuntimeWarning,
            stacklevel=3,
        )
