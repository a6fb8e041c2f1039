"""Hierarchical sparsity priors as small pytree objects (one object per prior, no engine changes).

Both priors put ``β_i | τ_i ~ N(0, τ_i)`` (002 eq. 9) and differ in the hyperprior on τ_i:

* :class:`LaplacePrior`: ``τ_i ~ Exp`` with density ``(γ/2) exp(-γ τ_i / 2)`` (002 eq. 10),
  whose marginal is the Laplacian ``(√γ/2) exp(-√γ |β_i|)`` (002 Sec. 3.1);
* :class:`JeffreysPrior`: ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3; 002 Sec. 3.2), parameter-free,
  with the improper marginal ``p(β_i) ∝ 1/|β_i|``.

What the EM engine needs from a prior is the E-step weight ``ω_i = E[τ_i⁻¹ | β_i]`` in the
finite form ``ω_i = 1 / u_i²`` with ``u_i`` a *scale* that vanishes with ``β_i`` (the
``U = diag(|β|)`` trick of 000 "An Important Implementation Detail", 002 eqs. 15–16), so
that the M-step never divides by a vanishing weight.

Note on 002 eq. 12: the paper prints ``ω_i = γ |β_i|⁻¹``; integrating the exponential
hyperprior (002 eq. 10) gives ``√γ |β_i|⁻¹`` (a GIG(½, γ, β²) posterior on τ_i), consistent
with the marginal ``(√γ/2) exp(-√γ|β|)`` printed right above it. We use ``√γ`` (a test checks
the closed form against numerical integration over τ).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from sparsebayes.models._checks import check_number


class LaplacePrior(NamedTuple):
    """Gaussian scale mixture with exponential variances: the Laplacian prior (002 eqs. 9–10).

    Parameters
    ----------
    gamma : float
        Rate parameter of the exponential hyperprior ``p(τ) = (γ/2) exp(-γ τ/2)``; the
        marginal on ``β_i`` is Laplacian with ``l1`` weight ``√γ``.
    """

    gamma: float = 1.0

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

    def sample_beta(self, p, name="beta"):
        """The twin's sampling statement: ``τ_i ~ Exp(γ/2)`` (site ``tau``), ``β_i ~ N(0, τ_i)``."""
        tau = numpyro.sample("tau", dist.Exponential(self.gamma / 2.0).expand([p]).to_event(1))
        return numpyro.sample(name, dist.Normal(0.0, jnp.sqrt(tau)).to_event(1))

    def expected_inverse_variance(self, beta):
        """``E[τ_i⁻¹ | β_i] = √γ / |β_i|`` (002 eq. 12, see the module note)."""
        return jnp.sqrt(self.gamma) / jnp.abs(beta)

    def em_scale(self, beta):
        """``u_i`` with ``E[τ_i⁻¹ | β_i] = 1/u_i²``: ``u_i = |β_i|^{1/2} γ^{-1/4}``; 0 at ``β_i = 0``."""
        return jnp.sqrt(jnp.abs(beta)) * self.gamma ** (-0.25)

    def neg_log_prior(self, beta):
        """``√γ ‖β‖₁`` (minus the log Laplacian marginal, constants dropped)."""
        return jnp.sqrt(self.gamma) * jnp.sum(jnp.abs(beta))


class JeffreysPrior(NamedTuple):
    """Gaussian scale mixture with the Jeffreys hyperprior ``p(τ_i) ∝ 1/τ_i`` (000 Sec. 3.3).

    Parameter-free. The marginal ``p(β_i) ∝ 1/|β_i|`` is improper (not integrable at 0):
    MAP estimation by EM is well defined, full-posterior sampling is not (NUTS runs on
    a labelled proper surrogate, see :mod:`sparsebayes.models.adaptive`).
    """

    #: The registry name.
    name = "jeffreys"
    #: No parameter with units: the MAP is equivariant under a rescaling of each column.
    scale_free = True

    def log_mixing_density(self, v):
        """``log p(τ_i = v) = −log v`` up to the (infinite) normalizer: improper."""
        return -jnp.log(v)

    def expected_inverse_variance(self, beta):
        """``E[τ_i⁻¹ | β_i] = 1/β_i²`` (000 eq. 15; 002 eq. 14)."""
        return 1.0 / beta**2

    def em_scale(self, beta):
        """``u_i = |β_i|`` (002 eq. 15, the matrix Θ)."""
        return jnp.abs(beta)

    def neg_log_prior(self, beta):
        """``Σ_{β_i ≠ 0} log|β_i|``: minus the log marginal on the active set (pruned weights excluded)."""
        nz = beta != 0
        return jnp.sum(jnp.where(nz, jnp.log(jnp.where(nz, jnp.abs(beta), 1.0)), 0.0))


def make_prior(name, gamma=1.0):
    """A hierarchy object from a registered name (:data:`HIERARCHIES`) or the object itself.

    ``"laplace"`` takes ``gamma``; the other names their defaults (pass an object, e.g.
    ``HorseshoePrior(tau=0.1)``, for other settings). Anything else is a ``ValueError``.
    """
    if is_hierarchy(name):
        return name
    if name == "laplace":
        check_number("gamma (the Laplace prior's)", gamma, 0.0, strict=True)
        return LaplacePrior(float(gamma))
    if isinstance(name, str) and name in HIERARCHIES:
        return HIERARCHIES[name]()
    raise ValueError(f"prior must be one of {sorted(HIERARCHIES)} or a hierarchy object, got {name!r}")


def hierarchy_name(prior):
    """The registry name of a prior given as a name or an object (``"laplace"``, ``"horseshoe"``)."""
    return prior if isinstance(prior, str) else getattr(prior, "name", type(prior).__name__)


# --- The registry and the engines' capabilities ---------------------------------------------------

#: Every hierarchy by name. The conformance suite (:mod:`sparsebayes.models.conformance`) walks it:
#: registering a new hierarchy (:func:`register_hierarchy`) is how it gets tested and reached by
#: name from every estimator's ``prior=``.
HIERARCHIES = {}

#: What each engine needs of a hierarchy: the methods it calls. An engine checks them once, with
#: :func:`require`, before it compiles anything.
CAPABILITIES = {
    "em": ("em_scale", "neg_log_prior"),
    "nuts": ("sample_beta",),
    "gibbs": ("gibbs_init", "gibbs_prior_variance", "gibbs_update"),
    "type2": ("typeii_rule",),
}

_ENGINE_WORDS = {"em": "EM E-step", "nuts": "NumPyro sampling statement (twin)", "gibbs": "Gibbs conditionals",
                 "type2": "type-II update"}


def register_hierarchy(cls):
    """Add a hierarchy class to :data:`HIERARCHIES` under its ``name`` (usable as a decorator)."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"a hierarchy needs a class attribute 'name' (a non-empty string); {cls.__name__} has {name!r}")
    HIERARCHIES[name] = cls
    return cls


def is_hierarchy(obj):
    """True for an instance of a registered hierarchy class (or any object with a ``name`` and a
    ``log_marginal`` or ``em_scale``: a user's own, unregistered, hierarchy)."""
    return not isinstance(obj, (str, type)) and isinstance(getattr(obj, "name", None), str) and (
        hasattr(obj, "em_scale") or hasattr(obj, "log_marginal"))


def supports(prior, engine):
    """Whether ``prior`` has every method ``engine`` needs (:data:`CAPABILITIES`)."""
    return all(hasattr(prior, m) for m in CAPABILITIES[engine])


def require(prior, engine):
    """Raise ``ValueError`` naming the hierarchy and the missing piece unless ``prior`` supports
    ``engine`` (``"em"``, ``"nuts"``, ``"gibbs"``, ``"type2"``); returns ``prior``."""
    if engine not in CAPABILITIES:
        raise ValueError(f"engine must be one of {sorted(CAPABILITIES)}, got {engine!r}")
    missing = [m for m in CAPABILITIES[engine] if not hasattr(prior, m)]
    if missing:
        able = sorted(n for n, c in HIERARCHIES.items() if all(hasattr(c, m) for m in CAPABILITIES[engine]))
        raise ValueError(f"{type(prior).__name__} has no {_ENGINE_WORDS[engine]} (missing: {', '.join(missing)}), "
                         f"so the {engine} engine cannot fit it; hierarchies that have it: {', '.join(able)}")
    return prior


def variance_of_precision(precision):
    """``1 / precision`` for the NumPyro models' precision hyperpriors, finite for every draw.

    A ``Gamma(ε, ε)`` surrogate (ε = 1e-3) draws a precision that underflows to 0 about half the
    time, and ``1/0`` made the prior draw NaN: ArviZ traces the model with such a draw when it
    converts NUTS output, so ``run_nuts`` failed on the Jeffreys surrogate and the RVM models. A
    precision below the smallest normal float is read as that float (a variance ≈ 4.5e307);
    NUTS itself works on the log precision and never meets it, and elsewhere this is ``1/precision``.
    """
    return 1.0 / jnp.maximum(precision, jnp.finfo(jnp.result_type(precision)).tiny)


register_hierarchy(LaplacePrior)
register_hierarchy(JeffreysPrior)

# The built-in hierarchies defined in their own modules register on import; importing them here
# makes every registered name reachable from make_prior however the package was imported.
from sparsebayes.models import horseshoe as _horseshoe  # noqa: E402,F401
