"""How good is a point estimate's own uncertainty: the Pareto k̂ of its approximation draws (PSIS).

Yao, Vehtari, Simpson & Gelman (2018), "Yes, but did it work?: Evaluating variational inference",
ICML, Sec. 3: draws ``θ_s ~ q`` of an approximation of a posterior ``p(θ | y)`` are importance
sampled towards it with the ratios ``r_s = p(θ_s, y)/q(θ_s)``; the shape ``k̂`` of the generalized
Pareto distribution fitted to the largest ratios (Pareto smoothed importance sampling, Vehtari et al.
2024, ArviZ's ``psislw``) says how far ``q`` is from ``p``: ``k̂ < 0.7`` and the draws are usable
(importance-weighted, or as they are when ``k̂`` is small), above it ``q`` misses posterior mass that
no number of draws recovers. The unknown normalizers of ``p`` and ``q`` do not change ``k̂``; when the
ratios are constant, ``q`` *is* the posterior and ``k̂ = −∞``.

The approximation here is the EM fit's Gaussian conditional (:meth:`~sparsebayes.inference.
AdaptiveSparseRegressor.gaussian_conditional`, the draws of ``to_inference_data(draws=N)``): ``N(β̂_A,
Σ)`` on the active set ``A`` with the hierarchy's scales ``τ̂`` (and σ̂²) held at the final E-step,
the pruned weights exactly zero. ``q`` has no density off ``A``, so the target is the model's
posterior of ``β_A`` with the pruned weights held at zero, ``p(β_A, y | β_{−A} = 0)``: the most
favourable comparison for ``q`` (a failure is conclusive; a pass says nothing about the pruned
weights, which the verdict's posterior judges). Its log density (:func:`log_joint`) is the model's:

* the hierarchy's marginal prior ``log p(β_i)`` with the scales integrated out (``−prior.neg_log_prior``:
  Laplace ``−√γ|β_i|``, the horseshoe's ``log(eᵘE₁(u))`` of Carvalho, Polson & Scott 2010 Thm. 1,
  Jeffreys ``−log|β_i|``, Gaussian ``−λβ_i²/2``) at the fitted global hyperparameter (γ̂ or τ̂ when
  EM estimated it: the target is then conditional on it);
* the likelihood: probit ``Σ log Φ((2y_i − 1)h_iᵀβ)``; Gaussian at a fixed σ², or, with the
  papers' flat prior on σ² (000 eq. 6), σ² integrated out: ``∫ N(y; Hβ, σ²I) dσ² ∝ RSS^{−(n/2 − 1)}``.
"""
from __future__ import annotations

import warnings

import numpy as np

#: Yao et al. (2018) / Vehtari et al. (2024): above this k̂ the approximation is not usable.
KHAT_MAX = 0.7


def pareto_khat(log_p, log_q):
    """``k̂`` of the importance ratios ``log_p − log_q`` (one per draw of ``q``; unnormalized densities)
    by ArviZ's ``psislw``; ``−inf`` when the ratios are constant (``q`` is the target up to its
    normalizer). ``ValueError`` for mismatched or non-finite input, or fewer than 10 draws."""
    log_p, log_q = np.asarray(log_p, dtype=np.float64), np.asarray(log_q, dtype=np.float64)
    if log_p.shape != log_q.shape or log_p.ndim != 1:
        raise ValueError(f"log_p and log_q must be 1-D arrays of one value per draw; got {log_p.shape}, {log_q.shape}")
    if log_p.size < 10:
        raise ValueError(f"k-hat needs at least 10 draws, got {log_p.size}")
    if not (np.all(np.isfinite(log_p)) and np.all(np.isfinite(log_q))):
        raise ValueError("log_p and log_q must be finite at every draw (a draw outside the target's support?)")
    ratios = log_p - log_q
    if np.ptp(ratios) <= 1e-9 * max(1.0, float(np.max(np.abs(ratios)))):
        return float("-inf")
    from .selection import _psislw
    return float(_psislw(ratios - np.max(ratios))[1])


def check(log_p, log_q, what="the approximation"):
    """``{"khat", "passed", "line"}``: :func:`pareto_khat` and a pass/fail line (``k̂ <`` :data:`KHAT_MAX`)."""
    k = pareto_khat(log_p, log_q)
    passed = bool(k < KHAT_MAX)
    verdict = ("pass: usable as an approximation of the posterior" if passed else
               "FAIL: the draws miss posterior mass; use the samplers' draws")
    return dict(khat=k, passed=passed, line=f"{what}: PSIS k-hat {k:.2f} (threshold {KHAT_MAX}): {verdict}")


def gaussian_log_density(draws, mean, cov):
    """``log N(x_s; mean, cov)`` per row of ``draws`` (S, d), by a Cholesky factor of ``cov``;
    ``ValueError`` when ``cov`` is not positive definite."""
    import scipy.linalg
    draws, mean = np.atleast_2d(np.asarray(draws, dtype=np.float64)), np.asarray(mean, dtype=np.float64)
    try:
        L = np.linalg.cholesky(np.asarray(cov, dtype=np.float64))
    except np.linalg.LinAlgError as err:
        raise ValueError("the approximation's covariance is not positive definite: it has no density to "
                         "compare") from err
    z = scipy.linalg.solve_triangular(L, (draws - mean).T, lower=True)
    return -0.5 * np.sum(z**2, axis=0) - np.sum(np.log(np.diag(L))) - 0.5 * mean.size * np.log(2.0 * np.pi)


def log_joint(beta, H, y, prior, likelihood="gaussian", noise_var=None):
    """``log p(β_s, y)`` up to a constant per row of ``beta`` (S, p) on the design ``H`` (module
    docstring): the hierarchy ``prior``'s marginal ``−neg_log_prior`` plus the likelihood
    (``"gaussian"`` at ``noise_var``, or with σ² integrated out under its flat prior when
    ``noise_var`` is ``None``; ``"probit"`` with ``y`` in {0, 1})."""
    import jax
    beta = np.atleast_2d(np.asarray(beta, dtype=np.float64))
    H, y = np.asarray(H, dtype=np.float64), np.asarray(y, dtype=np.float64)
    log_prior = -np.asarray(jax.vmap(prior.neg_log_prior)(beta), dtype=np.float64)
    eta = beta @ H.T
    if likelihood == "probit":
        import scipy.special
        return log_prior + scipy.special.log_ndtr((2.0 * y - 1.0) * eta).sum(axis=1)
    if likelihood != "gaussian":
        raise ValueError(f"likelihood must be 'gaussian' or 'probit', got {likelihood!r}")
    rss = np.sum((y - eta) ** 2, axis=1)
    if noise_var is None:
        n = y.size
        if n <= 2:
            raise ValueError("σ² integrated out under its flat prior needs more than 2 observations")
        return log_prior - (0.5 * n - 1.0) * np.log(rss)
    return log_prior - 0.5 * rss / float(noise_var)


def approximation_moments(est):
    """The fitted estimator's own Gaussian approximation of its posterior, where it has one:
    ``(active, mean, cov, labels)`` with ``active`` indexing the estimator's weights (its
    ``to_inference_data`` layout, the comparison's ``beta``), ``mean`` and ``cov`` the moments of the
    active weights (the pruned ones are exactly zero), ``labels`` the ``inference`` / ``prior`` /
    ``conditional_on`` attributes of its draws (``to_inference_data(draws=…)``); ``None`` for an
    estimator without one. Covered: :class:`~sparsebayes.inference.AdaptiveSparseRegressor` (the
    Gaussian conditional at the final E-step, :meth:`gaussian_conditional`), the two-class
    :class:`~sparsebayes.inference.SparseProbitClassifier` (the Laplace approximation at the mode,
    ``laplace_cov_``), the type-II regressors (``N(μ, Σ)`` at the fitted hyperparameters: ``coef_``,
    ``sigma_`` on ``active_``, 004 Sec. 2.4)."""
    from sparsebayes.inference.adaptive import AdaptiveSparseRegressor, SparseProbitClassifier
    from sparsebayes.inference import BLSRegressor, FLAPRegressor, RVMRegressor
    if isinstance(est, AdaptiveSparseRegressor):
        active, mean, cov = est.gaussian_conditional()
    elif isinstance(est, SparseProbitClassifier) and len(est.classes_) == 2:
        active = np.flatnonzero(est.beta_[0])
        mean, cov = est.beta_[0][active], est.laplace_cov_[0]
    elif isinstance(est, (RVMRegressor, BLSRegressor, FLAPRegressor)):  # the type-II regressors
        active = np.flatnonzero(np.asarray(est.active_)) if np.asarray(est.active_).dtype == bool else np.asarray(
            est.active_, dtype=np.int64)
        mean, cov = np.asarray(est.coef_)[active], est.sigma_
    else:
        return None
    attrs = est.to_inference_data(draws=1, seed=0).posterior.attrs
    labels = {k: attrs[k] for k in ("inference", "prior", "conditional_on") if k in attrs}
    return (np.asarray(active, dtype=np.int64), np.asarray(mean, dtype=np.float64),
            np.asarray(cov, dtype=np.float64).reshape(len(active), len(active)), labels)


def fit_group(est, rows):
    """The pymc-extras ``fit`` group (``fit_laplace``'s layout) of the estimator's own approximation
    (:func:`approximation_moments`) as an ``xarray.Dataset``: ``mean_vector`` (dim ``rows``) and
    ``covariance_matrix`` (``rows`` × ``columns``) over every weight, ``rows`` / ``columns`` the weights'
    names ``rows``; a pruned weight has mean 0 and a zero row and column (a point mass at zero). Attrs:
    the approximation's labels and ``active`` (how many weights it spreads). ``None`` where the estimator
    has no approximation or its weights are not ``len(rows)``."""
    import xarray as xr
    moments = approximation_moments(est)
    if moments is None:
        return None
    active, mean_a, cov_a, labels = moments
    p = len(rows)
    if active.size and active.max() >= p:
        return None
    mean, cov = np.zeros(p), np.zeros((p, p))
    mean[active] = mean_a
    cov[np.ix_(active, active)] = cov_a
    names = [str(r) for r in rows]
    return xr.Dataset({"mean_vector": (("rows",), mean), "covariance_matrix": (("rows", "columns"), cov)},
                      coords={"rows": names, "columns": names},
                      attrs={**labels, "active": int(active.size)})


def optimizer_result_group(est, method=""):
    """The pymc-extras ``optimizer_result`` group (``find_MAP``'s names) of the estimator's fit as an
    ``xarray.Dataset``: ``fun`` (the estimator's ``objective_``, in its own sign convention: a log
    evidence, a log posterior or a penalized loss, per the estimator's docstring), ``nit`` (``n_iter_``),
    ``success`` (``converged_``) where the estimator records them, and ``method`` (the routine, the point
    estimate's ``inference`` label). One value per classifier where the estimator fits several.
    ``None`` for an estimator without an objective (a sampler such as the Bayesian Lasso)."""
    import xarray as xr
    from sparsebayes.inference import BayesianLassoRegressor
    if isinstance(est, BayesianLassoRegressor) or getattr(est, "objective_", None) is None:
        return None
    data = {}
    for name, attr, dtype in (("fun", "objective_", np.float64), ("nit", "n_iter_", np.int64),
                              ("success", "converged_", bool)):
        value = getattr(est, attr, None)
        if value is not None:
            value = np.asarray(value, dtype=dtype)
            data[name] = (("classifier",) if value.ndim else (), value.reshape(-1) if value.ndim else value)
    data["method"] = ((), np.asarray(str(method)))
    sources = {"fun": "the estimator's objective_", "nit": "the estimator's n_iter_",
               "success": "the estimator's converged_"}
    return xr.Dataset(data, attrs={f"{k}_source": v for k, v in sources.items() if k in data})


def estimator_check(est, H, y, *, num_draws=4000, seed=0):
    """:func:`check` of the fitted :class:`~sparsebayes.inference.AdaptiveSparseRegressor`'s Gaussian
    conditional (or a two-class :class:`~sparsebayes.inference.SparseProbitClassifier`'s Laplace
    approximation) against its model on the design ``H`` and targets ``y`` (0/1 for the classifier):
    ``num_draws`` draws of ``to_inference_data(draws=...)``, their Gaussian log density on the active
    set and :func:`log_joint` there. Returns the dict of :func:`check` with ``n_active``, ``draws``
    (the approximation's draws, S × p), ``target`` (what ``p`` is conditional on) and ``coverage``: the
    measured coverage of this approximation's intervals on simulated data
    (:func:`sparsebayes.inference.approximation_coverage.measured_coverage`, case -> (50 %, 90 %)),
    also cited in the line; empty where it was not measured.

    TODO: the type-II estimators' and the Bernoulli RVM's Laplace draws (their twins' hierarchies
    integrate the precisions out in closed form too: the Student-t marginal of the RVM's surrogate)."""
    from sparsebayes.inference.adaptive import AdaptiveSparseRegressor, SparseProbitClassifier
    if isinstance(est, AdaptiveSparseRegressor):
        likelihood, noise = "gaussian", (None if est.noise_var is None else float(est.noise_var))
    elif isinstance(est, SparseProbitClassifier) and len(est.classes_) == 2:
        likelihood, noise = "probit", None
        y = np.asarray(y)
        if np.all(np.isin(y, est.classes_)):
            y = (y == est.classes_[1]).astype(np.float64)
        elif not np.all(np.isin(y, (0.0, 1.0))):
            raise ValueError(f"y must hold the classifier's labels {list(est.classes_)} or 0/1")
    else:
        raise ValueError(f"the approximation check covers AdaptiveSparseRegressor and the two-class "
                         f"SparseProbitClassifier; got {type(est).__name__}")
    active, mean, cov, labels = approximation_moments(est)
    if active.size == 0:
        raise ValueError("the fit pruned every weight: its approximation is a point mass at zero, with no density")
    idata = est.to_inference_data(draws=num_draws, seed=seed)
    draws = np.asarray(idata.posterior["beta"].values, dtype=np.float64).reshape(num_draws, -1)
    log_q = gaussian_log_density(draws[:, active], mean, cov)
    H = np.asarray(H, dtype=np.float64)
    log_p = log_joint(draws[:, active], H[:, active], y, est.prior_, likelihood, noise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = check(log_p, log_q, f"{labels.get('inference', 'approximation')} draws")
    given = "σ² integrated out" if likelihood == "gaussian" and noise is None else (
        f"σ² = {noise:g}" if likelihood == "gaussian" else "probit")
    coverage = coverage_of(labels)
    out.update(n_active=int(active.size), draws=draws, coverage=coverage,
               target=f"p(β_A | y, pruned weights = 0) under the fitted {type(est.prior_).__name__} ({given})")
    if coverage:
        out["line"] += " " + coverage_line(coverage)
    return out


def coverage_of(labels):
    """The measured coverage (:func:`sparsebayes.inference.approximation_coverage.measured_coverage`) of
    the approximation whose draws carry ``labels`` (their ``inference`` and ``prior`` attributes)."""
    from sparsebayes.inference.approximation_coverage import measured_coverage
    return measured_coverage(labels.get("inference"), labels.get("prior"))


def coverage_line(coverage):
    """One sentence citing measured coverage (case -> (50 %, 90 %)) and where it was measured."""
    from sparsebayes.inference.approximation_coverage import N_ROWS, N_WEIGHTS
    cases = "; ".join(f"{case}: 50 % intervals cover {c50:.2f}, 90 % intervals {c90:.2f}"
                      for case, (c50, c90) in coverage.items())
    return (f"Measured coverage of this approximation's intervals on data simulated from the model's own prior "
            f"(n = {N_ROWS}, p = {N_WEIGHTS}, 200 replications; docs/approximation_coverage.md): {cases}; an exact "
            "posterior covers 0.50 and 0.90 on average.")


def point_estimate_groups(est, rows, method=""):
    """``{"fit": …, "optimizer_result": …}``: the groups pymc-extras writes for a point estimate
    (:func:`fit_group`, :func:`optimizer_result_group`), those the estimator has."""
    groups = {"fit": fit_group(est, rows), "optimizer_result": optimizer_result_group(est, method)}
    return {name: ds for name, ds in groups.items() if ds is not None}
