"""A design handed to the Gaussian type-II engine (:mod:`.typeii`) the way the estimators hand it:
padded to bucketed shapes and fitted with growing slots, one design (:func:`fit_design`) or many of
the same shape in one compiled call (:func:`fit_designs`, over :mod:`.typeii_batch`).

The regressors of :mod:`.typeii_estimators` fit through :func:`fit_design`, and
:func:`sparsebayes.inference.estimators.typeii_many.fit_many` (the batched entry point of the paper tables)
through :func:`fit_designs`: the same padding, the same engine steps (:mod:`.typeii_batch` takes the
steps of single fits), the same post-processing by the estimators.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sparsebayes.inference.engines import typeii_exact
from sparsebayes.inference._backend import on_accelerator
from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference.engines.typeii_linalg import aligned_zeros
from sparsebayes.inference.engines.typeii_batch import fit_batch, fit_batch_growing

#: most fits advanced together by one ``vmap``-ed step on an accelerator (:func:`batch_lanes`)
ACCELERATOR_LANES = 1024

#: bytes of the lanes' ``capacity × capacity`` posterior covariances held at once on an accelerator
LANE_BUDGET = 2**32


#: A design of ``N`` rows and ``M`` columns is fitted in its n-independent form (:class:`GramStatistics`)
#: when ``N ≥ GRAM_MIN_ROWS_PER_COLUMN · M`` and ``N ≥ GRAM_MIN_N`` (:func:`use_gram`). The Gram
#: matrix costs ``N M²`` multiply-adds once (BLAS-3); the design form costs ``2NM`` per add, memory-bound,
#: an ``N × M`` padded copy and a program per row bucket. Below ``GRAM_MIN_N`` rows the design form is
#: cheap either way, and the paper reproductions (N ≤ 1,000) keep it.
GRAM_MIN_ROWS_PER_COLUMN = 8
GRAM_MIN_N = 2000


def use_gram(n, m):
    """Whether a design of ``n`` rows and ``m`` columns is fitted from its Gram matrix (see
    :data:`GRAM_MIN_ROWS_PER_COLUMN`)."""
    return n >= GRAM_MIN_N and n >= GRAM_MIN_ROWS_PER_COLUMN * m


class GramStatistics(NamedTuple):
    """The sufficient statistics of a Gaussian type-II fit, ``ΦᵀΦ`` (M × M), ``Φᵀy``, ``yᵀy`` and the
    number of rows ``n_rows``: all the engine reads of the data (:class:`~.typeii_exact.GramData`)."""

    gram: np.ndarray
    Phity: np.ndarray
    yy: float
    n_rows: int

    @classmethod
    def of(cls, Phi, y):
        """The statistics of the design ``Phi`` (N × M) and targets ``y`` (float64; ``ΦᵀΦ`` by one
        symmetric rank-k product)."""
        Phi = np.asarray(Phi, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        return cls(Phi.T @ Phi, y @ Phi, float(y @ y), y.size)


class PackedDesign(NamedTuple):
    """A design as the engine takes it: ``Phi`` and ``y`` zero-padded to bucketed shapes, the mask of
    the real columns, the evidence's dimension ``n_obs`` and ``yy = yᵀy`` (``None``: from ``y``);
    with ``gram``, ``Phi`` is ``ΦᵀΦ`` and ``y`` is ``Φᵀy`` (:class:`GramStatistics`)."""

    Phi: np.ndarray
    y: np.ndarray
    basis_mask: np.ndarray
    n_obs: int
    yy: float | None
    gram: bool = False


def _pack_gram(stats, n_obs):
    m = stats.gram.shape[0]
    m_pad = bucket(m)
    G = pad_to(stats.gram, (m_pad, m_pad))
    return PackedDesign(G, pad_to(stats.Phity, (m_pad,)), pad_to(np.ones(m, bool), (m_pad,)), n_obs, stats.yy, True)


def engine_data(packed):
    """The engine's data: :func:`typeii_exact.make_gram_data` for a Gram form, else a :func:`typeii_exact.make_design`
    whose products the fit's program computes (one program for a first fit, not two)."""
    if packed.gram:
        return typeii_exact.make_gram_data(packed.Phi, packed.y, packed.yy, packed.n_obs, packed.basis_mask)
    return typeii_exact.make_design(packed.Phi, packed.y, n_obs=packed.n_obs, basis_mask=packed.basis_mask, yy=packed.yy)


def pack_design(Phi, y, *, n_obs=None, factor=None):
    """:class:`PackedDesign` of ``Phi`` and ``y`` (see :func:`fit_design` for ``factor`` and ``n_obs``)."""
    if isinstance(factor, GramStatistics):
        return _pack_gram(factor, factor.n_rows if n_obs is None else n_obs)
    y = np.asarray(y, dtype=np.float64)
    n_obs, yy = (y.size if n_obs is None else n_obs), None
    if factor is not None:
        Phi, y, yy = factor.design, y @ factor.basis, float(y @ y)
    n, m = Phi.shape
    n_pad, m_pad = bucket(n), bucket(m)
    Phi_pad = pad_to(Phi, (n_pad, m_pad), out=aligned_zeros((n_pad, m_pad)))  # to the device uncopied
    y_pad = pad_to(np.asarray(y, dtype=np.float64), (n_pad,))
    mask = pad_to(np.ones(m, bool), (m_pad,))  # (zero columns, such as a centred bias, are masked by the engine)
    return PackedDesign(Phi_pad, y_pad, mask, n_obs, yy)


def _limit(n_columns, max_active):
    return min(n_columns, bucket(max_active) if max_active else n_columns)


def fit_design(Phi, y, prior, noise_var, *, max_iter=2000, tol=1e-9, noise_every=1, max_active=None, factor=None,
               n_obs=None):
    """Fit one design with the engine, padding to bucketed shapes and growing the capacity
    (:func:`typeii_exact.fit_growing`).

    Returns the final engine state (unpadded columns are the first ``Phi.shape[1]``).
    ``max_active`` caps the number of basis functions in the model (default: all). With a
    :class:`~sparsebayes.inference.engines.lowrank.DesignFactor` ``factor`` of ``Φ`` (``Phi`` unused,
    may be ``None``) the engine runs on ``Φ̃`` and ``Qᵀy`` (:func:`typeii_exact.make_data`): an add
    then costs ``O(rM)`` instead of ``O(NM)``. With ``factor`` the :class:`GramStatistics` of ``Φ``
    and ``y`` (``Phi`` and ``y`` unused) it runs on them alone (:class:`typeii_exact.GramData`), nothing
    of its cost in ``N``. ``n_obs`` is the dimension of the data the
    evidence is of: ``N`` (default), or ``N − 1`` for centred data with a flat intercept
    integrated out (``y`` and every column centred: the constant direction then holds noise
    alone, and the evidence of the rest is the engine's with ``N − 1`` in place of ``N``).
    """
    packed = pack_design(Phi, y, n_obs=n_obs, factor=factor)
    data = engine_data(packed)
    return typeii_exact.fit_growing(data, prior, noise_var, limit=_limit(packed.Phi.shape[1], max_active),
                              max_iter=max_iter, tol=tol, noise_every=noise_every)


def batch_lanes(n_fits, capacity, backend=None):
    """How many fits :func:`fit_designs` advances together: 1 on a CPU (one after another, where
    ``vmap``-ed lanes are several times slower: :func:`.typeii_batch.fit_batch`), and on an
    accelerator (``backend``, default ``jax.default_backend()``) as many as there are, up to
    :data:`ACCELERATOR_LANES` and to what keeps their ``capacity²`` covariances within
    :data:`LANE_BUDGET` (a fit one after another there is thousands of tiny dependent kernels)."""
    if not on_accelerator(backend):
        return 1
    return int(max(1, min(n_fits, ACCELERATOR_LANES, LANE_BUDGET // (8 * capacity * capacity))))


def fit_designs(packed, prior, noise_var, *, max_iter=2000, tol=1e-9, noise_every=1, max_active=None, lanes=None):
    """:func:`fit_design` for a list of :class:`PackedDesign` of one shape (no ``yy``: not factored), in one
    compiled call; returns the list of final states. ``lanes`` (default :func:`batch_lanes`): 1 runs
    the fits one after another with growing slots (:func:`.typeii_batch.fit_batch_growing`, the steps
    of the single fits); more runs them ``vmap``-ed on that many lanes with every slot from the start
    (:func:`.typeii_batch.fit_batch`: the same steps, its recomputes by a sweep, not LAPACK)."""
    shapes = {p.Phi.shape for p in packed}
    if len(shapes) != 1 or any(p.yy is not None for p in packed):
        raise ValueError(f"fit_designs takes unfactored designs of one padded shape, got shapes {sorted(shapes)}")
    data = jax.vmap(typeii_exact.make_data)(jnp.asarray(np.stack([p.Phi for p in packed])),
                                      jnp.asarray(np.stack([p.y for p in packed])),
                                      jnp.asarray([float(p.n_obs) for p in packed]),
                                      jnp.asarray(np.stack([p.basis_mask for p in packed])))
    limit = _limit(packed[0].Phi.shape[1], max_active)
    noise_var = jnp.asarray(noise_var, jnp.float64)
    lanes = batch_lanes(len(packed), limit) if lanes is None else lanes
    if lanes == 1:
        states = fit_batch_growing(data, prior, noise_var, limit=limit, max_iter=max_iter, tol=tol,
                                   noise_every=noise_every)
    else:
        states = fit_batch(data, prior, noise_var, capacity=limit, lanes=lanes, max_iter=max_iter, tol=tol,
                           noise_every=noise_every)
    return [jax.tree.map(lambda a, k=k: a[k], states) for k in range(len(packed))]
