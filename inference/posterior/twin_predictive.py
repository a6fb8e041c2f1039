"""The posterior's predictions at held-out rows: per draw, the test log-likelihood and the predictive mean
(regression) or class probabilities (classification), from the twin model itself.

The twin's NumPyro model is run once per posterior draw, with the draw substituted for its latent
sites and the test design and targets as data (the twin of the test rows, built with the training
twin's data-dependent pieces: :func:`sparsebayes.inference.posterior.twin_posterior.twin` with ``train``).
The distribution at the observed site ``y`` then gives everything: its ``log_prob`` at the test
targets (the pointwise log-likelihood, as ``numpyro.infer.util.log_likelihood`` computes it), its
``mean`` (regression) or its ``log_prob`` at every class code (classification). A twin of the one model
(:func:`sparsebayes.models.model.sparse_model`) is scored by its likelihood object itself: ``log_lik``
and ``mean`` at ``η = Hβ`` (the Student-t's and the negative binomial's densities as much as the
Gaussian's), so the held-out scores are of exactly the model that was sampled.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

#: The ``InferenceData`` group the held-out quantities go in (ArviZ's group for out-of-sample predictions).
GROUP = "predictions"


def site_draws(posterior):
    """``{site: array (chain × draw, ...)}`` of an ``xarray.Dataset`` of draws."""
    return {k: np.asarray(v.values).reshape(-1, *v.shape[2:]) for k, v in posterior.data_vars.items()}


def predictions(model, H, y, kwargs, draws, *, n_classes=None, y_offset=0.0, seed=0, likelihood=None,
                log_lik_only=False, block=None):
    """Per draw of ``draws`` (``{site: (S, ...)}``), the model's ``y`` site at design ``H``, targets ``y``.

    Parameters
    ----------
    model : callable
        The twin's NumPyro model ``model(H, y, **kwargs)`` with its observations at the site ``y``.
    H, y : arrays (n, p), (n,)
        The test rows' design and targets, in the model's coding (0/1 or class codes for a classifier,
        centred for the Bayesian Lasso).
    kwargs : dict
        The model's keyword arguments (the ones the draws were sampled with).
    draws : dict
        Posterior draws of the latent sites, leading dim the draws.
    n_classes : int or None
        A classifier's number of classes: the class probabilities are returned; ``None``: regression.
    y_offset : float
        Added to the predictive mean (undoes the model's centring of ``y``).
    seed : int
        Key for any latent site the draws lack (drawn from its prior; ``y``'s law never needs one).
    likelihood : likelihood object or None
        The model's likelihood (a twin of :func:`sparsebayes.models.model.sparse_model`): the scores are
        then its own ``log_lik`` and ``mean`` at ``η = Hβ`` (``+ b₀`` with an ``intercept`` site) and
        the parameter of the draw (or the fixed ``params``), the class probabilities
        ``exp(log_lik(k, η))``; ``None``: the observed site's distribution's ``log_prob`` and ``mean``.
    log_lik_only : bool
        Only ``log_lik`` (the pointwise log-likelihood of :mod:`sparsebayes.inference.posterior.pointwise_loglik`).
    block : int or None
        ``None``: every draw at once, operation by operation. A number: the draws in blocks of that
        many (the last one padded), each by one compiled program (the values agree with the
        uncompiled ones to rounding), so the work arrays are ``block × n`` whatever the draws.

    Returns
    -------
    dict
        ``log_lik`` (S, n), the log density of each test target at each draw; and ``mean`` (S, n),
        ``E[y | draw]``, or ``prob`` (S, n, n_classes), ``P(y = k | draw)``.
    """
    from numpyro.handlers import seed as seeded
    from numpyro.handlers import substitute, trace

    H, y = jnp.asarray(H), jnp.asarray(y, dtype=jnp.float64 if likelihood is not None else None)

    def by_likelihood(tr, H, y):
        eta = H @ tr["beta"]["value"]
        if "intercept" in tr:  # a model whose intercept is a site of its own (the sampling estimators')
            eta = eta + tr["intercept"]["value"]
        own = getattr(likelihood, "param_name", None)
        params = kwargs.get("params") if own is None or "params" in kwargs else tr[own]["value"]
        out = {"log_lik": likelihood.log_lik(y, eta, params)}
        if log_lik_only:
            return out
        if n_classes is None:
            out["mean"] = likelihood.mean(eta, params) + y_offset
        else:
            out["prob"] = jnp.exp(jnp.stack([likelihood.log_lik(jnp.full(y.shape, k, dtype=y.dtype), eta, params)
                                             for k in range(n_classes)], axis=-1))
        return out

    def one(sample, key, H, y):
        tr = trace(substitute(seeded(model, key), data=sample)).get_trace(H, y, **kwargs)
        if likelihood is not None:
            return by_likelihood(tr, H, y)
        site = tr["y"]
        fn, value = site["fn"], site["value"]
        out = {"log_lik": fn.log_prob(value)}
        if log_lik_only:
            return out
        if n_classes is None:
            out["mean"] = jnp.broadcast_to(fn.mean, value.shape) + y_offset
        else:
            out["prob"] = jnp.exp(jnp.stack([fn.log_prob(jnp.full(value.shape, k, dtype=value.dtype))
                                             for k in range(n_classes)], axis=-1))
        return out

    size = len(next(iter(draws.values())))
    keys = jax.random.split(jax.random.PRNGKey(seed), size)
    batched = jax.vmap(one, in_axes=(0, 0, None, None))
    if block is None:
        return {k: np.asarray(v, dtype=np.float64) for k, v in batched(draws, keys, H, y).items()}
    compiled, parts = jax.jit(batched), []
    draws, keys = {k: np.asarray(v) for k, v in draws.items()}, np.asarray(keys)  # sliced here, not by JAX ops
    for start in range(0, size, block):
        stop = min(start + block, size)
        pad = np.minimum(np.arange(start, start + block), stop - 1)  # the last block padded with its last draw
        out = compiled({k: v[pad] for k, v in draws.items()}, keys[pad], H, y)
        parts.append({k: np.asarray(v, dtype=np.float64)[:stop - start] for k, v in out.items()})
    return {k: np.concatenate([part[k] for part in parts]) for k in parts[0]}


def add_predictions(idata, t_test, kwargs, *, n_classes=None, seed=0):
    """Add the group :data:`GROUP` to ``idata``: :func:`predictions` of its ``posterior`` (in the model's
    site layout) at the test twin ``t_test``'s rows, on dims ``(chain, draw, test_obs[, class])``."""
    from sparsebayes.inference.posterior.arviz_compat import group_from_dict, set_group
    post = idata.posterior
    lead = (post.sizes["chain"], post.sizes["draw"])
    out = predictions(t_test.model, t_test.H, t_test.y, kwargs, site_draws(post), n_classes=n_classes,
                      y_offset=float(t_test.y_offset), seed=seed, likelihood=getattr(t_test, "likelihood", None))
    values = {k: v.reshape(*lead, *v.shape[1:]) for k, v in out.items()}
    dims = {"log_lik": ["test_obs"], "mean": ["test_obs"], "prob": ["test_obs", "class_code"]}
    set_group(idata, GROUP, group_from_dict(GROUP, values, dims={k: dims[k] for k in values}))
