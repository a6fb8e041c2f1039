"""The horseshoe hierarchy (Carvalho, Polson & Scott 2010) as one object.

``β_i | λ_i, τ ~ N(0, v_i)`` with ``v_i = λ_i² τ²``, ``λ_i ~ C⁺(0, 1)`` (half-Cauchy local
scales) and a global scale τ, fixed by default (the EM engine's MAP and the twin that NUTS samples
then share it) or, with ``tau_prior = s``, given the half-Cauchy hyperprior ``τ ~ C⁺(0, s)``
(Carvalho et al. 2010 take ``s = σ``; Gelman 2006 for the half-Cauchy on a scale) and estimated:
by EM's M-step (:meth:`HorseshoePrior.update_shared`), sampled by the twin and by Gibbs. With
``u = β²/(2τ²)`` everything the engines need has a closed form in the
exponential integral ``E₁``:

* the marginal density (Carvalho et al. 2010, Theorem 1)
  ``p(β) = (2π³)^{-1/2} τ⁻¹ eᵘ E₁(u)``;
* the E-step weight ``E[1/v | β] = (e^{-u} / (u E₁(u)) − 1) / τ²``, found by differentiating
  ``log p(β)`` (for a Gaussian scale mixture, ``E[1/v | β] = −p'(β) / (β p(β))``) with
  ``d/du E₁ = −e^{-u}/u``. It tends to ``2/β²`` for ``|β| ≫ τ`` (half the Jeffreys weight) and
  to ∞ as ``β → 0``, so in the EM's finite ``U = diag(u)`` form (002 eqs. 15–16) a weight at
  zero stays at zero.

Numerics: with the scaled integral ``s(u) = eᵘ E₁(u)`` and ``q = u s(u)``, the weight is
``(1 − q)/(q τ²)`` and the EM scale ``τ √(q / (1 − q))``. For large ``u`` both ``eᵘ`` and
``E₁`` leave the floating range and ``1 − q`` cancels, so above :data:`SERIES_FROM` the
asymptotic series ``1 − q = Σ_{k≥1} (−1)^{k+1} k!/uᵏ`` is used (its smallest term at
``u = 40`` is far below the float64 epsilon, 20 terms kept).

The Gibbs conditionals are Makalic & Schmidt's (2016) auxiliary inverse-gamma form:
``λ_i² = 1/Gamma``-draws with ``λ_i² | ν_i, β_i ~ IG(1, 1/ν_i + β_i²/(2τ²))`` and
``ν_i | λ_i² ~ IG(1, 1 + 1/λ_i²)`` (their eqs. 5–6, with β's prior variance not scaled by σ²,
as in the EM model above); with τ estimated, also ``τ² | ξ, β, λ ~ IG((p + 1)/2, 1/ξ + Σ β_i²/(2λ_i²))``
and ``ξ | τ² ~ IG(1, 1/s² + 1/τ²)`` (their eqs. 7–8, ``τ ~ C⁺(0, s)`` as ``τ² | ξ ~ IG(½, 1/ξ)``,
``ξ ~ IG(½, 1/s²)``).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from sparsebayes.models._checks import check_number
from sparsebayes.models._checks import _host_scalar

#: Above this ``u = β²/(2τ²)`` the series for ``1 − u eᵘ E₁(u)`` replaces the direct form.
SERIES_FROM = 40.0
_N_TERMS = 20
#: ``(−1)^{k+1} k!`` for k = 1..20, highest power first, for ``jnp.polyval`` in ``1/u``.
_SERIES = np.array([0.0] + [(-1) ** (k + 1) * math.factorial(k) for k in range(1, _N_TERMS + 1)])[::-1]


#: Terms of the power series of ``E₁`` kept below ``u = 1`` (the last is below 1e-27) and of the
#: continued fraction kept from 1 to :data:`SERIES_FROM` (converged to rounding at ``u = 1``).
_POWER_TERMS = 25
_FRACTION_TERMS = 80


def scaled_exp1(u):
    """``eᵘ E₁(u)`` for ``u > 0`` with a fixed number of operations (no data-dependent loop):
    the power series ``E₁(u) = −γ_E − log u − Σ_{k≥1} (−u)ᵏ/(k·k!)`` up to ``u = 1``, the continued
    fraction ``eᵘ E₁(u) = 1/(u + 1 − 1²/(u + 3 − 2²/(u + 5 − …)))`` above (evaluated from its
    tail). ``jax.scipy.special.exp1`` is not used: its loop over a vector of mixed magnitudes did
    not terminate (JAX 0.10)."""
    small = u <= 1.0
    us = jnp.where(small, u, 0.5)
    term, total = jnp.ones_like(us), jnp.zeros_like(us)
    for k in range(1, _POWER_TERMS + 1):
        term = term * (-us) / k
        total = total + term / k
    power = jnp.exp(us) * (-np.euler_gamma - jnp.log(us) - total)
    uf = jnp.where(small, 2.0, u)
    t = uf + 2 * _FRACTION_TERMS + 1
    for k in range(_FRACTION_TERMS, 0, -1):
        t = uf + 2 * k - 1 - k * k / t
    return jnp.where(small, power, 1.0 / t)


def one_minus_q(u):
    """``(q, 1 − q)`` with ``q = u eᵘ E₁(u)`` ∈ [0, 1), both accurate for every ``u ≥ 0``.

    ``q = 0`` at ``u = 0``; for ``u ≥`` :data:`SERIES_FROM` ``1 − q`` is the asymptotic series
    and ``q`` its complement; below, ``q`` is formed directly (:func:`scaled_exp1`).
    """
    u = jnp.asarray(u, dtype=jnp.result_type(float))
    large = u >= SERIES_FROM
    positive = u > 0
    u_direct = jnp.where(large | ~positive, 1.0, u)
    q_direct = jnp.where(positive, u_direct * scaled_exp1(u_direct), 0.0)
    u_series = jnp.where(large, u, SERIES_FROM)
    t_series = jnp.polyval(_SERIES, 1.0 / u_series)
    t = jnp.where(large, t_series, 1.0 - q_direct)
    q = jnp.where(large, 1.0 - t_series, q_direct)
    return q, t


#: Below this ``u``, ``E₁(u) = −γ_E − log u + O(u)`` (relative error under 1e-13), taken with
#: ``log u`` formed from ``log |β|``: ``β²`` itself underflows long before the density does.
SMALL_U = 1e-12


def log_scaled_exp1(log_u):
    """``log(eᵘ E₁(u))`` from ``log u`` (``log q − log u`` with :func:`one_minus_q`'s ``q``; the
    expansion at 0 below :data:`SMALL_U`); ``+∞`` at ``log u = −∞``."""
    u = jnp.exp(log_u)
    small = u < SMALL_U
    q, _ = one_minus_q(jnp.where(small, 1.0, u))
    direct = jnp.log(q) - jnp.where(small, 0.0, log_u)
    expansion = jnp.log(-np.euler_gamma - jnp.where(small, log_u, -1.0))
    return jnp.where(small, expansion, direct)


class HorseshoePrior(NamedTuple):
    """Horseshoe hierarchy ``β_i ~ N(0, λ_i²τ²)``, ``λ_i ~ C⁺(0, 1)``, global scale ``tau``.

    Parameters
    ----------
    tau : float
        The global scale τ > 0. It sets the size below which weights are shrunk to zero, in the
        units of β (i.e. of ``y`` over those of the features). With ``tau_prior``, the starting value.
    tau_prior : float or None
        ``None``: τ is fixed. A scale ``s > 0``: τ has the half-Cauchy hyperprior ``C⁺(0, s)`` and is
        estimated (EM: :meth:`update_shared`; the twin and Gibbs sample it).
    """

    tau: float = 1.0
    tau_prior: float | None = None

    #: The registry name.
    name = "horseshoe"
    #: NUTS on this posterior needs small steps: the half-Cauchy local scales put a well-identified
    #: weight on a curved ridge ``τ λ_i z_i = β_i`` in the non-centred :meth:`sample_beta` and a null
    #: one in a funnel in the centred form; at NumPyro's default target acceptance (0.8) NUTS on
    #: :meth:`sample_beta` diverged on Boston housing (506 × 13, standardized) in about a quarter of
    #: its draws. Under a Gaussian likelihood the twin integrates β out instead
    #: (:meth:`sample_variance`), where this setting costs only a longer trajectory. Read by the NUTS
    #: runner (:func:`sparsebayes.models.priors.nuts_settings`); a caller's own value overrides it.
    nuts_settings = {"target_accept_prob": 0.99}

    # --- parametrizations ----------------------------------------------------------------
    @property
    def global_variance(self):
        """``τ²``."""
        return self.tau**2

    def _u(self, beta):
        return beta**2 / (2.0 * self.tau**2)

    def _log_u(self, beta):
        return 2.0 * jnp.log(jnp.abs(beta)) - jnp.log(2.0 * self.tau**2)

    # --- marginal -----------------------------------------------------------------------
    def log_mixing_density(self, v):
        """``log p(v_i)`` of ``v = λ²τ²`` with ``λ ~ C⁺(0, 1)``: ``p(v) = 1/(π τ √v (1 + v/τ²))``."""
        return -jnp.log(jnp.pi * self.tau) - 0.5 * jnp.log(v) - jnp.log1p(v / self.tau**2)

    def log_marginal(self, beta):
        """``log p(β_i) = log(eᵘ E₁(u)) − log τ − ½ log(2π³)`` elementwise (``+∞`` at ``β_i = 0``)."""
        return log_scaled_exp1(self._log_u(beta)) - jnp.log(self.tau) - 0.5 * jnp.log(2.0 * jnp.pi**3)

    def neg_log_prior(self, beta):
        """``−Σ_{β_i ≠ 0} log p(β_i)``: minus the log marginal on the active set (pruned weights
        excluded, as for the Jeffreys prior: the density is infinite at 0)."""
        nz = beta != 0
        return -jnp.sum(jnp.where(nz, self.log_marginal(jnp.where(nz, beta, 1.0)), 0.0))

    # --- EM -----------------------------------------------------------------------------
    def expected_inverse_variance(self, beta):
        """``E[1/v_i | β_i] = (e^{-u}/(u E₁(u)) − 1)/τ² = (1 − q)/(q τ²)`` (∞ at ``β_i = 0``)."""
        q, t = one_minus_q(self._u(beta))
        return t / (q * self.tau**2)

    def em_scale(self, beta):
        """``u_i`` with ``E[1/v_i | β_i] = 1/u_i²``: ``τ √(q/(1 − q))``, 0 at ``β_i = 0``."""
        q, t = one_minus_q(self._u(beta))
        return self.tau * jnp.sqrt(q / t)

    def check(self):
        """``self`` after checking ``tau`` (and ``tau_prior``, if given) are positive numbers."""
        make_horseshoe(*(None if x is None else _host_scalar(x) for x in (self.tau, self.tau_prior)))
        return self

    def update_shared(self, beta, new_beta, n_weights):
        """The EM M-step for τ under ``τ ~ C⁺(0, s)``: the hierarchy with ``τ⁺ = √t``, ``t`` the positive
        root of ``(m + 2) t² − (S − m s²) t − S s² = 0``.

        With the local scales λ as missing data, the complete-data log posterior holds τ in
        ``Σ_i [−log τ − β_i²/(2λ_i²τ²)] − log(1 + τ²/s²)``. The E-step at ``beta`` (β⁽ᵗ⁾, τ⁽ᵗ⁾) gives
        ``E[1/λ_i²] = τ⁽ᵗ⁾² E[1/v_i | β_i] = (1 − q_i)/q_i`` (:meth:`expected_inverse_variance`); at the
        weights' new values ``new_beta`` (the ECM order, :func:`~sparsebayes.models.priors.update_shared`)
        the expectation is ``−(m/2) log t − S/(2t) − log(1 + t/s²)`` in ``t = τ²``, with
        ``S = Σ_i β_i⁽ᵗ⁺¹⁾² (1 − q_i)/q_i``, and its zero derivative is the quadratic. The sums run over
        the ``m`` nonzero new weights: the marginal density is infinite at 0, so a pruned weight is
        out of the objective (:meth:`neg_log_prior`) and of this step (``n_weights`` unused). The root
        is taken in the form without cancellation. With ``tau_prior=None`` returns ``self``.
        """
        if self.tau_prior is None:
            return self
        nz = (beta != 0) & (new_beta != 0)
        q, t = one_minus_q(self._u(jnp.where(nz, beta, 1.0)))
        # the E-step weight (1 − q)/q is finite wherever β_i ≠ 0 (q_i = 0 only where β_i² underflows)
        big_s = jnp.sum(jnp.where(nz & (q > 0), new_beta**2 * t / jnp.where(q > 0, q, 1.0), 0.0))
        m = jnp.sum(new_beta != 0)
        s2 = self.tau_prior**2
        slope = big_s - m * s2
        root = jnp.sqrt(slope**2 + 4.0 * (m + 2) * big_s * s2)
        t_new = jnp.where(slope >= 0, (slope + root) / (2.0 * (m + 2)), 2.0 * big_s * s2 / (root - slope))
        return self._replace(tau=jnp.sqrt(t_new))

    def neg_log_hyperprior(self, n_weights):
        """``log(1 + τ²/s²)``: minus the log half-Cauchy hyperprior on τ (constants dropped); the τ
        terms of the marginals are :meth:`neg_log_prior`'s. 0 with τ fixed."""
        if self.tau_prior is None:
            return 0.0
        return jnp.log1p((self.tau / self.tau_prior) ** 2)

    # --- NumPyro twin -------------------------------------------------------------------
    def _sample_scales(self, p):
        """``τ`` (fixed, or site ``tau_global ~ C⁺(0, s)`` under ``tau_prior``) and ``λ`` (site ``lam_local``)."""
        tau = self.tau if self.tau_prior is None else numpyro.sample("tau_global", dist.HalfCauchy(self.tau_prior))
        return tau, numpyro.sample("lam_local", dist.HalfCauchy(1.0).expand([p]).to_event(1))

    def sample_beta(self, p, name="beta"):
        """The twin's sampling statement: ``λ ~ C⁺(0, 1)``, ``β = τ λ z`` with ``z ~ N(0, 1)``
        (non-centred, so NUTS does not meet the funnel). Sites ``lam_local``, ``beta_raw`` and the
        deterministic ``beta``; with ``tau_prior = s``, first ``τ ~ C⁺(0, s)`` (site ``tau_global``:
        ``tau`` is the per-weight variances' site in the package's other hierarchies)."""
        tau, lam = self._sample_scales(p)
        raw = numpyro.sample(f"{name}_raw", dist.Normal(0.0, 1.0).expand([p]).to_event(1))
        return numpyro.deterministic(name, tau * lam * raw)

    def sample_variance(self, p):
        """The scales of :meth:`sample_beta` without β: the same sites ``tau_global`` (under
        ``tau_prior``) and ``lam_local``, returning β's conditional prior variances ``v = τ²λ²``.
        ``β | v ~ N(0, diag v)`` completes the same model; under a Gaussian likelihood β is then
        integrated out in closed form (:mod:`sparsebayes.inference.engines.collapsed_nuts`), which leaves
        NUTS neither the funnel of the centred form nor the curved ridge ``τ λ_i z_i = β_i`` that
        the non-centred form gives a well-identified weight."""
        tau, lam = self._sample_scales(p)
        return (tau * lam) ** 2

    def twin_sites_given_beta(self, beta, sites):
        """The sites of :meth:`sample_beta` that :meth:`sample_variance` does not make, at draws of β
        (leading axes: chain, draw; NumPy) and of its sites ``sites`` (``lam_local``, ``tau_global``):
        ``beta_raw = β/(τλ)``."""
        lam = np.asarray(sites["lam_local"])
        tau = self.tau if self.tau_prior is None else np.asarray(sites["tau_global"])[..., None]
        return {"beta_raw": np.asarray(beta) / (tau * lam)}

    # --- Gibbs (Makalic & Schmidt 2016) -------------------------------------------------
    def gibbs_init(self, p, dtype=jnp.float64):
        """Auxiliary state ``(λ², ν)`` at ones; with ``tau_prior``, also ``τ²`` at ``tau²`` and ``ξ`` at 1."""
        aux = {"lam2": jnp.ones(p, dtype), "nu": jnp.ones(p, dtype)}
        if self.tau_prior is not None:
            aux.update(tau2=jnp.asarray(self.tau**2, dtype), xi=jnp.ones((), dtype))
        return aux

    def _gibbs_tau2(self, aux):
        return self.tau**2 if self.tau_prior is None else aux["tau2"]

    def estimated_sites(self):
        """The shared hyperparameter EM estimated, by its twin's site name (``tau_global`` under a
        ``tau_prior``), for a point estimate whose names line up with the twin's draws."""
        return {} if self.tau_prior is None else {"tau_global": float(self.tau)}

    def gibbs_twin_sites(self, beta, aux):
        """The twin's sites (:meth:`sample_beta`) at Gibbs draws (leading axes: chain, draw; NumPy):
        ``lam_local = λ``, ``beta_raw = β/(τλ)`` and, with ``tau_prior``, ``tau_global = τ``, so the two
        samplers' posteriors carry the same names (``tau_global``: the per-draw τ)."""
        lam = np.sqrt(np.asarray(aux["lam2"]))
        if self.tau_prior is None:
            return {"lam_local": lam, "beta_raw": np.asarray(beta) / (self.tau * lam)}
        tau = np.sqrt(np.asarray(aux["tau2"]))
        return {"tau_global": tau, "lam_local": lam, "beta_raw": np.asarray(beta) / (tau[..., None] * lam)}

    def gibbs_prior_variance(self, aux):
        """``v_i = λ_i² τ²``: β's conditional prior variances given the auxiliary state."""
        return aux["lam2"] * self._gibbs_tau2(aux)

    def gibbs_update(self, key, beta, aux):
        """One sweep of the local conditionals: ``λ_i² | ν_i, β_i ~ IG(1, 1/ν_i + β_i²/(2τ²))``,
        then ``ν_i | λ_i² ~ IG(1, 1 + 1/λ_i²)`` (inverse-gamma as 1/Gamma, rate form); with ``tau_prior``,
        then ``τ² ~ IG((p + 1)/2, 1/ξ + Σ β_i²/(2λ_i²))`` and ``ξ ~ IG(1, 1/s² + 1/τ²)`` (module docstring)."""
        k1, k2, *k_global = jax.random.split(key, 2 if self.tau_prior is None else 4)
        tau2 = self._gibbs_tau2(aux)
        rate = 1.0 / aux["nu"] + beta**2 / (2.0 * tau2)
        # Gamma(1) is Exp(1): drawn as such, many times faster than JAX's general Gamma sampler
        lam2 = rate / jax.random.exponential(k1, beta.shape, dtype=beta.dtype)
        nu = (1.0 + 1.0 / lam2) / jax.random.exponential(k2, beta.shape, dtype=beta.dtype)
        if self.tau_prior is None:
            return {"lam2": lam2, "nu": nu}
        shape = 0.5 * (beta.shape[0] + 1)
        tau2 = (1.0 / aux["xi"] + jnp.sum(beta**2 / (2.0 * lam2))) / jax.random.gamma(k_global[0], shape, dtype=beta.dtype)
        xi = (1.0 / self.tau_prior**2 + 1.0 / tau2) / jax.random.gamma(k_global[1], 1.0, dtype=beta.dtype)
        return {"lam2": lam2, "nu": nu, "tau2": tau2, "xi": xi}


    def gibbs_variates(self, p):
        """The standard variates :meth:`gibbs_update_from` reads each sweep
        (:class:`~sparsebayes.inference.engines.gibbs_variates.VariateSpec`): an ``Exp(1) = Gamma(1)`` per
        weight for each of ``λ²`` and ``ν``, and with ``tau_prior`` a ``Gamma((p + 1)/2)`` for ``τ²`` and a
        ``Gamma(1)`` for ``ξ``: the inverse-gamma conditionals' shapes (Makalic & Schmidt 2016), constants."""
        from sparsebayes.inference.engines.gibbs_variates import VariateSpec

        fields = {"lam2_gamma": VariateSpec("gamma", p, 1.0), "nu_gamma": VariateSpec("gamma", p, 1.0)}
        if self.tau_prior is not None:
            fields.update(tau2_gamma=VariateSpec("gamma", None, 0.5 * (p + 1)),
                          xi_gamma=VariateSpec("gamma", None, 1.0))
        return fields

    def gibbs_update_from(self, variates, beta, aux):
        """:meth:`gibbs_update` as a transform of the sweep's standard variates (:meth:`gibbs_variates`):
        each inverse-gamma draw ``IG(a, b)`` as ``b / G`` with ``G`` the declared ``Gamma(a)`` variate, in
        the same order (``λ²``, ``ν``, then ``τ²`` and ``ξ``)."""
        tau2 = self._gibbs_tau2(aux)
        lam2 = (1.0 / aux["nu"] + beta**2 / (2.0 * tau2)) / variates["lam2_gamma"]
        nu = (1.0 + 1.0 / lam2) / variates["nu_gamma"]
        if self.tau_prior is None:
            return {"lam2": lam2, "nu": nu}
        tau2 = (1.0 / aux["xi"] + jnp.sum(beta**2 / (2.0 * lam2))) / variates["tau2_gamma"]
        xi = (1.0 / self.tau_prior**2 + 1.0 / tau2) / variates["xi_gamma"]
        return {"lam2": lam2, "nu": nu, "tau2": tau2, "xi": xi}


    def with_tau_update(self, update):
        """This hierarchy with the Gibbs update of τ named by ``update``: ``"makalic"`` (the default, this
        class: Makalic & Schmidt's inverse-gamma pair given β) or ``"blocked"`` (:class:`BlockedTauHorseshoe`:
        τ drawn with β integrated out, then β given τ). With τ fixed (``tau_prior=None``) there is no τ
        to update and ``self`` is returned."""
        if update not in TAU_UPDATES:
            raise ValueError(f"the horseshoe's τ update must be one of {TAU_UPDATES}, got {update!r}")
        if self.tau_prior is None:
            return self
        return (BlockedTauHorseshoe if update == "blocked" else HorseshoePrior)(self.tau, self.tau_prior)


#: The horseshoe's Gibbs updates of τ (:meth:`HorseshoePrior.with_tau_update`).
TAU_UPDATES = ("makalic", "blocked")


class BlockedTauHorseshoe(HorseshoePrior):
    """The horseshoe with τ (under ``τ ~ C⁺(0, s)``) drawn jointly with β: a slice-sampling move of
    ``log τ`` on ``p(τ | λ, σ², y) ∝ p(y | λ, τ, σ²) p(τ)``, β integrated out (the blocked update of
    Johndrow, Orenstein & Bhattacharya 2020, Sec. 3, with Neal's (2003) slice sampler in place of their
    random-walk Metropolis: no step size), before the engine draws β given the new τ; the local scales
    keep Makalic & Schmidt's conditionals (:meth:`gibbs_update`). Given β, τ and λ are strongly
    coupled (``Σ β_i²/λ_i²`` moves with τ²), which the one-at-a-time update of the parent class pays
    for in slow mixing of τ; integrating β out removes that coupling from τ's move. Same model, same
    sites and auxiliary state (``ξ`` is kept and unused); the engines call :meth:`gibbs_global_step`
    with the marginal likelihood of the prior variances (:func:`sparsebayes.inference.engines.gibbs_beta.log_marginal`)."""

    def gibbs_global_step(self, key, aux, log_marginal):
        """``τ² | λ², σ², y`` with β integrated out: one slice move of ``u = log τ`` on
        ``log_marginal(λ² e^{2u}) + u − log(1 + e^{2u}/s²)`` (the half-Cauchy prior on τ and the
        Jacobian of ``τ = eᵘ``). ``log_marginal(v)``: the data's log likelihood at prior variances ``v``,
        β integrated out, up to a constant."""
        from sparsebayes.inference.engines.gibbs_augment import slice_step

        s2 = self.tau_prior**2

        def log_density(u):
            return log_marginal(aux["lam2"] * jnp.exp(2.0 * u)) + u - jnp.log1p(jnp.exp(2.0 * u) / s2)

        u = slice_step(key, 0.5 * jnp.log(aux["tau2"]), log_density)
        return {**aux, "tau2": jnp.exp(2.0 * u)}

    def gibbs_update(self, key, beta, aux):
        """The local conditionals of :meth:`HorseshoePrior.gibbs_update` at the current τ (drawn by
        :meth:`gibbs_global_step`); τ² and ξ are carried unchanged."""
        local = HorseshoePrior(1.0).gibbs_update(key, beta / jnp.sqrt(aux["tau2"]), aux)
        return {**aux, "lam2": local["lam2"], "nu": local["nu"]}


def make_horseshoe(tau=1.0, tau_prior=None):
    """:class:`HorseshoePrior` after checking ``tau`` (and ``tau_prior``, if given) are positive numbers."""
    check_number("tau (the horseshoe's global scale)", tau, 0.0, strict=True)
    if tau_prior is not None:
        check_number("tau_prior (the half-Cauchy scale of the horseshoe's global scale)", tau_prior, 0.0, strict=True)
        tau_prior = float(tau_prior)
    return HorseshoePrior(float(tau), tau_prior)

