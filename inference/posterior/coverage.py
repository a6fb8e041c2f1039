"""Coverage of central posterior intervals over replications from the prior.

For an exact posterior, a central ``level`` interval covers the parameter that simulated the data with
probability ``level`` on average over the prior (Talts et al. 2018, Sec. 2; Cook, Gelman & Rubin 2006).
An approximate posterior (EM's conditional Gaussian, the type-II ``N(μ, Σ)``) is not an exact sampler,
so SBC's rank test (:mod:`.sbc`) would only reject it; :func:`interval_coverage` measures by how much
its intervals miss, in the replications of the same ``simulate(rng)`` signature
(:mod:`.sbc_pairs` builds the suite's; :mod:`.approximation_coverage` holds the suite's measurements).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sparsebayes.inference._validation import check_count
from sparsebayes.inference.engines.progress import progress, show_progress
from sparsebayes.inference.posterior.sbc import _flatten

__all__ = ["CoverageResult", "interval_coverage"]


class CoverageResult(NamedTuple):
    """:func:`interval_coverage`'s answer: ``levels`` the nominal central-interval levels;
    ``coverage`` the share of (replication, parameter) pairs whose interval covers the truth, one per
    level; ``covered`` (replications, parameters, levels) booleans; ``names`` the parameters;
    ``point_mass`` the share of pairs whose draws are all equal (a weight pruned to an exact zero),
    which cover a continuous truth at no level."""

    levels: tuple
    coverage: np.ndarray
    covered: np.ndarray
    names: tuple
    point_mass: float

    def standard_error(self):
        """The binomial standard error of each ``coverage`` as if the pairs were independent (the
        weights of one replication share its data, so this is a lower bound)."""
        k = self.covered.shape[0] * self.covered.shape[1]
        return np.sqrt(self.coverage * (1.0 - self.coverage) / k)


def interval_coverage(simulate, approximate, *, num_replications=200, levels=(0.5, 0.9), parameters=None, seed=0,
                      progress_bar=None):
    """How often an approximate posterior's central intervals cover the truth: for each of ``num_replications`` draws
    ``(truth, data)`` of ``simulate`` (the signature of :func:`~sparsebayes.inference.posterior.sbc.run`),
    ``approximate(data, seed)`` returns draws (a dict of arrays ``(draws, …)``), and each parameter's central
    ``level`` interval (its draws' ``(1 ∓ level)/2`` quantiles, closed) either covers the true value or not. For
    an exact posterior the share is ``level`` on average over the prior (Talts et al. 2018, Sec. 2; Cook, Gelman
    & Rubin 2006); an approximation's departure from it is its miscalibration. A weight pruned in every draw (an
    interval ``[0, 0]``) covers only a true 0. ``parameters`` as for
    :func:`~sparsebayes.inference.posterior.sbc.run`. Returns a :class:`CoverageResult`."""
    check_count("num_replications", num_replications, 1)
    check_count("seed", seed, 0)
    levels = tuple(float(a) for a in levels)
    if not all(0.0 < a < 1.0 for a in levels):
        raise ValueError(f"levels must lie strictly between 0 and 1, got {levels}")
    names, rows, atoms = None, [], []
    with progress(num_replications, "coverage", show_progress(progress_bar)) as bar:
        for child in np.random.SeedSequence(seed).spawn(num_replications):
            rng = np.random.default_rng(child)
            truth, data = simulate(rng)
            truth = _flatten(truth, "truth")
            names = names or (tuple(truth) if parameters is None else tuple(parameters))
            draws = _flatten(approximate(data, int(rng.integers(2**31 - 1))), "draws")
            missing = [name for name in names if name not in draws or name not in truth]
            if missing:
                raise ValueError(f"no truth or no draws of {missing}")
            chain = np.stack([draws[name] for name in names], axis=1)  # (draws, parameters)
            t = np.array([truth[name] for name in names])
            q = np.quantile(chain, [[(1 - a) / 2, (1 + a) / 2] for a in levels], axis=0)  # (levels, 2, parameters)
            rows.append(((q[:, 0] <= t) & (t <= q[:, 1])).T)
            atoms.append(np.all(chain == chain[:1], axis=0))
            bar.update(1)
    covered = np.array(rows)
    return CoverageResult(levels, covered.mean(axis=(0, 1)), covered, names, float(np.mean(atoms)))
