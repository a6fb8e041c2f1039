"""NumPyro's NUTS on the one model of (prior, likelihood, design) as scikit-learn estimators.

:class:`NutsRegressor` and :class:`NutsClassifier` sample :func:`sparsebayes.models.model.sparse_model`
(``β`` by the hierarchy's statement, ``y`` by the likelihood's observation statement, the likelihood's
own parameter under the prior it declares; its function per class of statement and likelihood,
:func:`~sparsebayes.models.model.sparse_model_for`, so no fit runs a program compiled for another
model) with :func:`sparsebayes.inference.engines.nuts.run_nuts`, for any
hierarchy with a NumPyro statement (:func:`~sparsebayes.models.model.beta_statement`: the Laplace
hierarchy's marginal, the horseshoe's non-centred form, the Jeffreys prior's labelled surrogate with
``surrogate_eps``) and any likelihood with one (the Poisson included, which has no Gibbs sampler).

The intercept is one more column of ones in the design whose weight has its own statement
(:class:`WithIntercept`, added to the basis inside the model, :func:`intercept_model_for`, so that
the model record of a fit, ``posterior_model``, and ``compare`` run on the basis alone, with ``beta``
on ``basis`` and the intercept a site of its own; per-weight sites such as ``lam_local`` on
``basis`` too): flat under a likelihood that states so (``intercept_prior``: the Gaussian),
``N(0, 10²)`` otherwise, as the Gibbs engine has it (:data:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.INTERCEPT_SCALE`), so that
:class:`~sparsebayes.inference.estimators.gibbs_estimators.GibbsRegressor` and :class:`NutsRegressor` with the
same ``prior`` and ``likelihood`` sample one posterior. The basis is standardized as theirs (and the
EM estimators') is, ``standardize=True``: linear and quadratic terms of inputs centred at their
training mean and, under the Jeffreys prior, scaled by their training SD
(:func:`~sparsebayes.inference.estimators.gibbs_estimators.sampling_design`). Fitted attributes, ``predict`` and
``predict_proba`` are those of the Gibbs estimators (posterior medians as ``beta_`` on the basis and
as ``coef_``, ``intercept_`` in the data's units; posterior predictive means).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints
from sparsebayes.models.likelihoods import flat_intercept, require_likelihood
from sparsebayes.models.model import beta_statement, sparse_model, sparse_model_for
from sparsebayes.models.priors import HIERARCHIES, nuts_settings

from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.estimators.gibbs_estimators import _DOC_SAMPLER, GibbsClassifier, GibbsRegressor
from sparsebayes.inference.engines.hierarchy_gibbs_augmented import INTERCEPT_SCALE, AugmentedState


class WithIntercept(NamedTuple):
    """A statement for :func:`~sparsebayes.models.model.sparse_model` on a design whose first column is
    ones: ``intercept`` (flat with ``scale=None``, else ``N(0, scale²)``), then the hierarchy's own
    statement ``inner.sample_beta(p − 1)`` for the basis weights (site ``beta``); returns both, the
    intercept first."""

    inner: object
    scale: float | None

    def sample_beta(self, p, name="beta", marginal=False):
        if self.scale is None:
            b0 = numpyro.sample("intercept", dist.ImproperUniform(constraints.real, (), ()))
        else:
            b0 = numpyro.sample("intercept", dist.Normal(0.0, self.scale))
        beta = self.inner.sample_beta(p - 1, name, marginal=True) if marginal else self.inner.sample_beta(p - 1, name)
        return jnp.concatenate([jnp.reshape(b0, (1,)), beta])


#: :func:`intercept_model_for`'s functions, one per (statement class, likelihood class).
_MODELS = {}


def _with_ones(H):
    H = jnp.asarray(H)
    return jnp.concatenate([jnp.ones((H.shape[0], 1), H.dtype), H], axis=1)


def intercept_model_for(statement, likelihood):
    """:func:`~sparsebayes.models.model.sparse_model` with an intercept, on the basis ``H`` without a bias
    column: ``model(H, y, prior=statement, likelihood=..., params=..., marginal=..., intercept_scale=s)``
    is ``sparse_model([1, H], y, prior=WithIntercept(statement, s), ...)`` (site ``intercept``: flat with
    ``s = None``, else ``N(0, s²)``; ``beta`` on the ``H`` columns alone). The hierarchy's statement
    stays a keyword argument of its own, so NUTS runs with the settings it declares; one function per
    class of statement and likelihood, as :func:`~sparsebayes.models.model.sparse_model_for` (its
    compiled programs are kept by the model function and these arguments' values)."""
    key = (type(statement), type(likelihood))
    if key not in _MODELS:
        def model(H, y=None, *, prior, likelihood, params=None, marginal=False, intercept_scale=None):
            return sparse_model(_with_ones(H), y, prior=WithIntercept(prior, intercept_scale), likelihood=likelihood,
                                params=params, marginal=marginal)

        model.__name__ = model.__qualname__ = f"intercept_model_{'_'.join(k.__name__ for k in key)}"
        model.__wrapped__ = sparse_model
        _MODELS[key] = model
    return _MODELS[key]


def intercept_prior_model(H, y=None, *, prior, likelihood=None, params=None, marginal=False, intercept_scale=None):
    """The prior half of :func:`intercept_model_for`'s model (same arguments): ``intercept`` and ``β``."""
    return WithIntercept(prior, intercept_scale).sample_beta(H.shape[1] + 1, marginal=marginal)


def intercept_scale(likelihood):
    """The intercept's prior scale under ``likelihood``: ``None`` (flat) where the likelihood states a flat
    intercept prior (:func:`~sparsebayes.models.likelihoods.flat_intercept`: the Gaussian), else
    :data:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.INTERCEPT_SCALE` (the Gibbs engine's ``N(0, 10²)``)."""
    return None if flat_intercept(likelihood) else float(INTERCEPT_SCALE)


def per_weight_sites(model, H, y, kwargs):
    """The model's latent sites with one entry per column of ``H`` (``beta``, the horseshoe's
    ``lam_local``, the Laplace mixture's ``tau``, ...), read from its trace: they get the dim ``basis``."""
    from sparsebayes.inference.engines.nuts import _model_trace
    p = H.shape[1]
    return sorted(name for name, site in _model_trace(model, (H, y), kwargs).items()
                  if site["type"] in ("sample", "deterministic") and not site.get("is_observed", False)
                  and np.shape(site["value"]) == (p,))


class _NutsSampling:
    """The NUTS hooks of the sampling estimators (:class:`~.gibbs_estimators._SamplingBase`)."""

    _sampler_label = "NUTS"

    def _engine_prior(self):
        prior = HIERARCHIES[self.prior]() if isinstance(self.prior, str) and self.prior in HIERARCHIES else self.prior
        if isinstance(prior, str):
            raise ValueError(f"prior {prior!r} is not a registered hierarchy; known: {sorted(HIERARCHIES)}")
        statement, marginal, _ = beta_statement(prior, self.surrogate_eps)
        return prior, (statement, marginal, prior)

    def _check_likelihood(self, lik):
        require_likelihood(lik, "nuts")

    def _sample(self, H, y, engine_prior, lik, coords):
        """``(draws, idata)`` as the Gibbs estimators' hook has them; ``idata`` is the run
        (:class:`~sparsebayes.inference.engines.nuts.NutsRun`), made ``InferenceData`` when ``idata_`` is
        first read, so that a fit imports no ArviZ."""
        from sparsebayes.inference.engines.nuts import nuts_draws

        statement, marginal, prior = engine_prior
        kwargs = dict(prior=statement, likelihood=lik, marginal=marginal)
        if self.fit_intercept:
            model = intercept_model_for(statement, lik)
            kwargs["intercept_scale"] = intercept_scale(lik)
        else:
            model = sparse_model_for(statement, lik)
        declared = nuts_settings(prior)
        target = self.target_accept_prob if self.target_accept_prob is not None else declared.get("target_accept_prob")
        dims = {**{s: ["basis"] for s in per_weight_sites(model, H, y, kwargs)}, "y": ["obs"]}
        run = nuts_draws(model, H, y, num_warmup=self.num_warmup, num_samples=self.num_samples,
                         num_chains=self.num_chains, seed=self.seed, target_accept_prob=target,
                         max_tree_depth=declared.get("max_tree_depth"), progress_bar=bool(self.progress_bar),
                         coords=coords, dims=dims, **kwargs)
        post = run.samples
        self._warn_if_stuck(_stuck(post, run.extra.get("accept_prob"), run.extra.get("adapt_state.step_size")), H)
        beta = np.asarray(post["beta"])
        intercept = np.asarray(post["intercept"]) if self.fit_intercept else np.zeros(beta.shape[:2])
        name = getattr(lik, "param_name", None)
        param = np.asarray(post[name]) if name else np.ones(beta.shape[:2])
        return AugmentedState(beta, intercept, param, {}), run

    @property
    def idata_(self):
        """The draws as ``InferenceData`` (a list of them, one per one-vs-all classifier): built from the
        fit's run on first read (:meth:`~sparsebayes.inference.engines.nuts.NutsRun.inference_data`)."""
        try:
            stored = self.__dict__["_idata_"]
        except KeyError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'idata_' (not fitted)") from None
        built = _inference_data(stored)
        self.__dict__["_idata_"] = built
        return built

    @idata_.setter
    def idata_(self, value):
        self.__dict__["_idata_"] = value

    def __getstate__(self):
        # the run holds the model function, made in this process: a pickle keeps the InferenceData
        state = super().__getstate__()
        if "_idata_" in state:
            state["_idata_"] = _inference_data(state["_idata_"])
        return state


    def _warn_if_stuck(self, stuck, H):
        """A :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` when a chain did not move (``stuck``,
        :func:`_stuck`, not ``None``): some
        parameter's draws (any component of any posterior site) all equal in a chain, or a chain's mean
        acceptance below :data:`STUCK_ACCEPTANCE`. Under columns in very different units (the Laplace
        and horseshoe bases are centred, not scaled) warm-up can adapt the step size down to ~1e-18,
        where no leapfrog step changes a float64 value: the chain stays at its start and its draws
        describe nothing, whatever R-hat over one chain says."""
        if stuck is None:
            return
        sites, low_accept, step = stuck
        what = []
        if sites:
            what.append(f"the draws of {', '.join(sites)} never moved")
        if low_accept:
            what.append(f"the mean acceptance was below {STUCK_ACCEPTANCE:g}")
        warn_degenerate(self, f"NUTS did not move in at least one chain ({'; '.join(what)}; adapted step size "
                        f"{step:.3g}, basis up to |h| = {np.max(np.abs(H), initial=0.0):.3g}): the chain stayed near "
                        f"its start and the draws do not describe the posterior",
                        "scale X (e.g. StandardScaler) so that its columns have comparable units, or raise num_warmup, "
                        "and fit again", stacklevel=5)


#: A chain whose mean NUTS acceptance is below this has not moved (:func:`_stuck_chains`).
STUCK_ACCEPTANCE = 0.01


def _stuck_chains(idata):
    """:func:`_stuck` of ``idata``'s posterior and sample stats (``acceptance_rate``, ``step_size``)."""
    stats = getattr(idata, "sample_stats", None)
    stat = lambda name: stats[name] if stats is not None and name in stats else None  # noqa: E731
    return _stuck({name: var.values for name, var in idata.posterior.data_vars.items()}, stat("acceptance_rate"),
                  stat("step_size"))


def _stuck(posterior, accept, step_size):
    """``(sites, low_acceptance, step_size)`` when some chain did not move, else ``None``: ``posterior``
    the draws per site (chain, draw, ...), ``accept`` the acceptance per draw (chain, draw) and
    ``step_size`` the adapted steps (either ``None`` where unknown). ``sites`` the sites with a
    component whose draws all equal in some chain (each as ``name[index]``, at most three listed),
    ``low_acceptance`` whether some chain's mean acceptance is below :data:`STUCK_ACCEPTANCE`,
    ``step_size`` the smallest adapted step. Needs two draws or more."""
    if not posterior or np.shape(next(iter(posterior.values())))[1] < 2:
        return None
    sites = []
    for name, var in posterior.items():
        a = np.asarray(var, dtype=np.float64)
        flat = a.reshape(a.shape[0], a.shape[1], -1)
        frozen = np.all(flat == flat[:, :1], axis=1)  # (chain, component)
        for j in np.flatnonzero(np.any(frozen, axis=0)):
            sites.append(name if flat.shape[2] == 1 else f"{name}[{j}]")
    accept = None if accept is None else np.asarray(accept, dtype=np.float64)
    low = bool(accept is not None and np.any(np.nan_to_num(accept.mean(axis=1), nan=0.0) < STUCK_ACCEPTANCE))
    if not sites and not low:
        return None
    step = float(np.min(step_size)) if step_size is not None else float("nan")
    shown = sites[:3] + ([f"and {len(sites) - 3} more"] if len(sites) > 3 else [])
    return shown, low, step


def _inference_data(stored):
    """``stored`` (a fit's ``idata_``: a :class:`~sparsebayes.inference.engines.nuts.NutsRun`, ``InferenceData``
    or a list of them) as ``InferenceData``."""
    if isinstance(stored, list):
        return [_inference_data(s) for s in stored]
    return stored.inference_data() if hasattr(stored, "inference_data") else stored


_DOC_NUTS = """
    surrogate_eps : float or None, default=None
        The Jeffreys prior's labelled proper surrogate ``1/τ_i ~ Gamma(ε, ε)`` (its own posterior is
        improper); required for ``prior="jeffreys"``, refused for the others.
    target_accept_prob : float or None, default=None
        NUTS's target acceptance; ``None``: the hierarchy's declared setting (the horseshoe's 0.99),
        else NumPyro's 0.8.
"""


class NutsRegressor(_NutsSampling, GibbsRegressor):
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

    def __init__(self, *, prior="laplace", likelihood="gaussian", features="linear", kernel_width="scale",
                 fit_intercept=True, standardize=True, num_warmup=500, num_samples=1000, num_chains=2, seed=0,
                 credible_level=0.95, rhat_max=1.01, progress_bar=False, surrogate_eps=None, target_accept_prob=None):
        self.prior = prior
        self.likelihood = likelihood
        self.features = features
        self.kernel_width = kernel_width
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.seed = seed
        self.credible_level = credible_level
        self.rhat_max = rhat_max
        self.progress_bar = progress_bar
        self.surrogate_eps = surrogate_eps
        self.target_accept_prob = target_accept_prob


class NutsClassifier(_NutsSampling, GibbsClassifier):
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

    def __init__(self, *, prior="laplace", link="probit", features="linear", kernel_width="scale", fit_intercept=True,
                 standardize=True, num_warmup=500, num_samples=1000, num_chains=2, seed=0, credible_level=0.95,
                 rhat_max=1.01, progress_bar=False, surrogate_eps=None, target_accept_prob=None):
        self.prior = prior
        self.link = link
        self.features = features
        self.kernel_width = kernel_width
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.seed = seed
        self.credible_level = credible_level
        self.rhat_max = rhat_max
        self.progress_bar = progress_bar
        self.surrogate_eps = surrogate_eps
        self.target_accept_prob = target_accept_prob
