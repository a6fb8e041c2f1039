"""The random variates of the Gibbs samplers that are not JAX's own: the inverse-Gaussian draw of
Michael, Schucany & Haas (1976) (the Laplace hierarchy's local conditional, Park & Casella 2008,
:meth:`sparsebayes.models.priors.LaplacePrior.gibbs_update`), from given ``χ²₁`` and ``U(0, 1)``
variates or from a JAX key; and :func:`choose_variates`, the check of the ``variates`` setting the
Bayesian Lasso's entry points keep (:func:`~.gibbs.run_gibbs`; the engine draws by JAX keys where it runs).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ._backend import on_accelerator


def michael_root(mean, shape, w):
    """The smaller root ``x = μ + μ²w/(2λ) − μ√(4μλw + μ²w²)/(2λ)`` of Michael, Schucany & Haas
    (1976), as ``2μλ / (2λ + μw + √(μ²w² + 4μλw))`` (multiplied by the conjugate: no cancellation).

    The direct form ``μ − 2μ²w/(μw + √(·))`` subtracts nearly equal numbers when
    ``μw ≫ λ``: 2e-10 relative error at μ = 1e10, all of it (x = 0) at μ = 1e16, and 8e-8 at
    λ = 1e-9 (against 60-digit arithmetic)."""
    mw = mean * w
    return 2.0 * mean * shape / (2.0 * shape + mw + jnp.sqrt(mw * mw + 4.0 * mean * shape * w))


def inverse_gaussian_from(mean, shape, chi2, uniform):
    """Michael, Schucany & Haas (1976): the ``IG(mean, shape)`` draw made from a ``χ²₁`` variate
    ``chi2 = ν²`` (``ν ~ N(0,1)``) and a ``U(0,1)`` variate: ``x`` the smaller root
    (:func:`michael_root`), returned with probability ``μ/(μ + x)``, else ``μ²/x``."""
    mean, shape = jnp.broadcast_arrays(jnp.asarray(mean, jnp.float64), jnp.asarray(shape, jnp.float64))
    x = jnp.maximum(michael_root(mean, shape, chi2), jnp.finfo(jnp.float64).tiny)
    return jnp.where(uniform <= mean / (mean + x), x, mean * mean / x)


def inverse_gaussian(key, mean, shape):
    """An ``IG(mean, shape)`` draw (broadcast shape of the two) from a JAX ``key``: the ``χ²₁`` and
    ``U(0, 1)`` variates of :func:`inverse_gaussian_from` from the two halves of ``key``."""
    mean, shape = jnp.broadcast_arrays(jnp.asarray(mean, jnp.float64), jnp.asarray(shape, jnp.float64))
    k_chi, k_unif = jax.random.split(key)
    chi2 = jax.random.normal(k_chi, mean.shape, dtype=mean.dtype) ** 2
    uniform = jax.random.uniform(k_unif, mean.shape, dtype=mean.dtype)
    return inverse_gaussian_from(mean, shape, chi2, uniform)


#: where the variates may be drawn: on the host by NumPy, on the backend by JAX, or by the backend's kind
VARIATE_SOURCES = ("auto", "numpy", "device")


def choose_variates(variates, backend=None):
    """``"numpy"`` or ``"device"``: ``variates`` itself, or for ``"auto"`` the device's generator
    on an accelerator (``backend``, default ``jax.default_backend()``) and NumPy's on a CPU.
    Anything else is a ``ValueError``."""
    if variates not in VARIATE_SOURCES:
        raise ValueError(f"variates must be one of {VARIATE_SOURCES}, got {variates!r}")
    if variates == "auto":
        return "device" if on_accelerator(backend) else "numpy"
    return variates
