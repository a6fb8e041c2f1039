"""The full posterior of the model a fitted estimator's point estimate belongs to (its "twin").

:func:`sample_posterior` samples, from a fitted estimator alone, the NumPyro model whose MAP (or
posterior summary) the estimator reports, on the same design: ``est.feature_map_.transform(X)``
(the fitted map, so standardized inputs stay standardized the same way) with the prior
``make_prior(est.prior, est.gamma)``. Its output and :func:`point_estimate_dataset` share one
naming scheme: the variable ``beta``, the dim ``basis``, the feature map's names as coords, so
``az.plot_forest([point, draws])`` gives one row per weight.

Supported: :class:`~sparsebayes.inference.AdaptiveSparseRegressor` and binary
:class:`~sparsebayes.inference.SparseProbitClassifier` with any hierarchy that has a NumPyro
sampling statement (``sample_beta``: Laplace, horseshoe), Jeffreys only on its labelled proper
surrogate ``1/τ_i ~ Gamma(ε, ε)`` (``surrogate_eps``; the Jeffreys posterior itself is improper);
and :class:`~sparsebayes.inference.BayesianLassoRegressor` (NUTS or Park–Casella Gibbs on its
centred model). For the Laplace hierarchy NUTS samples the marginal ``β_i ~ Laplace(0, 1/√γ)``,
the same posterior over ``β`` and ``σ²`` without the funnel between ``β_i`` and ``τ_i``.
"""
from __future__ import annotations

from types import SimpleNamespace

import jax
import numpy as np
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.adaptive import sparse_probit_model, sparse_regression_model
from sparsebayes.models.bayesian_lasso import bayesian_lasso
from sparsebayes.models.features import transform_validated
from sparsebayes.models.priors import hierarchy_name, make_prior, require

from ._base import basis_names
from ._validation import check_count, validate_predict_data
from .adaptive import AdaptiveSparseRegressor, SparseProbitClassifier
from .bayesian_lasso_estimator import BayesianLassoRegressor
from .gibbs import run_gibbs
from .nuts import run_nuts

#: Sites with one entry per basis function, given the dim ``basis`` in every group.
BASIS_SITES = ("beta", "tau", "tau2", "lam_local", "beta_raw", "precision_surrogate")
SUPPORTED = (AdaptiveSparseRegressor, SparseProbitClassifier, BayesianLassoRegressor)


def twin(est, X, y, *, surrogate_eps=None):
    """The model of fitted ``est`` on ``(X, y)``: a namespace with ``model``, the design ``H``, the
    targets ``y`` (0/1 for the classifier, centred for the Bayesian Lasso), the model's keyword
    arguments ``kwargs``, the basis ``names`` and a ``label`` for the prior. ``ValueError`` for an
    estimator, prior or data it cannot build."""
    if not isinstance(est, SUPPORTED):
        raise ValueError(f"compare supports {', '.join(c.__name__ for c in SUPPORTED)}; got {type(est).__name__}")
    check_is_fitted(est)
    X = validate_predict_data(est, X)
    if isinstance(est, BayesianLassoRegressor):
        if surrogate_eps is not None:
            raise ValueError("surrogate_eps applies to the Jeffreys prior; the Bayesian Lasso has its own hyperpriors")
        y = _regression_targets(y, X)
        names = basis_names(est, None, X.shape[1])
        kwargs = dict(lam2_shape=est.lam2_shape, lam2_rate=est.lam2_rate, c=est.c, d=est.d)
        return SimpleNamespace(model=bayesian_lasso, H=X - X.mean(axis=0), y=y - y.mean(), kwargs=kwargs,
                               names=names, label="bayesian-lasso")
    H = np.asarray(transform_validated(est.feature_map_, X), dtype=np.float64)
    names = basis_names(est, est.feature_map_, H.shape[1])
    prior = make_prior(est.prior, est.gamma)
    name = hierarchy_name(prior)
    if name == "jeffreys":
        if surrogate_eps is None:
            raise ValueError("the Jeffreys prior p(tau) ∝ 1/tau has no proper posterior, so there is nothing to "
                             "sample: pass surrogate_eps (e.g. 1e-3) to sample the labelled proper surrogate "
                             "1/tau ~ Gamma(eps, eps), or fit with prior='laplace' or 'horseshoe'")
        kwargs = dict(prior="jeffreys", surrogate_eps=float(surrogate_eps))
        label = f"jeffreys-surrogate-eps={surrogate_eps:g}"
    elif surrogate_eps is not None:
        raise ValueError(f"surrogate_eps applies to the Jeffreys prior, not to {name!r}")
    elif name == "laplace":
        kwargs, label = dict(prior="laplace", gamma=float(prior.gamma), marginal=True), f"laplace-gamma={prior.gamma:g}"
    else:
        kwargs, label = dict(prior=require(prior, "nuts")), name
    if isinstance(est, SparseProbitClassifier):
        if len(est.classes_) != 2:
            raise ValueError(f"the probit posterior is sampled for two classes; this classifier has {len(est.classes_)}"
                             " (one-vs-all)")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != H.shape[0] or not np.all(np.isin(y, est.classes_)):
            raise ValueError(f"y must hold {H.shape[0]} labels among the classifier's classes {list(est.classes_)}")
        return SimpleNamespace(model=sparse_probit_model, H=H, y=(y == est.classes_[1]).astype(np.float64),
                               kwargs=kwargs, names=names, label=label)
    if est.noise_var is not None:
        kwargs["noise_var"] = float(est.noise_var)
    return SimpleNamespace(model=sparse_regression_model, H=H, y=_regression_targets(y, H), kwargs=kwargs,
                           names=names, label=label)


def _regression_targets(y, X):
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {X.shape[0]} finite numbers, one per row of X")
    return y


def sample_posterior(est, X, y, sampler="nuts", *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0,
                     progress_bar=False, surrogate_eps=None, target_accept_prob=0.8):
    """Draws of the posterior of fitted ``est``'s own model on ``(X, y)`` as ``InferenceData``.

    Groups: ``posterior`` (``beta`` on dim ``basis``, coords the feature map's names),
    ``sample_stats``, ``observed_data`` and ``log_likelihood`` (``y`` on dim ``obs``, for
    ``az.loo``), ``posterior_predictive`` (``y`` drawn from the model at each draw, by
    ``numpyro.infer.Predictive``, for ``az.plot_ppc``). ``sampler``: ``"nuts"``, or ``"gibbs"``
    for the Bayesian Lasso. ``attrs["model"]`` names the prior (and a surrogate, when one is used).
    """
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    check_count("seed", seed, 0)
    coords, dims = {"basis": t.names}, {**{s: ["basis"] for s in BASIS_SITES}, "y": ["obs"]}
    if sampler == "nuts":
        kwargs = {**t.kwargs, "marginal": True} if t.model is bayesian_lasso else t.kwargs
        dims = {k: v for k, v in dims.items() if k in _sites(t.model, t.H, t.y, kwargs)}
        idata = run_nuts(t.model, t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                         seed=seed, progress_bar=bool(progress_bar), coords=coords, dims=dims, rhat_max=None,
                         target_accept_prob=target_accept_prob, **kwargs)
    elif sampler == "gibbs" and t.model is bayesian_lasso:
        kwargs = t.kwargs
        idata = run_gibbs(t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                          progress_bar=bool(progress_bar), coords={"feature": t.names}, **kwargs)
        idata = idata.rename({"feature": "basis"})
        idata = idata.rename({d: "obs" for g in ("observed_data", "log_likelihood") if g in idata.groups()
                              for d in getattr(idata, g).dims if d not in ("chain", "draw", "obs")})
    else:
        allowed = "'nuts' or 'gibbs'" if t.model is bayesian_lasso else "'nuts'"
        raise ValueError(f"sampler must be {allowed} for "
                         f"{type(est).__name__}, got {sampler!r}")
    _add_posterior_predictive(idata, t, kwargs, seed)
    idata.attrs.update(model=t.label, estimator=type(est).__name__, sampler=sampler)
    idata.posterior.attrs.update(model=t.label)
    return idata


def _sites(model, H, y, kwargs):
    from .nuts import _model_trace
    return set(_model_trace(model, (H, y), kwargs))


def _add_posterior_predictive(idata, t, kwargs, seed):
    """``y`` drawn from the model at every posterior draw (sites ``posterior`` holds substituted)."""
    import arviz as az
    from numpyro.infer import Predictive
    post = idata.posterior
    lead = (post.sizes["chain"], post.sizes["draw"])
    flat = {k: np.asarray(v.values).reshape(-1, *v.shape[2:]) for k, v in post.data_vars.items()}
    draws = Predictive(t.model, posterior_samples=flat, return_sites=["y"])(
        jax.random.PRNGKey(seed + 1), t.H, **kwargs)["y"]
    group = az.from_dict(posterior_predictive={"y": np.asarray(draws, dtype=np.float64).reshape(*lead, -1)},
                         dims={"y": ["obs"]}).posterior_predictive
    idata.add_groups(posterior_predictive=group)


def prior_beta_draws(est, X, y, *, num_draws=4000, seed=0, surrogate_eps=None, noise_var=1.0):
    """Draws ``(num_draws, p)`` of ``beta`` from the prior of ``est``'s model (``Predictive`` with no
    data). ``noise_var`` is held at the given value: the adaptive models' β prior does not depend on
    it; the Bayesian Lasso's does (``β_j``'s prior scale is ``σ/λ``), so pass the posterior median."""
    from numpyro.infer import Predictive
    check_count("num_draws (of the prior)", num_draws, 1)
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    held = {} if t.model is sparse_probit_model or "noise_var" in t.kwargs else {
        "noise_var": np.full(num_draws, float(noise_var))}
    predictive = Predictive(t.model, posterior_samples=held or None, num_samples=None if held else num_draws,
                            return_sites=["beta"])
    return np.asarray(predictive(jax.random.PRNGKey(seed), t.H, **t.kwargs)["beta"], dtype=np.float64)


def point_estimate_dataset(est, names):
    """The estimator's point estimate as an ``xarray.Dataset`` on the twin's names: ``beta`` (chain 1,
    draw 1, ``basis``) and, for regressors, ``noise_var``; attrs ``point_estimate = 1`` and the
    routine (``inference``). A binary classifier's ``classifier`` dim (one entry) is dropped. For the
    Bayesian Lasso the "point" is its posterior median ``coef_``, labelled as such."""
    import arviz as az
    if isinstance(est, BayesianLassoRegressor):
        data = {"beta": np.asarray(est.coef_, dtype=np.float64), "noise_var": est.noise_var_}
        method = f"bayesian-lasso-{est.sampler}-posterior-median"
    else:
        source = est.to_inference_data().posterior
        beta = source["beta"].values[0, 0]
        data = {"beta": beta.reshape(-1) if beta.ndim == 2 else beta}
        if "noise_var" in source:
            data["noise_var"] = float(source["noise_var"].values.ravel()[0])
        method = source.attrs.get("inference", "point-estimate")
    if data["beta"].shape != (len(names),):
        raise ValueError(f"the point estimate has {data['beta'].shape} weights, the model {len(names)}")
    ds = az.from_dict(posterior={k: np.asarray(v, dtype=np.float64)[None, None, ...] for k, v in data.items()},
                      coords={"basis": list(names)}, dims={"beta": ["basis"]}).posterior
    ds.attrs = {"point_estimate": 1, "inference": method}
    return ds
