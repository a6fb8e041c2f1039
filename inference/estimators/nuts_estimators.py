"""NumPyro's NUTS on the one model of (prior, likelihood, design) as scikit-learn estimators:
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` and ``SparseClassifier``
with ``method="nuts"`` fixed and the sampler's settings as parameters, fitted by the sampling core
(:func:`~sparsebayes.inference.estimators.sampling_fit.fit_sampling_model`,
:func:`~sparsebayes.inference.estimators.sampling_fit.draw_nuts`).

:class:`NutsRegressor` and :class:`NutsClassifier` sample :func:`sparsebayes.models.model.sparse_model`
(``β`` by the hierarchy's statement, ``y`` by the likelihood's observation statement, the likelihood's
own parameter under the prior it declares; its function per class of statement and likelihood,
:func:`~sparsebayes.models.model.sparse_model_for`, so no fit runs a program compiled for another
model) with :func:`sparsebayes.inference.engines.nuts.run_nuts`, for any
hierarchy with a NumPyro statement (:func:`~sparsebayes.models.model.beta_statement`: the Laplace
hierarchy's marginal, the horseshoe's non-centred form, the Jeffreys prior's labelled surrogate with
``surrogate_eps``) and any likelihood with one (the Poisson included, which has no Gibbs sampler).

The intercept is one more column of ones in the design whose weight has its own statement
(:class:`~.sampling_fit.WithIntercept`, added to the basis inside the model,
:func:`~.sampling_fit.intercept_model_for`, so that
the model record of a fit, ``posterior_model``, and ``compare`` run on the basis alone, with ``beta``
on ``basis`` and the intercept a site of its own; per-weight sites such as ``lam_local`` on
``basis`` too): flat under a likelihood that states so (``intercept_prior``: the Gaussian),
``N(0, 10²)`` otherwise, as the Gibbs engine has it (:data:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.INTERCEPT_SCALE`), so that
:class:`~sparsebayes.inference.estimators.gibbs_estimators.GibbsRegressor` and :class:`NutsRegressor` with the
same ``prior`` and ``likelihood`` sample one posterior. The basis is standardized as theirs (and the
EM estimators') is, ``standardize=True``: linear and quadratic terms of inputs centred at their
training mean and, under the Jeffreys prior, scaled by their training SD
(:func:`~sparsebayes.inference.estimators.sampling_fit.sampling_design`). Fitted attributes, ``predict`` and
``predict_proba`` are those of the Gibbs estimators (posterior medians as ``beta_`` on the basis and
as ``coef_``, ``intercept_`` in the data's units; posterior predictive means).
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.gibbs_estimators import _DOC_SAMPLER, FixedSampler
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier, SparseRegressor


_DOC_NUTS = """
    surrogate_eps : float or None, default=None
        The Jeffreys prior's labelled proper surrogate ``1/τ_i ~ Gamma(ε, ε)`` (its own posterior is
        improper); required for ``prior="jeffreys"``, refused for the others.
    target_accept_prob : float or None, default=None
        NUTS's target acceptance; ``None``: the hierarchy's declared setting (the horseshoe's 0.99),
        else NumPyro's 0.8.
"""


class NutsRegressor(FixedSampler, SparseRegressor):
    """Sparse Bayesian regression by NUTS on :func:`~sparsebayes.models.model.sparse_model`.

    Parameters
    ----------
    prior : str or hierarchy object, default="laplace"
        Any hierarchy with a NumPyro statement (``"laplace"``, ``"horseshoe"``, ``"gaussian"``,
        ``"jeffreys"`` with ``surrogate_eps``, or an object).
    likelihood : str or likelihood object, default="gaussian"
        Any registered likelihood of real or count targets with an observation statement
        (``"gaussian"``, ``"student_t"``, ``"poisson"``, ``"negative_binomial"``); its own parameter
        under the prior it declares (the Gaussian σ² flat).
    """ + _DOC_SAMPLER.replace("num_chains, seed : int, default=500, 1000, 4, 0",
                               "num_chains, seed : int, default=500, 1000, 2, 0") + _DOC_NUTS + """
    Attributes
    ----------
    As :class:`~sparsebayes.inference.estimators.gibbs_estimators.GibbsRegressor`'s.
    """

    method = "nuts"

    def __init__(self, *, prior="laplace", likelihood="gaussian", features="linear", kernel_width="scale",
                 fit_intercept=True, standardize=True, num_warmup=500, num_samples=1000, num_chains=2, seed=0,
                 credible_level=0.95, rhat_max=1.01, progress_bar=False, surrogate_eps=None, target_accept_prob=None):
        set_init_params(self, locals())


class NutsClassifier(FixedSampler, SparseClassifier):
    """Sparse Bayesian binary classification by NUTS (one-vs-all beyond two classes) on
    :func:`~sparsebayes.models.model.sparse_model` with the probit or logistic likelihood.

    Parameters
    ----------
    prior : str or hierarchy object, default="laplace"
        As :class:`NutsRegressor`'s.
    link : {"probit", "logistic"} or likelihood object, default="probit"
    """ + _DOC_SAMPLER.replace("num_chains, seed : int, default=500, 1000, 4, 0",
                               "num_chains, seed : int, default=500, 1000, 2, 0") + _DOC_NUTS + """
    Attributes
    ----------
    As :class:`~sparsebayes.inference.estimators.gibbs_estimators.GibbsClassifier`'s.
    """

    method = "nuts"

    def __init__(self, *, prior="laplace", link="probit", features="linear", kernel_width="scale", fit_intercept=True,
                 standardize=True, num_warmup=500, num_samples=1000, num_chains=2, seed=0, credible_level=0.95,
                 rhat_max=1.01, progress_bar=False, surrogate_eps=None, target_accept_prob=None):
        set_init_params(self, locals())
