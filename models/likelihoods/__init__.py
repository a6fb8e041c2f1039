"""Likelihoods: one object per family, one module each, registered in :data:`LIKELIHOODS`.

The built-ins are a table, :data:`~.registry.BUILT_IN` (module, class), read when the registry is
first used: no module registers itself on import, and the registry imports none of the modules that
define them (they import it), so any of them can be imported first. A user's own likelihood joins
with :func:`register_likelihood`.

The protocol
------------
A likelihood is a (pytree) object with a registry ``name``; ``params`` is its own parameter (σ² of
the Gaussian, the Student-t's squared scale, the negative binomial's dispersion; ignored by those
without one, ``param_name = None``). Per observation, in the linear predictor ``η``:

``log_lik(y, eta, params)``
    ``log p(y_i | η_i, params)``, constants included (the observation statement's density).
``score(y, eta, params)``
    ``∂/∂η log p``.
``curvature(y, eta, params)``
    ``−∂²/∂η² log p`` where the likelihood is log-concave in ``η`` (``curvature_kind = "observed"``),
    else the Fisher information ``E[−∂²/∂η² log p]`` (``"fisher"``: the Student-t).
``mean(eta, params)``, ``variance(eta, params)``
    The first two moments of ``y | η``.
``em_working(y, eta, params) -> (z, w)``
    EM's working response and per-row weights: the M-step maximizes ``−½ Σ_i w_i (z_i − η'_i)²``
    plus the log prior. From the likelihood's augmentation where one exists, so that the surrogate
    is below ``log p`` and touches it at ``η`` and EM climbs its objective (``monotone_em = True``):
    the Gaussian (exact), probit (Albert & Chib's latent Gaussian, 002 eq. 6), logistic (Pólya-Gamma,
    Polson, Scott & Windle 2013), Student-t (its Gamma scale mixture). Without one (or where its bound is too loose to use: the negative binomial's Pólya-Gamma
    bound when ``r ≫ μ``), IRLS's expansion, not a bound (``monotone_em = False``: Poisson, negative
    binomial), where EM halves a step that would lower its objective. In every case
    ``w (z − η) = score``. ``constant_weight = True`` says ``w_i = 1/params``
    on every row (Gaussian, probit), which the engine solves with the precomputed Gram ``HᵀH``.
``init_params(y)``, ``update_params(y, eta, params, n_obs=None)``
    A start for its own parameter, and its update at ``η`` (an EM or conditional-maximization step
    that does not lower the likelihood); ``n_obs`` rows are data, those after are padding.
``neg_log_lik(y, eta, params, n_obs=None)``
    EM's objective term, ``−Σ log p`` over the data rows (constants may be dropped).
``observe(name, eta, y=None, params)``
    Its NumPyro observation statement (``numpyro.sample(name, ..., obs=y)``); its log density is
    ``Σ log_lik``.
``sample(key, eta, params)``
    A predictive draw of ``y``.
``label``
    A human-readable name.
``support``
    What ``y`` is: ``"real"``, ``"counts"`` (nonnegative integers), ``"binary"`` (0/1) or
    ``"categorical"`` (one-hot rows); estimators check their targets by it.
``conjugate_noise``, ``intercept_prior`` (optional)
    What the samplers may use of the likelihood (:data:`~.registry.LIKELIHOOD_DECLARATIONS`, read with
    :func:`conjugate_noise` and :func:`flat_intercept`): ``conjugate_noise = True`` states
    ``y ~ N(η, σ²)`` with σ² flat, so the Gibbs engine runs its conjugate Gaussian sweep and NUTS may
    integrate ``β`` out; ``intercept_prior`` is ``"flat"`` or ``"normal"`` (``N(0, 10²)``, the default).
    The Gaussian states both (``True``, ``"flat"``); a user's Gaussian-like likelihood that states them
    gets the same treatment, and no engine asks a likelihood's name or class.

The type-II engine's Laplace path also asks ``init_target(y)`` (a finite stand-in for ``η``), and the
bound engine the multinomial's ``log_normalizer`` and ``bohning_bound``
(:class:`~sparsebayes.models.likelihoods.multinomial.MultinomialLogisticLikelihood`). Each engine says the pieces
it needs in :data:`LIKELIHOOD_CAPABILITIES` and checks them once with :func:`require_likelihood`. The
conformance harness (:mod:`sparsebayes.testing.likelihoods`) checks every registered
likelihood against autodiff of its own ``log_lik``, NumPyro and its own draws.

``n_obs`` (optional, may be traced): only the first ``n_obs`` rows are data. The EM engine pads the
rest to a shared array size (:func:`sparsebayes.inference.engines.em_slices.fit_em`) with zero rows of the design, so
``η = 0`` and ``y = 0`` there; those rows must add nothing to the parameter update or to the objective.
"""
from __future__ import annotations

from .gaussian import GaussianLikelihood
from .logistic import BernoulliLogisticLikelihood
from .negative_binomial import NegativeBinomialLikelihood
from .poisson import _MAX_LOG_RATE, PoissonLikelihood  # noqa: F401
from .probit import ProbitLikelihood, probit_mills_ratio, scaled_erfc
from .registry import (
    BUILT_IN,
    LIKELIHOOD_CAPABILITIES,
    LIKELIHOOD_DECLARATIONS,
    LIKELIHOODS,
    conjugate_noise,
    flat_intercept,
    identity_link,
    make_likelihood,
    masked_sum,
    methods_fitting,
    register_likelihood,
    require_likelihood,
)
from .student_t import StudentTLikelihood

__all__ = ["BUILT_IN", "LIKELIHOODS", "LIKELIHOOD_CAPABILITIES", "LIKELIHOOD_DECLARATIONS", "conjugate_noise",
           "flat_intercept", "identity_link", "BernoulliLogisticLikelihood", "GaussianLikelihood",
           "NegativeBinomialLikelihood", "PoissonLikelihood", "ProbitLikelihood", "StudentTLikelihood",
           "make_likelihood", "masked_sum", "methods_fitting", "probit_mills_ratio", "register_likelihood", "require_likelihood",
           "scaled_erfc"]
