"""The random numbers of the Park–Casella Gibbs sampler (:mod:`.gibbs`), drawn apart from its
arithmetic, where the sampler runs.

A sweep reads one :class:`SweepVariates`: standard normals for β (and Bhattacharya's δ when
``p > n``), a ``χ²₁`` and a ``U(0, 1)`` per weight for the inverse-Gaussian draws of Michael,
Schucany & Haas (1976), and two standard Gamma variates (for σ² and λ²). Two sources give
them, with the same distributions:

* :func:`draw_variates`, NumPy's generators on the host (PCG64; ziggurat normals,
  Marsaglia–Tsang gammas): on a CPU several times faster than JAX's threefry, whether drawn in
  bulk or one sweep at a time inside the ``scan``;
* :func:`device_variates`, JAX's generator where the arrays live: on an accelerator the host
  would otherwise draw, and copy over, every number of every chain (at 128 chains and
  ``p = 200``, 77,000 numbers a sweep), while the device draws them in parallel.

:func:`choose_variates` picks by the backend (``"auto"``), and :class:`VariateSource` gives a
driver (:func:`~.gibbs.run_gibbs`, :func:`~.gibbs.posterior_mean_batch`) the variates of its
next sweeps from the chosen source. Each source's draws depend on the
seed alone, not on how the sweeps are cut into compiled calls (a progress bar cuts them): NumPy
by one stream per field drawn sweep-major, JAX by one key per sweep (``fold_in`` of the sweep's
index). The two sources give different (equally distributed) draws for the same seed.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sparsebayes.inference._backend import on_accelerator


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


class SweepVariates(NamedTuple):
    """The random numbers of a run of sweeps: leading axes (sweep, chain or data set), then the
    sizes below."""
    beta_normal: object  # (p,) N(0, 1): the Cholesky path's z, Bhattacharya's u
    row_normal: object  # (rows,) Bhattacharya's δ: N(0, 1) on the data rows, 0 on the padding; (0,) on the Cholesky path
    ig_chi2: object  # (p,) χ²₁: Michael–Schucany–Haas's ν²
    ig_uniform: object  # (p,) U(0, 1)
    noise_gamma: object  # () standard Gamma((n − 1)/2 + p/2 + c), for σ²
    lam2_gamma: object  # () standard Gamma(p + r), for λ²


def gamma_shapes(n_obs, p, hyper):
    """The shapes of the two standard Gamma variates of a sweep: σ²'s ``(n − 1)/2 + p/2 + c``
    (Park & Casella 2008, Sec. 2; ``n − 1``: the intercept is integrated out) and λ²'s ``p + r``."""
    return [0.5 * (n_obs - 1) + 0.5 * p + hyper.c, p + hyper.lam2_shape]


def choose_variates(variates, backend=None):
    """``"numpy"`` or ``"device"``: ``variates`` itself, or for ``"auto"`` the device's generator
    on an accelerator (``backend``, default ``jax.default_backend()``) and NumPy's on a CPU.
    Anything else is a ``ValueError``."""
    if variates not in VARIATE_SOURCES:
        raise ValueError(f"variates must be one of {VARIATE_SOURCES}, got {variates!r}")
    if variates == "auto":
        return "device" if on_accelerator(backend) else "numpy"
    return variates


def variate_streams(seed):
    """Six independent NumPy Generators (PCG64) spawned from ``seed``: one for the chains' starts
    and one for each field of :class:`SweepVariates`. One stream per field, drawn sweep-major,
    makes the draws independent of how the sweeps are cut into calls."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(6)]


def draw_variates(streams, sweeps, batch, n_obs, rows, p, hyper, use_cholesky):
    """:class:`SweepVariates` for ``sweeps`` sweeps of ``batch`` chains (or data sets), in order,
    from the last five of :func:`variate_streams` (NumPy's ziggurat normals and Marsaglia–Tsang
    gammas); ``n_obs`` data rows, ``rows`` with the padding."""
    normal, row_normal, chi2, uniform, gamma = streams[1:]
    lead = (sweeps, batch)
    delta = np.zeros((*lead, 0 if use_cholesky else rows))
    if not use_cholesky:
        delta[..., :n_obs] = row_normal.standard_normal((*lead, n_obs))
    # both Gamma variates of a sweep from one call on their shared stream, σ²'s first, λ²'s second
    gammas = gamma.standard_gamma(gamma_shapes(n_obs, p, hyper), size=(*lead, 2))
    return SweepVariates(normal.standard_normal((*lead, p)), delta,
                         chi2.standard_normal((*lead, p)) ** 2, uniform.random((*lead, p)),
                         gammas[..., 0], gammas[..., 1])


def device_key(seed):
    """The JAX key of :func:`device_variates` for ``seed`` (one per run; a sweep's own key is
    ``fold_in(key, sweep index)``)."""
    return jax.random.key(seed)


@partial(jax.jit, static_argnames=("sweeps", "batch", "rows", "p", "use_cholesky"))
def device_variates(key, first_sweep, sweeps, batch, n_obs, rows, p, shapes, use_cholesky):
    """:class:`SweepVariates` for sweeps ``first_sweep … first_sweep + sweeps − 1`` of ``batch``
    chains, drawn by JAX where the computation runs; sweep ``i``'s numbers come from
    ``fold_in(key, i)`` alone, so a run cut into calls gets the draws of the same run in one call.
    ``n_obs`` (traced) data rows of ``rows``: δ is 0 on the padding, and row ``j``'s δ comes from
    its own key (``fold_in`` of ``j``), so padding changes no draw; ``shapes``, the two Gamma
    shapes (:func:`gamma_shapes`). ``first_sweep``, ``n_obs`` and ``shapes`` are traced, so every
    call of a run (and a new ``n`` in the same row bucket) reuses one program."""
    shapes = jnp.asarray(shapes, jnp.float64)

    def one_sweep(i):
        k_beta, k_rows, k_chi2, k_uniform, k_gamma = jax.random.split(jax.random.fold_in(key, i), 5)
        if use_cholesky:
            delta = jnp.zeros((batch, 0))
        else:
            # a key per row: a data row's δ does not depend on how many padding rows follow it
            row_draws = jax.vmap(lambda r: jax.random.normal(jax.random.fold_in(k_rows, r), (batch,), jnp.float64))
            delta = jnp.where(jnp.arange(rows) < n_obs, row_draws(jnp.arange(rows)).T, 0.0)
        gammas = jax.random.gamma(k_gamma, jnp.broadcast_to(shapes, (batch, 2)), dtype=jnp.float64)
        return SweepVariates(jax.random.normal(k_beta, (batch, p), jnp.float64), delta,
                             jax.random.normal(k_chi2, (batch, p), jnp.float64) ** 2,
                             jax.random.uniform(k_uniform, (batch, p), jnp.float64),
                             gammas[:, 0], gammas[:, 1])

    return jax.vmap(one_sweep)(first_sweep + jnp.arange(sweeps))


class VariateSource:
    """The variates of a run's sweeps, in order, from the source ``variates`` names
    (:func:`choose_variates`): ``next(m)`` gives :class:`SweepVariates` for the next ``m`` sweeps of
    ``batch`` chains (or data sets). ``streams`` are the run's :func:`variate_streams` (NumPy's
    source draws from their last five), ``seed`` keys the device's; ``lengths``, the run's chunk
    lengths, are compiled for the device before the run (outside its timing). ``budget``: how many
    numbers a chunk may hold (16 MiB of host variates that cross to the device; 128 MiB drawn
    where they are used)."""

    def __init__(self, variates, seed, streams, batch, n_obs, rows, p, hyper, use_cholesky):
        self.source = choose_variates(variates)
        self.budget = 2**21 if self.source == "numpy" else 2**24
        self._args = (batch, n_obs, rows, p, hyper, use_cholesky)
        self._streams, self._done, self._drawers = streams, 0, {}
        if self.source == "device":
            self._key, self._shapes = device_key(seed), jnp.asarray(gamma_shapes(n_obs, p, hyper))

    def compile(self, lengths):
        """Compile the device's draws for chunks of ``lengths`` sweeps (nothing for NumPy's)."""
        if self.source == "device":
            batch, n_obs, rows, p, hyper, use_cholesky = self._args
            for m in set(lengths) - set(self._drawers):
                self._drawers[m] = device_variates.lower(self._key, 0, m, batch, n_obs, rows, p, self._shapes,
                                                         use_cholesky).compile()
        return self

    def next(self, m):
        """:class:`SweepVariates` of the next ``m`` sweeps."""
        batch, n_obs, rows, p, hyper, use_cholesky = self._args
        if self.source == "device":
            self.compile([m])
            out = self._drawers[m](self._key, self._done, n_obs, self._shapes)
        else:
            out = draw_variates(self._streams, m, batch, n_obs, rows, p, hyper, use_cholesky)
        self._done += m
        return out
