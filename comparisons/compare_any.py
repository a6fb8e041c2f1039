"""``sparsebayes.compare(est, X, y)``: a sparse estimate beside the posterior of the same model, on any data.

The estimator is fitted (a clone, when it is not fitted yet) and the posterior of its own model is
sampled on its own design (:func:`sparsebayes.inference.posterior.twin_posterior.sample_posterior`). The
result, :class:`Comparison`, holds one ArviZ ``InferenceData`` (``idata``) in which

* ``posterior``, ``sample_stats``, ``log_likelihood``, ``observed_data`` and
  ``posterior_predictive`` are the first sampler's (MCMC draws only, so ``az.summary``, ``az.loo``
  and ``az.plot_ppc`` read them as they read any sampler's output);
* the group ``point_estimate`` holds the estimator's point estimate with the same variable name
  (``beta``), dim (``basis``) and coords, as one chain of one draw marked ``point_estimate = 1``.
  It is a group of its own, not ``posterior``, so that no ArviZ function takes one point for a
  sample; :attr:`Comparison.point_idata` gives it back as an ``InferenceData`` whose ``posterior``
  it is, for ``az.plot_forest([cmp.point_idata, cmp.idata])`` (ArviZ 1.x: a dict ``{name: fit}``);
* the groups ``fit`` (``mean_vector``, ``covariance_matrix`` of the estimator's own Gaussian
  approximation, where it has one) and ``optimizer_result`` (``fun``, ``nit``, ``success``, ``method``)
  hold the point estimate's fit as pymc-extras' ``fit_laplace`` / ``find_MAP`` write them
  (:func:`~sparsebayes.comparisons.approximation_check.point_estimate_groups`);
* every group of each further sampler is there under ``<group>_<sampler>`` (:func:`sampler_group`):
  ``posterior_gibbs``, ``sample_stats_gibbs``, ``log_likelihood_gibbs``, ``observed_data_gibbs``,
  ``posterior_predictive_gibbs`` and, with held-out rows, ``predictions_gibbs`` (the first
  sampler's are ``predictions``), so that ``draws.nc`` keeps every sampler's output; ``samples``
  keeps each sampler's whole ``InferenceData`` under its own names.

Under ArviZ 1.x every ``InferenceData`` here is an ``xarray.DataTree`` with the same groups
(:mod:`sparsebayes.inference.posterior.arviz_compat`), and the diagnostics are the same statistics.

``summary()`` tabulates per weight the point estimate, each sampler's median and 90 % interval, the
posterior mass ``P(|β_i| < c)`` beside the prior's, and R-hat / ESS; ``diagnostics()`` the
sampler's health with a warning per failed check; ``predictive()``, given held-out rows
(``X_test``/``y_test`` or ``test_size``), the point estimate's plug-in predictions beside each
sampler's posterior predictive (log score, RMSE or error rate); ``plot()`` a forest plot;
``save(dir)`` a self-contained report. Nothing here touches matplotlib's global state (figures are
``matplotlib.figure.Figure`` objects, never pyplot's).
"""
from __future__ import annotations

import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .sampler_health import BFMI_MIN, ESS_MIN, RHAT_MAX  # noqa: F401  (the gate's thresholds, named here too)
#: ``c`` of ``P(|β| < c)`` by default: this fraction of the sd of the posterior medians' magnitudes.
NEAR_ZERO_FRACTION = 0.1
#: The interval of :meth:`Comparison.summary` and the plot: 5 % and 95 % quantiles.
QUANTILES = (0.05, 0.95)
POINT_GROUP = "point_estimate"
_SAMPLER_WORDS = {"nuts": "NUTS", "gibbs": "Gibbs"}


def compare(estimator, X, y, *, samplers="auto", num_warmup=1000, num_samples=1000, num_chains=4, seed=0,
            progress_bar=None, surrogate_eps=None, target_accept_prob=None, prior_draws=4000, log=None,
            X_test=None, y_test=None, test_size=None, log_likelihood=True):
    """Fit ``estimator`` (a clone, if it is not fitted) and sample the posterior of its model on ``(X, y)``.

    Parameters
    ----------
    estimator : an estimator that describes its model (``posterior_model``)
        AdaptiveSparseRegressor (any likelihood it fits: Gaussian, Student-t, Poisson, negative
        binomial, ...), SparseProbitClassifier (probit or logistic link),
        PoissonRVMRegressor, BayesianLassoRegressor, RVMRegressor, BLSRegressor, FLAPRegressor,
        RVMClassifier, SMLRClassifier / SMLRCV, the Gibbs and NUTS estimators, or a ``SparseRegressor`` /
        ``SparseClassifier`` of any of them. A one-vs-all classifier (more than two classes) is ``K``
        independent binary posteriors, its weights on ``(basis, classifier)``
        (:mod:`sparsebayes.inference.posterior.twin_one_vs_all`: what its LOO measures, why it has no
        projection selection); SMLR's are on ``(basis, class)``. With a prior that has a proper posterior: Laplace or horseshoe; Jeffreys and the RVMs only
        with ``surrogate_eps`` (their posteriors are improper: the draws are then of the labelled
        surrogate ``1/τ_i ~ Gamma(ε, ε)``). BLS and FLAP are sampled at their fitted λ (the Bayesian
        Lasso's Laplace prior, scaled by σ for BLS), SMLR at its λ (:mod:`sparsebayes.inference.posterior.twin_builders`);
        the others on the one model of (hierarchy, likelihood, design) (:mod:`sparsebayes.models.model`).
    X : array (n, d) or pandas DataFrame
        Inputs; a DataFrame's columns name the weights.
    y : array (n,)
        Targets (class labels for the classifier).
    samplers : "auto" (default), None, or a tuple of {"nuts", "gibbs"}
        ``"gibbs"`` where the model has Gibbs conditionals (the Bayesian Lasso; the regressor with
        the horseshoe; the RVM, BLS and FLAP twins; a probit, logistic, Student-t or negative-binomial
        likelihood under a hierarchy with Gibbs conditionals, by its augmentation). The first one fills ``idata.posterior``.
        ``"auto"`` or ``None``: the model decides
        (:func:`~sparsebayes.inference.posterior.twin_posterior.default_samplers`): NUTS and Gibbs where Gibbs
        exists, NUTS alone elsewhere. A tuple is run as given. NUTS runs in the form and with the
        settings the hierarchy declares (the horseshoe regression: its scales with β integrated out,
        :mod:`sparsebayes.inference.engines.collapsed_nuts`).
    num_warmup, num_samples, num_chains, seed
        Sampler settings (per sampler).
    target_accept_prob : float or None
        NUTS's target acceptance rate; ``None``: the one the hierarchy declares (its
        ``nuts_settings``: 0.99 for the horseshoe), else 0.8.
    progress_bar : bool or None
        A progress bar per run; ``None``: when standard error is a terminal (a script in a shell shows
        them, a notebook or a log file does not); ``False``: none (and NUTS's compiled, faster path).
    surrogate_eps : float or None
        For the Jeffreys prior: sample ``1/τ_i ~ Gamma(ε, ε)`` instead.
    prior_draws : int
        Draws of ``β`` from the prior, for the prior's ``P(|β| < c)``.
    log : callable or None
        Called with a short line before each step (fitting, each sampler), e.g. ``print``; the
        command line's progress report.
    X_test, y_test : array (m, d) or DataFrame, array (m,), optional
        Held-out rows and their targets, not used in the fit or the sampling: each sampler also
        predicts them (the ``predictions`` group of its ``InferenceData``) and
        :meth:`Comparison.predictive` scores the point estimate against the posterior predictive on
        them. Both or neither; ``X_test`` with ``X``'s columns.
    test_size : float in (0, 1), int or None
        Instead of ``X_test``/``y_test``: hold out this fraction (or number) of the rows of ``(X, y)``,
        chosen at random with ``seed``; the estimator is then fitted (a clone, even if it is fitted)
        on the other rows only, so that the held-out rows are new to both the fit and the samplers.
    log_likelihood : bool
        Keep each sampler's pointwise ``log_likelihood`` group (default); ``False``: computed from the
        draws when :meth:`Comparison.loo` asks (:mod:`sparsebayes.inference.posterior.pointwise_loglik`).

    Returns
    -------
    Comparison
    """
    import arviz as az
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from sparsebayes.inference.posterior.twin_posterior import (
        default_samplers,
        point_estimate_dataset,
        posterior_model_of,
        prior_beta_draws,
        sample_posterior,
        twin,
    )
    from sparsebayes.inference.posterior.arviz_compat import copy, dataset, groups, set_group
    from sparsebayes.inference.estimators.sparse_estimators import check_model

    from .compare_predictive import check_test_data

    estimator = check_model(estimator)  # a model no core fits is refused before any sampling
    posterior_model_of(estimator)  # an estimator that describes its model (posterior_model), else a ValueError naming them
    auto = samplers is None or (isinstance(samplers, str) and samplers == "auto")
    if not auto and (isinstance(samplers, str) or not samplers or len(set(samplers)) != len(samplers)):
        raise ValueError(f"samplers must be 'auto' or a non-empty tuple of distinct names such as ('nuts',), "
                         f"got {samplers!r}")
    if test_size is not None:
        if X_test is not None or y_test is not None:
            raise ValueError("pass test_size or X_test/y_test, not both")
        from sklearn.model_selection import train_test_split
        X, X_test, y, y_test = train_test_split(X, y, test_size=test_size, random_state=seed)
        estimator = clone(estimator)  # unfitted: fitted below on the training rows only
    check_test_data(X, X_test, y_test)
    say = log or (lambda line: None)
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        say(f"fitting {type(estimator).__name__}")
        estimator = clone(estimator).fit(X, y)
    t, said = _said_once(lambda: twin(estimator, X, y, surrogate_eps=surrogate_eps))  # checks prior and data first
    samplers = default_samplers(estimator, t) if auto else tuple(samplers)
    if X_test is not None:
        try:  # and the held-out rows (labels among the fitted classes, finite targets)
            with said():
                twin(estimator, X_test, y_test, surrogate_eps=surrogate_eps, train=t)
        except ValueError as err:
            raise ValueError(f"X_test / y_test: {err}") from err
    from sparsebayes.inference.engines.progress import show_progress
    settings = dict(num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                    progress_bar=show_progress(progress_bar), surrogate_eps=surrogate_eps, target_accept_prob=target_accept_prob,
                    X_test=X_test, y_test=y_test, log_likelihood=log_likelihood)
    samples = {}
    for s in samplers:
        say(f"sampling the posterior by {_SAMPLER_WORDS.get(s, s)} ({num_chains} chains × {num_warmup} warm-up + "
            f"{num_samples} draws)")
        with said():
            samples[s] = sample_posterior(estimator, X, y, s, **settings)
    point = point_estimate_dataset(estimator, t.names, t.weight_dims, t.weight_coords)
    idata = set_group(copy(samples[samplers[0]]), POINT_GROUP, point)
    from .approximation_check import point_estimate_groups
    for group, ds in point_estimate_groups(estimator, _flat_names(t), point.attrs.get("inference", "")).items():
        set_group(idata, group, ds)  # pymc-extras' fit and optimizer_result
    for s in samplers[1:]:
        for group in groups(samples[s]):
            set_group(idata, sampler_group(group, s), dataset(samples[s], group))
    noise = np.median(idata.posterior["noise_var"].values) if "noise_var" in idata.posterior else 1.0
    with said():
        prior = prior_beta_draws(estimator, X, y, num_draws=prior_draws, seed=seed, surrogate_eps=surrogate_eps,
                                 noise_var=noise)
    return Comparison(estimator=estimator, idata=idata, samples=samples, names=_flat_names(t), design=t.H,
                      prior_beta=prior, az=az, weight_dims=tuple(t.weight_dims), X_test=X_test,
                      y_test=None if y_test is None else np.asarray(y_test), surrogate_eps=surrogate_eps)


def _said_once(build):
    """``build()`` (the twin of the training rows) and a context manager for the steps that build the twin
    again (the held-out rows', each sampler's, the prior draws'): the warnings of ``build`` (the type-II
    flat limit's ``DegenerateFitWarning``) are issued here, under the caller's filters, and not again
    inside the context manager, so that ``compare`` says each once."""
    said = []
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            t = build()
    finally:
        for w in said:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    @contextmanager
    def quiet():
        with warnings.catch_warnings():
            for w in said:
                warnings.filterwarnings("ignore", re.escape(str(w.message)), w.category)
            yield

    return t, quiet


def sampler_group(group, sampler):
    """The name in ``Comparison.idata`` of group ``group`` (``posterior``, ``sample_stats``,
    ``log_likelihood``, ``observed_data``, ``posterior_predictive``, ``predictions``) of a sampler
    after the first: ``<group>_<sampler>`` (``sample_stats_gibbs``). The first sampler's keep
    ArviZ's own names, so that ``az.loo`` or ``az.plot_ppc`` read them and no other."""
    return f"{group}_{sampler}"


def _flat_names(t):
    """One label per weight, in the order of ``beta``'s values: the basis names, or for weights on
    ``basis`` × ``class`` (SMLR) ``"basis[class]"``."""
    if tuple(t.weight_dims) == ("basis",):
        return [str(n) for n in t.names]
    import itertools
    return [f"{a}[{', '.join(map(str, rest))}]" for a, *rest in
            itertools.product(*(t.weight_coords[d] for d in t.weight_dims))]


#: ``sparsebayes.comparisons.compare_estimator``: the same function under a name that does not clash
#: with the submodule :mod:`sparsebayes.comparisons.compare`.
compare_estimator = compare


@dataclass
class Comparison:
    """A fitted estimator's point estimate beside the posterior of its model (module docstring).

    Attributes
    ----------
    estimator : the fitted estimator; idata : the one ``InferenceData``; samples : sampler name ->
    its ``InferenceData``; names : the weights' names (``basis`` coords; ``"basis[class]"`` for SMLR's
    weights on two dims), one per entry of ``beta`` flattened; design : the design the samplers ran on
    (``feature_map_.transform(X)``; centred ``X`` for the Bayesian Lasso; SMLR's penalized design);
    prior_beta : draws (m, p) of β from the prior; weight_dims : ``beta``'s dims besides chain and draw;
    X_test, y_test : the held-out rows (``None`` when none were given).
    """

    estimator: object
    idata: object
    samples: dict
    names: list
    design: np.ndarray
    prior_beta: np.ndarray
    az: object = field(repr=False)
    weight_dims: tuple = ("basis",)
    X_test: object = field(default=None, repr=False)
    y_test: np.ndarray = field(default=None, repr=False)
    #: The ``surrogate_eps`` the model was sampled with (its record is rebuilt with it for held-out rows).
    surrogate_eps: float = field(default=None, repr=False)

    @property
    def point(self):
        """The point estimate's ``beta`` as a 1-D array in ``names`` order."""
        return np.asarray(getattr(self.idata, POINT_GROUP)["beta"].values).reshape(-1)

    @property
    def point_idata(self):
        """The point estimate as an ``InferenceData`` whose ``posterior`` is it (attrs ``point_estimate = 1``),
        with ``fit`` and ``optimizer_result`` where ``idata`` has them: pymc-extras' layout of a MAP
        (:func:`~sparsebayes.inference.posterior.idata.point_estimate_posterior`)."""
        from sparsebayes.inference.posterior.idata import point_estimate_posterior
        return point_estimate_posterior(self.idata, POINT_GROUP)

    def _beta(self, sampler):
        beta = self.samples[sampler].posterior["beta"].transpose("chain", "draw", *self.weight_dims)
        return np.asarray(beta.values).reshape(-1, len(self.names))

    def near_zero(self, rope=None):
        """``c_j`` of ``P(|β_j| < c_j)`` per weight (``names`` order, in the draws' units): the half-width
        of the weight's region of practical equivalence, ``f · s_y / sd(x_j)`` with ``x_j`` the design
        column ``β_j`` multiplies, ``s_y`` sd(y) for regression and 1 (one unit of the link) for a
        classifier, ``f`` :data:`~sparsebayes.comparisons.verdict.ROPE_FRACTION` (0.1 of a standardized
        effect) by default; a constant column (the bias) is judged as ``|β_j| < f · s_y``. ``rope``: a
        number (``f`` for every weight), or a dict ``{name: half-width}`` / an array of half-widths in
        the data's units (:func:`sparsebayes.comparisons.verdict.rope_fractions`)."""
        from .verdict import rope_half_widths
        return rope_half_widths(self, rope)

    def summary(self, rope=None):
        """``pandas.DataFrame``, one row per weight (index ``basis``).

        Columns: ``point`` and ``point_is_zero``; per sampler ``s``: ``s_median``, ``s_q05``, ``s_q95``,
        ``s_interval_covers_zero`` (the 90 % interval), ``s_p_near_zero`` (``P(|β_j| < c_j | y)``),
        ``s_r_hat``, ``s_ess_bulk``, ``s_ess_tail``; ``prior_p_near_zero`` (``P(|β_j| < c_j)`` under the
        prior) and ``near_zero`` (``c_j``). ``c_j`` is each weight's own region of practical equivalence,
        set on the standardized scale so that an input's units do not decide it (:meth:`near_zero`;
        ``rope`` as there); ``attrs["near_zero"]`` keeps the array and ``attrs["rope_fraction"]`` the
        standardized half-width (``None`` for half-widths given per input). Weights are on the draws'
        basis; :meth:`verdict` gives them in the data's units too.
        """
        import pandas as pd

        from .verdict import ROPE_FRACTION
        c = self.near_zero(rope)
        table = {"point": self.point, "point_is_zero": self.point == 0}
        for s, idata in self.samples.items():
            beta = self._beta(s)
            lo, hi = np.quantile(beta, QUANTILES, axis=0)
            table.update({f"{s}_median": np.median(beta, axis=0), f"{s}_q05": lo, f"{s}_q95": hi,
                          f"{s}_interval_covers_zero": (lo <= 0) & (hi >= 0),
                          f"{s}_p_near_zero": np.mean(np.abs(beta) < c, axis=0)})
            for stat, values in self._mixing(idata).items():
                table[f"{s}_{stat}"] = values
        table["prior_p_near_zero"] = np.mean(np.abs(self.prior_beta) < c, axis=0)
        table["near_zero"] = c
        df = pd.DataFrame(table, index=pd.Index(self.names, name="basis"))
        df.attrs["near_zero"] = c
        df.attrs["rope_fraction"] = (ROPE_FRACTION if rope is None else float(rope)
                                     if np.ndim(rope) == 0 and not isinstance(rope, dict) else None)
        return df

    def verdict(self, rope=None):
        """Which inputs matter, and how sure: ``pandas.DataFrame``, one row per input, of the point
        estimate (kept or zero) beside each sampler's evidence (90 % interval, mass inside the input's
        region of practical equivalence, sign probability), the verdict word (``matters`` /
        ``negligible`` / ``uncertain``), whether the two agree, and each sampler's usability by its
        diagnostics; effects in the data's units and standardized. ``rope`` as in :meth:`near_zero`.
        :func:`sparsebayes.comparisons.verdict.verdict_table` documents the columns and the rule."""
        from .verdict import verdict_table
        return verdict_table(self, rope)

    def select(self, sampler=None, *, search="path", max_size=None, num_draws=400, search_draws=20, classifier=None):
        """Which inputs predict as well as all of them: projection predictive selection (Piironen,
        Paasiniemi & Vehtari 2020) of ``sampler``'s posterior (default: the first that passes its
        diagnostics, else the first). ``search="path"``: inputs enter in the point estimate's order
        (its kept inputs by ``|β̂_j|·sd(x_j)``, then greedy forward); ``"forward"``: greedy forward by
        the projection's KL. ``pandas.DataFrame`` indexed by ``size`` (``added``, ``elpd``, ``se``,
        ``diff``, ``se_diff``, ``kl``); ``attrs["suggested_size"]`` and ``attrs["selected"]`` (the
        chosen inputs). :mod:`sparsebayes.comparisons.selection` documents the method. A one-vs-all
        posterior (``K`` independent binary models) is selected per class: ``classifier`` (a class label)
        names the ``k``-vs-rest model; without it, a ``ValueError`` says why (``attrs["classifier"]``)."""
        from .selection import projection_selection, reference_from_comparison
        from .verdict import usability
        if sampler is None:
            failed = usability(self)
            sampler = next((s for s in self.samples if not failed[s]), next(iter(self.samples)))
        ref, point = reference_from_comparison(self, sampler, classifier)
        table = projection_selection(ref, search=search, point=point, max_size=max_size, num_draws=num_draws,
                                     search_draws=search_draws)
        table.attrs["sampler"] = sampler
        if classifier is not None:
            table.attrs["classifier"] = str(classifier)
        return table

    def plot_selection(self, table=None, **kwargs):
        """The elpd difference to the full model against the submodel size with ±1 SE bars and the
        suggested size (``matplotlib.figure.Figure``); ``table`` from :meth:`select`, else
        ``select(**kwargs)``."""
        from .selection import plot
        table = self.select(**kwargs) if table is None else table
        return plot(table, f"{type(self.estimator).__name__}: projection predictive selection ({table.attrs['sampler']})")

    def approximation_check(self, num_draws=4000, seed=0):
        """How good the point estimate's own uncertainty is: the PSIS ``k̂`` (Yao et al. 2018) of its
        Gaussian conditional / Laplace draws against the model's posterior of the kept weights, with a
        pass/fail line (``k̂ < 0.7``). Returns ``{"khat", "passed", "line", "n_active", "draws",
        "target"}`` (:func:`sparsebayes.comparisons.approximation_check.estimator_check`); ``ValueError``
        for an estimator it does not cover."""
        from .approximation_check import estimator_check
        y = np.asarray(self.idata.observed_data["y"].values).reshape(-1)
        return estimator_check(self.estimator, self.design, y, num_draws=num_draws, seed=seed)

    def loo(self, num_draws=4000, seed=0):
        """Leave-one-out of each part: ``pandas.DataFrame`` indexed by ``part``, one row per sampler
        (PSIS-LOO, Vehtari, Gelman & Gabry 2017: ``az.loo`` on its ``log_likelihood`` group) and, where
        the estimator has its own approximation, a row ``approximation``: the importance-corrected
        approximate-posterior PSIS-LOO of ``num_draws`` of its draws (Magnusson et al. 2019, ratios
        ``p(θ_s | y)/q(θ_s) · 1/p(y_i | θ_s)``:
        :func:`~sparsebayes.comparisons.approximation_check.approximation_loo`). Columns ``method``
        (which of the two), ``elpd_loo``, ``se``, ``p_loo``, ``pareto_k_max``, ``n_bad_k``,
        ``khat_approximation`` (the approximation's ``k̂`` of ``p/q``; NaN for a sampler), ``passed``
        (``k̂ < 0.7`` for all rows, and for ``p/q``) and ``line``; ``attrs["notes"]`` says why a part
        has no row, and for a one-vs-all posterior what its elpd is of (the sum of its ``K`` binary
        log-likelihoods per row, :data:`~sparsebayes.inference.posterior.twin_one_vs_all.LOO_NOTE`)."""
        import pandas as pd

        from .approximation_check import approximation_loo, loo_row
        rows, notes = {}, []
        from sparsebayes.inference.posterior.arviz_compat import set_group
        from sparsebayes.inference.posterior.pointwise_loglik import GROUP, ensure_log_likelihood
        for k, (s, idata) in enumerate(self.samples.items()):
            try:
                set_group(self.idata, GROUP if k == 0 else sampler_group(GROUP, s), ensure_log_likelihood(idata))
                rows[s] = loo_row(idata, f"{_SAMPLER_WORDS.get(s, s)} draws")
            except (TypeError, ValueError, KeyError) as err:
                notes.append(f"{s}: no PSIS-LOO ({err})")
        from sparsebayes.inference.posterior.twin_one_vs_all import CLASS_DIM, LOO_NOTE
        if CLASS_DIM in self.weight_dims and rows:  # what the one-vs-all elpd is of
            notes.append(LOO_NOTE)
        y = np.asarray(self.idata.observed_data["y"].values).reshape(-1)
        try:
            rows["approximation"] = approximation_loo(self.estimator, self.design, y, num_draws=num_draws, seed=seed)
        except ValueError as err:
            notes.append(f"approximation: no approximate-posterior LOO ({err})")
        table = pd.DataFrame.from_dict(rows, orient="index")
        table = table[[c for c in table.columns if c not in ("passed", "line")]
                      + [c for c in ("passed", "line") if c in table.columns]]  # the verdict last, as in the lines
        table.index.name = "part"
        table.attrs["notes"] = notes
        return table

    def _mixing(self, idata):
        """R-hat and bulk / tail ESS of ``beta`` (NaN with one chain, or for a weight that never moves)."""
        from sparsebayes.inference.posterior.arviz_compat import ess, rhat
        out = {}
        for name, fn in (("r_hat", lambda: rhat(idata, var_names=["beta"])),
                         ("ess_bulk", lambda: ess(idata, var_names=["beta"], method="bulk")),
                         ("ess_tail", lambda: ess(idata, var_names=["beta"], method="tail"))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out[name] = np.asarray(fn()["beta"].transpose(*self.weight_dims).values, dtype=np.float64).reshape(-1)
        return out

    def diagnostics(self):
        """Per sampler: ``r_hat_max``, ``ess_bulk_min``, ``ess_tail_min`` (over ``beta`` and the model's scalar
        parameters; a hierarchy's per-weight latent scales are left out:
        :func:`~sparsebayes.comparisons.sampler_health.gated_variables`),
        ``divergences``, ``bfmi_min`` (NaN without energies, e.g. Gibbs), ``ess_bulk_per_second`` (the
        smallest bulk ESS over the sampler's own seconds, compile excluded where known)
        (:func:`~sparsebayes.comparisons.sampler_health.health`), ``usable`` (the part passes the gate,
        :attr:`usable`) and ``warnings``, one string per failed check of the gate (a divergence, R-hat >
        1.01, bulk or tail ESS < 400, E-BFMI < 0.3; :func:`~sparsebayes.comparisons.sampler_health.failed_checks`).
        Returns ``{sampler: dict}`` (``pandas.DataFrame(cmp.diagnostics()).T`` is a table)."""
        return {s: self._diagnose(s, idata) for s, idata in self.samples.items()}

    def _diagnose(self, sampler, idata):
        from .sampler_health import failed_checks, gated_variables, health, warning_lines
        out = health(idata, gated_variables(idata.posterior, self.weight_dims))
        out["usable"] = not failed_checks(out)
        out["warnings"] = warning_lines(sampler, out)
        return out

    @property
    def usable(self):
        """``{sampler: bool}``: whether each sampler's part passes the sampler-health gate
        (:mod:`sparsebayes.comparisons.sampler_health`: no divergence, R-hat ≤ 1.01, bulk and tail ESS
        ≥ 400, E-BFMI ≥ 0.3). A failed part is shown, labelled unusable, and the verdict does not use it."""
        return {s: d["usable"] for s, d in self.diagnostics().items()}

    def predictive(self):
        """Held-out predictive comparison, ``pandas.DataFrame`` indexed by ``source``: the point estimate,
        then each sampler; columns ``log_score`` (mean log predictive density: plug-in at the point
        estimate, the posterior predictive's for a sampler), ``rmse`` (regression; the posterior
        predictive mean's) or ``error_rate`` (classification; the posterior-mean probabilities'
        class), ``n_test`` (:mod:`sparsebayes.comparisons.compare_predictive`). It tells whether
        averaging over the posterior predicts new rows better than the single estimate.
        ``ValueError`` when ``compare`` was given no test data."""
        if self.y_test is None:
            raise ValueError("no held-out data: pass X_test and y_test, or test_size, to compare")
        from .compare_predictive import predictive_table
        return predictive_table(self)

    def plot(self, rope=None):
        """A forest plot (``matplotlib.figure.Figure``, not registered with pyplot) on the standardized
        scale ``β_j · sd(x_j) / s_y`` (:meth:`near_zero`), where one region of practical equivalence
        fits every input whatever its units: per weight, each sampler's median and 90 % interval, the
        point estimate as a cross, and the weight's ``±f_j`` band of ``P(|β_j| < c_j)`` shaded (a
        constant column, the bias, is shown as ``β_j / s_y``). ``rope`` as in :meth:`near_zero`."""
        from matplotlib.figure import Figure

        from .verdict import rope_fractions, scales, standardize
        table = self.summary(rope)
        sc = scales(self)
        f = rope_fractions(self, rope, sc)

        def std(column):
            return standardize(table[column].to_numpy()[None], sc)[0]
        samplers, p = list(self.samples), len(self.names)
        fig = Figure(figsize=(6.5, 1.2 + 0.38 * p * max(1, len(samplers)) ** 0.5), layout="constrained")
        ax = fig.add_subplot()
        rows = np.arange(p)[::-1].astype(float)
        offsets = np.linspace(-0.15, 0.15, len(samplers)) if len(samplers) > 1 else [0.0]
        for k, (s, off) in enumerate(zip(samplers, offsets)):
            ax.hlines(rows + off, std(f"{s}_q05"), std(f"{s}_q95"), color=f"C{k}", lw=2)
            ax.plot(std(f"{s}_median"), rows + off, "o", color=f"C{k}", ms=4, label=f"{s}: median, 90 % interval")
        ax.plot(std("point"), rows, "x", color="black", ms=7, mew=2, label="point estimate")
        ax.barh(rows, 2 * f, left=-f, height=0.8, color="0.9", zorder=0, label="region of practical equivalence")
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_yticks(rows, self.names)
        ax.set_xlabel(f"standardized effect β·sd(x)/s_y (s_y = {sc.outcome_label})")
        ax.set_title(f"{type(self.estimator).__name__}: point estimate and posterior")
        ax.legend(loc="best", fontsize="small")
        return fig

    def save(self, directory, *, overwrite=False):
        """Write the report into ``directory`` (created if needed): ``report.md``, ``report.html`` (one
        self-contained file, the plots embedded), the plots ``forest.png``, ``ppc.png`` (the
        posterior-predictive check suited to the likelihood), ``selection.png`` and ``rank-<sampler>.png``
        for a sampler that failed its health gate, and ``draws.nc`` (``idata`` as NetCDF)
        (:func:`~sparsebayes.comparisons.compare_any_report.save_report`). Returns the ``Path``.

        A directory that already holds any of these files (an earlier report, perhaps edited) is a
        ``FileExistsError`` naming the file, and nothing is written, unless ``overwrite=True``."""
        from .compare_any_report import save_report
        return save_report(self, directory, overwrite=overwrite)
