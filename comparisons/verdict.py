"""Which inputs matter, and how sure: a per-input verdict of a :class:`~sparsebayes.comparisons.compare_any.Comparison`.

The question a comparison is opened for is whether each input matters, and whether the sparse point
estimate and the posterior of its own model say the same. Both answers need a *region of practical
equivalence* (ROPE; Kruschke 2018, "Rejecting or accepting parameter values in Bayesian estimation",
AMPPS 1(2)): the interval ``|β_j| < r_j`` of effects too small to matter. A weight's size depends on
its input's units, so ``r_j`` is set on the standardized scale, where "small" means the same for
every input:

* the standardized effect of weight ``j`` is ``z_j = β_j · sd(x_j) / s_y``, with ``x_j`` the design
  column ``β_j`` multiplies and ``s_y = sd(y)`` for regression, ``s_y = 1`` (one unit of the linear
  predictor: probit or log-odds for a classifier, log-rate for counts) otherwise;
* by default ``|z_j| < ROPE_FRACTION = 0.1``, Kruschke's convention for a negligible standardized
  effect (half of Cohen's "small" d = 0.2), i.e. ``r_j = 0.1 · s_y / sd(x_j)`` in ``β_j``'s units.

The draws are on the basis the sampler ran on (``Comparison.design``: the estimator's feature map,
whose linear terms are centred and, under a scale-free prior, divided by their sd; the Bernoulli
RVM's weights are its raw-term weights); ``sd(x_j)`` is taken from that basis, so ``z_j`` is the same
whether a fit saw the raw or the standardized inputs: rescaling an input by ``a`` divides its weight
by ``a`` and multiplies ``sd(x_j)`` by ``a``. Effects in the data's units are the weights of the raw
terms (the feature map's ``raw_weights``, :func:`.fitted_model.to_raw_terms`).

Per input and sampler :func:`verdict_table` gives the 90 % interval, the mass ``P(|z_j| < f_j)``
inside the ROPE, the sign probability ``max(P(β_j > 0), P(β_j < 0))`` and the verdict word
(:data:`RULE`); beside it the point estimate (kept or zero) and whether the two agree. A sampler
whose diagnostics fail the sampler-health gate (:mod:`sparsebayes.comparisons.sampler_health`: a
divergence, R-hat > 1.01, bulk or tail ESS < 400, E-BFMI < 0.3) is marked unusable: its
evidence is shown, its agreement is ``"unusable"``. Weights that are not inputs are left out and
named in ``attrs["left_out"]``: a constant design column (the bias: an intercept, not an input) and
weights zero by construction in every draw and in the point estimate (SMLR's reference class, a
type-II column left out of the model as constant).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fitted_model import draws_on_raw_terms, on_link_scale, per_basis_matrix, to_raw_terms
from .sampler_health import GATE, failed_checks

#: Default half-width of the ROPE on the standardized scale (Kruschke 2018: 0.1 sd for a negligible effect).
ROPE_FRACTION = 0.1
#: An input "matters" when at most this posterior mass is inside its ROPE and its sign is this sure
#: (``1 − MASS``); it is "negligible" when at least ``1 − MASS`` is inside.
MASS = 0.05
# A sampler's verdict is used only when its part passes the sampler-health gate (one rule, one set of
# thresholds: sparsebayes.comparisons.sampler_health).
RULE = (f"matters: P(inside ROPE) ≤ {MASS:g} and sign probability max(P(β>0), P(β<0)) ≥ {1 - MASS:g}; "
        f"negligible: P(inside ROPE) ≥ {1 - MASS:g}; uncertain: otherwise. The point estimate agrees with the "
        "posterior when it keeps an input that matters or zeroes one that is negligible, disagrees when it keeps a "
        "negligible one or zeroes one that matters; for an uncertain input there is nothing to agree with (—). "
        f"A sampler that fails its health gate ({GATE}) is marked unusable.")


@dataclass(frozen=True)
class Scales:
    """The scales of a comparison's weights (one entry per weight, in ``Comparison.names`` order).

    basis_sd : sd of the design column each weight multiplies, on the draws' basis (0: constant);
    data_sd : the same column's sd in the data's units (the raw term's);
    outcome : ``s_y``: sd(y) for regression, 1 (one unit of the linear predictor) for a classifier or counts;
    outcome_label : words for ``s_y``; constant : a constant column (the bias);
    to_data : draws ``(m, p)`` on the draws' basis -> the raw terms' weights (the data's units).
    """

    basis_sd: np.ndarray
    data_sd: np.ndarray
    outcome: float
    outcome_label: str
    constant: np.ndarray
    to_data: object


def _basis_count(cmp):
    return len(cmp.idata.posterior["beta"].coords[cmp.weight_dims[0]])


def _per_basis_to_data(cmp):
    """The map from weights ``(..., n_basis)`` on the draws' basis to the raw terms' weights."""
    if draws_on_raw_terms(cmp.estimator):  # the draws are raw weights already
        return to_raw_terms(None)
    return to_raw_terms(getattr(cmp.estimator, "feature_map_", None))


def scales(cmp):
    """The :class:`Scales` of ``cmp``'s weights, from its design and observed targets."""
    nb = _basis_count(cmp)
    per_class = len(cmp.names) // nb
    H = np.asarray(cmp.design, dtype=np.float64)
    if H.shape[1] < nb:  # a type-II twin: the columns left out as constant have weight 0 in every draw
        first = next(iter(cmp.samples))
        beta = cmp._beta(first).reshape(-1, nb, per_class)
        keep = np.any(beta != 0, axis=(0, 2))
        if keep.sum() != H.shape[1]:
            raise ValueError(f"the design has {H.shape[1]} columns for {nb} weights and the draws do not say which "
                             "weights are left out")
        full = np.zeros((H.shape[0], nb))
        full[:, keep] = H
        H = full
    to_basis_data = _per_basis_to_data(cmp)
    if draws_on_raw_terms(cmp.estimator):
        # its draws are the raw terms' weights A β of the model's β on H: their design is H A⁻¹
        A = per_basis_matrix(to_raw_terms(cmp.estimator.feature_map_), nb)
        H = np.linalg.solve(A.T, H.T).T
    A = per_basis_matrix(to_basis_data, nb)
    D = np.linalg.solve(A.T, H.T).T  # the design of the raw terms: H β = D (A β)
    basis_sd, data_sd = H.std(axis=0), D.std(axis=0)
    tiny = 1e-12 * np.maximum(np.abs(H).max(axis=0), 1e-300)
    constant = basis_sd <= tiny
    basis_sd, data_sd = np.where(constant, 0.0, basis_sd), np.where(constant, 0.0, data_sd)
    if on_link_scale(cmp.estimator):
        outcome, label = 1.0, "1 unit of the linear predictor (probit, logit or log-rate)"
    else:
        y = np.asarray(cmp.idata.observed_data["y"].values, dtype=np.float64).reshape(-1)
        outcome, label = float(np.std(y)), "sd(y)"
        if not outcome > 0:
            raise ValueError("y is constant: it has no spread to set a region of practical equivalence on")

    def to_data(draws):
        w = np.asarray(draws, dtype=np.float64).reshape(-1, nb, per_class)
        return np.moveaxis(to_basis_data(np.moveaxis(w, 1, 2)), 2, 1).reshape(len(w), -1)
    rep = (lambda v: np.repeat(v, per_class))
    return Scales(rep(basis_sd), rep(data_sd), outcome, label, rep(constant), to_data)


def rope_fractions(cmp, rope=None, sc=None):
    """``f_j``, the ROPE's half-width on the standardized scale per weight.

    ``rope``: ``None`` (:data:`ROPE_FRACTION` for every weight); a number (that fraction for every
    weight); a dict ``{input name: half-width}`` or an array (one per weight, ``Comparison.names``
    order) of half-widths in the data's units (per unit of the raw input; a weight the dict does not
    name keeps the default fraction). ``ValueError`` for a negative, non-finite or unknown entry."""
    sc = scales(cmp) if sc is None else sc
    p = len(cmp.names)
    f = np.full(p, ROPE_FRACTION)
    if rope is None:
        return f
    if np.ndim(rope) == 0 and not isinstance(rope, dict):
        value = float(rope)
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"rope must be a finite fraction >= 0, got {rope!r}")
        return np.full(p, value)
    if isinstance(rope, dict):
        unknown = [k for k in rope if str(k) not in cmp.names]
        if unknown:
            raise ValueError(f"rope names unknown inputs {unknown}; the inputs are {cmp.names}")
        width, given = np.full(p, np.nan), np.zeros(p, dtype=bool)
        for k, v in rope.items():
            i = cmp.names.index(str(k))
            width[i], given[i] = float(v), True
    else:
        width = np.asarray(rope, dtype=np.float64).reshape(-1)
        if width.size != p:
            raise ValueError(f"rope must hold {p} half-widths, one per weight ({cmp.names}); got {width.size}")
        given = np.ones(p, dtype=bool)
    if not np.all(np.isfinite(width[given]) & (width[given] >= 0)):
        raise ValueError(f"rope half-widths must be finite numbers >= 0, got {rope!r}")
    scale = np.where(sc.constant, 1.0, sc.data_sd)
    f[given] = width[given] * scale[given] / sc.outcome
    return f


def standardize(draws, sc):
    """Draws ``(m, p)`` on the draws' basis as standardized effects ``β_j · sd(x_j) / s_y`` (a constant
    column: ``β_j / s_y``, the intercept in units of ``s_y``)."""
    return np.asarray(draws) * np.where(sc.constant, 1.0, sc.basis_sd) / sc.outcome


def rope_half_widths(cmp, rope=None):
    """``r_j``, the ROPE's half-width per weight in the units of the draws (``Comparison.summary``'s
    ``P(|β_j| < r_j)``): ``f_j · s_y / sd(x_j)`` (:func:`rope_fractions`)."""
    sc = scales(cmp)
    return rope_fractions(cmp, rope, sc) * sc.outcome / np.where(sc.constant, 1.0, sc.basis_sd)


def usability(cmp):
    """``{sampler: list of failed checks}`` (empty: usable): the sampler-health gate
    (:func:`~sparsebayes.comparisons.sampler_health.failed_checks`) of each part's :meth:`Comparison.diagnostics`."""
    return {s: failed_checks(d) for s, d in cmp.diagnostics().items()}


def word(p_rope, p_sign):
    """The verdict word of :data:`RULE` per input."""
    p_rope, p_sign = np.asarray(p_rope), np.asarray(p_sign)
    return np.where((p_rope <= MASS) & (p_sign >= 1 - MASS), "matters",
                    np.where(p_rope >= 1 - MASS, "negligible", "uncertain"))


def agreement_word(kept, verdict, usable=True):
    """``"agree"`` / ``"disagree"`` / ``"—"`` (uncertain) per input; ``"unusable"`` for a failed sampler."""
    kept, verdict = np.asarray(kept, dtype=bool), np.asarray(verdict)
    out = np.where(verdict == "uncertain", "—",
                   np.where(kept == (verdict == "matters"), "agree", "disagree"))
    return out if usable else np.full(out.shape, "unusable", dtype=object)


def verdict_table(cmp, rope=None):
    """``pandas.DataFrame``, one row per input (index ``input``; module docstring for what is left out).

    Columns: ``point_kept``, ``point`` (data's units), ``point_std`` (standardized), ``rope`` (the
    half-width in the data's units), ``rope_std`` (on the standardized scale); per sampler ``s``:
    ``s_median``, ``s_q05``, ``s_q95`` (data's units), ``s_median_std``, ``s_interval_excludes_zero``
    (90 %), ``s_p_rope`` (``P(|z_j| < f_j)``), ``s_p_sign``, ``s_verdict`` (:func:`word`),
    ``s_agreement`` (:func:`agreement_word`), ``s_usable``. ``attrs``: ``rule``, ``rope_fraction``
    (the default fraction, or ``"per input"``), ``outcome_scale`` and its label, ``left_out``
    ({name: why}), ``unusable`` ({sampler: failed checks}) and ``agreement`` (:func:`agreement_measures`).
    """
    import pandas as pd

    from .compare_any import QUANTILES
    sc = scales(cmp)
    f = rope_fractions(cmp, rope, sc)
    point = np.asarray(cmp.point, dtype=np.float64)
    draws = {s: cmp._beta(s) for s in cmp.samples}
    fixed_zero = (point == 0) & np.all([np.all(d == 0, axis=0) for d in draws.values()], axis=0)
    left_out = {n: "constant design column (an intercept or a constant input)"
                for n, c in zip(cmp.names, sc.constant) if c}
    left_out.update({n: "zero by construction in every draw and in the point estimate"
                     for n, z, c in zip(cmp.names, fixed_zero, sc.constant) if z and not c})
    rows = np.array([n not in left_out for n in cmp.names])
    data_width = np.where(sc.data_sd > 0, f * sc.outcome / np.where(sc.data_sd > 0, sc.data_sd, 1.0), np.inf)
    table = {"point_kept": point != 0, "point": sc.to_data(point[None])[0],
             "point_std": standardize(point[None], sc)[0], "rope": data_width, "rope_std": f}
    unusable = usability(cmp)
    for s, beta in draws.items():
        z, raw = standardize(beta, sc), sc.to_data(beta)
        lo, hi = np.quantile(raw, QUANTILES, axis=0)
        p_rope = np.mean(np.abs(z) < f, axis=0)
        p_sign = np.maximum(np.mean(beta > 0, axis=0), np.mean(beta < 0, axis=0))
        verdict = word(p_rope, p_sign)
        table.update({f"{s}_median": np.median(raw, axis=0), f"{s}_q05": lo, f"{s}_q95": hi,
                      f"{s}_median_std": np.median(z, axis=0), f"{s}_interval_excludes_zero": (lo > 0) | (hi < 0),
                      f"{s}_p_rope": p_rope, f"{s}_p_sign": p_sign, f"{s}_verdict": verdict,
                      f"{s}_agreement": agreement_word(point != 0, verdict, not unusable[s]),
                      f"{s}_usable": np.full(len(point), not unusable[s])})
    df = pd.DataFrame(table, index=pd.Index(cmp.names, name="input"))[rows]
    custom = rope is not None and not (np.ndim(rope) == 0 and not isinstance(rope, dict))
    df.attrs.update(rule=RULE, rope_fraction="per input" if custom else float(f[0]) if len(f) else ROPE_FRACTION,
                    outcome_scale=sc.outcome, outcome_label=sc.outcome_label, left_out=left_out, unusable=unusable)
    df.attrs["agreement"] = agreement_measures(df, list(cmp.samples))
    return df


def agreement_measures(table, samplers):
    """Per sampler, the point estimate against the posterior over the inputs of a verdict ``table``:

    * ``zero_set_agreement``: among the inputs the posterior decides (matters or negligible), the
      fraction where the point estimate keeps exactly those that matter (``n_decided`` of ``n_inputs``);
    * ``sign_agreement``: among the inputs the point estimate keeps, the fraction whose sign is the
      one the posterior favours (``P(β > 0)`` against ``P(β < 0)``, read off the median's sign);
    * ``usable``: the sampler passed its diagnostics.

    Returns ``{sampler: dict}``; NaN where there is nothing to count."""
    out = {}
    for s in samplers:
        verdict = table[f"{s}_verdict"].to_numpy()
        decided = verdict != "uncertain"
        kept = table["point_kept"].to_numpy(dtype=bool)
        match = kept[decided] == (verdict[decided] == "matters")
        signs = np.sign(table["point_std"].to_numpy())[kept] == np.sign(table[f"{s}_median_std"].to_numpy())[kept]
        out[s] = dict(zero_set_agreement=float(match.mean()) if match.size else float("nan"),
                      n_decided=int(decided.sum()), n_inputs=int(len(verdict)),
                      sign_agreement=float(signs.mean()) if signs.size else float("nan"), n_kept=int(kept.sum()),
                      usable=bool(table[f"{s}_usable"].all()) if len(table) else True)
    return out


def _fmt(v):
    return f"{v:.3g}"


def display_table(table, samplers):
    """The verdict as a narrow table of strings for a report: per sampler one column of effect (data's
    units: median [5 %, 95 %]), standardized median, ``P(ROPE)``, ``P(sign)``, the verdict and the
    agreement with the point estimate."""
    import pandas as pd
    cols = {"point estimate": [("kept " if k else "zero ") + f"({_fmt(v)})" for k, v in
                               zip(table["point_kept"], table["point"])],
            "ROPE ±": [_fmt(v) for v in table["rope"]]}
    for s in samplers:
        tag = "" if len(samplers) == 1 else f"{s}: "
        cols[f"{tag}effect [90 %]"] = [f"{_fmt(m)} [{_fmt(lo)}, {_fmt(hi)}]" for m, lo, hi in
                                      zip(table[f"{s}_median"], table[f"{s}_q05"], table[f"{s}_q95"])]
        cols[f"{tag}std."] = [f"{v:.2f}" for v in table[f"{s}_median_std"]]
        cols[f"{tag}P(ROPE)"] = [f"{v:.2f}" for v in table[f"{s}_p_rope"]]
        cols[f"{tag}P(sign)"] = [f"{v:.2f}" for v in table[f"{s}_p_sign"]]
        cols[f"{tag}verdict"] = [v if u else f"{v} (unusable)" for v, u in
                                 zip(table[f"{s}_verdict"], table[f"{s}_usable"])]
        cols[f"{tag}vs point"] = list(table[f"{s}_agreement"])
    return pd.DataFrame(cols, index=table.index)


def rope_note(table):
    """One paragraph stating the ROPE, the verdict rule and what is left out."""
    frac = table.attrs["rope_fraction"]
    width = (f"|β_j| · sd(x_j) / s_y < {frac:g}" if not isinstance(frac, str) else
             "the half-widths given per input (in the data's units)")
    left = "; ".join(f"{k}: {v}" for k, v in table.attrs["left_out"].items())
    return (f"Region of practical equivalence (ROPE) per input: {width}, with s_y = {table.attrs['outcome_label']} "
            f"= {table.attrs['outcome_scale']:.4g} and sd(x_j) the sd of the input's design column, so that "
            "the same standardized effect counts as negligible for every input whatever its units (Kruschke 2018). "
            "Effects and the ROPE half-width (`ROPE ±`) are in the data's units (per unit of the input); `std.` is the "
            f"standardized effect β_j·sd(x_j)/s_y. Verdict: {table.attrs['rule']}"
            + (f" Not inputs, left out: {left}." if left else ""))


def agreement_lines(table):
    """One line per sampler: zero-set and sign agreement (:func:`agreement_measures`)."""
    out = []
    for s, a in table.attrs["agreement"].items():
        out.append(f"{s}: zero-set agreement {a['zero_set_agreement']:.2f} over the {a['n_decided']} of "
                   f"{a['n_inputs']} inputs the posterior decides; sign agreement {a['sign_agreement']:.2f} over the "
                   f"{a['n_kept']} inputs the point estimate keeps"
                   + ("" if a["usable"] else f" (unusable: {', '.join(table.attrs['unusable'][s])})"))
    return out


def verdict_markdown(table, samplers):
    """The verdict section of ``report.md``: the rule, the table and the agreement lines."""
    return "\n".join(["## Verdict: which inputs matter", "", rope_note(table), "",
                      display_table(table, samplers).to_markdown(disable_numparse=True), "", "Agreement of the point estimate with each "
                      "posterior:", ""] + [f"- {line}" for line in agreement_lines(table)] + [""])


def verdict_html(table, samplers):
    """The verdict section of ``report.html`` (escaped)."""
    import html
    esc = html.escape
    return "\n".join(["<h2>Verdict: which inputs matter</h2>", f"<p>{esc(rope_note(table))}</p>",
                      display_table(table, samplers).to_html(), "<p>Agreement of the point estimate with each "
                      "posterior:</p>", "<ul>"] + [f"<li>{esc(line)}</li>" for line in agreement_lines(table)]
                     + ["</ul>"])
