"""The fitting core of the sampling routes (``method="gibbs"`` and ``"nuts"``): a basis, targets, a
hierarchy object, a likelihood object and the sampler's settings in; the posterior draws and their
summaries out, as a :class:`SamplingFit` record.

Both samplers draw one posterior, ``y_i ~ likelihood(η_i)``, ``η_i = b₀ + h(x_i)ᵀβ``, ``β`` under the
hierarchy:

* ``"gibbs"``: the hierarchy engine (:mod:`sparsebayes.inference.engines.hierarchy_gibbs`) on the
  hierarchy's Gibbs conditionals (:func:`gibbs_hierarchy`). Under the Gaussian likelihood the flat
  intercept is integrated out of the sweep (``H``, ``y`` centred) and drawn afterwards from
  ``b₀ | β, σ² ~ N(ȳ − h̄ᵀβ, σ²/n)``, σ² under ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``; the other
  likelihoods by their conjugate augmentation (Albert & Chib 1993; Polson, Scott & Windle 2013), the
  intercept ``N(0, 10²)``.
* ``"nuts"``: NumPyro's NUTS (:func:`sparsebayes.inference.engines.nuts.nuts_draws`) on
  :func:`~sparsebayes.models.model.sparse_model` with the intercept a site of its own
  (:func:`intercept_model_for`: flat under the Gaussian, ``N(0, 10²)`` otherwise, as the Gibbs engine
  has it), the hierarchy's NumPyro statement (:func:`~sparsebayes.models.model.beta_statement`).

The basis (:func:`sampling_design`) is the EM estimators' standardized one without its bias column
(:class:`CentredBasis`); the record's summaries are the posterior medians on that basis (the model's
point), and in the data's units (:func:`raw_point`) the medians', the means' and the equal-tailed
intervals' weights. The record of a one-vs-all classifier is one :class:`SamplingFit` per classifier.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.models.features import fit_transform_validated
from sparsebayes.models.likelihoods import conjugate_noise, flat_intercept, require_likelihood
from sparsebayes.models.model import beta_statement, sparse_model, sparse_model_for
from sparsebayes.models.priors import HIERARCHIES, LaplacePrior, hierarchy_name, is_hierarchy, nuts_settings, supports

from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_augmented, hierarchy_gibbs_variates
from sparsebayes.inference.engines.hierarchy_gibbs_augmented import INTERCEPT_SCALE, AugmentedState
from sparsebayes.inference.estimators._base import make_feature_map, raw_weights, standardization
from sparsebayes.inference._validation import FLAGS, check_count, check_number
from sparsebayes.inference._warnings import warn_degenerate

#: The samplers (the routes' names) and the label each gives its messages and point.
SAMPLER_LABELS = {"gibbs": "Gibbs", "nuts": "NUTS"}


@dataclasses.dataclass(frozen=True)
class SamplerSettings:
    """Everything of a sampling fit besides the model: the basis (``features``, ``kernel_width``,
    ``fit_intercept``, ``standardize``), the chains (``num_warmup``, ``num_samples``, ``num_chains``,
    ``seed``, ``progress_bar``), the summaries (``credible_level``, ``rhat_max``), the Gaussian's noise
    prior under Gibbs (``c``, ``d``) and NUTS's own (``surrogate_eps``, ``target_accept_prob``)."""

    sampler: str
    features: object = "linear"
    kernel_width: object = "scale"
    fit_intercept: bool = True
    standardize: bool = True
    num_warmup: int = 500
    num_samples: int = 1000
    num_chains: int = 4
    seed: int = 0
    credible_level: float = 0.95
    rhat_max: float = 1.01
    progress_bar: bool = False
    c: float = -1.0
    d: float = 0.0
    surrogate_eps: float | None = None
    target_accept_prob: float | None = None

    @property
    def label(self):
        """``"Gibbs"`` or ``"NUTS"``: the sampler in messages and in the record's point label."""
        return SAMPLER_LABELS[self.sampler]

    def check(self):
        """``self`` after the checks of every setting read before the data (``ValueError`` naming the first
        one out of its domain)."""
        if self.sampler not in SAMPLER_LABELS:
            raise ValueError(f"sampler must be one of {sorted(SAMPLER_LABELS)}, got {self.sampler!r}")
        for name in FLAGS + ("standardize",):
            value = getattr(self, name, True)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        for name in ("num_warmup", "num_samples", "num_chains"):
            check_count(name, getattr(self, name), 0 if name == "num_warmup" else 1)
        check_count("seed", self.seed, 0)
        check_number("credible_level", self.credible_level, 0.0, strict=True)
        if not self.credible_level < 1.0:
            raise ValueError(f"credible_level must lie in (0, 1), got {self.credible_level!r}")
        r = self.rhat_max
        if not (isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, bool) and r > 1):
            raise ValueError(f"rhat_max must be a number > 1 (inf: no check), got {r!r}")
        return self


@dataclasses.dataclass(frozen=True)
class SamplingFit:
    """One posterior's draws and summaries (:func:`fit_sampling_model`).

    ``idata``: the draws as ``InferenceData`` (Gibbs) or NUTS's run
    (:class:`~sparsebayes.inference.engines.nuts.NutsRun`, made ``InferenceData`` on first read);
    ``beta`` (draws, n_basis), ``intercept`` and ``param`` (draws,), the chains concatenated;
    ``median`` the posterior medians of β on the basis; in the data's units ``coef`` (the medians'
    weights), ``raw_intercept`` (their function's value at ``x = 0``), ``mean`` and ``interval``
    (2, n_basis); ``active`` where the interval on the basis excludes zero; ``rhat`` the largest split
    R-hat over β (NaN with one chain or under four draws)."""

    idata: object
    beta: np.ndarray
    intercept: np.ndarray
    param: np.ndarray
    median: np.ndarray
    coef: np.ndarray
    raw_intercept: float
    mean: np.ndarray
    interval: np.ndarray
    active: np.ndarray
    rhat: float


# --- the basis --------------------------------------------------------------------------------------


class CentredBasis:
    """The basis of a model whose intercept is a site of its own: a fitted linear or quadratic map of
    the centred inputs (:class:`~sparsebayes.models.features.LinearFeatures` /
    :class:`~sparsebayes.models.features.QuadraticFeatures` with ``bias=True, center=True`` and its own
    ``scale``: the EM estimators' map under ``standardize=True``) without its bias column.

    ``h(x)ᵀβ + b₀`` on these columns is ``[1, h(x)]ᵀ[b₀, β]`` on the map's, so the map's own
    ``raw_weights`` give the raw terms' weights: :meth:`raw_weights` the terms' (the slopes), and
    :meth:`raw_intercept` the value at ``x = 0``.

    Parameters
    ----------
    inner : a fitted map with a bias column and centred inputs.
    """

    def __init__(self, inner):
        self.inner = inner
        self.n_features_in_ = inner.n_features_in_

    def transform(self, X):
        """The inner map's columns of ``X`` without its bias column (validated by the inner map)."""
        return np.asarray(self.inner.transform(X), dtype=np.float64)[:, 1:]

    def get_feature_names_out(self, input_features=None):
        """The inner map's names without ``"bias"``."""
        return self.inner.get_feature_names_out(input_features)[1:]

    def _with_bias(self, beta, intercept=0.0):
        beta = np.asarray(beta, dtype=np.float64)
        b0 = np.broadcast_to(np.asarray(intercept, dtype=np.float64), beta.shape[:-1])[..., None]
        return self.inner.raw_weights(np.concatenate([b0, beta], axis=-1))

    def raw_weights(self, beta):
        """The raw terms' weights (..., n_columns) of ``h(x)ᵀβ`` for ``beta`` (..., n_columns) on these
        columns (the constant it adds is :meth:`raw_intercept`'s)."""
        return self._with_bias(beta)[..., 1:]

    def raw_intercept(self, intercept, beta):
        """The value at ``x = 0`` of ``b₀ + h(x)ᵀβ`` (``b₀`` the value at the training mean)."""
        return self._with_bias(beta, intercept)[..., 0]


def sampling_design(X, features, *, kernel_width, fit_intercept, standardize, prior):
    """``(feature map, basis)`` of a sampling fit: :func:`~._base.make_feature_map` with the EM
    estimators' standardization (:func:`~._base.standardization`, the intercept in the bias's place),
    and for centred linear or quadratic maps the bias column taken off (:class:`CentredBasis`).
    Kernels and transformers are as ``make_feature_map`` gives them, without bias."""
    kw = standardization(standardize, fit_intercept, prior)
    if kw["center"] and isinstance(features, str) and features in ("linear", "quadratic"):
        inner = make_feature_map(features, bias=True, **kw)
        H = np.asarray(fit_transform_validated(inner, X), dtype=np.float64)[:, 1:]
        return CentredBasis(inner), H
    fm = make_feature_map(features, kernel_width=kernel_width, bias=False, scale=kw["scale"])
    return fm, np.asarray(fit_transform_validated(fm, X), dtype=np.float64)


def raw_point(feature_map, beta, intercept):
    """``(coef, intercept)`` in the data's units of the function ``b₀ + h(x)ᵀβ`` on a fitted map's
    columns: the map's ``raw_weights`` (:func:`~._base.raw_weights`) and, for a :class:`CentredBasis`,
    its value at ``x = 0``; else ``b₀`` itself."""
    coef = raw_weights(feature_map, beta)
    if isinstance(feature_map, CentredBasis):
        intercept = feature_map.raw_intercept(intercept, beta)
    return coef, np.asarray(intercept, dtype=np.float64)


# --- the hierarchy and the likelihood -----------------------------------------------------------------

#: The hierarchies method="gibbs" fits beside those with Gibbs conditionals, for the error messages.
GIBBS_FITS = ("'horseshoe' (HorseshoePrior), 'laplace' (LaplacePrior) or any hierarchy with Gibbs conditionals; "
              "SparseRegressor(method='gibbs') also fits 'scaled_laplace' (ScaledLaplacePrior: the Bayesian Lasso, "
              "Gaussian likelihood)")


def gibbs_hierarchy(prior):
    """``(hierarchy object, its Gibbs form)``: a registered name becomes its class's default object;
    a :class:`LaplacePrior` is checked and its numbers made floats (its own Gibbs conditionals); an
    object with Gibbs conditionals is its own. Any other is a ``ValueError`` naming the hierarchy and
    what the Gibbs engine fits."""
    if isinstance(prior, str):
        if prior not in HIERARCHIES:
            raise ValueError(f"prior {prior!r} is not a registered hierarchy; known: {sorted(HIERARCHIES)}")
        prior = HIERARCHIES[prior]()
    if isinstance(prior, LaplacePrior):
        prior.check()
        gp = None if prior.gamma_prior is None else tuple(float(v) for v in prior.gamma_prior)
        return prior, prior._replace(gamma=float(prior.gamma), gamma_prior=gp)
    if is_hierarchy(prior) or hasattr(prior, "gibbs_update"):
        if supports(prior, "gibbs"):
            return prior, prior
    label = type(prior).__name__ if not isinstance(prior, (str, type)) else repr(prior)
    hint = (" (the σ-scaled Bayesian Lasso: method='gibbs' with the Gaussian likelihood fits it by "
            "BayesianLassoRegressor)") if hierarchy_name(prior) == "scaled_laplace" else ""
    raise ValueError(f"{label} ({hierarchy_name(prior)!r}) has no Gibbs conditionals (gibbs_init, "
                     f"gibbs_prior_variance, gibbs_update){hint}; the Gibbs engine fits {GIBBS_FITS}")


def nuts_hierarchy(prior, surrogate_eps):
    """``(hierarchy object, (statement, marginal, hierarchy))``: the object of a registered name, and its
    NumPyro statement (:func:`~sparsebayes.models.model.beta_statement`, which refuses a hierarchy
    without one); ``ValueError`` naming an unknown name."""
    prior = HIERARCHIES[prior]() if isinstance(prior, str) and prior in HIERARCHIES else prior
    if isinstance(prior, str):
        raise ValueError(f"prior {prior!r} is not a registered hierarchy; known: {sorted(HIERARCHIES)}")
    statement, marginal, _ = beta_statement(prior, surrogate_eps)
    return prior, (statement, marginal, prior)


def sampling_hierarchy(prior, settings):
    """``(hierarchy object, the engine's form of it)`` for ``settings.sampler``: :func:`gibbs_hierarchy`
    or :func:`nuts_hierarchy`."""
    if settings.sampler == "gibbs":
        return gibbs_hierarchy(prior)
    return nuts_hierarchy(prior, settings.surrogate_eps)


def check_sampling_likelihood(lik, settings):
    """``ValueError`` unless the sampler fits the likelihood object ``lik``: a conjugate augmentation
    for Gibbs (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.require_gibbs_likelihood`; the noise
    prior ``c, d`` only for the Gaussian's σ²), an observation statement for NUTS."""
    if settings.sampler == "nuts":
        require_likelihood(lik, "nuts")
        return
    hierarchy_gibbs_augmented.require_gibbs_likelihood(lik)
    if not conjugate_noise(lik) and (settings.c, settings.d) != (-1.0, 0.0):
        raise ValueError(f"c, d are the Gaussian noise prior's; the {lik.name!r} likelihood's parameter has its "
                         "own prior: leave them at their defaults")


# --- NUTS's model: the intercept a site of its own ------------------------------------------------------


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
    from sparsebayes.inference.engines.model_trace import _model_trace
    p = H.shape[1]
    return sorted(name for name, site in _model_trace(model, (H, y), kwargs).items()
                  if site["type"] in ("sample", "deterministic") and not site.get("is_observed", False)
                  and np.shape(site["value"]) == (p,))


#: A chain whose mean NUTS acceptance is below this has not moved (:func:`stuck`).
STUCK_ACCEPTANCE = 0.01


def stuck_chains(idata):
    """:func:`stuck` of ``idata``'s posterior and sample stats (``acceptance_rate``, ``step_size``)."""
    stats = getattr(idata, "sample_stats", None)
    stat = lambda name: stats[name] if stats is not None and name in stats else None  # noqa: E731
    return stuck({name: var.values for name, var in idata.posterior.data_vars.items()}, stat("acceptance_rate"),
                 stat("step_size"))


def stuck(posterior, accept, step_size):
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


def _warn_if_stuck(owner, found, H):
    """A :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` when a chain did not move (``found``,
    :func:`stuck`, not ``None``): some parameter's draws (any component of any posterior site) all
    equal in a chain, or a chain's mean acceptance below :data:`STUCK_ACCEPTANCE`. Under columns in
    very different units (the Laplace and horseshoe bases are centred, not scaled) warm-up can adapt
    the step size down to ~1e-18, where no leapfrog step changes a float64 value: the chain stays at
    its start and its draws describe nothing, whatever R-hat over one chain says."""
    if found is None:
        return
    sites, low_accept, step = found
    what = []
    if sites:
        what.append(f"the draws of {', '.join(sites)} never moved")
    if low_accept:
        what.append(f"the mean acceptance was below {STUCK_ACCEPTANCE:g}")
    warn_degenerate(owner, f"NUTS did not move in at least one chain ({'; '.join(what)}; adapted step size "
                    f"{step:.3g}, basis up to |h| = {np.max(np.abs(H), initial=0.0):.3g}): the chain stayed near "
                    f"its start and the draws do not describe the posterior",
                    "scale X (e.g. StandardScaler) so that its columns have comparable units, or raise num_warmup, "
                    "and fit again", stacklevel=5)


# --- the draws ------------------------------------------------------------------------------------------


def _gibbs_states(H, y, prior_gibbs, lik, settings):
    """Run the Gibbs engine on the basis ``H`` and ``y``; the draws as :class:`~.hierarchy_gibbs_augmented.AugmentedState`
    (the Gaussian's with its intercept drawn given β, σ², and σ² as ``param``) and the sweeps' Info."""
    common = dict(num_warmup=settings.num_warmup, num_samples=settings.num_samples, num_chains=settings.num_chains,
                  seed=settings.seed, fit_intercept=settings.fit_intercept, progress_bar=bool(settings.progress_bar))
    if not conjugate_noise(lik):
        return hierarchy_gibbs.run(H, y, prior_gibbs, likelihood=lik, **common)
    variates = "auto" if hierarchy_gibbs_variates.can_take_variates(prior_gibbs) else None  # pre-drawn where declared
    states, infos = hierarchy_gibbs.run(H, y, prior_gibbs, noise_prior=hierarchy_gibbs.NoisePrior(settings.c, settings.d),
                                        variates=variates, **common)
    beta, noise = np.asarray(states.beta), np.asarray(states.noise_var)
    if settings.fit_intercept:  # b₀ | β, σ² ~ N(ȳ − h̄ᵀβ, σ²/n): the flat-prior intercept the sweep integrated out
        z = np.random.default_rng([settings.seed, 7]).standard_normal(noise.shape)
        intercept = y.mean() - beta @ H.mean(axis=0) + np.sqrt(noise / H.shape[0]) * z
    else:
        intercept = np.zeros_like(noise)
    return hierarchy_gibbs_augmented.AugmentedState(beta, intercept, noise, states.aux), infos


def draw_gibbs(H, y, prior_gibbs, lik, settings, coords, *, owner):
    """``(draws, idata)`` of the Gibbs engine: the draws as :class:`~.hierarchy_gibbs_augmented.AugmentedState`
    (chain, draw, ...) and their ``InferenceData``
    (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.augmented_inference_data`). A
    :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` (naming ``owner``) when the engine
    refused sweeps that left float64 (:func:`~.hierarchy_gibbs.guarded`: the chain stayed where it was,
    so its draws repeat and do not describe the posterior)."""
    states, infos = _gibbs_states(H, y, prior_gibbs, lik, settings)
    refused = np.asarray(getattr(infos, "refused", False))
    if np.any(refused):
        warn_degenerate(owner, f"{int(np.sum(refused))} of {refused.size} Gibbs sweeps left float64 and were refused "
                        f"(the chain stayed where it was): the posterior is numerically singular on this basis "
                        f"(|h| up to {np.max(np.abs(H), initial=0.0):.3g}) and the draws do not describe it",
                        "scale X (e.g. StandardScaler) or drop its collinear columns, and fit again", stacklevel=4)
    idata = hierarchy_gibbs_augmented.augmented_inference_data(states, infos, H, y, lik, prior_gibbs,
                                                     fit_intercept=settings.fit_intercept, coords=coords,
                                                     seed=settings.seed)
    return states, idata


def draw_nuts(H, y, engine_prior, lik, settings, coords, *, owner):
    """``(draws, run)`` of NUTS on :func:`intercept_model_for`'s model (``fit_intercept``) or
    :func:`~sparsebayes.models.model.sparse_model_for`'s: the draws as :class:`~.hierarchy_gibbs_augmented.AugmentedState`
    (chain, draw, ...; ``param`` the likelihood's parameter, ones without one) and the run
    (:class:`~sparsebayes.inference.engines.nuts.NutsRun`, made ``InferenceData`` when first read, so
    that a fit imports no ArviZ). NUTS's target acceptance: ``settings.target_accept_prob``, else the
    hierarchy's declared one; a warning (naming ``owner``) when a chain did not move (:func:`stuck`)."""
    from sparsebayes.inference.engines.nuts import nuts_draws

    statement, marginal, prior = engine_prior
    kwargs = dict(prior=statement, likelihood=lik, marginal=marginal)
    if settings.fit_intercept:
        model = intercept_model_for(statement, lik)
        kwargs["intercept_scale"] = intercept_scale(lik)
    else:
        model = sparse_model_for(statement, lik)
    declared = nuts_settings(prior)
    target = (settings.target_accept_prob if settings.target_accept_prob is not None
              else declared.get("target_accept_prob"))
    dims = {**{s: ["basis"] for s in per_weight_sites(model, H, y, kwargs)}, "y": ["obs"]}
    run = nuts_draws(model, H, y, num_warmup=settings.num_warmup, num_samples=settings.num_samples,
                     num_chains=settings.num_chains, seed=settings.seed, target_accept_prob=target,
                     max_tree_depth=declared.get("max_tree_depth"), progress_bar=bool(settings.progress_bar),
                     coords=coords, dims=dims, **kwargs)
    post = run.samples
    _warn_if_stuck(owner, stuck(post, run.extra.get("accept_prob"), run.extra.get("adapt_state.step_size")), H)
    beta = np.asarray(post["beta"])
    intercept = np.asarray(post["intercept"]) if settings.fit_intercept else np.zeros(beta.shape[:2])
    name = getattr(lik, "param_name", None)
    param = np.asarray(post[name]) if name else np.ones(beta.shape[:2])
    return AugmentedState(beta, intercept, param, {}), run


def _nonfinite_error(H, feature_map, settings):
    """The ``FloatingPointError`` of draws that left float64, saying what in the basis made the
    posterior numerically singular and what to change."""
    spread = np.max(np.abs(H), initial=0.0)
    if not settings.standardize:
        why = ("standardize=False takes the inputs as they are, so columns with large offsets or scales make "
               "the posterior numerically singular; centre and scale X (e.g. StandardScaler, or "
               "standardize=True) and fit again")
    elif isinstance(feature_map, CentredBasis) and not feature_map.inner.scale:
        why = ("the inputs are centred, not scaled: this hierarchy's scale has the units of the weights (as "
               "under EM), so columns in very large or small units make the posterior numerically singular; "
               "scale X (e.g. StandardScaler) and fit again")
    else:
        why = (f"the posterior is numerically singular on this basis (features={settings.features!r}); centre and "
               "scale X (e.g. StandardScaler) and fit again")
    return FloatingPointError(f"{settings.label} produced non-finite draws of the weights (the basis "
                              f"reaches |h| = {spread:.3g}): {why}")


def fit_sampling_model(H, y, engine_prior, lik, settings, *, feature_map, coords, owner):
    """One posterior of ``y`` on the basis ``H`` (the columns of the fitted ``feature_map``) under the
    hierarchy's engine form ``engine_prior`` (:func:`sampling_hierarchy`) and the likelihood object
    ``lik``, drawn by ``settings.sampler`` (:func:`draw_gibbs`, :func:`draw_nuts`) and summarized: the
    :class:`SamplingFit` record. ``coords`` names the ``basis`` dim of the draws; ``owner`` (the
    estimator) is named in the warnings.

    Raises ``FloatingPointError`` for non-finite draws of the weights (a numerically singular
    posterior); warns (``ConvergenceWarning``) when the largest split R-hat over β exceeds
    ``settings.rhat_max`` (two chains or more, four draws or more)."""
    from sparsebayes.inference.posterior.split_rhat import max_split_rhat  # ArviZ's rhat in NumPy: no ArviZ import

    draw = draw_gibbs if settings.sampler == "gibbs" else draw_nuts
    states, idata = draw(H, y, engine_prior, lik, settings, coords, owner=owner)
    beta = np.asarray(states.beta).reshape(-1, H.shape[1])
    intercept = np.asarray(states.intercept).ravel()
    if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(intercept))):
        raise _nonfinite_error(H, feature_map, settings)
    tail = 0.5 * (1.0 - settings.credible_level)
    max_rhat = float("nan")
    if settings.num_chains >= 2 and settings.num_samples >= 4:
        max_rhat = max_split_rhat(states.beta)
        if max_rhat > settings.rhat_max:
            warnings.warn(f"{settings.label} chains have not mixed: max R-hat over beta {max_rhat:.3f} > "
                          f"{settings.rhat_max}; increase num_warmup / num_samples", ConvergenceWarning, stacklevel=3)
    median = np.median(beta, axis=0)
    coef, raw_intercept = raw_point(feature_map, median, float(np.median(intercept)))
    basis_interval = np.quantile(beta, [tail, 1.0 - tail], axis=0)
    return SamplingFit(idata=idata, beta=beta, intercept=intercept, param=np.asarray(states.param).ravel(),
                       median=median, coef=coef, raw_intercept=float(raw_intercept),
                       mean=raw_weights(feature_map, beta.mean(axis=0)),
                       interval=np.quantile(raw_weights(feature_map, beta), [tail, 1.0 - tail], axis=0),
                       active=(basis_interval[0] > 0) | (basis_interval[1] < 0), rhat=max_rhat)


def inference_data(stored):
    """``stored`` (a sampling fit's draws: a :class:`~sparsebayes.inference.engines.nuts.NutsRun`, the
    Bayesian Lasso's ``(GibbsDraws, coords)``, ``InferenceData`` or a list of them) as ``InferenceData``."""
    if isinstance(stored, list):
        return [inference_data(s) for s in stored]
    if hasattr(stored, "inference_data"):
        return stored.inference_data()
    if isinstance(stored, tuple):
        from sparsebayes.inference.engines.bayesian_lasso import gibbs_inference_data

        draws, coords = stored
        return gibbs_inference_data(draws, coords=coords)
    return stored
