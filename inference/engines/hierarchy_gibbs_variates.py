"""The hierarchy Gibbs sweep (:mod:`.hierarchy_gibbs`) from pre-drawn standard variates.

A hierarchy that declares its standard variates (``gibbs_variates``, ``gibbs_update_from``: the Laplace
prior, and with it Park & Casella's Bayesian Lasso, :mod:`sparsebayes.inference.engines.bayesian_lasso`)
sweeps with every random number read from variates drawn ahead (:func:`step_from`,
:mod:`.gibbs_variates`): NumPy's generators on a CPU, JAX's on an accelerator, no sampler compiled into
the sweep. :func:`run_with_variates` (also :func:`~.hierarchy_gibbs.run` with ``variates=``) sets the
data up once (:func:`setup_variate_data`) and runs the sweeps (:func:`run_from_variates`) in calls whose
variates stay within a budget, from over-dispersed starts (:func:`dispersed_start`).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from sparsebayes.models.priors import require

from sparsebayes.inference.engines import gibbs_beta
from sparsebayes.inference.engines.hierarchy_gibbs import FLAT, GibbsModel, Info, NoisePrior, State, guarded, trace
from sparsebayes.inference.engines.progress import bar_chunk, progress, show_progress
from sparsebayes.inference._validation import check_count, check_data, check_number, check_sampler_counts


class VariateData(NamedTuple):
    """What a sweep from pre-drawn variates (:func:`step_from`) reads of centred ``(X, y)``, possibly
    padded with zero rows (which change no draw: they add nothing to ``XᵀX``, ``Xᵀy`` or the residual,
    and their Bhattacharya rows decouple): ``X`` and ``y``; the bordered Gram matrix on Rue's path
    (:func:`~.gibbs_beta.bordered_gram`; ``None`` on Bhattacharya's, where it would be the one ``p × p``
    array); ``X = QR`` (reduced) with ``Qᵀy`` and ``‖y − QQᵀy‖²``, so that
    ``‖y − Xβ‖² = ‖Qᵀy − Rβ‖² + ‖y − QQᵀy‖²`` costs ``min(n, p)·p``, a sum of two non-negative terms;
    and the degrees of freedom ``m``."""
    X: jax.Array
    y: jax.Array
    bordered: jax.Array | None
    R: jax.Array
    Qty: jax.Array
    rss_perp: jax.Array
    dof: jax.Array


def variate_factors(X, y, use_rue):
    """What :class:`VariateData` computes of ``(X, y)``: ``(bordered, R, Qty, rss_perp)``."""
    Q, R = jnp.linalg.qr(X)
    Qty = Q.T @ y
    return gibbs_beta.bordered_gram(X, y) if use_rue else None, R, Qty, jnp.sum((y - Q @ Qty) ** 2)


def variate_data(X, y, dof, use_rue):
    """The :class:`VariateData` of ``(X, y)`` (traced: a data set of a batch inside its program; a run's
    own is :func:`setup_variate_data`)."""
    return VariateData(X, y, *variate_factors(X, y, use_rue), dof)


def residual_sum_of_squares(data, beta):
    """``‖y − Xβ‖²`` through the QR factor of :class:`VariateData`: ``‖Qᵀy − Rβ‖² + ‖y − QQᵀy‖²``."""
    return data.rss_perp + jnp.sum((data.Qty - data.R @ beta) ** 2)


def step_from(state, data, model, *, variates, scaled=False):
    """:func:`~.hierarchy_gibbs.step` with every random number read from ``variates`` (one sweep's
    :class:`~.gibbs_variates.SweepVariates`: the sweep's randomness, :mod:`.driver`) under ``model``
    (a :class:`GibbsModel`), pure; returns ``(state, info)``.

    The same three conditionals (:mod:`.hierarchy_gibbs`): β by Rue's draw from the bordered Gram matrix
    (:func:`~.gibbs_beta.rue_draw_bordered`, ``p ≤ n``) or Bhattacharya's (``p > n``), from the
    variates' normals; ``σ² = rate / G`` with ``G`` the standard ``Gamma(m/2 + c [+ p/2])`` variate;
    the hierarchy's auxiliary variables by ``prior.gibbs_update_from(variates.aux, β, aux)``, the
    transform of the standard variates it declared (``gibbs_variates``). No random number is drawn
    inside the compiled sweep, so a run compiles no Gamma sampler and the variates come from the
    faster generator where the engine runs (:mod:`.gibbs_variates`)."""
    prior, noise = model
    tiny = jnp.finfo(state.beta.dtype).tiny
    hierarchy_var = jnp.maximum(prior.gibbs_prior_variance(state.aux), tiny)
    v = jnp.maximum(state.noise_var * hierarchy_var if scaled else hierarchy_var, tiny)
    if data.bordered is not None:  # σ²/v: 1/τ when scaled, and so free of σ² there
        relative = 1.0 / hierarchy_var if scaled else state.noise_var / v
        beta = gibbs_beta.rue_draw_bordered(variates.beta_normal, data.bordered, relative, state.noise_var)
    else:
        beta = gibbs_beta.bhattacharya_draw(variates.beta_normal, variates.row_normal, data.X, data.y, None, v,
                                            state.noise_var)
    rss = residual_sum_of_squares(data, beta)
    rate = 0.5 * rss + noise.d
    if scaled:
        rate = rate + 0.5 * jnp.sum(beta**2 / hierarchy_var)
    noise_var = rate / variates.noise_gamma
    aux = prior.gibbs_update_from(variates.aux, beta / jnp.sqrt(noise_var) if scaled else beta, state.aux)
    log_lik = -0.5 * data.dof * jnp.log(2 * jnp.pi * noise_var) - 0.5 * rss / noise_var
    return guarded(State(beta, noise_var, aux), state, Info(log_lik, jnp.log(jnp.min(v))))


_variate_factors = jax.jit(variate_factors, static_argnums=(2,))


def setup_variate_data(X, y, dof, use_rue):
    """:func:`variate_data` set up once for a run, so that every call of its sweeps (:func:`run_from_variates`)
    reads it: ``X`` and ``y`` moved to the device once, their factors (the QR and, on Rue's path, the bordered
    Gram matrix) by a program of their own that returns only what it computes (a program that returned its
    argument ``X`` would return a copy of it, one more ``n × p`` array held through the run)."""
    X, y, dof = jax.device_put((X, y, np.float64(dof)))  # a transfer (jnp.asarray compiles a program per shape)
    return VariateData(X, y, *_variate_factors(X, y, use_rue), dof)


@partial(jax.jit, static_argnames=("scaled",))
def run_from_variates(state, variates, data, prior, noise=FLAT, *, scaled=False):
    """The jit boundary of :func:`step_from`: the sweeps of ``variates`` (sweep-major) for every chain of
    ``state`` (``vmap`` inside the ``scan``) on data set up once (:func:`setup_variate_data`); returns
    ``(last state, every sweep's state and Info (sweep, chain, …))``. A run cut into several calls (a
    progress bar, the variates' budget) takes the same sweeps as one call, and no call reads ``X``
    again: each sweep is ``O(p³)`` on Rue's path, independent of ``n``."""
    chains_step = jax.vmap(lambda s, d, m, u: step_from(s, d, m, variates=u, scaled=scaled),
                           in_axes=(0, None, None, 0))
    return trace(chains_step, state, data, GibbsModel(prior, noise), variates)


def can_take_variates(prior, noise_var=None, beta_draw="auto"):
    """Whether :func:`~.hierarchy_gibbs.run` can sweep ``prior`` from pre-drawn variates: the hierarchy declares them
    (``gibbs_variates``, ``gibbs_update_from``) and has no ``gibbs_global_step`` (a slice move, whose
    number of draws is not known ahead), σ² is drawn, not held, and β by a direct draw (not CG)."""
    return (hasattr(prior, "gibbs_variates") and hasattr(prior, "gibbs_update_from")
            and not hasattr(prior, "gibbs_global_step") and noise_var is None
            and gibbs_beta.choose_method(1, 1, beta_draw) in ("auto", "rue", "bhattacharya"))


#: Up to this many features :func:`dispersed_start` solves its ridge fit in the ``p × p`` (primal)
#: form; above and for ``p > n``, in the ``n × n`` (dual) form, the same fit without a ``p × p`` array.
PRIMAL_START_MAX = 1024


def ridge_start(X, y):
    """The ridge fit ``(XᵀX + εI)⁻¹Xᵀy = Xᵀ(XXᵀ + εI)⁻¹y``, ``ε = 10⁻³ tr(XᵀX)/p + 10⁻¹²``: by the
    first (primal) form when ``p ≤ n`` or ``p ≤`` :data:`PRIMAL_START_MAX`, else by the second
    (dual, ``n × n``: no ``p × p`` array at large ``p``). At small ``p`` the primal form is kept
    whatever ``n``, so the starts, and with them the draws at a seed, do not depend on the form."""
    n, p = X.shape
    if p <= max(n, PRIMAL_START_MAX):
        G = X.T @ X
        return np.linalg.solve(G + np.eye(p) * (1e-3 * np.trace(G) / p + 1e-12), X.T @ y)
    eps = 1e-3 * np.sum(X * X) / p + 1e-12
    return X.T @ np.linalg.solve(X @ X.T + eps * np.eye(n), y)


def dispersed_start(X, y, prior, num_chains, rng):
    """Over-dispersed starts around a ridge fit (:func:`ridge_start`), different per chain (``rng`` a
    NumPy Generator): ``β = β_ridge ∘ (1 + 0.1 z)``, σ² the ridge residual's variance (floored), the
    hierarchy's own start for its auxiliary variables. Chains that start apart make R-hat meaningful."""
    p = X.shape[1]
    ridge = ridge_start(X, y)
    s2 = max(np.var(y - X @ ridge), 1e-6 * np.var(y) + 1e-12)
    beta = ridge[None, :] * (1.0 + 0.1 * rng.standard_normal((num_chains, p)))
    aux = jax.tree_util.tree_map(lambda a: np.broadcast_to(np.asarray(a), (num_chains, *np.shape(a))).copy(),
                                 prior.gibbs_init(p))
    return State(beta, np.full(num_chains, s2), aux)


def variate_chunk(total, per_sweep, show, budget):
    """Sweeps per call: all of them, or about a twentieth with a progress bar, and at most as many as
    keep one call's variates within ``budget`` numbers."""
    return max(1, min(bar_chunk(total, show), budget // max(per_sweep, 1)))


def variate_setup(X, y, prior, noise_prior, scaled, fit_intercept, beta_draw):
    """The centred, padded data of a variate run and its plan's sizes: ``(Xp, yp, dof, n, rows,
    use_rue, noise_shape)``. Zero rows pad ``n`` up to a shared size (:func:`~._shapes.bucket`), so a
    new ``n`` mostly reuses the compiled sweeps."""
    from sparsebayes.inference.engines._shapes import bucket, pad_to

    n, p = X.shape[-2:]
    dof = n - (1 if fit_intercept else 0)
    use_rue = gibbs_beta.choose_method(n, p, beta_draw) == "rue"
    rows = bucket(n, per_octave=4)
    Xp = np.zeros((*X.shape[:-2], rows, p), X.dtype)  # centred into the padded array: one copy of X, not two
    if fit_intercept:
        np.subtract(X, X.mean(axis=-2, keepdims=True), out=Xp[..., :n, :])
        y = y - y.mean(axis=-1, keepdims=True)
    else:
        Xp[..., :n, :] = X
    yp = pad_to(y, (*y.shape[:-1], rows))
    noise_shape = 0.5 * dof + float(noise_prior.c) + (0.5 * p if scaled else 0.0)
    return Xp, yp, dof, n, rows, use_rue, noise_shape


def run_with_variates(X, y, prior, *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, fit_intercept=True,
                      noise_prior=FLAT, scaled=False, progress_bar=None, beta_draw="auto", variates="auto"):
    """:func:`~.hierarchy_gibbs.run` from pre-drawn variates (:func:`step_from`; ``variates`` ``"auto"``, ``"numpy"`` or
    ``"device"``: where they are drawn, :func:`~.gibbs_variates.choose_variates`), for a hierarchy that
    declares them (:func:`can_take_variates`; a ``ValueError`` otherwise). Returns ``(states, infos,
    attrs)``: the draws and the sweeps' :class:`Info`, each ``(chain, draw, …)``, and ``attrs`` with
    ``sampling_seconds`` (warm-up and sampling, the compile excluded), ``refused_sweeps`` (after the
    warm-up: :func:`~.hierarchy_gibbs.guarded`) and ``variates`` (the source used).

    Chains start over-dispersed (:func:`dispersed_start`). The variates come from one stream per field
    (:func:`~.gibbs_variates.variate_streams`), drawn sweep-major, so the draws are the same however
    the sweeps are cut into calls (a progress bar cuts them into about 20); the arrays of a call are
    bounded (16 MiB of host variates), which cuts long runs of wide problems too."""
    import time

    from sparsebayes.inference.engines import gibbs_variates as gv
    from sparsebayes.inference.engines.progress import chunk_lengths

    require(prior, "gibbs")
    if not can_take_variates(prior, None, beta_draw):
        raise ValueError(f"{type(prior).__name__} declares no standard variates (gibbs_variates and "
                         "gibbs_update_from), or draws a global scale by a slice move, or beta_draw is CG: run it with variates=None "
                         "(random keys inside the sweeps)")
    gv.choose_variates(variates)
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    for name, value in zip(("c", "d"), noise_prior):
        check_number(name, value, -1.0 if name == "c" else 0.0)
    X, y = check_data(X, y, min_samples=2)  # n = 2 with an intercept: σ²'s shape is checked (variate_plan)
    X = np.ascontiguousarray(X)
    Xp, yp, dof, n, rows, use_rue, noise_shape = variate_setup(X, y, prior, noise_prior, scaled, fit_intercept,
                                                                beta_draw)
    p = X.shape[1]
    plan = gv.variate_plan(prior, n, 0 if use_rue else rows, p, noise_shape)
    streams = gv.variate_streams(seed, len(plan.aux))
    state = dispersed_start(Xp[:n], yp[:n], prior, num_chains, streams[0])
    noise = NoisePrior(*(np.float64(v) for v in noise_prior))
    total = num_warmup + num_samples
    show = show_progress(progress_bar)
    source = gv.VariateSource(variates, seed, streams, num_chains, plan)
    lengths = chunk_lengths(total, variate_chunk(total, source.per_sweep(), show, source.budget))
    one = gv.draw_variates(gv.variate_streams(0, len(plan.aux)), 1, num_chains, plan)  # for the shapes

    def shapes(m):
        return jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct((m, *a.shape[1:]), a.dtype), one)

    data = setup_variate_data(Xp, yp, np.float64(dof), use_rue)  # once: no call of the sweeps reads X again
    del Xp, yp  # the device holds the run's copy
    compiled = {m: run_from_variates.lower(state, shapes(m), data, prior, noise, scaled=bool(scaled)).compile()
                for m in set(lengths)}  # outside the timing
    source.compile(lengths)
    chunks = []
    t0 = time.perf_counter()
    with progress(total, "gibbs", show) as bar:
        for m in lengths:
            state, states, infos = compiled[m](state, source.next(m), data, prior, noise)
            chunks.append((states, infos))
            if show:
                jax.block_until_ready(state)  # the bar shows sweeps done, not sweeps queued
            bar.update(m)
    jax.block_until_ready(chunks)
    seconds = time.perf_counter() - t0
    states, infos = jax.tree_util.tree_map(
        lambda *a: np.swapaxes(np.concatenate([np.asarray(x) for x in a])[num_warmup:], 0, 1), *chunks)
    attrs = {"sampling_seconds": seconds, "refused_sweeps": int(np.count_nonzero(infos.refused)),
             "variates": source.source}
    return states, infos, attrs
