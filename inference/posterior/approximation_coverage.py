"""Measured coverage of the suite's approximate posteriors, against an exact sampler's.

The point estimates come with approximate posteriors: EM's conditional Gaussian at the mode
(``AdaptiveSparseRegressor.to_inference_data(draws=…)``: the hierarchy's Gaussian conditional at the
final E-step, 000 Sec. 3, zeros off the active set) and the type-II ``N(μ, Σ)`` at the fitted
hyperparameters (``BLSRegressor.to_inference_data(draws=…)``, 004 Sec. 2.4). Neither is the posterior
of the model they fit, and SBC's rank test would only say so; their *coverage* says by how much: over
replications from the model's own prior (:func:`sparsebayes.inference.posterior.coverage.interval_coverage`), the
share of weights whose central 50 % and 90 % intervals cover the true weight, which an exact posterior
meets on average (the Gibbs row, the same problem, measures that the set-up is honest).

The problem (:func:`cases`): ``n = 20`` rows, ``p = 10`` standard-normal columns standardized to mean 0
and sd 1, one design for every replication, no intercept; each row's estimator is given the prior the
data were drawn from. :data:`MEASURED` holds the numbers of :func:`measure` at its defaults, the table
of ``docs/approximation_coverage.md``; ``python -m sparsebayes.inference.posterior.approximation_coverage``
prints it again.
"""
from __future__ import annotations

import warnings

import numpy as np

from sparsebayes.inference.posterior import coverage, sbc_pairs

#: ``measure()`` at its defaults (200 replications, seed 0): case -> (coverage of the 50 % interval,
#: of the 90 % interval), pooled over the 10 weights of every replication; the table of
#: ``docs/approximation_coverage.md``, printed by :func:`main`.
MEASURED = {
    "em-laplace": (0.362, 0.697),
    "em-horseshoe": (0.184, 0.392),
    "em-laplace-gamma": (0.367, 0.741),
    "em-horseshoe-tau": (0.206, 0.417),
    "em-probit-laplace": (0.239, 0.505),
    "type2-bls": (0.246, 0.487),
    "gibbs-horseshoe": (0.518, 0.906),
}

N_ROWS, N_WEIGHTS = 20, 10

#: ``(attrs["inference"], attrs["prior"])`` of an approximation's draws (``to_inference_data(draws=…)``)
#: -> the cases of :data:`MEASURED` that measured it.
CASES_BY_LABEL = {
    ("em-gaussian-conditional", "laplace"): ("em-laplace", "em-laplace-gamma"),
    ("em-gaussian-conditional", "horseshoe"): ("em-horseshoe", "em-horseshoe-tau"),
    ("em-probit-laplace-laplace", "laplace"): ("em-probit-laplace",),
    ("bls-typeii-gaussian-posterior", None): ("type2-bls",),
}


def measured_coverage(inference, prior=None):
    """The measured coverage of the approximation whose draws carry ``attrs["inference"] ==
    inference`` (and ``attrs["prior"] == prior``, where the label has one): ``{case: (coverage of the
    50 % interval, of the 90 % interval)}`` from :data:`MEASURED`, empty for an approximation not
    measured. The page ``docs/approximation_coverage.md`` says on which problem."""
    names = CASES_BY_LABEL.get((inference, prior), CASES_BY_LABEL.get((inference, None), ()))
    return {name: MEASURED[name] for name in names if name in MEASURED}


def design(n=N_ROWS, p=N_WEIGHTS, seed=0):
    """The fixed design: standard-normal columns standardized to mean 0 and sd 1 (so an estimator's
    own standardization changes nothing)."""
    X = np.random.default_rng(seed).normal(size=(n, p))
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _estimator_draws(make, num_draws):
    """``approximate(data, seed)``: fit ``make()`` on ``(X, y)`` and draw ``num_draws`` from its
    approximation (``to_inference_data(draws=…)``; a binary classifier's one classifier); a
    degenerate fit's warning is expected in some replications (an empty model is one of the answers)
    and not repeated 200 times."""
    def approximate(data, seed):
        X, y = data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = make().fit(X, y)
        beta = est.to_inference_data(draws=num_draws, seed=seed).posterior["beta"].values[0]
        return {"beta": beta[:, 0, :] if beta.ndim == 3 else beta}
    return approximate


def _probit(simulate):
    """The probit model from the Gaussian one with σ² = 1: ``y = 1[xᵀβ + w ≥ 0]``, ``w ~ N(0, 1)``,
    is Albert & Chib's (1993) latent form of ``P(y = 1) = Φ(xᵀβ)`` (002 Sec. 2)."""
    def simulate_probit(rng):
        truth, (X, z) = simulate(rng)
        return {"beta": truth["beta"]}, (X, (z >= 0).astype(np.float64))
    return simulate_probit


def cases(num_draws=1000):
    """``{name: (description, simulate, approximate)}``: the (estimator, approximation) pairs measured,
    each with the model its data come from (:func:`sparsebayes.inference.posterior.sbc_pairs.hierarchy_simulator`),
    and the exact horseshoe Gibbs on the same problem as the reference."""
    from sparsebayes.inference import AdaptiveSparseRegressor, BLSRegressor, SparseProbitClassifier
    from sparsebayes.models import HorseshoePrior, LaplacePrior

    X = design()
    laplace, horseshoe = LaplacePrior(2.0), HorseshoePrior(0.5)
    laplace_gamma, horseshoe_tau = LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), HorseshoePrior(0.5, tau_prior=1.0)

    def em(prior):
        return _estimator_draws(lambda: AdaptiveSparseRegressor(prior=prior, noise_var=1.0, standardize=False,
                                                                bias=False), num_draws)

    gibbs = sbc_pairs.hierarchy_gibbs_sampler(horseshoe, noise_var=1.0, num_warmup=500)
    return {
        "em-laplace": ("Laplace EM (γ = 2, σ² = 1 given): Gaussian conditional at the mode",
                       sbc_pairs.hierarchy_simulator(laplace, X, noise_var=1.0), em(laplace)),
        "em-horseshoe": ("horseshoe EM (τ = 0.5, σ² = 1 given): Gaussian conditional at the mode",
                         sbc_pairs.hierarchy_simulator(horseshoe, X, noise_var=1.0), em(horseshoe)),
        "em-laplace-gamma": ("Laplace EM (γ ~ Gamma(2, 2) estimated, σ² = 1 given): Gaussian conditional at the mode",
                             sbc_pairs.hierarchy_simulator(laplace_gamma, X, noise_var=1.0), em(laplace_gamma)),
        "em-horseshoe-tau": ("horseshoe EM (τ ~ C⁺(0, 1) estimated, σ² = 1 given): Gaussian conditional at the mode",
                             sbc_pairs.hierarchy_simulator(horseshoe_tau, X, noise_var=1.0), em(horseshoe_tau)),
        "em-probit-laplace": (f"probit EM (Laplace γ = 2, n = {2 * N_ROWS}): Laplace approximation at the mode",
                              _probit(sbc_pairs.hierarchy_simulator(laplace, design(2 * N_ROWS), noise_var=1.0)),
                              _estimator_draws(lambda: SparseProbitClassifier(prior=laplace, standardize=False,
                                                                              bias=False), num_draws)),
        "type2-bls": ("BLS type-II (λ ~ Gamma(2, 2), σ² ~ IG(3, 2), both estimated): N(μ, Σ) at the fit",
                      sbc_pairs.hierarchy_simulator(LaplacePrior(1.0, gamma_prior=(2.0, 2.0)), X, scaled=True),
                      _estimator_draws(lambda: BLSRegressor(fit_intercept=False, a=2.0, b=2.0, c=3.0, d=2.0),
                                       num_draws)),
        "gibbs-horseshoe": ("exact reference: horseshoe Gibbs (τ = 0.5, σ² = 1 given), 1,000 draws",
                            sbc_pairs.hierarchy_simulator(horseshoe, X, noise_var=1.0),
                            lambda data, seed: gibbs(data, num_draws, seed)),
    }


def measure(num_replications=200, seed=0, progress_bar=None):
    """Coverage of every case of :func:`cases`: a pandas DataFrame, one row per case, with the
    description, the coverage of the central 50 % and 90 % intervals, their binomial standard
    errors (a lower bound: a replication's weights share its data), and the share of weights pruned
    to an exact zero in every draw (they cover nothing)."""
    import pandas as pd

    rows = {}
    for name, (description, simulate, approximate) in cases().items():
        res = coverage.interval_coverage(simulate, approximate, num_replications=num_replications, levels=(0.5, 0.9),
                                    parameters=[f"beta[{j}]" for j in range(N_WEIGHTS)], seed=seed,
                                    progress_bar=progress_bar)
        se = res.standard_error()
        rows[name] = {"approximation": description, "cover_50": res.coverage[0], "se_50": se[0],
                      "cover_90": res.coverage[1], "se_90": se[1], "point_mass": res.point_mass}
    return pd.DataFrame.from_dict(rows, orient="index")


def table(frame):
    """The Markdown table of a :func:`measure` frame."""
    lines = ["| case | approximation | 50 % interval covers | 90 % interval covers | pruned |", "|---|---|---|---|---|"]
    for name, r in frame.iterrows():
        lines.append(f"| `{name}` | {r.approximation} | {r.cover_50:.3f} ± {r.se_50:.3f} | {r.cover_90:.3f} ± {r.se_90:.3f} "
                     f"| {r.point_mass:.3f} |")
    return "\n".join(lines)


def main(num_replications=200, seed=0):
    """Print :func:`measure`'s table and the :data:`MEASURED` dict it gives."""
    frame = measure(num_replications, seed)
    print(table(frame))
    print({name: (round(float(r.cover_50), 3), round(float(r.cover_90), 3)) for name, r in frame.iterrows()})


if __name__ == "__main__":
    main()
