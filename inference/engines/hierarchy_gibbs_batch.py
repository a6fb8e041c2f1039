"""Posterior means of β over a batch of data sets by the hierarchy Gibbs sweep from pre-drawn variates
(:mod:`.hierarchy_gibbs_variates`): one chain per data set, ``vmap`` over the data sets inside the
``scan``, only running sums kept (the BLS tables' Bayesian Lasso over 100 simulated data sets:
:func:`posterior_mean_batch` with :func:`sparsebayes.inference.engines.bayesian_lasso.engine_settings`).
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from sparsebayes.models.priors import require

from sparsebayes.inference.engines import driver
from sparsebayes.inference.engines import gibbs_variates as gv
from sparsebayes.inference.engines.hierarchy_gibbs import FLAT, GibbsModel, NoisePrior
from sparsebayes.inference.engines.hierarchy_gibbs_variates import (can_take_variates, dispersed_start, step_from,
                                                                    variate_chunk, variate_data, variate_setup)
from sparsebayes.inference.engines.progress import chunk_lengths
from sparsebayes.inference._validation import (as_numeric_array, check_count, check_finite, check_sampler_counts)


@partial(jax.jit, static_argnames=("scaled", "use_rue"))
def _sum_batch_draws(variates, state, sums, Xs, ys, dof, first_kept, prior, noise, scaled, use_rue):
    """The sweeps of ``variates`` (sweep-major) for every data set of a batch (``vmap`` inside the
    ``scan``; one chain each), adding up the β draws of sweeps ``first_kept`` on: ``(last state, sums,
    refused sweeps per data set)``."""
    data = jax.vmap(lambda X, y: variate_data(X, y, dof, use_rue))(Xs, ys)
    sets_step = jax.vmap(lambda s, d, m, u: step_from(s, d, m, variates=u, scaled=scaled), in_axes=(0, 0, None, 0))

    def summing_step(carry, d, m, inp):  # a sweep of every data set, its β added to the sums once kept
        state, sums = carry
        u, i = inp
        new, info = sets_step(state, d, m, u)
        return (new, sums + jnp.where(i >= first_kept, new.beta, 0.0)), info.refused

    sweeps = variates.noise_gamma.shape[0]
    (state, sums), bad = driver.trace(summing_step, (state, sums), data, GibbsModel(prior, noise),
                                      inputs=(variates, jnp.arange(sweeps)))
    return state, sums, jnp.sum(bad, axis=0)


def posterior_mean_batch(Xs, ys, prior, num_warmup, num_samples, *, seed=0, noise_prior=FLAT, scaled=False,
                         fit_intercept=True, variates="auto"):
    """Posterior mean of β for a batch of data sets ``Xs`` (B, n, p), ``ys`` (B, n) under the hierarchy
    ``prior`` (one that declares its variates: :func:`~.hierarchy_gibbs_variates.can_take_variates`), one chain each, ``vmap``
    over data sets, sweeps from pre-drawn variates (:func:`~.hierarchy_gibbs_variates.step_from`; ``variates`` as for
    :func:`~.hierarchy_gibbs_variates.run_with_variates`). ``fit_intercept`` centres each data set (``m = n − 1``).

    Only running sums are kept, so thousands of draws over a 100-data-set table fit in memory: the
    sweeps run in calls of at most 16 MiB of host variates. Returns the means (B, p) and, per data
    set, the number of refused sweeps (:func:`~.hierarchy_gibbs.guarded`). Inputs are checked (``ValueError`` naming
    the problem): a 3-D ``Xs`` with at least 2 rows per set, ``ys`` of matching shape, finite."""
    require(prior, "gibbs")
    if not can_take_variates(prior):
        raise ValueError(f"{type(prior).__name__} declares no standard variates (gibbs_variates and gibbs_update_from)")
    check_sampler_counts(num_warmup, num_samples, 1)
    check_count("seed", seed, 0)
    gv.choose_variates(variates)
    Xs, ys = as_numeric_array(Xs, "Xs"), as_numeric_array(ys, "ys")
    if Xs.ndim != 3 or min(Xs.shape) < 1 or Xs.shape[1] < 2:
        raise ValueError(f"Xs must be a 3-D array (data sets × samples × features) with at least 2 samples, "
                         f"got shape {Xs.shape}")
    if ys.shape != Xs.shape[:2]:
        raise ValueError(f"ys must have shape {Xs.shape[:2]} (data sets × samples) to match Xs, got {ys.shape}")
    check_finite(Xs, "Xs")
    check_finite(ys, "ys")
    B, n, p = Xs.shape
    Xp, yp, dof, n, rows, use_rue, noise_shape = variate_setup(Xs, ys, prior, noise_prior, scaled, fit_intercept,
                                                                "auto")
    plan = gv.variate_plan(prior, n, 0 if use_rue else rows, p, noise_shape)
    streams = gv.variate_streams(seed, len(plan.aux))
    starts = [dispersed_start(X[:n], y[:n], prior, 1, streams[0]) for X, y in zip(Xp, yp)]
    state = jax.tree_util.tree_map(lambda *a: np.concatenate(a), *starts)
    noise = NoisePrior(*(np.float64(v) for v in noise_prior))
    sums, refused, done = np.zeros((B, p)), np.zeros(B, np.int64), 0
    total = num_warmup + num_samples
    source = gv.VariateSource(variates, seed, streams, B, plan)
    for m in chunk_lengths(total, variate_chunk(total, source.per_sweep(), False, source.budget)):
        state, sums, bad = _sum_batch_draws(source.next(m), state, sums, Xp, yp, np.float64(dof), num_warmup - done,
                                            prior, noise, bool(scaled), use_rue)
        refused += np.asarray(bad)
        done += m
    return np.asarray(sums) / num_samples, refused
