"""The Gaussian (ridge) and flat priors of multinomial logistic regression (Krishnapuram et al. 2005, Secs. 3.2–3.3).

Registered hierarchies (:data:`~sparsebayes.models.priors.BUILT_IN`) beside
:class:`~sparsebayes.models.priors.LaplacePrior` (SMLR's l1 penalty, eq. 3), for the
bound-optimization engine (:mod:`sparsebayes.inference.engines.bound`):

* :class:`GaussianPrior` ``p(w) ∝ exp(−λ‖w‖²/2)`` (Sec. 3.3, RMLR), ``λ`` the prior precision;
* :class:`FlatPrior` ``p(w) ∝ 1`` (maximum likelihood, Sec. 3.2), improper.

Each has the ``"bound"`` capability of :data:`~sparsebayes.models.priors.CAPABILITIES` (its
penalty ``neg_log_prior`` and the surrogate's maximizers, from :mod:`sparsebayes.models.penalties`);
the Gaussian also has a NumPyro sampling statement. Neither is a scale mixture, so neither has an
EM E-step.

SMLR's ``penalty`` and ``λ`` are these hierarchies and ``LaplacePrior`` both ways:
:func:`penalty_prior` gives the object an SMLR fit uses (its fitted ``prior_``), and
:data:`PENALTY_OF` the ``penalty`` of a hierarchy, so that the generic ``SparseClassifier(method="map",
prior=...)`` refits the model of that ``prior_``.
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from sparsebayes.models import penalties
from sparsebayes.models._checks import check_number
from sparsebayes.models._checks import _host_scalar
from sparsebayes.models.priors.laplace import LaplacePrior, make_prior
from sparsebayes.models.priors.registry import require


class GaussianPrior(NamedTuple):
    """``p(w) ∝ exp(−λ‖w‖²/2)`` (003 Sec. 3.3): RMLR's ridge penalty, ``λ`` the inverse variance.

    Parameters
    ----------
    lam : float
        The prior precision ``λ > 0``.
    """

    lam: float = 1.0

    #: The registry name.
    name = "gaussian"

    def log_marginal(self, beta):
        """``log N(β_i; 0, 1/λ)`` elementwise."""
        return 0.5 * jnp.log(self.lam / (2.0 * jnp.pi)) - 0.5 * self.lam * beta**2

    def neg_log_prior(self, beta):
        """``λ‖β‖²/2``: minus the log density, constants dropped (the bound engine's penalty)."""
        return penalties.l2_penalty(beta, self.lam)

    def sample_beta(self, p, name="beta"):
        """The twin's sampling statement: ``β_i ~ N(0, 1/λ)`` independently."""
        return numpyro.sample(name, dist.Normal(0.0, 1.0 / jnp.sqrt(self.lam)).expand([p]).to_event(1))

    def check(self):
        """``self`` after checking ``lam > 0`` (``ValueError`` naming the field)."""
        check_number("GaussianPrior.lam", _host_scalar(self.lam), 0.0, strict=True)
        return self

    # bound-optimization capability (sparsebayes.inference.engines.bound)
    #: A smooth penalty: no exact zeros, and the block update (eq. 10) moves every weight.
    bound_sparse = False

    def bound_coordinate_update(self, z, b_kk):
        """``B_kk/(B_kk − λ) · z`` (eq. 16)."""
        return penalties.l2_coordinate_update(z, b_kk, self.lam)

    def bound_block_update(self, coef, rhs, bound):
        """``(B − λI)⁻¹(Bw − g)`` (eq. 10)."""
        return penalties.l2_block_update(rhs, bound, self.lam)

    def bound_newton_terms(self, coef, grad):
        """Every weight free; penalty gradient ``λw`` and curvature ``λ``; no orthant."""
        return penalties.l2_newton_terms(coef, self.lam)

    def bound_project(self, coef, orthant):
        """No constraint."""
        return coef

    def bound_residual(self, coef, grad):
        """``|g − λw|`` per coefficient (zero at the MAP estimate)."""
        return penalties.l2_residual(coef, grad, self.lam)

    def marginal_distribution(self):
        """One weight's prior, ``Normal(0, λ^{-½})`` (the multinomial model's sampling statement)."""
        return dist.Normal(0.0, 1.0 / jnp.sqrt(self.lam))


class FlatPrior(NamedTuple):
    """``p(w) ∝ 1``: maximum likelihood (003 Sec. 3.2). Improper; the MAP exists only if the data
    are not separable in the basis."""

    #: The registry name.
    name = "flat"

    def log_marginal(self, beta):
        """``log p(β_i) = 0`` elementwise, up to the (infinite) normalizer: improper."""
        return jnp.zeros(jnp.shape(beta))

    def neg_log_prior(self, beta):
        """Zero: no penalty."""
        return jnp.zeros((), dtype=jnp.float64)

    # bound-optimization capability (sparsebayes.inference.engines.bound): the l2 pieces at λ = 0
    #: No penalty: no exact zeros, and the block update (eq. 7) moves every weight.
    bound_sparse = False

    def bound_coordinate_update(self, z, b_kk):
        """``z = w_k − g_k/B_kk`` (eq. 15 with λ = 0)."""
        return z

    def bound_block_update(self, coef, rhs, bound):
        """``B⁻¹(Bw − g) = w − B⁻¹g`` (eq. 7)."""
        return penalties.l2_block_update(rhs, bound, 0.0)

    def bound_newton_terms(self, coef, grad):
        """Every weight free, no penalty; no orthant."""
        return jnp.ones(coef.shape, bool), jnp.zeros_like(coef), jnp.zeros_like(coef), None

    def bound_project(self, coef, orthant):
        """No constraint."""
        return coef

    def bound_residual(self, coef, grad):
        """``|g|`` per coefficient."""
        return jnp.abs(grad)

    def marginal_distribution(self):
        """An improper flat density (NUTS needs a proper posterior: non-separable data)."""
        return dist.ImproperUniform(dist.constraints.real, (), ())



#: The hierarchy of each SMLR ``penalty`` at ``lam``: λ is the Laplace marginal's l1 weight (``γ = λ²``,
#: eq. 3) or the Gaussian prior's precision (Sec. 3.3); ``penalty=None`` is :class:`FlatPrior` (ML, Sec. 3.2).
PENALTY_PRIORS = {"l1": LaplacePrior.from_lam, "l2": GaussianPrior}
PENALTIES = ("l1", "l2", None)
#: SMLR's ``penalty`` for each hierarchy (by registry name): :data:`PENALTY_PRIORS` read backwards.
PENALTY_OF = {"laplace": "l1", "gaussian": "l2", "flat": None}


def penalty_prior(penalty, lam):
    """The hierarchy object of ``penalty`` (:data:`PENALTY_PRIORS`) at ``lam``, checked for the bound
    engine; ``ValueError`` for another penalty or a ``lam`` that is not a positive number."""
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    if penalty is None:
        return FlatPrior()
    check_number("lam", lam, 0.0, strict=True)
    return require(make_prior(PENALTY_PRIORS[penalty](float(lam))), "bound")
