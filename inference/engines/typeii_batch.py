"""Many type-II fits in one compiled call: the sequential engine of :mod:`.typeii` over a
leading data-set axis (the replications of a table, CV folds), with the same steps, and so the
same final states, as one :func:`~.typeii_exact.fit` per data set.

:func:`fit_batch` runs the fits one after another inside one program (``lax.map``), or
``vmap``-ed on a few lanes of a work queue (:func:`_fit_queue`); :func:`fit_batch_growing`
starts them in few slots and widens them as :func:`~.typeii_exact.fit_growing` does.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from sparsebayes.inference.engines.typeii_exact import (
    choose_move,
    finish_move,
    fit,
    noise_due,
    noise_step,
    run,
    start,
    stopped,
    widen,
)
from sparsebayes.inference.engines.typeii_linalg import spd_inverse_sweep
from sparsebayes.inference.engines.typeii_moves import grow_slots, note_cycle
from sparsebayes.inference.engines.typeii_updates import _add, _reestimate_or_delete


def fit_batch_growing(data, prior, noise_var, *, limit, start=16, **kw):
    """:func:`~.typeii_exact.fit_growing` for a leading data-set axis, the fits one after another in one compiled
    program (``lax.map``); a fit that pauses for want of a slot goes on, once every fit has
    stopped or paused, in twice the slots (the finished ones then stop at once)."""
    return grow_slots(lambda c, pause: fit_batch(data, prior, noise_var, capacity=c, pause_when_full=pause, **kw),
                      lambda st, pause: _resume_batch(data, prior, st, pause_when_full=pause, **kw),
                      lambda st, c: jax.vmap(lambda one: widen(one, c))(st), start, limit)


@partial(jax.jit, static_argnames=("pause_when_full",))
def _resume_batch(data, prior, state, *, pause_when_full, **kw):
    return jax.lax.map(lambda args: run(args[1], args[0], prior, pause_when_full=pause_when_full, **kw),
                       (data, state))


@partial(jax.jit, static_argnames=("capacity", "lanes", "pause_when_full"))
def fit_batch(data, prior, noise_var, *, capacity, max_iter=2000, tol=1e-9, noise_tol=1e-7, noise_every=1,
              align_max=1.0 - 1e-3, lanes=1, pause_when_full=False):
    """:func:`~.typeii_exact.fit` for a leading data-set axis of ``data`` and ``noise_var``: the same steps, so the
    same final states as one fit per data set.

    ``lanes=1`` (default): the fits run one after another inside one compiled program
    (``lax.map`` of :func:`~.typeii_exact.fit`, ``pause_when_full`` passed on), each with its own ``cond``
    branches and LAPACK solves.
    ``lanes > 1``: :func:`_fit_queue`, ``vmap``-ed steps over that many fits at once. On CPU the
    sequential map is the faster, and more lanes make the ``vmap``-ed fits slower still: under
    ``vmap`` an update that any lane chooses runs for every lane, and the indexed reads and
    writes of one basis become gathers and scatters, so a lane-step costs several times a step
    of one fit.
    """
    kw = dict(capacity=capacity, max_iter=max_iter, tol=tol, noise_tol=noise_tol, noise_every=noise_every,
              align_max=align_max)
    if lanes == 1:
        return jax.lax.map(lambda args: fit(args[0], prior, args[1], pause_when_full=pause_when_full, **kw),
                           (data, noise_var))
    if pause_when_full:
        raise ValueError("vmap-ed lanes cannot pause for want of a slot: use lanes=1")
    return _fit_queue(data, prior, noise_var, lanes=lanes, **kw)


def _fit_queue(data, prior, noise_var, *, lanes, capacity, max_iter, tol, noise_tol, noise_every, align_max):
    """A work queue in one ``while_loop``: ``lanes`` fits advance together, one ``vmap``-ed step at a
    time, and a lane whose fit stops stores its final state and starts the next data set, so the
    loop runs for about the total number of steps over ``lanes``, not until the slowest of a
    fixed chunk of fits stops. Each kind of update (re-estimate/delete, add, σ², a refill) runs,
    ``vmap``-ed and kept where chosen, only on the iterations on which some lane chose it (a
    plain ``vmap`` of :func:`~.typeii_exact.fit` turns every ``cond`` into a select that runs all branches, the
    σ² update with its two recomputes included, on every step, which makes each fit several
    times slower). Recomputes use :func:`spd_inverse_sweep`, not LAPACK.
    """
    vmap = jax.vmap
    n = noise_var.shape[0]
    n_lanes = min(lanes, n)
    init_lanes = vmap(lambda d, nv: start(d, prior, nv, capacity, spd_inverse_sweep))
    choose = vmap(lambda d, st: choose_move(d, st, prior, tol=tol, align_max=align_max))
    reestimate = vmap(_reestimate_or_delete)
    add = vmap(_add)
    finish = vmap(lambda d, st, mv: finish_move(d, st, prior, mv, tol=tol))
    noises = vmap(lambda d, st, mv: noise_step(d, st, prior, mv, noise_tol=noise_tol, inverse=spd_inverse_sweep))

    def take(jobs):
        return jax.tree.map(lambda a: a[jobs], (data, noise_var))

    def only_where(mask, update, st):
        """``update`` for the lanes in ``mask``, run only if there is one (no select of every branch)."""
        return jax.lax.cond(jnp.any(mask), lambda s: _where_batch(mask, update(s), s), lambda s: s, st)

    def running(st):
        return ~stopped(st) & (st.n_iter < max_iter)

    def advance(lane_data, st, live):
        move = choose(lane_data, st)
        new = only_where(live & (move.kind == 0), lambda s: reestimate(lane_data, s, move.m, move.var), st)
        new = only_where(live & (move.kind == 1), lambda s: add(lane_data, s, move.m, move.var), new)
        new = finish(lane_data, new, move)
        moved = move.kind < 2
        new = only_where(live & noise_due(new, moved, noise_every), lambda s: noises(lane_data, s, moved), new)
        return _where_batch(live, vmap(note_cycle)(new), st)

    def refill(carry, finished):
        """Store the finished lanes' states; give them the next data sets (idle when none is left)."""
        (lane_data, lane_nv), st, job, next_job, out = carry
        out = jax.tree.map(lambda o, s: o.at[jnp.where(finished, job, n)].set(s, mode="drop"), out, st)
        new_job = jnp.where(finished, next_job + jnp.cumsum(finished) - 1, job)
        start = finished & (new_job < n)
        fresh_data = _where_batch(start, take(jnp.minimum(new_job, n - 1)), (lane_data, lane_nv))
        st = _where_batch(start, init_lanes(*fresh_data), st)
        return fresh_data, st, jnp.where(finished & ~start, n, new_job), next_job + jnp.sum(finished), out

    def body(carry):
        lanes_data, st, job, next_job, out = carry
        st = advance(lanes_data[0], st, running(st) & (job < n))
        finished = (job < n) & ~running(st)
        carry = (lanes_data, st, job, next_job, out)
        return jax.lax.cond(jnp.any(finished), lambda c: refill(c, finished), lambda c: c, carry)

    first = jnp.arange(n_lanes)
    lanes_data = take(first)
    st = init_lanes(*lanes_data)
    out = jax.tree.map(lambda a: jnp.zeros((n,) + a.shape[1:], a.dtype), st)
    carry = (lanes_data, st, first, jnp.asarray(n_lanes), out)
    return jax.lax.while_loop(lambda c: jnp.any(c[2] < n), body, carry)[-1]


def _where_batch(mask, new, old):
    """Per data set (leading axis) choice between two batched states."""
    return jax.tree.map(lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b), new, old)
