"""The twins of the type-II regressors, the Bayesian Lasso, the Bernoulli RVM and SMLR: each fitted
estimator's model on its own design, for :func:`sparsebayes.inference.posterior.twin_posterior.twin`.

Each estimator reaches its builder through its own ``posterior_model``
(:class:`~sparsebayes.inference.posterior.posterior_sampling.PosteriorSamplingMixin`): :func:`typeii_model`
(:class:`~sparsebayes.inference.RVMRegressor`, :class:`~sparsebayes.inference.BLSRegressor`,
:class:`~sparsebayes.inference.FLAPRegressor`, each naming its hierarchy), :func:`bayesian_lasso_model`,
:func:`bernoulli_rvm_model` and :func:`smlr_model`; nothing here asks an estimator's class. With
``X = None`` each gives the data-free record (its Gibbs sampler and point,
:mod:`sparsebayes.inference.posterior.posterior_model`).

Each builder returns the namespace :func:`~sparsebayes.inference.posterior.twin_posterior.twin` documents,
with, beside ``model``, ``H``, ``y``, ``kwargs``, ``names`` and ``label``:

* ``gibbs``: a function drawing the posterior by Gibbs (``None`` where the model has no
  conditionally conjugate sampler here: the logistic and multinomial likelihoods);
* ``weight_site`` and ``to_weights``: the model's site holding the weights and the map from its
  draws to the weights in the layout of the estimator's point estimate (``coef_``'s units and
  shape: SMLR's bias row at ``bias_scale_`` and its reference class's zero column; the Bernoulli
  RVM's raw terms, :func:`~sparsebayes.inference.estimators._base.raw_weights`);
* ``weight_dims`` / ``weight_coords``: that layout's dims and coords; ``site_dims`` /
  ``site_coords``: the dims and coords of the model's own sites.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood
from sparsebayes.models.priors.typeii import ARDPrior

from sparsebayes.inference.estimators._base import basis_names, raw_weights
from sparsebayes.inference._validation import validate_predict_data
from sparsebayes.inference.posterior.twin_typeii import run_typeii_gibbs, typeii_twin_model

#: The type-II regressors' hierarchies, as their ``posterior_model`` names them to :func:`typeii_model`:
#: the RVM's ARD (on its labelled proper surrogate), FLAP's Laplace, BLS's σ-scaled Laplace.
TYPEII_HIERARCHIES = ("ard", "laplace", "scaled-laplace")

_IMPROPER = ("the RVM's flat prior on each precision α_i has no proper posterior (infinite mass at α_i → ∞), so there "
             "is nothing to sample: pass surrogate_eps (e.g. 1e-3) to sample the labelled proper surrogate "
             "α_i ~ Gamma(eps, eps)")


def build(est, X, y, surrogate_eps, train=None):
    """The default hook's answer for an estimator that does not write its ``posterior_model``: a
    ``ValueError`` naming it (the estimators of this module call their builder from their own hook)."""
    raise ValueError(f"{type(est).__name__} has no posterior model here: its posterior_model is not written")


def described(est):
    """The data-free form of :func:`build`: the same ``ValueError``."""
    return build(est, None, None, None)


def typeii_model(est, X=None, y=None, surrogate_eps=None, train=None, *, hierarchy):
    """The twin of a fitted type-II regressor under ``hierarchy`` (one of :data:`TYPEII_HIERARCHIES`) on
    ``(X, y)``; ``train``: the training rows' twin, whose columns left out as constant the held-out
    rows' keep. ``X = None``: the data-free record, whose Gibbs sampler is the twin's
    (:func:`run_typeii_gibbs`), none in the flat limit (:func:`flat_limit`)."""
    if hierarchy not in TYPEII_HIERARCHIES:
        raise ValueError(f"hierarchy must be one of {TYPEII_HIERARCHIES}, got {hierarchy!r}")
    if X is None:
        flat = hierarchy != "ard" and flat_limit(est)
        return SimpleNamespace(gibbs=None if flat else _typeii_gibbs)
    t = _typeii(est, validate_predict_data(est, X), y, surrogate_eps, hierarchy, None if train is None else train.keep)
    t.y_offset = 0.0
    return t


def bayesian_lasso_model(est, X=None, y=None, surrogate_eps=None, train=None):
    """The fitted Bayesian Lasso's model on ``(X, y)`` (:func:`_bayesian_lasso`: centred at the training
    means, ``train.centre`` for held-out rows). ``X = None``: the data-free record, its Park–Casella
    Gibbs sampler and its "point", the posterior median, labelled as such."""
    if X is None:
        point = None if not hasattr(est, "coef_") else {"beta": np.asarray(est.coef_, dtype=np.float64),
                                                       "noise_var": est.noise_var_}
        return SimpleNamespace(gibbs=_bayesian_lasso_gibbs, point=point,
                               point_label=f"bayesian-lasso-{_lasso_sampler(est)}-posterior-median")
    return _bayesian_lasso(est, X, y, surrogate_eps, None if train is None else train.centre)


def bernoulli_rvm_model(est, X=None, y=None, surrogate_eps=None, train=None):
    """The fitted Bernoulli RVM's model on ``(X, y)`` (:func:`_rvm_classifier`: under ARD, FLAP's or BLS's
    hierarchy); beyond two classes its ``K`` one-vs-all models (Tipping 2001 fits one per class), each
    class's the two-class model of the ``k``-vs-rest targets at that classifier's fitted λ
    (:func:`~sparsebayes.inference.posterior.twin_one_vs_all.one_vs_all_model`), the point the raw-term
    weights of ``beta_`` on ``(basis, classifier)``. ``X = None``: the data-free record (no Gibbs sampler:
    the logistic twin here has none)."""
    if len(getattr(est, "classes_", ())) > 2:
        from sparsebayes.inference.posterior.twin_one_vs_all import one_vs_all_model
        point = {"beta": raw_weights(est.feature_map_, est.beta_).T}
        point_label = f"{_rvm_label(est)}-typeii-one-vs-all"
        if X is None:
            return one_vs_all_model(est, None, None, lambda t: SimpleNamespace(gibbs=None), names=None, point=point,
                                    point_label=point_label)
        X = validate_predict_data(est, X)
        H, names = _rvm_design(est, X)
        classifier = iter(range(len(est.classes_)))  # one_vs_all_model asks for the parts in class order
        return one_vs_all_model(est, H.shape[0], y,
                                lambda t: _rvm_classifier(est, H, names, t, surrogate_eps, next(classifier)),
                                names=names, point=point, point_label=point_label)
    if X is None:
        return SimpleNamespace(gibbs=None)
    X = validate_predict_data(est, X)
    H, names = _rvm_design(est, X)
    if len(est.classes_) != 2:
        raise ValueError(f"the Bernoulli RVM's posterior is sampled for two classes or more; this classifier has "
                         f"{len(est.classes_)}")
    t = _rvm_classifier(est, H, names, (_labels(est, y, H.shape[0]) == est.classes_[1]).astype(np.float64),
                        surrogate_eps, 0)
    t.y_offset = 0.0
    return t


def smlr_model(est, X=None, y=None, surrogate_eps=None, train=None):
    """The fitted SMLR classifier's model on ``(X, y)`` (:func:`_smlr`). ``X = None``: the data-free
    record (no Gibbs sampler for the multinomial likelihood)."""
    if X is None:
        return SimpleNamespace(gibbs=None)
    t = _smlr(est, validate_predict_data(est, X), y, surrogate_eps)
    t.y_offset = 0.0
    return t


def _bayesian_lasso(est, X, y, surrogate_eps, centre=None):
    """The Bayesian Lasso's centred model (:func:`~sparsebayes.models.bayesian_lasso.bayesian_lasso`): ``X``
    and ``y`` centred at the training means (``centre``, or those of ``(X, y)``)."""
    from sparsebayes.models.bayesian_lasso import bayesian_lasso
    if surrogate_eps is not None:
        raise ValueError("surrogate_eps applies to the Jeffreys prior; the Bayesian Lasso has its own hyperpriors")
    X = np.ascontiguousarray(validate_predict_data(est, X))
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {X.shape[0]} finite numbers, one per row of X")
    names = basis_names(est, None, X.shape[1])
    prior = est.prior_  # ScaledLaplacePrior: Park & Casella's r, δ are its a, b
    kwargs = dict(lam2_shape=prior.a, lam2_rate=prior.b, c=prior.c, d=prior.d)
    x_mean, y_mean = (X.mean(axis=0), float(y.mean())) if centre is None else centre
    return SimpleNamespace(model=bayesian_lasso, H=X - x_mean, y=y - y_mean, kwargs=kwargs, names=names,
                           label="bayesian-lasso", centre=(x_mean, y_mean), y_offset=y_mean,
                           gibbs=_bayesian_lasso_gibbs, nuts_kwargs={"marginal": True}, **_layout(names))


def _lasso_sampler(est):
    """The sampler of a Bayesian Lasso fit (``"gibbs"``, ``"nuts"``, ``"nuts-marginal"``): the fit's, else the
    estimator's ``sampler`` (a generic estimator's: its ``method``)."""
    return getattr(est, "_bayesian_lasso_sampler_", None) or getattr(est, "sampler", None) or est.method


def _bayesian_lasso_gibbs(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar):
    """Park–Casella Gibbs (:func:`~sparsebayes.inference.engines.bayesian_lasso.run_gibbs`) on the dims of the NUTS twin."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, has_group, rename_dims, set_group
    from sparsebayes.inference.engines.bayesian_lasso import run_gibbs
    idata = run_gibbs(t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                      progress_bar=progress_bar, coords={"basis": t.names}, **t.kwargs)
    rename_dims(idata, {d: "obs" for g in ("observed_data", "log_likelihood") if has_group(idata, g)
                        for d in dataset(idata, g).dims if d not in ("chain", "draw", "obs")})
    if not has_group(idata, "sample_stats"):  # the Gibbs sweeps' own statistic: the data's log likelihood
        set_group(idata, "sample_stats", idata.log_likelihood["y"].sum("obs").to_dataset(name="log_lik"))
    return idata


def _surrogate(surrogate_eps, label):
    if surrogate_eps is None:
        raise ValueError(_IMPROPER)
    if not (np.isfinite(surrogate_eps) and surrogate_eps > 0):
        raise ValueError(f"surrogate_eps must be a positive number, got {surrogate_eps!r}")
    return float(surrogate_eps), f"{label}-surrogate-eps={surrogate_eps:g}"


def _no_surrogate(surrogate_eps, est):
    if surrogate_eps is not None:
        raise ValueError(f"surrogate_eps applies to the improper hyperpriors (Jeffreys, the RVM); "
                         f"{type(est).__name__}'s twin is proper")


def _labels(est, y, n):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n or not np.all(np.isin(y, est.classes_)):
        raise ValueError(f"y must hold {n} labels among the classifier's classes {list(est.classes_)}")
    return y


def _typeii(est, X, y, surrogate_eps, hierarchy, keep=None):
    H = np.asarray(est._design(X), dtype=np.float64)
    names = basis_names(est, est.feature_map_, H.shape[1])
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != H.shape[0] or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {H.shape[0]} finite numbers, one per row of X")
    # a column that is constant (zero once centred, with the intercept) is not in the fitted model: the
    # engine masks it and its weight is 0; the twin leaves it out too and gives it weight 0 in every draw
    intercept, estimate_noise = bool(est._typeii_options_.fit_intercept), est.prior_.noise_update != "fixed"
    if keep is None:
        keep = np.ptp(H, axis=0) > 0 if intercept else np.any(H != 0, axis=0)
    kwargs = dict(c=float(est.prior_.c), d=float(est.prior_.d), intercept=intercept)
    if hierarchy == "ard":
        eps, label = _surrogate(surrogate_eps, "rvm")
        kwargs.update(hierarchy="gamma-precision", surrogate_eps=eps)
    else:
        _no_surrogate(surrogate_eps, est)
        lam = float(est.gamma_)  # the twin's ``lam`` is the papers' λ: the rate on the variances, ``gamma_``
        bls = hierarchy == "scaled-laplace"
        kwargs.update(hierarchy="laplace", lam=lam, scaled=bls)
        if flat_limit(est):
            kwargs.update(hierarchy="flat")
            del kwargs["lam"], kwargs["scaled"]
            _check_flat_limit(est, H[:, keep], kwargs["intercept"])
        if not bls and not estimate_noise:
            kwargs["noise_var"] = float(est.noise_var_)
        label = (f"{'bls' if bls else 'flap'}-" + ("flat-prior (the laplace limit gamma -> 0: type-II fitted gamma=0)"
                                                  if flat_limit(est) else f"laplace-gamma={lam:.6g}-fixed-at-typeii")
                 + ("" if bls or estimate_noise else f"-noise_var={est.noise_var_:.6g}-fixed"))
    layout = _layout(names)
    if not keep.all():
        left_out = [n for n, k in zip(names, keep) if not k]
        label += f"; constant column(s) {', '.join(left_out)} not in the model (weight 0, as in the fit)"
        layout.update(to_weights=lambda w: _expand(w, keep), site_coords={"model_basis": list(np.asarray(names)[keep])},
                      site_dims={s: ["model_basis"] for s in ("beta", "tau", "beta_raw", "precision_surrogate")})
    return SimpleNamespace(model=typeii_twin_model, H=H[:, keep], y=y, kwargs=kwargs, names=names, label=label,
                           gibbs=None if kwargs["hierarchy"] == "flat" else _typeii_gibbs, **{**layout, "keep": keep})


def flat_limit(est):
    """Whether the fitted BLS or FLAP estimator ``est`` has λ = 0 (``gamma_``; an estimator without a
    fitted rate, the RVM, has no flat limit): the type-II λ update
    ``2 max(n + a − 1, 0)/(Σ τ_i + 2b)`` (004 eq. 17) gives 0 with at most one kept weight under the flat
    hyperprior (``a = 0``), the empty model among them. The Laplace prior ``Laplace(0, s/√λ)`` then has
    no shrinkage left, and its twin is the limit ``λ → 0``: a flat prior on the weights
    (``typeii_twin_model(hierarchy="flat")``), sampled by NUTS (no Gibbs conditionals here)."""
    return hasattr(est, "gamma_") and not float(est.gamma_) > 0


def _check_flat_limit(est, H, intercept):
    """The flat-limit twin's posterior is proper when the design with the intercept has full column rank
    and more rows than columns (σ² estimated); else a ``ValueError`` naming the problem. Otherwise a
    ``DegenerateFitWarning`` says that the twin is the flat limit (the fit is an answer, not an error)."""
    from sparsebayes.inference._warnings import warn_degenerate

    kept = int(np.sum(np.asarray(est.coef_) != 0))
    cols = np.column_stack([np.ones(H.shape[0]), H]) if intercept else H
    n, k = cols.shape
    rank = int(np.linalg.matrix_rank(cols)) if k else 0
    if rank < k or n <= k:
        raise ValueError(f"{type(est).__name__} fitted λ = 0 ({kept} weight(s) kept), so its model has no shrinkage "
                         f"left; under that flat prior the posterior of {k} coefficient(s) on {n} rows is improper "
                         f"(rank {rank}): use more rows or fewer inputs, or another model (e.g. the Bayesian Lasso)")
    what = ("kept no input (the empty model)" if kept == 0 else f"kept {kept} input(s)") + (
        " with λ = 0: the type-II λ update leaves no shrinkage with at most one kept weight")
    warn_degenerate(est, what, "the posterior sampled beside it is the Laplace prior's flat limit (λ → 0, a flat "
                    "prior on every weight), by NUTS; give more inputs, or a proper hyperprior on λ (a > 0)",
                    stacklevel=5)


def _expand(w, keep):
    """Weights ``w`` (..., kept columns) on every column, 0 on the left-out ones."""
    out = np.zeros(np.shape(w)[:-1] + (keep.size,))
    out[..., keep] = w
    return out


def _typeii_gibbs(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar=False):
    """:func:`run_typeii_gibbs` as ``InferenceData`` with the NUTS twin's names and groups."""
    import time

    import scipy.stats

    from sparsebayes.inference.posterior.arviz_compat import from_dict

    start = time.perf_counter()
    draws = run_typeii_gibbs(t.H, t.y, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                             seed=seed, progress_bar=progress_bar, **t.kwargs)
    seconds = time.perf_counter() - start
    log_lik = draws.pop("log_lik")
    if not t.kwargs.get("intercept", True):
        draws.pop("intercept")
    if "noise_var" in t.kwargs:
        draws.pop("noise_var")
    noise = t.kwargs.get("noise_var", draws.get("noise_var"))
    mean = np.einsum("cdp,np->cdn", draws["beta"], t.H) + np.asarray(draws.get("intercept", 0.0))[..., None]
    pointwise = scipy.stats.norm.logpdf(t.y, mean, np.sqrt(np.asarray(noise))[..., None])
    idata = from_dict({"posterior": draws, "sample_stats": {"log_lik": log_lik}, "log_likelihood": {"y": pointwise},
                       "observed_data": {"y": t.y}}, coords=coords,
                      dims={**{k: t.site_dims.get(k, ["basis"]) for k, v in draws.items() if np.ndim(v) == 3},
                            "y": ["obs"]})
    idata.posterior.attrs.update(sampling_seconds=seconds, inference="typeii-twin-gibbs")
    return idata


def _rvm_design(est, X):
    """The Bernoulli RVM's design on validated ``X`` (its fitted feature map) and the basis names."""
    from sparsebayes.models.features import transform_validated
    H = np.asarray(transform_validated(est.feature_map_, X), dtype=np.float64)
    return H, basis_names(est, est.feature_map_, H.shape[1])


def _rvm_label(est):
    """The Bernoulli RVM's twin label: ``rvm-bernoulli`` under ARD, else the hierarchy's name first."""
    return "rvm-bernoulli" if isinstance(est.prior_, ARDPrior) else f"{est.prior_.name}-bernoulli"


def _rvm_classifier(est, H, names, targets, surrogate_eps, c):
    """The two-class Bernoulli RVM's twin (classifier ``c`` of ``est``) on design ``H`` with 0/1 ``targets``:
    the ARD prior on its labelled proper surrogate; FLAP's and BLS's hierarchies (``w_i ~ N(0, γ_i)``,
    ``γ_i ~ Exp(λ/2)``, with ``σ² = 1`` for BLS: no noise variance) integrate to ``w_i ~ Laplace(0, 1/√λ)``
    (Babacan et al. 2010; Park & Casella 2008), at the classifier's fitted λ (``gamma_[c]``). The weights
    are reported as the raw terms' (:func:`~._base.raw_weights`)."""
    kwargs = dict(likelihood=BernoulliLogisticLikelihood(), intercept=False)
    if isinstance(est.prior_, ARDPrior):
        eps, label = _surrogate(surrogate_eps, "rvm-bernoulli")
        kwargs.update(hierarchy="gamma-precision", surrogate_eps=eps)
    else:
        _no_surrogate(surrogate_eps, est)
        lam = float(np.atleast_1d(est.gamma_)[c])
        if not lam > 0:
            raise ValueError(f"{type(est).__name__} fitted λ = 0 for classifier {c} (at most one weight kept): its "
                             "Laplace prior has no shrinkage left, and a logistic likelihood under a flat prior has no "
                             "proper posterior on separable data; give the hierarchy a proper hyperprior on λ "
                             "(a > 0, b > 0)")
        kwargs.update(hierarchy="laplace", lam=lam, scaled=False)
        label = f"{_rvm_label(est)}-laplace-gamma={lam:.6g}-fixed-at-typeii"
    return SimpleNamespace(model=typeii_twin_model, H=H, y=np.asarray(targets, dtype=np.float64), kwargs=kwargs,
                           names=names, label=label, gibbs=None, y_offset=0.0,
                           **_layout(names, to_weights=lambda b: raw_weights(est.feature_map_, b)))


def _smlr(est, X, y, surrogate_eps):
    from sparsebayes.models.priors.penalty import GaussianPrior
    from sparsebayes.models.likelihoods.multinomial import multinomial_logistic_model
    from sparsebayes.models.priors import LaplacePrior

    _no_surrogate(surrogate_eps, est)
    priors = {"l1": LaplacePrior.from_lam, "l2": GaussianPrior}
    penalty = est._penalty()  # the fitted prior_'s (MapClassifierMethods)
    if penalty not in priors:
        raise ValueError(f"penalty {penalty!r} has no proper prior to sample; the twin needs 'l1' (SMLR) or 'l2'")
    H = np.asarray(est._penalized_design(X, fit=False), dtype=np.float64)
    labels = _labels(est, y, H.shape[0])
    classes = [str(c) for c in est.classes_]
    names = basis_names(est, est.feature_map_, H.shape[1])
    scale = float(est.bias_scale_)

    def to_weights(w):  # the penalized problem's W -> the estimator's beta: bias row at bias_scale_, reference column 0
        w = np.array(w, dtype=np.float64)
        w[..., 0, :] *= scale
        return np.concatenate([w, np.zeros(w.shape[:-1] + (1,))], axis=-1)
    kwargs = dict(n_classes=len(classes), prior=priors[penalty](float(est.lam_)))
    return SimpleNamespace(model=multinomial_logistic_model, H=H, y=np.searchsorted(est.classes_, labels), kwargs=kwargs,
                           names=names, label=f"smlr-{penalty}-lam={est.lam_:.6g}", gibbs=None,
                           weight_site="coef", to_weights=to_weights, weight_dims=("basis", "class"),
                           weight_coords={"basis": names, "class": classes},
                           site_dims={"coef": ["basis", "free_class"]}, site_coords={"free_class": classes[:-1]},
                           keep=None)


def _layout(names, to_weights=None):
    return dict(weight_site="beta", to_weights=to_weights, weight_dims=("basis",), weight_coords={"basis": names},
                site_dims={}, site_coords={}, keep=None)
