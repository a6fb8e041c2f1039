"""A thin runner over ``numpyro.infer.MCMC(NUTS)`` for any model in :mod:`sparsebayes.models`.

Returns ArviZ ``InferenceData`` with ``chain``/``draw`` dimensions, sample stats (divergences,
energy for the BFMI, tree size, acceptance rate, step size) and, in the posterior's attributes,
the wall times of warm-up and of the kept draws apart. A run with divergent transitions, or
whose chains have not mixed (R-hat), says so in a warning.

The model is read once, abstractly, before it is sampled (:mod:`~sparsebayes.inference.engines.model_trace`),
and its warm-up and draws run in programs kept across runs (:mod:`~sparsebayes.inference.engines.nuts_programs`).
"""
from __future__ import annotations

import inspect
import time
import warnings
from functools import partial
from types import SimpleNamespace
from typing import NamedTuple

import jax
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.inference._timing import compile_seconds
from sparsebayes.inference._validation import as_numeric_array, check_count, check_data, check_number, check_sampler_counts, feature_labels
from sparsebayes.inference.engines.model_trace import (_is_array, _model_trace, _reject_improper_posterior,
                                                       _replay_model, factor_sites)
from sparsebayes.inference.engines.nuts_programs import (SAMPLE_STATS, _compiled_draws, _kept_warmup, _mcmc,
                                                         _NutsConfig, _pointwise_log_likelihood)


def run_nuts(
    model,
    *model_args,
    num_warmup=1000,
    num_samples=1000,
    num_chains=4,
    seed=0,
    target_accept_prob=None,
    max_tree_depth=None,
    dense_mass=None,
    progress_bar=True,
    coords=None,
    dims=None,
    chain_method=None,
    init_params=None,
    rhat_max=1.01,
    log_likelihood=True,
    **model_kwargs,
):
    """Sample ``model(*model_args, **model_kwargs)`` with NUTS and return ``InferenceData``.

    Parameters
    ----------
    model : callable
        A NumPyro model function.
    num_warmup, num_samples, num_chains : int
        Warm-up and kept draws per chain, and the number of chains.
    target_accept_prob, max_tree_depth : float, int or None
        NUTS's target acceptance rate and maximum tree depth. ``None``: the value the model's
        hierarchy declares (:func:`declared_settings`: a hierarchy object among the model's keyword
        arguments with a ``nuts_settings`` dict), else NumPyro's defaults, :data:`DEFAULT_SETTINGS`.
        The values used are recorded in ``posterior.attrs``.
    dense_mass : bool or None
        Adapt a dense mass matrix (the warm-up's estimate of the posterior covariance, Stan's
        ``dense_e``) instead of a diagonal one. ``None``: dense when the model has at most
        :data:`DENSE_MASS_MAX_DIM` latent dimensions (:func:`dense_mass_for`): a posterior with
        correlated weights (inputs that move together) then needs no more leapfrog steps than an
        uncorrelated one, and the ``d × d`` algebra costs little beside the gradient; larger models
        keep the diagonal one. Recorded in ``posterior.attrs``.
    chain_method : {"sequential", "parallel", "vectorized"} or None
        ``None`` picks "parallel" when there are two or more chains and as many JAX devices as
        chains, otherwise "sequential" (see ``numpyro.set_host_device_count``); one chain always runs
        as "sequential" (NumPyro maps nothing over one chain, so the choice only decides whether the
        compiled programs below are kept: they are; the draws agree with NumPyro's own ``MCMC`` to
        rounding). Without a progress bar, "sequential" runs the chains one after another inside one
        compiled program (:func:`~sparsebayes.inference.engines.nuts_programs._chains_in_one_program`):
        the same draws, one compile instead of one per chain; and the warm-up and draw programs are kept
        (:func:`~sparsebayes.inference.engines.nuts_programs._compiled_warmup`), so a later run of the same
        model, counts, settings, input shapes and structure of the non-array keyword arguments compiles
        nothing (a refit skips a compile that costs far more than a small fit): their non-zero floats (a
        hierarchy's ``gamma``, the horseshoe's scales, the Bayesian Lasso's ``lam2_rate``) are traced
        inputs of the programs, so a refit at new hyperparameter values reuses them too
        (:func:`~sparsebayes.inference.engines.nuts_programs._settings_key`; a model that reads such a value
        in Python runs with the values static, a program per value).
    rhat_max : float or None, default=1.01
        With two or more chains, a ``ConvergenceWarning`` when the largest rank-normalized split
        R-hat over the sampled variables exceeds this (Vehtari et al. 2021); ``None``: no check.
        Divergent transitions after warm-up always give a ``UserWarning``.
    log_likelihood : bool, default=True
        Add the pointwise ``log_likelihood`` group; ``False``: none (``S × n`` floats), for callers that
        compute it when asked (:mod:`sparsebayes.inference.posterior.pointwise_loglik`).

    Returns
    -------
    arviz.InferenceData (ArviZ 0.x) or xarray.DataTree (ArviZ 1.x)
        ``posterior.attrs``: ``sampling_seconds``, the wall time of warm-up and draws together,
        split into ``warmup_seconds`` and ``draws_seconds``; ``compile_seconds``, the part of it
        JAX spent compiling (NumPyro compiles inside its runs: the warm-up and the sampling loop,
        and with a progress bar once per chain), so that
        ``sampling_seconds − compile_seconds`` is the sampler's own time; ``n_divergences``;
        ``target_accept_prob`` and ``max_tree_depth``, the settings the kernel ran with.
        A progress bar slows the run (NumPyro then steps the chain from Python): time with
        ``progress_bar=False``.

    Notes
    -----
    pandas objects among the model's arguments, and lists among its positional arguments and
    ``y``, become NumPy arrays first (float64; integers and booleans, class labels, keep their
    dtype), so they reach JAX as arrays. With ``dims`` left to ArviZ (inferred from the model's
    plates), a DataFrame first argument's column names label the dim of the plates of that
    size (a model's weights: ``features`` of :func:`~sparsebayes.models.bayesian_lasso.bayesian_lasso`).
    Bad data is a ``ValueError`` naming the problem (:func:`_check_design_and_targets`).
    """
    run = nuts_draws(model, *model_args, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                     seed=seed, target_accept_prob=target_accept_prob, max_tree_depth=max_tree_depth,
                     dense_mass=dense_mass, progress_bar=progress_bar, coords=coords, dims=dims,
                     chain_method=chain_method, init_params=init_params, log_likelihood=log_likelihood,
                     stacklevel=3, **model_kwargs)
    idata = run.inference_data()
    _warn_on_rhat(idata, rhat_max)
    return idata


class NutsRun(NamedTuple):
    """The draws of a NUTS run (:func:`nuts_draws`) before they become ``InferenceData``:
    ``samples`` and ``extra`` (the :data:`~sparsebayes.inference.engines.nuts_programs.SAMPLE_STATS`)
    as NumPy arrays (chain, draw, ...),
    ``log_lik`` a function giving the pointwise log likelihood per observed site (chain, draw, ...) on
    the run's kept program, called when the ``InferenceData`` is built, or ``None``; ``attrs``
    the posterior's attributes (:func:`run_nuts`), and what ArviZ reads to build the groups.
    :meth:`inference_data` gives :func:`run_nuts`'s ``InferenceData``; a caller that needs only the
    draws (an estimator's fit) imports no ArviZ."""
    samples: dict
    extra: dict
    log_lik: object
    attrs: dict
    model: object
    model_args: tuple
    model_kwargs: dict
    num_chains: int
    num_samples: int
    coords: dict | None
    dims: dict | None
    factor_sites: list

    def inference_data(self):
        """The run as ArviZ ``InferenceData`` (:func:`run_nuts`'s groups and ``posterior.attrs``)."""
        from sparsebayes.inference.posterior.arviz_compat import dataset, from_numpyro, group_from_dict, has_group, set_group
        draws = _Draws(self.model, self.model_args, self.model_kwargs, self.samples, self.extra, self.num_chains,
                       self.num_samples)
        idata = from_numpyro(draws, coords=self.coords, dims=self.dims)
        if self.log_lik is not None and has_group(idata, "observed_data"):
            obs, ll = dataset(idata, "observed_data"), self.log_lik()
            set_group(idata, "log_likelihood", group_from_dict(
                "log_likelihood", ll, dims={k: list(obs[k].dims) for k in ll}, coords={d: obs[d].values for d in obs.dims}))
        idata = _drop_factor_sites(idata, self.factor_sites)
        idata.posterior.attrs["inference"] = "nuts"
        idata.posterior.attrs.update(self.attrs)
        return idata


def nuts_draws(model, *model_args, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, target_accept_prob=None,
               max_tree_depth=None, dense_mass=None, progress_bar=True, coords=None, dims=None, chain_method=None,
               init_params=None, log_likelihood=True, stacklevel=2, **model_kwargs):
    """:func:`run_nuts`'s run (the same arguments, the same draws) as a :class:`NutsRun`: the draws as
    NumPy arrays, without ArviZ (its import costs about as much as a small model's NUTS compile). It
    warns of divergent transitions as :func:`run_nuts` does (``stacklevel`` as ``warnings.warn``'s, from
    here); the R-hat check needs ArviZ and is :func:`run_nuts`'s."""
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    features = feature_labels(model_args[0]) if model_args else None
    model_args, model_kwargs = _as_arrays(model_args, model_kwargs)
    target_accept_prob, max_tree_depth = settings(model_kwargs, target_accept_prob, max_tree_depth)
    _check_settings_and_data(target_accept_prob, max_tree_depth, model_args, model_kwargs)
    _check_design_and_targets(model, model_args, model_kwargs)
    trace = _model_trace(model, model_args, model_kwargs)
    _reject_improper_posterior(trace)
    dense_mass = dense_mass_for(trace) if dense_mass is None else bool(dense_mass)
    if dims is None and features is not None:
        coords = {**_column_coords(trace, features), **(coords or {})}
    if chain_method is None or num_chains == 1:
        # one chain runs the same program under every chain_method (NumPyro maps nothing): the
        # sequential one, whose compiled warm-up and draws are kept for the next call
        chain_method = "parallel" if num_chains > 1 and jax.local_device_count() >= num_chains else "sequential"
    counts = (model, num_warmup, num_samples, num_chains, float(target_accept_prob), int(max_tree_depth),
              dense_mass)
    traced_kwargs = {k: v for k, v in model_kwargs.items() if _is_array(v)}
    compiled = (chain_method == "sequential" and not progress_bar
                and all(a is None or _is_array(a) for a in model_args))
    with compile_seconds() as compiling:
        t0 = time.perf_counter()
        if compiled:
            config, values, state = _kept_warmup(counts, model_kwargs, prng_key(seed), model_args, traced_kwargs,
                                                 init_params)
            compiled = config is not None
        if not compiled:
            config = _NutsConfig(*counts)
        if compiled:
            jax.block_until_ready(state)
            t1 = time.perf_counter()
            samples, extra = _compiled_draws(state, model_args, traced_kwargs, values, config=config)
        else:
            mcmc = _mcmc(config, chain_method, progress_bar)
            mcmc.warmup(prng_key(seed), *model_args, init_params=init_params, extra_fields=SAMPLE_STATS,
                        **model_kwargs)
            jax.block_until_ready(mcmc.post_warmup_state)
            t1 = time.perf_counter()
            mcmc.run(mcmc.post_warmup_state.rng_key, *model_args, extra_fields=SAMPLE_STATS, **model_kwargs)
            samples, extra = mcmc.get_samples(group_by_chain=True), mcmc.get_extra_fields(group_by_chain=True)
        samples, extra = jax.device_get(jax.block_until_ready((samples, extra)))
        t2 = time.perf_counter()
    log_lik = None
    if log_likelihood and any(site["is_observed"] for site in trace.values()):
        log_lik = partial(_pointwise_log_likelihood, samples, config, model_args, model_kwargs, traced_kwargs,
                          values if compiled else None)
    n_div = int(np.asarray(extra["diverging"]).sum())
    attrs = dict(sampling_seconds=t2 - t0, warmup_seconds=t1 - t0, draws_seconds=t2 - t1,
                 compile_seconds=min(compiling[0], t2 - t0), n_divergences=n_div,
                 target_accept_prob=float(target_accept_prob), max_tree_depth=int(max_tree_depth),
                 dense_mass=int(dense_mass))
    _warn_on_divergences(n_div, num_chains * num_samples, stacklevel)
    return NutsRun(samples, extra, log_lik, attrs, _replay_model(trace) or model, model_args, model_kwargs, num_chains,
                   num_samples, coords, dims, factor_sites(trace))


def prng_key(seed):
    """``jax.random.PRNGKey(seed)`` built in NumPy where JAX's keys are the default raw ``uint32[2]`` of
    threefry2x32: ``[seed >> 32, seed & 0xFFFFFFFF]`` (JAX's ``threefry_seed``), the same bits without
    the two small programs JAX compiles to make it in a fresh process. Other key types: JAX's own."""
    if jax.config.jax_enable_custom_prng or jax.config.jax_default_prng_impl != "threefry2x32" or \
            not 0 <= seed < 2**63:
        return jax.random.PRNGKey(seed)
    return np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], dtype=np.uint32)


#: NUTS's settings where neither the caller nor the model's hierarchy gives one (NumPyro's defaults).
DEFAULT_SETTINGS = {"target_accept_prob": 0.8, "max_tree_depth": 10}

#: The most latent dimensions for which :func:`run_nuts` adapts a dense mass matrix by default.
DENSE_MASS_MAX_DIM = 50


def dense_mass_for(trace):
    """Whether a model with this trace (:func:`~sparsebayes.inference.engines.model_trace._model_trace`)
    gets a dense mass matrix by default: its
    latent sample sites hold at most :data:`DENSE_MASS_MAX_DIM` numbers in all."""
    size = sum(int(np.prod(np.shape(site["value"]))) for site in trace.values()
               if site["type"] == "sample" and not site["is_observed"])
    return size <= DENSE_MASS_MAX_DIM


def declared_settings(model_kwargs):
    """The NUTS settings the hierarchies among a model's keyword arguments declare
    (:func:`sparsebayes.models.priors.nuts_settings`); where two declare one setting, the more careful
    (larger) value. ``{}`` when none does."""
    from sparsebayes.models.priors import is_hierarchy, nuts_settings
    out = {}
    for value in model_kwargs.values():
        if is_hierarchy(value):
            for key, v in nuts_settings(value).items():
                out[key] = max(out.get(key, v), v)
    return out


def settings(model_kwargs, target_accept_prob=None, max_tree_depth=None):
    """``(target_accept_prob, max_tree_depth)`` for a run: the caller's value, else the one the model's
    hierarchy declares (:func:`declared_settings`), else :data:`DEFAULT_SETTINGS`."""
    chosen = {**DEFAULT_SETTINGS, **declared_settings(model_kwargs)}
    return (chosen["target_accept_prob"] if target_accept_prob is None else target_accept_prob,
            chosen["max_tree_depth"] if max_tree_depth is None else max_tree_depth)


def _check_settings_and_data(target_accept_prob, max_tree_depth, model_args, model_kwargs):
    """``ValueError`` for a target acceptance outside (0, 1), a tree depth below 1, or a numeric
    array argument with NaN or infinity (NaN in ``y`` stopped NUTS with "Cannot find valid initial
    parameters", and ``target_accept_prob=1.5`` was taken silently)."""
    check_number("target_accept_prob", target_accept_prob, 0.0, strict=True)
    if not target_accept_prob < 1.0:
        raise ValueError(f"target_accept_prob must lie in (0, 1), got {target_accept_prob!r}")
    check_count("max_tree_depth", max_tree_depth, 1)
    named = [(f"model argument {i}", a) for i, a in enumerate(model_args)] + list(model_kwargs.items())
    for name, value in named:
        if _is_array(value) and np.issubdtype(np.asarray(value).dtype, np.number):
            if not np.all(np.isfinite(np.asarray(value))):
                raise ValueError(f"{name} contains NaN or infinity")


def _is_table_or_list(value):
    """A pandas object (``DataFrame``, ``Series``) or a list: data that JAX cannot trace as it is."""
    return isinstance(value, list) or type(value).__module__.partition(".")[0] == "pandas"


def _as_arrays(model_args, model_kwargs):
    """pandas objects and lists as NumPy arrays (:func:`~sparsebayes.inference._validation.as_numeric_array`):
    among the positional arguments and ``y``, pandas objects and lists; among the other keyword
    arguments only pandas objects (a list or tuple there is a setting, e.g. ``gamma_prior``)."""
    def convert(name, value, lists):
        if _is_table_or_list(value) and (lists or not isinstance(value, list)):
            return as_numeric_array(value, name, keep_integers=True)
        return value

    args = tuple(convert(f"model argument {i}", a, True) for i, a in enumerate(model_args))
    kwargs = {k: convert(k, v, k == "y") for k, v in model_kwargs.items()}
    return args, kwargs


def _check_design_and_targets(model, model_args, model_kwargs):
    """For a model called as ``model(X, y, …)`` (every model of :mod:`sparsebayes.models`): ``X``
    non-empty with rows matching ``y``'s (:func:`~sparsebayes.inference._validation.check_data`);
    ``X`` 2-D and ``y`` 1-D for the models of :mod:`sparsebayes.models`, which take a design matrix. Mismatched
    lengths reached the sampler and failed there with "Incompatible shapes for broadcasting"."""
    try:
        signature = inspect.signature(model)
        params, bound = list(signature.parameters), signature.bind_partial(*model_args, **model_kwargs).arguments
    except (TypeError, ValueError):  # no signature, or arguments it does not take: the model will say
        return
    if len(params) < 2 or params[1] != "y" or not _is_array(bound.get(params[0])):
        return
    y = bound.get("y")
    ours = getattr(model, "__module__", "").startswith("sparsebayes.models")
    check_data(bound[params[0]], y if _is_array(y) else None, x_ndim=2 if ours else None, y_ndim=1 if ours else None,
               keep_integer_targets=True, names=(params[0], "y"))


def _column_coords(trace, columns):
    """``{plate: columns}`` for each plate of the model's latent sites that has one entry per column."""
    plates = {frame.name for site in trace.values() if site["type"] == "sample" and not site["is_observed"]
              for frame in site["cond_indep_stack"] if frame.size == len(columns)}
    return {name: columns for name in plates}



class _Draws:
    """The draws of a run, with the attributes of ``numpyro.infer.MCMC`` that ``az.from_numpyro``
    reads (the model and its arguments give the log likelihood and the observed data)."""

    thinning = 1

    def __init__(self, model, args, kwargs, samples, extra, num_chains, num_samples):
        self.sampler = SimpleNamespace(model=model)
        self._args, self._kwargs = args, kwargs
        self._samples, self._extra = samples, extra
        self.num_chains, self.num_samples = num_chains, num_samples

    @staticmethod
    def _flat(tree, group_by_chain):
        return tree if group_by_chain else jax.tree.map(lambda a: a.reshape(-1, *a.shape[2:]), tree)

    def get_samples(self, group_by_chain=False):
        return self._flat(self._samples, group_by_chain)

    def get_extra_fields(self, group_by_chain=False):
        return self._flat(self._extra, group_by_chain)


def _drop_factor_sites(idata, names):
    """Keep only the data's pointwise terms in ``log_likelihood`` and ``observed_data``, so that
    ``az.loo`` / ``az.compare`` find the one log-likelihood array they need."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, has_group, set_group
    for group in ("log_likelihood", "observed_data"):
        if names and has_group(idata, group):
            ds = dataset(idata, group)
            kept = ds.drop_vars([n for n in names if n in ds.data_vars])
            used = {d for v in kept.data_vars.values() for d in v.dims}
            set_group(idata, group, kept.drop_dims([d for d in kept.dims if d not in used]))
    return idata


def _warn_on_divergences(n_div, n_draws, stacklevel):
    """A ``UserWarning`` about divergent transitions after warm-up, if any (``stacklevel`` for the caller)."""
    if n_div:
        warnings.warn(f"NUTS: {n_div} divergent transitions after warm-up ({n_div / n_draws:.1%} of the draws): "
                      "the draws may be biased; raise target_accept_prob or sample a reparametrized model "
                      "(e.g. marginal=True for the Laplace hierarchy)", UserWarning, stacklevel=stacklevel + 1)


def _warn_on_rhat(idata, rhat_max):
    """With ``rhat_max`` and two or more chains, a ``ConvergenceWarning`` about unmixed chains."""
    from sparsebayes.inference.posterior.arviz_compat import rhat as split_rhat
    post = idata.posterior
    if rhat_max is not None and post.sizes["chain"] > 1:
        rhat = np.concatenate([np.ravel(v.values) for v in split_rhat(idata).data_vars.values()])
        rhat = float(np.max(rhat[np.isfinite(rhat)], initial=1.0))  # a constant variable has no R-hat
        if rhat > rhat_max:
            warnings.warn(f"NUTS chains have not mixed: max R-hat {rhat:.3f} > {rhat_max}; increase num_warmup / "
                          "num_samples", ConvergenceWarning, stacklevel=3)
