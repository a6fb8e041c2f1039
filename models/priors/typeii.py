"""The hierarchies of the sequential type-II engine (``sparsebayes.inference.engines.typeii``): ARD (the RVM),
the σ²-scaled Laplace (BLS) and the Laplace hierarchy on the variances (FLAP, FLAPσ).

The engine works with the prior variance ``v_i`` of each weight: ``v_i = 1/α_i`` (RVM),
``v_i = γ_i`` (FLAP), ``v_i = σ² τ_i`` (BLS, 004 eq. 6). For every hierarchy the part of the
objective that depends on one ``v_i`` (004 eq. 14) is

    ℓ_i(v) = ½ [ −log(1 + v s_i) + q_i² v / (1 + v s_i) ] − κ v,

with ``s_i, q_i`` of 004 eq. 15 and a linear penalty ``κ`` that is all a hierarchy contributes:
``κ = 0`` for ARD (flat hyperprior, Tipping & Faul 2003), ``κ = λ/2`` for FLAP
(``γ_i ~ Exp(λ/2)``, Babacan et al. 2010), ``κ = λ/(2σ²)`` for BLS (``τ_i ~ Exp(λ/2)`` with
``v = σ²τ``, 004 eq. 7). Its maximiser (:func:`optimal_variance`, the per-basis optimum, the
same function of ``κ`` for every hierarchy) is 004 eq. 16 for BLS, ``α = s²/(q² − s)`` for the
RVM and Babacan et al.'s eq. for FLAP; it is positive exactly when ``q_i² − s_i > 2κ`` (for BLS:
``q_i² − s_i > λ σ⁻²``), otherwise the basis function is pruned.

The type-II capability (``"type2"`` in :data:`sparsebayes.models.priors.CAPABILITIES`): a
hierarchy object has

* ``typeii_penalty(lam, noise_var) -> κ``;
* ``typeii_update_lambda(sum_var, noise_var, n_active) -> λ`` (004 eq. 17; Babacan et al.'s update);
* ``typeii_log_hyperprior(sum_var, lam, noise_var, n_active)``: the prior terms of the objective
  (004 eq. 13: ``A log(λ/2) − λ Σ τ_i / 2 + log p(λ) + log p(σ²)``); normalising constants of
  improper hyperpriors (a zero shape or rate) are dropped;
* ``typeii_log_variance_prior(sum_var, lam, noise_var, n_active)``: the same terms without
  ``log p(σ²)``, what the hierarchy adds to the Laplace evidence of a likelihood with no noise
  variance (:mod:`sparsebayes.inference.engines.typeii_laplace`, where ``σ² = 1``: BLS's
  ``v_i = τ_i`` and its ``κ = λ/2``, FLAP's);
* two static flags, ``lambda_update`` (how a move is scored, below) and ``noise_update``:
  ``"eq18"`` (BLS: σ² by 004 eq. 18 with τ held fixed, its exact maximiser),
  ``"variances-fixed"`` (σ² with the prior variances held fixed, Tipping & Faul's update: RVM,
  FLAPσ) or ``"fixed"`` (FLAP).

The objects are frozen dataclasses registered as pytrees whose hyperparameters (``a, b, c, d``)
are leaves and whose flags are static data: a compiled fit is reused for every object of the same
class and flags, whatever their hyperparameters. :meth:`~ARDPrior.replace` gives the same
hierarchy with other flags (a ``ValueError`` names a flag the hierarchy does not take).

Why FLAP's hierarchy is not :class:`~sparsebayes.models.priors.LaplacePrior`. FLAP's
``γ_i ~ Exp(λ/2)`` is the Laplace hierarchy of 002 eq. 10 with ``γ = λ``
(:meth:`LaplaceVariancePrior.laplace` converts a fitted λ to that object). LaplacePrior is a
NamedTuple whose fields are all traced by the EM engine, so it cannot carry the two static flags,
and its hyperprior must be proper (``b > 0``: for EM's joint MAP over (β, γ) a flat one is
unbounded) where type-II integrates the weights out and takes the paper's flat ``a = b = 0``.

Which τ_i the exponential prior counts. Eq. 13 as printed counts all N candidates; with the
flat ``p(λ) ∝ 1/λ`` that objective is unbounded above (all τ_i → 0 with λ = 2(N−1)/Στ → ∞
sends ``N log λ`` to +∞), and a sequential ascent of it collapses to a single basis function.
Like Babacan et al.'s implementation we count the ``A`` basis functions *in the model*:
``λ = 2(A + a − 1)/(Σ_A τ_i + 2b)``, which is 0 while one basis is in (the paper's ``λ = 0``
start, Algorithm 1).

How a move is scored (``lambda_update``). ``"algorithm1"``: 004 Algorithm 1 (and Babacan et
al.) take each move at the current λ — eq. 16, scored by ``ℓ_i`` at that λ — and then update λ
by eq. 17. It reproduces the paper (on diabetes it zeroes exactly age, ldl and tch, as 004
Table 6), but it is not an ascent of any one objective: a move that changes ``A`` also moves
``A log(λ/2)``, which it ignores, and it can end in a limit cycle of moves that each gain
< 1e-6 nats at the current λ (the estimators stop it with a gain tolerance of 1e-5).
``"profiled"``: every move scored with λ re-maximised, an exact ascent (``L`` never decreases),
which charges each added basis ``log(λ/2)``: for BLS it ends sparser (on diabetes it keeps only
bmi, map and ltg, at an ``L`` 3.8 nats above the paper's support). FLAP with its noise fixed is
profiled by default: Algorithm 1 did not settle there (still adding kernels after 20,000 moves
on a 60-point sinc) while the profiled ascent converges with the paper's errors on sinc. ARD has
no λ: both ways take the same steps, and ``"algorithm1"`` is the cheaper.

The noise prior is ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (004 eq. 9); ``c = d = 0`` is the
paper's ``1/σ²``, and ARD's default ``c = -1, d = 0`` is the flat prior of plain type-II
maximum likelihood (Tipping & Faul, 2003).
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln, xlogy

from sparsebayes.models.priors import LaplacePrior

_TINY = 1e-300

#: The ways a move may be scored (module docstring).
LAMBDA_UPDATES = ("algorithm1", "profiled")


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


def _typeii_hierarchy(cls):
    """A frozen dataclass with the hyperparameters as pytree leaves and the flags as static data,
    (registered, with the other built-ins, by :data:`sparsebayes.models.priors.BUILT_IN`)."""
    cls = dataclasses.dataclass(frozen=True)(cls)
    flags = ("lambda_update", "noise_update")
    data = [f.name for f in dataclasses.fields(cls) if f.name not in flags]
    # the class is in the static data: JAX compares two dataclass nodes by their static data alone, so
    # hierarchies with equal flags (FLAPσ, BLS "variances-fixed") could share a compiled program
    aux = lambda p: (cls, *(getattr(p, f) for f in flags))  # noqa: E731
    jax.tree_util.register_pytree_with_keys(
        cls, lambda p: ([(jax.tree_util.GetAttrKey(k), getattr(p, k)) for k in data], aux(p)),
        lambda a, leaves: cls(**dict(zip(data, leaves)), **dict(zip(flags, a[1:]))),
        flatten_func=lambda p: ([getattr(p, k) for k in data], aux(p)))
    return cls


class _TypeIIBase:
    """What the three hierarchies share: flag validation, :meth:`replace` and ``profile_lambda``."""

    #: The values ``noise_update`` may take for this hierarchy (its default first).
    NOISE_UPDATES = ()

    #: Whether the hierarchy has a rate ``λ`` on the prior variances that type-II estimates (the
    #: estimators report it as ``gamma_`` and its square root ``lam_``); ARD has none.
    has_rate = False

    def __post_init__(self):
        name = type(self).__name__
        if self.lambda_update not in LAMBDA_UPDATES:
            raise ValueError(f"{name}.lambda_update must be one of {LAMBDA_UPDATES}, got {self.lambda_update!r}")
        if self.noise_update not in self.NOISE_UPDATES:
            raise ValueError(f"{name}.noise_update must be one of {self.NOISE_UPDATES}, got {self.noise_update!r}")

    def replace(self, **changes):
        """The same hierarchy with the given fields changed (``None`` values are left as they are)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def profile_lambda(self):
        """Whether moves are scored with λ re-maximised (``lambda_update == "profiled"``)."""
        return self.lambda_update == "profiled"

    def typeii_noise_prior(self):
        """``(c, d)`` of ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (004 eq. 9), for the σ² update."""
        return self.c, self.d


@_typeii_hierarchy
class ARDPrior(_TypeIIBase):
    """Automatic relevance determination, the RVM's prior (Tipping & Faul 2003): ``w_i ~ N(0, α_i⁻¹)``
    with a flat hyperprior on ``α_i``; no penalty (``α_i = s_i²/(q_i² − s_i)``).

    ``c, d``: the noise prior (module docstring; ``c = -1, d = 0`` flat). No λ, so a move scored at
    the current λ is already the exact change of ``L`` and ``lambda_update="algorithm1"``: the
    profiled scoring takes the same steps at a quarter more cost per step.
    """

    c: float = -1.0
    d: float = 0.0
    lambda_update: str = "algorithm1"
    noise_update: str = "variances-fixed"

    name = "ard"
    NOISE_UPDATES = ("variances-fixed", "fixed")

    def typeii_penalty(self, lam, noise_var):
        """``κ = 0``: the flat hyperprior puts no linear penalty on the variances."""
        return jnp.zeros_like(noise_var)

    def typeii_update_lambda(self, sum_var, noise_var, n_active):
        """``λ = 0``: ARD has no rate parameter."""
        return jnp.zeros_like(noise_var)

    def typeii_log_hyperprior(self, sum_var, lam, noise_var, n_active):
        """``log p(σ²)`` (004 eq. 9 with ``c, d``); the flat variance hyperprior adds nothing."""
        return _log_noise_prior(noise_var, self.c, self.d)

    def typeii_log_variance_prior(self, sum_var, lam, noise_var, n_active):
        """0: the flat hyperprior on each ``α_i`` adds no term to ``L``."""
        return jnp.zeros_like(noise_var)


@dataclasses.dataclass(frozen=True)
class _ExponentialVariances(_TypeIIBase):
    """What BLS and FLAP share: exponential prior variables ``Exp(λ/2)`` (``τ_i`` for BLS, ``γ_i`` for
    FLAP; :meth:`_sum_exponential` gives their sum from the variances ``v_i``), ``λ ~ Gamma(a, b)``
    (004 eq. 8) and ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (004 eq. 9); flat ``a = b = c = d = 0`` by
    default. The subclasses give their flags' defaults, ``typeii_penalty`` and :meth:`_sum_exponential`
    (this class is not a hierarchy: it is neither registered nor a pytree of its own)."""

    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    lambda_update: str = "algorithm1"
    noise_update: str = ""

    has_rate = True

    def _sum_exponential(self, sum_var, noise_var):
        """The sum of the exponential variables over the active set, from ``Σ v_i`` and σ²."""
        raise NotImplementedError

    def typeii_update_lambda(self, sum_var, noise_var, n_active):
        """``λ = 2(A + a − 1)/(Σ τ_i + 2b)`` over the exponential variables (004 eq. 17; Babacan et
        al.'s update on ``γ_i``)."""
        return _exponential_lambda(self._sum_exponential(sum_var, noise_var), n_active, self.a, self.b)

    def typeii_log_variance_prior(self, sum_var, lam, noise_var, n_active):
        """``A log(λ/2) − λΣτ_i/2 + log p(λ)`` (004 eq. 13, the prior terms of the variances and of λ,
        without ``log p(σ²)``): what the hierarchy adds to ``L`` under a likelihood with no noise
        variance (the Laplace path, :mod:`sparsebayes.inference.engines.typeii_laplace`, ``σ² = 1``)."""
        return _exponential_terms(self._sum_exponential(sum_var, noise_var), lam, n_active, self.a, self.b)

    def typeii_log_hyperprior(self, sum_var, lam, noise_var, n_active):
        """``A log(λ/2) − λΣτ_i/2 + log p(λ)`` (004 eq. 13, the prior terms), plus ``log p(σ²)``
        unless σ² is fixed (``noise_update="fixed"``: FLAP, whose σ² is not a parameter of ``L``)."""
        terms = self.typeii_log_variance_prior(sum_var, lam, noise_var, n_active)
        if self.noise_update == "fixed":
            return terms
        return terms + _log_noise_prior(noise_var, self.c, self.d)


@_typeii_hierarchy
class ScaledLaplacePrior(_ExponentialVariances):
    """The Bayesian Lasso hierarchy of BLS (004 eqs. 5–9): ``w_i ~ N(0, σ²τ_i)``, ``τ_i ~ Exp(λ/2)``,
    ``λ ~ Gamma(a, b)``, ``σ² ~ InvGamma(c, d)``; flat ``a = b = c = d = 0`` by default.

    Under type-II: ``τ_i`` by 004 eq. 16, ``λ`` by eq. 17, and σ² by eq. 18 (``noise_update="eq18"``)
    or with the variances ``σ²τ_i`` held fixed (``"variances-fixed"``, Tipping & Faul's update).
    Eq. 18's ``yᵀC̃⁻¹y`` counts the prior term ``Σ μ_i²/τ_i`` beside the residual, so with many
    kernels in the model its σ² is larger and fewer candidates pass ``q_i² − s_i > λσ⁻²``; 004's
    kernel tables (bump: BLS with more kernels than the RVM and σ̂ below it) look like the second
    update, its Simulations 1–2 like either, and its Simulation 3 (p > N) like the second only
    (``bls-table5-sim3``: with eq. 18 σ̂ ≈ 12.4 for σ = 1 and 22.2 nonzeros kept; with the second
    0.20 and 42.7, the paper 47.2). The second is not a maximiser of BLS's ``L``: with ``v_i``
    fixed, ``τ_i = v_i/σ²`` and the prior term ``−λΣ_i v_i/(2σ²)`` move with σ², which the update
    ignores, so ``L`` can fall at its σ² steps.
    """

    lambda_update: str = "algorithm1"
    noise_update: str = "eq18"

    name = "scaled_laplace"
    NOISE_UPDATES = ("eq18", "variances-fixed")

    def typeii_penalty(self, lam, noise_var):
        """``κ = λ/(2σ²)``: ``τ_i ~ Exp(λ/2)`` on ``v_i = σ²τ_i`` (004 eq. 7)."""
        return lam / (2.0 * noise_var)

    def _sum_exponential(self, sum_var, noise_var):
        """``Σ τ_i = Σ v_i / σ²`` (004 eq. 6)."""
        return sum_var / noise_var


@_typeii_hierarchy
class LaplaceVariancePrior(_ExponentialVariances):
    """The Laplace hierarchy with its rate estimated by type-II (FLAP, Babacan et al. 2010):
    ``w_i ~ N(0, γ_i)``, ``γ_i ~ Exp(λ/2)``, ``λ ~ Gamma(a, b)``.

    ``noise_update="fixed"`` (default): FLAP, σ² held at its starting value, moves scored with λ
    re-maximised (``lambda_update="profiled"``, module docstring). ``"variances-fixed"``: FLAPσ
    (004 Sec. 3), σ² re-estimated under ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``, usually with
    ``lambda_update="algorithm1"`` as the paper. The hierarchy is :class:`LaplacePrior`'s with
    ``γ = λ`` (:meth:`laplace`); it is an object of its own for the reasons the module gives.
    """

    lambda_update: str = "profiled"
    noise_update: str = "fixed"

    name = "laplace_variance"
    NOISE_UPDATES = ("fixed", "variances-fixed")

    @staticmethod
    def laplace(lam):
        """The :class:`LaplacePrior` with the rate ``λ`` (a fitted ``lam_``): ``γ = λ``, since both
        write ``p(γ_i) = (λ/2) exp(−λγ_i/2)`` (002 eq. 10)."""
        return LaplacePrior(float(lam))

    def typeii_penalty(self, lam, noise_var):
        """``κ = λ/2``: ``γ_i ~ Exp(λ/2)`` on the variances themselves (Babacan et al. 2010)."""
        return 0.5 * lam * jnp.ones_like(noise_var)

    def _sum_exponential(self, sum_var, noise_var):
        """``Σ γ_i = Σ v_i``: the exponential prior is on the variances themselves."""
        return sum_var


#: The type-II hierarchies by the names the estimators take (``"laplace"`` is FLAP's
#: :class:`LaplaceVariancePrior` under type-II, as in :data:`sparsebayes.inference.estimators.sparse_estimators.TYPEII_PAPER_ESTIMATORS`).
TYPEII_NAMES = {"ard": ARDPrior, "laplace": LaplaceVariancePrior, "laplace_variance": LaplaceVariancePrior,
                "scaled_laplace": ScaledLaplacePrior}


def typeii_hierarchy(prior):
    """The type-II hierarchy object ``prior`` names (:data:`TYPEII_NAMES`, at its defaults) or is; a
    ``ValueError`` naming the problem for any other value (EM's :class:`LaplacePrior`, whose γ is fixed
    or under a proper hyperprior, is not FLAP's hierarchy: the module docstring says why)."""
    if isinstance(prior, str):
        if prior not in TYPEII_NAMES:
            raise ValueError(f"prior must be one of {sorted(TYPEII_NAMES)} or a type-II hierarchy object "
                             f"(ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior), got {prior!r}")
        return TYPEII_NAMES[prior]()
    if isinstance(prior, LaplacePrior):
        raise ValueError("type-II estimates the rate λ of the Laplace hierarchy (FLAP): LaplacePrior is EM's object, "
                         "with a fixed gamma or a proper gamma_prior; give LaplaceVariancePrior(a=..., b=...) or the "
                         "name 'laplace'")
    if not isinstance(prior, _TypeIIBase):
        raise ValueError(f"prior must be one of {sorted(TYPEII_NAMES)} or a type-II hierarchy object (ARDPrior, "
                         f"LaplaceVariancePrior, ScaledLaplacePrior), got {type(prior).__name__}")
    return prior


def check_no_noise_settings(prior, owner):
    """``prior`` (a type-II hierarchy object) for a likelihood without a noise variance (the Laplace path:
    Bernoulli, Poisson, negative binomial, where σ² = 1 in the hierarchy's terms): a ``ValueError``
    naming the fields that set σ²'s prior or update (``c``, ``d``, ``noise_update``) when they differ
    from the class's defaults, since the fit would silently ignore them."""
    default = type(prior)()
    changed = [f"{f}={getattr(prior, f)!r}" for f in ("c", "d", "noise_update")
               if getattr(prior, f) != getattr(default, f)]
    if changed:
        raise ValueError(f"{owner}'s likelihood has no noise variance (σ² = 1 in the hierarchy's terms), so "
                         f"{type(prior).__name__}'s {', '.join(changed)} (the noise prior and its update) would be "
                         "ignored: leave them at their defaults")
    return prior
