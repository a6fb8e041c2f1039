"""The files :meth:`sparsebayes.comparisons.compare_any.Comparison.save` writes: Markdown and HTML reports."""
from __future__ import annotations

import html


def _header(cmp):
    est, idata = cmp.estimator, cmp.idata
    point = getattr(idata, "point_estimate")
    return [("estimator", repr(est)), ("model", idata.attrs.get("model", "")),
            ("point estimate", point.attrs.get("inference", "")),
            ("samplers", ", ".join(cmp.samples)),
            ("draws per sampler", f"{idata.posterior.sizes['chain']} chains × {idata.posterior.sizes['draw']}")]


def write_report(out, cmp, table, diagnostics, png_base64):
    """``report.md`` and ``report.html`` in ``out`` from the summary ``table``, the ``diagnostics`` and
    the forest plot (base64 PNG, embedded in the HTML so that it is one self-contained file)."""
    import pandas as pd
    c = table.attrs["near_zero"]
    diag = pd.DataFrame({s: {k: v for k, v in d.items() if k != "warnings"} for s, d in diagnostics.items()}).T
    diag.index.name = "sampler"
    found = [w for d in diagnostics.values() for w in d["warnings"]] or ["none"]
    note = (f"P(|β| < c) with c = {c:.4g}; intervals are 5 %–95 % posterior quantiles; weights are on the model's "
            "basis (the estimator's design columns: `feature_map_`'s where it has one, for linear features terms of "
            "the standardized inputs; SMLR's `basis[class]`, the reference class's weights zero by definition). "
            "The model line names any surrogate, or hyperparameter held at its fitted value.")
    md = ["# sparsebayes comparison", ""] + [f"- **{k}**: {v}" for k, v in _header(cmp)] + [
        "", "## Weights", "", note, "", table.to_markdown(floatfmt=".4g"), "", "## Diagnostics", "", diag.to_markdown(floatfmt=".4g"), "",
        "### Warnings", ""] + [f"- {w}" for w in found] + ["", "## Forest plot", "", "![forest plot](forest.png)", ""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")
    esc = html.escape
    body = ["<h1>sparsebayes comparison</h1>", "<ul>"]
    body += [f"<li><b>{esc(k)}</b>: {esc(str(v))}</li>" for k, v in _header(cmp)]
    body += ["</ul>", "<h2>Weights</h2>", f"<p>{esc(note)}</p>", table.to_html(float_format=lambda v: f"{v:.4g}"),
             "<h2>Diagnostics</h2>", diag.to_html(float_format=lambda v: f"{v:.4g}"), "<h3>Warnings</h3>", "<ul>"]
    body += [f"<li>{esc(w)}</li>" for w in found]
    body += ["</ul>", "<h2>Forest plot</h2>", f'<img alt="forest plot" src="data:image/png;base64,{png_base64}">']
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sparsebayes comparison</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    (out / "report.html").write_text(page, encoding="utf-8")
