"""A thin runner over ``numpyro.infer.MCMC(NUTS)`` for any model in :mod:`sparsebayes.models`.

Returns ArviZ ``InferenceData`` with ``chain``/``draw`` dimensions, sample stats (divergences,
energy for the BFMI, tree size, acceptance rate, step size) and, in the posterior's attributes,
the wall times of warm-up and of the kept draws apart. A run with divergent transitions, or
whose chains have not mixed (R-hat), says so in a warning.
"""
from __future__ import annotations

import contextlib
import inspect
import time
import warnings
from functools import partial
from types import SimpleNamespace
from typing import NamedTuple

import jax
import numpy as np
import numpyro
from numpyro import handlers
from numpyro.distributions import Distribution, Unit
from numpyro.infer import MCMC, NUTS, init_to_uniform, log_likelihood
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.models.adaptive import JEFFREYS_HYPERPRIOR_SITE

from sparsebayes.inference._timing import compile_seconds
from sparsebayes.inference._validation import as_numeric_array, check_count, check_data, check_number, check_sampler_counts, feature_labels


#: The NUTS state fields kept as ``sample_stats`` (ArviZ names them diverging, n_steps,
#: acceptance_rate, energy, step_size, lp); ``energy`` gives the BFMI.
SAMPLE_STATS = ("diverging", "num_steps", "accept_prob", "energy", "adapt_state.step_size", "potential_energy")


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
        rounding). Without a progress bar,
        "sequential" runs the chains one after another inside one compiled program
        (:func:`_chains_in_one_program`): the same draws, one compile instead of one per chain;
        and the warm-up and draw programs are kept (:func:`_compiled_warmup`), so a later run
        of the same model, counts, settings, input shapes and structure of the non-array keyword
        arguments compiles nothing (a refit skips a compile that costs far more than a small fit):
        their non-zero floats (a hierarchy's ``gamma``, the horseshoe's scales, the Bayesian Lasso's
        ``lam2_rate``) are traced inputs of the programs, so a refit at new hyperparameter values
        reuses them too (:func:`_settings_key`; a model that reads such a value in Python runs with
        the values static, a program per value).
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
    ``samples`` and ``extra`` (the :data:`SAMPLE_STATS`) as NumPy arrays (chain, draw, ...),
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
    """Whether a model with this trace (:func:`_model_trace`) gets a dense mass matrix by default: its
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


class _NutsConfig(NamedTuple):
    """What a compiled NUTS run is built from besides its traced inputs (a static, hashable jit
    argument): the model, the counts, the kernel's settings and the model's non-array keyword
    arguments as a tree (:func:`_settings_key`): its structure (``jax.tree`` of the keyword arguments:
    the hierarchy's class and fields, ``None`` where a field is unset) and its static leaves with their
    types; the leaves marked :data:`_TRACED` are traced inputs of the program. The types are part of
    the key: ``1 == 1.0 == True``, and a key without them would hand one model's program to another."""
    model: object
    num_warmup: int
    num_samples: int
    num_chains: int
    target_accept_prob: float
    max_tree_depth: int
    dense_mass: bool = False
    settings_tree: object = None
    static_leaves: tuple = ()


class _Traced:
    """The mark of a traced leaf in :attr:`_NutsConfig.static_leaves` (one instance, :data:`_TRACED`)."""

    __slots__ = ()

    def __repr__(self):
        return "<traced>"


_TRACED = _Traced()

#: What tracing a model whose Python code reads an array argument's value raises: such a run
#: goes the uncompiled way (a new ``MCMC``, NumPyro's own jit).
_UNTRACEABLE = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                jax.errors.TracerIntegerConversionError)

#: The settings keys (:func:`_settings_key` with traced values) of models whose Python code reads a
#: float setting (``check_number(gamma)``, ``if scale > 0``): they run with every setting static.
_READS_SETTINGS = set()


def _is_array(value):
    return isinstance(value, (np.ndarray, jax.Array))


def _traced_value(leaf):
    """A leaf of the settings traced in the kept programs: an array, or a non-zero float (a
    hyperparameter's value: ``LaplacePrior.gamma``, the horseshoe's scales, the Bayesian Lasso's
    ``lam2_rate``). Zero stays static: models branch on it in Python (an improper ``0`` hyperparameter
    takes a surrogate or another distribution, :func:`~sparsebayes.models.bayesian_lasso._proper`);
    so do integers (sizes), booleans (``marginal``) and strings."""
    if _is_array(leaf):
        return True
    return isinstance(leaf, (float, np.floating)) and leaf != 0


def _settings_key(model_kwargs, trace_values=True):
    """``(tree, static leaves)`` of the model's non-array keyword arguments and the values of their
    traced leaves (:func:`_traced_value`; none with ``trace_values=False``): a refit at new hyperparameter
    values has the key of the first fit, so it runs the kept programs with the new values as inputs."""
    settings = {k: v for k, v in model_kwargs.items() if not _is_array(v)}
    leaves, tree = jax.tree.flatten(settings)
    traced = [trace_values and _traced_value(leaf) for leaf in leaves]
    static = tuple(_TRACED if t else (f"{type(leaf).__module__}.{type(leaf).__qualname__}", leaf)
                   for t, leaf in zip(traced, leaves))
    return (tree, static), tuple(leaf for t, leaf in zip(traced, leaves) if t)


def _settings(config, values):
    """The model's non-array keyword arguments inside a kept program: the tree of ``config`` with the
    traced ``values`` in the leaves marked :data:`_TRACED`."""
    values = iter(values)
    leaves = [next(values) if s is _TRACED else s[1] for s in config.static_leaves]
    return jax.tree.unflatten(config.settings_tree, leaves)


def _hashable(config):
    try:
        hash(config)
    except TypeError:
        return False
    return True


def _kept_warmup(counts, model_kwargs, key, model_args, traced_kwargs, init_params):
    """The warm-up on the kept programs: ``(config, traced setting values, warmed-up state)``, or
    ``(None, None, None)`` when the run cannot use them (an unhashable setting, or a model that reads
    an array argument in Python). First with the float settings traced (:func:`_settings_key`); a model
    whose Python code reads one (a check or a branch on its value: the eager trace of
    :func:`run_nuts` has already run that code on the values themselves) is remembered and runs with
    every setting static, one program per value, as any model that reads them must."""
    (tree, static), values = _settings_key(model_kwargs)
    config = _NutsConfig(*counts, tree, static)
    if values and _hashable(config) and config not in _READS_SETTINGS:
        try:
            return config, values, _compiled_warmup(key, model_args, traced_kwargs, values, init_params,
                                                    config=config)
        except Exception:  # noqa: BLE001  (the model reads a traced setting in Python: static below)
            _READS_SETTINGS.add(config)
    config = _NutsConfig(*counts, *_settings_key(model_kwargs, trace_values=False)[0])
    if not _hashable(config):
        return None, None, None
    try:
        return config, (), _compiled_warmup(key, model_args, traced_kwargs, (), init_params, config=config)
    except _UNTRACEABLE:  # the model reads an array argument in Python (e.g. float(scale) > 0)
        return None, None, None


def _mcmc(config, chain_method, progress_bar):
    """NumPyro's ``MCMC(NUTS)`` for ``config``; "sequential" chains run under :func:`_chains_in_one_program`
    when there is more than one and no progress bar."""
    if chain_method == "sequential" and config.num_chains > 1 and not progress_bar:
        chain_method = _chains_in_one_program
    kernel = NUTS(config.model, target_accept_prob=config.target_accept_prob, max_tree_depth=config.max_tree_depth,
                  dense_mass=config.dense_mass)
    return MCMC(kernel, num_warmup=config.num_warmup, num_samples=config.num_samples, num_chains=config.num_chains,
                chain_method=chain_method, progress_bar=progress_bar)


@partial(jax.jit, static_argnames=("config",))
def _compiled_warmup(key, model_args, traced_kwargs, values, init_params, config):
    """NUTS's warm-up as one program cached per ``config`` and input shapes: a new ``MCMC`` per
    run otherwise compiles its loops anew every time, even for the same data shape, and the
    compilation costs far more than a small fit. ``values``: the traced settings (:func:`_settings`)."""
    mcmc = _mcmc(config, "sequential", False)
    mcmc.warmup(key, *model_args, init_params=init_params, extra_fields=SAMPLE_STATS,
                **_settings(config, values), **traced_kwargs)
    return mcmc.post_warmup_state


@partial(jax.jit, static_argnames=("config",))
def _compiled_draws(state, model_args, traced_kwargs, values, config):
    """The kept draws from the warmed-up ``state`` (:func:`_compiled_warmup`): samples and
    :data:`SAMPLE_STATS`, grouped by chain."""
    mcmc = _mcmc(config, "sequential", False)
    mcmc.post_warmup_state = state
    mcmc.run(state.rng_key, *model_args, extra_fields=SAMPLE_STATS, **_settings(config, values), **traced_kwargs)
    return mcmc.get_samples(group_by_chain=True), mcmc.get_extra_fields(group_by_chain=True)


@partial(jax.jit, static_argnames=("config",))
def _cached_log_likelihood(flat_samples, model_args, traced_kwargs, values, config):
    """NumPyro's pointwise log likelihood of every draw, compiled once per ``config`` and shape
    (called directly, NumPyro builds and compiles a new program on every run)."""
    return log_likelihood(config.model, flat_samples, *model_args, **_settings(config, values), **traced_kwargs)


def _pointwise_log_likelihood(samples, config, model_args, model_kwargs, traced_kwargs, values):
    """The pointwise log likelihood of every draw per observed site, ``(chain, draw, ...)`` NumPy arrays,
    as ``az.from_numpyro`` would compute it; on the kept program when the run used them (``values``,
    the traced settings, not ``None``)."""
    flat = {k: v.reshape(-1, *v.shape[2:]) for k, v in samples.items()}
    if values is not None:
        pointwise = _cached_log_likelihood(flat, model_args, traced_kwargs, values, config=config)
    else:
        pointwise = log_likelihood(config.model, flat, *model_args, **model_kwargs)
    lead = (config.num_chains, config.num_samples)
    return {k: np.asarray(v).reshape(*lead, *np.shape(v)[1:]) for k, v in pointwise.items()}


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


def _chains_in_one_program(chain):
    """NumPyro's ``chain_method`` as a callable: the chains one after another under ``lax.map``,
    one compiled program for all of them. NumPyro's "sequential" loops over the chains in Python
    and compiles each chain's loop anew, and in a small model those compiles are most of a run;
    this way one compile serves every chain, with the same draws. Without a progress
    bar only: NumPyro's bar steps the chain from Python, which cannot run inside ``lax.map``."""
    return lambda chain_args: jax.lax.map(chain, chain_args)


def _model_trace(model, model_args, model_kwargs):
    """The model traced once at NUTS's own kind of starting point (``init_to_uniform``: improper
    sites cannot be drawn, and prior draws can be degenerate): per site its ``name``, ``type``,
    ``is_observed``, ``cond_indep_stack``, ``fn_type`` (the distribution's class; ``fn`` is ``None``),
    ``batch_shape`` and ``event_shape``, and its ``value``: a ``jax.ShapeDtypeStruct``, or the array
    itself where the model passed one (an observed site's ``obs``).

    Traced abstractly (``jax.eval_shape``): the model's Python code runs on the arguments as given
    (its checks of a hyperparameter's value included) but no array operation is executed, so no
    program is compiled (run eagerly, each operation of the model compiles a program of its own). A model that cannot be traced so (it reads the value of an array it
    computes) is run eagerly, as before."""
    def run():
        traced = handlers.trace(handlers.substitute(handlers.seed(model, 0), substitute_fn=init_to_uniform))
        return traced.get_trace(*model_args, **model_kwargs)

    summary = {}

    def summarize():
        summary.update(_site_summaries(run()))
        return 0

    try:
        jax.eval_shape(summarize)
    except Exception:  # noqa: BLE001  (eagerly, the model's own error, if any, is raised as before)
        return _site_summaries(run())
    return summary


def _site_summaries(trace):
    """:func:`_model_trace`'s record of each site of a NumPyro trace: no distribution object, and a
    value computed inside an abstract trace as its shape and dtype (no tracer leaves the trace)."""
    out = {}
    for name, site in trace.items():
        fn, value = site.get("fn"), site.get("value")
        if isinstance(value, jax.core.Tracer):
            value = jax.ShapeDtypeStruct(np.shape(value), value.dtype)
        out[name] = {"name": name, "type": site["type"], "is_observed": site.get("is_observed", False),
                     "cond_indep_stack": list(site.get("cond_indep_stack", [])), "value": value, "fn": None,
                     "fn_type": type(fn) if fn is not None else None,
                     "batch_shape": tuple(getattr(fn, "batch_shape", ())),
                     "event_shape": tuple(getattr(fn, "event_shape", ()))}
    return out


class _Placeholder(Distribution):
    """A distribution of given shapes that computes nothing: the observed sites of :func:`_replay_model`."""

    def __init__(self, batch_shape, event_shape):
        super().__init__(batch_shape, event_shape, validate_args=False)


def _replay_model(trace):
    """A model with the plates and sites of a :func:`_model_trace` and nothing else: the observed sites
    with their data (under a :class:`_Placeholder`; a factor's empty value), the others as deterministic
    sites of zeros; or ``None`` where an observed value is not a concrete array. ArviZ's
    ``from_numpyro`` reads the dims of the sites and the observed data from the model it is given, by
    running it eagerly with its latent sites drawn from the prior: on the model itself that compiles a
    program per operation and one per prior sampler."""
    sites = [dict(s) for s in trace.values() if s["type"] in ("sample", "deterministic")]
    for site in sites:
        if site["is_observed"] and not _is_array(site["value"]):
            if not issubclass(site["fn_type"] or object, Unit):
                return None
            site["value"] = np.zeros(site["value"].shape, site["value"].dtype)  # a factor's empty value

    def model(*args, **kwargs):
        for site in sites:
            with contextlib.ExitStack() as stack:
                for frame in site["cond_indep_stack"]:
                    stack.enter_context(numpyro.plate(frame.name, frame.size, dim=frame.dim))
                if site["is_observed"]:
                    numpyro.sample(site["name"], _Placeholder(site["batch_shape"], site["event_shape"]),
                                   obs=site["value"])
                else:
                    numpyro.deterministic(site["name"], np.zeros(np.shape(site["value"])))

    return model


def _reject_improper_posterior(trace):
    """Raise ``ValueError`` for a model whose posterior is improper (the Jeffreys hyperprior
    without its surrogate): NUTS would run on it, diverge, and return draws of nothing."""
    if JEFFREYS_HYPERPRIOR_SITE in trace:
        raise ValueError("the Jeffreys hyperprior p(tau) ∝ 1/tau makes the posterior improper: there is "
                         "nothing for NUTS to sample; pass surrogate_eps (e.g. 1e-3) to sample the labelled "
                         "proper surrogate 1/tau ~ Gamma(eps, eps) instead")


def factor_sites(trace):
    """Names of the ``numpyro.factor`` sites (``Unit`` distributions) in a model trace.

    NumPyro records a factor as an observed site, so ArviZ's ``from_numpyro`` files it under
    ``observed_data`` and ``log_likelihood``; ours are prior and Jacobian terms (the ``1/σ²``
    prior, the integrated-out intercept, the Jeffreys factor), not data.
    """
    return [name for name, site in trace.items() if site["type"] == "sample"
            and issubclass(site.get("fn_type") or type(site["fn"]), Unit)]


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
