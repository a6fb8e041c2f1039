"""The sequential type-II maximum likelihood engine (Tipping & Faul 2003; 004 Algorithm 1), one engine
for every likelihood: RVM, FLAP and BLS regression, the RVM classifier, the Poisson and negative-binomial
RVMs.

The engine fits a :class:`~.typeii_moves.TypeIIModel` ``(prior, likelihood)``: a type-II hierarchy
(:mod:`sparsebayes.models.priors.typeii`) on the prior variances of the weights, and a likelihood. Each
step computes every candidate's sparsity and quality factors ``s_i, q_i`` from the likelihood's
linearization, takes the single add / re-estimate / delete of largest gain
(:func:`.typeii_moves.choose`: the hierarchy's optimum, 004 eq. 16, and gain, 004 eq. 14), sets λ by the
hierarchy's update (004 eq. 17, :func:`.typeii_moves.update_lambda`), and moves the likelihood's own
parameter. The linearization is the data step, chosen once per model by the likelihood's
``conjugate_noise`` declaration (:func:`linearization`, a static Python choice at trace time):

* the Gaussian ``N(η, σ²)``: exact (:mod:`.typeii_exact`). ``S, Q, Σ, μ`` follow the moves by rank-one
  updates (Tipping & Faul 2003, Appendix), the parameter is σ² (004 eq. 18 or the MacKay fixed point),
  and the fit stops when no move gains more than ``tol`` and σ² has settled, or on a cycle of moves;
* any other likelihood: the Laplace approximation at the posterior mode (:mod:`.typeii_laplace`, with
  the mode, the evidence and ``S, Q`` of :mod:`.typeii_laplace_mode`, Tipping 2001, Sec. 4; Tipping &
  Faul 2003, Sec. 5). The parameter is the likelihood's own where it has one (the negative binomial's
  dispersion, :func:`.typeii_param.param_step`), and the fit stops when no move gains more than ``tol``
  with the parameter settled, or when ``L`` has not improved on its best for ``patience`` steps.

The two data steps keep states of their own (:class:`.typeii_exact.State`, :class:`.typeii_laplace.State`):
the Gaussian's carries the rank-one statistics and is ``vmap``-ed over data sets
(:mod:`.typeii_batch`), the Laplace path's the Cholesky factor at the mode and its best state so far.
The engine's :func:`init`, :func:`step`, :func:`stopped`, :func:`run`, :func:`trace` and :func:`fit`
take either, and the choice between them costs the compiled programs nothing.

The estimators' fitting cores hand the engine an unpadded design and a model, and read the final
state back, through the engine alone: :func:`fit_model` (the growing fit: slots doubled when an add finds
none free, the design padded to few shapes) and :func:`host_result`, :func:`coefficients`,
:func:`posterior_covariance`, :func:`stopped_at_start`, :func:`last_basis_pruned`. Each dispatches to the
data step of the model (:func:`linearization`) or of the state, whose module keeps its own padding and
growth (:func:`.typeii_design.fit_design` over :func:`.typeii_exact.fit_growing`; :func:`.typeii_laplace.fit`);
many Gaussian designs of one shape go in one call by :func:`fit_models` (:func:`.typeii_design.fit_designs`).

The contract of :mod:`sparsebayes.inference.engines.driver`: :func:`init` ``(data, model, capacity)``, a
pure :func:`step` ``(state, data, model, *, settings)`` returning the new state and the step's
:class:`~.typeii_moves.Info`, :func:`run` the jit boundary (the driver's ``lax.while_loop`` to
:func:`stopped`), :func:`trace` a fixed number of steps (the driver's ``lax.scan``), :func:`fit` the start
and the run in one program. The growing fits from a design (slots doubled when an add finds none free)
are the data steps' own: :func:`.typeii_exact.fit_growing`, :func:`.typeii_laplace.fit`.
"""
from __future__ import annotations

from functools import partial

import jax

import numpy as np

from sparsebayes.inference.engines import driver, typeii_design, typeii_exact, typeii_laplace
from sparsebayes.inference.engines.typeii_moves import Info, TypeIIModel, sequential_step
from sparsebayes.inference.engines.typeii_param import has_own_parameter
from sparsebayes.models.likelihoods import GaussianLikelihood, conjugate_noise, make_likelihood

__all__ = ["TypeIIModel", "coefficients", "fit", "fit_model", "fit_models", "host_result", "init", "last_basis_pruned",
           "linearization", "make_model", "posterior_covariance", "run", "step", "stopped", "stopped_at_start", "trace"]


def linearization(model):
    """The data step of ``model``'s likelihood: :mod:`.typeii_exact` where it states ``conjugate_noise``
    (the Gaussian), else :mod:`.typeii_laplace` (a static choice: the programs hold one of them)."""
    return typeii_exact if conjugate_noise(model.likelihood) else typeii_laplace


def make_model(prior=None, likelihood=None):
    """:class:`~.typeii_moves.TypeIIModel` of the type-II hierarchy ``prior`` and ``likelihood`` (a name or
    an object of :mod:`sparsebayes.models.likelihoods`; ``None``: the Gaussian), both checked for their
    data step (a ``ValueError`` naming what is missing). The Gaussian needs a hierarchy; the other
    likelihoods take ARD (the RVM) for ``None``."""
    likelihood = GaussianLikelihood() if likelihood is None else make_likelihood(likelihood)
    if conjugate_noise(likelihood):
        if prior is None:
            raise ValueError("the Gaussian type-II path needs a type-II hierarchy: pass prior= (e.g. ARDPrior())")
        return TypeIIModel(typeii_exact.check_prior(prior), likelihood)
    return typeii_laplace.make_model(likelihood, prior)


def _exact(model):
    return linearization(model) is typeii_exact


def _on_laplace_path(state):
    return isinstance(state, typeii_laplace.State)


def init(data, model, capacity, *, params=None, **options):
    """The start in ``capacity`` slots: one basis function in (the column best aligned with the targets,
    Tipping & Faul 2003, Sec. 4). ``params`` is the likelihood's parameter to start from: σ² for the
    Gaussian (required), else the likelihood's own (``None``: its ``init_params``). ``options`` are the
    data step's (:func:`.typeii_exact.start`'s ``inverse``; :func:`.typeii_laplace.start`'s ``n_open``,
    ``settle``)."""
    if _exact(model):
        if params is None:
            raise ValueError("the Gaussian type-II path starts from a noise variance: pass params=sigma^2")
        return typeii_exact.start(data, model.prior, params, capacity, **options)
    return typeii_laplace.start(data, model, capacity, params=params, **options)


def step(state, data, model, **settings):
    """One step (:func:`~.typeii_moves.sequential_step`): ``s, q`` from the linearization's ``factors``, the
    move of largest gain under ``model.prior`` (:func:`~.typeii_moves.choose`), then the linearization's
    ``advance`` (the move applied, λ, the likelihood's parameter, the convergence bookkeeping), with the
    data step's ``settings`` (``tol`` and :func:`.typeii_exact.take_step`'s or
    :func:`.typeii_laplace.take_step`'s); returns the new state and the step's :class:`~.typeii_moves.Info`."""
    lin = linearization(model)
    return sequential_step(lin.factors, lin.advance, state, data, model.prior if lin is typeii_exact else model,
                           model.prior, **settings)


def stopped(state, tol=None, *, patience=None):
    """The engine's stopping rule (:func:`~sparsebayes.inference.engines.driver.run`'s ``converged``), the
    data step's: :func:`.typeii_exact.stopped` (converged or cycled) or :func:`.typeii_laplace.stopped`
    (converged, or no better ``L`` for ``patience`` steps)."""
    if _on_laplace_path(state):
        return typeii_laplace.stopped(state, tol, patience=patience)
    return typeii_exact.stopped(state, tol)


def _settings(model, *, tol, noise_tol, noise_every, align_max, pause_when_full, estimate_params, param_tol):
    """The step's settings for the data step of ``model`` (each path reads its own)."""
    if _exact(model):
        return dict(tol=tol, noise_tol=noise_tol, noise_every=noise_every, align_max=align_max,
                    pause_when_full=pause_when_full)
    return dict(tol=tol, pause_when_full=pause_when_full, estimate_params=estimate_params, param_tol=param_tol)


#: The static options of the engine's programs.
_STATIC = ("pause_when_full", "estimate_params")


@partial(jax.jit, static_argnames=_STATIC)
def run(state, data, model, *, max_iter, tol, patience=100, noise_tol=1e-7, noise_every=1, align_max=1.0 - 1e-3,
        pause_when_full=False, estimate_params=False, param_tol=1e-6):
    """The jit boundary: :func:`step` from ``state`` (:func:`~sparsebayes.inference.engines.driver.run`)
    until :func:`stopped` or ``max_iter``; with ``pause_when_full``, also when the best move is an add
    that finds no free slot (``capacity_hit`` set, the state otherwise as it was). The Gaussian reads
    ``noise_tol``, ``noise_every`` and ``align_max``; the other likelihoods ``patience``,
    ``estimate_params`` and ``param_tol``."""
    one = partial(step, **_settings(model, tol=tol, noise_tol=noise_tol, noise_every=noise_every, align_max=align_max,
                                    pause_when_full=pause_when_full, estimate_params=estimate_params,
                                    param_tol=param_tol))
    rule = partial(stopped, patience=patience) if not _exact(model) else stopped
    return driver.run(one, state, data, model, tol=tol, max_iter=max_iter, converged=rule,
                      halt=(lambda st: st.capacity_hit) if pause_when_full else None)


@partial(jax.jit, static_argnames=("capacity",) + _STATIC)
def fit(data, model, *, capacity, params=None, max_iter, tol, patience=100, noise_tol=1e-7, noise_every=1,
        align_max=1.0 - 1e-3, pause_when_full=False, estimate_params=False, param_tol=1e-6):
    """:func:`init` then :func:`run` in ``capacity`` slots, one compiled program (the Laplace path's start
    unsettled: the loop's first iteration settles it and counts no step). ``data`` a
    :class:`.typeii_exact.Design`: its products are computed in the same program."""
    if _exact(model):
        if isinstance(data, typeii_exact.Design):
            data = data.engine_data()
        state = init(data, model, capacity, params=params)
    else:
        state = init(data, model, capacity, params=1.0 if params is None else params, settle=False)
    return run(state, data, model, max_iter=max_iter, tol=tol, patience=patience, noise_tol=noise_tol,
               noise_every=noise_every, align_max=align_max, pause_when_full=pause_when_full,
               estimate_params=estimate_params, param_tol=param_tol)


@partial(jax.jit, static_argnames=("n_steps",) + _STATIC)
def trace(state, data, model, *, n_steps, tol, noise_tol=1e-7, noise_every=1, align_max=1.0 - 1e-3,
          pause_when_full=False, estimate_params=None, param_tol=1e-6):
    """``n_steps`` of :func:`step` from ``state`` (:func:`~sparsebayes.inference.engines.driver.trace`; a
    fit that has stopped stays, with ``kind`` none and gain 0: for the Gaussian a converged or cycled
    state, for the other likelihoods a converged one); returns the final state and every step's
    :class:`~.typeii_moves.Info`. The likelihood's own parameter is estimated where it has one
    (``estimate_params=None``, :func:`.typeii_param.has_own_parameter`)."""
    if estimate_params is None:
        estimate_params = has_own_parameter(model.likelihood)
    one = partial(step, **_settings(model, tol=tol, noise_tol=noise_tol, noise_every=noise_every, align_max=align_max,
                                    pause_when_full=pause_when_full, estimate_params=estimate_params,
                                    param_tol=param_tol))
    rule = stopped if _exact(model) else (lambda st, _: st.converged)
    return driver.trace(one, state, data, model, n_steps=n_steps, converged=rule,
                        rest=lambda st: Info.none(st.objective))


def fit_model(Phi, y, model, *, params=None, **options):
    """The growing fit of targets ``y`` on the unpadded design ``Phi`` (N × M) under ``model``, by its data
    step's own padding and growth: the active set starts in few slots, doubled without restarting when the
    best move is an add that finds none free (:func:`.typeii_moves.grow_slots`). Returns the final state.

    * Gaussian (:func:`.typeii_design.fit_design`): ``params`` is σ²'s start (required); ``options`` its
      ``factor`` (a low-rank factor or the Gram statistics of ``Φ``, ``Phi`` then unused), ``n_obs``,
      ``max_iter``, ``tol``, ``noise_every``, ``max_active``. The state is on the device
      (:func:`host_result`).
    * any other likelihood (:func:`.typeii_laplace.fit`): ``params`` the likelihood's own parameter's start
      (``None``: its ``init_params``); ``options`` its ``basis_mask`` (the candidates; default every
      column), ``max_iter``, ``tol``, ``capacity``, ``patience``, ``estimate_params``, ``param_tol``. The
      state is on the host, over the ``M`` candidates.
    """
    if _exact(model):
        if params is None:
            raise ValueError("the Gaussian type-II path starts from a noise variance: pass params=sigma^2")
        return typeii_design.fit_design(Phi, y, model.prior, params, **options)
    mask = options.pop("basis_mask", None)
    mask = np.ones(np.shape(Phi)[1], bool) if mask is None else mask
    return typeii_laplace.fit(Phi, y, mask, likelihood=model.likelihood, prior=model.prior, params=params, **options)


def fit_models(packed, model, params, **options):
    """:func:`fit_model` for many Gaussian designs of one padded shape in one compiled call
    (:func:`.typeii_design.fit_designs`, ``packed`` their :class:`.typeii_design.PackedDesign`, ``params``
    the σ² starts); returns the list of final states. Only the Gaussian's exact data step batches."""
    if not _exact(model):
        raise ValueError("fit_models batches the Gaussian type-II path only, got the "
                         f"{type(model.likelihood).__name__}")
    return typeii_design.fit_designs(packed, model.prior, params, **options)


def _path_of(state):
    return typeii_laplace if _on_laplace_path(state) else typeii_exact


def host_result(state):
    """The final ``state`` on the host with the fields a fitted model reads: the Gaussian path's
    :func:`.typeii_exact.result_fields` (one batched transfer); the Laplace path's state is already there."""
    return state if _on_laplace_path(state) else typeii_exact.result_fields(state)


def last_basis_pruned(state, prior):
    """Whether the Gaussian path's only basis left meets ``prior``'s pruning condition
    (:func:`.typeii_exact.last_basis_pruned_jit`: the engine never deletes its last basis, and the
    estimators report the empty model for it)."""
    if _on_laplace_path(state):
        raise ValueError("last_basis_pruned reads the Gaussian path's statistics S, Q; got a Laplace-path state")
    return typeii_exact.last_basis_pruned_jit(state, prior)


def stopped_at_start(state):
    """Whether a Laplace-path fit stopped at its start (:func:`.typeii_laplace.stopped_at_start`: its first
    step found no move, so no search followed the start's projection)."""
    if not _on_laplace_path(state):
        raise ValueError("stopped_at_start reads the Laplace path's step count; a Gaussian-path state counts n_moves")
    return typeii_laplace.stopped_at_start(state)


def coefficients(state, n_basis):
    """The posterior mean (Gaussian) or mode (Laplace) over the ``n_basis`` candidates, zeros where pruned
    (the data step's ``coefficients``)."""
    return _path_of(state).coefficients(state, n_basis)


def posterior_covariance(state, model, Phi=None, t=None):
    """The posterior covariance over the active basis functions in increasing index (the order of
    :func:`coefficients`' nonzeros): the Gaussian's ``Σ`` (004 Sec. 2.4) from the host ``state``'s slots;
    the Laplace covariance at the mode (Tipping 2001, eqs. 26-27, :func:`.typeii_laplace.posterior_covariance`,
    which factors ``Phi`` and ``t`` again for a state without its Cholesky factor)."""
    if _on_laplace_path(state):
        return typeii_laplace.posterior_covariance(Phi, t, state, likelihood=model.likelihood)
    slots = np.asarray(state.basis_of_slot)
    active = slots >= 0
    order = np.argsort(slots[active])
    return np.asarray(state.Sigma)[np.ix_(active, active)][np.ix_(order, order)]
