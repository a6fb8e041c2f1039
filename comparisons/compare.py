"""``sparsebayes compare DATASET``: the fast sparse estimate beside the full posterior.

For one data set it fits

* the parameter-free Jeffreys EM estimate (Figueiredo 2003) — the sparse point estimate;
* NUTS on the Laplace model with a Gamma(1, 0.1) hyperprior on γ (and the flat prior on σ²
  for regression) — the full posterior of a proper sparse Bayesian model;
* Laplace EM with γ (and σ²) fixed at their posterior medians — the MAP of the same model
  given its hyperparameters, so "MAP vs full posterior" compares one model;

and writes one report: the ArviZ summary (R-hat, bulk/tail ESS, MCSE), divergences, ESS per
second, the EM estimates over the posterior intervals (forest plot), the sparsity pattern
beside the posterior mass near zero, held-out predictive scores and timings.

For regression it adds the Bayesian Lasso (:func:`_bayesian_lasso_block`): BLS's type-II
estimate (004) beside the Park–Casella posterior drawn by Gibbs and by NUTS on the same
model (medians, 95 % intervals, ESS and R-hat of each sampler, and their ESS per second).

For the multiclass data sets (iris, glass) the sparse estimate is SMLR (003) with λ by
cross-validation, beside NUTS on the same multinomial logistic model with the Laplace prior
at that λ (:func:`_smlr_block`).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.integrate
import scipy.special
import scipy.stats

from sparsebayes.comparisons import datasets
from sparsebayes.comparisons.registry import jsonable

# The posterior mass near zero is P(|β_i| < c) with c = NEAR_ZERO · scale: scale = sd(y) for
# regression (standardized inputs), 1 for probit (unit latent noise) and the multinomial model.
# The prior's mass in the same window stands beside it: their ratio over the window's width is
# about the Savage–Dickey ratio p(β_i = 0 | y) / p(β_i = 0), above 1 where the data favour zero.
NEAR_ZERO = 0.05
#: A report lists a warning when the largest R-hat over the sampled variables exceeds this (the
#: sampler-health gate's threshold, :data:`sparsebayes.comparisons.sampler_health.RHAT_MAX`).
from .sampler_health import RHAT_MAX  # noqa: E402
#: NUTS's Gamma(shape, rate) hyperprior on the Laplace γ (the papers fix γ or drop it).
GAMMA_PRIOR = (1.0, 0.1)


@dataclass
class _Problem:
    X: np.ndarray
    y: np.ndarray
    names: list
    kind: str  # "regression" | "probit" | "multinomial"


def _problem(name):
    if name == "diabetes":
        d = datasets.diabetes(scaled=False)
        return _Problem(d.X, d.y, d.feature_names, "regression")
    if name == "boston":
        d = datasets.boston()
        return _Problem(d.X, d.y, d.feature_names, "regression")
    if name == "pima":
        tr, te = datasets.pima()
        return _Problem(np.vstack([tr.X, te.X]), np.r_[tr.y, te.y], tr.feature_names, "probit")
    if name == "crabs":
        d = datasets.crabs()
        return _Problem(d.X, d.y, d.feature_names, "probit")
    if name == "wbc":
        d = datasets.breast_cancer()
        return _Problem(d.X, d.y, d.feature_names, "probit")
    if name in ("iris", "glass"):
        d = datasets.iris() if name == "iris" else datasets.forensic_glass()
        return _Problem(d.X, np.asarray(d.class_names)[d.y], d.feature_names, "multinomial")
    raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}")


DATASETS = ("diabetes", "boston", "pima", "crabs", "wbc", "iris", "glass")


def report_files(name, kind=None):
    """The files :func:`compare` writes for data set ``name`` (in its ``out`` directory); regression
    adds the Bayesian Lasso's plot. ``kind``: the data set's task, read from the data when ``None``."""
    files = [f"compare-{name}.json", f"compare-{name}.md", f"compare-{name}.png"]
    kind = _problem(name).kind if kind is None else kind
    return files + ([f"compare-{name}-bayesian-lasso.png"] if kind == "regression" else [])


def compare(name, *, out="results", num_warmup=1000, num_samples=1000, num_chains=4, seed=0,
            test_fraction=0.25, progress_bar=True, overwrite=False):
    """Run the comparison on data set ``name`` and write ``out/compare-NAME.{json,md,png}``.

    Regression and binary data sets (diabetes, boston, pima, crabs, wbc) compare Figueiredo's
    EM with NUTS (:func:`_em_block`), regression adding the Bayesian Lasso; the multiclass
    ones (iris, glass) compare SMLR with NUTS (:func:`_smlr_block`). Returns the report (the
    JSON's content) and the per-coefficient table. ``progress_bar`` shows the bars of SMLRCV and
    Gibbs; NUTS always runs without one (NumPyro's bar steps the chains from Python, which would
    slow the sampler whose ESS per second the report gives, and compile each chain anew).
    A report of ``name`` already in ``out`` (:func:`report_files`) is a ``FileExistsError`` before
    anything runs, unless ``overwrite``: an earlier report, perhaps edited, is never replaced silently.
    """
    import matplotlib

    from .compare_any_report import refuse_overwrite

    matplotlib.use("Agg")

    prob = _problem(name)
    if not overwrite:
        refuse_overwrite(out, report_files(name, prob.kind))
    rng = np.random.default_rng(seed)
    test = rng.random(prob.y.size) < test_fraction
    mean, sd = prob.X[~test].mean(0), prob.X[~test].std(0)
    Xtr, Xte = (prob.X[~test] - mean) / sd, (prob.X[test] - mean) / sd
    ytr, yte = prob.y[~test], prob.y[test]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sampling = dict(num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                    progress_bar=progress_bar)
    block = _smlr_block if prob.kind == "multinomial" else _em_block
    report, table, md = block(name, prob, Xtr, ytr, Xte, yte, out=out, **sampling)
    report = {"dataset": name, "kind": prob.kind, "n_train": int(len(ytr)), "n_test": int(len(yte)), **report}
    (out / f"compare-{name}.json").write_text(json.dumps(jsonable(report), indent=2))
    (out / f"compare-{name}.md").write_text("\n".join([f"# compare {name}", "", *md]))
    return report, table


def _em_block(name, prob, Xtr, ytr, Xte, yte, *, out, num_warmup, num_samples, num_chains, seed, progress_bar):
    """Jeffreys and Laplace EM beside NUTS on the Laplace model with a Gamma hyperprior on γ.

    Returns the report's entries, the per-coefficient table and the Markdown lines.
    """
    from sparsebayes.inference.arviz_compat import summary as arviz_summary
    import jax.numpy as jnp

    from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier, run_nuts
    from sparsebayes.models.adaptive import sparse_probit_model, sparse_regression_model

    ytr, yte = ytr.astype(float), yte.astype(float)
    regression = prob.kind == "regression"
    y_offset = ytr.mean() if regression else 0.0
    Htr = np.column_stack([np.ones(len(ytr)), Xtr]) if not regression else Xtr
    Hte = np.column_stack([np.ones(len(yte)), Xte]) if not regression else Xte
    names = (["bias"] if not regression else []) + list(prob.names)
    Est = AdaptiveSparseRegressor if regression else SparseProbitClassifier
    timings = {}

    t0 = time.perf_counter()
    bias = not regression  # regression: y centred, no bias; probit: a bias column, as in H
    jeff = Est(prior="jeffreys", bias=bias, tol=1e-5, max_iter=20000).fit(Xtr, ytr - y_offset)
    timings["jeffreys_em_s"] = time.perf_counter() - t0

    model = sparse_regression_model if regression else sparse_probit_model
    t0 = time.perf_counter()
    idata = run_nuts(model, jnp.asarray(Htr), jnp.asarray(ytr - y_offset), prior="laplace", gamma_prior=GAMMA_PRIOR,
                     marginal=True, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                     seed=seed, progress_bar=False, coords={"coef": names}, dims={"beta": ["coef"]})
    timings["nuts_s"] = time.perf_counter() - t0

    post = idata.posterior
    gamma_med = float(post["gamma"].median())
    kw = dict(prior="laplace", gamma=gamma_med, bias=bias, tol=1e-8, max_iter=20000)
    if regression:
        kw["noise_var"] = float(post["noise_var"].median())
    t0 = time.perf_counter()
    lap = Est(**kw).fit(Xtr, ytr - y_offset)
    timings["laplace_em_s"] = time.perf_counter() - t0

    bayesian_lasso = None
    if regression:
        bayesian_lasso = _bayesian_lasso_block(Xtr, ytr, Xte, yte, names, num_warmup=num_warmup,
                                               num_samples=num_samples, num_chains=num_chains, seed=seed,
                                               progress_bar=progress_bar)
        timings.update(bayesian_lasso["timings_s"])

    summary = arviz_summary(idata, var_names=["beta"])
    beta_draws = post["beta"].values.reshape(-1, len(names))
    window = NEAR_ZERO * (float(np.std(ytr)) if regression else 1.0)
    gamma_a, gamma_b = GAMMA_PRIOR
    prior_mass = scipy.integrate.quad(lambda g: -np.expm1(-np.sqrt(g) * window) * scipy.stats.gamma.pdf(
        g, gamma_a, scale=1.0 / gamma_b), 0.0, np.inf)[0]  # P(|β_i| < c) under the Laplace prior, γ integrated out
    table = _posterior_table(summary, names, beta_draws, window, prior_mass)
    table.insert(0, "jeffreys_em", np.ravel(jeff.beta_))
    table.insert(1, "laplace_em", np.ravel(lap.beta_))

    if regression:
        scores = {"jeffreys-em": _rmse(yte - y_offset, Hte @ np.ravel(jeff.beta_)),
                  "laplace-em": _rmse(yte - y_offset, Hte @ np.ravel(lap.beta_)),
                  "nuts-posterior-mean": _rmse(yte - y_offset, Hte @ beta_draws.mean(0))}
    else:  # class-1 probabilities Φ(hᵀβ): the estimates' plug-in ones and the posterior predictive (mean over draws)
        probit = {"jeffreys-em": scipy.special.ndtr(Hte @ np.ravel(jeff.beta_)),
                  "laplace-em": scipy.special.ndtr(Hte @ np.ravel(lap.beta_)),
                  "nuts-posterior-predictive": scipy.special.ndtr(Hte @ beta_draws.T).mean(axis=1)}
        scores = {k: _classification_scores(yte, np.array([0.0, 1.0]), np.column_stack([1.0 - p1, p1]))
                  for k, p1 in probit.items()}
    diag = {**_nuts_diagnostics(idata), "gamma_posterior_median": gamma_med,
            "near_zero_window": window, "prior_mass_in_window": prior_mass}
    if regression:
        diag["noise_var_posterior_median"] = float(post["noise_var"].median())

    _forest_plot(names, [_nuts_interval(table)],
                 [(table["laplace_em"], "x", "C1", "Laplace EM (γ, σ² at medians)"),
                  (table["jeffreys_em"], "s", "C0", "Jeffreys EM")],
                 out / f"compare-{name}.png", f"{name}: sparse EM estimates over the full posterior")

    report = {"timings_s": timings, "diagnostics": diag, "scores": scores, "table": _records(table)}
    md = [f"{prob.kind}, {len(ytr)} training / {len(yte)} held-out points, inputs standardized.", "",
          *_summary_md(table, diag, scores, timings, name)]
    if bayesian_lasso is not None:
        _plot_bayesian_lasso(bayesian_lasso["table"], out / f"compare-{name}-bayesian-lasso.png",
                             f"{name}: BLS type-II over the Bayesian Lasso posterior")
        report["bayesian_lasso"] = {k: v for k, v in bayesian_lasso.items() if k not in ("table", "timings_s")}
        report["bayesian_lasso"]["table"] = _records(bayesian_lasso["table"])
        md += ["## Bayesian Lasso: BLS type-II beside the Gibbs and NUTS posteriors", "",
               "Park–Casella hierarchy (λ² ~ Gamma(1, 1.78), p(σ²) ∝ 1/σ², y centred); medians and "
               "equal-tailed 95 % intervals; `bls` is 004's type-II estimate (its zeros are exact). "
               "ESS per second of each sampler's own time (warm-up and draws, compile excluded).", "",
               bayesian_lasso["table"].to_markdown(floatfmt=".3g"), "",
               *[f"**Warning: {w}.**" for w in bayesian_lasso["diagnostics"]["warnings"]],
               *_bullets({k: v for k, v in bayesian_lasso["diagnostics"].items() if k != "warnings"}),
               *[f"- held-out {k}: {v}" for k, v in bayesian_lasso["scores"].items()], "",
               f"![bayesian lasso](compare-{name}-bayesian-lasso.png)", ""]
    return report, table, md


def _smlr_block(name, prob, Xtr, ytr, Xte, yte, *, out, num_warmup, num_samples, num_chains, seed, progress_bar):
    """SMLR (003) beside NUTS on the same multinomial logistic model with its Laplace prior.

    SMLR's λ is chosen by 5-fold CV (:class:`~sparsebayes.inference.SMLRCV`, linear features
    with a bias); NUTS samples ``multinomial_logistic_model`` with the Laplace prior at that λ,
    so the MAP and the posterior are of one density (the report checks that no draw has a
    higher log posterior than the MAP). Held-out scores: error rate and log loss of the MAP's
    probabilities and of the posterior predictive ones (the mean over draws).

    Returns the report's entries, the per-weight table and the Markdown lines.
    """
    from sparsebayes.inference.arviz_compat import summary as arviz_summary
    import jax
    import jax.numpy as jnp

    from sparsebayes.inference import SMLRCV, run_nuts
    from sparsebayes.models.multinomial import (
        class_probabilities,
        log_posterior,
        multinomial_logistic_model,
        one_hot_reference,
    )

    timings = {}
    t0 = time.perf_counter()
    smlr = SMLRCV(penalty="l1", features="linear", cv=5, random_state=seed, progress_bar=progress_bar).fit(Xtr, ytr)
    timings["smlr_cv_s"] = time.perf_counter() - t0
    classes = [str(c) for c in smlr.classes_]
    Htr, Hte = smlr.feature_map_.transform(Xtr), smlr.feature_map_.transform(Xte)
    codes = np.searchsorted(smlr.classes_, ytr)
    basis = list(smlr.feature_map_.get_feature_names_out(prob.names))
    from sparsebayes.models.priors import LaplacePrior

    prior = LaplacePrior.from_lam(float(smlr.lam_))
    t0 = time.perf_counter()
    idata = run_nuts(multinomial_logistic_model, jnp.asarray(Htr), jnp.asarray(codes), n_classes=len(classes),
                     prior=prior, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains, seed=seed,
                     progress_bar=False, coords={"basis": basis, "class": classes[:-1]},
                     dims={"coef": ["basis", "class"]})
    timings["nuts_s"] = time.perf_counter() - t0

    post = idata.posterior
    summary = arviz_summary(idata, var_names=["coef"])
    draws = post["coef"].values.reshape((-1,) + post["coef"].shape[2:])
    names = [f"{b} [{c}]" for b in basis for c in classes[:-1]]  # az.summary's order: basis-major
    window = NEAR_ZERO
    prior_mass = -np.expm1(-float(smlr.lam_) * window)  # P(|w| < c) under the Laplace prior exp(−λ|w|)
    table = _posterior_table(summary, names, draws.reshape(len(draws), -1), window, prior_mass)
    table.insert(0, "smlr", smlr._basis_weights_[:, :-1].ravel())

    H, Y1 = jnp.asarray(Htr), one_hot_reference(jnp.asarray(codes), len(classes))
    map_logpost = float(log_posterior(jnp.asarray(smlr._basis_weights_[:, :-1]), H, Y1, prior))
    draw_logpost = np.asarray(jax.vmap(lambda w: log_posterior(w, H, Y1, prior))(jnp.asarray(draws)))
    post_proba = np.asarray(jax.vmap(lambda w: class_probabilities(w, jnp.asarray(Hte)))(jnp.asarray(draws))).mean(0)
    scores = {"smlr": _classification_scores(yte, smlr.classes_, smlr.predict_proba(Xte)),
              "nuts-posterior-predictive": _classification_scores(yte, smlr.classes_, post_proba)}
    diag = {**_nuts_diagnostics(idata), "lam": float(smlr.lam_), "near_zero_window": window,
            "prior_mass_in_window": prior_mass,
            "smlr_zeros": int(np.sum(smlr._basis_weights_[:, :-1] == 0)), "n_weights": int(smlr._basis_weights_[:, :-1].size),
            "map_log_posterior": map_logpost, "max_draw_log_posterior": float(draw_logpost.max())}
    diag["warnings"] += _map_warnings(map_logpost, diag["max_draw_log_posterior"])

    _forest_plot(names, [_nuts_interval(table)],
                 [(table["smlr"], "D", "C3", f"SMLR MAP (λ = {smlr.lam_:.3g} by CV)")],
                 out / f"compare-{name}.png", f"{name}: the SMLR estimate over the full posterior")
    report = {"timings_s": timings, "diagnostics": diag, "scores": scores, "table": _records(table)}
    md = [f"{len(classes)} classes (reference: {classes[-1]}), {len(ytr)} training / {len(yte)} held-out "
          "points, inputs standardized, linear features with a bias. SMLR's λ by 5-fold CV; NUTS samples the "
          "same multinomial logistic model with the Laplace prior at that λ (no draw should have a higher log "
          "posterior than the MAP).", "", *_summary_md(table, diag, scores, timings, name)]
    return report, table, md


def _posterior_table(summary, names, draws, window, prior_mass):
    """ArviZ's summary per coefficient, plus the posterior mass within ``window`` of zero and
    its ratio to the prior's mass there (``prior_mass``, the same for every coefficient)."""
    table = summary[["mean", "sd", "hdi_3%", "hdi_97%", "mcse_mean", "ess_bulk", "ess_tail", "r_hat"]].copy()
    table.index = names
    table["P(|b|<c)"] = np.mean(np.abs(draws) < window, axis=0)
    table["P(|b|<c) / prior"] = table["P(|b|<c)"] / prior_mass
    return table


def _nuts_interval(table):
    """The NUTS 94 % HDI and mean of :func:`_posterior_table`, as a :func:`_forest_plot` interval."""
    return table["hdi_3%"], table["mean"], table["hdi_97%"], 0.0, "0.4", ("NUTS 94% HDI", "NUTS mean")


def _nuts_diagnostics(idata):
    """Divergences, the largest R-hat and the least bulk and tail ESS over every sampled variable,
    the ESS per second of the sampler's own time (warm-up and draws, JAX's compile excluded:
    ``run_nuts``'s ``sampling_seconds − compile_seconds``), and ``warnings`` naming what failed."""
    from sparsebayes.inference.arviz_compat import summary as arviz_summary

    post = idata.posterior
    diag = arviz_summary(idata, kind="diagnostics")
    own = float(post.attrs["sampling_seconds"] - post.attrs["compile_seconds"])
    out = {"n_divergences": int(post.attrs["n_divergences"]), "max_r_hat": float(diag["r_hat"].max()),
           "min_ess_bulk": float(diag["ess_bulk"].min()), "min_ess_tail": float(diag["ess_tail"].min()),
           "sampler_seconds": own, "compile_seconds": float(post.attrs["compile_seconds"])}
    out["min_ess_bulk_per_s"] = out["min_ess_bulk"] / max(own, 1e-9)
    out["warnings"] = _diagnostic_warnings(out["n_divergences"], out["max_r_hat"], post.sizes["chain"])
    return out


def _map_warnings(map_logpost, max_draw_logpost):
    """A warning when a posterior draw beats the MAP's log posterior (beyond 1e-6 relative):
    the MAP fit stopped short of the mode."""
    excess = max_draw_logpost - map_logpost
    if excess > 1e-6 * max(1.0, abs(map_logpost)):
        return [f"a draw's log posterior exceeds the SMLR MAP's by {excess:.3g}: the MAP fit stopped short of "
                "the mode"]
    return []


def _diagnostic_warnings(n_divergences, max_r_hat, n_chains):
    warn = []
    if n_divergences:
        warn.append(f"{n_divergences} divergent transitions after warm-up: the draws may be biased")
    if n_chains > 1 and max_r_hat > RHAT_MAX:
        warn.append(f"max R-hat {max_r_hat:.3f} > {RHAT_MAX}: the chains have not mixed; run longer")
    return warn


def _classification_scores(y, classes, proba):
    """Error rate of the most probable class and the mean log loss (nats) of ``proba``."""
    idx = np.searchsorted(classes, y)
    p = np.asarray(proba)[np.arange(len(y)), idx]
    return {"error_rate": float(np.mean(np.asarray(classes)[np.argmax(proba, axis=1)] != y)),
            "log_loss": float(-np.mean(np.log(np.maximum(p, np.finfo(float).tiny))))}


def _records(table):
    return json.loads(table.reset_index(names="coef").to_json(orient="records"))


def _bullets(mapping):
    return [f"- {k}: {v:.4g}" if isinstance(v, float) else f"- {k}: {v}" for k, v in mapping.items()]


def _summary_md(table, diag, scores, timings, name):
    warn = [f"**Warning: {w}.**" for w in diag["warnings"]]
    return ["## Estimates and posterior", "",
            f"`P(|b|<c)`: the posterior mass within c = {diag['near_zero_window']:.3g} of zero; `/ prior`: its "
            f"ratio to the prior's mass there ({diag['prior_mass_in_window']:.3g}), above 1 where the data favour "
            "zero.", "", table.to_markdown(floatfmt=".3g"), "",
            "## Diagnostics (NUTS)", "", *warn, *([""] if warn else []),
            "Over every sampled variable; ESS per second of the sampler's own time (warm-up and draws, "
            "JAX's compile excluded).", "", *_bullets({k: v for k, v in diag.items() if k != "warnings"}), "",
            "## Held-out scores", "", *[f"- {k}: {v}" for k, v in scores.items()], "",
            "## Timings (s)", "", *[f"- {k}: {v:.3f}" for k, v in timings.items()], "",
            f"![forest](compare-{name}.png)", ""]


def _bayesian_lasso_block(Xtr, ytr, Xte, yte, names, *, num_warmup, num_samples, num_chains, seed, progress_bar):
    """BLS type-II (004 Algorithm 1) beside the Park–Casella posterior by Gibbs (on the scale
    mixture) and by NUTS (τ² integrated out, ``sampler="nuts-marginal"``).

    Returns a dict: ``table`` (per coefficient: the BLS estimate; each sampler's median, 95 %
    interval, bulk ESS and R-hat), ``diagnostics`` (BLS's zeros; over every sampled variable, each
    sampler's largest R-hat and least bulk ESS per second of warm-up and draws, compile excluded;
    NUTS's divergences; ``warnings`` naming what failed), held-out RMSE ``scores`` and ``timings_s``.
    """
    from sparsebayes.inference.arviz_compat import summary as arviz_summary
    import pandas as pd

    from sparsebayes.inference import BayesianLassoRegressor, BLSRegressor

    timings = {}
    t0 = time.perf_counter()
    bls = BLSRegressor().fit(Xtr, ytr)
    timings["bls_typeii_s"] = time.perf_counter() - t0
    table = pd.DataFrame({"bls": bls.coef_}, index=names)
    diagnostics, scores, warnings = {"bls_zeros": [n for n, c in zip(names, bls.coef_) if c == 0]}, {}, []
    scores["bls"] = _rmse(yte, bls.predict(Xte))
    # NUTS on the model with τ² integrated out: the same posterior over β, without the scale
    # mixture's funnel (9 divergent transitions on diabetes at the defaults, none on the marginal)
    for sampler, form in (("gibbs", "gibbs"), ("nuts", "nuts-marginal")):
        t0 = time.perf_counter()
        fit = BayesianLassoRegressor(sampler=form, num_warmup=num_warmup, num_samples=num_samples,
                                     num_chains=num_chains, seed=seed,
                                     progress_bar=progress_bar and sampler == "gibbs").fit(Xtr, ytr)
        timings[f"bayesian_lasso_{sampler}_s"] = time.perf_counter() - t0
        summary = arviz_summary(fit.idata_, kind="diagnostics")  # every sampled variable
        beta_rows = summary.loc[[k for k in summary.index if k.startswith("beta[")]]
        table[f"{sampler}_median"] = fit.coef_
        table[f"{sampler}_2.5%"], table[f"{sampler}_97.5%"] = fit.coef_interval_
        table[f"{sampler}_ess_bulk"] = beta_rows["ess_bulk"].to_numpy()
        table[f"{sampler}_r_hat"] = beta_rows["r_hat"].to_numpy()
        attrs = fit.idata_.posterior.attrs  # run_gibbs compiles before its timing, run_nuts inside it
        seconds = float(attrs["sampling_seconds"] - attrs.get("compile_seconds", 0.0))
        n_div = int(attrs.get("n_divergences", 0))  # Gibbs has none to report
        diagnostics[f"{sampler}_max_r_hat"] = float(summary["r_hat"].max())
        diagnostics[f"{sampler}_min_ess_bulk_per_s"] = float(summary["ess_bulk"].min()) / seconds
        if sampler == "nuts":
            diagnostics["nuts_n_divergences"] = n_div
        warnings += [f"{sampler}: {w}" for w in _diagnostic_warnings(n_div, diagnostics[f"{sampler}_max_r_hat"],
                                                                      num_chains)]
        scores[f"bayesian-lasso-{sampler}"] = _rmse(yte, fit.predict(Xte))
    diagnostics["warnings"] = warnings
    return {"table": table, "diagnostics": diagnostics, "scores": scores, "timings_s": timings}


def _rmse(y, pred):
    return {"rmse": float(np.sqrt(np.mean((np.asarray(y) - np.asarray(pred)) ** 2)))}


def _plot_bayesian_lasso(table, path, title):
    """Each sampler's 95 % interval and median, the BLS estimate on top."""
    _forest_plot(list(table.index),
                 [(table[f"{s}_2.5%"], table[f"{s}_median"], table[f"{s}_97.5%"], shift, color,
                   (f"{label} 95% interval", f"{label} median"))
                  for shift, s, color, label in ((0.12, "gibbs", "0.3", "Gibbs"),
                                                 (-0.12, "nuts", "C2", "NUTS (τ² integrated out)"))],
                 [(table["bls"], "D", "C3", "BLS type-II")], path, title)


def _forest_plot(names, intervals, points, path, title):
    """Forest plot, one row per coefficient: ``intervals`` as (low, centre, high, row shift, colour,
    (interval label, centre label)), drawn as bars with a dot; ``points`` as (values, marker,
    colour, label), drawn as open markers (a filled ``x``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 0.35 * len(names) + 1.5))
    ypos = np.arange(len(names))[::-1]
    for low, centre, high, shift, color, (interval_label, centre_label) in intervals:
        ax.hlines(ypos + shift, low, high, color=color, lw=2, label=interval_label)
        ax.plot(centre, ypos + shift, "o", color=color, label=centre_label)
    for values, marker, color, label in points:
        ax.plot(values, ypos, marker, mfc="none" if marker != "x" else color, color=color, ms=9, label=label)
    ax.axvline(0, color="k", lw=0.5)
    ax.set_xlabel("coefficient, on the standardized inputs (in the units of y for regression; "
                  "of the linear predictor for classification)", fontsize=8)
    ax.set_yticks(ypos, names)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes, over no row
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
