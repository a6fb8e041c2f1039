"""The hierarchy registry and what each engine asks of a hierarchy: registration (:data:`HIERARCHIES`,
:func:`register_hierarchy`), capabilities (:data:`CAPABILITIES`, :func:`supports`, :func:`require`),
the EM hooks for shared hyperparameters, the NUTS settings a hierarchy declares, and names."""
from __future__ import annotations

import jax.numpy as jnp

from sparsebayes.models._registry import Registry, able, has_piece, missing_pieces, registrar  # noqa: F401  (has_piece: the engines ask it)


def hierarchy_name(prior):
    """The registry name of a prior given as a name or an object (``"laplace"``, ``"horseshoe"``), or as a
    list of objects of one kind (a multiclass fit's ``prior_``, one per one-vs-all classifier)."""
    if isinstance(prior, list) and prior:
        return hierarchy_name(prior[0])
    return prior if isinstance(prior, str) else getattr(prior, "name", type(prior).__name__)


#: The built-in hierarchies, ``(module, class)``, registered in this order when :data:`HIERARCHIES`
#: is first used: this module imports none of the modules that define them (they import it).
BUILT_IN = (
    ("sparsebayes.models.priors.laplace", "LaplacePrior"),
    ("sparsebayes.models.priors.jeffreys", "JeffreysPrior"),
    ("sparsebayes.models.priors.horseshoe", "HorseshoePrior"),
    ("sparsebayes.models.priors.typeii", "ARDPrior"),
    ("sparsebayes.models.priors.typeii", "ScaledLaplacePrior"),
    ("sparsebayes.models.priors.typeii", "LaplaceVariancePrior"),
    ("sparsebayes.models.priors.penalty", "GaussianPrior"),
    ("sparsebayes.models.priors.penalty", "FlatPrior"),
)


#: Every hierarchy by name: the built-ins (:data:`BUILT_IN`) and those a user registers with
#: :func:`register_hierarchy`. The conformance suite (:mod:`sparsebayes.testing.hierarchies`) walks
#: it: registering a new hierarchy is how it gets tested and reached by name from every
#: estimator's ``prior=``.
HIERARCHIES = Registry("hierarchy", BUILT_IN)


#: What each engine needs of a hierarchy: the methods it calls. An engine checks them once, with
#: :func:`require`, before it compiles anything. The EM hooks for shared hyperparameters
#: (:func:`update_shared`, :func:`neg_log_hyperprior`) are optional.
CAPABILITIES = {
    "em": ("em_scale", "neg_log_prior"),
    "nuts": ("sample_beta",),
    # NUTS with β integrated out under a Gaussian likelihood (sparsebayes.inference.engines.collapsed_nuts): the
    # statement of β's conditional prior variances, and the statement's other sites given β
    "nuts-collapsed": ("sample_variance", "twin_sites_given_beta"),
    "gibbs": ("gibbs_init", "gibbs_prior_variance", "gibbs_update"),
    # type-II capability: the pieces of :mod:`sparsebayes.models.priors.typeii`
    "type2": ("typeii_penalty", "typeii_update_lambda", "typeii_log_hyperprior"),
    # bound-optimization capability (MAP by Böhning's bound, sparsebayes.inference.engines.bound): the penalty
    # and the surrogate's maximizers; a hierarchy with bound_sparse also has bound_ridge_precision
    "bound": ("neg_log_prior", "bound_sparse", "bound_coordinate_update", "bound_block_update",
              "bound_newton_terms", "bound_project", "bound_residual"),
}


_ENGINE_WORDS = {"em": "EM E-step", "nuts": "NumPyro sampling statement (twin)",
                 "nuts-collapsed": "NumPyro statement of the prior variances (collapsed twin)", "gibbs": "Gibbs conditionals",
                 "type2": "type-II update", "bound": "bound-optimization pieces"}


def update_shared(prior, beta, new_beta, n_weights):
    """The EM M-step of ``prior``'s shared hyperparameters (γ, a global scale):
    ``prior.update_shared(beta, new_beta, n_weights)``, or ``prior`` itself for a hierarchy without
    that method (nothing shared, or nothing estimated).

    The E-step is the one at ``beta`` (β⁽ᵗ⁾, with ``prior``'s current values) and ``new_beta``
    (β⁽ᵗ⁺¹⁾) the weights' M-step from it; the update maximizes the expected complete-data log
    posterior over the shared hyperparameters at ``new_beta``, a conditional maximization after
    β's (ECM; Meng & Rubin 1993), so that each EM step still climbs the objective. ``n_weights``
    is the model's number of weights (padding excluded, pruned weights included).
    """
    hook = getattr(prior, "update_shared", None)
    return prior if hook is None else hook(beta, new_beta, n_weights)


def neg_log_hyperprior(prior, n_weights):
    """The terms of minus the log prior in the shared hyperparameters alone, which the EM objective
    adds when they are estimated: ``prior.neg_log_hyperprior(n_weights)``, or 0."""
    hook = getattr(prior, "neg_log_hyperprior", None)
    return 0.0 if hook is None else hook(n_weights)


#: Add a hierarchy class to :data:`HIERARCHIES` under its ``name`` (usable as a decorator).
register_hierarchy = registrar(HIERARCHIES, "hierarchy")


def is_hierarchy(obj):
    """True for an instance of a registered hierarchy class (or any object with a ``name`` and a
    ``log_marginal`` or ``em_scale``: a user's own, unregistered, hierarchy)."""
    return not isinstance(obj, (str, type)) and isinstance(getattr(obj, "name", None), str) and (
        hasattr(obj, "em_scale") or hasattr(obj, "log_marginal") or hasattr(obj, "typeii_penalty"))


def supports(prior, engine):
    """Whether ``prior`` has every method ``engine`` needs (:data:`CAPABILITIES`)."""
    return all(has_piece(prior, m) for m in CAPABILITIES[engine])


def require(prior, engine):
    """Raise ``ValueError`` naming the hierarchy and the missing piece unless ``prior`` supports
    ``engine`` (``"em"``, ``"nuts"``, ``"gibbs"``, ``"type2"``); returns ``prior``."""
    if engine not in CAPABILITIES:
        raise ValueError(f"engine must be one of {sorted(CAPABILITIES)}, got {engine!r}")
    missing = missing_pieces(prior, CAPABILITIES[engine])
    if missing:
        raise ValueError(f"{type(prior).__name__} has no {_ENGINE_WORDS[engine]} (missing: {', '.join(missing)}), "
                         f"so the {engine} engine cannot fit it; hierarchies that have it: "
                         f"{', '.join(able(HIERARCHIES, CAPABILITIES[engine]))}")
    return prior


#: The NUTS settings a hierarchy may declare (``nuts_settings``, a dict): the kernel's target
#: acceptance rate and maximum tree depth, for a posterior whose geometry needs smaller steps.
NUTS_SETTINGS = ("target_accept_prob", "max_tree_depth")


def nuts_settings(prior):
    """The NUTS settings ``prior`` declares (its ``nuts_settings`` attribute; ``{}`` when none), checked
    to hold only :data:`NUTS_SETTINGS`. A caller's own value for a setting overrides the declared one."""
    declared = dict(getattr(prior, "nuts_settings", None) or {})
    unknown = sorted(set(declared) - set(NUTS_SETTINGS))
    if unknown:
        raise ValueError(f"{hierarchy_name(prior)}.nuts_settings has unknown keys {unknown}; allowed: {list(NUTS_SETTINGS)}")
    return declared


def variance_of_precision(precision):
    """``1 / precision`` for the NumPyro models' precision hyperpriors, finite for every draw.

    A ``Gamma(ε, ε)`` surrogate (ε = 1e-3) draws a precision that underflows to 0 about half the
    time, and ``1/0`` made the prior draw NaN: ArviZ traces the model with such a draw when it
    converts NUTS output, so ``run_nuts`` failed on the Jeffreys surrogate and the RVM models. A
    precision below the smallest normal float is read as that float (a variance ≈ 4.5e307);
    NUTS itself works on the log precision and never meets it, and elsewhere this is ``1/precision``.
    """
    return 1.0 / jnp.maximum(precision, jnp.finfo(jnp.result_type(precision)).tiny)
