"""``est.sample_posterior(X, y)``: the full posterior of a fitted estimator's own model, on its own names.

:class:`PosteriorSamplingMixin` gives every estimator that :func:`sparsebayes.compare` supports one
method that samples the posterior of the model whose point estimate (MAP, EM or type-II) the
estimator reports, on the fitted design and hierarchy (the "twin",
:func:`sparsebayes.inference.posterior.twin_posterior.sample_posterior`), and returns it under the variable
name, dims and coords of the estimator's own :meth:`to_inference_data`: ``beta`` on ``basis`` for
the EM estimators (with the ``classifier`` dim of the binary probit classifier), ``beta`` on
``feature`` for the Bayesian Lasso. ``az.plot_forest([est.to_inference_data(), draws])`` then gives
one row per weight. A one-vs-all classifier's (more than two classes) are ``K`` independent binary
posteriors (:mod:`sparsebayes.inference.posterior.twin_one_vs_all`), its weights on ``(classifier, basis)``
as its point estimate's; SMLR's on ``(basis, class)``.
"""
from __future__ import annotations

import numpy as np

#: Dims every group shares; the rest of a weight's dims are the estimator's own.
_SAMPLE_DIMS = ("chain", "draw")


class PosteriorSamplingMixin:
    """Adds :meth:`sample_posterior` to a fitted estimator with a twin model (module docstring), and the
    hook :meth:`posterior_model` by which the twin asks an estimator what its model is."""

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """The record of this fitted estimator's own model on ``(X, y)``
        (:mod:`sparsebayes.inference.posterior.posterior_model`): the NumPyro model, its design and targets, the
        hierarchy and likelihood, the basis names, the weights' layout and the Gibbs sampler where there
        is one. ``X = None``: the record without data (which samplers the model has). ``train``: the
        training rows' record, when ``(X, y)`` are held-out rows (what the model takes from the data is
        taken from it). An estimator whose model is (hierarchy, likelihood, design) overrides this with
        :func:`~sparsebayes.inference.posterior.posterior_model.sparse_posterior_model`, the papers' own twins
        (type-II, Bernoulli RVM, SMLR, Bayesian Lasso) with their builder in
        :mod:`sparsebayes.inference.posterior.twin_builders`; this default is a ``ValueError`` naming the estimator."""
        from sparsebayes.inference.posterior import twin_builders

        if X is None:
            return twin_builders.described(self)
        return twin_builders.build(self, X, y, surrogate_eps, train)

    def sample_posterior(self, X, y, sampler="nuts", *, draws=1000, chains=4, warmup=None, seed=0,
                         progress_bar=False, surrogate_eps=None, target_accept_prob=None):
        """Draws of the posterior of this fitted estimator's model on ``(X, y)``.

        Parameters
        ----------
        X, y : the data (the training data, for the posterior of the fit).
        sampler : {"nuts", "gibbs"}
            ``"gibbs"`` only where the hierarchy has conditionally conjugate conditionals (the
            Bayesian Lasso; the regressor with the horseshoe); otherwise a ``ValueError`` names the
            hierarchy.
        draws, chains : int
            Kept draws per chain and the number of chains.
        warmup : int or None
            Warm-up draws per chain (default: ``draws``).
        seed : int
        progress_bar : bool
            A progress bar per run (NumPyro's for NUTS).
        surrogate_eps : float or None
            Jeffreys prior only: sample the labelled proper surrogate ``1/τ_i ~ Gamma(ε, ε)`` (the
            Jeffreys posterior is improper); ``attrs["model"]`` names it.
        target_accept_prob : float or None
            NUTS's target acceptance rate; ``None``: the one the hierarchy declares (its
            ``nuts_settings``, e.g. 0.99 for the horseshoe), else 0.8.

        Returns
        -------
        arviz.InferenceData
            ``posterior``, ``sample_stats``, ``log_likelihood`` and ``observed_data`` (``y`` on
            ``obs``), ``posterior_predictive``; the weights under the variable name, dims and
            coords of :meth:`to_inference_data`. ``attrs``: ``model`` (the prior, or its
            surrogate), ``estimator``, ``sampler``.
        """
        from sparsebayes.inference.posterior.twin_posterior import sample_posterior

        idata = sample_posterior(self, X, y, sampler, num_warmup=draws if warmup is None else warmup,
                                 num_samples=draws, num_chains=chains, seed=seed, progress_bar=progress_bar,
                                 surrogate_eps=surrogate_eps, target_accept_prob=target_accept_prob)
        from sparsebayes.inference.posterior.twin_one_vs_all import CLASS_DIM
        if CLASS_DIM in idata.posterior["beta"].dims:  # one-vs-all: the one-vs-all point's (classifier, basis)
            return weights_first_by(idata, CLASS_DIM)
        return align_to_point_estimate(self, idata)


def weights_first_by(idata, dim, name="beta"):
    """``idata`` with its weights ``name`` on ``(chain, draw, dim, ...)`` in every group that has them: the
    layout of a one-vs-all point estimate's ``beta`` (``classifier`` before ``basis``)."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, groups, set_group
    for group in groups(idata):
        ds = dataset(idata, group)
        if name in ds and dim in ds[name].dims:
            lead = [d for d in _SAMPLE_DIMS if d in ds[name].dims]
            set_group(idata, group, ds.assign({name: ds[name].transpose(*lead, dim, ...)}))
    idata.attrs["weights"] = name
    return idata


def point_weight_layout(est):
    """``(name, dims, coords)`` of the weights in ``est.to_inference_data()``'s posterior: the variable
    on the basis (``beta``), its dims without ``chain``/``draw``, and their coords."""
    point = est.to_inference_data().posterior
    if "beta" not in point:
        raise ValueError(f"{type(est).__name__}.to_inference_data() has no weight variable 'beta'")
    dims = tuple(d for d in point["beta"].dims if d not in _SAMPLE_DIMS)
    return "beta", dims, {d: list(point["beta"].coords[d].values) for d in dims}


def align_to_point_estimate(est, idata, source="beta", source_dim="basis"):
    """Rename ``idata``'s weights (``source`` on ``source_dim``) to the layout of ``est``'s point
    estimate (:func:`point_weight_layout`): its variable name, its basis dim, and a leading dim of
    one entry (a binary classifier's ``classifier``) added. Every group is changed alike; the
    basis coords must agree, else ``ValueError``."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, groups, rename_dims, set_group
    if not hasattr(est, "to_inference_data"):  # its point is its model record's: beta on basis, as sampled
        idata.attrs["weights"] = source
        return idata
    name, dims, coords = point_weight_layout(est)
    basis_dim = dims[-1] if source_dim not in dims else source_dim
    here = list(idata.posterior[source].coords[source_dim].values)
    if [str(c) for c in here] != [str(c) for c in coords[basis_dim]]:
        raise ValueError(f"the sampled weights {here} do not match the point estimate's {coords[basis_dim]}")
    if basis_dim != source_dim:
        idata = rename_dims(idata, {source_dim: basis_dim})
    extra = [d for d in dims if d not in (basis_dim, *idata.posterior[source].dims)]
    for group in groups(idata):
        ds = dataset(idata, group)
        if source not in ds:
            continue
        var = ds[source]
        for d in extra:
            if len(coords[d]) != 1:
                raise ValueError(f"the point estimate's dim {d!r} has {len(coords[d])} entries; the sampled "
                                 "model has one")
            var = var.expand_dims({d: coords[d]}, axis=var.dims.index(basis_dim))
        var = var.transpose(*_SAMPLE_DIMS, *dims) if set(_SAMPLE_DIMS) <= set(var.dims) else var
        ds = ds.drop_vars(source).assign({name: var})
        set_group(idata, group, ds)
    idata.attrs["weights"] = name
    return idata


def same_layout(a, b, name):
    """Whether variable ``name`` has the same dims and coords in datasets ``a`` and ``b`` (chain and
    draw excepted): the check behind "one naming scheme"."""
    va, vb = a[name], b[name]
    dims = [d for d in va.dims if d not in _SAMPLE_DIMS]
    return dims == [d for d in vb.dims if d not in _SAMPLE_DIMS] and all(
        np.array_equal(va.coords[d].values.astype(str), vb.coords[d].values.astype(str)) for d in dims)
