"""NUTS's compiled programs, kept across runs of :func:`~sparsebayes.inference.engines.nuts.run_nuts`.

NumPyro's ``MCMC`` compiles its warm-up and sampling loops anew for every ``MCMC`` object, even for the
same model and data shape, and on a small model that compile costs far more than the draws. The runner
therefore runs NUTS inside programs of its own, jitted once per :class:`_NutsConfig` (the model, the
counts, the kernel's settings and the structure of the model's non-array keyword arguments) and input
shapes: :func:`_compiled_warmup`, :func:`_compiled_draws` and :func:`_cached_log_likelihood`. The
hierarchy's non-zero floats are traced inputs of those programs (:func:`_settings_key`), so a refit at new
hyperparameter values compiles nothing; a model whose Python code reads such a value falls back to
static settings (:func:`_kept_warmup`). The chains of a run share one program
(:func:`_chains_in_one_program`).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import numpy as np
from numpyro.infer import MCMC, NUTS, log_likelihood

from sparsebayes.inference.engines.model_trace import _is_array

#: The NUTS state fields kept as ``sample_stats`` (ArviZ names them diverging, n_steps,
#: acceptance_rate, energy, step_size, lp); ``energy`` gives the BFMI.
SAMPLE_STATS = ("diverging", "num_steps", "accept_prob", "energy", "adapt_state.step_size", "potential_energy")


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
    :func:`~sparsebayes.inference.engines.nuts.run_nuts` has already run that code on the values
    themselves) is remembered and runs with every setting static, one program per value, as any model
    that reads them must."""
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


def _chains_in_one_program(chain):
    """NumPyro's ``chain_method`` as a callable: the chains one after another under ``lax.map``,
    one compiled program for all of them. NumPyro's "sequential" loops over the chains in Python
    and compiles each chain's loop anew, and in a small model those compiles are most of a run;
    this way one compile serves every chain, with the same draws. Without a progress
    bar only: NumPyro's bar steps the chain from Python, which cannot run inside ``lax.map``."""
    return lambda chain_args: jax.lax.map(chain, chain_args)
