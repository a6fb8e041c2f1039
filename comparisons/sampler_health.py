"""The sampler-health gate of a comparison: one rule, one set of thresholds, for every sampler's part.

A part of a :class:`~sparsebayes.comparisons.compare_any.Comparison` (one sampler's draws) is
*usable* when it passes every check below; otherwise its numbers are still shown, labelled, but
the verdict does not lean on them. The thresholds are the current recommendations:

* no divergent transition (:data:`DIVERGENCES_MAX` = 0): a divergence means the integrator left the
  typical set, and the draws near it are biased (Betancourt 2017, "A conceptual introduction to
  Hamiltonian Monte Carlo", Sec. 6.2);
* rank-normalized split R-hat ≤ :data:`RHAT_MAX` = 1.01 and bulk and tail ESS ≥ :data:`ESS_MIN` = 400
  over the sampled variables (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, "Rank-normalization,
  folding, and localization: an improved R-hat", Bayesian Analysis 16(2), Sec. 4: R-hat below 1.01 and
  an ESS of at least 100 per chain for four chains);
* E-BFMI ≥ :data:`BFMI_MIN` = 0.3 (Betancourt 2016, "Diagnosing suboptimal cotangent disintegrations in
  Hamiltonian Monte Carlo"): lower means the momentum resampling explores the energy poorly (heavy
  tails, a funnel). Only samplers that record energies (NUTS) have it; a Gibbs sampler's is NaN and
  passes.

R-hat and ESS are read over the variables a comparison reports: the weights ``beta`` and the model's
scalar parameters (the noise variance, a shared hyperparameter: :func:`gated_variables`). A
hierarchy's per-weight latent scales (the horseshoe's ``λ_i`` and its non-centred ``z_i``, the
Laplace mixture's ``τ_i``) are left out: they are a sampler's parametrization of the same model, not
its answer, and differ between samplers (a Gibbs sampler's ``z_i`` is computed from its draws). A
null weight's local scale has a posterior as heavy-tailed as its half-Cauchy prior and mixes slowly
in any sampler while the weight itself is estimated well. Divergences and E-BFMI are properties of a
whole NUTS run and are always counted, so a geometry that troubles the sampler in those scales still
fails the part.

A statistic that cannot be computed (R-hat of one chain, an ESS of a variable that never moves) is
NaN and passes: the gate fails a part on evidence, never on a missing number.
"""
from __future__ import annotations

import warnings

import numpy as np

#: Largest rank-normalized split R-hat of a usable part (Vehtari et al. 2021).
RHAT_MAX = 1.01
#: Smallest bulk and tail effective sample size of a usable part (Vehtari et al. 2021).
ESS_MIN = 400
#: Smallest E-BFMI of a usable part (Betancourt 2016).
BFMI_MIN = 0.3
#: Most divergent transitions (after warm-up) of a usable part.
DIVERGENCES_MAX = 0
#: The gate in words, for reports and messages.
GATE = (f"no divergent transition, R-hat ≤ {RHAT_MAX}, bulk and tail ESS ≥ {ESS_MIN}, E-BFMI ≥ {BFMI_MIN} "
        "(where the sampler records energies)")


def health(idata, var_names=None):
    """The health statistics of one sampler's ``InferenceData``, over the variables ``var_names`` of its
    ``posterior`` (``None``: every one): ``r_hat_max`` (NaN with one chain), ``ess_bulk_min``, ``ess_tail_min``, ``divergences`` (0 without a
    ``diverging`` statistic), ``bfmi_min`` (NaN without ``energy``), ``ess_bulk_per_second`` (the
    smallest bulk ESS over the sampler's own seconds, ``sampling_seconds − compile_seconds`` in the
    posterior's attributes; NaN where they are not recorded)."""
    from sparsebayes.inference.posterior.arviz_compat import bfmi as fraction_of_missing_information
    from sparsebayes.inference.posterior.arviz_compat import ess, rhat
    post = idata.posterior

    def extreme(ds, fn):
        vals = np.concatenate([np.ravel(v.values) for v in ds.data_vars.values()] or [np.array([np.nan])])
        vals = vals[np.isfinite(vals)]
        return float(fn(vals)) if vals.size else float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r_hat = extreme(rhat(idata, var_names=var_names), np.max) if post.sizes["chain"] > 1 else float("nan")
        bulk, tail = (extreme(ess(idata, var_names=var_names, method=m), np.min) for m in ("bulk", "tail"))
    stats = getattr(idata, "sample_stats", None)
    div = int(stats["diverging"].values.sum()) if stats is not None and "diverging" in stats else 0
    bfmi = (float(np.min(fraction_of_missing_information(idata))) if stats is not None and "energy" in stats
            else float("nan"))
    seconds = post.attrs.get("sampling_seconds", np.nan) - post.attrs.get("compile_seconds", 0.0)
    return dict(r_hat_max=r_hat, ess_bulk_min=bulk, ess_tail_min=tail, divergences=div, bfmi_min=bfmi,
                ess_bulk_per_second=bulk / seconds if seconds > 0 else float("nan"))


def gated_variables(posterior, weight_dims=("basis",)):
    """The names of ``posterior``'s variables the gate reads: ``beta`` and every variable without a
    weight dim (``weight_dims``) (module docstring)."""
    return [v for v in posterior.data_vars if v == "beta" or not set(posterior[v].dims) & set(weight_dims)]


def _checks(stats):
    """``(short, advice)`` per failed check of ``stats`` (a :func:`health` dict); NaN passes."""
    out = []
    if stats["divergences"] > DIVERGENCES_MAX:
        out.append((f"{stats['divergences']} divergent transitions",
                    "the draws may be biased; raise target_accept_prob, or use the hierarchy's Gibbs sampler"))
    if stats["r_hat_max"] > RHAT_MAX:
        out.append((f"max R-hat {stats['r_hat_max']:.3f} > {RHAT_MAX}", "the chains have not mixed; sample longer"))
    for kind in ("bulk", "tail"):
        if stats[f"ess_{kind}_min"] < ESS_MIN:
            out.append((f"min {kind} ESS {stats[f'ess_{kind}_min']:.0f} < {ESS_MIN}",
                        "too few effective draws for stable intervals; raise num_samples or num_chains"))
    if stats["bfmi_min"] < BFMI_MIN:
        out.append((f"E-BFMI {stats['bfmi_min']:.2f} < {BFMI_MIN}",
                    "the energy is poorly explored (heavy tails or a funnel)"))
    return out


def failed_checks(stats):
    """The gate: one short line per failed check of ``stats`` (a :func:`health` dict); empty when the
    part is usable. NaN statistics pass (module docstring)."""
    return [short for short, _ in _checks(stats)]


def warning_lines(sampler, stats):
    """The failed checks of :func:`failed_checks` as warnings for a reader: ``"<sampler>: <check>: <what
    it means and what to do>"``."""
    return [f"{sampler}: {short}: {advice}" for short, advice in _checks(stats)]


def usable(idata, weight_dims=("basis",)):
    """Whether one sampler's ``InferenceData`` passes the gate (:func:`failed_checks` of :func:`health`
    over :func:`gated_variables`)."""
    return not failed_checks(health(idata, gated_variables(idata.posterior, weight_dims)))
