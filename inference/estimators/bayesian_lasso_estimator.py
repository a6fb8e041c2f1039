"""``BayesianLassoRegressor``: Park & Casella's Bayesian Lasso sampled by Gibbs or NUTS, and its
functional entry points :func:`run_gibbs`, :func:`sample_gibbs` and :func:`posterior_mean_batch`.

Both samplers target the same model, :func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`
(``X`` and ``y`` centred, the intercept integrated out), so their draws can be compared
directly with ArviZ.

Model: ``β | σ², τ² ~ N(0, σ² D_τ)``, ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)``,
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
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

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
    check_data,
    check_flags,
    check_number,
    check_sampler_counts,
    feature_labels,
    validate_predict_data,
    validate_regression_data,
)
from sparsebayes.inference._warnings import missed_signal, warn_degenerate
from sparsebayes.inference.engines import hierarchy_gibbs
from sparsebayes.models.priors import LaplacePrior
from sparsebayes.inference.engines.nuts import run_nuts
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.inference.posterior.split_rhat import max_split_rhat


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
    :func:`~sparsebayes.inference.engines.hierarchy_gibbs.run_with_variates` on :func:`bayesian_lasso_prior`.

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
    states, _, attrs = hierarchy_gibbs.run_with_variates(
        X, y, bayesian_lasso_prior(hyper), num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
        seed=seed, fit_intercept=True, noise_prior=hierarchy_gibbs.NoisePrior(hyper.c, hyper.d), scaled=True,
        progress_bar=progress_bar, variates=variates)
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


def posterior_mean_batch(Xs, ys, hyper, num_warmup, num_samples, *, seed=0, variates="auto"):
    """Posterior mean of β for a batch of centred data sets ``Xs`` (B, n, p), ``ys`` (B, n) under the
    Bayesian Lasso with :class:`Hyper` ``hyper``, one chain each, ``vmap`` over data sets
    (:func:`~sparsebayes.inference.engines.hierarchy_gibbs.posterior_mean_batch`); ``variates`` as for
    :func:`run_gibbs`. Returns the means (B, p) and, per data set, the number of refused sweeps."""
    hyper = checked_hyper(*hyper)
    return hierarchy_gibbs.posterior_mean_batch(Xs, ys, bayesian_lasso_prior(hyper), num_warmup, num_samples,
                                                seed=seed, noise_prior=hierarchy_gibbs.NoisePrior(hyper.c, hyper.d),
                                                scaled=True, fit_intercept=True, variates=variates)


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
