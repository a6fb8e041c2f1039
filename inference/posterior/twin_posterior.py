"""The full posterior of the model a fitted estimator's point estimate belongs to (its "twin").

:func:`sample_posterior` samples, from a fitted estimator alone, the NumPyro model whose MAP (or
posterior summary) the estimator reports, on the same design. The twin is what the estimator says its
model is, by its hook ``est.posterior_model(X, y)`` (:mod:`sparsebayes.inference.posterior.posterior_model`),
never by its class: an estimator whose model is (hierarchy, likelihood, design) gives the one model
:func:`sparsebayes.models.model.sparse_model` on ``est.feature_map_.transform(X)`` (the fitted map,
so standardized inputs stay standardized the same way), its fitted hierarchy (a hyperparameter EM
estimated is sampled under its hyperprior) and its likelihood (any with an observation statement:
Gaussian, probit, logistic, Poisson, Student-t, negative binomial, a user's registered one); the
Bayesian Lasso, the type-II regressors, the Bernoulli RVM and SMLR give theirs through
:mod:`sparsebayes.inference.posterior.twin_builders`. Its output and :func:`point_estimate_dataset` share one
naming scheme: the variable ``beta``, the dim ``basis``, the feature map's names as coords, so
``az.plot_forest([point, draws])`` gives one row per weight; every site of the model with one entry per
weight is on ``basis`` (:func:`basis_sites`, read from the model's trace).

Improper posteriors are sampled only on a labelled proper surrogate (Jeffreys, the RVM's ARD:
``surrogate_eps``). Gibbs runs where the record has a sampler (its ``gibbs``): the Bayesian Lasso, the
type-II regressors' twins, the Gaussian regressor with a hierarchy that has Gibbs conditionals and σ²
estimated, and a likelihood with a conjugate augmentation (probit, logistic, Student-t, negative
binomial) under a hierarchy with Gibbs conditionals (the Laplace one as its scale mixture). For the
Laplace hierarchy NUTS samples the marginal ``β_i ~ Laplace(0, 1/√γ)``, the same posterior without
the funnel between ``β_i`` and ``τ_i``. For a hierarchy with the ``"nuts-collapsed"`` capability (the
horseshoe) under the Gaussian likelihood NUTS samples the hierarchy's scales with ``β`` integrated out
and ``β`` is drawn from its Gaussian conditional (:mod:`sparsebayes.inference.engines.collapsed_nuts`). NUTS
runs with the settings the hierarchy declares (``nuts_settings``) unless given others.
"""
from __future__ import annotations

import jax
import numpy as np
from sklearn.utils.validation import check_is_fitted
from sparsebayes.models.likelihoods import conjugate_noise
from sparsebayes.models.priors import require, supports

from sparsebayes.inference.engines import collapsed_nuts
from sparsebayes.inference._validation import check_count
from sparsebayes.inference.engines.nuts import run_nuts
from sparsebayes.inference.posterior.posterior_model import layout


def __getattr__(name):
    """``SUPPORTED``: the estimator classes of :mod:`sparsebayes.inference` that describe their model
    (``posterior_model``), the generic ``SparseRegressor`` and ``SparseClassifier`` first, then the paper
    and sampler estimators (each a generic one with its method fixed), for documentation and messages
    (the twin itself asks the hook, not this list)."""
    if name == "SUPPORTED":
        import inspect

        from sparsebayes import inference
        return tuple(cls for cls in (getattr(inference, n) for n in inference.__all__)
                     if inspect.isclass(cls) and callable(getattr(cls, "posterior_model", None)))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def posterior_model_of(est):
    """``est.posterior_model``, else a ``ValueError`` naming the estimators that have one."""
    hook = getattr(est, "posterior_model", None)
    if not callable(hook):
        from sparsebayes.inference.posterior import twin_posterior
        raise ValueError(f"compare supports {', '.join(c.__name__ for c in twin_posterior.SUPPORTED)} (estimators that "
                         f"describe their model by posterior_model); got {type(est).__name__}")
    return hook


def twin(est, X, y, *, surrogate_eps=None, train=None):
    """The model of fitted ``est`` on ``(X, y)``, as the estimator describes it (``est.posterior_model``,
    :mod:`sparsebayes.inference.posterior.posterior_model`): a namespace with ``model``, the design ``H``, the
    targets ``y`` (0/1 for the classifier, centred for the Bayesian Lasso), the model's keyword
    arguments ``kwargs``, the basis ``names`` and a ``label`` for the prior; ``y_offset``, what
    the model's ``y`` was shifted by (the training mean for the Bayesian Lasso, else 0); and the
    fields :mod:`~sparsebayes.inference.posterior.twin_builders` documents (``gibbs``, ``weight_site``,
    ``to_weights``, ``weight_dims``, ``weight_coords``, ``site_dims``, ``site_coords``, ``keep``).
    ``ValueError`` for an estimator, prior or data it cannot build.

    ``train``: the twin of the training data, when ``(X, y)`` are held-out rows. The design of new
    rows must be the training model's, so what the twin takes from the data (the Bayesian Lasso's
    centring, the type-II twins' columns left out as constant) is taken from ``train``.
    """
    hook = posterior_model_of(est)
    check_is_fitted(est)
    t = hook(X, y, surrogate_eps=surrogate_eps, train=train)
    for record in (t, *(getattr(t, "parts", None) or ())):  # a one-vs-all record's binary parts alike
        defaults = dict(y_offset=0.0, centre=None, gibbs=None, nuts_kwargs={}, prior=None, likelihood=None, point=None,
                        **layout(record.names))
        record.__dict__.update({k: v for k, v in defaults.items() if k not in record.__dict__})
    return t


def basis_sites(t, kwargs):
    """The model's sites with one entry per weight (shape ``(p,)``, the design's width): given the dim
    ``basis`` in every group. Read from the model's own trace, so a hierarchy's per-weight sites are
    named by its statement, not by a list here; the twin's ``site_dims`` say otherwise where it has them."""
    from sparsebayes.inference.engines.model_trace import _model_trace
    p = t.H.shape[1]
    return {name for name, site in _model_trace(t.model, (t.H, t.y), kwargs).items()
            if site["type"] in ("sample", "deterministic") and not site.get("is_observed", False)
            and np.shape(site["value"]) == (p,)}


def _collapsible(t):
    """Whether NUTS samples the twin with β integrated out: a likelihood with ``conjugate_noise`` (the Gaussian) and a hierarchy of
    the ``"nuts-collapsed"`` capability (:mod:`sparsebayes.inference.engines.collapsed_nuts`)."""
    return (conjugate_noise(t.likelihood) and t.prior is not None
            and supports(t.prior, "nuts-collapsed") and t.H.shape[1] <= collapsed_nuts.MAX_WEIGHTS)


def _collapsed_view(t):
    """The twin as :func:`sparsebayes.inference.engines.collapsed_nuts.run` reads it (a fixed σ² as ``noise_var``)."""
    from types import SimpleNamespace
    return SimpleNamespace(H=t.H, y=t.y, prior=t.prior, kwargs={} if t.params is None else {"noise_var": t.params})


def sample_posterior(est, X, y, sampler="nuts", *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0,
                     progress_bar=False, surrogate_eps=None, target_accept_prob=None, X_test=None, y_test=None,
                     log_likelihood=True):
    """Draws of the posterior of fitted ``est``'s own model on ``(X, y)`` as ``InferenceData``.

    Groups: ``posterior`` (``beta`` on dim ``basis``, coords the feature map's names),
    ``sample_stats``, ``observed_data`` and ``log_likelihood`` (``y`` on dim ``obs``, for
    ``az.loo``), ``posterior_predictive`` (``y`` drawn from the model at each draw, by
    ``numpyro.infer.Predictive``, for ``az.plot_ppc``). ``sampler``: ``"nuts"``, or ``"gibbs"``
    where the twin has a Gibbs sampler (``ValueError`` naming the hierarchy otherwise).
    ``attrs["model"]`` names the prior (and a surrogate, or a hyperparameter held at its fitted
    value, when one is). ``target_accept_prob``: NUTS's; ``None`` is the one the hierarchy declares
    (``nuts_settings``, :func:`sparsebayes.inference.engines.nuts.settings`), else 0.8; the one used is in
    ``posterior.attrs``. ``log_likelihood=False``: no ``log_likelihood`` group (``S × n`` floats);
    :func:`sparsebayes.inference.posterior.pointwise_loglik.ensure_log_likelihood` computes it from the draws
    and the model's record when LOO asks for it, the same values whichever sampler drew them.

    With held-out rows ``X_test``, ``y_test`` the group ``predictions`` holds, per draw and test row,
    the model's ``log_lik`` and its predictive ``mean`` (regression) or class probabilities ``prob``
    (on ``class_code``, the index into ``est.classes_``), for held-out scores of the sampled model
    (:mod:`sparsebayes.inference.posterior.twin_predictive`).
    """
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    t_test = None if X_test is None else twin(est, X_test, y_test, surrogate_eps=surrogate_eps, train=t)
    check_count("seed", seed, 0)
    settings = dict(num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                    progress_bar=bool(progress_bar), target_accept_prob=target_accept_prob)
    name = type(est).__name__
    if getattr(t, "parts", None) is not None:  # one-vs-all: K independent binary posteriors, stacked
        from sparsebayes.inference.posterior.twin_one_vs_all import sample_one_vs_all

        def draw_part(part, part_seed):
            idata, kwargs = _draw(part, sampler, name, seed=part_seed, log_likelihood=log_likelihood, **settings)
            if log_likelihood:
                _log_likelihood_group(idata, part, kwargs, True)
            return idata, kwargs
        idata = sample_one_vs_all(t, t_test, draw_part, seed=seed, log_likelihood=log_likelihood)
    else:
        idata, kwargs = _draw(t, sampler, name, seed=seed, log_likelihood=log_likelihood, **settings)
        _log_likelihood_group(idata, t, kwargs, log_likelihood)
        _add_posterior_predictive(idata, t, kwargs, seed)
        if t_test is not None:
            from sparsebayes.inference.posterior.twin_predictive import add_predictions
            add_predictions(idata, t_test, kwargs, n_classes=len(est.classes_) if hasattr(est, "classes_") else None,
                            seed=seed + 2)
        idata = _to_weight_layout(idata, t)
    idata.attrs.update(model=t.label, estimator=name, sampler=sampler)
    idata.posterior.attrs.update(model=t.label)
    return idata


def _draw(t, sampler, estimator_name, *, num_warmup, num_samples, num_chains, seed, progress_bar, target_accept_prob,
          log_likelihood):
    """The draws of record ``t``'s model by ``sampler`` in the model's site layout, and the model's keyword
    arguments they were drawn with: ``(idata, kwargs)``. ``ValueError`` for a sampler the model has not."""
    coords = {"basis": t.names, **t.site_coords}
    kwargs = t.kwargs
    if sampler == "nuts" and _collapsible(t):
        # the hierarchy's scales by NUTS with β integrated out, β from its Gaussian conditional
        idata = collapsed_nuts.run(_collapsed_view(t), num_warmup=num_warmup, num_samples=num_samples,
                                   num_chains=num_chains, seed=seed, coords=coords, progress_bar=progress_bar,
                                   target_accept_prob=target_accept_prob)
    elif sampler == "nuts":
        kwargs = {**t.kwargs, **t.nuts_kwargs}
        dims = {**{s: ["basis"] for s in basis_sites(t, kwargs)}, "y": ["obs"], **t.site_dims}
        dims = {k: v for k, v in dims.items() if k in _sites(t.model, t.H, t.y, kwargs)}
        idata = run_nuts(t.model, t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                         seed=seed, progress_bar=progress_bar, coords=coords, dims=dims, rhat_max=None,
                         target_accept_prob=target_accept_prob, log_likelihood=log_likelihood, **kwargs)
    elif sampler == "gibbs" and t.gibbs is not None:
        idata = t.gibbs(t, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                        coords=coords, progress_bar=progress_bar)
    elif sampler == "gibbs":
        if conjugate_noise(t.likelihood) and t.prior is not None:
            require(t.prior, "gibbs")  # names the hierarchy when it has no conditionals
            if t.params is not None:
                raise ValueError("the Gibbs sampler puts the flat prior on σ² (000 eq. 6); this estimator fixes "
                                 "noise_var: use sampler='nuts'")
        raise ValueError(f"sampler 'gibbs' needs Gibbs conditionals; the model of {estimator_name} "
                         f"({t.label}) has none here: use sampler='nuts'")
    else:
        allowed = "'nuts' or 'gibbs'" if t.gibbs is not None else "'nuts'"
        raise ValueError(f"sampler must be {allowed} for {estimator_name}, got {sampler!r}")
    return idata, kwargs


def _log_likelihood_group(idata, t, kwargs, wanted):
    """``idata`` (in the model's site layout) with its ``log_likelihood`` group when ``wanted``: the one
    an engine made, else :func:`~sparsebayes.inference.posterior.pointwise_loglik.add_log_likelihood`'s; without
    it otherwise, registered to compute it when asked
    (:func:`~sparsebayes.inference.posterior.pointwise_loglik.defer_log_likelihood`)."""
    from sparsebayes.inference.posterior.arviz_compat import has_group
    from sparsebayes.inference.posterior.pointwise_loglik import GROUP, add_log_likelihood, defer_log_likelihood, drop_log_likelihood
    if not wanted:  # computed from these draws when asked (ensure_log_likelihood)
        return defer_log_likelihood(drop_log_likelihood(idata), t, kwargs)
    return idata if has_group(idata, GROUP) else add_log_likelihood(idata, t, kwargs)


def default_samplers(est, t=None):
    """The samplers :func:`sparsebayes.compare` runs on fitted ``est``'s posterior unless told which:
    NUTS and Gibbs where the model has a Gibbs sampler (:func:`gibbs_able`; ``t``, the twin, when it is
    built), two exact samplers of one posterior that check each other; NUTS alone elsewhere."""
    return ("nuts", "gibbs") if gibbs_able(est, t) else ("nuts",)


def gibbs_able(est, t=None):
    """Whether ``est``'s model has a Gibbs sampler here, as the estimator describes its model (the twin
    ``t``, or ``est.posterior_model()`` without data): the Bayesian Lasso, the type-II regressors' twins,
    the Gaussian regressor with a hierarchy that has Gibbs conditionals and σ² estimated (flat prior, as
    the engine's), a likelihood with a conjugate augmentation under a hierarchy with Gibbs conditionals
    (:mod:`sparsebayes.inference.posterior.posterior_model`)."""
    record = t if t is not None else posterior_model_of(est)()
    return getattr(record, "gibbs", None) is not None


def _to_weight_layout(idata, t):
    """The weights in the point estimate's layout (``t.to_weights`` of the model's ``weight_site``,
    as ``beta`` on ``t.weight_dims``), in every group that has the site."""
    if t.to_weights is None and t.weight_site == "beta":
        return idata
    import xarray as xr

    from sparsebayes.inference.posterior.arviz_compat import dataset, groups, set_group
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


def _sites(model, H, y, kwargs):
    from sparsebayes.inference.engines.model_trace import _model_trace
    return set(_model_trace(model, (H, y), kwargs))


def _add_posterior_predictive(idata, t, kwargs, seed):
    """``y`` drawn from the model at every posterior draw (sites ``posterior`` holds substituted)."""
    from numpyro.infer import Predictive

    from sparsebayes.inference.posterior.arviz_compat import group_from_dict, set_group
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
    Lasso's and BLS's do (``β_j``'s prior scale is ``σ/λ``), so pass the posterior median. A one-vs-all
    model's ``K`` weight vectors are independent draws of the one prior they share."""
    check_count("num_draws (of the prior)", num_draws, 1)
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    if getattr(t, "parts", None) is not None:  # one-vs-all: the K parts' priors are independent, each the first's
        parts = [_prior_weight_draws(t.parts[0], num_draws, seed + k, noise_var) for k in range(len(t.parts))]
        return np.stack(parts, axis=-1).reshape(num_draws, -1)  # (basis, classifier), the names' order
    return _prior_weight_draws(t, num_draws, seed, noise_var).reshape(num_draws, -1)


def _prior_weight_draws(t, num_draws, seed, noise_var):
    """:func:`prior_beta_draws` of the model record ``t``: ``(num_draws, ...)`` in its weights' layout."""
    from numpyro.infer import Predictive
    if t.kwargs.get("hierarchy") == "flat":  # no draws from a flat prior: its mass near any point is 0 (|β| = ∞)
        draws = np.full((num_draws, t.H.shape[1]), np.inf)
        return np.asarray(t.to_weights(draws) if t.to_weights else draws)
    sites = _sites(t.model, t.H, t.y, t.kwargs)
    held = {}
    if t.likelihood is not None:  # the likelihood's own parameter, where the model samples it
        own = getattr(t.likelihood, "param_name", None) if t.params is None else None
    else:
        own = None if "noise_var" in t.kwargs else "noise_var"
    if own and own in sites:
        held[own] = np.full(num_draws, float(noise_var))
    if "intercept" in sites:
        held["intercept"] = np.zeros(num_draws)
    model = getattr(t, "prior_model", None) or t.model  # the prior half alone where the record has it
    predictive = Predictive(model, posterior_samples=held or None, num_samples=None if held else num_draws,
                            return_sites=[t.weight_site])
    draws = np.asarray(predictive(jax.random.PRNGKey(seed), t.H, **t.kwargs)[t.weight_site], dtype=np.float64)
    return np.asarray(t.to_weights(draws) if t.to_weights else draws)


def point_estimate_dataset(est, names, dims=("basis",), coords=None):
    """The estimator's point estimate as an ``xarray.Dataset`` on the twin's layout: ``beta`` (chain 1,
    draw 1, ``dims``: ``basis``, and ``class`` for SMLR, coords ``coords``, default ``{"basis":
    names}``) and, where the estimator has them, ``noise_var``, ``intercept`` and the shared
    hyperparameters EM estimated under their twin's site names (``gamma``, ``tau_global``: the
    hierarchy's ``estimated_sites``), so every scalar the twin samples has its point beside it; attrs
    ``point_estimate = 1`` and the routine (``inference``). A binary classifier's ``classifier`` dim
    (one entry) is dropped. For the Bayesian Lasso the "point" is its posterior median ``coef_``,
    labelled as such."""
    from sparsebayes.inference.posterior.arviz_compat import group_from_dict
    coords = {"basis": list(names)} if coords is None else coords
    record = posterior_model_of(est)()
    if getattr(record, "point", None) is not None:  # the point as the model's record gives it
        data, method = dict(record.point), record.point_label
    else:
        source = est.to_inference_data().posterior
        weights = source["beta" if "beta" in source else "coef"]
        beta = weights.values[0, 0]
        data = {"beta": beta.reshape(-1) if "classifier" in weights.dims else beta}
        estimated = getattr(getattr(est, "prior_", None), "estimated_sites", dict)()
        own = getattr(getattr(est, "likelihood_", None), "param_name", None)
        for name in ("noise_var", "intercept", *estimated, *([own] if own else [])):
            if name in source:
                data[name] = float(source[name].values.ravel()[0])
        method = source.attrs.get("inference", "point-estimate")
    shape = tuple(len(coords[d]) for d in dims)
    if data["beta"].shape != shape:
        raise ValueError(f"the point estimate has {data['beta'].shape} weights, the model {shape}")
    other = dict(getattr(record, "point_dims", None) or {})  # a one-vs-all point's per-class scalars
    ds = group_from_dict("posterior", {k: np.asarray(v, dtype=np.float64)[None, None, ...] for k, v in data.items()},
                         coords=coords, dims={**{k: v for k, v in other.items() if k in data}, "beta": list(dims)})
    ds.attrs = {"point_estimate": 1, "inference": method}
    return ds
