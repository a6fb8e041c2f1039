"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018) of any sampler.

For an exact sampler of ``p(θ | y)``, drawing ``θ̃ ~ p(θ)``, then ``ỹ ~ p(y | θ̃)``, then ``L``
independent posterior draws ``θ_1 … θ_L ~ p(θ | ỹ)``, the rank ``#{θ_l < θ̃}`` of the truth among them
is uniform on ``{0, …, L}`` for every scalar parameter (Talts et al. 2018, Theorem 1). Over ``N``
replications the ranks, grouped in ``B`` equal bins, are then multinomial with equal cell
probabilities: :func:`run` returns them with a χ² p-value per parameter and plots the histograms
over the 99 % band of ``Binomial(N, 1/B)`` (Talts et al. Fig. 2), or the ECDF of the fractional ranks
minus the uniform's (Säilynoja, Bürkner & Vehtari 2022, pointwise band). A sampler that is too
narrow puts the truth outside its draws (∪-shaped histogram), too wide ∩-shaped, biased one-sided.

MCMC draws are autocorrelated, which by itself makes the histogram ∪-shaped; Talts et al.'s
Algorithm 2 thins the chain to about ``L`` effective draws: :func:`run` asks the sampler for
``L · thin`` draws, estimates their effective sample size (:func:`effective_sample_size`), and while
it is below ``L`` reruns the replication with the thinning raised in proportion (by a power of two,
so a sampler compiled per chain length compiles a few), up to ``max_thin``;
the replications still below ``L`` after that are counted (``SBCResult.low_ess``).

What is calibrated is a pair (simulator, sampler), two callables:

* ``simulate(rng) -> (truth, data)``: ``rng`` a NumPy ``Generator``; ``truth`` a dict of named
  scalars or 1-D arrays (a 1-D array ``beta`` is ranked as ``beta[0]``, ``beta[1]``, …);
* ``sample(data, num_samples, seed) -> draws``: ``draws`` a dict of the same names, each an array
  ``(num_samples, …)`` from one chain (its warm-up done and dropped by the sampler).

The suite's pairs (its regression model under any hierarchy and likelihood, and its Gibbs and NUTS
engines in the ``sample`` signature) are built by :mod:`~sparsebayes.inference.posterior.sbc_pairs`;
:func:`~sparsebayes.inference.posterior.coverage.interval_coverage` measures, in the same replications,
how often an approximate posterior's central intervals cover the truth (the approximations are not
exact samplers, so their ranks are not uniform; their coverage says by how much).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from sparsebayes.inference.engines.progress import progress, show_progress
from sparsebayes.inference._validation import check_count

__all__ = ["SBCResult", "run", "effective_sample_size"]


# --- effective sample size ----------------------------------------------------------------------
def effective_sample_size(draws):
    """Split-chain effective sample size of each row of ``draws`` (..., n): one chain per row, cut
    in two halves (Gelman et al. 2013, BDA3 Sec. 11.5; Vehtari et al. 2021 eq. 10 without the rank
    normalization), ``ESS = N / τ̂``, ``τ̂ = −1 + 2 Σ_k P̃_k + ρ̂_{2K}⁺`` over Geyer's (1992) initial
    monotone sequence of pair sums ``P_k = ρ̂_{2k} + ρ̂_{2k+1}`` (truncated before the first
    non-positive sum, made non-increasing), ``τ̂ ≥ 1/log₁₀ N``: ArviZ's ``ess(method="mean")``,
    vectorized over the rows (autocovariances by FFT). A constant row has ``ESS = N``.
    """
    x = np.asarray(draws, dtype=np.float64)
    n_all = x.shape[-1]
    half = n_all // 2
    if half < 4:
        raise ValueError(f"the effective sample size needs at least 8 draws, got {n_all}")
    chains = np.stack([x[..., :half], x[..., n_all - half:]], axis=-2)  # (..., 2, half)
    centred = chains - chains.mean(axis=-1, keepdims=True)
    m = 1 << (2 * half - 1).bit_length()
    f = np.fft.rfft(centred, n=m, axis=-1)
    acov = np.fft.irfft(f * np.conj(f), n=m, axis=-1)[..., :half] / half  # (..., 2, half)
    mean_acov = acov.mean(axis=-2)  # (..., half)
    mean_var = mean_acov[..., :1] * half / (half - 1.0)
    var_plus = mean_var * (half - 1.0) / half + np.var(chains.mean(axis=-1), axis=-1, ddof=1)[..., None]
    constant = np.ptp(x, axis=-1) < np.finfo(np.float64).resolution
    rho = 1.0 - (mean_var - mean_acov) / np.where(var_plus > 0, var_plus, 1.0)
    rho[..., 0] = 1.0
    # Geyer's pairs P_j = ρ_2j + ρ_2j+1, j < (half − 1)//2 (ArviZ's loop stops before lag half − 2);
    # J pairs are summed: those before the first non-positive one, or all but the last when none is
    n_pairs = (half - 1) // 2
    pairs = rho[..., 0:2 * n_pairs:2] + rho[..., 1:2 * n_pairs:2]
    leading = np.sum(np.cumprod(pairs[..., 1:] > 0, axis=-1), axis=-1)
    J = np.minimum(leading + 1, n_pairs - 1)
    kept = np.arange(n_pairs) < J[..., None]
    monotone = np.minimum.accumulate(np.where(kept, pairs, np.inf), axis=-1)  # the initial monotone sequence
    even = np.take_along_axis(rho, 2 * J[..., None], axis=-1)[..., 0]
    last = np.take_along_axis(pairs, J[..., None], axis=-1)[..., 0]
    tail = np.where(J == 0, 1.0, np.where((even > 0) | (last >= 0), even, 0.0))  # the next even lag, when positive
    tau = -1.0 + 2.0 * np.sum(np.where(kept, monotone, 0.0), axis=-1) + tail
    tau = np.maximum(tau, 1.0 / math.log10(2 * half))
    return np.where(constant, float(2 * half), 2 * half / tau)


# --- the calibration loop -----------------------------------------------------------------------
def _flatten(values, where):
    """``{name: scalar or 1-D array}`` -> ``{flat name: array (...,)}``, the last axes named."""
    flat = {}
    for name, value in values.items():
        value = np.asarray(value, dtype=np.float64)
        if value.ndim - (0 if where == "truth" else 1) == 0:
            flat[name] = value
        elif value.ndim - (0 if where == "truth" else 1) == 1:
            for i in range(value.shape[-1]):
                flat[f"{name}[{i}]"] = value[..., i]
        else:
            raise ValueError(f"{where} {name!r} must be a scalar or a 1-D array per draw, got shape {value.shape}")
    return flat


class SBCResult(NamedTuple):
    """The ranks of :func:`run`, one column per scalar parameter.

    ``names`` the parameters (``beta[0]``, …); ``ranks`` (replications, parameters), integers in
    ``0 … num_draws``; ``bins`` the number of equal rank bins; ``pvalues`` per parameter, the χ² test
    of equal bin counts; ``low_ess`` the number of replications whose draws stayed below
    ``num_draws`` effective draws at the largest thinning (their ranks are kept); ``thin`` the
    thinning each replication used; ``min_ess`` each replication's smallest effective sample size
    over the parameters, of its kept chain.
    """

    names: tuple
    ranks: np.ndarray
    num_draws: int
    bins: int
    pvalues: np.ndarray
    low_ess: int
    thin: np.ndarray
    min_ess: np.ndarray

    def counts(self):
        """Replications per rank bin, (parameters, bins): bin ``b`` holds ranks
        ``b (L+1)/B … (b+1)(L+1)/B − 1``."""
        return np.stack([np.bincount(col * self.bins // (self.num_draws + 1), minlength=self.bins)
                         for col in self.ranks.T])

    def band(self, level=0.99):
        """``(low, high)``: the central ``level`` interval of one bin's count under uniform ranks,
        ``Binomial(N, 1/B)`` (Talts et al. 2018, Sec. 4.1)."""
        from scipy import stats
        n = self.ranks.shape[0]
        return tuple(float(stats.binom.ppf(q, n, 1.0 / self.bins)) for q in (0.5 - level / 2, 0.5 + level / 2))

    def failed(self, alpha=1e-3):
        """The parameters whose χ² p-value is below ``alpha`` over the number of parameters
        (Bonferroni: a calibrated sampler fails none with probability at least ``1 − alpha``)."""
        return [name for name, p in zip(self.names, self.pvalues) if p < alpha / len(self.names)]

    def summary(self):
        """A pandas DataFrame, one row per parameter: the χ² p-value, the bins outside the 99 %
        band, and the share of ranks in the lowest and highest bins."""
        import pandas as pd
        counts = self.counts()
        low, high = self.band()
        n = self.ranks.shape[0]
        return pd.DataFrame({"pvalue": self.pvalues, "bins_outside_99": np.sum((counts < low) | (counts > high), axis=1),
                             "lowest_bin": counts[:, 0] / n, "highest_bin": counts[:, -1] / n},
                            index=pd.Index(self.names, name="parameter"))

    def plot(self, kind="hist", *, columns=4, level=0.99):
        """A matplotlib ``Figure``, one panel per parameter: ``kind="hist"`` the rank histogram over
        the ``level`` band of one bin's count (grey) and its expectation ``N/B`` (Talts et al. 2018,
        Fig. 2); ``kind="ecdf"`` the ECDF of the fractional ranks ``r/(L+1)`` minus the uniform CDF,
        with the pointwise ``level`` band of ``Binomial(N, z)/N − z``. The figure is not shown or
        registered with pyplot (nothing global changes)."""
        from matplotlib.figure import Figure
        from scipy import stats
        if kind not in ("hist", "ecdf"):
            raise ValueError(f"kind must be 'hist' or 'ecdf', got {kind!r}")
        k = len(self.names)
        cols = max(1, min(columns, k))
        rows = -(-k // cols)
        fig = Figure(figsize=(2.6 * cols, 2.0 * rows), layout="constrained")
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        n = self.ranks.shape[0]
        if kind == "hist":
            counts = self.counts()
            low, high = self.band(level)
            for ax, name, row, p in zip(axes, self.names, counts, self.pvalues):
                ax.axhspan(low, high, color="0.85", zorder=0)
                ax.axhline(n / self.bins, color="0.5", lw=0.8)
                ax.bar(np.arange(self.bins), row, width=1.0, color="C0", edgecolor="white")
                ax.set_title(f"{name}  (p = {p:.2g})", fontsize=8)
                ax.set_xticks([])
        else:
            z = np.linspace(0.0, 1.0, 201)
            lo, hi = (stats.binom.ppf(q, n, z) / n - z for q in (0.5 - level / 2, 0.5 + level / 2))
            frac = (self.ranks + 0.5) / (self.num_draws + 1)
            for ax, name, col in zip(axes, self.names, frac.T):
                ax.fill_between(z, lo, hi, color="0.85")
                ax.plot(z, np.searchsorted(np.sort(col), z, side="right") / n - z, color="C0")
                ax.axhline(0.0, color="0.5", lw=0.8)
                ax.set_title(name, fontsize=8)
        for ax in axes[k:]:
            ax.set_visible(False)
        fig.suptitle(f"SBC ranks: {n} replications, L = {self.num_draws}", fontsize=9)
        return fig


def _rank(draws, truth, rng):
    """``#{draws < truth}`` plus a uniform share of the ties (Talts et al. 2018, Sec. 4: ties broken at
    random, so a sampler with atoms, e.g. exact zeros, still has uniform ranks when calibrated)."""
    below = np.sum(draws < truth, axis=0)
    ties = np.sum(draws == truth, axis=0)
    return below + rng.integers(0, ties + 1)


def run(simulate, sample, *, num_replications=200, num_draws=99, thin=10, max_thin=None, bins=10,
        parameters=None, seed=0, progress_bar=None):
    """Simulation-based calibration of ``sample`` against ``simulate`` (module docstring): an
    :class:`SBCResult`.

    Each of ``num_replications`` replications draws ``(truth, data)`` from ``simulate``, asks
    ``sample`` for ``num_draws · thin`` draws, and ranks the truth among every ``thin``-th of them
    (``num_draws`` draws, ranks ``0 … num_draws``). Talts et al.'s Algorithm 2: while the smallest
    effective sample size over the parameters (:func:`effective_sample_size`) is below
    ``num_draws``, the replication is rerun (same data, a new seed) with ``thin`` raised in
    proportion, to the next power of two times ``thin``, up to ``max_thin`` (default ``4 · thin``;
    ``max_thin = thin``: never rerun); those still below are counted in ``low_ess``, as are chains
    with a draw that is not finite (their ESS is 0; they are not rerun). ``bins`` must divide
    ``num_draws + 1`` (equal bins); ``parameters`` (flat names such as ``"beta[0]"``) restricts the
    ranks to those, default every entry of the truth. ``seed`` fixes the replications (data and
    sampler seeds). ``progress_bar``: a tqdm bar over the replications (``None``: when standard
    error is a terminal).
    """
    from scipy import stats
    check_count("num_replications", num_replications, 2)
    check_count("num_draws", num_draws, 1)
    check_count("thin", thin, 1)
    check_count("bins", bins, 2)
    check_count("seed", seed, 0)
    max_thin = 4 * thin if max_thin is None else max_thin
    check_count("max_thin", max_thin, thin)
    if (num_draws + 1) % bins:
        raise ValueError(f"bins ({bins}) must divide num_draws + 1 ({num_draws + 1}) for equal rank bins")
    root = np.random.SeedSequence(seed)
    names, rows, thins, min_ess = None, [], [], []
    show = show_progress(progress_bar)
    with progress(num_replications, "sbc", show) as bar:
        for child in root.spawn(num_replications):
            rng = np.random.default_rng(child)
            truth, data = simulate(rng)
            truth = _flatten(truth, "truth")
            if names is None:
                names = tuple(truth) if parameters is None else tuple(parameters)
                missing = [name for name in names if name not in truth]
                if missing:
                    raise ValueError(f"parameters {missing} are not in the simulator's truth {sorted(truth)}")
            t = thin
            while True:
                raw = _flatten(sample(data, num_draws * t, int(rng.integers(2**31 - 1))), "draws")
                missing = [name for name in names if name not in raw]
                if missing:
                    raise ValueError(f"the sampler returned no draws of {missing} (it returned {sorted(raw)})")
                chain = np.stack([raw[name] for name in names])  # (parameters, num_draws · t)
                if chain.shape[1] != num_draws * t:
                    raise ValueError(f"the sampler returned {chain.shape[1]} draws, asked for {num_draws * t}")
                ess = float(np.min(effective_sample_size(chain))) if chain.shape[1] >= 8 else float(chain.shape[1])
                ess = ess if np.all(np.isfinite(chain)) else 0.0  # a chain that left the floats: no effective draws
                if ess >= num_draws or t >= max_thin or ess == 0.0:
                    break
                # the next power of two times thin that should reach num_draws (a few chain lengths, so
                # a compiled sampler is reused across replications)
                t = min(max_thin, t * 2 ** max(1, math.ceil(math.log2(1.1 * num_draws / max(ess, 1.0)))))
            kept = chain[:, t - 1::t].T  # (num_draws, parameters)
            rows.append(_rank(kept, np.array([truth[name] for name in names]), rng))
            thins.append(t)
            min_ess.append(ess)
            bar.update(1)
    ranks = np.array(rows, dtype=np.int64)
    result = SBCResult(names, ranks, num_draws, bins, np.zeros(len(names)), int(np.sum(np.array(min_ess) < num_draws)),
                       np.array(thins), np.array(min_ess))
    return result._replace(pvalues=np.atleast_1d(stats.chisquare(result.counts(), axis=1).pvalue))
