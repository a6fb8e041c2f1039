"""The one driver of the engines: :func:`run` (a ``lax.while_loop`` to a tolerance) and :func:`trace`
(a ``lax.scan`` of a fixed number of steps), over any engine that keeps the contract below.

The contract
------------
An engine is a module with

* ``init(data, model, ...) -> State``: the state at a start (the engine's own starting values and
  settings after ``model``);
* ``step(state, data, model, *, settings) -> (State, Info)``: one iteration, a pure function
  (no host work, no side effects; ``jit``, ``vmap`` and ``scan`` apply), returning the new state
  and what the step reports about it. The settings are keyword-only, so ``data`` and ``model``
  sit in the same positional slots in every engine.

``model`` is what the engine fits, the hierarchy (prior) and the likelihood, in the form the
engine takes it, under the name :data:`ENGINES` gives:

* :mod:`~sparsebayes.inference.engines.em` (Figueiredo's EM, 000, 002): ``model``, an
  :class:`~sparsebayes.inference.engines.em.EMModel` ``(prior, likelihood)``; the hierarchy's
  estimated shared hyperparameters move with the state, so its step reads the hierarchy from it;
* :mod:`~sparsebayes.inference.engines.bound` (Böhning-bound MM, 003): ``prior``, the hierarchy
  with the ``"bound"`` capability (the likelihood is the engine's: the multinomial logistic);
* :mod:`~sparsebayes.inference.engines.typeii` (Tipping & Faul's sequential type-II, 004, for every
  likelihood): ``model``, a :class:`~sparsebayes.inference.engines.typeii_moves.TypeIIModel`
  ``(prior, likelihood)``, the hierarchy with the ``"type2"`` capability and the likelihood, whose
  ``conjugate_noise`` picks the data step (the Gaussian's exact statistics, :mod:`.typeii_exact`, or the
  Laplace linearization at the mode, :mod:`.typeii_laplace`).

Every ``State`` has ``n_iter``, the steps taken, which :func:`run` bounds by ``max_iter``. The
stopping rule is the engine's ``converged(state, tol)``: by default :func:`rel_change_below`,
``state.rel_change < tol``, where ``rel_change`` is the engine's scaled change of every quantity
it estimates (EM's joint change of the weights, the hierarchy's shared hyperparameters and the
objective, :func:`~sparsebayes.inference.engines.em.joint_change`; the bound engine's relative
change of the weights, all it estimates). An engine whose step decides convergence itself passes
its own predicate (the type-II engine, Gaussian: no move gains more than its ``tol`` and σ² moved
less than its ``noise_tol``, a flag its step sets; other likelihoods: the same flag, or no better
objective for ``patience`` steps, counted by its step in the state; the bound engine's component-wise
solver: the change and a sweep over every weight). ``halt(state)``, if given, stops the loop too (EM:
few enough weights left to compact the active set; type-II: an add found no free slot).

The caller may own the loop: ``step`` is a pure function, and a Python loop of jitted steps takes
the same steps as :func:`run` (a test checks it). Each engine's ``run`` and ``trace`` are thin
jitted wrappers that bind its settings to ``step`` and call this module, so that the loop, the
stopping rule and the trace are written once.

Loops that stay outside the driver: the host loops above ``run`` (EM's shrinking active set,
:func:`~sparsebayes.inference.engines.em_slices.run_slices`; the type-II slot growth,
:func:`~sparsebayes.inference.engines.typeii_moves.grow_slots`), which call it, and the type-II
work queue of ``vmap``-ed lanes (:func:`~sparsebayes.inference.engines.typeii_batch._fit_queue`),
which refills lanes inside its loop and so is not one engine's loop.

Samplers
--------
A sampler (listed in :data:`SAMPLERS`) keeps the same contract with its randomness as one more
keyword-only setting of ``step``: the Gibbs engine (:mod:`~sparsebayes.inference.engines.hierarchy_gibbs`,
``model`` a :class:`~sparsebayes.inference.engines.hierarchy_gibbs.GibbsModel` ``(prior, noise)``, the
hierarchy and the Gaussian likelihood's prior on σ², or an
:class:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.AugmentedModel` ``(prior, likelihood)``) takes
``step(state, data, model, *, key)`` and ``step_from(state, data, model, *, variates)``. The randomness
is an argument, not carried in the state: every sweep's key is split from the seed before the chain
runs, and variates are drawn ahead on the host, so the draws at a seed do not depend on how the sweeps
are cut into compiled calls (a progress bar cuts them into about 20), and the state holds only the
chain's draw. Its ``trace`` is the chain: :func:`trace` with the sweeps' keys or variates as
``inputs``, keeping every state as the draws. A sampler has no tolerance: :func:`run` does not apply
(it runs a fixed number of sweeps; a sampler's module-level ``run``, where it has one, is its public
entry point from the data, not this loop).
"""
from __future__ import annotations

from jax import lax

__all__ = ["ENGINES", "PENDING", "SAMPLERS", "rel_change_below", "run", "trace"]

#: The engines that keep the contract: module name (under :mod:`sparsebayes.inference.engines`) ->
#: the name of their model argument (``init``'s second, ``step``'s third positional parameter).
ENGINES = {"em": "model", "bound": "prior", "typeii": "model", "hierarchy_gibbs": "model"}

#: The engines of :data:`ENGINES` that are samplers (module docstring): their step takes its randomness
#: as a keyword-only setting, their ``trace`` is the chain, and :func:`run` does not apply.
SAMPLERS = ("hierarchy_gibbs",)

#: Modules with an ``init`` or ``step`` of their own signature, to conform later: none.
PENDING = ()


def rel_change_below(state, tol):
    """``state.rel_change < tol``, read as "not at least ``tol``": a NaN change stops the loop, as
    stepping on from a non-finite state gains nothing (the caller checks the state)."""
    return ~(state.rel_change >= tol)


def run(step, state, data, model, *, tol, max_iter, converged=rel_change_below, halt=None):
    """``step`` from ``state`` until ``converged(state, tol)``, ``state.n_iter ≥ max_iter``, or
    ``halt(state)``; returns the final state.

    ``step(state, data, model) -> (state, info)`` is an engine's step with its settings bound
    (the info is dropped, so what only it needs is never computed inside the loop). Call it inside
    ``jit`` (each engine's ``run`` does): the loop is a ``lax.while_loop``, and a state that
    already meets the rule is returned unchanged.
    """

    def cond(s):
        go = ~converged(s, tol) & (s.n_iter < max_iter)
        return go if halt is None else go & ~halt(s)

    return lax.while_loop(cond, lambda s: step(s, data, model)[0], state)


def trace(step, state, data, model, *, n_steps=None, converged=None, tol=None, rest=None, inputs=None):
    """``n_steps`` of ``step`` from ``state`` (``lax.scan``); returns the final state and every step's
    info, stacked along a leading axis of length ``n_steps``.

    ``inputs``: what each step reads besides the state, stacked along a leading axis (a sampler's
    keys or pre-drawn variates, one per step); step ``t`` is then ``step(state, data, model,
    inputs[t])`` and ``n_steps`` defaults to their length. Without it, ``step(state, data, model)``.

    With ``converged`` (and ``rest``), a state that meets ``converged(state, tol)`` stays as it is
    and reports ``rest(state)`` (an info of the same structure) for the remaining steps, so a trace
    whose steps reach the rule ends in :func:`run`'s state; without it every step is taken.
    """
    if inputs is None:
        def one(s, _):
            return step(s, data, model)
    else:
        def one(s, x):
            return step(s, data, model, x)

    if converged is None:
        return lax.scan(one, state, inputs, length=n_steps)

    def body(s, x):
        return lax.cond(~converged(s, tol), lambda st: one(st, x), lambda st: (st, rest(st)), s)

    return lax.scan(body, state, inputs, length=n_steps)

