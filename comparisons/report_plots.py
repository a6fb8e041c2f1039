"""The report's pictures beyond the forest plot: posterior-predictive checks suited to the likelihood,
rank plots of a sampler that failed its health gate, the projection-selection curve.

* **Posterior-predictive check** (Gelman, Meng & Stern 1996; Gabry et al. 2019, "Visualization in
  Bayesian workflow", Sec. 5), of the first sampler's ``posterior_predictive`` against
  ``observed_data`` (:func:`ppc_kind` chooses by the likelihood):

  - ``"density"`` (a real-valued target): the observed density beside those of replicated data sets
    (``density_overlay``: Gaussian kernel density estimates on one grid, Scott's bandwidth);
  - ``"calibration"`` (two classes): a reliability curve (``calibration_table``): rows binned by their
    posterior-predictive probability ``P(y_i = 1 | y) = E[y_i^rep]`` into equal-count bins, the observed
    share of ones per bin against the bin's mean probability, with ±2 binomial standard errors; a
    calibrated model lies on the diagonal;
  - ``"rootogram"`` (counts; Kleiber & Zeileis 2016, "Visualizing count data regressions using
    rootograms"): per count ``k`` the expected frequency ``E_k = Σ_i P(y_i^rep = k)`` (the mean over
    draws of the replicated data's frequency of ``k``) as a curve on the square-root scale, and the
    observed frequency ``O_k`` as a bar hanging from it (from ``√E_k − √O_k`` to ``√E_k``): a bar that
    stops short of zero or crosses it marks a count the model under- or over-predicts;
  - ``"class-frequencies"`` (more than two classes): per class the observed count against the
    replicated counts' median and 90 % interval (:func:`count_frequencies` over the class codes).

* **Rank plots** (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, Sec. 4.1; ArviZ ``plot_rank``)
  for each sampler whose part fails the gate (:mod:`sparsebayes.comparisons.sampler_health`): the
  ranks of each chain's draws among all chains' are uniform when the chains sample one distribution;
  a chain stuck in a region shows as a skewed histogram. The weights with the largest R-hat (up to
  :data:`RANK_PANELS`) and the scalar parameters the gate reads are shown.

* **Projection selection** (:func:`sparsebayes.comparisons.selection.plot`): saved as
  ``selection.png`` by the report (:mod:`sparsebayes.comparisons.compare_any_report`).

Every figure is a ``matplotlib.figure.Figure`` not registered with pyplot.
"""
from __future__ import annotations

import warnings

import numpy as np

#: The most panels of a rank plot (one per variable, the largest R-hat first).
RANK_PANELS = 12
#: Replicated data sets drawn in a density overlay.
OVERLAY_DRAWS = 50
#: Bins of the reliability curve (equal counts of rows).
CALIBRATION_BINS = 10
#: ``"kind"`` of :func:`ppc_kind` -> what the report says it shows.
PPC_CAPTIONS = {
    "density": "Posterior-predictive check: the observed target's density (black) over those of {draws} "
               "replicated data sets from the posterior predictive (Gaussian kernel estimates on one grid).",
    "calibration": "Posterior-predictive check: reliability curve. Rows binned by their posterior-predictive "
                   "probability of the second class (equal-count bins); the observed share per bin against "
                   "the bin's mean probability, ±2 binomial standard errors. A calibrated model lies on the "
                   "diagonal.",
    "rootogram": "Posterior-predictive check: hanging rootogram (Kleiber & Zeileis 2016). The curve is the "
                 "square root of the expected frequency of each count; each observed frequency hangs from it "
                 "as a bar, so a bar ending above zero marks a count predicted too often, below zero one "
                 "predicted too rarely.",
    "class-frequencies": "Posterior-predictive check: the observed count of each class (black) against the "
                         "replicated data's median and 90 % interval.",
}


def ppc_kind(estimator, y):
    """The posterior-predictive check suited to the model of ``estimator`` with observed targets ``y``:
    ``"calibration"`` for a classifier of two classes or a binary likelihood, ``"class-frequencies"``
    for more classes, ``"rootogram"`` for a count likelihood (``support == "counts"`` of the estimator's
    ``likelihood_`` / ``likelihood``), ``"density"`` otherwise."""
    from sklearn.base import is_classifier
    y = np.asarray(y).reshape(-1)
    if is_classifier(estimator):
        return "calibration" if np.unique(y).size <= 2 else "class-frequencies"
    lik = getattr(estimator, "likelihood_", getattr(estimator, "likelihood", None))
    if isinstance(lik, str):
        from sparsebayes.models.likelihoods.registry import make_likelihood
        try:
            lik = make_likelihood(lik)
        except ValueError:  # a name the registry does not know: no support to read
            lik = None
    support = getattr(lik, "support", None)
    if support == "counts":
        return "rootogram"
    if support == "binary":
        return "calibration"
    return "density"


def calibration_table(y, p, bins=CALIBRATION_BINS):
    """The reliability curve's points: ``(mean_p, observed, n)`` per bin of ``p`` (the rows'
    predicted probabilities of ``y == 1``) into ``bins`` bins of (as near as ties allow) equal counts,
    ``observed`` the share of ones in the bin. ``ValueError`` for mismatched input or ``y`` not 0/1."""
    y, p = np.asarray(y, dtype=np.float64).reshape(-1), np.asarray(p, dtype=np.float64).reshape(-1)
    if y.shape != p.shape or y.size == 0:
        raise ValueError(f"y and p must be 1-D of one value per row; got {y.shape}, {p.shape}")
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y must be 0/1 for a reliability curve")
    order = np.argsort(p, kind="stable")
    groups = [g for g in np.array_split(order, min(bins, y.size)) if g.size]
    return (np.array([p[g].mean() for g in groups]), np.array([y[g].mean() for g in groups]),
            np.array([g.size for g in groups]))


def count_frequencies(y, yrep, support=None):
    """``(support, observed, replicated)`` of integer data: per value ``k`` of ``support`` (default
    ``0 … max(max y, 99th percentile of yrep)``) the observed frequency ``#{i: y_i = k}`` and per
    replicated data set (a row of ``yrep``, shape (draws, n)) its frequency of ``k``, (draws, K)."""
    y = np.rint(np.asarray(y, dtype=np.float64).reshape(-1)).astype(np.int64)
    yrep = np.rint(np.asarray(yrep, dtype=np.float64).reshape(-1, y.size)).astype(np.int64)
    if support is None:
        top = int(max(y.max(initial=0), np.percentile(yrep, 99) if yrep.size else 0))
        support = np.arange(0, top + 1)
    support = np.asarray(support, dtype=np.int64)
    observed = (y[:, None] == support).sum(axis=0)
    replicated = (yrep[..., None] == support).sum(axis=1)
    return support, observed, replicated


def _predictive(cmp):
    """The first sampler's observed targets (n,) and replicated data (draws, n)."""
    y = np.asarray(cmp.idata.observed_data["y"].values, dtype=np.float64).reshape(-1)
    yrep = np.asarray(cmp.idata.posterior_predictive["y"].values, dtype=np.float64).reshape(-1, y.size)
    return y, yrep


def plot_ppc(cmp, kind=None, seed=0):
    """The posterior-predictive check of :func:`ppc_kind` (or ``kind``) for the first sampler of the
    comparison ``cmp``; returns ``(figure, kind)``."""
    from matplotlib.figure import Figure
    y, yrep = _predictive(cmp)
    kind = ppc_kind(cmp.estimator, y) if kind is None else kind
    fig = Figure(figsize=(6.5, 3.8), layout="constrained")
    ax = fig.add_subplot()
    sampler = next(iter(cmp.samples))
    if kind == "density":
        _density_overlay(ax, y, yrep, seed)
        ax.set_xlabel("y")
        ax.set_ylabel("density")
    elif kind == "calibration":
        codes = np.unique(y)
        y01 = (y == codes.max()).astype(np.float64) if codes.size == 2 else y
        p = (yrep == codes.max()).mean(axis=0) if codes.size == 2 else yrep.mean(axis=0)
        mean_p, observed, n = calibration_table(y01, p)
        se = np.sqrt(np.clip(mean_p * (1 - mean_p), 1e-12, None) / n)
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, label="calibrated")
        ax.errorbar(mean_p, observed, yerr=2 * se, fmt="o-", ms=4, capsize=3, color="C0",
                    label="observed share, ±2 SE")
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("posterior-predictive probability (bin mean)")
        ax.set_ylabel("observed share in the bin")
    elif kind == "rootogram":
        k, observed, replicated = count_frequencies(y, yrep)
        expected = replicated.mean(axis=0)
        top = np.sqrt(expected)
        ax.bar(k, np.sqrt(observed), bottom=top - np.sqrt(observed), width=0.8, color="0.75",
               edgecolor="0.4", label="observed frequency (hanging)")
        ax.plot(k, top, "o-", color="C3", ms=3, label="expected frequency")
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel("count")
        ax.set_ylabel("√frequency")
    elif kind == "class-frequencies":
        k, observed, replicated = count_frequencies(y, yrep, support=np.unique(np.r_[y, yrep.ravel()]))
        lo, mid, hi = np.quantile(replicated, [0.05, 0.5, 0.95], axis=0)
        ax.bar(k, observed, width=0.6, color="0.75", edgecolor="0.4", label="observed")
        ax.errorbar(k, mid, yerr=[mid - lo, hi - mid], fmt="o", color="C3", capsize=3,
                    label="replicated: median, 90 %")
        ax.set_xticks(k, _class_labels(cmp, k))
        ax.set_xlabel("class")
        ax.set_ylabel("rows")
    else:
        raise ValueError(f"kind must be one of {', '.join(PPC_CAPTIONS)}, got {kind!r}")
    ax.set_title(f"Posterior-predictive check ({sampler})")
    ax.legend(loc="best", fontsize="small")
    return fig, kind


def _class_labels(cmp, codes):
    classes = getattr(cmp.estimator, "classes_", None)
    if classes is not None and len(classes) > int(np.max(codes, initial=0)):
        return [str(classes[int(c)]) for c in codes]
    return [str(int(c)) for c in codes]


def _density_overlay(ax, y, yrep, seed):
    import scipy.stats
    rng = np.random.default_rng(seed)
    rows = yrep[rng.choice(len(yrep), size=min(OVERLAY_DRAWS, len(yrep)), replace=False)]
    lo, hi = min(y.min(), np.quantile(rows, 0.005)), max(y.max(), np.quantile(rows, 0.995))
    grid = np.linspace(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo), 256)
    for k, row in enumerate(rows):
        if np.ptp(row) > 0:
            ax.plot(grid, scipy.stats.gaussian_kde(row)(grid), color="C0", alpha=0.2, lw=0.8,
                    label="replicated" if k == 0 else None)
    if np.ptp(y) > 0:
        ax.plot(grid, scipy.stats.gaussian_kde(y)(grid), color="black", lw=2, label="observed")


def rank_variables(idata, weight_dims=("basis",), panels=RANK_PANELS):
    """``[(variable, coords)]`` of a rank plot of one sampler's ``idata``: the scalar parameters the gate
    reads, then the weights of ``beta`` by decreasing R-hat (weights that never move left out), up to
    ``panels`` in all."""
    from sparsebayes.inference.posterior.arviz_compat import rhat

    from .sampler_health import gated_variables
    post = idata.posterior
    out = [(v, {}) for v in gated_variables(post, weight_dims) if v != "beta" and post[v].ndim == 2][:panels]
    beta = post["beta"]
    flat = beta.stack(_w=list(weight_dims)) if len(weight_dims) > 1 else beta.rename({weight_dims[0]: "_w"})
    moving = np.ptp(flat.values.reshape(-1, flat.sizes["_w"]), axis=0) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = (np.asarray(rhat(idata, var_names=["beta"])["beta"].transpose(*weight_dims).values).reshape(-1)
             if post.sizes["chain"] > 1 else np.zeros(moving.size))
    r = np.where(np.isfinite(r), r, -np.inf)
    order = [int(i) for i in np.argsort(-r, kind="stable") if moving[i]]
    index = [tuple(np.atleast_1d(v)) for v in flat["_w"].values] if len(weight_dims) > 1 else None
    for i in order[:max(0, panels - len(out))]:
        coords = (dict(zip(weight_dims, index[i])) if index is not None
                  else {weight_dims[0]: beta[weight_dims[0]].values[i]})
        out.append(("beta", coords))
    return out


def plot_rank(idata, sampler, weight_dims=("basis",)):
    """ArviZ's rank plot of the variables :func:`rank_variables` picks from one sampler's ``idata``
    (``matplotlib.figure.Figure``; ArviZ 1.x: the figure of ``plot_rank``'s ``PlotCollection``)."""
    from matplotlib.figure import Figure

    from sparsebayes.inference.posterior import arviz_compat
    chosen = rank_variables(idata, weight_dims)
    if not chosen:
        raise ValueError(f"{sampler}: no sampled variable moves; there is nothing to rank")
    az = arviz_compat._az()
    if arviz_compat.is_datatree_api():  # arviz-plots draws its own figure
        coords = {d: [c[d] for v, c in chosen if d in c] for d in weight_dims}
        fig = arviz_compat.figure(az.plot_rank(idata, var_names=sorted({v for v, _ in chosen}),
                                               coords={d: v for d, v in coords.items() if v}, backend="matplotlib"),
                                   detach=True)
        fig.suptitle(f"Rank plots, {sampler}: failed the health gate")
        return fig
    cols = min(4, len(chosen))
    rows = -(-len(chosen) // cols)
    fig = Figure(figsize=(2.6 * cols + 0.4, 2.1 * rows + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols)).ravel()
    for ax, (var, coords) in zip(axes, chosen):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            az.plot_rank(idata, var_names=[var], coords={k: [v] for k, v in coords.items()}, ax=ax)
        ax.set_title(var if not coords else f"{var}[{', '.join(map(str, coords.values()))}]", fontsize="small")
        ax.tick_params(labelsize="x-small")
        ax.set_xlabel("rank (all chains)", fontsize="x-small")
        ax.set_ylabel("chain", fontsize="x-small")
    for ax in axes[len(chosen):]:
        ax.set_visible(False)
    fig.suptitle(f"Rank plots, {sampler}: failed the health gate (uniform ranks = mixed chains)")
    return fig


def failed_samplers(diagnostics):
    """The samplers whose part fails the health gate, in order (``diagnostics`` from
    :meth:`~sparsebayes.comparisons.compare_any.Comparison.diagnostics`)."""
    return [s for s, d in diagnostics.items() if not d["usable"]]
