"""The pointwise log-likelihood ``log p(y_i | θ⁽ˢ⁾)`` of a model's posterior draws, computed when asked.

PSIS-LOO (Vehtari, Gelman & Gabry 2017, eqs. 4-10) needs, per draw ``s`` and data row ``i``, the log
density of ``y_i`` under the draw's parameters: an ``S × n`` array, 8 bytes per draw and row, more than
the draws themselves as soon as ``n`` exceeds the number of weights (at ``n = 50,000`` and 4,000 draws,
1.6 GB). The samplers therefore need not keep it; it is a function of the draws and the model alone,
and this module computes it from them, one way for every sampler (NUTS, collapsed NUTS, each Gibbs
engine), so that ``az.loo`` reads the same numbers whichever engine drew them.

The model is the sampled one, as its record says (:func:`sparsebayes.inference.posterior.twin_posterior.twin`,
:mod:`sparsebayes.inference.posterior.posterior_model`): its NumPyro model is traced at each draw (the draw
substituted for its latent sites, :func:`sparsebayes.inference.posterior.twin_predictive.predictions`) and

* a record with a likelihood object (the one model :func:`sparsebayes.models.model.sparse_model`) is
  scored by that object's own ``log_lik(y, η, θ)`` at ``η = Hβ`` (``+ b₀`` with an intercept site) and
  the draw's likelihood parameter θ (or the fixed one): the Gaussian's, probit's, logistic's,
  Student-t's and negative binomial's densities alike;
* a record without one (the papers' own twins: type-II, Bernoulli RVM, SMLR, the Bayesian Lasso) by
  the ``log_prob`` of its observed site ``y``, as ``numpyro.infer.util.log_likelihood`` computes it.

The draws are scored in blocks of ``block`` draws, one compiled program, the same for every block (the model's
operations one by one would compile a program each), so the work array is ``block × n`` whatever ``S``,
and ``thin`` keeps every ``thin``-th draw of each chain (LOO on fewer draws, at its Monte Carlo error).

A sampler's ``InferenceData`` returned without the group (``sample_posterior(..., log_likelihood=False)``)
is registered by :func:`defer_log_likelihood` with its model record and its draws in the model's site
layout (a reference, not a copy); :func:`ensure_log_likelihood` computes the group when LOO asks for it.
The registration lives as long as the ``InferenceData`` object (a weak reference), so a saved and
reloaded one has no record: it gets the group from :func:`add_log_likelihood` and the record.
"""
from __future__ import annotations

import weakref

import numpy as np

from sparsebayes.inference.posterior.twin_predictive import predictions, site_draws

#: The ``InferenceData`` group, variable and dim ArviZ's ``loo`` reads.
GROUP, VARIABLE, DIM = "log_likelihood", "y", "obs"
#: Draws scored per vectorized block.
BLOCK = 1000


def pointwise_log_likelihood(t, draws, kwargs=None, *, block=BLOCK):
    """``(S, n)`` array of ``log p(y_i | draw s)``, float64, for the model record ``t`` (its ``model``,
    design ``H``, targets ``y``, ``likelihood`` and ``kwargs``) at ``draws`` (``{site: (S, ...)}`` in the
    model's site layout). ``kwargs``: the model's keyword arguments the draws were sampled with
    (default ``t.kwargs``). ``block``: draws per vectorized block (memory ``block × n``)."""
    if block < 1:
        raise ValueError(f"block must be a positive number of draws, got {block!r}")
    kwargs = t.kwargs if kwargs is None else kwargs
    size = len(next(iter(draws.values())))
    return predictions(t.model, t.H, t.y, kwargs, draws, likelihood=getattr(t, "likelihood", None),
                       log_lik_only=True, block=min(int(block), size))["log_lik"]


def log_likelihood_dataset(posterior, t, kwargs=None, *, thin=1, block=BLOCK):
    """The ``log_likelihood`` group of the draws ``posterior`` (an ``xarray.Dataset`` with ``chain``
    and ``draw`` dims, in the model's site layout) as an ``xarray.Dataset``: ``y`` on
    ``(chain, draw, obs)``; with ``thin`` every ``thin``-th draw of each chain. A one-vs-all record
    (:mod:`sparsebayes.inference.posterior.twin_one_vs_all`) is scored by the sum of its parts'
    ``log p(t_ik | β_k)``: ``posterior`` and ``kwargs`` are then one per class (or the stacked draws)."""
    from sparsebayes.inference.posterior.arviz_compat import group_from_dict
    if int(thin) != thin or thin < 1:
        raise ValueError(f"thin must be a positive integer, got {thin!r}")
    if getattr(t, "parts", None) is not None:  # one-vs-all: the sum of its K binary parts' (twin_one_vs_all)
        from sparsebayes.inference.posterior.twin_one_vs_all import one_vs_all_log_likelihood
        def score(record, kw, draws):
            draws = draws.isel(draw=slice(None, None, int(thin))) if thin > 1 else draws
            return pointwise_log_likelihood(record, site_draws(draws), kw, block=block)
        first = posterior[0] if isinstance(posterior, (list, tuple)) else posterior
        post = first.isel(draw=slice(None, None, int(thin))) if thin > 1 else first
        values = one_vs_all_log_likelihood(t, kwargs, posterior, score)
    else:
        post = posterior.isel(draw=slice(None, None, int(thin))) if thin > 1 else posterior
        values = pointwise_log_likelihood(t, site_draws(post), kwargs, block=block)
    lead = (post.sizes["chain"], post.sizes["draw"])
    return group_from_dict(GROUP, {VARIABLE: values.reshape(*lead, values.shape[-1])}, dims={VARIABLE: [DIM]},
                           coords={"draw": np.asarray(post["draw"].values)})


def add_log_likelihood(idata, t, kwargs=None, *, thin=1, block=BLOCK):
    """Set ``idata``'s ``log_likelihood`` group (:func:`log_likelihood_dataset` of its ``posterior``,
    which must be in the model's site layout) and, where it has none, its ``observed_data`` ``y``
    (on ``obs``). Returns ``idata``."""
    from sparsebayes.inference.posterior.arviz_compat import group_from_dict, has_group, set_group
    set_group(idata, GROUP, log_likelihood_dataset(idata.posterior, t, kwargs, thin=thin, block=block))
    if not has_group(idata, "observed_data"):
        set_group(idata, "observed_data", group_from_dict("observed_data", {VARIABLE: np.asarray(t.y)},
                                                          dims={VARIABLE: [DIM]}))
    return idata


def drop_log_likelihood(idata):
    """``idata`` without its ``log_likelihood`` group (the draws and ``observed_data`` stay)."""
    from sparsebayes.inference.posterior.arviz_compat import has_group
    if has_group(idata, GROUP):
        del idata[GROUP]  # InferenceData (ArviZ 0.x) and xarray.DataTree (1.x) alike
    return idata


#: ``id(idata) -> (record, kwargs, posterior)`` of the InferenceData whose group is computed when asked.
_DEFERRED = {}


def defer_log_likelihood(idata, t, kwargs=None, *, posterior=None):
    """Register ``idata`` (no ``log_likelihood`` group; its ``posterior`` still in the model's site
    layout, as the sampler returned it) so that :func:`ensure_log_likelihood` can compute its group
    later from the record ``t`` and the model's keyword arguments ``kwargs``. ``posterior``: the draws
    in the model's site layout where ``idata``'s are not (a one-vs-all record's: one ``Dataset`` per
    class, with ``kwargs`` one per class). Returns ``idata``."""
    from sparsebayes.inference.posterior.arviz_compat import dataset
    key = id(idata)
    _DEFERRED[key] = (t, kwargs, dataset(idata, "posterior") if posterior is None else posterior)
    weakref.finalize(idata, _DEFERRED.pop, key, None)
    return idata


def ensure_log_likelihood(idata):
    """``idata``'s ``log_likelihood`` group (an ``xarray.Dataset``): the one it has, else computed now
    from the draws registered by :func:`defer_log_likelihood` (and set in ``idata``). ``ValueError``
    when it has neither."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, has_group, set_group
    if has_group(idata, GROUP):
        return dataset(idata, GROUP)
    entry = _DEFERRED.get(id(idata))
    if entry is None:
        raise ValueError("no log_likelihood group, and no model record to compute it from: sample with "
                         "log_likelihood=True, or call add_log_likelihood(idata, record)")
    t, kwargs, posterior = entry
    ds = log_likelihood_dataset(posterior, t, kwargs)
    set_group(idata, GROUP, ds)
    _DEFERRED.pop(id(idata), None)
    return ds
