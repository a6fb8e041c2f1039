"""A thin runner over ``numpyro.infer.MCMC(NUTS)`` for any model in :mod:`sparsebayes.models`.

Returns ArviZ ``InferenceData`` with ``chain``/``draw`` dimensions, sample stats
(divergences, tree depth) and the wall time of warm-up + sampling in the attributes.
"""
from __future__ import annotations

import time

import arviz as az
import jax
import numpy as np
from numpyro.infer import MCMC, NUTS


def run_nuts(
    model,
    *model_args,
    num_warmup=1000,
    num_samples=1000,
    num_chains=4,
    seed=0,
    target_accept_prob=0.8,
    max_tree_depth=10,
    progress_bar=True,
    coords=None,
    dims=None,
    chain_method=None,
    init_params=None,
    **model_kwargs,
):
    """Sample ``model(*model_args, **model_kwargs)`` with NUTS and return ``InferenceData``.

    Parameters
    ----------
    model : callable
        A NumPyro model function.
    num_warmup, num_samples, num_chains : int
        Warm-up and kept draws per chain, and the number of chains.
    chain_method : {"sequential", "parallel", "vectorized"} or None
        ``None`` picks "parallel" when there are as many JAX devices as chains, otherwise
        "sequential" (see ``numpyro.set_host_device_count``).
    """
    if chain_method is None:
        chain_method = "parallel" if jax.local_device_count() >= num_chains else "sequential"
    kernel = NUTS(model, target_accept_prob=target_accept_prob, max_tree_depth=max_tree_depth)
    mcmc = MCMC(
        kernel,
        num_warmup=num_warmup,
        num_samples=num_samples,
        num_chains=num_chains,
        chain_method=chain_method,
        progress_bar=progress_bar,
    )
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), *model_args, init_params=init_params, extra_fields=("diverging",), **model_kwargs)
    jax.block_until_ready(mcmc.get_samples())
    seconds = time.perf_counter() - t0
    idata = az.from_numpyro(mcmc, coords=coords, dims=dims)
    idata.posterior.attrs["inference"] = "nuts"
    idata.posterior.attrs["sampling_seconds"] = seconds
    n_div = int(np.asarray(idata.sample_stats["diverging"]).sum())
    idata.posterior.attrs["n_divergences"] = n_div
    return idata
