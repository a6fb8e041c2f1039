"""A NumPyro model traced once, abstractly, and what the samplers read from that trace.

Before it samples, :func:`~sparsebayes.inference.engines.nuts.run_nuts` needs the model's sites: their
shapes (the dense mass matrix's size, the coordinates of the weights), whether the posterior is proper
(:func:`_reject_improper_posterior`), which observed sites are ``numpyro.factor`` terms rather than data
(:func:`factor_sites`), and a model that replays the sites without computing anything, for ArviZ
(:func:`_replay_model`). :func:`_model_trace` records them once, under ``jax.eval_shape``, so that
reading a model compiles no program; the twin posteriors and the sampling estimators read site names
from the same record.
"""
from __future__ import annotations

import contextlib

import jax
import numpy as np
import numpyro
from numpyro import handlers
from numpyro.distributions import Distribution, Unit
from numpyro.infer import init_to_uniform

from sparsebayes.models.adaptive import JEFFREYS_HYPERPRIOR_SITE


def _is_array(value):
    """A NumPy or JAX array (a tracer included): a value a compiled program takes as an input."""
    return isinstance(value, (np.ndarray, jax.Array))


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
