"""The Gaussian draw of the regression weights in a conjugate Gibbs sweep, chosen by the design's shape.

Every conjugate Gibbs sampler of the suite meets the same conditional: with a Gaussian
(pseudo-)response ``z = Xβ + w``, ``w ~ N(0, σ² Ω⁻¹)``, ``Ω = diag(ω)``, and the prior
``β ~ N(0, diag(v))``,

    β | · ~ N(A⁻¹XᵀΩz/σ², A⁻¹),    A = XᵀΩX/σ² + diag(1/v).

``ω = 1`` (``omega=None``) is Gaussian regression; the data augmentations give other ``(z, ω)``:
probit's truncated-normal latent (Albert & Chib 1993: ``z`` the latent, ``ω = 1``, ``σ² = 1``),
logistic's Pólya-Gamma variates (Polson, Scott & Windle 2013: ``ω`` the variates,
``z = (y − ½)/ω``), Student-t noise's per-row Gamma scales (``ω`` the scales). Three ways to draw it:

* :func:`rue_draw` (Rue 2001, Algorithm 2): ``A = LLᵀ``, ``β = L⁻ᵀ(L⁻¹b + ε)``, ``b = XᵀΩz/σ²``,
  ``ε ~ N(0, I_p)``; ``O(np² + p³)`` flops and a ``p × p`` array, for ``p ≤ n``;
* :func:`qr_draw`: the same draw from the QR factor of ``[Ω^{1/2}X/σ; D^{-1/2}]``, which forms no
  Gram matrix (rounding ``ε‖X‖``, not ``ε‖X‖²``): where Rue's Cholesky factor is not finite
  (collinear columns in large units), at ``O((n + p)p²)``;
* :func:`bhattacharya_draw` (Bhattacharya, Chakraborty & Mallick 2016, Algorithm 1):
  with ``Φ = Ω^{1/2}X/σ``, ``α = Ω^{1/2}z/σ`` and ``D = diag(v)``: ``u ~ N(0, D)``, ``δ ~ N(0, I_n)``,
  ``v' = Φu + δ``, solve ``(ΦDΦᵀ + I_n) w = α − v'``, return ``u + DΦᵀw``; ``O(n²p)`` flops and
  nothing ``p × p`` (arrays of ``n·p`` and ``n²``), for ``p > n``;
* :func:`rue_draw_bordered`: the Gaussian case from the bordered Gram matrix ``[[XᵀX, Xᵀy], [yᵀX, κ]]``
  (:func:`bordered_gram`, computed once): one Cholesky factor gives both ``L`` and ``L⁻¹Xᵀy``, so a draw
  takes one triangular solve, written out at small ``p`` (:func:`back_substitution`);
* :func:`rue_draw_from_stats`: the Gaussian case (``ω = 1``) from sufficient statistics
  (:func:`gaussian_stats`: ``XᵀX`` and ``Xᵀy``, computed once), ``O(p³)`` per draw whatever ``n``,
  with :func:`stats_rss` for ``‖y − Xβ‖²`` in ``O(p²)``;
* :func:`cg_draw` (Nishimura & Suchard 2023, "prior-preconditioned conjugate gradient"): the same
  Gaussian as the solution of ``Aβ = b`` with the randomised right-hand side
  ``b = XᵀΩz/σ² + XᵀΩ^{1/2}ξ₁/σ + D^{-1/2}ξ₂`` (``ξ₁ ~ N(0, I_n)``, ``ξ₂ ~ N(0, I_p)``: ``b`` has
  covariance ``A``, so ``A⁻¹b`` has covariance ``A⁻¹``), solved by conjugate gradients with the
  prior precision as preconditioner and only products with ``X`` and ``Xᵀ``: ``O(np)`` per iteration,
  nothing ``p × p`` or ``n × n``; exact up to the stated residual tolerance (:class:`CG`).

:func:`draw_beta` picks Rue or Bhattacharya by shape (:func:`choose_method`), or CG or QR on request, and
draws its own normals from a key. All functions are pure JAX, for use inside ``jit``/``vmap``/``scan``; the
only checks are on shapes (static), in :func:`draw_beta` and :func:`gaussian_stats`.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve

#: the β draws by name (:func:`choose_method`); ``"cg"`` is :class:`CG` at its defaults
METHODS = ("auto", "rue", "bhattacharya", "cg")


class CG(NamedTuple):
    """The conjugate-gradient draw (:func:`cg_draw`) with its settings, usable wherever a β draw is
    named (``method=`` / ``beta_draw=``; hashable, so a static argument under ``jit``): stop when the
    preconditioned residual is at most ``tol`` times the right-hand side's norm, or after ``maxiter``
    iterations (``None``: ``2·(min(n, p) + 1) + 20``; in exact arithmetic CG ends in at most
    ``min(n, p) + 1``, the number of distinct eigenvalues of ``I + D^{1/2}XᵀΩXD^{1/2}/σ²``)."""

    tol: float = 1e-8
    maxiter: int | None = None


def choose_method(n, p, method="auto"):
    """``"rue"`` when ``p ≤ n`` (the ``p × p`` factor is the smaller system), ``"bhattacharya"``
    when ``p > n`` (the ``n × n`` one is); ``method`` other than ``"auto"`` is returned as is
    (a :class:`CG` as ``"cg"``). Anything outside :data:`METHODS` or :class:`CG` is a ``ValueError``."""
    if isinstance(method, CG):
        if not (float(method.tol) > 0.0) or (method.maxiter is not None and int(method.maxiter) < 1):
            raise ValueError(f"the CG β draw needs tol > 0 and maxiter ≥ 1 (or None), got {method!r}")
        return "cg"
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"the β draw must be one of {METHODS} or a gibbs_beta.CG, got {method!r}")
    if method != "auto":
        return method
    return "rue" if p <= n else "bhattacharya"


def cg_options(method):
    """The :class:`CG` settings of a β draw named ``"cg"`` (the defaults) or given as a :class:`CG`."""
    return method if isinstance(method, CG) else CG()


def _weighted(X, z, omega, noise_var):
    """``Φ = Ω^{1/2}X/σ`` and ``α = Ω^{1/2}z/σ``: the whitened design and response."""
    sigma = jnp.sqrt(noise_var)
    if omega is None:
        return X / sigma, z / sigma
    scale = jnp.sqrt(omega) / sigma
    return X * scale[:, None], z * scale


def rue_from_precision(normal, precision, rhs):
    """``β ~ N(A⁻¹b, A⁻¹)`` for the precision ``A`` (p × p, symmetric positive definite) and
    ``b = rhs``, from ``normal ~ N(0, I_p)``: ``A = LLᵀ``, ``β = L⁻ᵀ(L⁻¹b + ε)`` (Rue 2001: the
    mean ``L⁻ᵀL⁻¹b`` and the noise ``L⁻ᵀε``, of covariance ``(LLᵀ)⁻¹``, in two triangular solves)."""
    L = jax.lax.linalg.cholesky(precision, symmetrize_input=False)
    half = jax.lax.linalg.triangular_solve(L, rhs[:, None], left_side=True, lower=True)[:, 0]
    return jax.lax.linalg.triangular_solve(L, (half + normal)[:, None], left_side=True, lower=True,
                                           transpose_a=True)[:, 0]


def rue_draw(normal, X, z, omega, prior_var, noise_var):
    """``β ~ N(A⁻¹XᵀΩz/σ², A⁻¹)``, ``A = XᵀΩX/σ² + diag(1/v)`` (module docstring), by the Cholesky
    factor of ``A``: :func:`rue_from_precision`. ``normal ~ N(0, I_p)``, ``X`` (n, p), ``z`` (n,),
    ``omega`` (n,) or ``None`` (all ones), ``prior_var`` ``v`` (p,), ``noise_var`` σ². Forming
    ``ΦᵀΦ`` rounds by about ``ε‖Φ‖²``, which can swamp the prior precision ``1/v`` of a null
    direction when ``Φ`` has collinear columns in large units: the factor is then not finite, and
    :func:`qr_draw` gives the same draw without the Gram matrix."""
    Phi, alpha = _weighted(X, z, omega, noise_var)
    precision = Phi.T @ Phi + jnp.diag(1.0 / prior_var)
    return rue_from_precision(normal, precision, alpha @ Phi)


def _qr_draw_weighted(normal, Phi, alpha, prior_var):
    """:func:`qr_draw` on the whitened ``Φ = Ω^{1/2}X/σ`` and ``α = Ω^{1/2}z/σ``."""
    p = Phi.shape[1]
    stacked = jnp.concatenate([Phi, jnp.diag(1.0 / jnp.sqrt(prior_var))])
    Q, R = jnp.linalg.qr(stacked, mode="reduced")
    mean_half = Q[: Phi.shape[0]].T @ alpha  # Qᵀ[α; 0]
    return jax.lax.linalg.triangular_solve(R, (mean_half + normal)[:, None], left_side=True,
                                           lower=False)[:, 0].reshape(p)


def qr_draw(normal, X, z, omega, prior_var, noise_var):
    """The same ``β`` as :func:`rue_draw` without forming ``A``: with ``Φ = Ω^{1/2}X/σ``,
    ``α = Ω^{1/2}z/σ`` and ``M = [Φ; D^{-1/2}] = QR`` (``(n + p) × p``, ``D = diag(v)``),
    ``A = MᵀM = RᵀR``, so ``β = R⁻¹(Qᵀ[α; 0] + ε)``: the mean ``R⁻¹Qᵀ[α; 0]`` is the least-squares
    solution of ``Mβ ≈ [α; 0]``, i.e. ``A⁻¹Φᵀα``, and ``R⁻¹ε`` has covariance ``(RᵀR)⁻¹ = A⁻¹``
    (Rue 2001's draw with the triangular factor taken from Householder QR, which is backward
    stable in ``M``: its rounding is ``ε‖M‖``, not ``ε‖M‖²``). ``O((n + p)p²)`` flops."""
    Phi, alpha = _weighted(X, z, omega, noise_var)
    return _qr_draw_weighted(normal, Phi, alpha, prior_var)


def bhattacharya_draw(normal, row_normal, X, z, omega, prior_var, noise_var):
    """The same ``β`` by Bhattacharya, Chakraborty & Mallick (2016, Algorithm 1), from
    ``normal ~ N(0, I_p)`` and ``row_normal ~ N(0, I_n)``, without any ``p × p`` array.

    With ``Φ = Ω^{1/2}X/σ``, ``α = Ω^{1/2}z/σ``, ``D = diag(v)``: ``u = D^{1/2}ε ~ N(0, D)``,
    ``v' = Φu + δ``, ``w`` solves ``(ΦDΦᵀ + I_n) w = α − v'`` (Cholesky), ``β = u + DΦᵀw``.
    Exact: ``β`` is Gaussian with the mean and covariance of the conditional (their Proposition 1).

    ``Φ`` is never formed: ``ΦDΦᵀ = S (X (D/σ²) Xᵀ) S`` with ``S = Ω^{1/2}``, ``Φu = S Xu/σ`` and
    ``DΦᵀw = (D/σ) Xᵀ(Sw)``, so the ``n × p`` arrays are ``X`` and one scaled copy, and the cost is
    the one product ``X (D/σ²) Xᵀ`` (``n²p`` multiply-adds, as a GEMM ``2n²p`` flops) plus
    ``O(np + n³)``.
    """
    n = X.shape[0]
    sigma = jnp.sqrt(noise_var)
    D = prior_var
    u = jnp.sqrt(D) * normal
    # X (D/σ²) Xᵀ, contracting the columns of both: XLA:CPU then copies neither operand
    K = jax.lax.dot_general(X * (D / noise_var), X, (((1,), (1,)), ((), ())))
    Xu = (X @ u) / sigma
    eye = jnp.eye(n, dtype=K.dtype)
    if omega is None:
        M, v, alpha = K + eye, Xu + row_normal, z / sigma
    else:
        root = jnp.sqrt(omega)
        M, v, alpha = K * jnp.outer(root, root) + eye, root * Xu + row_normal, root * z / sigma
    L = jnp.linalg.cholesky(M)
    w = cho_solve((L, True), alpha - v)
    if omega is not None:
        w = root * w
    return u + (D / sigma) * (w @ X)  # = DΦᵀw; w @ X avoids XLA:CPU copying Xᵀ


def _cg_solve(matvec, rhs, x0, tol, maxiter):
    """Conjugate gradients for ``Mx = rhs`` (``M`` symmetric positive definite, given by ``matvec``)
    from ``x0``: the textbook recursion (Hestenes & Stiefel 1952), stopped at
    ``‖rhs − Mx‖ ≤ tol·‖rhs‖`` or ``maxiter`` iterations. Returns ``(x, iterations)``."""
    r = rhs - matvec(x0)
    bound = (tol * jnp.linalg.norm(rhs)) ** 2
    tiny = jnp.finfo(rhs.dtype).tiny

    def cond(carry):
        _, r, _, rr, k = carry
        return (rr > bound) & (k < maxiter)

    def body(carry):
        x, r, d, rr, k = carry
        Md = matvec(d)
        step = rr / jnp.maximum(d @ Md, tiny)
        x = x + step * d
        r = r - step * Md
        rr_new = r @ r
        return x, r, r + (rr_new / jnp.maximum(rr, tiny)) * d, rr_new, k + 1

    x, _, _, _, k = jax.lax.while_loop(cond, body, (x0, r, r, r @ r, jnp.zeros((), jnp.int32)))
    return x, k


def cg_draw(normal, row_normal, X, z, omega, prior_var, noise_var, init=None, tol=1e-8, maxiter=None,
            return_iterations=False):
    """The same ``β`` by the prior-preconditioned conjugate gradient method of Nishimura & Suchard
    (2023, Sec. 2-3), from ``normal ~ N(0, I_p)`` (``ξ₂``) and ``row_normal ~ N(0, I_n)`` (``ξ₁``).

    ``β`` solves ``Aβ = b``, ``A = XᵀΩX/σ² + D⁻¹``, ``D = diag(v)``, with
    ``b = XᵀΩz/σ² + XᵀΩ^{1/2}ξ₁/σ + D^{-1/2}ξ₂`` (their eq. 5: ``Cov b = A``, so ``β ~ N(A⁻¹XᵀΩz/σ², A⁻¹)``
    exactly when solved exactly). The solve is CG on the prior-preconditioned system in
    ``γ = D^{-1/2}β``: ``(I + D^{1/2}XᵀΩXD^{1/2}/σ²) γ = D^{1/2}b`` (their Sec. 3: the eigenvalues are
    ``1`` plus those of the data's part, clustered at 1 for the many weights the prior shrinks), each
    product by ``X`` and ``Xᵀ`` only (``2np`` multiply-adds; nothing ``p × p`` or ``n × n``).
    ``init``: a start for ``β`` (the previous Gibbs draw, their Sec. 3.3's warm start; ``None``: 0),
    taken to ``γ`` as ``init/√v`` (0 where that is not finite). ``tol``: the relative residual
    ``‖D^{1/2}(b − Aβ)‖ ≤ tol·‖D^{1/2}b‖`` at which CG stops, or after ``maxiter`` iterations
    (:class:`CG`'s default). ``return_iterations``: also the iterations taken."""
    n, p = X.shape
    sigma = jnp.sqrt(noise_var)
    d = jnp.sqrt(prior_var)
    root = jnp.ones(n, X.dtype) if omega is None else jnp.sqrt(omega)
    # D^{1/2}b = d ∘ Xᵀ(Ω^{1/2}(Ω^{1/2}z/σ + ξ₁))/σ + ξ₂
    rhs = d * ((root * (root * z / sigma + row_normal)) @ X) / sigma + normal
    weight = omega if omega is not None else jnp.ones(n, X.dtype)

    def matvec(g):  # (I + D^{1/2}XᵀΩXD^{1/2}/σ²) g, w @ X avoiding a copy of Xᵀ
        return g + d * ((weight * (X @ (d * g))) @ X) / noise_var

    if init is None:
        g0 = jnp.zeros(p, X.dtype)
    else:
        g0 = init / d
        g0 = jnp.where(jnp.isfinite(g0), g0, 0.0)
    cap = 2 * (min(n, p) + 1) + 20 if maxiter is None else int(maxiter)
    g, k = _cg_solve(matvec, rhs, g0, tol, cap)
    return (d * g, k) if return_iterations else d * g


def draw_beta(key, X, z, omega, prior_var, noise_var, method="auto", init=None):
    """One draw of ``β | ·`` (module docstring) with the method the shape calls for
    (:func:`choose_method`; ``method`` may force one, ``"cg"`` or a :class:`CG` the conjugate
    gradient draw; ``"qr"``, the engine's fallback where Rue's factor fails, :func:`qr_draw` from
    the same normals as Rue's), its normals drawn from ``key``.

    ``X`` (n, p), ``z`` (n,), ``omega`` (n,) per-row precisions or ``None`` (all ones),
    ``prior_var`` (p,) the prior variances ``v``, ``noise_var`` the scalar σ²; ``init`` (p,) the
    CG draw's warm start (the previous β; ignored by the direct draws). Shapes that do not
    match are a ``ValueError`` (checked at trace time)."""
    n, p = _check_shapes(X, z, omega, prior_var)
    k_p, k_n = jax.random.split(key)
    normal = jax.random.normal(k_p, (p,), X.dtype)
    chosen = "qr" if isinstance(method, str) and method == "qr" else choose_method(n, p, method)
    if chosen == "rue":
        return rue_draw(normal, X, z, omega, prior_var, noise_var)
    if chosen == "qr":
        return qr_draw(normal, X, z, omega, prior_var, noise_var)
    if chosen == "cg":
        opts = cg_options(method)
        return cg_draw(normal, jax.random.normal(k_n, (n,), X.dtype), X, z, omega, prior_var, noise_var,
                       init=init, tol=opts.tol, maxiter=opts.maxiter)
    return bhattacharya_draw(normal, jax.random.normal(k_n, (n,), X.dtype), X, z, omega, prior_var, noise_var)


def _check_shapes(X, z, omega, prior_var):
    if jnp.ndim(X) != 2:
        raise ValueError(f"X must be a 2-D design (n, p), got shape {jnp.shape(X)}")
    n, p = X.shape
    if jnp.shape(z) != (n,):
        raise ValueError(f"z must have shape ({n},) to match X {X.shape}, got {jnp.shape(z)}")
    if omega is not None and jnp.shape(omega) != (n,):
        raise ValueError(f"omega must have shape ({n},) (one precision per row of X), got {jnp.shape(omega)}")
    if jnp.shape(prior_var) != (p,):
        raise ValueError(f"prior_var must have shape ({p},) (one variance per column of X), got {jnp.shape(prior_var)}")
    return n, p


class GaussianStats(NamedTuple):
    """The sufficient statistics of Gaussian regression, computed once (:func:`gaussian_stats`):
    ``XᵀX`` and ``Xᵀy``, and the residual at an anchor ``β₀`` (near the least-squares fit) as
    ``Xᵀ(y − Xβ₀)`` and ``‖y − Xβ₀‖²``, for :func:`stats_rss` without cancellation."""

    gram: jax.Array
    Xty: jax.Array
    anchor: jax.Array
    anchor_grad: jax.Array
    anchor_rss: jax.Array


def gaussian_stats(X, y):
    """:class:`GaussianStats` of ``(X, y)``: one pass over the data (``XᵀX``: ``np²`` flops), after
    which a Gibbs sweep does not depend on ``n``. The anchor is the ridge fit
    ``(XᵀX + εI)⁻¹Xᵀy`` with ``ε = 10⁻¹⁰ tr(XᵀX)/p`` (any ``β₀`` is exact; one near the
    least-squares fit keeps :func:`stats_rss` free of cancellation)."""
    if jnp.ndim(X) != 2 or jnp.shape(y) != (X.shape[0],):
        raise ValueError(f"X must be (n, p) and y (n,), got {jnp.shape(X)} and {jnp.shape(y)}")
    return _gaussian_stats(X, y)


@jax.jit
def _gaussian_stats(X, y):
    p = X.shape[1]
    gram = X.T @ X
    Xty = y @ X
    eps = 1e-10 * jnp.trace(gram) / p + jnp.finfo(gram.dtype).tiny
    anchor = jnp.linalg.solve(gram + eps * jnp.eye(p, dtype=gram.dtype), Xty)
    resid = y - X @ anchor
    return GaussianStats(gram, Xty, anchor, resid @ X, resid @ resid)


def stats_rss(stats, beta):
    """``‖y − Xβ‖² = ‖r₀‖² − 2dᵀXᵀr₀ + dᵀXᵀXd`` with ``d = β − β₀``, ``r₀ = y − Xβ₀`` (the anchor of
    :class:`GaussianStats`), in ``O(p²)``. Expanding about the near-least-squares ``β₀`` rather than
    ``0`` keeps every term of the order of the residual, not of ``‖y‖²``; floored at 0."""
    d = beta - stats.anchor
    return jnp.maximum(stats.anchor_rss - 2.0 * d @ stats.anchor_grad + d @ (stats.gram @ d), 0.0)


def rue_draw_from_stats(normal, stats, prior_var, noise_var):
    """:func:`rue_draw` for ``ω = 1`` from :class:`GaussianStats`: ``A = XᵀX/σ² + diag(1/v)``,
    ``b = Xᵀy/σ²``, :func:`rue_from_precision`; ``O(p³)``, independent of ``n``."""
    precision = stats.gram / noise_var + jnp.diag(1.0 / prior_var)
    return rue_from_precision(normal, precision, stats.Xty / noise_var)


def bordered_gram(X, y):
    """``[[XᵀX, Xᵀy], [yᵀX, 1 + 2‖y‖²]]``, ``(p + 1) × (p + 1)``: the matrix whose Cholesky factor
    :func:`rue_draw_bordered` takes once ``diag(σ²/v, 0)`` is added.

    The corner is any number that keeps the matrix positive definite: its Schur complement
    ``1 + 2‖y‖² − yᵀX A⁻¹Xᵀy`` is at least ``1 + ‖y‖²``, as ``X A⁻¹Xᵀ ⪯ I``. It changes nothing
    else of the factor."""
    Xty = X.T @ y
    return jnp.block([[X.T @ X, Xty[:, None]], [Xty[None, :], (1.0 + 2.0 * (y @ y))[None, None]]])


#: Up to this many coefficients, :func:`back_substitution` is written out, one scalar step per
#: coefficient, and XLA fuses it; above, LAPACK's triangular solve.
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


def rue_draw_bordered(normal, bordered, relative_precision, noise_var):
    """:func:`rue_draw` for ``ω = 1`` (Gaussian regression, ``p ≤ n``) from the bordered Gram matrix
    (:func:`bordered_gram`) in one Cholesky factor and one triangular solve.

    With ``A = XᵀX/σ² + diag(1/v) = (XᵀX + diag(σ²/v))/σ²`` (``relative_precision`` is ``σ²/v``;
    ``1/τ`` under σ²-scaled prior variances ``v = σ²τ``, Park & Casella 2008, Sec. 2) and
    ``XᵀX + diag(σ²/v) = LLᵀ``: ``β = A⁻¹Xᵀy/σ² + L⁻ᵀσε = L⁻ᵀ(L⁻¹Xᵀy + σε)``, ``ε = normal``. The factor
    of ``[[LLᵀ, Xᵀy], [yᵀX, κ]]`` is ``[[L, 0], [(L⁻¹Xᵀy)ᵀ, ·]]``, so its last row is ``L⁻¹Xᵀy``: one
    triangular solve instead of two. The factor comes from ``lax.linalg.cholesky`` without
    symmetrizing (the matrix is symmetric as built), the solve from :func:`back_substitution`."""
    p = relative_precision.shape[-1]
    factor = jax.lax.linalg.cholesky(bordered + jnp.diag(jnp.append(relative_precision, 0.0)), symmetrize_input=False)
    return back_substitution(factor[:p, :p], factor[p, :p] + jnp.sqrt(noise_var) * normal)


def log_marginal_from_gram(gram, rhs, prior_var, noise_var):
    """The part of ``log N(z; 0, σ²Ω⁻¹ + X diag(v) Xᵀ)`` that depends on the prior variances ``v``, from
    ``gram = XᵀΩX`` and ``rhs = XᵀΩz`` (p × p): with ``d = √v``, ``M = I + diag(d) G diag(d)/σ² = LLᵀ``
    and ``c = L⁻¹(d ∘ b)/σ²``, it is ``−Σ log L_ii + ½‖c‖²`` (the matrix determinant lemma and
    Woodbury, as in :func:`sparsebayes.inference.engines.collapsed_nuts.log_marginal_likelihood`; the terms in
    ``n``, ``σ²`` and ``zᵀΩz`` alone are dropped). ``M`` stays well conditioned as any ``v_i → 0``."""
    d = jnp.sqrt(prior_var)
    M = jnp.eye(gram.shape[0], dtype=gram.dtype) + d[:, None] * gram * d[None, :] / noise_var
    L = jax.lax.linalg.cholesky(M, symmetrize_input=False)
    c = jax.lax.linalg.triangular_solve(L, (d * rhs / noise_var)[:, None], left_side=True, lower=True)[:, 0]
    return -jnp.sum(jnp.log(jnp.diag(L))) + 0.5 * c @ c


def log_marginal(X, z, omega, prior_var, noise_var, method="auto"):
    """``log N(z; 0, σ²Ω⁻¹ + X diag(v) Xᵀ)`` up to terms free of ``v``: the likelihood of the prior
    variances with β integrated out (for a hierarchy's global scale drawn jointly with β, Johndrow,
    Orenstein & Bhattacharya 2020). ``p ≤ n`` (Rue's side of :func:`choose_method`):
    :func:`log_marginal_from_gram` on ``XᵀΩX``; ``p > n``: with ``Φ = Ω^{1/2}X/σ``, ``α = Ω^{1/2}z/σ``
    and ``M = I_n + Φ diag(v) Φᵀ = LLᵀ``, ``−Σ log L_ii − ½‖L⁻¹α‖²`` (``O(n²p)``, nothing ``p × p``).
    The two differ by a constant in ``v`` (``½‖α‖²``). The CG draw has no determinant: ``"cg"``
    (and ``"qr"``, Rue's fallback) take the shape's direct method."""
    n, p = _check_shapes(X, z, omega, prior_var)
    Phi, alpha = _weighted(X, z, omega, 1.0)  # Ω^{1/2}X, Ω^{1/2}z
    chosen = choose_method(n, p, "auto" if isinstance(method, str) and method == "qr" else method)
    if chosen == "cg":
        chosen = choose_method(n, p)
    if chosen == "rue":
        return log_marginal_from_gram(Phi.T @ Phi, alpha @ Phi, prior_var, noise_var)
    K = jax.lax.dot_general(Phi * (prior_var / noise_var), Phi, (((1,), (1,)), ((), ())))
    L = jnp.linalg.cholesky(K + jnp.eye(n, dtype=K.dtype))
    w = jax.lax.linalg.triangular_solve(L, (alpha / jnp.sqrt(noise_var))[:, None], left_side=True, lower=True)[:, 0]
    return -jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * w @ w
