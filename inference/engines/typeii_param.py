"""The likelihood's own parameter on the Laplace path of the sequential type-II engine: the negative
binomial's dispersion ``r`` (a likelihood with a ``param_name``), moved up the type-II objective ``L``
between moves (:func:`param_step`), each trial settled at its mode by
:func:`~.typeii_laplace_mode._settle`, so that no step of the parameter lowers ``L``.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from sparsebayes.inference.engines.typeii_laplace_mode import ARD, _own, _settle, _slots

def has_own_parameter(likelihood):
    """Whether the likelihood has a parameter of its own (``param_name``: the negative binomial's
    dispersion), which the fit estimates between moves (:func:`param_step`)."""
    return getattr(likelihood, "param_name", None) is not None


def _start_params(likelihood, t, params):
    """The likelihood's parameter a fit starts from: ``params``, else its ``init_params(t)`` (the
    placeholder 1 for a likelihood without one), as a float64."""
    if params is None:
        params = likelihood.init_params(np.asarray(t, np.float64)) if has_own_parameter(likelihood) else 1.0
    return np.float64(params)


#: The step in ``log`` of the likelihood's parameter of the central differences of ``L`` (:func:`param_step`).
PARAM_DIFF_STEP = 1e-3


def _param_line_search(state, likelihood, Phi, t, log_step, *, prior, n_obs, halvings):
    """The state settled at the parameter ``params · exp(log_step · 2⁻ᵏ)`` for the first ``k ≤ halvings``
    whose ``L`` is not below ``state``'s, else ``state`` itself."""
    old = _own(state)

    def trial(carry):
        k, _ = carry
        tried = state._replace(params=old * jnp.exp(log_step * 0.5 ** k))
        return k + 1, _settle(likelihood, Phi, t, tried, prior=prior, n_obs=n_obs)[0]

    def worse(carry):
        k, tried = carry
        return (k == 0) | ((tried.objective < state.objective) & (k <= halvings))

    _, tried = jax.lax.while_loop(worse, trial, (0, state._replace(objective=jnp.asarray(-jnp.inf))))
    taken = tried.objective >= state.objective
    return jax.tree.map(lambda a, b: jnp.where(taken, a, b), tried, state)


def param_step(state, likelihood, Phi, t, *, prior=ARD, n_obs=None, halvings=4):
    """The likelihood's own parameter (``state.params``: the negative binomial's dispersion, a positive
    scale) moved up ``L``, the type-II objective, in two line searches on its log, each halving its step
    up to ``halvings`` times until ``L`` (the mode settled at the new parameter) does not fall, and
    taking no step where it falls every time; so no step lowers ``L``.

    The first goes to the likelihood's ``update_params`` at ``η* = Φw*``, the maximiser of
    ``Σ log p(t | η*, ·)``: a large step from a far start, but not the maximiser of ``L``, which also
    has ``½ log|Σ|`` and the mode moving with the parameter (envelope theorem: ``dL/dr`` is
    ``∂_r Σ log p + ½ d log|Σ|/dr``). The second is Newton's step on ``L`` in ``log r`` from central
    differences at :data:`PARAM_DIFF_STEP` (a step of ``sign(dL) · ½`` where ``L`` is not concave
    there; at most 1 in ``log r``), so that the parameter settles where ``dL/dr = 0``.

    Returns the state (settled at the parameter taken) and the relative change of the parameter."""
    _, Phi_A, _ = _slots(Phi, state)
    old = _own(state)
    proposal = likelihood.update_params(t, Phi_A @ state.w, old, n_obs)
    search = partial(_param_line_search, likelihood=likelihood, Phi=Phi, t=t, prior=prior, n_obs=n_obs,
                     halvings=halvings)
    first = search(state, log_step=jnp.log(proposal) - jnp.log(old))
    h = PARAM_DIFF_STEP

    def objective_at(sign):
        return _settle(likelihood, Phi, t, first._replace(params=first.params * jnp.exp(sign * h)), prior=prior,
                       n_obs=n_obs)[0].objective

    up, down = jax.lax.map(objective_at, jnp.array([1.0, -1.0]))
    slope, curve = (up - down) / (2.0 * h), (up - 2.0 * first.objective + down) / (h * h)
    newton = jnp.where(curve < 0, -slope / jnp.where(curve < 0, curve, -1.0), 0.5 * jnp.sign(slope))
    new = search(first, log_step=jnp.clip(newton, -1.0, 1.0))
    return new, jnp.abs(new.params - old) / old
