"""Prior "rule objects" for the sequential type-II engine (``sparsebayes.inference.typeii``).

The engine works with the prior variance ``v_i`` of each weight: ``v_i = 1/α_i`` (RVM),
``v_i = γ_i`` (FLAP), ``v_i = σ² τ_i`` (BLS, 004 eq. 6). For every prior the part of the
objective that depends on one ``v_i`` (004 eq. 14) is

    ℓ_i(v) = ½ [ −log(1 + v s_i) + q_i² v / (1 + v s_i) ] − κ v,

with ``s_i, q_i`` of 004 eq. 15 and a linear penalty ``κ`` that is all a prior contributes:
``κ = 0`` for the RVM (flat hyperprior, Tipping & Faul 2003), ``κ = λ/2`` for FLAP
(``γ_i ~ Exp(λ/2)``, Babacan et al. 2010), ``κ = λ/(2σ²)`` for BLS (``τ_i ~ Exp(λ/2)`` with
``v = σ²τ``, 004 eq. 7). Its maximiser (:func:`optimal_variance`) is 004 eq. 16 for BLS,
``α = s²/(q² − s)`` for the RVM and Babacan et al.'s eq. for FLAP; it is positive exactly
when ``q_i² − s_i > 2κ`` (for BLS: ``q_i² − s_i > λ σ⁻²``), otherwise the basis function is
pruned.

A rule object is a NamedTuple of hyperparameters with

* ``penalty(lam, noise_var) -> κ``;
* ``update_lambda(sum_var, noise_var, n_active) -> λ`` (004 eq. 17; Babacan et al.'s update);
* ``log_hyperprior(sum_var, lam, noise_var, n_active)``: the prior terms of the objective
  (004 eq. 13: ``A log(λ/2) − λ Σ τ_i / 2 + log p(λ) + log p(σ²)``); normalising constants
  of improper hyperpriors (a zero shape or rate) are dropped;
* a class attribute ``noise_mode``: ``"scaled"`` (BLS: σ² by 004 eq. 18 with τ held
  fixed, which is its exact maximiser), ``"free"`` (RVM, FLAPσ: σ² with the weight variances
  held fixed) or ``"fixed"`` (FLAP).

Which τ_i the exponential prior counts. Eq. 13 as printed counts all N candidates; with the
flat ``p(λ) ∝ 1/λ`` that objective is unbounded above (all τ_i → 0 with λ = 2(N−1)/Στ → ∞
sends ``N log λ`` to +∞), and a sequential ascent of it collapses to a single basis function
(we observed exactly that). Like Babacan et al.'s implementation we count the ``A`` basis
functions *in the model*: ``λ = 2(A + a − 1)/(Σ_A τ_i + 2b)``, which is 0 while one basis is
in (the paper's ``λ = 0`` start, Algorithm 1).

How a move is scored (``profile_lambda``). 004 Algorithm 1 (and Babacan et al.) take each
move at the current λ — eq. 16, scored by ``ℓ_i`` at that λ — and then update λ by eq. 17:
the default of the BLS and FLAPσ rules (``profile_lambda = False``). It reproduces the paper
(on diabetes it zeroes exactly age, ldl and tch, as 004 Table 6), but it is not an ascent
of any one objective: a move that changes ``A`` also moves ``A log(λ/2)``, which it ignores,
and it can end in a limit cycle of moves that each gain < 1e-6 nats at the current λ (the
estimators stop it with a gain tolerance of 1e-5). :func:`with_lambda_update` with
``"profiled"`` gives the exact ascent instead — every move scored with λ re-maximised, so
``L`` never decreases — which charges each added basis ``log(λ/2)``: for BLS it ends sparser
(on diabetes it keeps only bmi, map and ltg, at an ``L`` 3.8 nats above the paper's
support). FLAP with its noise fixed is profiled by default: Algorithm 1 did not settle
there (still adding kernels after 20,000 moves on a 60-point sinc) while the profiled ascent
converges with the paper's errors on sinc.

The noise prior is ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (004 eq. 9); ``c = d = 0`` is the
paper's ``1/σ²``, and the RVM's default ``c = -1, d = 0`` is the flat prior of plain type-II
maximum likelihood (Tipping & Faul, 2003).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
from jax.scipy.special import gammaln, xlogy

_TINY = 1e-300


def optimal_variance(s, q, kappa):
    """Maximiser over ``v ≥ 0`` of ``ℓ(v) = ½[−log(1+vs) + q²v/(1+vs)] − κv``.

    Setting ``u = 1 + v s``, ``dℓ/dv = 0`` is ``2κu² + s u − q² = 0``, whose positive root
    is written without cancellation as ``u = 2q² / (s + √(s² + 8κq²))``; ``v = (u − 1)/s``
    when ``q² − s > 2κ``, else 0. For BLS (``κ = λ/(2σ²)``, ``v = σ²τ``) this is 004 eq. 16;
    for ``κ = 0`` it is the RVM's ``α = s²/(q² − s)``.
    """
    q2 = q * q
    u = 2.0 * q2 / (s + jnp.sqrt(s * s + 8.0 * kappa * q2))
    keep = q2 - s > 2.0 * kappa
    return jnp.where(keep, jnp.maximum(u - 1.0, 0.0) / s, 0.0)


def variance_objective_change(v_new, v_old, s, q, kappa):
    """``ℓ(v_new) − ℓ(v_old)`` for ``ℓ`` above, the objective's dependence on one prior variance
    (004 eq. 14), written as a multiple of ``d = v_new − v_old``:
    ``½[−log1p(d s/a) + q² d/(a b)] − κ d`` with ``a = 1 + v_old s``, ``b = 1 + v_new s``.

    The difference of the two ``ℓ`` values cancels: at small σ², ``q²v/(1 + vs) ≈ q²/s`` reached
    3e10 on a wide correlated design, where a re-estimate's true gain of ~0 came out as ±8e-6
    (one rounding unit of ``ℓ``) and a converged fit looked as if it had a move left."""
    d = v_new - v_old
    a = 1.0 + v_old * s
    b = 1.0 + v_new * s
    return 0.5 * (-jnp.log1p(d * s / a) + q * q * d / (a * b)) - kappa * d


def _log_noise_prior(noise_var, c, d):
    """``log p(σ²)``, 004 eq. 9, normalising constant kept only when proper."""
    proper = (c > 0) & (d > 0)
    const = jnp.where(proper, c * jnp.log(jnp.where(proper, d, 1.0)) - gammaln(jnp.where(proper, c, 1.0)), 0.0)
    return const - (c + 1.0) * jnp.log(noise_var) - d / noise_var


def _exponential_terms(sum_tau, lam, n_active, a, b):
    """``n log(λ/2) − λΣτ/2 + log Gamma(λ | a, b)`` (004 eq. 13, the τ and λ parts)."""
    proper = (a > 0) & (b > 0)
    const = jnp.where(proper, a * jnp.log(jnp.where(proper, b, 1.0)) - gammaln(jnp.where(proper, a, 1.0)), 0.0)
    return xlogy(n_active + a - 1.0, lam) - n_active * jnp.log(2.0) - 0.5 * lam * sum_tau + const - b * lam


def _exponential_lambda(sum_tau, n_active, a, b):
    """``λ = 2(n + a − 1)/(Σ τ_i + 2b)`` (004 eq. 17; Babacan et al. with ν = 2a = 2b)."""
    return 2.0 * jnp.maximum(n_active + a - 1.0, 0.0) / jnp.maximum(sum_tau + 2.0 * b, _TINY)


class RVMRule(NamedTuple):
    """RVM (Tipping & Faul 2003): no penalty (``α_i = s_i²/(q_i² − s_i)``), σ² re-estimated.

    No λ, so a move scored at the current λ is already the exact change of ``L`` (eq. 16 at
    κ = 0 maximises ``ℓ_i`` over ``v ≥ 0``, deletion included) and ``profile_lambda`` is off:
    the profiled scoring takes the same steps at a quarter more cost per step.
    """

    c: float = -1.0
    d: float = 0.0
    noise_mode = "free"
    profile_lambda = False

    def penalty(self, lam, noise_var):
        """``κ = 0``: the RVM's flat hyperprior puts no linear penalty on the variances."""
        return jnp.zeros_like(noise_var)

    def update_lambda(self, sum_var, noise_var, n_active):
        """``λ = 0``: the RVM has no rate parameter (kept so every rule has the same interface)."""
        return jnp.zeros_like(noise_var)

    def log_hyperprior(self, sum_var, lam, noise_var, n_active):
        """``log p(σ²)`` (004 eq. 9 with ``c, d``); the flat variance hyperprior adds nothing."""
        return _log_noise_prior(noise_var, self.c, self.d)


class BLSRule(NamedTuple):
    """BLS (004): ``τ_i`` by eq. 16, ``λ`` by eq. 17, ``σ²`` by eq. 18; flat ``a=b=c=d=0`` by default."""

    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    noise_mode = "scaled"
    profile_lambda = False

    def penalty(self, lam, noise_var):
        """``κ = λ/(2σ²)``: ``τ_i ~ Exp(λ/2)`` on ``v_i = σ²τ_i`` (004 eq. 7)."""
        return lam / (2.0 * noise_var)

    def update_lambda(self, sum_var, noise_var, n_active):
        """``λ = 2(A + a − 1)/(Σ τ_i + 2b)`` with ``τ_i = v_i/σ²`` (004 eq. 17)."""
        return _exponential_lambda(sum_var / noise_var, n_active, self.a, self.b)

    def log_hyperprior(self, sum_var, lam, noise_var, n_active):
        """``A log(λ/2) − λΣτ_i/2 + log p(λ) + log p(σ²)`` (004 eq. 13, the prior terms)."""
        return _exponential_terms(sum_var / noise_var, lam, n_active, self.a, self.b) + _log_noise_prior(
            noise_var, self.c, self.d
        )


class FLAPRule(NamedTuple):
    """FLAP (Babacan et al. 2010): ``γ_i ~ Exp(λ/2)``, ``λ`` re-estimated, ``σ²`` fixed."""

    a: float = 0.0
    b: float = 0.0
    noise_mode = "fixed"
    profile_lambda = True

    def penalty(self, lam, noise_var):
        """``κ = λ/2``: ``γ_i ~ Exp(λ/2)`` on the variances themselves (Babacan et al. 2010)."""
        return 0.5 * lam * jnp.ones_like(noise_var)

    def update_lambda(self, sum_var, noise_var, n_active):
        """``λ = 2(A + a − 1)/(Σ γ_i + 2b)`` (004 eq. 17 on ``γ_i``; Babacan et al.'s update)."""
        return _exponential_lambda(sum_var, n_active, self.a, self.b)

    def log_hyperprior(self, sum_var, lam, noise_var, n_active):
        """``A log(λ/2) − λΣγ_i/2 + log p(λ)``: no ``σ²`` term, the noise being fixed."""
        return _exponential_terms(sum_var, lam, n_active, self.a, self.b)


class FLAPSigmaRule(NamedTuple):
    """FLAPσ (004 Sec. 3): FLAP with σ² re-estimated under ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``."""

    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    noise_mode = "free"
    profile_lambda = False

    penalty = FLAPRule.penalty
    update_lambda = FLAPRule.update_lambda

    def log_hyperprior(self, sum_var, lam, noise_var, n_active):
        """FLAP's prior terms plus ``log p(σ²)`` (004 eq. 9), σ² being re-estimated."""
        return _exponential_terms(sum_var, lam, n_active, self.a, self.b) + _log_noise_prior(noise_var, self.c, self.d)



@functools.cache
def _variant(base, profile_lambda, noise_mode):
    """The rule class ``base`` with another way of scoring moves and/or of updating σ²."""
    if (base.profile_lambda, base.noise_mode) == (profile_lambda, noise_mode):
        return base
    name = ("Profiled" if profile_lambda else "Algorithm1") + base.__name__
    if noise_mode != base.noise_mode:  # only BLS has another (with_noise_update): the RVM's update
        name += "VariancesFixedNoise"
    return type(name, (base,), {"profile_lambda": profile_lambda, "noise_mode": noise_mode, "_base": base,
                                "__doc__": base.__doc__})


def _base_of(rule):
    """The rule class a variant of :func:`_variant` was made from (the class itself otherwise)."""
    return getattr(type(rule), "_base", type(rule))


def _with(rule, profile_lambda=None, noise_mode=None):
    cls, base = type(rule), _base_of(rule)
    profile_lambda = cls.profile_lambda if profile_lambda is None else profile_lambda
    noise_mode = cls.noise_mode if noise_mode is None else noise_mode
    return _variant(base, profile_lambda, noise_mode)(*rule)


def with_lambda_update(rule, lambda_update):
    """The same rule with moves scored the ``lambda_update`` way.

    ``"algorithm1"``: each move at the current λ, then λ by eq. 17 (004 Algorithm 1);
    ``"profiled"``: every move scored with λ re-maximised, an exact ascent of ``L``;
    ``None``: the rule's default. One class per (rule type, way), so compiled programs are reused.
    """
    if lambda_update is None:
        return rule
    if lambda_update not in ("algorithm1", "profiled"):
        raise ValueError(f"lambda_update must be 'algorithm1', 'profiled' or None, got {lambda_update!r}")
    return _with(rule, profile_lambda=lambda_update == "profiled")


def with_noise_update(rule, noise_update):
    """A BLS rule with σ² re-estimated the ``noise_update`` way.

    ``"eq18"`` (the default of :class:`BLSRule`): 004 eq. 18, σ² maximised with every τ_i held
    fixed, so each prior variance ``σ²τ_i`` scales with it. ``"variances-fixed"``: σ²
    re-estimated with the prior variances ``v_i = σ²τ_i`` held fixed, Tipping & Faul's update
    ``σ² = ‖y − Φμ‖² / (N − Σ_i γ_i)`` as in the RVM (the τ_i then move with σ²). Eq. 18's
    ``yᵀC̃⁻¹y`` counts the prior term ``Σ μ_i²/τ_i`` beside the residual, so with many kernels
    in the model its σ² is larger and fewer candidates pass ``q_i² − s_i > λσ⁻²``;
    004's kernel tables (bump: BLS with more kernels than the RVM and σ̂ below it) look like the
    second update, its Simulations 1–2 like either (the prior term is small there), and its
    Simulation 3 (p > N) like the second only (``bls-table5-sim3``, 2026-11-25: with eq. 18 σ̂ ≈
    12.4 for σ = 1 and 22.2 nonzeros kept; with the second 0.20 and 42.7, the paper 47.2).
    The second is Tipping & Faul's update, not a maximiser of BLS's ``L``: with ``v_i`` fixed,
    ``τ_i = v_i/σ²`` and the prior term ``−λΣ_i v_i/(2σ²)`` move with σ², which the update
    ignores, so ``L`` can fall at its σ² steps (by 0.12 nats in a 40 × 10 check).
    ``None``: the rule's default.
    """
    if noise_update is None:
        return rule
    if noise_update not in ("eq18", "variances-fixed"):
        raise ValueError(f"noise_update must be 'eq18', 'variances-fixed' or None, got {noise_update!r}")
    base = _base_of(rule)
    if base.noise_mode != "scaled":
        raise ValueError(f"noise_update applies to the BLS rule (σ² by Helgøy & Li's eq. 18), not to {base.__name__}")
    return _with(rule, noise_mode="scaled" if noise_update == "eq18" else "free")


def profiled(rule):
    """``with_lambda_update(rule, "profiled")``."""
    return with_lambda_update(rule, "profiled")
