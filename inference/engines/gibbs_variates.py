"""The random numbers of the Gibbs engine (:mod:`.hierarchy_gibbs`), drawn apart from its arithmetic,
where the engine runs.

A sweep reads one :class:`SweepVariates`: standard normals for β (and Bhattacharya's δ when
``p > n``), a standard Gamma variate for σ², and the hierarchy's own standard variates, which it
declares in advance (``gibbs_variates(p)``: a :class:`VariateSpec` per name, e.g. the Laplace prior's
``χ²₁`` and ``U(0, 1)`` per weight for the inverse-Gaussian draws of Michael, Schucany & Haas (1976)
and a Gamma of shape ``a + p`` for γ). Conjugate shapes are constants of ``n``, ``p`` and the
hyperparameters, so every variate is drawn before the sweep that reads it, and each conditional is a
transform of its variates (``gibbs_update_from``). Two sources give them, with the same
distributions:

* :func:`draw_variates`, NumPy's generators on the host (PCG64; ziggurat normals,
  Marsaglia–Tsang gammas): on a CPU several times faster than JAX's threefry, whether drawn in
  bulk or one sweep at a time inside the ``scan``, and no Gamma sampler to compile;
* :func:`device_variates`, JAX's generator where the arrays live: on an accelerator the host
  would otherwise draw, and copy over, every number of every chain (at 128 chains and
  ``p = 200``, 77,000 numbers a sweep), while the device draws them in parallel.

:func:`choose_variates` picks by the backend (``"auto"``), and :class:`VariateSource` gives a
driver (:func:`~.hierarchy_gibbs.run`, :func:`~.hierarchy_gibbs_batch.posterior_mean_batch`) the variates of its
next sweeps from the chosen source. Each source's draws depend on the seed alone, not on how the
sweeps are cut into compiled calls (a progress bar cuts them): NumPy by one stream per field drawn
sweep-major, JAX by one key per sweep (``fold_in`` of the sweep's index). The two sources give
different (equally distributed) draws for the same seed.
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

#: the kinds of standard variate a hierarchy may declare (:class:`VariateSpec`)
VARIATE_KINDS = ("normal", "chi2", "uniform", "gamma")


class VariateSpec(NamedTuple):
    """One field of standard variates a hierarchy's conditionals read each sweep: ``kind`` one of
    :data:`VARIATE_KINDS` (``N(0, 1)``, ``χ²₁``, ``U(0, 1)``, a standard ``Gamma(shape)``), ``size``
    ``None`` for one number per sweep or ``k`` for a vector of ``k``, and the Gamma's ``shape`` (a
    constant of the model: the conjugate conditionals' shapes do not depend on the state)."""

    kind: str
    size: int | None = None
    shape: float = 1.0


class SweepVariates(NamedTuple):
    """The random numbers of a run of sweeps: leading axes (sweep, chain or data set), then the
    sizes below."""
    beta_normal: object  # (p,) N(0, 1): Rue's ε, Bhattacharya's u
    row_normal: object  # (rows,) Bhattacharya's δ: N(0, 1) on the data rows, 0 on the padding; (0,) on Rue's path
    noise_gamma: object  # () standard Gamma(m/2 + c [+ p/2 scaled]), for σ²
    aux: dict  # the hierarchy's own, by the names of its gibbs_variates


class VariatePlan(NamedTuple):
    """What a run's variates are: ``n_obs`` data rows of ``rows`` (padding included; ``rows = 0`` on
    Rue's path, which reads no δ), ``p`` weights, σ²'s Gamma shape ``noise_shape`` and the
    hierarchy's fields ``aux`` (``(name, VariateSpec)`` pairs in name order)."""
    n_obs: int
    rows: int
    p: int
    noise_shape: float
    aux: tuple

    def layout(self):
        """The static part: ``(rows, p, ((name, kind, size), …))``, which fixes the arrays' shapes."""
        return self.rows, self.p, tuple((name, spec.kind, spec.size) for name, spec in self.aux)

    def gamma_shapes(self):
        """σ²'s shape, then each of the hierarchy's Gamma fields' in name order (1 for the others)."""
        return [float(self.noise_shape)] + [float(spec.shape) if spec.kind == "gamma" else 1.0 for _, spec in self.aux]


def variate_plan(prior, n_obs, rows, p, noise_shape):
    """The :class:`VariatePlan` of a run: the hierarchy's declaration ``prior.gibbs_variates(p)``
    checked (a ``ValueError`` naming a kind outside :data:`VARIATE_KINDS`, a Gamma shape that is not
    positive, or a ``size`` that is not ``None`` or a count)."""
    declared = dict(prior.gibbs_variates(p))
    for name, spec in declared.items():
        if spec.kind not in VARIATE_KINDS:
            raise ValueError(f"{type(prior).__name__}.gibbs_variates: {name!r} has kind {spec.kind!r}, not one of "
                             f"{VARIATE_KINDS}")
        if spec.size is not None and (int(spec.size) != spec.size or spec.size < 0):
            raise ValueError(f"{type(prior).__name__}.gibbs_variates: {name!r} has size {spec.size!r} (None or a "
                             "count)")
        if spec.kind == "gamma" and not float(spec.shape) > 0.0:
            raise ValueError(f"{type(prior).__name__}.gibbs_variates: {name!r} is a Gamma of shape {spec.shape!r} (> 0 "
                             "needed)")
    if not float(noise_shape) > 0.0:
        raise ValueError(f"σ²'s conditional is improper: its Gamma shape is {noise_shape}")
    return VariatePlan(int(n_obs), int(rows), int(p), float(noise_shape), tuple(sorted(declared.items())))


def choose_variates(variates, backend=None):
    """``"numpy"`` or ``"device"``: ``variates`` itself, or for ``"auto"`` the device's generator
    on an accelerator (``backend``, default ``jax.default_backend()``) and NumPy's on a CPU.
    Anything else is a ``ValueError``."""
    if variates not in VARIATE_SOURCES:
        raise ValueError(f"variates must be one of {VARIATE_SOURCES}, got {variates!r}")
    if variates == "auto":
        return "device" if on_accelerator(backend) else "numpy"
    return variates


def variate_streams(seed, n_aux):
    """Independent NumPy Generators (PCG64) spawned from ``seed``: one for the chains' starts, one
    each for β's normals, δ and σ²'s Gamma, and one per hierarchy field (``n_aux``, in name order).
    One stream per field, drawn sweep-major, makes the draws independent of how the sweeps are cut
    into calls."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4 + n_aux)]


def _numpy_field(rng, kind, lead, size, shape):
    dims = (*lead, *(() if size is None else (size,)))
    if kind == "normal":
        return rng.standard_normal(dims)
    if kind == "chi2":
        return rng.standard_normal(dims) ** 2
    if kind == "uniform":
        return rng.random(dims)
    return rng.standard_gamma(shape, size=dims)


def draw_variates(streams, sweeps, batch, plan):
    """:class:`SweepVariates` for ``sweeps`` sweeps of ``batch`` chains (or data sets), in order,
    from :func:`variate_streams` (all but the first, the starts')."""
    beta, rows, noise, *aux = streams[1:]
    lead = (sweeps, batch)
    delta = np.zeros((*lead, plan.rows))
    if plan.rows:
        delta[..., :plan.n_obs] = rows.standard_normal((*lead, plan.n_obs))
    return SweepVariates(beta.standard_normal((*lead, plan.p)), delta,
                         noise.standard_gamma(plan.noise_shape, size=lead),
                         {name: _numpy_field(rng, spec.kind, lead, spec.size, spec.shape)
                          for (name, spec), rng in zip(plan.aux, aux)})


def device_key(seed):
    """The JAX key of :func:`device_variates` for ``seed`` (one per run; a sweep's own key is
    ``fold_in(key, sweep index)``)."""
    return jax.random.key(seed)


def _device_field(key, kind, batch, size, shape):
    dims = (batch, *(() if size is None else (size,)))
    if kind == "normal":
        return jax.random.normal(key, dims, jnp.float64)
    if kind == "chi2":
        return jax.random.normal(key, dims, jnp.float64) ** 2
    if kind == "uniform":
        return jax.random.uniform(key, dims, jnp.float64)
    return jax.random.gamma(key, jnp.broadcast_to(shape, dims), dtype=jnp.float64)


@partial(jax.jit, static_argnames=("sweeps", "batch", "layout"))
def device_variates(key, first_sweep, sweeps, batch, n_obs, layout, shapes):
    """:class:`SweepVariates` for sweeps ``first_sweep … first_sweep + sweeps − 1`` of ``batch``
    chains, drawn by JAX where the computation runs; sweep ``i``'s numbers come from
    ``fold_in(key, i)`` alone, so a run cut into calls gets the draws of the same run in one call.
    ``layout`` (:meth:`VariatePlan.layout`) fixes the shapes; ``n_obs`` (traced) data rows of
    ``rows``: δ is 0 on the padding, and row ``j``'s δ comes from its own key (``fold_in`` of ``j``),
    so padding changes no draw; ``shapes`` the Gamma shapes (:meth:`VariatePlan.gamma_shapes`).
    ``first_sweep``, ``n_obs`` and ``shapes`` are traced, so every call of a run (and a new ``n``
    in the same row bucket) reuses one program."""
    rows, p, aux = layout
    shapes = jnp.asarray(shapes, jnp.float64)

    def one_sweep(i):
        k_beta, k_rows, k_noise, *k_aux = jax.random.split(jax.random.fold_in(key, i), 3 + len(aux))
        if rows:  # a key per row: a data row's δ does not depend on how many padding rows follow it
            row_draws = jax.vmap(lambda r: jax.random.normal(jax.random.fold_in(k_rows, r), (batch,), jnp.float64))
            delta = jnp.where(jnp.arange(rows) < n_obs, row_draws(jnp.arange(rows)).T, 0.0)
        else:
            delta = jnp.zeros((batch, 0))
        noise = jax.random.gamma(k_noise, jnp.broadcast_to(shapes[0], (batch,)), dtype=jnp.float64)
        fields = {name: _device_field(k, kind, batch, size, shapes[1 + j])
                  for j, ((name, kind, size), k) in enumerate(zip(aux, k_aux))}
        return SweepVariates(jax.random.normal(k_beta, (batch, p), jnp.float64), delta, noise, fields)

    return jax.vmap(one_sweep)(first_sweep + jnp.arange(sweeps))


class VariateSource:
    """The variates of a run's sweeps, in order, from the source ``variates`` names
    (:func:`choose_variates`): ``next(m)`` gives :class:`SweepVariates` for the next ``m`` sweeps of
    ``batch`` chains (or data sets) under ``plan`` (:class:`VariatePlan`). ``streams`` are the run's
    :func:`variate_streams` (NumPy's source draws from all but the first), ``seed`` keys the
    device's; :meth:`compile` builds the device's programs for the run's chunk lengths before the run
    (outside its timing). ``budget``: how many numbers a chunk may hold (16 MiB of host variates that
    cross to the device; 128 MiB drawn where they are used)."""

    def __init__(self, variates, seed, streams, batch, plan):
        self.source = choose_variates(variates)
        self.budget = 2**21 if self.source == "numpy" else 2**24
        self._batch, self._plan = batch, plan
        self._streams, self._done, self._drawers = streams, 0, {}
        if self.source == "device":
            self._key, self._shapes = device_key(seed), jnp.asarray(plan.gamma_shapes())

    def per_sweep(self):
        """Numbers per sweep, all chains together (for the chunks' budget)."""
        plan = self._plan
        return self._batch * (plan.p + plan.rows + 1 + sum(1 if s.size is None else s.size for _, s in plan.aux))

    def compile(self, lengths):
        """Compile the device's draws for chunks of ``lengths`` sweeps (nothing for NumPy's)."""
        if self.source == "device":
            for m in set(lengths) - set(self._drawers):
                self._drawers[m] = device_variates.lower(self._key, 0, m, self._batch, self._plan.n_obs,
                                                         self._plan.layout(), self._shapes).compile()
        return self

    def next(self, m):
        """:class:`SweepVariates` of the next ``m`` sweeps."""
        if self.source == "device":
            self.compile([m])
            out = self._drawers[m](self._key, self._done, self._plan.n_obs, self._shapes)
        else:
            out = draw_variates(self._streams, m, self._batch, self._plan)
        self._done += m
        return out
