"""Figueiredo's EM for sparse regression and probit classification, prior- and likelihood-agnostic.

The model (000 Sec. 3; 002 Secs. 2–3): ``z = Hβ + w`` with ``w ~ N(0, σ² I)`` (``z = y`` for
regression, a latent truncated-Gaussian for probit), ``β_i | τ_i ~ N(0, τ_i)`` and a
hyperprior on τ_i given by a prior object of :mod:`sparsebayes.models.priors`.

One EM iteration (the engine's :func:`em_step`):

* E-step on the latent targets: ``v = E[z | β, y]`` (002 eq. 6; the data for regression);
* E-step on the variances: ``E[τ_i⁻¹ | β_i] = 1/u_i²`` with ``U = diag(u)`` finite
  (002 eq. 15: ``u = |β|`` for Jeffreys);
* noise update ``σ² = ‖y − Hβ‖²/n`` (000 eq. 12), regression only, when estimated;
* M-step ``β = U(σ² I + U HᵀH U)⁻¹ U Hᵀ v`` (000 "An Important Implementation Detail";
  002 eq. 16 with σ² = 1), solved by Cholesky. When the basis is wider than the data the
  same update is taken in its dual form (for widths beyond ``DUAL_RATIO · n``) ``β = U² Hᵀ(σ² I + H U² Hᵀ)⁻¹ v``;
* a weight whose contribution ``|β_i| ‖h_i‖`` falls below ``prune_tol`` times the largest
  contribution, now or at the start (``β⁽⁰⁾``), becomes exactly zero, and since ``u_i = 0``
  then, it stays zero. Measured with the column norms, as EM itself is, the rule does not depend
  on the units of each column (on ``|β_i|`` alone, inputs scaled by 1e8 beside a bias were
  pruned at once: weights of 1e-8 against the bias's). The floor at the starting point's scale
  lets every weight reach zero when that is the answer (a threshold relative to the present
  weights alone never prunes the largest, which would only decay geometrically).

Stop when ``‖β⁽ᵗ⁺¹⁾ − β⁽ᵗ⁾‖ / ‖β⁽ᵗ⁾‖ < tol`` (002 Step 4, δ = 1e-3 by default).

Work on the active set: the jitted loop (:func:`run_em`, the jit boundary, a
``lax.while_loop``) runs on a fixed-width slice of the basis; when the active set falls to
half that width it returns, and :func:`fit_em` gathers the surviving columns into
the next power-of-two width. Shapes inside jit stay fixed, each width compiles once, and
the cost of an iteration follows the number of nonzero weights. The rows and the first
slice's width are padded too (:data:`PAD_PER_OCTAVE`; zero rows with ``y = 0`` that the
likelihood skips through ``EMData.n_obs``, zero columns with ``β = 0``), so data of a nearby
size reuses the compiled loops; the padding changes no step, only the rounding of sums.

A kernel design of low numerical rank can be given factored, ``H = QH̃`` (:mod:`._lowrank`):
the loop then runs on ``H̃`` (r × p) and the compressed targets ``Qᵀv``, with ``η = Q(H̃β)``
for the E-step and σ² (:func:`linear_predictor`, :func:`compress`), the same iterations at
``O(r²p)`` each.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from jax import lax
from jax.scipy.linalg import cho_factor, cho_solve

from sparsebayes.inference._active import active_first
from sparsebayes.inference._shapes import bucket, pad_to

#: Widths at or below this never compact (recompiling costs more than it saves).
SMALL_WIDTH = 64
#: Rows (data points, or the rank of a factored design) and the first slice's width are padded
#: to one of this many sizes per octave (:func:`~sparsebayes.inference._shapes.bucket`), so
#: data of a new size mostly reuses compiled loops; padding costs at most 25 % per iteration.
PAD_PER_OCTAVE = 4
#: With at most this many weights active, the M-step's Cholesky runs on them alone, inside the
#: compiled loop of a wider slice (a 64-wide factorization costs about 10 µs, an 8-wide one 1).
SMALL_SOLVE = 8
#: The M-step takes its dual (n × n) form only when the active width exceeds this many times
#: n: a Cholesky of k × k costs k³/3 per iteration, the dual form n²k + n³/3 (kernel bases
#: have k = n + 1, where the Gram form is the cheap one).
DUAL_RATIO = 2


class EMData(NamedTuple):
    """The design on the current active slice: ``H`` (n, k), ``y`` (n,), ``gram = HᵀH`` (k, k).

    ``gram`` is ``None`` when ``k > DUAL_RATIO · n``: the M-step then uses its dual (n × n) form.
    With a ``basis`` ``Q`` (n, r) the design is factored (:mod:`._lowrank`): ``H`` is then
    ``H̃`` (r, k), the data's design is ``QH̃``, ``y`` stays (n,), and ``gram = H̃ᵀH̃``.
    ``n_obs``, if given, is the number of data rows: the rows after it are padding, zero rows of
    the design (of ``Q`` when factored) with ``y = 0`` (:func:`fit_em`). ``col_norm`` (k,), if
    given, holds the columns' norms ``‖h_i‖`` (those of ``H̃`` when factored, which are ``H``'s),
    by which pruning weighs the weights (:func:`em_step`); without it, by ``|β_i|`` alone.
    """

    H: jax.Array
    y: jax.Array
    gram: jax.Array | None
    basis: jax.Array | None = None
    n_obs: jax.Array | None = None
    col_norm: jax.Array | None = None


def linear_predictor(data, beta):
    """``η = Hβ``, or ``Q(H̃β)`` for a factored design."""
    eta = data.H @ beta
    return eta if data.basis is None else data.basis @ eta


def compress(data, v):
    """The targets as the M-step's design sees them: ``v``, or ``Qᵀv`` for a factored design
    (then ``Hᵀv = H̃ᵀQᵀv``)."""
    return v if data.basis is None else v @ data.basis


class EMState(NamedTuple):
    beta: jax.Array
    noise_var: jax.Array
    n_iter: jax.Array
    rel_change: jax.Array


class EMInfo(NamedTuple):
    objective: jax.Array
    rel_change: jax.Array
    n_active: jax.Array
    noise_var: jax.Array


class EMResult(NamedTuple):
    """``scale`` is ``u`` at the final ``β`` (``E[τ_i⁻¹ | β_i] = 1/u_i²``; 0 where ``β_i = 0``);
    ``noise_floor`` the least σ² an estimate may take (:func:`fit_em`'s ``noise_floor_rel``)."""

    beta: np.ndarray
    noise_var: float
    n_iter: int
    converged: bool
    objective: float
    scale: np.ndarray
    noise_floor: float


def log_posterior(beta, noise_var, data, prior, likelihood):
    """The objective EM climbs: ``log p(y | β, σ²) + log p(β)`` up to a constant.

    Regression: ``−n/2 log σ² − ‖y − Hβ‖²/(2σ²) − pen(β)`` (000 eq. 3 with a flat prior on σ²);
    probit: ``Σ log Φ(s_i h_iᵀβ) − pen(β)``; ``pen = −log p(β)`` of the marginal prior.
    """
    eta = linear_predictor(data, beta)
    return -(likelihood.neg_log_lik(data.y, eta, noise_var, data.n_obs) + prior.neg_log_prior(beta))


def _gram_solve(u, gram, noise_var, rhs):
    """``(σ² I + U G U)⁻¹ rhs`` by Cholesky."""
    A = noise_var * jnp.eye(u.shape[0], dtype=u.dtype) + u[:, None] * gram * u[None, :]
    return cho_solve(cho_factor(A, lower=True), rhs)


def _active_gram_solve(u, gram, noise_var, rhs):
    """:func:`_gram_solve` on the at most ``SMALL_SOLVE`` coordinates with ``u ≠ 0``.

    A coordinate with ``u_i = 0`` has the row ``σ² e_i`` and ``rhs_i = 0``, so its solution is 0
    and the rest is the solve on the active block alone; inactive coordinates pad the index
    list (:func:`~sparsebayes.inference._active.active_first`).
    """
    idx = active_first(u != 0, SMALL_SOLVE)
    c = _gram_solve(u[idx], gram[idx[:, None], idx[None, :]], noise_var, rhs[idx])
    return jnp.zeros_like(rhs).at[idx].set(c)


def m_step(u, v, noise_var, data):
    """``β = U(σ² I + U HᵀH U)⁻¹ U Hᵀ v`` by Cholesky (000, "An Important Implementation Detail").

    With ``gram=None`` the push-through identity gives ``β = U² Hᵀ(σ² I + H U² Hᵀ)⁻¹ v``. On
    the last slice (width at most ``SMALL_WIDTH``, which never compacts), once at most
    ``SMALL_SOLVE`` weights are active the Cholesky runs on those alone
    (:func:`_active_gram_solve`); wider slices compact long before that, and the branch
    would only add compile time there. ``v`` comes through :func:`compress`.
    """
    if data.gram is not None:
        rhs = u * (v @ data.H)  # v @ H = Hᵀv without copying Hᵀ
        if not SMALL_SOLVE < u.shape[0] <= SMALL_WIDTH:  # only the last slice runs long with few active
            return u * _gram_solve(u, data.gram, noise_var, rhs)
        c = lax.cond(jnp.sum(u != 0) <= SMALL_SOLVE, _active_gram_solve, _gram_solve, u, data.gram, noise_var, rhs)
        return u * c
    n = data.H.shape[0]
    d = u**2
    W = noise_var * jnp.eye(n, dtype=u.dtype) + (data.H * d[None, :]) @ data.H.T
    return d * (cho_solve(cho_factor(W, lower=True), v) @ data.H)


def em_step(state, data, prior, likelihood, *, estimate_noise, prune_tol, noise_floor, prune_floor=0.0):
    """One EM iteration: E-step (latent targets, variances), σ² update, M-step, pruning.

    A weight whose contribution ``|β_i| ‖h_i‖`` (``data.col_norm``) is below
    ``max(prune_tol · max_j |β_j| ‖h_j‖, prune_floor)`` is set to exactly zero. The
    objective is not evaluated here (a probit objective costs as much as the E-step):
    :func:`run_em` evaluates it once at the end, :func:`em_trace` at every step.
    """
    beta = state.beta
    eta = linear_predictor(data, beta)
    v = compress(data, likelihood.expected_targets(data.y, eta))  # 002 eq. 6 (or the data)
    u = prior.em_scale(beta)  # E[1/τ_i | β_i] = 1/u_i²
    if estimate_noise:
        noise_var = jnp.maximum(likelihood.noise_update(data.y, eta, data.n_obs), noise_floor)  # 000 eq. 12
    else:
        noise_var = state.noise_var
    new = m_step(u, v, noise_var, data)
    size = jnp.abs(new) if data.col_norm is None else jnp.abs(new) * data.col_norm
    new = jnp.where(size < jnp.maximum(prune_tol * jnp.max(size), prune_floor), 0.0, new)
    rel = jnp.linalg.norm(new - beta) / jnp.maximum(jnp.linalg.norm(beta), jnp.finfo(beta.dtype).tiny)
    return EMState(new, noise_var, state.n_iter + 1, rel)


class EMControls(NamedTuple):
    """The loop's scalar settings, handed to :func:`run_em` as one float64 vector (one argument
    to transfer instead of six; a call costs about 20 µs less)."""

    tol: float
    max_iter: int
    shrink_below: int
    prune_tol: float
    noise_floor: float
    prune_floor: float


@partial(jax.jit, static_argnames=("estimate_noise",))
def run_em(state, data, prior, likelihood, controls, *, estimate_noise):
    """Iterate :func:`em_step` until converged, ``max_iter``, or ≤ ``shrink_below`` weights remain.

    ``controls`` is an :class:`EMControls` as an array. Returns the final state and its
    :func:`log_posterior`, packed in one vector (:func:`unpack_run`: one transfer to the host,
    about 50 µs less than five).
    """
    tol, max_iter, shrink_below, prune_tol, noise_floor, prune_floor = (controls[i] for i in range(6))

    def cond(s):
        return (s.rel_change >= tol) & (s.n_iter < max_iter) & (jnp.sum(s.beta != 0) > shrink_below)

    def body(s):
        return em_step(s, data, prior, likelihood, estimate_noise=estimate_noise,
                       prune_tol=prune_tol, noise_floor=noise_floor, prune_floor=prune_floor)

    final = lax.while_loop(cond, body, state)
    objective = log_posterior(final.beta, final.noise_var, data, prior, likelihood)
    return jnp.concatenate([final.beta, prior.em_scale(final.beta),
                            jnp.stack([final.noise_var, final.n_iter.astype(final.beta.dtype),
                                       final.rel_change, objective])])


def unpack_run(packed):
    """:func:`run_em`'s vector as ``(EMState, objective, scale)`` of NumPy values; ``scale`` is
    the final ``u`` (``E[τ_i⁻¹ | β_i] = 1/u_i²``)."""
    packed = np.asarray(packed)
    beta, scale = np.split(packed[:-4], 2)
    return EMState(beta, packed[-4], int(packed[-3]), packed[-2]), float(packed[-1]), scale


@partial(jax.jit, static_argnames=("n_steps", "estimate_noise"))
def em_trace(state, data, prior, likelihood, prune_tol, noise_floor, prune_floor=0.0, *, n_steps, estimate_noise):
    """``n_steps`` iterations on the full basis with the :class:`EMInfo` of each (``lax.scan``)."""

    def body(s, _):
        s = em_step(s, data, prior, likelihood, estimate_noise=estimate_noise,
                    prune_tol=prune_tol, noise_floor=noise_floor, prune_floor=prune_floor)
        obj = log_posterior(s.beta, s.noise_var, data, prior, likelihood)
        return s, EMInfo(obj, s.rel_change, jnp.sum(s.beta != 0), s.noise_var)

    return lax.scan(body, state, None, length=n_steps)


class RidgeStart:
    """The weakly penalized ridge estimate ``(E + HᵀH)⁻¹ Hᵀ y₀`` (002 Step 2), factored once for
    a design and then solved for any ``y₀`` (one-vs-all fits share it); dual form when p > n.

    ``E = diag(ε min(1, ‖h_i‖²))``: the paper's ``εI`` (ε = 1e-6) on every column of squared
    norm at least 1 (kernel and bias columns, whose norms are ≥ 1, and inputs in the units of
    the reproductions), and ε relative to the column below that. EM is invariant to the scale
    of each column, and this start is too; with an absolute ε, columns of norm 1e-6 (inputs in
    small units) would start every weight near 0, from where Jeffreys EM prunes them all.
    Computed as the ``εI`` ridge on the columns scaled to norm 1 where they are shorter.

    ``gram``, if given, is ``HᵀH`` (not modified). A design whose regularized Gram matrix is not
    positive definite in float64 (columns collinear to rounding) raises ``ValueError``: EM from
    any start on it loses the weights to rounding.
    """

    def __init__(self, H, eps=1e-6, gram=None):
        n, p = H.shape
        sq = np.einsum("ij,ij->j", H, H) if gram is None else np.diagonal(gram)
        short = (sq > 0) & (sq < 1)
        self.scale = np.ones(p)
        self.scale[short] = 1.0 / np.sqrt(sq[short])
        if short.any():
            H = H * self.scale
            gram = None if gram is None else gram * self.scale[:, None] * self.scale[None, :]
        self.H = H
        self.dual = gram is None and p > n
        if self.dual:
            A = H @ H.T
        else:
            A = H.T @ H if gram is None else gram.copy()
        A[np.diag_indices(A.shape[0])] += eps
        try:
            self.cho = scipy.linalg.cho_factor(A, lower=True)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the design's columns are numerically collinear: the ridge start's HᵀH + εI is not positive "
                "definite in float64 (inputs with a large common offset beside a bias column do this); centre the "
                "inputs (the EM estimators' standardize=True does) or drop the collinear columns") from None

    def __call__(self, y0):
        if self.dual:
            return self.scale * (self.H.T @ scipy.linalg.cho_solve(self.cho, y0))
        return self.scale * scipy.linalg.cho_solve(self.cho, self.H.T @ y0)


def conditional_covariance(gram, u, noise_var):
    """``Σ = σ² U(σ² I + U G U)⁻¹U``: the covariance of ``β | z, τ`` at ``E[τ_i⁻¹] = 1/u_i²``.

    The Gaussian conditional behind the M-step (000 "An Important Implementation Detail":
    its mean is the M-step's ``β``), equal to ``(G/σ² + U⁻²)⁻¹`` where every ``u_i > 0`` but
    finite as ``u_i → 0``. ``gram = HᵀH`` on the same coordinates. With ``σ² I + UGU = LLᵀ``
    (Cholesky), ``Σ = σ² (L⁻¹U)ᵀ(L⁻¹U)``.
    """
    A = noise_var * np.eye(u.size) + u[:, None] * gram * u[None, :]
    W = scipy.linalg.solve_triangular(np.linalg.cholesky(A), np.diag(u), lower=True)
    return noise_var * (W.T @ W)


def laplace_covariance(H_active, y, beta_active, u, likelihood):
    """Covariance of the Laplace approximation to ``p(β_A | y, τ̂)`` for a link likelihood (probit),
    ``τ̂_i = u_i²`` the final E-step's variances.

    At EM's fixed point ``Hᵀ(v − Hβ) = U⁻²β`` (the M-step, 002 eq. 16, with ``v = E[z | y, β]``
    from 002 eq. 6) is the stationarity condition of ``Σ log Φ(s_i h_iᵀβ) − Σ β_i²/(2τ̂_i)``, since
    ``v − η = s m(sη)`` is the gradient of ``log Φ(sη)``: ``β̂`` is the mode of the probit model with
    the Gaussian prior ``N(0, τ̂)`` held at those variances. The Hessian there is ``−(HᵀWH + U⁻²)``,
    ``W`` the likelihood's ``curvature`` (:meth:`~sparsebayes.models.likelihoods.ProbitLikelihood.curvature`),
    and the covariance is taken in the finite form ``U(I + U HᵀWH U)⁻¹U`` (:func:`conditional_covariance`
    with σ² = 1). ``H_active`` (n, k) holds the design's columns of the nonzero weights, a row per
    data point.
    """
    w = likelihood.curvature(y, H_active @ beta_active)
    return conditional_covariance(H_active.T @ (w[:, None] * H_active), u, 1.0)


def _width(k, p):
    """The slice width for ``k`` active weights out of the padded width ``p``: ``p`` until half
    of them are pruned (and always for ``p ≤ SMALL_WIDTH``), then the next power of two."""
    if p <= SMALL_WIDTH or 2 * k > p:
        return p
    return min(p, max(SMALL_WIDTH // 2, 1 << int(np.ceil(np.log2(max(k, 1))))))


def _gather(H, gram, beta, active, width, rows):
    """Columns ``active`` of H (and of HᵀH), zero-padded to ``width`` columns (padding has β = 0)
    and ``rows`` rows."""
    k = active.size
    Hb = np.zeros((rows, width))
    Hb[:H.shape[0], :k] = H[:, active]
    bb = np.zeros(width)
    bb[:k] = beta[active]
    if gram is None:
        return Hb, None, bb
    G = np.zeros((width, width))
    G[:k, :k] = gram[np.ix_(active, active)]
    return Hb, G, bb


def column_norms(H, gram):
    """``‖h_i‖`` of every column: from ``gram``'s diagonal when there is one."""
    return np.sqrt(np.diagonal(gram) if gram is not None else np.einsum("ij,ij->j", H, H))


class EMDesign:
    """What :func:`fit_em` prepares from the design alone, for ``n_obs`` data rows: the design
    (``H``, or ``H̃`` and the padded basis ``Q`` of a factored one), the padded row counts,
    ``HᵀH`` where the Gram form is used, the column norms, and the ridge start's factorization
    (made when first needed). Fits of several targets on one design (the one-vs-all classifiers of 002 Sec. 4.2)
    share one instead of recomputing ``HᵀH`` and the ridge Cholesky for each.
    """

    def __init__(self, H, n_obs, factor=None):
        self.n_obs = int(n_obs)
        self.rows = bucket(self.n_obs, per_octave=PAD_PER_OCTAVE)
        if factor is None:
            self.H, self.basis, self.design_rows = np.ascontiguousarray(H, dtype=np.float64), None, self.rows
            self._compress = None
        else:  # HᵀH = H̃ᵀH̃ and Hᵀy₀ = H̃ᵀQᵀy₀: the ridge start on H̃ is the one on H
            self.H = np.ascontiguousarray(factor.design)
            self.design_rows = bucket(self.H.shape[0], per_octave=PAD_PER_OCTAVE)
            self.basis = pad_to(np.asarray(factor.basis, dtype=np.float64), (self.rows, self.design_rows))
            self._compress = factor.basis
        n, p = self.H.shape
        self.gram = self.H.T @ self.H if p <= DUAL_RATIO * n else None
        self.col_norm = column_norms(self.H, self.gram)
        self._ridge = None

    def ridge_start(self, y0):
        """:class:`RidgeStart` on this design, solved for ``y0`` (n_obs,)."""
        if self._ridge is None:
            self._ridge = RidgeStart(self.H, gram=self.gram)
        return self._ridge(y0 if self._compress is None else y0 @ self._compress)


def fit_em(H, y, prior, likelihood, *, beta0=None, y_init=None, noise_var=None, tol=1e-3, max_iter=1000,
           prune_tol=1e-8, noise_floor_rel=1e-10, factor=None):
    """Run EM to convergence on the shrinking active set; returns :class:`EMResult`.

    Parameters
    ----------
    H : ndarray (n, p), None, or EMDesign
        Design matrix (float64); ``None`` when ``factor`` stands for it; or an :class:`EMDesign`
        made for this design and ``n`` (``factor`` is then not used).
    y : ndarray (n,)
        Targets (regression) or 0/1 labels (probit).
    prior, likelihood : objects of :mod:`sparsebayes.models.priors` / ``.likelihoods``.
    beta0 : ndarray (p,) or None
        Starting point; ``None`` takes the paper's ridge estimate (:class:`RidgeStart`) from
        ``y_init`` (default ``y``; the probit estimator passes the ±1 labels).
    noise_var : float or None
        Fixed σ²; ``None`` estimates it (000 eq. 12). Ignored by a likelihood with a
        ``fixed_noise_var`` (probit: σ² = 1, 002 eq. 3).
    tol : float
        Relative-change stopping threshold δ.
    prune_tol : float
        A weight whose contribution ``|β_i| ‖h_i‖`` is below ``prune_tol`` times the largest
        contribution, now or at the start, becomes exactly zero.
    noise_floor_rel : float
        An estimated σ² stays at least ``noise_floor_rel · mean(y²)`` (returned as
        ``noise_floor``): with as many basis functions as points the flat prior on σ² has no
        maximum (the fit can interpolate, σ² → 0), and EM stops at the floor instead.
    factor : :class:`~sparsebayes.inference._lowrank.DesignFactor` or None
        ``H = QH̃`` (:func:`~sparsebayes.inference._lowrank.factor_kernel_design`): every
        iteration then works on ``H̃`` (r × p) and costs ``O(r²p)``; ``H`` itself is not used.
    """
    y = np.asarray(y, dtype=np.float64)
    design = H if isinstance(H, EMDesign) else EMDesign(H, y.size, factor)
    if design.n_obs != y.size:
        raise ValueError(f"the EMDesign was made for {design.n_obs} data rows, y has {y.size}")
    H, basis, gram_full, n_obs, design_rows = design.H, design.basis, design.gram, design.n_obs, design.design_rows
    y_padded = pad_to(y, (design.rows,))
    n, p = H.shape
    padded_p = bucket(p, per_octave=PAD_PER_OCTAVE)
    if beta0 is None:
        beta0 = design.ridge_start(y if y_init is None else np.asarray(y_init, dtype=np.float64))
    beta = np.asarray(beta0, dtype=np.float64).copy()
    col_norm = design.col_norm
    prune_floor = prune_tol * float(np.max(np.abs(beta) * col_norm, initial=0.0))
    if getattr(likelihood, "fixed_noise_var", None) is not None:
        noise_var = likelihood.fixed_noise_var
    estimate_noise = noise_var is None
    s2 = float(np.var(y)) if estimate_noise else float(noise_var)
    if not (np.isfinite(s2) and s2 > 0):
        s2 = 1.0
    floor = noise_floor_rel * max(float(np.mean(y**2)), np.finfo(float).tiny)
    n_iter, converged, obj = 0, False, -np.inf
    scale = np.zeros(p)
    while True:
        active = np.flatnonzero(beta)
        k = active.size
        if k == 0:
            converged = True
            break
        width = _width(k, padded_p)
        use_gram = width <= DUAL_RATIO * n
        Hb, G, bb = _gather(H, gram_full if use_gram else None, beta, active, width, design_rows)
        if use_gram and G is None:
            G = Hb.T @ Hb
        shrink_below = width // 2 if width > SMALL_WIDTH else -1
        # numpy arguments go to the jitted loop as they are (no per-array jnp.asarray dispatch)
        state = EMState(bb, np.float64(s2), np.int64(n_iter), np.float64(np.inf))
        controls = np.array(EMControls(tol, max_iter, shrink_below, prune_tol, floor, prune_floor), dtype=np.float64)
        data = EMData(Hb, y_padded, G, basis, np.float64(n_obs), pad_to(col_norm[active], (width,)))
        state, objective, slice_scale = unpack_run(run_em(state, data, prior, likelihood, controls,
                                                          estimate_noise=estimate_noise))
        beta = np.zeros(p)
        beta[active] = state.beta[:k]
        scale = np.zeros(p)
        scale[active] = slice_scale[:k]
        s2 = float(state.noise_var)
        n_iter = int(state.n_iter)
        obj = float(objective)
        if not np.all(np.isfinite(beta)):
            raise FloatingPointError("EM produced a non-finite weight; please report this data set")
        if float(state.rel_change) < tol:
            converged = True
            break
        if n_iter >= max_iter:
            break
    return EMResult(beta, s2, n_iter, converged, obj, scale, floor)
