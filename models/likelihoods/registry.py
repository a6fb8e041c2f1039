"""The likelihood registry and what the engines ask of a likelihood (the protocol is
:mod:`sparsebayes.models.likelihoods`'s docstring).

Each engine names the pieces it needs in :data:`LIKELIHOOD_CAPABILITIES` and checks them once with
:func:`require_likelihood`, which names the likelihood, the missing pieces and the registered
likelihoods that have them.
"""
from __future__ import annotations

import jax.numpy as jnp

from sparsebayes.models._registry import Registry, able, missing_pieces, registrar

#: The built-in likelihoods, ``(module, class)``, registered in this order when :data:`LIKELIHOODS` is
#: first read: this module imports none of the modules that define them (they import it for their
#: shared pieces), and none of them registers itself on import.
BUILT_IN = (
    ("sparsebayes.models.likelihoods.gaussian", "GaussianLikelihood"),
    ("sparsebayes.models.likelihoods.probit", "ProbitLikelihood"),
    ("sparsebayes.models.likelihoods.logistic", "BernoulliLogisticLikelihood"),
    ("sparsebayes.models.likelihoods.poisson", "PoissonLikelihood"),
    ("sparsebayes.models.likelihoods.student_t", "StudentTLikelihood"),
    ("sparsebayes.models.likelihoods.negative_binomial", "NegativeBinomialLikelihood"),
    ("sparsebayes.models.likelihoods.multinomial", "MultinomialLogisticLikelihood"),
)

#: Every likelihood by name: the built-ins (:data:`BUILT_IN`) and those a user registers with
#: :func:`register_likelihood`. The conformance suite (:mod:`sparsebayes.testing.likelihoods`) walks it.
LIKELIHOODS = Registry("likelihood", BUILT_IN)

#: What each engine asks of a likelihood: EM (:mod:`sparsebayes.inference.engines.em`) its working response
#: and weights, the update of its own parameter and its objective; the type-II engine's Laplace path
#: (log likelihood, mean and curvature in ``η``, a start); the bound engine's log-normalizer and
#: Böhning's bound (003 eq. 8); a NumPyro twin its observation statement; predictive checks its draw.
LIKELIHOOD_CAPABILITIES = {
    "em": ("em_working", "update_params", "neg_log_lik"),
    "laplace": ("log_lik", "mean", "curvature", "init_target"),
    "bound": ("log_normalizer", "bohning_bound"),
    "nuts": ("observe",),
    "predictive": ("sample", "mean"),
    # the Gibbs engine (sparsebayes.inference.engines.hierarchy_gibbs): a conjugate augmentation to the Gaussian
    # pseudo-model z ~ N(η, 1/ω); a likelihood with a parameter also has gibbs_param_step
    "gibbs": ("gibbs_augment", "log_lik"),
}

#: What a likelihood may state of itself beyond its methods, and the value a likelihood that states
#: nothing has (class attributes; read with :func:`conjugate_noise`, :func:`flat_intercept` and :func:`identity_link`):
#:
#: ``conjugate_noise``
#:     ``True``: ``y ~ N(η, σ²)`` with ``params = σ²`` under the flat prior ``p(σ²) ∝ 1`` (000 eq. 6) its
#:     ``sample_params`` states. The engines then use the Gaussian's conjugacy: the Gibbs engine's
#:     Gaussian sweep (``β | σ²`` from sufficient statistics, ``σ² | β`` inverse gamma, the flat-prior
#:     intercept integrated out; :mod:`sparsebayes.inference.engines.hierarchy_gibbs`) instead of an
#:     augmentation, and NUTS with ``β`` integrated out (:mod:`sparsebayes.inference.engines.collapsed_nuts`).
#: ``intercept_prior``
#:     The prior a sampler puts on the intercept ``b₀``: ``"flat"`` (improper, where the likelihood alone
#:     makes its posterior proper: the Gaussian) or ``"normal"``, ``b₀ ~ N(0, 10²)``
#:     (:data:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.INTERCEPT_SCALE`), wide on the scale of a
#:     linear predictor. A likelihood with ``conjugate_noise`` has ``"flat"`` (its sweep integrates a
#:     flat-prior intercept out).
#: ``identity_link``
#:     ``True``: ``E[y | η] = η``, the linear predictor is the mean of ``y`` on the data's scale (the
#:     Gaussian, the Student-t), so an effect's size is read in units of ``y`` (``sparsebayes.compare``'s
#:     near-zero band, :mod:`sparsebayes.comparisons.fitted_model`); ``False``: on the link scale (a
#:     probit or logit, a log rate).
#:
#: The conformance checks (:mod:`sparsebayes.testing.likelihoods`) hold a likelihood to what it states.
LIKELIHOOD_DECLARATIONS = {"conjugate_noise": False, "intercept_prior": "normal", "identity_link": False}

#: The values ``intercept_prior`` may take.
INTERCEPT_PRIORS = ("flat", "normal")


def conjugate_noise(likelihood):
    """Whether ``likelihood`` states ``conjugate_noise`` (:data:`LIKELIHOOD_DECLARATIONS`): it is the
    Gaussian ``N(η, σ²)``, σ² flat, and the engines may use its conjugate σ² sweep."""
    return bool(getattr(likelihood, "conjugate_noise", LIKELIHOOD_DECLARATIONS["conjugate_noise"]))


def identity_link(likelihood):
    """Whether ``likelihood`` states ``identity_link`` (:data:`LIKELIHOOD_DECLARATIONS`): ``E[y | η] = η``."""
    return bool(getattr(likelihood, "identity_link", LIKELIHOOD_DECLARATIONS["identity_link"]))


def flat_intercept(likelihood):
    """Whether ``likelihood`` states a flat intercept prior (``intercept_prior = "flat"``,
    :data:`LIKELIHOOD_DECLARATIONS`); ``False`` for ``"normal"``, a ``ValueError`` naming the values
    otherwise."""
    prior = getattr(likelihood, "intercept_prior", LIKELIHOOD_DECLARATIONS["intercept_prior"])
    if prior not in INTERCEPT_PRIORS:
        raise ValueError(f"{type(likelihood).__name__}.intercept_prior must be one of {INTERCEPT_PRIORS}, got {prior!r}")
    return prior == "flat"


#: Add a likelihood class to :data:`LIKELIHOODS` under its ``name`` (a decorator).
register_likelihood = registrar(LIKELIHOODS, "likelihood")


def require_likelihood(likelihood, engine):
    """``likelihood`` if it has every piece ``engine`` needs (:data:`LIKELIHOOD_CAPABILITIES`), else a
    ``ValueError`` naming the likelihood, the missing pieces and the registered likelihoods that have them."""
    if engine not in LIKELIHOOD_CAPABILITIES:
        raise ValueError(f"engine must be one of {sorted(LIKELIHOOD_CAPABILITIES)}, got {engine!r}")
    pieces = LIKELIHOOD_CAPABILITIES[engine]
    missing = missing_pieces(likelihood, pieces)
    if missing:
        raise ValueError(f"{type(likelihood).__name__} has no {', '.join(missing)}: the {engine!r} engine needs "
                         f"{', '.join(pieces)}; likelihoods that have them: {', '.join(able(LIKELIHOODS, pieces))}")
    return likelihood


#: The methods of the generic estimators that take any likelihood with the pieces of an engine, and that
#: engine's capability (:data:`LIKELIHOOD_CAPABILITIES`): what a refusal lists as the methods that fit a
#: likelihood.
METHOD_CAPABILITY = {"em": "em", "gibbs": "gibbs", "nuts": "nuts"}


def methods_fitting(likelihood):
    """The methods (:data:`METHOD_CAPABILITY`) whose engine has every piece it needs of ``likelihood``, as a
    refusal writes them (``"method='em', method='nuts'"``; ``"no method yet"`` for none)."""
    names = [f"method={m!r}" for m, cap in METHOD_CAPABILITY.items()
             if not missing_pieces(likelihood, LIKELIHOOD_CAPABILITIES[cap])]
    return ", ".join(names) or "no method yet"


def make_likelihood(likelihood):
    """A registered likelihood by name (its defaults), or an object returned as it is; a ``ValueError``
    naming the registered names otherwise."""
    if isinstance(likelihood, str):
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)} or a likelihood object, got {likelihood!r}")
        return LIKELIHOODS[likelihood]()
    if not isinstance(getattr(likelihood, "name", None), str):
        raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)} or a likelihood object (with a name), "
                         f"got {likelihood!r}")
    return likelihood


def masked_sum(terms, n_obs):
    """``Σ_i terms_i`` over the first ``n_obs`` rows (all with ``n_obs=None``): the rows after it are the
    EM engine's padding (``η = 0``, ``y = 0``), which must add nothing."""
    if n_obs is not None:
        terms = jnp.where(jnp.arange(terms.shape[0]) < n_obs, terms, 0.0)
    return jnp.sum(terms)


def row_mask(eta, n_obs):
    """1 on the first ``n_obs`` rows of ``eta``, 0 on the padding after (all ones with ``n_obs=None``)."""
    if n_obs is None:
        return jnp.ones(eta.shape[0], dtype=eta.dtype)
    return (jnp.arange(eta.shape[0]) < n_obs).astype(eta.dtype)


def half_tanh_ratio(x):
    """``tanh(x/2)/(2x)``, the mean of a Pólya-Gamma PG(1, x) variable (Polson, Scott & Windle 2013,
    Sec. 3.1), finite at 0 (``1/4 − x²/48`` there)."""
    small = jnp.abs(x) < 1e-4
    safe = jnp.where(small, 1.0, x)
    return jnp.where(small, 0.25 - x * x / 48.0, jnp.tanh(0.5 * safe) / (2.0 * safe))


# The protocol methods of a likelihood with no parameter of its own (logistic, Poisson), written once
# and assigned in those classes' bodies (NamedTuple classes take no mixin).

def no_own_parameter(self, t):
    """No parameter of its own: a placeholder the engine carries unused."""
    return 1.0


def own_parameter_unchanged(self, t, eta, params, n_obs=None):
    """No parameter of its own: ``params`` unchanged."""
    return params


def neg_log_lik_of_log_lik(self, t, eta, params=None, n_obs=None):
    """``−Σ log p(t_i | η_i)`` over the first ``n_obs`` rows."""
    return -masked_sum(self.log_lik(t, eta), n_obs)
