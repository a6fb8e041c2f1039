"""The Laplace hierarchy (and the Jeffreys hierarchy beside it in :mod:`.jeffreys`): Gaussian scale mixtures.

Both priors put ``β_i | τ_i ~ N(0, τ_i)`` (002 eq. 9) and differ in the hyperprior on τ_i:

* :class:`LaplacePrior`: ``τ_i ~ Exp`` with density ``(γ/2) exp(-γ τ_i / 2)`` (002 eq. 10),
  whose marginal is the Laplacian ``(√γ/2) exp(-√γ |β_i|)`` (002 Sec. 3.1);
* :class:`JeffreysPrior`: ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3; 002 Sec. 3.2), parameter-free,
  with the improper marginal ``p(β_i) ∝ 1/|β_i|``.

What the EM engine needs from a prior is the E-step weight ``ω_i = E[τ_i⁻¹ | β_i]`` in the
finite form ``ω_i = 1 / u_i²`` with ``u_i`` a *scale* that vanishes with ``β_i`` (the
``U = diag(|β|)`` trick of 000 "An Important Implementation Detail", 002 eqs. 15–16), so
that the M-step never divides by a vanishing weight.

Shared hyperparameters (γ here, the horseshoe's global scale) are fixed by default. Given a
hyperprior they are estimated inside EM: the hierarchy's :meth:`~LaplacePrior.update_shared` is
their M-step (the engine calls the generic :func:`update_shared`, which leaves a hierarchy without
such a method as it is) and :meth:`~LaplacePrior.neg_log_hyperprior` the terms the EM objective
gains (:func:`neg_log_hyperprior`).

Note on 002 eq. 12: the paper prints ``ω_i = γ |β_i|⁻¹``; integrating the exponential
hyperprior (002 eq. 10) gives ``√γ |β_i|⁻¹`` (a GIG(½, γ, β²) posterior on τ_i), consistent
with the marginal ``(√γ/2) exp(-√γ|β|)`` printed right above it. We use ``√γ`` (a test checks
the closed form against numerical integration over τ).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from sparsebayes.models import penalties
from sparsebayes.models._checks import check_number
from sparsebayes.models._checks import _host_scalar
from sparsebayes.models.priors.registry import HIERARCHIES, hierarchy_name, is_hierarchy


class LaplacePrior(NamedTuple):
    """Gaussian scale mixture with exponential variances: the Laplacian prior (002 eqs. 9–10).

    Parameters
    ----------
    gamma : float
        Rate parameter of the exponential hyperprior ``p(τ) = (γ/2) exp(-γ τ/2)`` (000 eq. 5); the
        marginal on ``β_i`` is Laplacian with ``l1`` weight ``√γ``. With ``gamma_prior`` it is the
        starting value of the estimate.
    gamma_prior : tuple (a, b) or None
        ``None``: γ is fixed. ``(a, b)``: γ is estimated under the hyperprior ``γ ~ Gamma(a, b)``
        (shape ``a > 0``, rate ``b > 0``) by :meth:`update_shared`. The rate must be positive:
        with ``b = 0`` the joint posterior of (β, γ) is unbounded at ``β = 0, γ → ∞``; with ``b > 0``
        that point is the mode ``γ = (p/2 + a − 1)/b`` of height ``≈ (p/2) log(1/b)``, so a vague
        hyperprior can make the empty model the joint MAP when the data say little about each weight.
    """

    gamma: float = 1.0
    gamma_prior: tuple | None = None

    #: The registry name.
    name = "laplace"

    # The canonical parameter is γ (002 eq. 10). Named conversions to the other papers' forms:
    @classmethod
    def from_lam(cls, lam):
        """From the l1 weight ``λ`` of the marginal ``(λ/2) exp(−λ|β|)`` (SMLR's λ, the Lasso's
        penalty at unit noise): ``γ = λ²``."""
        return cls(lam**2)

    @property
    def lam(self):
        """``λ = √γ``: the l1 weight of the marginal Laplacian (``−log p(β) = λ‖β‖₁``)."""
        return self.gamma**0.5

    @property
    def lam2(self):
        """``λ² = γ``: Park & Casella's ``λ²`` at unit noise (``τ_i² ~ Exp(λ²/2)``)."""
        return self.gamma

    def log_mixing_density(self, v):
        """``log p(τ_i = v) = log(γ/2) − γ v/2`` (002 eq. 10)."""
        return jnp.log(self.gamma / 2.0) - 0.5 * self.gamma * v

    def log_marginal(self, beta):
        """``log p(β_i) = log(√γ/2) − √γ |β_i|`` elementwise (002 Sec. 3.1)."""
        return jnp.log(self.lam / 2.0) - self.lam * jnp.abs(beta)

    def sample_beta(self, p, name="beta", marginal=False):
        """The twin's sampling statement: ``τ_i ~ Exp(γ/2)`` (site ``tau``), ``β_i ~ N(0, τ_i)``;
        with ``gamma_prior = (a, b)``, first ``γ ~ Gamma(a, b)`` (site ``gamma``). ``marginal``:
        ``β_i ~ Laplace(0, 1/√γ)`` directly (:meth:`marginal_distribution`; the same model with τ
        integrated out, which NUTS mixes better on: no funnel)."""
        gamma = self.gamma if self.gamma_prior is None else numpyro.sample("gamma", dist.Gamma(*self.gamma_prior))
        if marginal:
            return numpyro.sample(name, self._replace(gamma=gamma).marginal_distribution().expand([p]).to_event(1))
        tau = numpyro.sample("tau", dist.Exponential(gamma / 2.0).expand([p]).to_event(1))
        return numpyro.sample(name, dist.Normal(0.0, jnp.sqrt(tau)).to_event(1))

    def estimated_sites(self):
        """The shared hyperparameters EM estimated, by their twin's site names (``gamma`` under a
        ``gamma_prior``), for a point estimate whose names line up with the twin's draws."""
        return {} if self.gamma_prior is None else {"gamma": float(self.gamma)}

    def nuts_twin(self, surrogate_eps=None):
        """The papers' NumPyro model's arguments for this hierarchy and the twin's label: the Laplace
        marginal (:meth:`sample_beta` with ``marginal``: no τ funnel for NUTS), with γ fixed, or under
        its ``gamma_prior`` when EM estimated it (the twin is then the hierarchical model, γ sampled)."""
        if surrogate_eps is not None:
            raise ValueError("surrogate_eps applies to the Jeffreys prior, not to 'laplace'")
        kwargs = dict(prior="laplace", gamma=float(self.gamma), marginal=True)
        if self.gamma_prior is None:
            return kwargs, f"laplace-gamma={self.gamma:g}"
        a, b = self.gamma_prior
        return {**kwargs, "gamma_prior": (float(a), float(b))}, f"laplace-gamma~Gamma({a:g},{b:g})"

    # --- Gibbs (Park & Casella 2008, Sec. 2; the "gibbs" capability) -----------------------
    # The exponential scale mixture's conditionals, for sparsebayes.inference.engines.hierarchy_gibbs: run
    # ``scaled`` (β_i | σ², τ_i ~ N(0, σ²τ_i)) with γ = λ² under gamma_prior = (r, δ) it is Park &
    # Casella's Bayesian Lasso; unscaled, EM's hierarchy (002 eqs. 9–10).
    def gibbs_init(self, p, dtype=jnp.float64):
        """Auxiliary state: the mixing variances ``tau`` at ones; with ``gamma_prior``, also ``gamma`` at ``γ``
        (NumPy arrays: a start builds no JAX program; a traced ``γ`` stays a JAX array)."""
        aux = {"tau": np.ones(p, dtype)}
        if self.gamma_prior is not None:
            aux["gamma"] = jnp.asarray(self.gamma, dtype) if isinstance(self.gamma, jax.core.Tracer) else \
                np.asarray(self.gamma, dtype)
        return aux

    def gibbs_prior_variance(self, aux):
        """``v_i = τ_i``: β's conditional prior variances given the auxiliary state (002 eq. 9)."""
        return aux["tau"]

    def gibbs_update(self, key, beta, aux):
        """``1/τ_i | β_i, γ ~ InverseGaussian(√(γ/β_i²), γ)`` (Park & Casella 2008, Sec. 2, with their
        ``λ²`` = γ and ``β_i/σ`` for ``β_i`` when scaled), drawn by Michael, Schucany & Haas (1976); with
        ``gamma_prior = (a, b)``, then ``γ | τ ~ Gamma(a + p, b + Σ τ_i/2)`` (the exponential's conjugate
        pair: ``Π (γ/2) e^{−γτ_i/2} · γ^{a−1} e^{−bγ}``). With γ fixed the whole ``key`` goes to τ.

        ``β_i²`` is floored at 10⁻³⁰⁰: at ``β_i = 0`` the mean ``√(γ/β_i²)`` is then about 10¹⁵⁰, whose square
        stays finite, and the draw is the conditional's limit there, ``τ_i ~ Gamma(½, γ/2)`` (the smallest
        float64, 2·10⁻³⁰⁸, overflowed the square and made ``τ_i`` NaN)."""
        from sparsebayes.inference.engines.gibbs_variates import inverse_gaussian

        b2 = jnp.maximum(beta**2, 1e-300)
        if self.gamma_prior is None:
            return {"tau": 1.0 / inverse_gaussian(key, jnp.sqrt(self.gamma / b2), self.gamma)}
        k_tau, k_gamma = jax.random.split(key)
        gamma = aux["gamma"]
        tau = 1.0 / inverse_gaussian(k_tau, jnp.sqrt(gamma / b2), gamma)
        a, b = self.gamma_prior
        new_gamma = jax.random.gamma(k_gamma, a + beta.shape[0], dtype=beta.dtype) / (b + 0.5 * jnp.sum(tau))
        return {"tau": tau, "gamma": new_gamma}

    def gibbs_variates(self, p):
        """The standard variates :meth:`gibbs_update_from` reads each sweep
        (:class:`~sparsebayes.inference.engines.gibbs_variates.VariateSpec`): a ``χ²₁`` and a ``U(0, 1)``
        per weight for Michael, Schucany & Haas's inverse-Gaussian draw of ``1/τ_i``, and with
        ``gamma_prior = (a, b)`` one standard ``Gamma(a + p)`` for γ (its conditional's shape, a
        constant: Park & Casella 2008, Sec. 2, ``λ² | τ ~ Gamma(p + r, Σ τ_i/2 + δ)``)."""
        from sparsebayes.inference.engines.gibbs_variates import VariateSpec

        fields = {"tau_chi2": VariateSpec("chi2", p), "tau_uniform": VariateSpec("uniform", p)}
        if self.gamma_prior is not None:
            fields["gamma"] = VariateSpec("gamma", None, float(self.gamma_prior[0]) + p)
        return fields

    def gibbs_update_from(self, variates, beta, aux):
        """:meth:`gibbs_update` as a transform of the sweep's standard variates (:meth:`gibbs_variates`,
        drawn ahead on the host or the device): ``1/τ_i = IG(√(γ/β_i²), γ)`` from ``tau_chi2`` and
        ``tau_uniform`` (Michael, Schucany & Haas 1976), then, with ``gamma_prior = (a, b)``,
        ``γ = G / (b + Σ τ_i/2)`` with ``G ~ Gamma(a + p)`` the ``gamma`` variate. The same conditionals,
        and the same floor of ``β_i²`` at 10⁻³⁰⁰, as :meth:`gibbs_update`."""
        from sparsebayes.inference.engines.gibbs_variates import inverse_gaussian_from

        b2 = jnp.maximum(beta**2, 1e-300)
        gamma = self.gamma if self.gamma_prior is None else aux["gamma"]
        tau = 1.0 / inverse_gaussian_from(jnp.sqrt(gamma / b2), gamma, variates["tau_chi2"], variates["tau_uniform"])
        if self.gamma_prior is None:
            return {"tau": tau}
        return {"tau": tau, "gamma": variates["gamma"] / (self.gamma_prior[1] + 0.5 * jnp.sum(tau))}

    def gibbs_twin_sites(self, beta, aux):
        """The sites of :meth:`sample_beta` at Gibbs draws (leading axes: chain, draw; NumPy): ``tau`` and,
        with ``gamma_prior``, ``gamma``."""
        sites = {"tau": np.asarray(aux["tau"])}
        if self.gamma_prior is not None:
            sites["gamma"] = np.asarray(aux["gamma"])
        return sites

    def expected_inverse_variance(self, beta):
        """``E[τ_i⁻¹ | β_i] = √γ / |β_i|`` (002 eq. 12, see the module note)."""
        return jnp.sqrt(self.gamma) / jnp.abs(beta)

    def expected_variance(self, beta):
        """``E[τ_i | β_i] = |β_i|/√γ + 1/γ``: the mean of the GIG(½, γ, β_i²) posterior of τ_i,
        ``√(β²/γ) K_{3/2}(√γ|β|)/K_{1/2}(√γ|β|)`` with ``K_{3/2}(z)/K_{1/2}(z) = 1 + 1/z``; finite at
        ``β_i = 0``, where the posterior is the Gamma(½, γ/2) of mean ``1/γ``."""
        return jnp.abs(beta) / jnp.sqrt(self.gamma) + 1.0 / self.gamma

    def em_scale(self, beta):
        """``u_i`` with ``E[τ_i⁻¹ | β_i] = 1/u_i²``: ``u_i = |β_i|^{1/2} γ^{-1/4}``; 0 at ``β_i = 0``."""
        return jnp.sqrt(jnp.abs(beta)) * self.gamma ** (-0.25)

    def neg_log_prior(self, beta):
        """``√γ ‖β‖₁`` (minus the log Laplacian marginal, the terms in γ alone dropped: they are
        :meth:`neg_log_hyperprior`'s when γ is estimated)."""
        return jnp.sqrt(self.gamma) * jnp.sum(jnp.abs(beta))

    def check(self):
        """``self`` after checking ``gamma > 0`` and ``gamma_prior`` (``ValueError`` naming the field)."""
        check_number("LaplacePrior.gamma", _host_scalar(self.gamma), 0.0, strict=True)
        gamma_prior = self.gamma_prior
        if gamma_prior is not None and not isinstance(gamma_prior, (str, bytes)) and np.ndim(gamma_prior) == 1:
            gamma_prior = [_host_scalar(c) for c in gamma_prior]  # a pair of 0-d arrays (a fitted pytree) as floats
        check_gamma_prior(gamma_prior, "LaplacePrior.gamma_prior")
        return self

    def update_shared(self, beta, new_beta, n_weights):
        """The EM M-step for γ: the hierarchy with ``γ⁺ = (p + a − 1) / (½ Σ_i E[τ_i | β_i] + b)``.

        The complete-data log posterior (000 eq. 7 with the exponential hyperprior of 000 eq. 5 and
        ``γ ~ Gamma(a, b)``) holds γ in ``Σ_i [log(γ/2) − γ τ_i/2] + (a − 1) log γ − b γ``; its
        expectation under the E-step's ``p(τ | β⁽ᵗ⁾, γ⁽ᵗ⁾)`` is ``(p + a − 1) log γ − γ (½ Σ E[τ_i] + b)``,
        maximized at ``γ⁺`` above. Over all ``p = n_weights`` weights, ``Σ E[τ_i] = ‖β‖₁/√γ + p/γ``
        (:meth:`expected_variance`; a pruned or padded weight contributes ``1/γ``, counted by ``p``).
        The fixed point solves ``½ √γ ‖β‖₁ + b γ = p/2 + a − 1``: stationarity in γ of the
        marginal objective ``−√γ‖β‖₁ + (p/2 + a − 1) log γ − bγ`` (Laplacian marginal plus
        hyperprior). γ enters the expected complete-data log posterior apart from β, so the weights'
        own M-step result ``new_beta`` plays no part. With ``gamma_prior=None`` returns ``self``.
        """
        if self.gamma_prior is None:
            return self
        a, b = self.gamma_prior
        expected_tau = jnp.sum(jnp.abs(beta)) / jnp.sqrt(self.gamma) + n_weights / self.gamma
        return self._replace(gamma=(n_weights + a - 1.0) / (0.5 * expected_tau + b))

    def neg_log_hyperprior(self, n_weights):
        """The terms of ``−log p(β, γ)`` in γ alone, which :meth:`neg_log_prior` drops:
        ``−(p/2) log γ`` of the ``p = n_weights`` marginals ``√γ/2 · exp(−√γ|β_i|)`` and
        ``−(a − 1) log γ + b γ`` of the Gamma hyperprior (constants dropped); 0 with γ fixed."""
        if self.gamma_prior is None:
            return 0.0
        a, b = self.gamma_prior
        return -(0.5 * n_weights + a - 1.0) * jnp.log(self.gamma) + b * self.gamma

    # bound-optimization capability (sparsebayes.inference.engines.bound; SMLR, 003 Sec. 3): the penalty is
    # neg_log_prior, λ‖w‖₁ with λ = √γ (eq. 3); γ is fixed there (the engine refuses a gamma_prior)
    #: The l1 kink makes exact zeros: the block update (eq. 13) needs the dense B and never moves a zero
    #: weight, so the engine starts a block fit from a ridge step and prunes and re-enters weights.
    bound_sparse = True

    @property
    def bound_ridge_precision(self):
        """``λ = √γ``: the precision of the ridge step (eq. 10) that starts a block fit."""
        return jnp.sqrt(self.gamma)

    def bound_coordinate_update(self, z, b_kk):
        """``soft(z; −λ/B_kk)`` with ``z = w_k − g_k/B_kk`` (eq. 15)."""
        return penalties.l1_coordinate_update(z, b_kk, jnp.sqrt(self.gamma))

    def bound_block_update(self, coef, rhs, bound):
        """``Υ(ΥBΥ − λI)⁻¹Υ(Bw − g)``, ``Υ = diag|w|^½`` (eq. 13); ``rhs = Bw − g``."""
        return penalties.l1_block_update(coef, rhs, bound, jnp.sqrt(self.gamma))

    def bound_newton_terms(self, coef, grad):
        """The nonzero weights free on their sign orthant, where the penalty is ``λ σᵀw``."""
        return penalties.l1_newton_terms(coef, jnp.sqrt(self.gamma))

    def bound_project(self, coef, orthant):
        """Zero the weights that left their orthant."""
        return penalties.orthant_project(coef, orthant)

    def bound_residual(self, coef, grad):
        """Distance of ``g`` to ``λ ∂‖w‖₁`` per coefficient (zero at the MAP estimate)."""
        return penalties.l1_residual(coef, grad, jnp.sqrt(self.gamma))

    def marginal_distribution(self):
        """One weight's marginal prior, ``Laplace(0, 1/√γ)`` (the multinomial model's sampling statement)."""
        return dist.Laplace(0.0, 1.0 / jnp.sqrt(self.gamma))


def check_gamma_prior(gamma_prior, name="gamma_prior"):
    """``None``, or ``(a, b)`` as floats after checking the Gamma hyperprior's shape ``a > 0`` and
    rate ``b > 0`` (:class:`LaplacePrior`); anything else is a ``ValueError`` naming ``name``."""
    if gamma_prior is None:
        return None
    if isinstance(gamma_prior, (str, bytes)) or np.ndim(gamma_prior) != 1 or len(gamma_prior) != 2:
        raise ValueError(f"{name} must be None (gamma fixed) or a pair (a, b), the shape and rate of the "
                         f"Gamma hyperprior on gamma, got {gamma_prior!r}")
    a, b = gamma_prior
    check_number(f"{name}[0] (a, the Gamma hyperprior's shape)", a, 0.0, strict=True)
    check_number(f"{name}[1] (b, the Gamma hyperprior's rate)", b, 0.0, strict=True)
    return float(a), float(b)


def make_prior(name, gamma=1.0, gamma_prior=None):
    """A hierarchy object from a registered name (:data:`HIERARCHIES`) or the object itself.

    ``"laplace"`` takes ``gamma`` and ``gamma_prior`` (:class:`LaplacePrior`); the other names their
    defaults (pass an object, e.g. ``HorseshoePrior(tau=0.1)``, for other settings), and a
    ``gamma_prior`` with them is a ``ValueError``. An object is returned as it is, after its own
    ``check()`` where it has one; it carries its own hyperparameters, so a ``gamma`` other than the
    default (1.0) and other than the object's own, or any ``gamma_prior``, beside it is a
    ``ValueError`` naming both (the fit would silently use one of them). Anything else is a ``ValueError``.
    """
    if is_hierarchy(name):
        _check_no_conflict(name, gamma, gamma_prior)
        return name.check() if hasattr(name, "check") else name
    if gamma_prior is not None and name != "laplace":
        raise ValueError(f"gamma_prior applies to prior='laplace' only, got prior={name!r} "
                         "(give a hierarchy object its own hyperprior instead)")
    if name == "laplace":
        check_number("gamma (the Laplace prior's)", gamma, 0.0, strict=True)
        return LaplacePrior(float(gamma), check_gamma_prior(gamma_prior))
    if isinstance(name, str) and name in HIERARCHIES:
        return HIERARCHIES[name]()
    raise ValueError(f"prior must be one of {sorted(HIERARCHIES)} or a hierarchy object, got {name!r}")


def _check_no_conflict(prior, gamma, gamma_prior):
    """``ValueError`` naming both when the estimator's ``gamma`` or ``gamma_prior`` would be dropped
    beside the hierarchy object ``prior``, which sets its own: ``gamma`` at its default (1.0) or equal
    to the object's ``gamma`` says nothing else, any ``gamma_prior`` does."""
    label = f"prior={prior!r}"
    if gamma_prior is not None:
        raise ValueError(f"gamma_prior applies to prior='laplace' only: {label} and gamma_prior={gamma_prior!r} "
                         "both specify the prior, and a hierarchy object carries its own hyperprior (e.g. "
                         "LaplacePrior(gamma, gamma_prior=(a, b))); give one of them")
    own = getattr(prior, "gamma", None)
    try:
        silent = gamma is None or float(gamma) == 1.0 or (own is not None and float(gamma) == float(own))
    except (TypeError, ValueError):
        silent = False
    if not silent:
        where = (f"its own gamma={_host_scalar(own)!r}" if own is not None else f"no gamma ({hierarchy_name(prior)!r})")
        raise ValueError(f"{label} has {where} and gamma={gamma!r} was given too: the fit would use one and drop "
                         "the other; give gamma inside the object (e.g. LaplacePrior(gamma=...)), or prior='laplace' "
                         "with gamma=")
