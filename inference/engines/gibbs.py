"""Park & Casella (2008) Gibbs sampler for the Bayesian Lasso, in JAX, chains by ``vmap``.

Model (centred ``y``, centred ``X``, intercept integrated out under a flat prior):
``β | σ², τ² ~ N(0, σ² D_τ)``, ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)``,
``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (``c = d = 0``: Park & Casella's ``1/σ²``).
Full conditionals (Park & Casella 2008, Sec. 2):

* ``β | · ~ N(A⁻¹Xᵀy, σ² A⁻¹)``, ``A = XᵀX + D_τ⁻¹``: by a Cholesky factor of ``A`` when
  ``n ≥ p``, and by Bhattacharya, Chakraborty & Mallick (2016) when ``p > n`` (an ``n × n``
  solve instead of ``p × p``; nothing ``p × p`` is formed on that path, set-up and start included);
* ``σ² | · ~ InvGamma((n − 1)/2 + p/2 + c, ‖y − Xβ‖²/2 + βᵀD_τ⁻¹β/2 + d)``
  (``n − 1``: the intercept is integrated out, as in Park & Casella);
* ``1/τ_j² | · ~ InverseGaussian(√(λ²σ²/β_j²), λ²)``, drawn by Michael, Schucany & Haas (1976);
* ``λ² | · ~ Gamma(p + r, Σ τ_j²/2 + δ)``.

The engine contract (DESIGN, inference/): :class:`State` and :class:`Info`, :func:`init`, the pure
:func:`step` (one guarded sweep from its :class:`SweepVariates`) and :func:`run`, the jit boundary
(``lax.scan`` over sweeps, chains by ``vmap``; :func:`run_on_data` sets the data up in the same
program); :func:`sample_gibbs` drives it in compiled calls and returns NumPy draws,
:func:`run_gibbs` the same as ``InferenceData``, :func:`posterior_mean_batch` drives the same step over a batch of data
sets.
"""
from __future__ import annotations

import time
import warnings
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_solve

from sparsebayes.inference.engines.progress import bar_chunk, chunk_lengths, progress, show_progress
from sparsebayes.inference.engines.gibbs_variates import SweepVariates, VariateSource, draw_variates, variate_streams  # noqa: F401  (SweepVariates: docs)
from sparsebayes.inference.engines.gibbs_variates import inverse_gaussian_from, michael_root  # noqa: F401  (public here too)
from sparsebayes.inference.engines._shapes import bucket, pad_to
from sparsebayes.inference._validation import (as_numeric_array, check_count, check_data, check_finite, check_number, check_sampler_counts,
                          feature_labels)


class State(NamedTuple):
    """One chain's current draw: ``β``, ``σ²``, the local ``τ_j²`` and ``λ²`` (Park & Casella 2008, Sec. 2)."""

    beta: jax.Array
    noise_var: jax.Array
    tau2: jax.Array
    lam2: jax.Array


class Info(NamedTuple):
    """What a :func:`step` reports besides the draw: whether the sweep left float64 and was
    refused (the chain then stays where it was)."""

    refused: jax.Array


class Hyper(NamedTuple):
    """The hyperparameters: ``λ² ~ Gamma(lam2_shape, lam2_rate)`` and ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``.

    The defaults ``(1, 1.78)`` are Park & Casella's for the diabetes data; ``c = d = 0`` is their ``1/σ²``.
    """

    lam2_shape: float = 1.0
    lam2_rate: float = 1.78
    c: float = 0.0
    d: float = 0.0


def checked_hyper(lam2_shape, lam2_rate, c, d):
    """:class:`Hyper` of float64 numbers, each checked finite and ``≥ 0``, and ``lam2_rate > 0``
    (``ValueError`` naming it).

    ``0`` is the flat limit of ``r``, ``c`` and ``d`` and keeps every full conditional proper
    (``λ² | ·`` has shape ``p + r ≥ 1``, ``σ² | ·`` shape ``(n − 1)/2 + p/2 + c > 0``); a negative
    rate made ``λ²`` draws negative, and a negative ``d`` a negative ``σ²``. The rate ``δ`` must be
    positive: with ``p(λ²) ∝ (λ²)^{r−1}`` the conditionals are still proper, but the joint
    posterior is not (integrating λ² out leaves ``∝ (Σ|β_j|/σ)^{−(p+2r)}`` near ``β = 0``, whose
    integral diverges there in ``p`` dimensions for ``r ≥ 0``), so a sampler would run on a posterior
    that does not exist."""
    values = {"lam2_shape": lam2_shape, "lam2_rate": lam2_rate, "c": c, "d": d}
    for name, value in values.items():
        check_number(name, value, 0.0)
    if float(lam2_rate) == 0.0:
        raise ValueError("lam2_rate must be > 0: with a zero rate the hyperprior on λ² is improper and so is the "
                         "posterior (it piles up at β = 0); Park & Casella's default is lam2_shape=1, lam2_rate=1.78 "
                         "(a type-II ScaledLaplacePrior's flat b=0 is for evidence maximisation, not for sampling)")
    return Hyper(*(float(v) for v in values.values()))


class SweepData(NamedTuple):
    """What every sweep reads of the data: ``X``, ``y``, the bordered Gram matrix
    (:func:`bordered_gram`; ``None`` on the Bhattacharya path, which never reads it and where it
    would be the one ``p × p`` array), and ``X = QR`` (reduced: ``R`` is ``min(n, p) × p``) with
    ``Qᵀy`` and ``‖y − QQᵀy‖²``, so that ``‖y − Xβ‖² = ‖Qᵀy − Rβ‖² + ‖y − QQᵀy‖²`` costs
    ``min(n, p)·p`` per sweep, not ``n·p``, as a sum of two non-negative terms."""
    X: jax.Array
    y: jax.Array
    bordered: jax.Array | None
    R: jax.Array
    Qty: jax.Array
    rss_perp: jax.Array


def bordered_gram(X, y):
    """``[[XᵀX, Xᵀy], [yᵀX, 1 + 2‖y‖²]]``, ``(p + 1) × (p + 1)``: the matrix whose Cholesky factor
    :func:`beta_cholesky` takes once ``diag(1/τ², 0)`` is added.

    The corner is any number that keeps the matrix positive definite: its Schur complement
    ``1 + 2‖y‖² − yᵀX A⁻¹Xᵀy`` is at least ``1 + ‖y‖²``, as ``X A⁻¹Xᵀ ⪯ I``. It changes nothing
    else of the factor."""
    Xty = X.T @ y
    return jnp.block([[X.T @ X, Xty[:, None]], [Xty[None, :], (1.0 + 2.0 * (y @ y))[None, None]]])


def sweep_data(X, y, use_cholesky=True):
    """The :class:`SweepData` of ``(X, y)``: computed once per run, read by every sweep; the
    bordered Gram matrix only for the Cholesky draw (``use_cholesky``, ``n ≥ p``)."""
    Q, R = jnp.linalg.qr(X)
    Qty = Q.T @ y
    return SweepData(X, y, bordered_gram(X, y) if use_cholesky else None, R, Qty, jnp.sum((y - Q @ Qty) ** 2))


#: :func:`sweep_data` over a batch of data sets, compiled (computed once per run, not per call of sweeps)
@partial(jax.jit, static_argnums=(2,))
def _batch_sweep_data(Xs, ys, use_cholesky):
    return jax.vmap(partial(sweep_data, use_cholesky=use_cholesky))(Xs, ys)


def residual_sum_of_squares(data, beta):
    """``‖y − Xβ‖²`` through the QR factor (:class:`SweepData`)."""
    return data.rss_perp + jnp.sum((data.Qty - data.R @ beta) ** 2)


#: Up to this many coefficients, :func:`back_substitution` is written out, one scalar step per
#: coefficient, and XLA fuses it; above, LAPACK's triangular solve (:func:`beta_cholesky`).
UNROLL_MAX = 16


def back_substitution(L, b):
    """``x`` with ``Lᵀx = b`` for lower-triangular ``L``: written out for ``p ≤ UNROLL_MAX``, else
    ``lax.linalg.triangular_solve``. At small ``p`` the fused scalar steps are faster than a
    LAPACK call; the lead shrinks as ``p`` grows and is gone a little above ``UNROLL_MAX``, while
    the written-out form takes longer to compile."""
    p = L.shape[-1]
    if p > UNROLL_MAX:
        return jax.lax.linalg.triangular_solve(L, b[:, None], left_side=True, lower=True, transpose_a=True)[:, 0]
    x = [None] * p
    for i in reversed(range(p)):
        rest = b[i] - L[i + 1:, i] @ jnp.stack(x[i + 1:]) if i < p - 1 else b[i]
        x[i] = rest / L[i, i]
    return jnp.stack(x)


def beta_cholesky(z, bordered, inv_tau2, noise_var):
    """``β ~ N(A⁻¹Xᵀy, σ²A⁻¹)``, ``A = XᵀX + diag(1/τ²)``, through one Cholesky factor (n ≥ p);
    ``z ~ N(0, I_p)``, ``bordered`` the matrix of :func:`bordered_gram`.

    ``A⁻¹Xᵀy + σL⁻ᵀz = L⁻ᵀ(L⁻¹Xᵀy + σz)`` with ``A = LLᵀ``. The factor of the bordered matrix
    ``[[A, Xᵀy], [yᵀX, κ]]`` is ``[[L, 0], [(L⁻¹Xᵀy)ᵀ, ·]]``, so its last row is ``L⁻¹Xᵀy``, and
    the draw takes one triangular solve instead of two, which is the faster. The factor comes
    from ``lax.linalg.cholesky`` without symmetrizing: ``jnp.linalg.cholesky`` symmetrizes its
    input, work wasted on this matrix, which is symmetric as built. The solve is
    :func:`back_substitution`, written out at small ``p``.
    """
    p = inv_tau2.shape[-1]
    factor = jax.lax.linalg.cholesky(bordered + jnp.diag(jnp.append(inv_tau2, 0.0)), symmetrize_input=False)
    return back_substitution(factor[:p, :p], factor[p, :p] + jnp.sqrt(noise_var) * z)


def beta_bhattacharya(u_normal, delta, X, y, tau2, noise_var):
    """Bhattacharya, Chakraborty & Mallick (2016) draw of the same ``β`` for ``p > n``, from
    ``u_normal ~ N(0, I_p)`` and ``delta ~ N(0, I_n)``.

    With ``Φ = X/σ``, ``α = y/σ`` and ``D = σ²D_τ``: ``u ~ N(0, D)``, ``δ ~ N(0, I_n)``,
    ``v = Φu + δ``, solve ``(ΦDΦᵀ + I) w = α − v``, return ``u + DΦᵀw``. The algebra of
    :func:`~.gibbs_beta.bhattacharya_draw`, which does not form ``Φ`` and so rounds differently:
    this order keeps the draws at a seed, which the BLS reproductions rest on, as they are.
    """
    n = X.shape[0]
    sigma = jnp.sqrt(noise_var)
    D = noise_var * tau2
    Phi = X / sigma
    u = jnp.sqrt(D) * u_normal
    v = Phi @ u + delta
    M = (Phi * D) @ Phi.T + jnp.eye(n)
    L = jnp.linalg.cholesky(M)
    w = cho_solve((L, True), y / sigma - v)
    return u + D * (w @ Phi)  # = Φᵀw; w @ Φ avoids XLA:CPU copying Φᵀ


def draw_noise_var(gamma_variate, rss, beta, tau2, hyper):
    """``σ² | · ~ InvGamma((n − 1)/2 + p/2 + c, ‖y − Xβ‖²/2 + βᵀD_τ⁻¹β/2 + d)``.

    ``gamma_variate`` is a standard ``Gamma((n − 1)/2 + p/2 + c)`` draw, ``rss`` = ``‖y − Xβ‖²``.
    """
    rate = 0.5 * rss + 0.5 * jnp.sum(beta**2 / tau2) + hyper.d
    return rate / gamma_variate


def draw_tau2(chi2, uniform, beta, noise_var, lam2):
    """``1/τ_j² | · ~ IG(√(λ²σ²/β_j²), λ²)`` (Park & Casella 2008, Sec. 2); returns τ²."""
    b2 = jnp.maximum(beta**2, 1e-300)
    return 1.0 / inverse_gaussian_from(jnp.sqrt(lam2 * noise_var / b2), lam2, chi2, uniform)


def draw_lam2(gamma_variate, tau2, hyper):
    """``λ² | · ~ Gamma(p + r, Σ τ_j²/2 + δ)``; ``gamma_variate`` a standard ``Gamma(p + r)`` draw."""
    return gamma_variate / (0.5 * jnp.sum(tau2) + hyper.lam2_rate)


def sweep(state, variates, data, hyper, use_cholesky):
    """One sweep through the four full conditionals (module docstring), from its
    :class:`SweepVariates`; returns the new :class:`State` (:func:`step` guards it).

    ``data`` (:func:`sweep_data`) may carry padding, zero rows of ``X`` with ``y = 0``
    (:func:`run_gibbs`; the number of real rows is in the Gamma variate's shape). They change no
    draw: they add nothing to ``XᵀX``, ``Xᵀy`` or the residual, and their Bhattacharya rows
    decouple (``M`` is the identity there).
    """
    if use_cholesky:
        beta = beta_cholesky(variates.beta_normal, data.bordered, 1.0 / state.tau2, state.noise_var)
    else:
        beta = beta_bhattacharya(variates.beta_normal, variates.row_normal, data.X, data.y, state.tau2,
                                 state.noise_var)
    noise_var = draw_noise_var(variates.noise_gamma, residual_sum_of_squares(data, beta), beta, state.tau2, hyper)
    tau2 = draw_tau2(variates.ig_chi2, variates.ig_uniform, beta, noise_var, state.lam2)
    lam2 = draw_lam2(variates.lam2_gamma, tau2, hyper)
    return State(beta, noise_var, tau2, lam2)


def step(state, variates, data, hyper, use_cholesky):
    """The engine's step, pure: :func:`sweep`, but a sweep that leaves float64 (a NaN or inf
    anywhere) is refused; returns ``(state, Info)``.

    With ``p > n`` and a vague prior on λ² a chain can drift towards σ² → 0, λ² → 0 and
    τ² → ∞, where the β draw's Cholesky factor breaks down. The chain then stays where it
    was; :attr:`Info.refused` says so, so that callers can warn (the draws after a refusal no
    longer follow the posterior).
    """
    new = sweep(state, variates, data, hyper, use_cholesky)
    ok = jnp.all(jnp.array([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree.leaves(new)]))
    return jax.tree.map(lambda a, b: jnp.where(ok, a, b), new, state), Info(~ok)


@partial(jax.jit, static_argnames=("use_cholesky",))
def run(state, variates, data, hyper, use_cholesky):
    """The jit boundary: the sweeps of ``variates`` (sweep-major) for every chain (``vmap`` inside
    the ``scan``) from ``state`` (chain-major, :func:`init`); returns ``(last state, every sweep's
    state (sweep, chain, …), every sweep's Info)``. Compiled once per shape: the data and the
    hyperparameters are arguments, not constants of a closure, so a new fit of the same shape
    compiles nothing."""
    return _sweeps(state, variates, data, hyper, use_cholesky)


@partial(jax.jit, static_argnames=("use_cholesky",))
def run_on_data(state, variates, X, y, hyper, use_cholesky):
    """:func:`run` on ``(X, y)`` itself: :func:`sweep_data` (the QR and the bordered Gram matrix) and
    the sweeps in one program, so that a first fit compiles one program, not two. Each call sets the
    data up again, ``O(np²)``, against the ``O(p³)`` of each of its sweeps (a run is one call unless a
    progress bar or the variates' budget cuts it); the draws are :func:`run`'s."""
    return _sweeps(state, variates, sweep_data(X, y, use_cholesky), hyper, use_cholesky)


def _sweeps(state, variates, data, hyper, use_cholesky):
    """The body of :func:`run` and :func:`run_on_data`."""
    chains_step = jax.vmap(lambda s, v: step(s, v, data, hyper, use_cholesky))

    def body(state, v):
        new, info = chains_step(state, v)
        return new, (new, info)

    last, (draws, infos) = jax.lax.scan(body, state, variates)
    return last, draws, infos


def _chunk_size(total, batch, p, rows, use_cholesky, progress_bar, budget=2**21):
    """Sweeps per call: all of them, or about a twentieth with a progress bar
    (:func:`~sparsebayes.inference.engines.progress.bar_chunk`), and at most as many as keep one call's
    variates within ``budget`` numbers (16 MiB by default; :func:`run_gibbs` allows 128 MiB to
    variates drawn on the device, which never cross to it from the host)."""
    per_sweep = batch * (3 * p + 2 + (0 if use_cholesky else rows))
    return max(1, min(bar_chunk(total, progress_bar), budget // per_sweep))


#: Up to this many features :func:`init` solves its ridge fit in the ``p × p`` (primal) form; above
#: and for ``p > n``, in the ``n × n`` (dual) form, the same fit without a ``p × p`` array.
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


def init(X, y, num_chains, rng):
    """Over-dispersed starts around a ridge fit (:func:`ridge_start`; different per chain; NumPy,
    ``rng`` a Generator)."""
    p = X.shape[1]
    ridge = ridge_start(X, y)
    s2 = max(np.var(y - X @ ridge), 1e-6 * np.var(y) + 1e-12)
    beta = ridge[None, :] * (1.0 + 0.1 * rng.standard_normal((num_chains, p)))
    return State(beta, np.full(num_chains, s2), np.ones((num_chains, p)), np.ones(num_chains))


class GibbsDraws(NamedTuple):
    """What :func:`sample_gibbs` returns: ``posterior`` (name -> (chain, draw, …) array of every
    :class:`State` field), the checked float64 ``X`` and ``y`` it sampled on, ``features`` (a
    DataFrame's column labels, else ``None``) and ``attrs`` (``inference``, ``sampling_seconds``,
    ``refused_sweeps``, ``variates``)."""
    posterior: dict
    X: np.ndarray
    y: np.ndarray
    features: object
    attrs: dict


def run_gibbs(X, y, *, lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000, num_samples=2000,
              num_chains=4, seed=0, coords=None, progress_bar=None, log_likelihood=True, variates="auto"):
    """Park–Casella Gibbs on centred ``X``, ``y``; returns ``InferenceData`` (chain, draw).

    Posterior variables ``beta`` (dim ``feature``), ``noise_var``, ``tau2``, ``lam2``; the
    wall time of warm-up + sampling (compile excluded) is in
    ``posterior.attrs["sampling_seconds"]``. With ``log_likelihood`` (default), also the
    ``observed_data`` ``y`` and the pointwise ``log_likelihood`` ``log N(y_i | x_iᵀβ, σ²)`` of
    every draw, the groups (and names) that ``run_nuts`` gives for the same NumPyro model
    (:func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`), so ``az.loo`` and
    ``az.compare`` take Gibbs and NUTS fits alike. The sampling is :func:`sample_gibbs`'s (its
    docstring: the progress bar, ``variates``, the checks of the input) and the object
    :func:`gibbs_inference_data`'s.
    """
    draws = sample_gibbs(X, y, lam2_shape=lam2_shape, lam2_rate=lam2_rate, c=c, d=d, num_warmup=num_warmup,
                         num_samples=num_samples, num_chains=num_chains, seed=seed, progress_bar=progress_bar,
                         variates=variates)
    return gibbs_inference_data(draws, coords=coords, log_likelihood=log_likelihood)


def sample_gibbs(X, y, *, lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, num_warmup=1000, num_samples=2000,
                 num_chains=4, seed=0, progress_bar=None, variates="auto"):
    """Park–Casella Gibbs on centred ``X``, ``y``: the draws of :func:`run_gibbs` as NumPy arrays
    (:class:`GibbsDraws`), without ArviZ.

    With a progress bar (``progress_bar=True``; ``None``, the default: when standard error is a
    terminal) the sweeps run in about 20 compiled calls of :func:`run_on_data` with a tqdm bar
    between them (long runs of wide problems are cut into calls anyway, to bound the variates held
    at once); the draws are the same however the sweeps are cut (:func:`variate_streams`). A run
    of one call compiles one program (:func:`run_on_data`).

    ``variates`` says where the random numbers are drawn (:mod:`.gibbs_variates`): ``"numpy"``
    on the host, ``"device"`` by JAX where the sweeps run, ``"auto"`` (default) the device on an
    accelerator and NumPy on a CPU, the faster of the two on each. The two give different
    draws of the same posterior for a seed.

    ``X`` (n, p) and ``y`` (n,) may be NumPy arrays, pandas objects or lists; they are checked
    and converted to float64 first (:func:`~sparsebayes.inference._validation.check_data`), and
    the hyperparameters must be finite and ``≥ 0``, ``lam2_rate > 0`` (:func:`checked_hyper`: a zero
    rate makes the posterior improper): bad input is a ``ValueError`` naming the problem.
    """
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    hyper = checked_hyper(lam2_shape, lam2_rate, c, d)
    features = feature_labels(X)
    X, y = check_data(X, y, min_samples=2)  # pandas and lists too; n ≥ 2: the intercept takes one degree of freedom
    n, p = X.shape
    streams = variate_streams(seed)
    state = init(X, y, num_chains, streams[0])
    # zero rows up to a shared size, so a new n mostly reuses the compiled sampler (:func:`sweep`)
    rows = bucket(n, per_octave=4)
    use_cholesky = n >= p
    Xp, yp = pad_to(X, (rows, p)), pad_to(y, (rows,))
    total = num_warmup + num_samples
    progress_bar = show_progress(progress_bar)
    source = VariateSource(variates, seed, streams, num_chains, n, rows, p, hyper, use_cholesky)
    lengths = chunk_lengths(total, _chunk_size(total, num_chains, p, rows, use_cholesky, progress_bar, source.budget))
    one_sweep = draw_variates(variate_streams(0), 1, num_chains, n, rows, p, hyper, use_cholesky)  # for the shapes
    compiled = {m: run_on_data.lower(state, jax.tree.map(lambda a: jax.ShapeDtypeStruct((m, *a.shape[1:]), a.dtype),
                                                         one_sweep), Xp, yp, hyper, use_cholesky).compile()
                for m in set(lengths)}  # outside the timing (cached after the first fit of a shape)
    source.compile(lengths)
    chunks, refusals = [], []
    t0 = time.perf_counter()
    with progress(total, "gibbs", progress_bar) as bar:
        for m in lengths:
            state, draws, infos = compiled[m](state, source.next(m), Xp, yp, hyper)
            chunks.append(draws)
            refusals.append(infos.refused)
            if progress_bar:
                jax.block_until_ready(state)  # the bar shows sweeps done, not sweeps queued
            bar.update(m)
    jax.block_until_ready(chunks)
    seconds = time.perf_counter() - t0
    refused = int(sum(np.count_nonzero(np.asarray(r)) for r in refusals))  # on the host: no program for a sum
    _warn_refused(refused, num_chains * total)
    posterior = {k: np.concatenate([np.asarray(getattr(c, k)) for c in chunks], axis=0)[num_warmup:].swapaxes(0, 1)
                 for k in State._fields}
    attrs = {"inference": "gibbs", "sampling_seconds": seconds, "refused_sweeps": refused, "variates": source.source}
    return GibbsDraws(posterior, X, y, features, attrs)


def gibbs_inference_data(draws, *, coords=None, log_likelihood=True):
    """The ``InferenceData`` of :func:`run_gibbs` from :func:`sample_gibbs`'s :class:`GibbsDraws`:
    the posterior (``beta`` and ``tau2`` on dim ``basis``, labelled by the DataFrame's columns
    unless ``coords`` names them), its ``attrs``, and with ``log_likelihood`` the ``observed_data``
    ``y`` and the pointwise ``log_likelihood`` (:func:`gaussian_log_likelihood`)."""
    from sparsebayes.inference.posterior.arviz_compat import from_dict
    posterior, X, y = draws.posterior, draws.X, draws.y
    groups = {}
    if log_likelihood:
        groups = {"observed_data": {"y": y},
                  "log_likelihood": {"y": gaussian_log_likelihood(posterior["beta"], posterior["noise_var"], X, y)}}
    p = X.shape[1]
    idata = from_dict(
        {"posterior": posterior, **groups},
        coords={"basis": np.arange(p) if draws.features is None else draws.features, **(coords or {})},
        dims={"beta": ["basis"], "tau2": ["basis"], "y": ["obs"]},
    )
    for key, value in draws.attrs.items():
        idata.posterior.attrs[key] = value
    return idata


def gaussian_log_likelihood(beta, noise_var, X, y):
    """Pointwise ``log N(y_i | x_iᵀβ, σ²)`` for draws ``beta`` (…, p) and ``noise_var`` (…): shape (…, n).
    (Written out: SciPy's ``norm.logpdf`` on a draws × data array can cost more than the
    sampling itself.)"""
    s2 = np.asarray(noise_var)[..., None]
    resid = y - np.asarray(beta) @ X.T
    return -0.5 * (np.log(2.0 * np.pi * s2) + resid * resid / s2)


def _warn_refused(n_refused, n_sweeps):
    if n_refused:
        warnings.warn(
            f"Gibbs: {n_refused} of {n_sweeps} sweeps left float64 (the chain drifted towards σ² → 0, "
            "τ² → ∞, typical of p > n with a vague prior on λ²) and were refused; the draws after "
            "them do not follow the posterior",
            RuntimeWarning,
            stacklevel=3,
        )


@partial(jax.jit, static_argnames=("use_cholesky",))
def _sum_batch_draws(variates, state, sums, data, first_kept, hyper, use_cholesky):
    """The sweeps of ``variates`` (sweep-major) for every data set of a batch (``vmap`` inside the
    ``scan``), adding up the β draws of sweeps ``first_kept`` on: ``(last state, sums, refused
    sweeps per data set)``."""
    sets_step = jax.vmap(lambda s, v, d: step(s, v, d, hyper, use_cholesky))

    def body(carry, inp):
        state, sums = carry
        v, i = inp
        new, info = sets_step(state, v, data)
        return (new, sums + jnp.where(i >= first_kept, new.beta, 0.0)), info.refused

    sweeps = variates.noise_gamma.shape[0]
    (state, sums), bad = jax.lax.scan(body, (state, sums), (variates, jnp.arange(sweeps)))
    return state, sums, jnp.sum(bad, axis=0)


def posterior_mean_batch(Xs, ys, hyper, num_warmup, num_samples, *, seed=0, variates="auto"):
    """Posterior mean of β for a batch of data sets ``Xs`` (B, n, p), ``ys`` (B, n), one chain
    each, ``vmap`` over data sets; ``variates`` as for :func:`run_gibbs` (where the random numbers
    are drawn: on a CPU ``"auto"`` is NumPy's).

    Only running sums are kept, so thousands of draws over a 100-data-set table fit in memory:
    the sweeps run in calls of at most 16 MiB of host variates (:func:`_chunk_size`).
    Returns the means (B, p) and, per data set, the number of refused sweeps
    (:func:`step`).
    """
    Xs, ys = _checked_batch(Xs, ys, num_warmup, num_samples)
    hyper = checked_hyper(*hyper)
    B, n, p = Xs.shape
    use_cholesky = n >= p
    streams = variate_streams(seed)
    starts = [init(X, y, 1, streams[0]) for X, y in zip(Xs, ys)]
    state = jax.tree.map(lambda *a: np.concatenate(a), *starts)
    data = _batch_sweep_data(Xs, ys, use_cholesky)
    sums, refused, done = np.zeros((B, p)), np.zeros(B, np.int64), 0
    total = num_warmup + num_samples
    source = VariateSource(variates, seed, streams, B, n, n, p, hyper, use_cholesky)
    for m in chunk_lengths(total, _chunk_size(total, B, p, n, use_cholesky, False, source.budget)):
        state, sums, bad = _sum_batch_draws(source.next(m), state, sums, data, num_warmup - done, hyper, use_cholesky)
        refused += np.asarray(bad)
        done += m
    return np.asarray(sums) / num_samples, refused


def _checked_batch(Xs, ys, num_warmup, num_samples):
    """Float64 ``Xs`` (B, n, p) and ``ys`` (B, n) for :func:`posterior_mean_batch`, finite and of
    matching shapes, with counts a sampler can run; ``ValueError`` naming the problem."""
    check_sampler_counts(num_warmup, num_samples, 1)
    Xs, ys = as_numeric_array(Xs, "Xs"), as_numeric_array(ys, "ys")
    if Xs.ndim != 3 or min(Xs.shape) < 1 or Xs.shape[1] < 2:
        raise ValueError(f"Xs must be a 3-D array (data sets × samples × features) with at least 2 samples, "
                         f"got shape {Xs.shape}")
    if ys.shape != Xs.shape[:2]:
        raise ValueError(f"ys must have shape {Xs.shape[:2]} (data sets × samples) to match Xs, got {ys.shape}")
    check_finite(Xs, "Xs")
    check_finite(ys, "ys")
    return Xs, ys
