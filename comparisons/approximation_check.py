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

The type-II regressors' approximation is ``N(μ, Σ)`` on the kept basis at the fitted hyperparameters
(004 Sec. 2.4); its target is their twin's posterior at the same hyperparameters (λ̂ for BLS and
FLAP, with the variances integrated out: a Laplace prior; α̂_i for the RVM: a Gaussian prior, so the
approximation is exact there and ``k̂ = −∞``), σ² held at σ̂², the flat-prior intercept integrated out,
the pruned weights again held at zero (:func:`_typeii_parts`). The type-II Laplace path's
approximation (the Bernoulli and Poisson RVMs: ``N(w*, Σ)`` at the mode on the kept basis,
``laplace_cov_``, at the fitted precisions ``α̂ = 1/prior_var_``; Tipping 2001 Sec. 4) has as target
its twin's posterior at those precisions: ``log p(w_A, y | α̂) = Σ_i log p(y_i | h_iᵀw) − ½ Σ_{i∈A}
α̂_i w_i²`` by the fitted likelihood object (``likelihood_.log_lik``: the twin's ``Bernoulli(logits =
Hw)`` or ``Poisson(e^{Hw})``), the pruned weights held at zero (:func:`_laplace_draws`). The Laplace
approximation of a logistic or Poisson likelihood is not exact, so ``k̂`` measures it. The estimator
is recognised by its public attributes (:func:`approximation_kind`), not its class.

The leave-one-out of each part (:func:`loo_row`, :func:`approximation_loo`, shown by
:meth:`~sparsebayes.comparisons.compare_any.Comparison.loo`) is PSIS-LOO (Vehtari, Gelman & Gabry
2017) per sampler on its ``log_likelihood`` group, and for the approximation the importance-corrected
approximate-posterior PSIS-LOO of Magnusson, Andersen, Jonasson & Vehtari (2019;
:func:`approximate_posterior_loo`): draws ``θ_s ~ q`` weighted towards the leave-one-out posterior
``p(θ | y_{−i}) ∝ p(θ | y)/p(y_i | θ)`` by ``r_{s,i} ∝ p(θ_s | y)/q(θ_s) · 1/p(y_i | θ_s)``, Pareto
smoothed per row, so that ``elpd_i = log Σ_s w_{s,i} p(y_i | θ_s)`` estimates the leave-one-out
predictive density under the target posterior ``p`` (above), not under ``q``. Each part passes when
``k̂ <`` :data:`KHAT_MAX` for every row (for the approximation also for ``p/q`` itself).
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


def approximation_kind(est):
    """Which approximation a fitted estimator carries, asked of its public attributes
    (:func:`~sparsebayes.comparisons.fitted_model.likelihood_name`), not its class: ``"probit"`` (a
    two-class probit classifier with ``laplace_cov_``: the Laplace approximation at the mode), ``"em"``
    (``gaussian_conditional``: the EM regressor's Gaussian conditional at the final E-step),
    ``"typeii"`` (a Gaussian regressor with ``sigma_`` and ``active_``: the type-II ``N(μ, Σ)`` at the
    fitted hyperparameters), ``"laplace"`` (the type-II Laplace path: ``laplace_cov_`` at the mode,
    ``prior_var_`` the fitted ``1/α̂``, a fitted ``likelihood_`` with ``log_lik``; a regressor or a
    two-class classifier: the Bernoulli and Poisson RVMs), or ``None``."""
    from .fitted_model import likelihood_name
    if not callable(getattr(est, "fit", None)):  # not an estimator
        return None
    lik = likelihood_name(est)
    if lik == "probit" and len(getattr(est, "classes_", ())) == 2 and hasattr(est, "laplace_cov_"):
        return "probit"
    if (len(getattr(est, "classes_", (0, 1))) == 2 and hasattr(est, "laplace_cov_") and hasattr(est, "prior_var_")
            and callable(getattr(getattr(est, "likelihood_", None), "log_lik", None))):
        return "laplace"
    if hasattr(est, "gaussian_conditional"):
        return "em"
    if lik == "gaussian" and hasattr(est, "sigma_") and hasattr(est, "active_") and hasattr(est, "coef_"):
        return "typeii"
    return None


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
    ``sigma_`` on ``active_``, 004 Sec. 2.4), the type-II Laplace path (``N(w*, laplace_cov_)`` on the
    kept basis, ``prior_var_ > 0``; the Bernoulli and Poisson RVMs); recognised by
    :func:`approximation_kind`. Where the estimator's draws are weights of the raw terms
    (``weights_basis_ == "raw"``: ``raw = A w`` by the feature map's linear ``raw_weights``) the moments
    are mapped with them, ``A μ`` and ``A Σ Aᵀ``, and ``active`` is the raw weights with a spread or a
    nonzero mean (a Gaussian whose covariance may be singular: the raw bias is a combination of the
    kept weights)."""
    from .fitted_model import draws_on_raw_terms, per_basis_matrix, to_raw_terms
    kind = approximation_kind(est)
    if kind == "laplace":
        var, active, mean, cov = _laplace_moments(est)
        if draws_on_raw_terms(est):
            A = per_basis_matrix(to_raw_terms(est.feature_map_), var.size)[:, active]
            mean, cov = A @ mean, A @ cov @ A.T
            active = np.flatnonzero((np.diag(cov) > 0) | (mean != 0))
            mean, cov = mean[active], cov[np.ix_(active, active)]
    elif kind == "em":
        active, mean, cov = est.gaussian_conditional()
    elif kind == "probit":
        active = np.flatnonzero(est.beta_[0])
        mean, cov = est.beta_[0][active], est.laplace_cov_[0]
    elif kind == "typeii":
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
    if getattr(est, "objective_", None) is None:
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


def _binary_targets(est, y):
    y = np.asarray(y)
    if np.all(np.isin(y, est.classes_)):
        return (y == est.classes_[1]).astype(np.float64)
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError(f"y must hold the classifier's labels {list(est.classes_)} or 0/1")
    return y.astype(np.float64)


def _fixed_noise_var(est):
    """σ² as the fitted EM regression's model record holds it (``est.posterior_model()``'s ``params``,
    :mod:`sparsebayes.inference.posterior.posterior_model`): the value the fit fixed, ``None`` where it
    estimated σ² (the model then has σ² under its flat prior)."""
    return est.posterior_model().params


def _fit_intercept(est):
    """Whether the fitted type-II regressor centred the data (a flat-prior intercept integrated out): its
    fit's options record (``_typeii_options_``, :class:`~sparsebayes.inference.estimators.typeii_fit.TypeIIOptions`)."""
    options = getattr(est, "_typeii_options_", None)
    if options is None:
        raise ValueError(f"{type(est).__name__} has no type-II fit's options record (_typeii_options_): the type-II "
                         "check covers a Gaussian type-II fit (RVMRegressor, BLSRegressor, FLAPRegressor, "
                         "SparseRegressor(method='type2'))")
    return bool(options.fit_intercept)


def _typeii_parts(est, H, y, active):
    """The type-II regressor's model given its fitted hyperparameters, on the kept columns: ``(H_c,
    y_c, log_prior, noise_var, what)``. With ``fit_intercept`` the flat-prior intercept is integrated out
    by centring ``H`` and ``y`` at the training means (``design_offset_``, ``y_offset_``: the fit's
    evidence is that of the centred data), so ``exp(−‖y_c − H_c β‖²/2σ²)`` is the likelihood of β. The
    prior is the twin's (:func:`~sparsebayes.inference.posterior.twin_typeii.typeii_twin_model`) at the fitted
    hyperparameters: BLS ``Laplace(0, σ̂/√λ̂)``, FLAP ``Laplace(0, 1/√λ̂)`` (004 eq. 7, the variances
    integrated out), their flat limit at ``λ̂ = 0``, and for the RVM (no rate) ``N(0, 1/α̂_i)`` at the
    fitted precisions, read off ``Σ⁻¹ = diag(α̂) + H_cᵀH_c/σ̂²`` (004 Sec. 2.4); σ² held at ``noise_var_``."""
    import scipy.linalg
    if H.shape[1] != np.asarray(est.coef_).size:
        raise ValueError(f"H must be the type-II estimator's full design ({np.asarray(est.coef_).size} columns, "
                         f"est._design(X)); got {H.shape[1]} columns (a design with constant columns left out?)")
    intercept = _fit_intercept(est)
    Hc = H[:, active] - (np.asarray(est.design_offset_)[active] if intercept else 0.0)
    yc = np.asarray(y, dtype=np.float64) - (float(est.y_offset_) if intercept else 0.0)
    noise = float(est.noise_var_)
    gamma = getattr(est, "gamma_", None)
    if gamma is None:  # the RVM: a Gaussian prior per kept weight at its fitted precision α̂_i
        L = np.linalg.cholesky(np.asarray(est.sigma_, dtype=np.float64))
        alpha = np.diag(scipy.linalg.cho_solve((L, True), np.eye(active.size)) - Hc.T @ Hc / noise).copy()
        if not np.all(alpha > 0):
            raise ValueError("the RVM's fitted precisions read off sigma_ are not positive: sigma_ does not match "
                             "the design given")
        return Hc, yc, lambda b: -0.5 * np.sum(alpha * b**2, axis=1), noise, "N(0, 1/α̂_i) at the fitted precisions"
    gamma = float(gamma)
    if not gamma > 0:
        return Hc, yc, lambda b: np.zeros(b.shape[0]), noise, "the flat prior (the Laplace limit λ̂ = 0)"
    scaled = getattr(est.prior_, "name", "") == "scaled_laplace"  # BLS: Laplace(0, σ/√λ), 004 eq. 7
    rate = np.sqrt(gamma / (noise if scaled else 1.0))
    what = f"Laplace(0, {'σ̂' if scaled else '1'}/√λ̂) at λ̂ = {gamma:.4g}"
    return Hc, yc, lambda b: -rate * np.sum(np.abs(b), axis=1), noise, what


def _laplace_moments(est):
    """The type-II Laplace path's ``(prior_var, active, mode, cov)`` on the design's columns: the fitted
    ``1/α̂`` (0 where pruned), the kept columns (``prior_var_ > 0``), ``beta_`` and ``laplace_cov_`` on
    them (one classifier: two classes)."""
    var = np.asarray(est.prior_var_, dtype=np.float64).reshape(-1)
    active = np.flatnonzero(var > 0)
    mode = np.asarray(est.beta_, dtype=np.float64).reshape(-1)[active]
    return var, active, mode, np.asarray(est.laplace_cov_, dtype=np.float64).reshape(active.size, active.size)


def _laplace_draws(est, H, y, num_draws, seed):
    """The type-II Laplace path's approximation (``"laplace"``, :func:`approximation_kind`: the Bernoulli
    and Poisson RVMs) set against its twin at the fitted precisions (module docstring): the estimator's own draws
    (``to_inference_data(draws=…)``, on the raw terms when ``weights_basis_ == "raw"``) mapped back to the
    design's columns ``w`` by the feature map's linear ``raw_weights`` (``raw = A w``), the pruned weights
    exactly zero; ``log_q`` of ``N(w*, laplace_cov_)`` on the kept columns, ``log_p = Σ_i log p(y_i | h_iᵀw)
    − ½ Σ_{i∈A} w_i²/prior_var_i`` (the twin's ``N(0, 1/α̂_i)`` prior, Tipping 2001 eq. 25 at the mode)
    and the pointwise ``log p(y_i | h_iᵀw)`` by the fitted ``likelihood_``. Returns
    :func:`approximation_draws`'s dict."""
    from .fitted_model import draws_on_raw_terms, per_basis_matrix, to_raw_terms
    var, active, mode, cov = _laplace_moments(est)
    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[1] != var.size:
        raise ValueError(f"H must be the estimator's design on its {var.size} basis functions "
                         f"(feature_map_.transform(X)); got shape {H.shape}")
    if active.size == 0:
        raise ValueError("the fit pruned every weight: its approximation is a point mass at zero, with no density")
    idata = est.to_inference_data(draws=num_draws, seed=seed)
    labels = {k: idata.posterior.attrs[k] for k in ("inference", "prior", "conditional_on")
              if k in idata.posterior.attrs}
    draws = np.asarray(idata.posterior["beta"].values, dtype=np.float64).reshape(num_draws, -1)
    w = (np.linalg.solve(per_basis_matrix(to_raw_terms(est.feature_map_), var.size), draws.T).T
         if draws_on_raw_terms(est) else draws.copy())
    w = w[:, active]
    eta = w @ H[:, active].T
    if getattr(est.likelihood_, "support", None) == "binary":
        y = _binary_targets(est, y)
    else:
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (H.shape[0],) or not np.all(np.isfinite(y)):
            raise ValueError(f"y must be {H.shape[0]} finite targets, one per row of H")
    log_lik = np.asarray(est.likelihood_.log_lik(y, eta), dtype=np.float64)
    log_p = log_lik.sum(axis=1) - 0.5 * np.sum(w**2 / var[active], axis=1)
    label = getattr(est.likelihood_, "label", type(est.likelihood_).__name__)
    return dict(kind="laplace", active=active, labels=labels, draws=draws, log_q=gaussian_log_density(w, mode, cov),
                log_p=log_p, log_lik=log_lik,
                target=f"p(w_A | y, pruned weights = 0) under N(0, 1/α̂_i) at the fitted precisions, {label}")


def approximation_draws(est, H, y, *, num_draws=4000, seed=0):
    """The fitted estimator's own approximation (:func:`approximation_kind`) drawn and set against its
    model on the design ``H`` (the estimator's weights' columns) and targets ``y`` (labels or 0/1 for
    the classifier). Returns a dict: ``kind``, ``active``, ``labels``, ``draws`` (S × p, the pruned
    weights exactly 0, ``to_inference_data(draws=S)``), ``log_q`` (their Gaussian density on the
    active set), ``log_p`` (the target's unnormalized log density there), ``log_lik`` (S × n, each
    row's pointwise log-likelihood at each draw, the intercept draws included for the type-II
    regressors), ``target`` (what ``p`` is conditional on). ``ValueError`` for an estimator without a
    covered approximation, or a fit that pruned every weight."""
    import scipy.special
    from .fitted_model import likelihood_name
    kind = approximation_kind(est)
    if kind == "em" and likelihood_name(est) != "gaussian":
        kind = None
    if kind is None:
        raise ValueError(f"the approximation check covers AdaptiveSparseRegressor (Gaussian likelihood), the "
                         f"two-class probit SparseProbitClassifier, the type-II regressors (RVM, BLS, FLAP) and the "
                         f"type-II Laplace path (the two-class RVMClassifier, PoissonRVMRegressor); got "
                         f"{type(est).__name__}")
    if kind == "laplace":
        return _laplace_draws(est, H, y, num_draws, seed)
    active, mean, cov, labels = approximation_moments(est)
    if active.size == 0:
        raise ValueError("the fit pruned every weight: its approximation is a point mass at zero, with no density")
    H = np.asarray(H, dtype=np.float64)
    idata = est.to_inference_data(draws=num_draws, seed=seed)
    draws = np.asarray(idata.posterior["beta"].values, dtype=np.float64).reshape(num_draws, -1)
    log_q = gaussian_log_density(draws[:, active], mean, cov)
    if kind == "typeii":
        Hc, yc, log_prior, noise, what = _typeii_parts(est, H, y, active)
        b = draws[:, active]
        log_p = log_prior(b) - 0.5 * np.sum((yc - b @ Hc.T) ** 2, axis=1) / noise
        intercept = np.asarray(idata.posterior["intercept"].values, dtype=np.float64).reshape(num_draws, 1)
        eta = intercept + draws @ H.T
        log_lik = -0.5 * (np.asarray(y, dtype=np.float64) - eta) ** 2 / noise - 0.5 * np.log(2 * np.pi * noise)
        target = (f"p(β_A | y, pruned weights = 0) under {what}, σ² = σ̂² = {noise:.4g}"
                  + (", the intercept integrated out" if _fit_intercept(est) else ""))
        return dict(kind=kind, active=active, labels=labels, draws=draws, log_q=log_q, log_p=log_p,
                    log_lik=log_lik, target=target)
    if kind == "probit":
        y = _binary_targets(est, y)
        likelihood, noise = "probit", None
        log_lik = scipy.special.log_ndtr((2.0 * y - 1.0) * (draws @ H.T))
    else:
        y = np.asarray(y, dtype=np.float64)
        fixed = _fixed_noise_var(est)
        likelihood, noise = "gaussian", (None if fixed is None else float(fixed))
        sigma2 = noise if noise is not None else float(est.noise_var_)
        log_lik = -0.5 * (y - draws @ H.T) ** 2 / sigma2 - 0.5 * np.log(2 * np.pi * sigma2)
    log_p = log_joint(draws[:, active], H[:, active], y, est.prior_, likelihood, noise)
    given = "σ² integrated out" if likelihood == "gaussian" and noise is None else (
        f"σ² = {noise:g}" if likelihood == "gaussian" else "probit")
    return dict(kind=kind, active=active, labels=labels, draws=draws, log_q=log_q, log_p=log_p, log_lik=log_lik,
                target=f"p(β_A | y, pruned weights = 0) under the fitted {type(est.prior_).__name__} ({given})")


def estimator_check(est, H, y, *, num_draws=4000, seed=0):
    """:func:`check` of the fitted estimator's own approximation (:func:`approximation_draws`: the
    :class:`~sparsebayes.inference.AdaptiveSparseRegressor`'s Gaussian conditional, a two-class probit
    :class:`~sparsebayes.inference.SparseProbitClassifier`'s Laplace approximation, a type-II
    regressor's ``N(μ, Σ)`` at its fitted hyperparameters) against its model on the design ``H`` and
    targets ``y`` (0/1 or the labels for the classifier): ``num_draws`` draws of
    ``to_inference_data(draws=...)``, their Gaussian log density on the active set against the target
    there. For the type-II regressors the target is the twin's posterior at the fitted λ̂ (or α̂) and σ̂²
    on the kept weights, the pruned ones held at 0 (:func:`_typeii_parts`; the line says so). Returns
    the dict of :func:`check` with ``n_active``, ``draws`` (the approximation's draws, S × p),
    ``target`` (what ``p`` is conditional on) and ``coverage``: the measured coverage of this
    approximation's intervals on simulated data
    (:func:`sparsebayes.inference.posterior.approximation_coverage.measured_coverage`, case -> (50 %, 90 %)),
    also cited in the line; empty where it was not measured. The two-class Bernoulli RVM's Laplace
    draws are set against its twin at the fitted precisions (:func:`_laplace_draws`)."""
    a = approximation_draws(est, H, y, num_draws=num_draws, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = check(a["log_p"], a["log_q"], f"{a['labels'].get('inference', 'approximation')} draws")
    if a["kind"] in ("typeii", "laplace"):
        out["line"] += (f" (target: the model at the fitted hyperparameters on the {a['active'].size} kept weights, "
                        "the pruned weights held at 0)")
    coverage = coverage_of(a["labels"])
    out.update(n_active=int(a["active"].size), draws=a["draws"], coverage=coverage, target=a["target"])
    if coverage:
        out["line"] += " " + coverage_line(coverage)
    return out


def approximate_posterior_loo(log_lik, log_p, log_q):
    """Importance-corrected leave-one-out of draws of an approximate posterior (Magnusson, Andersen,
    Jonasson & Vehtari 2019, "Bayesian leave-one-out cross-validation for large data", ICML):
    ``θ_s ~ q`` (independent draws, relative efficiency 1) with ``log_lik`` (S, n) the pointwise
    ``log p(y_i | θ_s)``, ``log_p`` (S,) the target posterior's unnormalized log density and ``log_q``
    (S,) the approximation's. The leave-one-out posterior is ``p(θ | y_{−i}) ∝ p(θ | y)/p(y_i | θ)``, so
    the ratios towards it are

        ``r_{s,i} ∝ p(θ_s | y)/q(θ_s) · 1/p(y_i | θ_s)``,

    Pareto smoothed per row (PSIS, ArviZ's ``psislw``) into normalized weights ``w_{s,i}``, and

        ``elpd_i = log Σ_s w_{s,i} p(y_i | θ_s)``.

    The in-sample ``lpd_i = log Σ_s v_s p(y_i | θ_s)`` uses the smoothed weights ``v_s`` of ``p/q``
    alone (the target posterior's, not ``q``'s), and ``p_loo = Σ_i (lpd_i − elpd_i)``. When ``q`` is the
    posterior (constant ``p/q``) this is PSIS-LOO on the draws (Vehtari, Gelman & Gabry 2017). Unknown
    normalizers of ``p`` and ``q`` cancel in the normalized weights.

    Returns a dict: ``elpd_loo`` (Σ elpd_i), ``se`` (``√(n var(elpd_i))``, ``az.loo``'s), ``p_loo``,
    ``elpd_i`` (n,), ``pareto_k`` (n,: the k̂ of each row's combined ratios), ``khat_approximation``
    (the k̂ of ``p/q``, :func:`pareto_khat`). ``ValueError`` for mismatched shapes, non-finite values or
    fewer than 10 draws."""
    from .selection import _loo_pointwise, _psis_log_weights
    log_lik = np.asarray(log_lik, dtype=np.float64)
    log_p, log_q = np.asarray(log_p, dtype=np.float64), np.asarray(log_q, dtype=np.float64)
    if log_lik.ndim != 2 or log_p.shape != (log_lik.shape[0],) or log_q.shape != log_p.shape:
        raise ValueError(f"log_lik must be (draws, rows) and log_p, log_q one value per draw; got {log_lik.shape}, "
                         f"{log_p.shape}, {log_q.shape}")
    if not np.all(np.isfinite(log_lik)):
        raise ValueError("log_lik must be finite at every draw and row")
    khat_q = pareto_khat(log_p, log_q)  # validates log_p, log_q (finite, >= 10 draws)
    correction = (log_p - log_q) - np.max(log_p - log_q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # _psis_log_weights smooths the ratios −(its argument) per row: −log p(y_i | θ_s) + log p/q
        lw, k = _psis_log_weights(log_lik - correction[:, None])
        v, _ = _psis_log_weights(-correction[:, None])
    elpd_i = _loo_pointwise(lw, log_lik)
    lpd_i = _loo_pointwise(np.repeat(v, log_lik.shape[1], axis=0), log_lik)
    n = elpd_i.size
    return dict(elpd_loo=float(np.sum(elpd_i)), se=float(np.sqrt(n * np.var(elpd_i))),
                p_loo=float(np.sum(lpd_i - elpd_i)), elpd_i=elpd_i, pareto_k=np.asarray(k, dtype=np.float64),
                khat_approximation=khat_q)


#: The ``method`` of :func:`approximation_loo`'s row and of :func:`loo_row`'s.
APPROXIMATE_LOO = "approximate-posterior PSIS-LOO"
PSIS_LOO = "PSIS-LOO"


def approximation_loo(est, H, y, *, num_draws=4000, seed=0):
    """The importance-corrected approximate-posterior PSIS-LOO (:func:`approximate_posterior_loo`,
    Magnusson et al. 2019) of the estimator's own approximation: its draws, their Gaussian density
    ``log_q`` and the target's ``log_p`` (:func:`approximation_draws`: the model's posterior of the kept
    weights, at the fitted hyperparameters where the estimator fixes them), with their pointwise
    log-likelihood. Returns :func:`loo_row`'s keys plus ``khat_approximation`` (the k̂ of ``p/q``). The
    part passes when every row's k̂ and that of ``p/q`` are below :data:`KHAT_MAX`: then the draws,
    reweighted, estimate the target posterior's leave-one-out predictive densities. Where the target
    integrates σ² out (the EM regressor with ``noise_var=None``) the pointwise likelihood is at σ̂², so the
    left-out row's factor ``1/p(y_i | β, σ̂²)`` is that of the conditional model (σ² held)."""
    a = approximation_draws(est, H, y, num_draws=num_draws, seed=seed)
    res = approximate_posterior_loo(a["log_lik"], a["log_p"], a["log_q"])
    k = res["pareto_k"]
    k_max = float(np.max(k)) if np.all(np.isfinite(k) | (k == -np.inf)) else float("inf")
    n_bad = int(np.sum(~(k < KHAT_MAX)))
    kq = res["khat_approximation"]
    passed = n_bad == 0 and kq < KHAT_MAX
    what = f"{a['labels'].get('inference', 'approximation')} draws, importance-corrected towards the posterior"
    failures = ([f"{n_bad} of {k.size} rows have k-hat >= {KHAT_MAX}"] if n_bad else []) + (
        [f"p/q has k-hat {kq:.2f} >= {KHAT_MAX}: the draws miss posterior mass"] if kq >= KHAT_MAX else [])
    verdict = (f"pass: k-hat < {KHAT_MAX} for all rows and for p/q" if passed else
               "FAIL: " + "; ".join(failures) + "; the leave-one-out estimate is unreliable")
    line = (f"{what} (Magnusson et al. 2019): {APPROXIMATE_LOO} elpd {res['elpd_loo']:.2f} (SE {res['se']:.2f}), "
            f"max Pareto k {k_max:.2f}, k-hat of p/q {kq:.2f}: {verdict}")
    return dict(method=APPROXIMATE_LOO, elpd_loo=res["elpd_loo"], se=res["se"], p_loo=res["p_loo"],
                pareto_k_max=k_max, n_bad_k=n_bad, khat_approximation=kq, passed=bool(passed), line=line)


def loo_row(idata, what):
    """``az.loo`` of ``idata``'s ``log_likelihood`` group as a dict: ``method`` (:data:`PSIS_LOO`),
    ``elpd_loo``, ``se``, ``p_loo``, ``pareto_k_max``, ``n_bad_k`` (rows with ``k̂ ≥`` :data:`KHAT_MAX`),
    ``passed`` (``k̂ <`` :data:`KHAT_MAX` for all rows: every leave-one-out posterior is within reach of
    importance sampling) and ``line``."""
    import arviz as az
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = az.loo(idata, pointwise=True)
    elpd = float(res.elpd_loo if hasattr(res, "elpd_loo") else res.elpd)  # ArviZ 0.x / 1.x
    p_loo = float(res.p_loo if hasattr(res, "p_loo") else getattr(res, "p", np.nan))
    k = np.asarray(res.pareto_k, dtype=np.float64).reshape(-1)
    k_max = float(np.max(k)) if np.all(np.isfinite(k)) else float("inf")
    n_bad = int(np.sum(~(k < KHAT_MAX)))
    passed = n_bad == 0
    verdict = (f"pass: k-hat < {KHAT_MAX} for all rows" if passed else
               f"FAIL: {n_bad} of {k.size} rows have k-hat >= {KHAT_MAX}; their leave-one-out estimate is unreliable")
    return dict(method=PSIS_LOO, elpd_loo=elpd, se=float(res.se), p_loo=p_loo, pareto_k_max=k_max, n_bad_k=n_bad,
                passed=passed, line=f"{what}: PSIS-LOO elpd {elpd:.2f} (SE {float(res.se):.2f}), max Pareto k "
                f"{k_max:.2f}: {verdict}")


def coverage_of(labels):
    """The measured coverage (:func:`sparsebayes.inference.posterior.approximation_coverage.measured_coverage`) of
    the approximation whose draws carry ``labels`` (their ``inference`` and ``prior`` attributes)."""
    from sparsebayes.inference.posterior.approximation_coverage import measured_coverage
    return measured_coverage(labels.get("inference"), labels.get("prior"))


def coverage_line(coverage):
    """One sentence citing measured coverage (case -> (50 %, 90 %)) and where it was measured."""
    from sparsebayes.inference.posterior.approximation_coverage import N_ROWS, N_WEIGHTS
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
