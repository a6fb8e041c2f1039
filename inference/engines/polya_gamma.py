"""Pólya-Gamma variates ``PG(b, c)`` in pure JAX, for the logistic and negative-binomial
augmentations of the Gibbs engine (:mod:`.gibbs_augment`).

``ω ~ PG(b, c)`` (Polson, Scott & Windle 2013, Def. 1) is the law of
``(1/(2π²)) Σ_{k≥1} g_k / ((k − ½)² + c²/(4π²))`` with ``g_k ~ Gamma(b, 1)`` independent; it makes
``(e^ψ)^a / (1 + e^ψ)^b = 2^{-b} e^{κψ} E[e^{-ωψ²/2}]``, ``κ = a − b/2``, ``ω ~ PG(b, 0)`` (their
Theorem 1), which is what turns a logistic or negative-binomial likelihood into a Gaussian one in
``ψ`` given ``ω``. Its moments (their Sec. 2 and the cumulant generating function
``−b log cosh(√(t/2))`` tilted by ``c``):

* ``E ω = b/(2c) tanh(c/2)`` (``b/4`` at ``c = 0``);
* ``Var ω = b (sinh c − c) / (4 c³ cosh²(c/2))`` (``b/24`` at ``c = 0``).

The samplers:

* ``b = 1``: Devroye's alternating-series method as Polson, Scott & Windle (2013, Sec. 4 and
  their Algorithm 1) give it for ``J*(1, z)`` with ``PG(1, c) = J*(1, c/2)/4``: a proposal that is
  an exponential right of ``t = 0.64`` and an inverse Gaussian ``IG(1/z, 1)`` left of it (a
  ``1/χ²₁`` tilted by ``e^{-z²x/2}`` when ``1/z > t``), accepted by the alternating partial sums
  of the density's series (the coefficients ``a_n(x)`` of their eq. 15). Exact: no truncation,
  the acceptance is decided by bounds that bracket the density. The mean acceptance is above
  0.9992 for every ``c`` (their Sec. 4.2).
* integer ``b``: the sum of ``b`` independent ``PG(1, c)`` (the defining series is infinitely
  divisible in ``b``). Exact. The work grows linearly in ``b`` (a lane loops ``b`` times).
* real ``b > 0``: ``PG(⌊b⌋, c)`` as above plus an independent ``PG(h, c)``, ``h = b − ⌊b⌋``, drawn
  from the defining series with its first ``terms`` Gamma terms exact and the rest replaced by one
  Gamma variate with the tail's mean and variance (both known in closed form: the moments above
  less the first ``terms`` summands). Not exact: the law differs from ``PG(h, c)`` only through
  the third and higher cumulants of a tail whose variance is below ``h / (12 π⁴ terms³)``
  (``3·10⁻⁸ h`` at the default ``terms = 32``, against ``Var PG(h, 0) = h/24``), and its third
  cumulant below ``h / (20 π⁶ terms⁵)`` (``10⁻¹² h``): far below what any Monte Carlo check
  can see. ``method="gamma"`` draws the whole of ``PG(b, c)`` that way (a cost of ``terms``
  Gamma variates whatever ``b``, for large ``b`` where the exact sum loops ``b`` times).
* ``b`` above :data:`MAX_EXACT_SHAPE`: the series for the whole of ``b`` under either method. The
  exact samplers we know cost ``O(b)`` at large ``b`` (Windle, Polson & Scott 2014 give exact ones
  for ``b`` up to a few, and only a saddle-point and a normal approximation above), so the exact
  sum would loop ``b`` times (and ``int32`` saturates at ``2³¹``: a loop that does not end in
  practice). The series' error is relatively smallest there: its tail's third cumulant,
  ``< b/(20 π⁶ terms⁵)``, against ``(Var ω)^{3/2} = (b/24)^{3/2}`` at ``c = 0`` is a skewness error
  below ``10⁻¹²`` at ``b = 2²⁰``, falling as ``b^{-1/2}``. The negative binomial's Gibbs move
  bounds its dispersion far below it, so only counts above a million reach it there.

Everything is jit-able and vmap-able: each variate is one lane with its own key, its loops are
``lax.while_loop`` (a batch runs until its last lane has accepted), its shapes fixed.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import log_ndtr, ndtri

#: Devroye's switch point ``t`` between the left (inverse-Gaussian) and right (exponential)
#: pieces of ``J*(1, z)`` (Polson, Scott & Windle 2013, Sec. 4.1: the ``t`` that maximizes the
#: acceptance rate)
TRUNC = 0.64
#: the sampling methods of :func:`polya_gamma`
PG_METHODS = ("devroye", "gamma")
#: Gamma terms drawn exactly by the series method before the moment-matched tail
DEFAULT_TERMS = 32
#: the largest shape ``b`` whose whole part :func:`polya_gamma`'s Devroye method sums exactly
#: (``2²⁰ ≈ 10⁶`` variates, a lane's loop); above it the lane takes the series (module docstring)
MAX_EXACT_SHAPE = 2 ** 20

_PI2 = math.pi ** 2


def polya_gamma_mean(b, c):
    """``E PG(b, c) = b/(2c) tanh(c/2)``, and its limit ``b/4`` at ``c = 0`` (PSW 2013, Sec. 2)."""
    c = jnp.abs(jnp.asarray(c, dtype=jnp.float64))
    small = c < 1e-4
    safe = jnp.where(small, 1.0, c)
    return b * jnp.where(small, 0.25 - c * c / 48.0, jnp.tanh(0.5 * safe) / (2.0 * safe))


def polya_gamma_var(b, c):
    """``Var PG(b, c) = b (sinh c − c) / (4 c³ cosh²(c/2))``, written as
    ``b (1 − e^{-2c} − 2c e^{-c}) / (2 c³ (1 + e^{-c})²)`` so that it neither overflows at large
    ``c`` nor cancels at moderate ``c``; the series ``b (1/24 − c²/120)`` below ``c = 10⁻²``."""
    c = jnp.abs(jnp.asarray(c, dtype=jnp.float64))
    small = c < 1e-2
    s = jnp.where(small, 1.0, c)
    e = jnp.exp(-s)
    direct = (-jnp.expm1(-2.0 * s) - 2.0 * s * e) / (2.0 * s ** 3 * (1.0 + e) ** 2)
    return b * jnp.where(small, 1.0 / 24.0 - c * c / 120.0, direct)


# --------------------------------------------------------------------------------------------
# b = 1: Devroye's method for J*(1, z), z = |c|/2, PG(1, c) = J*(1, z)/4
# --------------------------------------------------------------------------------------------

def _uniforms(key, k):
    """``k`` uniforms on ``(0, 1)`` from one key (``U[0, 1)`` with its 0, of probability
    ``2^{-53}``, moved to ``2^{-54}``: the exponentials ``-log u`` and normals ``Φ⁻¹(u)`` stay finite)."""
    u = jax.random.uniform(key, (k,), dtype=jnp.float64)
    return jnp.where(u > 0, u, 2.0 ** -54)


def _coef(n, x):
    """The ``n``-th coefficient ``a_n(x)`` of the series of ``J*(1)``'s density (PSW 2013, eq. 15):
    ``π(n + ½)(2/(πx))^{3/2} e^{-2(n+½)²/x}`` for ``x ≤ t`` and ``π(n + ½) e^{-(n+½)²π²x/2}`` above;
    0 at ``x = 0``."""
    k = (n + 0.5) * math.pi
    xs = jnp.maximum(x, 1e-300)
    left = jnp.exp(jnp.log(k) - 1.5 * jnp.log(0.5 * math.pi * xs) - 2.0 * (n + 0.5) ** 2 / xs)
    right = k * jnp.exp(-0.5 * k * k * xs)
    return jnp.where(x > TRUNC, right, jnp.where(x > 0, left, 0.0))


def _right_mass(z):
    """The probability ``p/(p + q)`` that Devroye's proposal takes its right (exponential) piece:
    ``p = π/(2K) e^{-Kt}``, ``q = 2 e^{-z} P(IG(1/z, 1) < t)``, ``K = π²/8 + z²/2``, computed from
    ``q/p`` in log space (the inverse-Gaussian CDF as two normal CDFs)."""
    t = TRUNC
    fz = _PI2 / 8.0 + 0.5 * z * z
    root = math.sqrt(1.0 / t)
    x0 = jnp.log(fz) + fz * t
    xb = x0 - z + log_ndtr(root * (t * z - 1.0))
    xa = x0 + z + log_ndtr(-root * (t * z + 1.0))
    q_over_p = 4.0 / math.pi * (jnp.exp(xb) + jnp.exp(xa))
    return 1.0 / (1.0 + q_over_p)


def _left_attempt(u, z):
    """One attempt at a draw from ``IG(1/z, 1)`` truncated to ``(0, t)`` from three uniforms:
    returns ``(x, landed)``. When ``1/z > t`` (PSW 2013, Sec. 4): ``x = t/(1 + tE₁)²`` (a ``1/χ²₁``
    truncated to ``(0, t)``, landed when ``E₁² ≤ 2E₂/t``) kept with probability ``e^{-z²x/2}``;
    otherwise Michael, Schucany & Haas's (1976) ``IG(1/z, 1)`` variate, landed when below ``t``."""
    t = TRUNC
    levy = z < 1.0 / t
    e1, e2 = -jnp.log(u[0]), -jnp.log(u[1])
    x_levy = t / (1.0 + t * e1) ** 2
    ok_levy = (e1 * e1 <= 2.0 * e2 / t) & (u[2] <= jnp.exp(-0.5 * z * z * x_levy))
    mu = 1.0 / jnp.where(levy, 1.0, z)
    mu_y = mu * ndtri(u[0]) ** 2
    x_ig = mu + 0.5 * mu * mu_y - 0.5 * mu * jnp.sqrt(4.0 * mu_y + mu_y * mu_y)
    x_ig = jnp.where(u[1] > mu / (mu + x_ig), mu * mu / x_ig, x_ig)
    return jnp.where(levy, x_levy, x_ig), jnp.where(levy, ok_levy, x_ig < t)


def _series_accepts(x, u):
    """Devroye's alternating-series test: with ``S_0 = a_0(x)`` and ``Y = u S_0``, accept at the
    first odd ``n`` with ``Y ≤ S_n`` and reject at the first even ``n`` with ``Y > S_n``."""
    s0 = _coef(0, x)
    y = u * s0

    def cond(s):
        return ~s[2]

    def body(s):
        n, total, _, _ = s
        n = n + 1
        odd = (n % 2) == 1
        total = jnp.where(odd, total - _coef(n, x), total + _coef(n, x))
        accept = odd & (y <= total)
        reject = (~odd) & (y > total)
        return n, total, accept | reject, accept

    return lax.while_loop(cond, body, (0, s0, jnp.bool_(False), jnp.bool_(False)))[3]


def _pg_integer_lane(key, m, c):
    """The sum of ``m`` independent ``PG(1, c)`` variates (scalars; ``m`` a whole number ≥ 0), each
    by Devroye's method (PSW 2013, Algorithm 1) on ``J*(1, |c|/2)``, ``PG(1, c) = J*/4``. Exact.

    One flat loop, one step per proposal attempt, so that a batch of lanes runs about as many
    steps as its slowest lane needs, not a product of nested loops' maxima. A lane's phase: 0, a
    new proposal (the exponential piece right of ``t`` with probability ``p/(p+q)``, else a first
    attempt at the left piece); 1, a left attempt after one that did not land. A proposal that
    lands goes to the alternating-series test; accepted, it is added and ``m`` counts down."""
    z = 0.5 * jnp.abs(c)
    fz = _PI2 / 8.0 + 0.5 * z * z
    mass = _right_mass(z)

    def cond(s):
        return s[1] > 0

    def body(s):
        key, left, phase, total = s
        key, sub = jax.random.split(key)
        u = _uniforms(sub, 6)
        new = phase == 0
        right = new & (u[0] < mass)
        x_left, landed = _left_attempt(u[1:4], z)
        x = jnp.where(right, TRUNC - jnp.log(u[4]) / fz, x_left)
        proposed = right | landed
        accept = proposed & _series_accepts(x, u[5])
        left = jnp.where(accept, left - jnp.int32(1), left)
        total = jnp.where(accept, total + 0.25 * x, total)
        phase = jnp.where(proposed, jnp.int32(0), jnp.int32(1))  # a landed proposal, accepted or not, ends the attempt
        return key, left, phase, total

    init = (key, jnp.asarray(m, dtype=jnp.int32), jnp.int32(0), jnp.float64(0.0))
    return lax.while_loop(cond, body, init)[3]


# --------------------------------------------------------------------------------------------
# real b: the defining Gamma series with a moment-matched tail
# --------------------------------------------------------------------------------------------

def _series_weights(c, terms):
    """``w_k = 1/(2π²((k − ½)² + c²/(4π²)))``, ``k = 1..terms``: ``PG(b, c) = Σ w_k g_k``."""
    k = jnp.arange(1, terms + 1, dtype=jnp.float64)
    return 1.0 / (2.0 * _PI2 * ((k - 0.5) ** 2 + c * c / (4.0 * _PI2)))


def _pg_series(key, b, c, terms):
    """``PG(b, c)`` (scalars) from the defining series: ``terms`` Gamma(b) summands drawn exactly and
    the rest as one Gamma variate with the tail's mean ``b(E PG(1,c) − Σ w_k)`` and variance
    ``b(Var PG(1,c) − Σ w_k²)``. 0 when ``b = 0``."""
    w = _series_weights(c, terms)
    bpos = jnp.where(b > 0, b, 1.0)
    t_mean = jnp.maximum(bpos * (polya_gamma_mean(1.0, c) - jnp.sum(w)), 1e-300)
    t_var = jnp.maximum(bpos * (polya_gamma_var(1.0, c) - jnp.sum(w * w)), 1e-300)
    # one Gamma call: the terms' shapes b and the tail's shape mean²/var, scaled by w and var/mean
    shapes = jnp.append(jnp.full(terms, bpos), t_mean * t_mean / t_var)
    scales = jnp.append(w, t_var / t_mean)
    total = jnp.sum(scales * jax.random.gamma(key, shapes, dtype=jnp.float64))
    return jnp.where(b > 0, total, 0.0)


def _check_args(b, c, method, terms):
    if method not in PG_METHODS:
        raise ValueError(f"method must be one of {PG_METHODS}, got {method!r}")
    if int(terms) != terms or terms < 1:
        raise ValueError(f"terms must be a positive integer, got {terms!r}")
    for name, value in (("b", b), ("c", c)):
        if isinstance(value, jax.core.Tracer):
            continue
        arr = np.asarray(value, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"the Pólya-Gamma parameter {name} must be finite")
        if name == "b" and np.any(arr <= 0):
            raise ValueError(f"the Pólya-Gamma shape b must be > 0, got min {arr.min()}")


def polya_gamma(key, b, c, *, method="devroye", terms=DEFAULT_TERMS):
    """Draw ``ω ~ PG(b, c)`` elementwise over the broadcast shape of ``b`` and ``c``.

    ``method="devroye"`` (default): exact for integer ``b`` (a sum of ``b`` Devroye ``PG(1, c)``
    variates, PSW 2013 Sec. 4); for non-integer ``b`` the fractional part is the series with a
    moment-matched tail (module docstring: an error only in cumulants of order ≥ 3 of a tail of
    variance below ``3·10⁻⁸ b`` at ``terms = 32``). ``method="gamma"``: the series for the whole
    of ``b`` (cost ``terms`` Gamma variates per element, whatever ``b``).
    ``b > 0`` and finite ``c`` (checked when they are concrete, a ``ValueError`` otherwise; traced
    ones out of range give NaN in their elements). The exact sum loops ``⌊b⌋`` times in a lane; an
    element with ``b`` above :data:`MAX_EXACT_SHAPE` takes the series whatever ``method``.
    Each element draws from its own key (``jax.random.split(key, size)``), so the result does not
    depend on how the elements are batched by the caller's ``vmap``. jit-able; ``method`` and
    ``terms`` are static.
    """
    _check_args(b, c, method, terms)
    b = jnp.asarray(b, dtype=jnp.float64)
    c = jnp.asarray(c, dtype=jnp.float64)
    shape = jnp.broadcast_shapes(b.shape, c.shape)
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return jnp.zeros(shape, dtype=jnp.float64)
    bf = jnp.broadcast_to(b, shape).reshape(-1)
    cf = jnp.broadcast_to(c, shape).reshape(-1)
    # traced parameters are not checked: a non-finite c or b, or b ≤ 0, gives NaN, never a loop
    # that does not end (the loops run on a harmless stand-in)
    # (b's stand-in depends on b alone: under a vmap over chains b stays unbatched, and so does the
    # branch below that skips the series when no b is fractional)
    bad_b = ~(jnp.isfinite(bf) & (bf > 0))
    bad_c = ~jnp.isfinite(cf)
    bad = bad_b | bad_c
    bf = jnp.where(bad_b, 1.0, bf)
    cf = jnp.where(bad_c, 0.0, cf)
    k_int, k_frac = jax.random.split(key)
    k_int = jax.random.split(k_int, size)
    k_frac = jax.random.split(k_frac, size)
    series = jax.vmap(lambda k, bb, cc: _pg_series(k, bb, cc, int(terms)))
    if method == "gamma":
        return jnp.where(bad, jnp.nan, series(k_frac, bf, cf)).reshape(shape)
    huge = bf > MAX_EXACT_SHAPE  # the series for the whole of b (a sum of b Devroye variates would not end)
    whole = jnp.where(huge, 0.0, jnp.floor(bf))
    frac = jnp.where(huge, bf, bf - whole)
    out = jax.vmap(_pg_integer_lane)(k_int, whole.astype(jnp.int32), cf)
    # the series only where some b is fractional or huge (a batch-level branch: all-integer b draws no Gamma)
    out = out + lax.cond(jnp.any(frac > 0), series, lambda k, bb, cc: jnp.zeros_like(bb), k_frac, frac, cf)
    return jnp.where(bad, jnp.nan, out).reshape(shape)
