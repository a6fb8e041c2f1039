"""Park & Casella (2008) Gibbs sampler for the Bayesian Lasso: the hierarchy Gibbs engine
(:mod:`.hierarchy_gibbs`) on the Laplace prior's own conditionals
(:meth:`sparsebayes.models.priors.LaplacePrior.gibbs_update`), run ``scaled``.

Model (centred ``y``, centred ``X``, intercept integrated out under a flat prior):
``β | σ², τ² ~ N(0, σ² D_τ)``, ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)``,
``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (``c = d = 0``: Park & Casella's ``1/σ²``): the engine's
``LaplacePrior(γ = λ², gamma_prior=(r, δ))`` with ``scaled=True`` and ``NoisePrior(c, d)``. Full
conditionals (Park & Casella 2008, Sec. 2), one sweep in this order:

* ``β | · ~ N(A⁻¹Xᵀy, σ² A⁻¹)``, ``A = XᵀX + D_τ⁻¹``: Rue's draw from the sufficient statistics
  when ``p ≤ n``, Bhattacharya, Chakraborty & Mallick's (2016) when ``p > n`` (:mod:`.gibbs_beta`;
  nothing ``p × p`` on that path);
* ``σ² | · ~ InvGamma((n − 1)/2 + p/2 + c, ‖y − Xβ‖²/2 + βᵀD_τ⁻¹β/2 + d)``
  (``n − 1``: the intercept is integrated out, as in Park & Casella);
* ``1/τ_j² | · ~ InverseGaussian(√(λ²σ²/β_j²), λ²)``, drawn by Michael, Schucany & Haas (1976);
* ``λ² | · ~ Gamma(p + r, Σ τ_j²/2 + δ)``.

:func:`run_gibbs` returns ``InferenceData`` under the Park–Casella names (``tau2``, ``lam2``);
:func:`posterior_mean_batch` gives the posterior means of a batch of data sets
(:func:`.hierarchy_gibbs.posterior_mean_batch`).
"""
from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np
from sparsebayes.models.priors import LaplacePrior

from . import hierarchy_gibbs
from .gibbs_variates import choose_variates
from .gibbs_variates import inverse_gaussian_from, michael_root  # noqa: F401  (public here too)
from ._validation import check_count, check_data, check_number, check_sampler_counts, feature_labels


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
    with ``γ = λ²`` under ``Gamma(lam2_shape, lam2_rate)`` (its chain starting at ``λ² = 1``), for
    :func:`.hierarchy_gibbs.run` with ``scaled=True`` (``β_j | σ², τ_j² ~ N(0, σ²τ_j²)``)."""
    return LaplacePrior(1.0, gamma_prior=(hyper.lam2_shape, hyper.lam2_rate))


def run_gibbs(X, y, *, lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000, num_samples=2000,
              num_chains=4, seed=0, coords=None, progress_bar=None, log_likelihood=True, variates="auto"):
    """Park–Casella Gibbs on centred ``X``, ``y`` (module docstring); returns ``InferenceData`` (chain, draw).

    Posterior variables ``beta`` (dim ``feature``), ``noise_var``, ``tau2``, ``lam2``; the
    wall time of warm-up + sampling (a first fit of a shape includes its compile) is in
    ``posterior.attrs["sampling_seconds"]``, the refused sweeps after the warm-up
    (:func:`.hierarchy_gibbs.guarded`) in ``posterior.attrs["refused_sweeps"]``. With ``log_likelihood``
    (default), also the ``observed_data`` ``y`` and the pointwise ``log_likelihood`` ``log N(y_i | x_iᵀβ, σ²)``
    of every draw, the groups (and names) that ``run_nuts`` gives for the same NumPyro model
    (:func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`), so ``az.loo`` and ``az.compare`` take Gibbs
    and NUTS fits alike. ``progress_bar``: a tqdm bar over the sweeps (``None``, the default: when standard
    error is a terminal); the draws are the same with and without it.

    ``variates`` (``"auto"``, ``"numpy"``, ``"device"``) is checked and recorded in
    ``posterior.attrs["variates"]`` as ``"device"`` whatever is asked: the engine draws its random numbers
    by JAX keys where it runs (every sweep's key split from ``seed``).

    ``X`` (n, p) and ``y`` (n,) may be NumPy arrays, pandas objects or lists; they are checked
    and converted to float64 first (:func:`~sparsebayes.inference._validation.check_data`), and
    the hyperparameters must be finite and ``≥ 0``, ``lam2_rate > 0`` (:func:`checked_hyper`: a zero
    rate makes the posterior improper): bad input is a ``ValueError`` naming the problem. A DataFrame's
    column names label the ``feature`` dim (``coords`` given for it wins).
    """
    from .arviz_compat import from_dict
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    hyper = checked_hyper(lam2_shape, lam2_rate, c, d)
    choose_variates(variates)
    features = feature_labels(X)
    X, y = check_data(X, y, min_samples=2)  # the engine asks for 3 (n = 2 leaves one degree of freedom)
    p = X.shape[1]
    t0 = time.perf_counter()
    states, infos = hierarchy_gibbs.run(X, y, bayesian_lasso_prior(hyper), num_warmup=num_warmup,
                                        num_samples=num_samples, num_chains=num_chains, seed=seed,
                                        fit_intercept=True, noise_prior=hierarchy_gibbs.NoisePrior(hyper.c, hyper.d),
                                        scaled=True, progress_bar=progress_bar)
    seconds = time.perf_counter() - t0
    refused = int(np.sum(infos.refused))
    _warn_refused(refused, num_chains * num_samples)
    posterior = {"beta": np.asarray(states.beta), "noise_var": np.asarray(states.noise_var),
                 "tau2": np.asarray(states.aux["tau"]), "lam2": np.asarray(states.aux["gamma"])}
    groups = {}
    if log_likelihood:
        groups = {"observed_data": {"y": y},
                  "log_likelihood": {"y": gaussian_log_likelihood(posterior["beta"], posterior["noise_var"],
                                                                  X - X.mean(axis=0), y - y.mean())}}
    idata = from_dict(
        {"posterior": posterior, **groups},
        coords={"basis": np.arange(p) if features is None else features, **(coords or {})},
        dims={"beta": ["basis"], "tau2": ["basis"], "y": ["obs"]},
    )
    idata.posterior.attrs["inference"] = "gibbs"
    idata.posterior.attrs["sampling_seconds"] = seconds
    idata.posterior.attrs["refused_sweeps"] = refused
    idata.posterior.attrs["variates"] = "device"
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


def _warn_refused(n_refused, n_sweeps):
    if n_refused:
        warnings.warn(
            f"Gibbs: {n_refused} of {n_sweeps} sweeps left float64 (the chain drifted towards σ² → 0, "
            "τ² → ∞, typical of p > n with a vague prior on λ²) and were refused; the draws after "
            "them do not follow the posterior",
            RuntimeWarning,
            stacklevel=3,
        )


def posterior_mean_batch(Xs, ys, hyper, num_warmup, num_samples, *, seed=0, variates="auto"):
    """Posterior mean of β for a batch of data sets ``Xs`` (B, n, p), ``ys`` (B, n), one chain
    each, by :func:`.hierarchy_gibbs.posterior_mean_batch` on the Bayesian Lasso (:func:`bayesian_lasso_prior`,
    ``scaled``, a flat intercept integrated out, σ²'s prior of ``hyper``); ``variates`` as for
    :func:`run_gibbs` (checked; the engine draws by JAX keys). Only running sums are kept, so thousands of
    draws over a 100-data-set table fit in memory. Returns the means (B, p) and, per data set, the number of
    refused sweeps."""
    hyper = checked_hyper(*hyper)
    choose_variates(variates)
    return hierarchy_gibbs.posterior_mean_batch(Xs, ys, bayesian_lasso_prior(hyper), num_warmup=num_warmup,
                                                num_samples=num_samples, seed=seed, fit_intercept=True,
                                                noise_prior=hierarchy_gibbs.NoisePrior(hyper.c, hyper.d), scaled=True)
