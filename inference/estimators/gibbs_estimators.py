"""The Gibbs engine (:mod:`sparsebayes.inference.engines.hierarchy_gibbs`) as scikit-learn estimators.

:class:`GibbsRegressor` and :class:`GibbsClassifier` draw the posterior of ``y_i ~ likelihood(η_i)``,
``η_i = b₀ + h(x_i)ᵀβ``, under a hierarchy on β with Gibbs conditionals, and report it in
scikit-learn's layout: ``coef_`` and ``intercept_`` are the posterior medians (as Park & Casella
report theirs, :class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`),
``predict`` and ``predict_proba`` the posterior predictive means, and the draws are kept
(``to_inference_data``: ``beta`` on ``basis``, ``intercept``, the likelihood's own parameter by its
``param_name``, the hierarchy's twin sites, ``log_likelihood``, ``posterior_predictive``).

* The Gaussian likelihood: :func:`~sparsebayes.inference.engines.hierarchy_gibbs.run` (Rue's or
  Bhattacharya et al.'s β draw by shape); the intercept has a flat prior and is integrated out of
  the sweep (``X``, ``y`` centred), then drawn from ``b₀ | β, σ² ~ N(ȳ − h̄ᵀβ, σ²/n)``; σ² under
  ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (``c = −1, d = 0``: flat, the EM engine's 000 eq. 6).
* Other likelihoods by their conjugate augmentation
  (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`): probit (Albert & Chib 1993) and
  logistic (Pólya-Gamma, Polson, Scott & Windle 2013) for the classifier, Student-t (Gamma scales)
  and negative binomial (Pólya-Gamma) for the regressor; the intercept ``b₀ ~ N(0, 10²)``. The
  Poisson has no conjugate augmentation: a ``ValueError`` says to use NUTS.

The hierarchies: any with Gibbs conditionals (:data:`sparsebayes.models.priors.CAPABILITIES`
``"gibbs"``: the horseshoe, Makalic & Schmidt 2016, τ fixed or estimated, or a registered one), and
EM's :class:`~sparsebayes.models.priors.LaplacePrior`, whose exponential mixture ``τ_i ~ Exp(γ/2)``,
``β_i | τ_i ~ N(0, τ_i)`` (002 eqs. 9–10) has Park & Casella's conditional ``1/τ_i | β_i ~
IG(√(γ/β_i²), γ)`` (Park & Casella 2008, Sec. 2; unscaled by σ) and, with ``gamma_prior = (a, b)``,
``γ | τ ~ Gamma(a + p, b + Σ τ_i/2)`` (the hierarchy's own conditionals,
:meth:`~sparsebayes.models.priors.LaplacePrior.gibbs_update`). So the posterior drawn is the one
whose mode the EM estimators compute (the bias apart: EM penalizes it, here it has its flat or wide
Gaussian prior). Park & Casella's σ-scaled Bayesian Lasso is
:class:`~sparsebayes.inference.estimators.bayesian_lasso_estimator.BayesianLassoRegressor`.

The basis, the origin and the units of ``x``: the basis is ``features`` without a bias column (the
intercept is the engine's), built as the EM estimators build theirs
(:mod:`sparsebayes.inference.estimators.adaptive`, ``standardize=True``): the linear and quadratic maps act on
inputs centred at their training mean (with ``fit_intercept``) and, under a scale-free hierarchy (the
Jeffreys prior), divided by their training SD. So the hierarchy is on the same weights as the EM
estimator's with the same prior (the EM basis without its bias column, :class:`CentredBasis`), the
intercept is the value at the training mean, and a fit on ``X + c`` samples what the fit on ``X``
does (an offset of 1e8 would otherwise make the posterior numerically singular). Under the flat intercept of the
Gaussian likelihood the centring changes nothing but the rounding; under the ``N(0, 10²)`` intercept of
the others it puts that prior on the value at the mean, not at ``x = 0``. A hierarchy with a fixed
scale (``HorseshoePrior(tau=1)``, ``LaplacePrior(gamma=1)``) has the units of β, as it has under EM:
its inputs are centred, not scaled, and the units of ``X`` (and ``y``) remain part of the model.
Gaussian kernels are translation-invariant and are used as they are. The draws (``beta_draws_``,
``to_inference_data``, the ``posterior_model`` record) are on ``feature_map_``'s columns, as EM's
``beta_`` is; ``coef_`` and ``intercept_`` give the posterior medians' function in the data's units
(the raw terms, :meth:`CentredBasis.raw_weights`; ``intercept_`` the value at ``x = 0``).
``standardize=False`` takes the inputs as they are.
"""
from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted
from sparsebayes.models.features import fit_transform_validated, transform_validated
from sparsebayes.models.likelihoods import conjugate_noise, make_likelihood
from sparsebayes.models.priors import HIERARCHIES, LaplacePrior, hierarchy_name, is_hierarchy, supports

from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_augmented, hierarchy_gibbs_variates
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.inference.estimators._base import atomic_fit, basis_names, make_feature_map, raw_weights, standardization
from sparsebayes.inference._validation import (check_count, check_flags, check_number, validate_classification_data,
                          validate_predict_data, validate_regression_data)
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.estimators.adaptive import LINKS


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
    """``(feature map, basis)`` of a sampling estimator: :func:`~._base.make_feature_map` with the EM
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


def _check_sampler_params(est):
    """The shared parameters' checks, before any data is read."""
    check_flags(est)
    if not isinstance(est.standardize, (bool, np.bool_)):
        raise ValueError(f"standardize must be True or False, got {est.standardize!r}")
    for name in ("num_warmup", "num_samples", "num_chains"):
        check_count(name, getattr(est, name), 0 if name == "num_warmup" else 1)
    check_count("seed", est.seed, 0)
    check_number("credible_level", est.credible_level, 0.0, strict=True)
    if not est.credible_level < 1.0:
        raise ValueError(f"credible_level must lie in (0, 1), got {est.credible_level!r}")
    r = est.rhat_max
    if not (isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, bool) and r > 1):
        raise ValueError(f"rhat_max must be a number > 1 (inf: no check), got {r!r}")


def _draw(est, H, y, prior_gibbs, lik):
    """Run the engine on the basis ``H`` and ``y``; the draws as :class:`~.hierarchy_gibbs_augmented.AugmentedState`
    (the Gaussian's with its intercept drawn given β, σ², and σ² as ``param``) and the sweeps' Info."""
    common = dict(num_warmup=est.num_warmup, num_samples=est.num_samples, num_chains=est.num_chains,
                  seed=est.seed, fit_intercept=est.fit_intercept, progress_bar=bool(est.progress_bar))
    if not conjugate_noise(lik):
        return hierarchy_gibbs.run(H, y, prior_gibbs, likelihood=lik, **common)
    variates = "auto" if hierarchy_gibbs_variates.can_take_variates(prior_gibbs) else None  # pre-drawn where declared
    states, infos = hierarchy_gibbs.run(H, y, prior_gibbs, noise_prior=hierarchy_gibbs.NoisePrior(est.c, est.d),
                                        variates=variates, **common)
    beta, noise = np.asarray(states.beta), np.asarray(states.noise_var)
    if est.fit_intercept:  # b₀ | β, σ² ~ N(ȳ − h̄ᵀβ, σ²/n): the flat-prior intercept the sweep integrated out
        z = np.random.default_rng([est.seed, 7]).standard_normal(noise.shape)
        intercept = y.mean() - beta @ H.mean(axis=0) + np.sqrt(noise / H.shape[0]) * z
    else:
        intercept = np.zeros_like(noise)
    return hierarchy_gibbs_augmented.AugmentedState(beta, intercept, noise, states.aux), infos


def _engine_sampler(est):
    """The record's Gibbs sampler (:mod:`~sparsebayes.inference.posterior.posterior_model`'s ``gibbs`` field) for the
    fitted sampling estimator ``est``: this module's engine with ``est``'s hierarchy, likelihood and
    intercept, run on the record's basis and targets; ``None`` where the hierarchy has no Gibbs
    conditionals or the likelihood no conjugate augmentation."""
    lik = est.likelihood_
    try:
        gibbs_hierarchy(est.prior_)
        hierarchy_gibbs_augmented.require_gibbs_likelihood(lik)
    except ValueError:
        return None
    classifier = hasattr(est, "classes_")

    def sampler(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar=False):
        engine = (GibbsClassifier(prior=est.prior_, link=lik) if classifier
                  else GibbsRegressor(prior=est.prior_, likelihood=lik))
        engine.set_params(fit_intercept=est.fit_intercept, num_warmup=num_warmup, num_samples=num_samples,
                          num_chains=num_chains, seed=seed, progress_bar=progress_bar)
        _, prior_gibbs = engine._engine_prior()
        _, idata = engine._sample(np.asarray(t.H, dtype=np.float64), np.asarray(t.y, dtype=np.float64), prior_gibbs,
                                  lik, coords)
        idata.posterior.attrs.update(inference="gibbs-estimator")
        return idata

    return sampler


class _SamplingBase(PosteriorSamplingMixin, BaseEstimator):
    """Fit and summary shared by the sampling estimators (:class:`GibbsRegressor`, :class:`GibbsClassifier`
    and the NUTS ones of :mod:`.nuts_estimators`). A subclass gives ``_engine_prior`` (the hierarchy
    as fitted and the engine's form of it), ``_check_likelihood`` and ``_sample`` (the draws).

    :meth:`posterior_model` describes the model sampled, so :func:`sparsebayes.compare` and
    ``sample_posterior`` take these estimators: the model's point is the posterior median."""

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:mod:`sparsebayes.inference.posterior.posterior_model`), the posterior the
        fit sampled: the fitted hierarchy (``prior_``) and likelihood (``likelihood_``) on
        :func:`~sparsebayes.models.model.sparse_model` with the basis ``feature_map_.transform(X)`` as
        ``H`` (no bias column) and, with ``fit_intercept``, the intercept as the fit had it: the model
        :func:`~sparsebayes.inference.estimators.nuts_estimators.intercept_model_for` (site ``intercept``, flat under
        the Gaussian likelihood, ``N(0, 10²)`` otherwise, the Gibbs engine's
        :data:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.INTERCEPT_SCALE`; ``beta`` on ``basis`` the basis
        weights alone, as in :meth:`to_inference_data`). The likelihood's own parameter is sampled under
        the prior it declares (the Gaussian σ² flat: a :class:`GibbsRegressor` with another ``c, d`` is
        a ``ValueError``). The Gibbs sampler, where the hierarchy has Gibbs conditionals and the
        likelihood a conjugate augmentation, is this module's engine (:class:`GibbsRegressor` /
        :class:`GibbsClassifier`'s sweep on the record's ``H`` and ``y``). The point (``point``) is the
        posterior median on the record's basis: ``beta_``, the intercept draws' median (the value at the
        training mean for a centred basis; ``coef_`` and ``intercept_`` are the same function in the
        data's units) and the likelihood's parameter (``likelihood_param_``), labelled
        ``<sampler>-posterior-median``. Beyond two classes the fit is ``K`` independent binary posteriors
        (one-vs-all), and so is the record
        (:func:`~sparsebayes.inference.posterior.twin_one_vs_all.one_vs_all_model`): class ``k``'s part is this
        record for the targets ``[y = classes_[k]]``, the point ``beta_`` on ``(basis, classifier)`` and the
        intercepts' medians on ``classifier``. ``X = None``: the record without data (its samplers)."""
        from sparsebayes.inference.posterior.posterior_model import binary_targets, design, regression_targets

        check_is_fitted(self, "idata_")
        lik, prior = self.likelihood_, self.prior_
        if conjugate_noise(lik) and (getattr(self, "c", -1.0), getattr(self, "d", 0.0)) != (-1.0, 0.0):
            raise ValueError("the posterior model puts the flat prior on σ² (000 eq. 6); this fit has c, d = "
                             f"{self.c}, {self.d}: refit with the defaults to compare it")
        eps = getattr(self, "surrogate_eps", None)
        eps = surrogate_eps if eps is None else eps
        classifier = hasattr(self, "classes_")
        point = None
        if not classifier or len(self.classes_) == 2:
            point = {"beta": np.asarray(self.beta_, dtype=np.float64).reshape(-1)}
            if self.fit_intercept:
                point["intercept"] = float(np.median(self.intercept_draws_))
            name = getattr(lik, "param_name", None)
            if name and not classifier and self.likelihood_param_ is not None:
                point[name] = float(self.likelihood_param_)
        point_label = f"{self._sampler_label.lower()}-posterior-median"
        if classifier and len(self.classes_) > 2:
            from sparsebayes.inference.posterior.twin_one_vs_all import one_vs_all_model
            point = {"beta": np.asarray(self.beta_, dtype=np.float64).T}
            if self.fit_intercept:
                point["intercept"] = np.median(self.intercept_draws_, axis=1)
            H, names = design(self, X) if X is not None else (None, None)
            return one_vs_all_model(self, None if X is None else H.shape[0], y,
                                    lambda t: self._binary_record(prior, lik, eps, H, names, t, None),
                                    names=names, point=point, point_label=f"{point_label}-one-vs-all",
                                    point_dims={"intercept": ["classifier"]})
        if X is None:
            record = self._binary_record(prior, lik, eps, None, None, None, point)
        else:
            H, names = design(self, X)
            target = (binary_targets(self, y, H.shape[0], type(self).__name__) if classifier
                      else regression_targets(y, H.shape[0], lik))
            record = self._binary_record(prior, lik, eps, H, names, target, point)
        record.point_label = point_label
        return record

    def _binary_record(self, prior, lik, eps, H, names, target, point):
        """The record of one model this fit sampled (:meth:`posterior_model`): on design ``H`` with targets
        ``target`` (``H = None``: without data)."""
        from sparsebayes.inference.estimators.nuts_estimators import WithIntercept, intercept_model_for, intercept_prior_model, intercept_scale
        from sparsebayes.inference.posterior.posterior_model import sparse_posterior_model

        scale = intercept_scale(lik)
        label = None
        if H is None:
            record = sparse_posterior_model(prior, lik, surrogate_eps=eps, point=point)
        else:
            record = sparse_posterior_model(prior, lik, H, target, names=names, surrogate_eps=eps, point=point)
            if self.fit_intercept:
                label = record.label + ("; intercept flat" if scale is None else f"; intercept N(0, {scale:g}²)")
                record.model = intercept_model_for(record.prior, lik)
                # the statement of all the weights (what the twin asks of ``prior``): not the hierarchy's
                # alone, whose collapsed NUTS form would drop the intercept
                record.prior = WithIntercept(record.prior, scale)
                record.prior_model = intercept_prior_model
                record.kwargs = {**record.kwargs, "intercept_scale": scale}
                record.label = label
        record.gibbs = _engine_sampler(self)
        return record

    def _engine_prior(self):
        return gibbs_hierarchy(self.prior)

    def _check_likelihood(self, lik):
        hierarchy_gibbs_augmented.require_gibbs_likelihood(lik)

    def _sample(self, H, y, engine_prior, lik, coords):
        """``(draws, idata)``: the draws as :class:`~.hierarchy_gibbs_augmented.AugmentedState` (chain, draw, ...).
        A :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` when the engine refused sweeps
        that left float64 (:func:`~.hierarchy_gibbs.guarded`: the chain stayed where it was, so its
        draws repeat and do not describe the posterior)."""
        states, infos = _draw(self, H, y, engine_prior, lik)
        refused = np.asarray(getattr(infos, "refused", False))
        if np.any(refused):
            warn_degenerate(self, f"{int(np.sum(refused))} of {refused.size} Gibbs sweeps left float64 and were refused "
                            f"(the chain stayed where it was): the posterior is numerically singular on this basis "
                            f"(|h| up to {np.max(np.abs(H), initial=0.0):.3g}) and the draws do not describe it",
                            "scale X (e.g. StandardScaler) or drop its collinear columns, and fit again", stacklevel=4)
        idata = hierarchy_gibbs_augmented.augmented_inference_data(states, infos, H, y, lik, engine_prior,
                                                         fit_intercept=self.fit_intercept, coords=coords,
                                                         seed=self.seed)
        return states, idata

    def _design(self, X, prior):
        """The basis (no bias column: the intercept is the engine's) and its fitted map, standardized
        for ``prior`` (:func:`sampling_design`)."""
        return sampling_design(X, self.features, kernel_width=self.kernel_width, fit_intercept=self.fit_intercept,
                               standardize=self.standardize, prior=prior)

    def _basis(self, X):
        check_is_fitted(self, "beta_draws_")
        X = validate_predict_data(self, X)
        return np.asarray(transform_validated(self.feature_map_, X), dtype=np.float64)

    def _run(self, H, y, prior_gibbs, lik):
        """One posterior: the draws (on ``feature_map_``'s columns), its InferenceData and the summaries:
        the medians on those columns (the model's point) and, in the data's units (:func:`raw_point`),
        ``coef`` and ``intercept`` of the medians, the means and the raw terms' equal-tailed intervals;
        ``active`` where the interval on the model's columns excludes zero; R-hat."""
        from sparsebayes.inference.posterior.split_rhat import max_split_rhat  # ArviZ's rhat in NumPy: no ArviZ import

        coords = {"basis": basis_names(self, self.feature_map_, H.shape[1])}
        states, idata = self._sample(H, y, prior_gibbs, lik, coords)
        beta = np.asarray(states.beta).reshape(-1, H.shape[1])
        intercept = np.asarray(states.intercept).ravel()
        if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(intercept))):
            spread = np.max(np.abs(H), initial=0.0)
            if not self.standardize:
                why = ("standardize=False takes the inputs as they are, so columns with large offsets or scales make "
                       "the posterior numerically singular; centre and scale X (e.g. StandardScaler, or "
                       "standardize=True) and fit again")
            elif isinstance(self.feature_map_, CentredBasis) and not self.feature_map_.inner.scale:
                why = ("the inputs are centred, not scaled: this hierarchy's scale has the units of the weights (as "
                       "under EM), so columns in very large or small units make the posterior numerically singular; "
                       "scale X (e.g. StandardScaler) and fit again")
            else:
                why = (f"the posterior is numerically singular on this basis (features={self.features!r}); centre and "
                       "scale X (e.g. StandardScaler) and fit again")
            raise FloatingPointError(f"{self._sampler_label} produced non-finite draws of the weights (the basis "
                                     f"reaches |h| = {spread:.3g}): {why}")
        tail = 0.5 * (1.0 - self.credible_level)
        max_rhat = float("nan")
        if self.num_chains >= 2 and self.num_samples >= 4:
            max_rhat = max_split_rhat(states.beta)
            if max_rhat > self.rhat_max:
                warnings.warn(f"{self._sampler_label} chains have not mixed: max R-hat over beta {max_rhat:.3f} > "
                              f"{self.rhat_max}; increase num_warmup / num_samples", ConvergenceWarning, stacklevel=3)
        median = np.median(beta, axis=0)
        coef, raw_intercept = raw_point(self.feature_map_, median, float(np.median(intercept)))
        basis_interval = np.quantile(beta, [tail, 1.0 - tail], axis=0)
        return dict(idata=idata, beta=beta, intercept=intercept, param=np.asarray(states.param).ravel(),
                    median=median, coef=coef, raw_intercept=float(raw_intercept),
                    mean=raw_weights(self.feature_map_, beta.mean(axis=0)),
                    interval=np.quantile(raw_weights(self.feature_map_, beta), [tail, 1.0 - tail], axis=0),
                    active=(basis_interval[0] > 0) | (basis_interval[1] < 0), rhat=max_rhat)

    _sampler_label = "Gibbs"

    def summary(self):
        """ArviZ's summary of β (R-hat, bulk/tail ESS, MCSE) of the (first) posterior."""
        from sparsebayes.inference.posterior.arviz_compat import summary

        check_is_fitted(self, "beta_draws_")
        idata = self.idata_[0] if isinstance(self.idata_, list) else self.idata_
        return summary(idata, var_names=["beta"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags


_DOC_SAMPLER = """
    features : {"linear", "quadratic", "kernel"} or transformer, default="linear"
        The basis ``h(x)``, without a bias column (the intercept is the engine's); linear and
        quadratic terms of the standardized inputs (``standardize``, module docstring).
    kernel_width : float or "scale", default="scale"
        Width of ``features="kernel"``.
    fit_intercept : bool, default=True
        An intercept ``b₀``: flat prior, integrated out of the sweep (Gaussian); ``N(0, 10²)`` otherwise.
    standardize : bool, default=True
        As the EM estimators': the linear and quadratic maps act on inputs centred at their training
        mean (with ``fit_intercept``; ``b₀`` is then the value at the mean) and, under a scale-free
        hierarchy (Jeffreys), divided by their training SD; ``False``: the inputs as they are.
    num_warmup, num_samples, num_chains, seed : int, default=500, 1000, 4, 0
        Sweeps discarded and kept per chain, the chains (``vmap``), the seed (the same draws for
        the same seed).
    credible_level : float, default=0.95
        Level of the equal-tailed intervals in ``coef_interval_``.
    rhat_max : float, default=1.01
        A ``ConvergenceWarning`` when the largest rank-normalized split R-hat over β exceeds it (two
        or more chains); ``inf``: no check.
    progress_bar : bool, default=False
        A tqdm bar over the sweeps.
"""


class GibbsRegressor(RegressorMixin, _SamplingBase):
    """Sparse Bayesian regression by Gibbs sampling under a hierarchy with Gibbs conditionals.

    Parameters
    ----------
    prior : str or hierarchy object, default="horseshoe"
        ``"horseshoe"``/``HorseshoePrior(tau, tau_prior)``, ``"laplace"``/``LaplacePrior(gamma,
        gamma_prior)`` (module docstring) or any hierarchy with Gibbs conditionals.
    likelihood : str or likelihood object, default="gaussian"
        ``"gaussian"``, ``"student_t"`` (robust regression, ``StudentTLikelihood(df)``; its squared
        scale under Jeffreys' prior), ``"negative_binomial"`` (counts; dispersion ~ Gamma(1, 0.1)), or
        another registered likelihood with a conjugate augmentation for real or count targets.
    c, d : float, default=-1, 0
        The Gaussian's noise prior ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` (flat by default); other
        likelihoods' parameters have their own priors, and these must keep their defaults.
    """ + _DOC_SAMPLER + """
    Attributes
    ----------
    beta_ : ndarray (n_basis,)
        Posterior medians of β on ``feature_map_``'s columns (the model's weights, as EM's ``beta_``;
        the bias apart); ``active_`` those whose equal-tailed interval there excludes zero.
    coef_ : ndarray (n_basis,)
        The posterior medians' weights in the data's units (the raw terms ``get_feature_names_out``
        names; ``beta_`` itself for kernels, transformers or ``standardize=False``); ``coef_mean_``
        the posterior means, ``coef_interval_`` (2, n_basis) the equal-tailed interval, both in those units.
    intercept_ : float
        The value at ``x = 0`` of the posterior medians' function (the median of ``b₀``, the value at
        the training mean, moved to the origin of the data).
    likelihood_param_ : float or None
        Posterior median of the likelihood's own parameter (σ², the Student-t's ``s²``, the
        dispersion; ``None`` for a likelihood without one); ``noise_var_`` the Gaussian's σ².
    beta_draws_, intercept_draws_, param_draws_ : the draws, chains concatenated (β on ``feature_map_``'s
        columns, ``b₀`` the value at the training mean for a centred basis).
    idata_ : the draws as ``InferenceData``; ``rhat_`` the largest R-hat over β; ``n_iter_`` draws per chain.
    prior_, likelihood_ : the hierarchy and likelihood objects fitted: ``prior=prior_,
        likelihood=likelihood_`` refits this model (the same draws for the same seed).
    feature_map_ : the fitted basis.
    """

    def __init__(self, *, prior="horseshoe", likelihood="gaussian", c=-1.0, d=0.0, features="linear",
                 kernel_width="scale", fit_intercept=True, standardize=True, num_warmup=500, num_samples=1000,
                 num_chains=4, seed=0, credible_level=0.95, rhat_max=1.01, progress_bar=False):
        self.prior = prior
        self.likelihood = likelihood
        self.c = c
        self.d = d
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

    def _check_likelihood(self, lik):
        hierarchy_gibbs_augmented.require_gibbs_likelihood(lik)
        if not conjugate_noise(lik) and (self.c, self.d) != (-1.0, 0.0):
            raise ValueError(f"c, d are the Gaussian noise prior's; the {lik.name!r} likelihood's parameter has its "
                             "own prior: leave them at their defaults")

    @atomic_fit
    def fit(self, X, y):
        """Draw the posterior of ``y`` on the basis of ``X`` and summarize it; returns ``self``.

        Raises ``ValueError`` for a hierarchy without Gibbs conditionals, a likelihood without a
        conjugate augmentation (the Poisson: use NUTS) or of labels (use :class:`GibbsClassifier`),
        bad parameters or bad data; warns (``ConvergenceWarning``) when R-hat exceeds ``rhat_max``."""
        _check_sampler_params(self)
        lik = make_likelihood(self.likelihood)
        if getattr(lik, "support", "real") in ("binary", "categorical"):
            raise ValueError(f"likelihood {lik.name!r} models labels: use a classifier (SparseClassifier(link=...)) "
                             "for classification")
        self._check_likelihood(lik)
        prior, prior_gibbs = self._engine_prior()
        X, y = validate_regression_data(self, X, y)
        self.feature_map_, H = self._design(X, prior)
        fit = self._run(H, y, prior_gibbs, lik)
        self.idata_ = fit["idata"]
        self.beta_draws_, self.intercept_draws_, self.param_draws_ = fit["beta"], fit["intercept"], fit["param"]
        self.beta_ = fit["median"]
        self.coef_, self.coef_mean_, self.coef_interval_ = fit["coef"], fit["mean"], fit["interval"]
        self.active_ = fit["active"]
        self.intercept_ = fit["raw_intercept"]
        has_param = getattr(lik, "param_name", None) is not None
        self.likelihood_param_ = float(np.median(self.param_draws_)) if has_param else None
        self.noise_var_ = self.likelihood_param_ if conjugate_noise(lik) else None
        self.rhat_ = fit["rhat"]
        self.n_iter_ = int(self.num_samples)
        self.prior_, self.likelihood_ = prior, lik
        return self

    def predict(self, X, return_std=False):
        """The posterior predictive mean ``E[y | x]``: the likelihood's mean averaged over the draws
        (``b₀ + h(x)ᵀE[β]`` for the Gaussian and Student-t, ``E[e^η]`` for counts); with
        ``return_std`` also its sd, ``√(Var_draws[μ(η)] + E_draws[Var(y | η)])``."""
        H = self._basis(X)
        mean, var = np.empty(H.shape[0]), np.empty(H.shape[0])
        lik, param = self.likelihood_, jnp.asarray(self.param_draws_)
        for start in range(0, H.shape[0], 1024):  # rows in blocks: (block, draws) at a time
            eta = jnp.asarray(H[start:start + 1024] @ self.beta_draws_.T + self.intercept_draws_)
            mu = np.asarray(lik.mean(eta, param))
            mean[start:start + 1024] = mu.mean(axis=1)
            if return_std:
                var[start:start + 1024] = mu.var(axis=1) + np.asarray(lik.variance(eta, param)).mean(axis=1)
        return (mean, np.sqrt(var)) if return_std else mean

    def to_inference_data(self):
        """The draws (chain, draw) as ``InferenceData``, a deep copy: ``posterior`` ``beta`` (dim ``basis``),
        ``intercept``, the likelihood's parameter, the hierarchy's twin sites; ``sample_stats``,
        ``log_likelihood``, ``observed_data``, ``posterior_predictive``
        (:func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.augmented_inference_data`)."""
        from sparsebayes.inference.posterior.arviz_compat import copy

        check_is_fitted(self, "idata_")
        return copy(self.idata_)


class GibbsClassifier(ClassifierMixin, _SamplingBase):
    """Sparse Bayesian binary classification by Gibbs sampling (one-vs-all beyond two classes).

    ``P(y = 1 | x) = F(b₀ + h(x)ᵀβ)`` with ``F = Φ`` (probit, Albert & Chib's truncated-normal
    augmentation) or the logistic ``σ`` (Pólya-Gamma augmentation); ``k > 2`` classes: ``k`` one-vs-all
    posteriors (002 Sec. 4.2), their predictive probabilities normalized over the classes.

    Parameters
    ----------
    prior : str or hierarchy object, default="laplace"
        As :class:`GibbsRegressor`'s (one object for every one-vs-all classifier).
    link : {"probit", "logistic"} or likelihood object, default="probit"
        ``F``; a fitted ``likelihood_`` (``ProbitLikelihood()``, ``BernoulliLogisticLikelihood()``) too.
    """ + _DOC_SAMPLER + """
    Attributes
    ----------
    classes_ : ndarray
    beta_, coef_ : ndarray (1, n_basis) for two classes, (n_classes, n_basis) otherwise
        Posterior medians of β per classifier on ``feature_map_``'s columns, and in the data's units;
        ``coef_mean_``, ``coef_interval_`` (n_classifiers, 2, n_basis), ``active_`` as :class:`GibbsRegressor`'s.
    intercept_ : ndarray (1,) or (n_classes,)
        As :class:`GibbsRegressor`'s, per classifier.
    beta_draws_, intercept_draws_ : per classifier, the draws (chains concatenated).
    idata_ : InferenceData, or a list of them (one per one-vs-all classifier); ``rhat_``, ``n_iter_``.
    prior_, likelihood_ : the hierarchy and likelihood objects: ``prior=prior_, link=likelihood_`` refits.
    feature_map_ : the fitted basis.
    """

    def __init__(self, *, prior="laplace", link="probit", features="linear", kernel_width="scale", fit_intercept=True,
                 standardize=True, num_warmup=500, num_samples=1000, num_chains=4, seed=0, credible_level=0.95,
                 rhat_max=1.01, progress_bar=False):
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

    @atomic_fit
    def fit(self, X, y):
        """Draw the posterior of each (one-vs-all) classifier and summarize it; returns ``self``."""
        _check_sampler_params(self)
        lik = link_likelihood(self.link)
        prior, prior_gibbs = self._engine_prior()
        X, y_enc = validate_classification_data(self, X, y)
        self.feature_map_, H = self._design(X, prior)
        targets = [y_enc == 1] if len(self.classes_) == 2 else [y_enc == c for c in range(len(self.classes_))]
        fits = [self._run(H, t.astype(np.float64), prior_gibbs, lik) for t in targets]
        self.idata_ = fits[0]["idata"] if len(fits) == 1 else [f["idata"] for f in fits]
        self.beta_draws_ = np.array([f["beta"] for f in fits])
        self.intercept_draws_ = np.array([f["intercept"] for f in fits])
        self.beta_ = np.array([f["median"] for f in fits])
        self.coef_ = np.array([f["coef"] for f in fits])
        self.coef_mean_ = np.array([f["mean"] for f in fits])
        self.coef_interval_ = np.array([f["interval"] for f in fits])
        self.active_ = np.array([f["active"] for f in fits])
        self.intercept_ = np.array([f["raw_intercept"] for f in fits])
        rhats = [f["rhat"] for f in fits]
        self.rhat_ = rhats[0] if len(rhats) == 1 else np.array(rhats)
        self.n_iter_ = int(self.num_samples)
        self.prior_, self.likelihood_ = prior, lik
        return self

    def _log_proba_ova(self, H):
        """``log E_draws[F(η_k)]`` and ``log E_draws[1 − F(η_k)]`` per classifier ``k``: (n, k) each,
        from the likelihood's own ``log_lik`` (finite where a probability rounds to 0 or 1)."""
        lik = self.likelihood_
        ones, zeros = [], []
        for k in range(self.beta_draws_.shape[0]):
            eta = jnp.asarray(H @ self.beta_draws_[k].T + self.intercept_draws_[k])
            s = eta.shape[1]
            ones.append(logsumexp(np.asarray(lik.log_lik(jnp.ones_like(eta), eta)), axis=1) - np.log(s))
            zeros.append(logsumexp(np.asarray(lik.log_lik(jnp.zeros_like(eta), eta)), axis=1) - np.log(s))
        return np.column_stack(ones), np.column_stack(zeros)

    def predict_log_proba(self, X):
        """Binary: ``log [1 − P, P]`` with ``P = E_draws[F(η)]`` the posterior predictive probability;
        one-vs-all: the classifiers' ``log P_k`` normalized over the classes."""
        one, zero = self._log_proba_ova(self._basis(X))
        if one.shape[1] == 1:
            return np.column_stack([zero[:, 0], one[:, 0]])
        return one - logsumexp(one, axis=1, keepdims=True)

    def predict_proba(self, X):
        """The posterior predictive class probabilities, columns in ``classes_`` order."""
        return np.exp(self.predict_log_proba(X))

    def decision_function(self, X):
        """Binary: ``log P(y = 1) − log P(y = 0)`` of the posterior predictive (positive where ``predict``
        gives the second class); one-vs-all: the normalized log probabilities, (n, n_classes)."""
        logp = self.predict_log_proba(X)
        return logp[:, 1] - logp[:, 0] if logp.shape[1] == 2 else logp

    def predict(self, X):
        """The class of largest posterior predictive probability."""
        logp = self.predict_log_proba(X)
        return self.classes_[np.argmax(logp, axis=1)]

    def to_inference_data(self, classifier=None):
        """The draws as ``InferenceData`` (a deep copy; as :meth:`GibbsRegressor.to_inference_data`);
        beyond two classes, ``classifier`` (an index into ``classes_``) picks the one-vs-all posterior."""
        from sparsebayes.inference.posterior.arviz_compat import copy

        check_is_fitted(self, "idata_")
        if not isinstance(self.idata_, list):
            return copy(self.idata_)
        if classifier is None or not (isinstance(classifier, (int, np.integer)) and 0 <= classifier < len(self.idata_)):
            raise ValueError(f"{len(self.idata_)} one-vs-all posteriors: give classifier= an index into classes_ "
                             f"(0 ... {len(self.idata_) - 1}), got {classifier!r}")
        return copy(self.idata_[classifier])


def link_likelihood(link):
    """The binary likelihood object of ``link``: ``"probit"``, ``"logistic"`` (:data:`~.adaptive.LINKS`) or
    an object of one of their classes (a fitted ``likelihood_``); a ``ValueError`` naming it otherwise."""
    if isinstance(link, str) and link in LINKS:
        return LINKS[link]()
    if any(isinstance(link, cls) for cls in LINKS.values()):
        return link
    raise ValueError(f"link must be one of {sorted(LINKS)} or a {', '.join(c.__name__ for c in LINKS.values())} "
                     f"object, got {link!r}")
