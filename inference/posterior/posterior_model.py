"""The record a fitted estimator gives of its own model, and the samplers that read it.

Every estimator that :func:`sparsebayes.compare` supports describes its model by one method,
``est.posterior_model(X, y)`` (:class:`~sparsebayes.inference.posterior.posterior_sampling.PosteriorSamplingMixin`):
the twin (:func:`sparsebayes.inference.posterior.twin_posterior.twin`) asks it, never the estimator's class.
For an estimator whose model is (hierarchy, likelihood, design), :func:`sparse_posterior_model` builds
the record on the one NumPyro model :func:`sparsebayes.models.model.sparse_model` (as
:func:`~sparsebayes.models.model.sparse_model_for` gives it, one function per class of statement and
likelihood): ``β`` from the
hierarchy's statement, ``y`` from the likelihood's, the design ``H`` from the fitted feature map, the
likelihood's own parameter fixed where the fit fixed it and otherwise sampled under the prior the
likelihood declares. The record's fields (a ``types.SimpleNamespace``):

``model``, ``H``, ``y``, ``kwargs``
    The NumPyro model, its design and targets in the model's coding (0/1 for a binary classifier),
    and its keyword arguments: ``model(H, y, **kwargs)`` is the posterior sampled. ``prior_model``
    (optional): the same arguments' prior half alone, for prior draws of the weights.
``prior``, ``likelihood``, ``params``
    The hierarchy's statement (:func:`sparsebayes.models.model.beta_statement`), the likelihood
    object and its parameter held fixed (``None``: sampled).
``names``, ``label``
    The basis names (the weights' ``basis`` coords) and what the draws are of (``attrs["model"]``).
``gibbs``
    A function drawing the same posterior by Gibbs (``None`` where there is none): the hierarchy's
    Gaussian sweep (:func:`sparsebayes.inference.engines.hierarchy_gibbs.run`, σ² conjugate) or, for a
    likelihood with a conjugate augmentation (the ``"gibbs"`` likelihood capability: probit, logistic,
    Student-t, negative binomial), the augmented sweep (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`).
``point``
    The point estimate in the model's layout (``beta`` and the scalars the model samples), where the
    estimator gives it here (else its ``to_inference_data``).
``weight_site``, ``to_weights``, ``weight_dims``, ``weight_coords``, ``site_dims``, ``site_coords``,
``keep``, ``centre``, ``y_offset``
    The layout fields of :mod:`sparsebayes.inference.posterior.twin_builders`.

``parts``, ``classes``, ``point_dims`` (a one-vs-all classifier's record)
    A classifier fitted one-vs-all beyond two classes is ``K`` independent binary models: its record
    (:func:`~sparsebayes.inference.posterior.twin_one_vs_all.one_vs_all_model`) holds one binary record
    per class (``parts``, class ``k``'s with the targets ``[y = classes[k]]``), the class labels, and the
    dims of the point's per-class scalars; its weights are on ``(basis, classifier)``.

With no data (``X = None``) an estimator gives the record without ``H`` and ``y``: what its model is
and which samplers it has, for choosing samplers before any data is seen.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from sparsebayes.models.likelihoods import LIKELIHOOD_CAPABILITIES, conjugate_noise
from sparsebayes.models.model import beta_statement, sparse_model_for, sparse_prior_model
from sparsebayes.models.priors import supports
from sparsebayes.models._registry import missing_pieces


def layout(names, to_weights=None):
    """The layout fields of a model whose weights are ``beta`` on ``basis`` (the point estimate's)."""
    return dict(weight_site="beta", to_weights=to_weights, weight_dims=("basis",), weight_coords={"basis": names},
                site_dims={}, site_coords={}, keep=None)


def sparse_posterior_model(prior, likelihood, H=None, y=None, *, names=None, params=None, surrogate_eps=None,
                           point=None, label=None):
    """The record (module docstring) of :func:`~sparsebayes.models.model.sparse_model` for the hierarchy
    ``prior`` (as the estimator holds it), the likelihood object, the design ``H`` (n, p) and targets ``y``
    in the model's coding; ``params`` the likelihood's parameter held fixed (``None``: sampled under its
    declared prior). ``label`` overrides the hierarchy's label. ``ValueError`` for a hierarchy or a
    likelihood with no NumPyro statement."""
    if H is None:  # the data-free record: the model's samplers (a prior with no statement has none), its parameter
        params = float(params) if params is not None and getattr(likelihood, "param_name", None) else None
        try:
            statement, _, _ = beta_statement(prior, surrogate_eps)
        except ValueError:
            return SimpleNamespace(gibbs=None, point=point, point_label=None, likelihood=likelihood, params=params)
        return SimpleNamespace(gibbs=_gibbs_sampler(statement, likelihood, params), point=point,
                               point_label=label, likelihood=likelihood, params=params)
    statement, marginal, prior_label = beta_statement(prior, surrogate_eps)
    missing = missing_pieces(likelihood, LIKELIHOOD_CAPABILITIES["nuts"])
    if missing:
        raise ValueError(f"{type(likelihood).__name__} has no NumPyro observation statement ({', '.join(missing)}): "
                         "its posterior cannot be sampled")
    gaussian = conjugate_noise(likelihood)
    if label is None:
        label = prior_label if gaussian else f"{prior_label}; {likelihood.name}"
        if params is not None and getattr(likelihood, "param_name", None) and not gaussian:
            label += f" ({likelihood.param_name}={float(params):.6g} fixed)"
    kwargs = dict(prior=statement, likelihood=likelihood)
    if params is not None and getattr(likelihood, "param_name", None):
        kwargs["params"] = float(params)
    if marginal:
        kwargs["marginal"] = True
    # a model function per class of statement and likelihood: run_nuts's compiled programs are kept by the
    # values of these arguments, and equal-field objects of different classes compare equal
    record = SimpleNamespace(model=sparse_model_for(statement, likelihood), prior_model=sparse_prior_model, H=H, y=y, kwargs=kwargs, names=names, label=label, prior=statement,
                             hierarchy=prior, likelihood=likelihood, params=kwargs.get("params"),
                             gibbs=_gibbs_sampler(statement, likelihood, kwargs.get("params")), point=point,
                             point_label=label, centre=None, y_offset=0.0, **layout(names))
    return record


def design(est, X):
    """The fitted feature map of ``est`` applied to ``X`` (checked as at predict time) and the basis names."""
    from sparsebayes.models.features import transform_validated

    from sparsebayes.inference.estimators._base import basis_names
    from sparsebayes.inference._validation import validate_predict_data
    H = np.asarray(transform_validated(est.feature_map_, validate_predict_data(est, X)), dtype=np.float64)
    return H, basis_names(est, est.feature_map_, H.shape[1])


def regression_targets(y, n, likelihood=None):
    """``y`` as ``n`` finite float64 numbers (and counts where the likelihood's ``support`` says so),
    else a ``ValueError`` naming the problem."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != n or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {n} finite numbers, one per row of X")
    if getattr(likelihood, "support", "real") == "counts" and not np.all((y >= 0) & (y == np.round(y))):
        raise ValueError(f"y must hold nonnegative integer counts for the {likelihood.name!r} likelihood")
    return y


def binary_targets(est, y, n, what):
    """Labels ``y`` of a fitted two-class classifier as 0/1 (1 for ``est.classes_[1]``); ``ValueError`` for
    another number of classes (``what`` names the model) or labels outside the fitted classes."""
    if len(est.classes_) != 2:
        raise ValueError(f"the {what} posterior is sampled for two classes; this classifier has {len(est.classes_)}"
                         " (one-vs-all)")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n or not np.all(np.isin(y, est.classes_)):
        raise ValueError(f"y must hold {n} labels among the classifier's classes {list(est.classes_)}")
    return (y == est.classes_[1]).astype(np.float64)


def ard_surrogate(surrogate_eps, label):
    """The ARD prior's labelled proper surrogate ``α_i ~ Gamma(ε, ε)`` as a statement
    (:class:`~sparsebayes.inference.posterior.twin_typeii.GammaPrecision`) and its label; the RVM's flat prior on
    each ``α_i`` has no proper posterior, so ``surrogate_eps`` is required (``ValueError`` naming it)."""
    from sparsebayes.inference.posterior.twin_builders import _surrogate
    from sparsebayes.inference.posterior.twin_typeii import GammaPrecision
    eps, label = _surrogate(surrogate_eps, label)
    return GammaPrecision(eps), label


def gibbs_hierarchy(prior):
    """``prior`` when it has Gibbs conditionals of its own (the ``"gibbs"`` capability: the horseshoe's,
    the Laplace hierarchy's exponential scale mixture with γ fixed or under its ``gamma_prior``, Park &
    Casella 2008), the form :mod:`~sparsebayes.inference.engines.hierarchy_gibbs` runs; else ``None``."""
    return prior if supports(prior, "gibbs") else None


def _gibbs_sampler(statement, likelihood, params):
    """The Gibbs runner of the model (module docstring), or ``None``. A likelihood with ``conjugate_noise`` (the
    Gaussian) keeps the hierarchy's Gaussian sweep with σ² under its flat prior (the one sampler of that model here; a fixed
    σ² has none), for a hierarchy with conditionals of its own. A likelihood with a conjugate augmentation
    runs the augmented sweep for a hierarchy with Gibbs conditionals (:func:`gibbs_hierarchy`), unless
    its parameter is fixed where the sweep would draw it (``gibbs_param_step``)."""
    if conjugate_noise(likelihood):
        return hierarchy_gibbs_sampler if supports(statement, "gibbs") and params is None else None
    if missing_pieces(likelihood, LIKELIHOOD_CAPABILITIES["gibbs"]) or gibbs_hierarchy(statement) is None:
        return None
    if params is not None and hasattr(likelihood, "gibbs_param_step"):
        return None
    return augmented_gibbs_sampler


def hierarchy_gibbs_sampler(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar=False):
    """:func:`sparsebayes.inference.engines.hierarchy_gibbs.run` on the twin's design (its bias column keeps
    the hierarchy's prior, as in the NUTS twin, so no intercept is integrated out) as
    ``InferenceData`` with the NUTS twin's names: ``beta``, ``noise_var``, and the sites the
    hierarchy's ``gibbs_twin_sites`` gives (the horseshoe's ``lam_local``, ``beta_raw``: ``β = τ λ z``);
    ``log_likelihood`` and ``observed_data`` ``y`` (the likelihood's own ``log_lik``)."""
    import time

    from sparsebayes.inference.engines import hierarchy_gibbs
    from sparsebayes.inference.posterior.arviz_compat import from_dict

    start = time.perf_counter()
    states, infos = hierarchy_gibbs.run(t.H, t.y, t.prior, num_warmup=num_warmup, num_samples=num_samples,
                                        num_chains=num_chains, seed=seed, fit_intercept=False,
                                        progress_bar=progress_bar)
    seconds = time.perf_counter() - start
    beta, noise_var = np.asarray(states.beta), np.asarray(states.noise_var)
    post = {"beta": beta, "noise_var": noise_var}
    if hasattr(t.prior, "gibbs_twin_sites"):  # the NUTS twin's own sites, where the hierarchy names them
        post.update(t.prior.gibbs_twin_sites(beta, states.aux))
    eta = np.einsum("cdp,np->cdn", beta, t.H)
    loglik = np.asarray(t.likelihood.log_lik(np.asarray(t.y), eta, noise_var[..., None]), dtype=np.float64)
    idata = from_dict({"posterior": post, "sample_stats": {"log_lik": np.asarray(infos.log_lik),
                                                           "log_min_variance": np.asarray(infos.log_min_variance)},
                       "log_likelihood": {"y": loglik}, "observed_data": {"y": t.y}}, coords=coords,
                      dims={**{k: ["basis"] for k, v in post.items() if np.ndim(v) == 3}, "y": ["obs"]})
    idata.posterior.attrs.update(sampling_seconds=seconds, inference="hierarchy-gibbs")
    return idata


def augmented_gibbs_sampler(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar=False):
    """:func:`sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented` on the twin's design and targets (no
    intercept of its own: the design's bias column has the hierarchy's prior, as in the NUTS twin), the
    hierarchy in its Gibbs form (:func:`gibbs_hierarchy`), as
    :func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.augmented_inference_data` under the twin's names
    (``beta`` on ``basis``, the likelihood's parameter by its ``param_name``)."""
    import time

    from sparsebayes.inference.engines import hierarchy_gibbs_augmented

    prior = gibbs_hierarchy(t.prior)
    start = time.perf_counter()
    states, infos = hierarchy_gibbs_augmented.run_augmented(
        t.H, t.y, prior, t.likelihood, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
        seed=seed, fit_intercept=False, likelihood_param=t.params, progress_bar=progress_bar)
    seconds = time.perf_counter() - start
    idata = hierarchy_gibbs_augmented.augmented_inference_data(states, infos, t.H, t.y, t.likelihood, prior, fit_intercept=False,
                                                     coords=coords, seed=seed + 1)
    idata.posterior.attrs.update(sampling_seconds=seconds, inference="augmented-gibbs")
    return idata
