"""The full posterior of the model a fitted estimator's point estimate belongs to (its "twin").

:func:`sample_posterior` samples, from a fitted estimator alone, the NumPyro model whose MAP (or
posterior summary) the estimator reports, on the same design: ``est.feature_map_.transform(X)``
(the fitted map, so standardized inputs stay standardized the same way) with the prior
``make_prior(est.prior, est.gamma, est.gamma_prior)`` (a hyperparameter EM estimated is sampled under
its hyperprior). Its output and :func:`point_estimate_dataset` share one
naming scheme: the variable ``beta``, the dim ``basis``, the feature map's names as coords, so
``az.plot_forest([point, draws])`` gives one row per weight.

Supported: :class:`~sparsebayes.inference.AdaptiveSparseRegressor` and binary
:class:`~sparsebayes.inference.SparseProbitClassifier` with any hierarchy that has a NumPyro
sampling statement (``sample_beta``: Laplace, horseshoe), Jeffreys only on its labelled proper
surrogate ``1/τ_i ~ Gamma(ε, ε)`` (``surrogate_eps``; the Jeffreys posterior itself is improper);
and :class:`~sparsebayes.inference.BayesianLassoRegressor` (NUTS or Park–Casella Gibbs on its
centred model); and, through :mod:`sparsebayes.inference.twin_builders`, the type-II regressors
(RVM on its labelled surrogate, BLS and FLAP at their fitted λ), the two-class Bernoulli RVM (on
its surrogate) and SMLR (weights on ``basis`` × ``class``, the layout of ``coef_``). Gibbs runs
where the model has conditionally conjugate conditionals: the Bayesian Lasso, the type-II
regressors' twins (:mod:`sparsebayes.inference.twin_typeii`), and the regressor with a hierarchy
that has them (the horseshoe, Makalic & Schmidt 2016, :mod:`sparsebayes.inference.hierarchy_gibbs`)
and σ² estimated. For the Laplace hierarchy NUTS samples the marginal ``β_i ~ Laplace(0, 1/√γ)``,
the same posterior over ``β`` and ``σ²`` without the funnel between ``β_i`` and ``τ_i``. For a
hierarchy with the ``"nuts-collapsed"`` capability (the horseshoe) under the Gaussian likelihood NUTS
samples the hierarchy's scales with ``β`` integrated out and ``β`` is drawn from its Gaussian
conditional (:mod:`sparsebayes.inference.collapsed_nuts`): neither form of the statement itself
(centred: a funnel; non-centred: a curved ridge) let NUTS pass its diagnostics there. NUTS runs
with the settings the hierarchy declares (``nuts_settings``) unless given others.
"""
from __future__ import annotations

from types import SimpleNamespace

import jax
import numpy as np
from sklearn.utils.validation import check_is_fitted
from sparsebayes.models.adaptive import sparse_probit_model, sparse_regression_model
from sparsebayes.models.bayesian_lasso import bayesian_lasso
from sparsebayes.models.features import transform_validated
from sparsebayes.models.priors import hierarchy_name, make_prior, require, supports

from . import collapsed_nuts, twin_builders
from ._base import basis_names
from ._validation import check_count, validate_predict_data
from .adaptive import AdaptiveSparseRegressor, SparseProbitClassifier
from .bayesian_lasso_estimator import BayesianLassoRegressor
from .gibbs import run_gibbs
from .nuts import run_nuts

#: Sites with one entry per basis function, given the dim ``basis`` in every group.
BASIS_SITES = ("beta", "tau", "tau2", "lam_local", "beta_raw", "precision_surrogate")
SUPPORTED = (AdaptiveSparseRegressor, SparseProbitClassifier, BayesianLassoRegressor, *twin_builders.SUPPORTED)


def twin(est, X, y, *, surrogate_eps=None, train=None):
    """The model of fitted ``est`` on ``(X, y)``: a namespace with ``model``, the design ``H``, the
    targets ``y`` (0/1 for the classifier, centred for the Bayesian Lasso), the model's keyword
    arguments ``kwargs``, the basis ``names`` and a ``label`` for the prior; ``y_offset``, what
    the model's ``y`` was shifted by (the training mean for the Bayesian Lasso, else 0); and the
    fields :mod:`~sparsebayes.inference.twin_builders` documents (``gibbs``, ``weight_site``,
    ``to_weights``, ``weight_dims``, ``weight_coords``, ``site_dims``, ``site_coords``, ``keep``).
    ``ValueError`` for an estimator, prior or data it cannot build.

    ``train``: the twin of the training data, when ``(X, y)`` are held-out rows. The design of new
    rows must be the training model's, so what the twin takes from the data (the Bayesian Lasso's
    centring, the type-II twins' columns left out as constant) is taken from ``train``.
    """
    if not isinstance(est, SUPPORTED):
        raise ValueError(f"compare supports {', '.join(c.__name__ for c in SUPPORTED)}; got {type(est).__name__}")
    check_is_fitted(est)
    if isinstance(est, twin_builders.SUPPORTED):
        t = twin_builders.build(est, X, y, surrogate_eps, keep=None if train is None else train.keep)
        t.y_offset = 0.0
        return t
    t = _em_twin(est, X, y, surrogate_eps, None if train is None else train.centre)
    t.gibbs = _bayesian_lasso_gibbs if t.model is bayesian_lasso else (
        _hierarchy_gibbs if t.model is sparse_regression_model and supports(t.prior, "gibbs") else None)
    t.__dict__.update({k: v for k, v in twin_builders._layout(t.names).items() if k not in t.__dict__})
    return t


def _em_twin(est, X, y, surrogate_eps, centre=None):
    X = validate_predict_data(est, X)
    if isinstance(est, BayesianLassoRegressor):
        if surrogate_eps is not None:
            raise ValueError("surrogate_eps applies to the Jeffreys prior; the Bayesian Lasso has its own hyperpriors")
        X, y = np.ascontiguousarray(X), _regression_targets(y, X)  # the estimator's centring (its layout too)
        names = basis_names(est, None, X.shape[1])
        kwargs = dict(lam2_shape=est.lam2_shape, lam2_rate=est.lam2_rate, c=est.c, d=est.d)
        x_mean, y_mean = (X.mean(axis=0), float(y.mean())) if centre is None else centre
        return SimpleNamespace(model=bayesian_lasso, H=X - x_mean, y=y - y_mean, kwargs=kwargs, names=names,
                               label="bayesian-lasso", centre=(x_mean, y_mean), y_offset=y_mean, keep=None)
    H = np.asarray(transform_validated(est.feature_map_, X), dtype=np.float64)
    names = basis_names(est, est.feature_map_, H.shape[1])
    # the model the estimator fitted: with its hyperprior on a shared hyperparameter, not at its start
    prior = make_prior(est.prior, est.gamma, est.gamma_prior)
    name = hierarchy_name(prior)
    if hasattr(prior, "nuts_twin"):  # a hierarchy that writes its twin through the papers' model arguments
        kwargs, label = prior.nuts_twin(surrogate_eps)
    elif surrogate_eps is not None:
        raise ValueError(f"surrogate_eps applies to the Jeffreys prior, not to {name!r}")
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
                               kwargs=kwargs, names=names, label=label, prior=prior, centre=None, y_offset=0.0,
                               keep=None)
    if est.noise_var is not None:
        kwargs["noise_var"] = float(est.noise_var)
    return SimpleNamespace(model=sparse_regression_model, H=H, y=_regression_targets(y, H), kwargs=kwargs,
                           names=names, label=label, prior=prior, centre=None, y_offset=0.0, keep=None)


def _regression_targets(y, X):
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {X.shape[0]} finite numbers, one per row of X")
    return y


def sample_posterior(est, X, y, sampler="nuts", *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0,
                     progress_bar=False, surrogate_eps=None, target_accept_prob=None, X_test=None, y_test=None):
    """Draws of the posterior of fitted ``est``'s own model on ``(X, y)`` as ``InferenceData``.

    Groups: ``posterior`` (``beta`` on dim ``basis``, coords the feature map's names),
    ``sample_stats``, ``observed_data`` and ``log_likelihood`` (``y`` on dim ``obs``, for
    ``az.loo``), ``posterior_predictive`` (``y`` drawn from the model at each draw, by
    ``numpyro.infer.Predictive``, for ``az.plot_ppc``). ``sampler``: ``"nuts"``, or ``"gibbs"``
    where the twin has a Gibbs sampler (``ValueError`` naming the hierarchy otherwise).
    ``attrs["model"]`` names the prior (and a surrogate, or a hyperparameter held at its fitted
    value, when one is). ``target_accept_prob``: NUTS's; ``None`` is the one the hierarchy declares
    (``nuts_settings``, :func:`sparsebayes.inference.nuts.settings`), else 0.8; the one used is in
    ``posterior.attrs``.

    With held-out rows ``X_test``, ``y_test`` the group ``predictions`` holds, per draw and test row,
    the model's ``log_lik`` and its predictive ``mean`` (regression) or class probabilities ``prob``
    (on ``class_code``, the index into ``est.classes_``), for held-out scores of the sampled model
    (:mod:`sparsebayes.inference.twin_predictive`).
    """
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    t_test = None if X_test is None else twin(est, X_test, y_test, surrogate_eps=surrogate_eps, train=t)
    check_count("seed", seed, 0)
    coords = {"basis": t.names, **t.site_coords}
    dims = {**{s: ["basis"] for s in BASIS_SITES}, "y": ["obs"], **t.site_dims}
    kwargs = t.kwargs
    if sampler == "nuts" and collapsed_nuts.collapsible(getattr(t, "prior", None), t.model, t.kwargs, t.H.shape[1]):
        # the hierarchy's scales by NUTS with β integrated out, β from its Gaussian conditional
        idata = collapsed_nuts.run(t, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                                   seed=seed, coords=coords, progress_bar=bool(progress_bar),
                                   target_accept_prob=target_accept_prob)
    elif sampler == "nuts":
        kwargs = {**t.kwargs, "marginal": True} if t.model is bayesian_lasso else t.kwargs
        dims = {k: v for k, v in dims.items() if k in _sites(t.model, t.H, t.y, kwargs)}
        idata = run_nuts(t.model, t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                         seed=seed, progress_bar=bool(progress_bar), coords=coords, dims=dims, rhat_max=None,
                         target_accept_prob=target_accept_prob, **kwargs)
    elif sampler == "gibbs" and t.gibbs is not None:
        if t.model is sparse_regression_model:
            require(t.prior, "gibbs")  # names the hierarchy when it has no conditionals
        idata = t.gibbs(t, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                        coords=coords, progress_bar=bool(progress_bar))
    elif sampler == "gibbs":
        if t.model is sparse_regression_model:
            require(t.prior, "gibbs")
        raise ValueError(f"sampler 'gibbs' needs Gibbs conditionals; the model of {type(est).__name__} "
                         f"({t.label}) has none here: use sampler='nuts'")
    else:
        allowed = "'nuts' or 'gibbs'" if t.gibbs is not None else "'nuts'"
        raise ValueError(f"sampler must be {allowed} for "
                         f"{type(est).__name__}, got {sampler!r}")
    _add_posterior_predictive(idata, t, kwargs, seed)
    if t_test is not None:
        from .twin_predictive import add_predictions
        add_predictions(idata, t_test, kwargs, n_classes=len(est.classes_) if hasattr(est, "classes_") else None,
                        seed=seed + 2)
    idata = _to_weight_layout(idata, t)
    idata.attrs.update(model=t.label, estimator=type(est).__name__, sampler=sampler)
    idata.posterior.attrs.update(model=t.label)
    return idata


def default_samplers(est):
    """The samplers :func:`sparsebayes.compare` runs on fitted ``est``'s posterior unless told which:
    NUTS and Gibbs where the model has a Gibbs sampler (:func:`gibbs_able`), two exact samplers of one
    posterior that check each other; NUTS alone elsewhere."""
    return ("nuts", "gibbs") if gibbs_able(est) else ("nuts",)


def _hierarchy(est):
    """The hierarchy object of an EM estimator's model, else ``None``."""
    if isinstance(est, (AdaptiveSparseRegressor, SparseProbitClassifier)):
        return make_prior(est.prior, est.gamma, est.gamma_prior)
    return None


def gibbs_able(est):
    """Whether fitted ``est``'s model has a Gibbs sampler here: the Bayesian Lasso, the type-II
    regressors' twins, or the regressor with a hierarchy that has Gibbs conditionals and σ²
    estimated (flat prior, as the engine's)."""
    if isinstance(est, (BayesianLassoRegressor, *twin_builders.TYPEII)):
        return not twin_builders.flat_limit(est)
    if not isinstance(est, AdaptiveSparseRegressor):
        return False
    return supports(_hierarchy(est), "gibbs") and est.noise_var is None


def _to_weight_layout(idata, t):
    """The weights in the point estimate's layout (``t.to_weights`` of the model's ``weight_site``,
    as ``beta`` on ``t.weight_dims``), in every group that has the site."""
    if t.to_weights is None and t.weight_site == "beta":
        return idata
    import xarray as xr

    from .arviz_compat import dataset, groups, set_group
    for group in groups(idata):
        ds = dataset(idata, group)
        if t.weight_site not in ds:
            continue
        site = ds[t.weight_site]
        lead = [d for d in site.dims if d in ("chain", "draw")]
        values = (t.to_weights or (lambda w: w))(site.values)
        weights = xr.DataArray(values, dims=(*lead, *t.weight_dims),
                               coords={**{d: site.coords[d] for d in lead}, **t.weight_coords})
        ds = ds.drop_vars(t.weight_site).assign(beta=weights)
        unused = [d for d in t.site_coords if not any(d in v.dims for v in ds.data_vars.values())]
        set_group(idata, group, ds.drop_vars(unused, errors="ignore"))
    return idata


def _bayesian_lasso_gibbs(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar):
    """Park–Casella Gibbs (:func:`~sparsebayes.inference.gibbs.run_gibbs`) on the dims of the NUTS twin."""
    idata = run_gibbs(t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                      progress_bar=progress_bar, coords={"basis": t.names}, **t.kwargs)
    from .arviz_compat import dataset, has_group, rename_dims, set_group
    rename_dims(idata, {d: "obs" for g in ("observed_data", "log_likelihood") if has_group(idata, g)
                        for d in dataset(idata, g).dims if d not in ("chain", "draw", "obs")})
    if not has_group(idata, "sample_stats"):  # the Gibbs sweeps' own statistic: the data's log likelihood
        set_group(idata, "sample_stats", idata.log_likelihood["y"].sum("obs").to_dataset(name="log_lik"))
    return idata


def _hierarchy_gibbs(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar=False):
    """:func:`sparsebayes.inference.hierarchy_gibbs.run` on the twin's design (its bias column keeps
    the hierarchy's prior, as in the NUTS twin, so no intercept is integrated out) as
    ``InferenceData`` with the NUTS twin's names: ``beta``, ``noise_var``, and the sites the
    hierarchy's ``gibbs_twin_sites`` gives (the horseshoe's ``lam_local``, ``beta_raw``: ``β = τ λ z``);
    ``log_likelihood`` and ``observed_data`` ``y``."""
    import time

    import scipy.stats

    from . import hierarchy_gibbs
    from .arviz_compat import from_dict

    if "noise_var" in t.kwargs:
        raise ValueError("the Gibbs sampler puts the flat prior on σ² (000 eq. 6); this estimator fixes noise_var: "
                         "use sampler='nuts'")
    start = time.perf_counter()
    states, infos = hierarchy_gibbs.run(t.H, t.y, t.prior, num_warmup=num_warmup, num_samples=num_samples,
                                        num_chains=num_chains, seed=seed, fit_intercept=False,
                                        progress_bar=progress_bar)
    seconds = time.perf_counter() - start
    beta, noise_var = np.asarray(states.beta), np.asarray(states.noise_var)
    post = {"beta": beta, "noise_var": noise_var}
    if hasattr(t.prior, "gibbs_twin_sites"):  # the NUTS twin's own sites, where the hierarchy names them
        post.update(t.prior.gibbs_twin_sites(beta, states.aux))
    loglik = scipy.stats.norm.logpdf(t.y, np.einsum("cdp,np->cdn", beta, t.H), np.sqrt(noise_var)[..., None])
    idata = from_dict({"posterior": post, "sample_stats": {"log_lik": np.asarray(infos.log_lik),
                                                           "log_min_variance": np.asarray(infos.log_min_variance)},
                       "log_likelihood": {"y": loglik}, "observed_data": {"y": t.y}}, coords=coords,
                      dims={**{k: ["basis"] for k, v in post.items() if np.ndim(v) == 3}, "y": ["obs"]})
    idata.posterior.attrs.update(sampling_seconds=seconds, inference="hierarchy-gibbs")
    return idata


def _sites(model, H, y, kwargs):
    from .nuts import _model_trace
    return set(_model_trace(model, (H, y), kwargs))


def _add_posterior_predictive(idata, t, kwargs, seed):
    """``y`` drawn from the model at every posterior draw (sites ``posterior`` holds substituted)."""
    from numpyro.infer import Predictive

    from .arviz_compat import group_from_dict, set_group
    post = idata.posterior
    lead = (post.sizes["chain"], post.sizes["draw"])
    flat = {k: np.asarray(v.values).reshape(-1, *v.shape[2:]) for k, v in post.data_vars.items()}
    draws = Predictive(t.model, posterior_samples=flat, return_sites=["y"])(
        jax.random.PRNGKey(seed + 1), t.H, **kwargs)["y"]
    set_group(idata, "posterior_predictive",
              group_from_dict("posterior_predictive", {"y": np.asarray(draws, dtype=np.float64).reshape(*lead, -1)},
                              dims={"y": ["obs"]}))


def prior_beta_draws(est, X, y, *, num_draws=4000, seed=0, surrogate_eps=None, noise_var=1.0):
    """Draws ``(num_draws, p)`` of the weights from the prior of ``est``'s model (``Predictive`` with no
    data), flattened in the point estimate's layout. ``noise_var`` is held at the given value (and a
    flat-prior intercept at 0): the adaptive models' β prior does not depend on it; the Bayesian
    Lasso's and BLS's do (``β_j``'s prior scale is ``σ/λ``), so pass the posterior median."""
    from numpyro.infer import Predictive
    check_count("num_draws (of the prior)", num_draws, 1)
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    if t.kwargs.get("hierarchy") == "flat":  # no draws from a flat prior: its mass near any point is 0 (|β| = ∞)
        draws = np.full((num_draws, t.H.shape[1]), np.inf)
        return np.asarray(t.to_weights(draws) if t.to_weights else draws).reshape(num_draws, -1)
    sites = _sites(t.model, t.H, t.y, t.kwargs)
    held = {}
    if "noise_var" in sites and "noise_var" not in t.kwargs and t.model is not sparse_probit_model:
        held["noise_var"] = np.full(num_draws, float(noise_var))
    if "intercept" in sites:
        held["intercept"] = np.zeros(num_draws)
    predictive = Predictive(t.model, posterior_samples=held or None, num_samples=None if held else num_draws,
                            return_sites=[t.weight_site])
    draws = np.asarray(predictive(jax.random.PRNGKey(seed), t.H, **t.kwargs)[t.weight_site], dtype=np.float64)
    return np.asarray(t.to_weights(draws) if t.to_weights else draws).reshape(num_draws, -1)


def point_estimate_dataset(est, names, dims=("basis",), coords=None):
    """The estimator's point estimate as an ``xarray.Dataset`` on the twin's layout: ``beta`` (chain 1,
    draw 1, ``dims``: ``basis``, and ``class`` for SMLR, coords ``coords``, default ``{"basis":
    names}``) and, where the estimator has them, ``noise_var``, ``intercept`` and the shared
    hyperparameters EM estimated under their twin's site names (``gamma``, ``tau_global``: the
    hierarchy's ``estimated_sites``), so every scalar the twin samples has its point beside it; attrs
    ``point_estimate = 1`` and the routine (``inference``). A binary classifier's ``classifier`` dim
    (one entry) is dropped. For the Bayesian Lasso the "point" is its posterior median ``coef_``,
    labelled as such."""
    from .arviz_compat import group_from_dict
    coords = {"basis": list(names)} if coords is None else coords
    if isinstance(est, BayesianLassoRegressor):
        data = {"beta": np.asarray(est.coef_, dtype=np.float64), "noise_var": est.noise_var_}
        method = f"bayesian-lasso-{est.sampler}-posterior-median"
    else:
        source = est.to_inference_data().posterior
        weights = source["beta" if "beta" in source else "coef"]
        beta = weights.values[0, 0]
        data = {"beta": beta.reshape(-1) if "classifier" in weights.dims else beta}
        estimated = getattr(getattr(est, "prior_", None), "estimated_sites", dict)()
        for name in ("noise_var", "intercept", *estimated):
            if name in source:
                data[name] = float(source[name].values.ravel()[0])
        method = source.attrs.get("inference", "point-estimate")
    shape = tuple(len(coords[d]) for d in dims)
    if data["beta"].shape != shape:
        raise ValueError(f"the point estimate has {data['beta'].shape} weights, the model {shape}")
    ds = group_from_dict("posterior", {k: np.asarray(v, dtype=np.float64)[None, None, ...] for k, v in data.items()},
                         coords=coords, dims={"beta": list(dims)})
    ds.attrs = {"point_estimate": 1, "inference": method}
    return ds
