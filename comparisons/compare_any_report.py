"""The files :meth:`sparsebayes.comparisons.compare_any.Comparison.save` writes: Markdown and HTML reports."""
from __future__ import annotations

import html
from pathlib import Path

#: The files :meth:`~sparsebayes.comparisons.compare_any.Comparison.save` writes into its directory.
REPORT_FILES = ("report.md", "report.html", "forest.png", "draws.nc")


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
    est, idata = cmp.estimator, cmp.idata
    point = getattr(idata, "point_estimate")
    return [("estimator", repr(est)), ("model", idata.attrs.get("model", "")),
            ("point estimate", point.attrs.get("inference", "")),
            ("samplers", ", ".join(cmp.samples)),
            ("draws per sampler", f"{idata.posterior.sizes['chain']} chains × {idata.posterior.sizes['draw']}")]


PREDICTIVE_NOTE = ("Scores on held-out rows, used neither in the fit nor by the samplers. log_score: the mean "
                   "log predictive density (higher is better): for the point estimate the plug-in density, the "
                   "model's likelihood at the point estimate (with the fitted noise variance for regression); for "
                   "a sampler the log of the mean over its draws of the likelihood. rmse: of the point "
                   "prediction and of the posterior predictive mean; error_rate: of the predicted class and of "
                   "the class with the largest posterior-mean probability.")
NO_TEST = ("No held-out data were given: pass X_test and y_test (or test_size) to sparsebayes.compare for "
           "this comparison.")


def write_report(out, cmp, table, diagnostics, png_base64, predictive=None):
    """``report.md`` and ``report.html`` in ``out`` from the summary ``table``, the ``diagnostics``, the
    held-out ``predictive`` table (:meth:`~sparsebayes.comparisons.compare_any.Comparison.predictive`;
    ``None``: the section says none was given) and the forest plot (base64 PNG, embedded in the HTML so
    that it is one self-contained file)."""
    import pandas as pd

    from .selection import report_sections
    from .verdict import verdict_html, verdict_markdown
    verdict = cmp.verdict()
    selection_md, selection_page = report_sections(cmp)
    diag = pd.DataFrame({s: {k: v for k, v in d.items() if k != "warnings"} for s, d in diagnostics.items()}).T
    diag.index.name = "sampler"
    found = [w for d in diagnostics.values() for w in d["warnings"]] or ["none"]
    note = ("P(|β| < c) with c (column near_zero) each weight's region of practical equivalence (the verdict's "
            "rule, in the draws' units); intervals are 5 %–95 % posterior quantiles; weights are on the model's "
            "basis (the estimator's design columns: `feature_map_`'s where it has one, for linear features terms of "
            "the standardized inputs; SMLR's `basis[class]`, the reference class's weights zero by definition). "
            "The model line names any surrogate, or hyperparameter held at its fitted value.")
    md = ["# sparsebayes comparison", ""] + [f"- **{k}**: {v}" for k, v in _header(cmp)] + [
        "", verdict_markdown(verdict, list(cmp.samples)), selection_md, "## Weights", "", note, "", table.to_markdown(floatfmt=".4g"), "", "## Diagnostics", "", diag.to_markdown(floatfmt=".4g"), "",
        "### Warnings", ""] + [f"- {w}" for w in found] + ["", "## Held-out predictive", ""] + (
        [NO_TEST] if predictive is None else [PREDICTIVE_NOTE, "", predictive.to_markdown(floatfmt=".4g")]) + [
        "", "## Forest plot", "", "![forest plot](forest.png)", ""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")
    esc = html.escape
    body = ["<h1>sparsebayes comparison</h1>", "<ul>"]
    body += [f"<li><b>{esc(k)}</b>: {esc(str(v))}</li>" for k, v in _header(cmp)]
    body += ["</ul>", verdict_html(verdict, list(cmp.samples)), selection_page, "<h2>Weights</h2>", f"<p>{esc(note)}</p>", table.to_html(float_format=lambda v: f"{v:.4g}"),
             "<h2>Diagnostics</h2>", diag.to_html(float_format=lambda v: f"{v:.4g}"), "<h3>Warnings</h3>", "<ul>"]
    body += [f"<li>{esc(w)}</li>" for w in found]
    body += ["</ul>", "<h2>Held-out predictive</h2>"]
    body += ([f"<p>{esc(NO_TEST)}</p>"] if predictive is None else
             [f"<p>{esc(PREDICTIVE_NOTE)}</p>", predictive.to_html(float_format=lambda v: f"{v:.4g}")])
    body += ["<h2>Forest plot</h2>", f'<img alt="forest plot" src="data:image/png;base64,{png_base64}">']
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sparsebayes comparison</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    (out / "report.html").write_text(page, encoding="utf-8")
