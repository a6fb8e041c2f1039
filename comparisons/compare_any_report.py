"""The files :meth:`sparsebayes.comparisons.compare_any.Comparison.save` writes: Markdown and HTML reports,
the plots, the draws.

The report leads with what a statistician asks first and ends with the tables: the verdict per input
and the agreement of the point estimate with each posterior
(:mod:`sparsebayes.comparisons.verdict`), the projection selection and the approximation check
(:mod:`sparsebayes.comparisons.selection`, :mod:`sparsebayes.comparisons.approximation_check`), the
samplers' diagnostics with rank plots of any sampler that failed its gate, the posterior-predictive
check suited to the likelihood (:mod:`sparsebayes.comparisons.report_plots`), then the weights,
the held-out scores and the forest plot. The HTML page is one self-contained file (plots embedded
as base64 PNG) whose wide tables scroll inside their own box, so the page itself fits its width.
"""
from __future__ import annotations

import html
from pathlib import Path

#: The files :meth:`~sparsebayes.comparisons.compare_any.Comparison.save` always writes into its directory
#: (checked before writing: :func:`refuse_overwrite`).
REPORT_FILES = ("report.md", "report.html", "forest.png", "draws.nc", "ppc.png", "selection.png")
#: The rank plot of sampler ``s`` when its part fails the health gate.
RANK_FILE = "rank-{}.png"


def refuse_overwrite(directory, names, flag="overwrite=True"):
    """``FileExistsError`` naming the first of the files ``names`` that already exists in ``directory``
    and ``flag``, the way to replace it: a report written before may hold the user's edits, and saving
    again must not destroy it silently. Checked before anything is fitted or written, so a refusal
    costs nothing and leaves every file as it was. Returns ``directory`` as a ``Path``."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file, not a directory: choose another directory for the report")
    existing = [n for n in names if (out / n).exists()]
    if existing:
        others = f" (and {', '.join(existing[1:])})" if len(existing) > 1 else ""
        raise FileExistsError(f"{out / existing[0]} already exists{others}: a report written before, perhaps edited "
                              f"since, which saving would replace; pass {flag} to replace it, or choose another "
                              "directory")
    return out


def _header(cmp):
    from sparsebayes.inference.posterior.arviz_compat import dataset, has_group

    from .approximation_check import coverage_line, coverage_of
    est, idata = cmp.estimator, cmp.idata
    point = getattr(idata, "point_estimate")
    out = [("estimator", repr(est)), ("model", idata.attrs.get("model", "")),
           ("point estimate", point.attrs.get("inference", ""))]
    if has_group(idata, "fit"):  # the estimator's own approximation: what it is and how well it covers
        labels = dict(dataset(idata, "fit").attrs)
        coverage = coverage_of(labels)
        out.append(("its approximate posterior", f"{labels.get('inference', 'Gaussian')}: N(mean_vector, "
                    "covariance_matrix) in the fit group of draws.nc. " + (
                        coverage_line(coverage) if coverage else "Its coverage has not been measured.")))
    return out + [("samplers", ", ".join(cmp.samples)),
                  ("draws per sampler", f"{idata.posterior.sizes['chain']} chains × {idata.posterior.sizes['draw']}")]


PREDICTIVE_NOTE = ("Scores on held-out rows, used neither in the fit nor by the samplers. log_score: the mean "
                   "log predictive density (higher is better): for the point estimate the plug-in density, the "
                   "model's likelihood at the point estimate (with the fitted noise variance for regression); for "
                   "a sampler the log of the mean over its draws of the likelihood. rmse: of the point "
                   "prediction and of the posterior predictive mean; error_rate: of the predicted class and of "
                   "the class with the largest posterior-mean probability.")
NO_TEST = ("No held-out data were given: pass X_test and y_test (or test_size) to sparsebayes.compare for "
           "this comparison.")


NO_PPC = "The samplers drew no posterior predictive for this model: there is no check to show."
STYLE = ("body{font-family:sans-serif;max-width:60em;margin:auto;padding:0 1em;overflow-wrap:anywhere}"
         "table{border-collapse:collapse;display:block;width:max-content;max-width:100%;overflow-x:auto;border:0}"
         "td,th{border:1px solid #ccc;padding:2px 6px;overflow-wrap:normal}"
         "img{max-width:100%;height:auto}figure{margin:1em 0}figcaption{font-size:90%;color:#444}")


def _png(fig, dpi=110):
    import io
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _figure_html(png, alt, caption=""):
    import base64
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,'
            f'{base64.b64encode(png).decode("ascii")}">{cap}</figure>')


def save_report(cmp, directory, *, overwrite=False):
    """Everything :meth:`~sparsebayes.comparisons.compare_any.Comparison.save` writes, into ``directory``
    (created if needed): ``draws.nc`` (``cmp.idata``), the plots (``forest.png``, ``ppc.png``,
    ``selection.png``, ``rank-<sampler>.png`` for each sampler that failed its health gate) and
    ``report.md`` / ``report.html``. Refuses (``FileExistsError``, nothing written) when any of
    :data:`REPORT_FILES` or a rank plot is there already, unless ``overwrite``. Returns the ``Path``."""
    import warnings

    from sparsebayes.inference.posterior.arviz_compat import has_group

    from .report_plots import PPC_CAPTIONS, failed_samplers, plot_ppc, plot_rank
    out = Path(directory)
    if not overwrite:
        refuse_overwrite(out, [*REPORT_FILES, *(RANK_FILE.format(s) for s in cmp.samples)])
    out.mkdir(parents=True, exist_ok=True)
    diagnostics = cmp.diagnostics()
    figures = {}  # file name -> (png bytes, alt, caption)
    figures["forest.png"] = (_png(cmp.plot()), "forest plot", "")
    if has_group(cmp.idata, "posterior_predictive"):
        fig, kind = plot_ppc(cmp)
        draws = min(50, cmp.idata.posterior.sizes["chain"] * cmp.idata.posterior.sizes["draw"])
        figures["ppc.png"] = (_png(fig), f"posterior-predictive check ({kind})",
                              PPC_CAPTIONS[kind].format(draws=draws))
    for s in failed_samplers(diagnostics):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                figures[RANK_FILE.format(s)] = (_png(plot_rank(cmp.samples[s], s, cmp.weight_dims), dpi=90),
                                                f"rank plots, {s}",
                                                f"{s} failed the health gate: per variable, the histogram of "
                                                "each chain's ranks among all draws; uniform when the chains mix.")
            except ValueError:  # nothing moves: the diagnostics table says so
                pass
    for name, (png, _, _) in figures.items():
        (out / name).write_bytes(png)
    for stale in (RANK_FILE.format(s) for s in cmp.samples):  # a rank plot of an earlier run that passed now
        if stale not in figures and (out / stale).exists():
            (out / stale).unlink()
    write_report(out, cmp, cmp.summary(), diagnostics, figures,
                 None if cmp.y_test is None else cmp.predictive())
    # after the report: its leave-one-out has put each sampler's pointwise log-likelihood in ``idata``
    # (computed from the draws where the samplers kept none), so ``az.loo`` works on the saved file
    cmp.idata.to_netcdf(str(out / "draws.nc"))
    return out


LOO_NOTE = ("Leave-one-out of each part: elpd_loo (higher predicts left-out rows better) with its SE, and the "
            "largest Pareto k over the rows; a part passes when k-hat < 0.7 for all rows. A sampler's row is "
            "PSIS-LOO (Vehtari, Gelman & Gabry 2017) on its draws. The approximation's row is the "
            "importance-corrected approximate-posterior PSIS-LOO (Magnusson et al. 2019): the estimator's own "
            "approximate draws q reweighted by p(θ|y)/q(θ) × 1/p(y_i|θ) towards each leave-one-out posterior of "
            "the model (at the fitted hyperparameters where the estimator fixes them); it passes when also the "
            "k-hat of p/q (column khat_approximation) is below 0.7.")


def loo_sections(cmp):
    """``(markdown, html)`` of the report's leave-one-out table (:meth:`Comparison.loo`), one pass/fail
    line per part; one line instead where it cannot be computed."""
    import warnings
    esc = html.escape
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = cmp.loo()
    except ValueError as err:
        line = f"Leave-one-out not available for this model: {err}"
        return f"### Leave-one-out of each part\n\n- {line}\n", f"<h3>Leave-one-out of each part</h3><p>{esc(line)}</p>"
    shown = table.drop(columns=["line"]) if "line" in table else table
    lines = list(table["line"]) if "line" in table else []
    lines += list(table.attrs.get("notes", []))
    md = "\n".join(["### Leave-one-out of each part", "", LOO_NOTE, "", shown.to_markdown(floatfmt=".4g"), ""]
                    + [f"- {x}" for x in lines]) + "\n"
    page = "\n".join(["<h3>Leave-one-out of each part</h3>", f"<p>{esc(LOO_NOTE)}</p>",
                       shown.to_html(float_format=lambda v: f"{v:.4g}"),
                       "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"])
    return md, page


def write_report(out, cmp, table, diagnostics, figures, predictive=None):
    """``report.md`` and ``report.html`` in ``out`` from the summary ``table``, the ``diagnostics``, the
    held-out ``predictive`` table (:meth:`~sparsebayes.comparisons.compare_any.Comparison.predictive`;
    ``None``: the section says none was given) and ``figures`` (file name -> (PNG bytes, alt text,
    caption), the files :func:`save_report` wrote: linked from the Markdown, embedded in the HTML so
    that it is one self-contained file). Writes ``selection.png`` too (the selection's plot)."""
    import pandas as pd

    from .selection import report_sections
    from .verdict import verdict_html, verdict_markdown
    verdict = cmp.verdict()
    selection_md, selection_page = report_sections(cmp, plot_path=out / "selection.png")
    loo_md, loo_page = loo_sections(cmp)
    selection_md, selection_page = selection_md + "\n" + loo_md, selection_page + "\n" + loo_page
    if (out / "selection.png").exists() and "selection.png" not in figures:
        selection_md += "\n![projection selection](selection.png)\n"
    diag = pd.DataFrame({s: {k: v for k, v in d.items() if k != "warnings"} for s, d in diagnostics.items()}).T
    diag.index.name = "sampler"
    found = [w for d in diagnostics.values() for w in d["warnings"]] or ["none"]
    note = ("P(|β| < c) with c (column near_zero) each weight's region of practical equivalence (the verdict's "
            "rule, in the draws' units); intervals are 5 %–95 % posterior quantiles; weights are on the model's "
            "basis (the estimator's design columns: `feature_map_`'s where it has one, for linear features terms of "
            "the standardized inputs; SMLR's `basis[class]`, the reference class's weights zero by definition; a "
            "one-vs-all classifier's `basis[class]`, class k's weights those of its own k-vs-rest binary model). "
            "The model line names any surrogate, or hyperparameter held at its fitted value.")
    ranks = [name for name in figures if name.startswith("rank-")]
    md = ["# sparsebayes comparison", ""] + [f"- **{k}**: {v}" for k, v in _header(cmp)] + [
        "", verdict_markdown(verdict, list(cmp.samples)), selection_md, "## Diagnostics", "",
        diag.to_markdown(floatfmt=".4g"), "", "### Warnings", ""] + [f"- {w}" for w in found] + [""]
    md += [f"![{figures[r][1]}]({r})\n\n{figures[r][2]}\n" for r in ranks]
    ppc = figures.get("ppc.png")
    md += ["## Posterior-predictive check", ""] + (
        [ppc[2], "", "![posterior-predictive check](ppc.png)"] if ppc else [NO_PPC]) + ["",
           "## Weights", "", note, "", table.to_markdown(floatfmt=".4g"), "", "## Held-out predictive", ""] + (
        [NO_TEST] if predictive is None else [PREDICTIVE_NOTE, "", predictive.to_markdown(floatfmt=".4g")]) + [
        "", "## Forest plot", "", "![forest plot](forest.png)", ""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")
    esc = html.escape
    body = ["<h1>sparsebayes comparison</h1>", "<ul>"]
    body += [f"<li><b>{esc(k)}</b>: {esc(str(v))}</li>" for k, v in _header(cmp)]
    body += ["</ul>", verdict_html(verdict, list(cmp.samples)), selection_page,
             "<h2>Diagnostics</h2>", diag.to_html(float_format=lambda v: f"{v:.4g}"), "<h3>Warnings</h3>", "<ul>"]
    body += [f"<li>{esc(w)}</li>" for w in found] + ["</ul>"]
    body += [_figure_html(*figures[r]) for r in ranks]
    body += ["<h2>Posterior-predictive check</h2>", _figure_html(*ppc) if ppc else f"<p>{esc(NO_PPC)}</p>",
             "<h2>Weights</h2>", f"<p>{esc(note)}</p>", table.to_html(float_format=lambda v: f"{v:.4g}"),
             "<h2>Held-out predictive</h2>"]
    body += ([f"<p>{esc(NO_TEST)}</p>"] if predictive is None else
             [f"<p>{esc(PREDICTIVE_NOTE)}</p>", predictive.to_html(float_format=lambda v: f"{v:.4g}")])
    body += ["<h2>Forest plot</h2>", _figure_html(figures["forest.png"][0], "forest plot")]
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>sparsebayes comparison</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    (out / "report.html").write_text(page, encoding="utf-8")
