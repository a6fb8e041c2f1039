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

:func:`hierarchy_simulator` is the suite's regression model under any hierarchy with a NumPyro
sampling statement (``sample_beta``), σ² from a proper inverse gamma, and :func:`augmented_simulator` the
same hierarchy under any likelihood with a sampler (probit, logistic, Student-t, negative binomial);
:func:`hierarchy_gibbs_sampler`, :func:`augmented_gibbs_sampler`,
:func:`bayesian_lasso_sampler` and :func:`nuts_sampler` wrap the suite's engines
(:func:`sparsebayes.inference.engines.hierarchy_gibbs.run`,
:func:`sparsebayes.inference.engines.bayesian_lasso.run_gibbs`,
:func:`sparsebayes.inference.engines.nuts.run_nuts`) in the ``sample`` signature, with the hierarchy's own site
names. :func:`interval_coverage` measures, in the same replications, how often an approximate
posterior's central intervals cover the truth (the approximations are not exact samplers, so their
ranks are not uniform; their coverage says by how much).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from sparsebayes.inference.engines.progress import progress, show_progress
from sparsebayes.inference._validation import check_count

__all__ = ["SBCResult", "run", "effective_sample_size", "hierarchy_simulator", "hierarchy_gibbs_sampler",
           "augmented_simulator", "augmented_gibbs_sampler", "bayesian_lasso_sampler", "nuts_sampler",
           "interval_coverage", "CoverageResult"]


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


# --- the suite's model and samplers -------------------------------------------------------------
def _checked_noise_prior(noise_prior):
    c, d = (float(v) for v in noise_prior)
    if not (c > 0 and d > 0 and np.isfinite(c) and np.isfinite(d)):
        raise ValueError(f"noise_prior (c, d) must be a proper inverse gamma, c > 0 and d > 0, to draw σ² from; got {noise_prior}")
    return c, d


def hierarchy_simulator(prior, X, noise_prior=(3.0, 2.0), *, scaled=False, noise_var=None):
    """``simulate(rng)`` for ``y = Xβ + w``, ``w ~ N(0, σ² I)``: β and the hierarchy's estimated
    hyperparameters by its own NumPyro sampling statement (``prior.sample_beta``, the NUTS twin's:
    e.g. the horseshoe's ``τ ~ C⁺(0, s)``, ``λ_i ~ C⁺(0, 1)``, ``β_i ~ N(0, τ²λ_i²)``), ``σ² ~ IG(c, d)``
    (``noise_prior = (c, d)``, both positive: the Gibbs engine's ``NoisePrior(c, d)``, Park & Casella's
    ``c, d``), and with ``scaled`` ``β`` multiplied by σ (``β_i | σ², v_i ~ N(0, σ² v_i)``: the Park &
    Casella and BLS form). ``noise_var``: σ² held at that value instead (for a sampler or an
    estimator that is given σ²). ``truth``: ``beta``, ``noise_var`` and each of
    ``prior.estimated_sites()`` (``tau_global``, ``gamma``); ``data``: ``(X, y)``. No intercept is
    drawn: an engine that integrates a flat intercept out sees the centred data, whose distribution
    does not depend on it.
    """
    import jax
    from numpyro import handlers
    from sparsebayes.models.priors import require

    require(prior, "nuts")
    c, d = _checked_noise_prior(noise_prior)
    if noise_var is not None and not (np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"noise_var must be a positive number, got {noise_var!r}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D design, got shape {X.shape}")
    p = X.shape[1]
    sites = tuple(prior.estimated_sites())

    def simulate(rng):
        key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
        with handlers.seed(rng_seed=key):
            trace = handlers.trace(lambda: prior.sample_beta(p)).get_trace()
        s2 = d / rng.gamma(c) if noise_var is None else float(noise_var)
        beta = np.asarray(trace["beta"]["value"], dtype=np.float64) * (np.sqrt(s2) if scaled else 1.0)
        y = X @ beta + np.sqrt(s2) * rng.standard_normal(X.shape[0])
        truth = {"beta": beta, "noise_var": s2, **{s: float(trace[s]["value"]) for s in sites}}
        return truth, (X, y)

    return simulate


def hierarchy_gibbs_sampler(prior, *, noise_prior=(3.0, 2.0), noise_var=None, num_warmup=300, scaled=False,
                            beta_draw="auto", fit_intercept=False):
    """``sample(data, num_samples, seed)`` by the hierarchy Gibbs engine
    (:func:`sparsebayes.inference.engines.hierarchy_gibbs.run`, one chain, no bar) on ``data = (X, y)``: draws
    of ``beta``, ``noise_var`` and the hierarchy's estimated hyperparameters under their twin's names
    (``prior.gibbs_twin_sites``: the horseshoe's ``tau_global``), the names
    :func:`hierarchy_simulator` gives the truth. ``noise_var`` holds σ² at that value (its draws are
    then that constant); ``beta_draw`` forces the β draw (Rue's, Bhattacharya's or the
    conjugate-gradient one, :func:`~sparsebayes.inference.engines.gibbs_beta.draw_beta`)."""
    from sparsebayes.inference.engines import hierarchy_gibbs

    noise = hierarchy_gibbs.NoisePrior(*_checked_noise_prior(noise_prior))
    sites = tuple(prior.estimated_sites())

    def sample(data, num_samples, seed):
        X, y = data
        states, _ = hierarchy_gibbs.run(X, y, prior, num_warmup=num_warmup, num_samples=num_samples, num_chains=1,
                                        seed=seed, fit_intercept=fit_intercept, noise_prior=noise, noise_var=noise_var,
                                        scaled=scaled, progress_bar=False, beta_draw=beta_draw)
        draws = {"beta": states.beta[0], "noise_var": states.noise_var[0]}
        if sites:
            twin = prior.gibbs_twin_sites(states.beta, states.aux)
            draws.update({s: np.asarray(twin[s])[0] for s in sites})
        return draws

    return sample


def _prior_draw(prior, p, rng):
    """One draw of β and the hierarchy's estimated hyperparameters by its NumPyro sampling statement
    (``prior.sample_beta``): ``(beta, {site: value})`` for the sites of ``prior.estimated_sites()``."""
    import jax
    from numpyro import handlers

    key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
    with handlers.seed(rng_seed=key):
        trace = handlers.trace(lambda: prior.sample_beta(p)).get_trace()
    return (np.asarray(trace["beta"]["value"], dtype=np.float64),
            {s: float(trace[s]["value"]) for s in prior.estimated_sites()})


def augmented_simulator(prior, X, likelihood, *, intercept_scale=1.0, param=1.0, param_draw=None):
    """``simulate(rng)`` for ``y_i ~ likelihood(η_i = b₀ + x_iᵀβ, θ)``, the model of
    :func:`sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`: β and the hierarchy's estimated
    hyperparameters by its NumPyro sampling statement (as :func:`hierarchy_simulator`), the intercept
    ``b₀ ~ N(0, intercept_scale²)`` (``None``: no intercept, ``b₀ = 0``), the likelihood's own
    parameter θ from ``param_draw(rng)`` (its prior, the one its ``gibbs_param_step`` assumes: e.g.
    the negative binomial's dispersion ``Gamma(1, 0.1)``) or held at ``param``, and ``y`` by the
    likelihood's own ``sample`` (a JAX key from ``rng``). ``truth``: ``beta``, ``intercept`` (with
    one), θ under the likelihood's ``param_name`` (where it has one and ``param_draw`` is given) and
    the hierarchy's sites; ``data``: ``(X, y)``."""
    import jax
    import jax.numpy as jnp
    from sparsebayes.models.likelihoods import make_likelihood
    from sparsebayes.models.priors import require

    require(prior, "nuts")
    likelihood = make_likelihood(likelihood)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D design, got shape {X.shape}")
    if intercept_scale is not None and not (np.isfinite(intercept_scale) and intercept_scale > 0):
        raise ValueError(f"intercept_scale must be a positive number or None, got {intercept_scale!r}")
    param_name = getattr(likelihood, "param_name", None)

    def simulate(rng):
        beta, sites = _prior_draw(prior, X.shape[1], rng)
        intercept = 0.0 if intercept_scale is None else float(intercept_scale * rng.standard_normal())
        theta = float(param if param_draw is None else param_draw(rng))
        eta = intercept + X @ beta
        key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
        y = np.asarray(likelihood.sample(key, jnp.asarray(eta), jnp.float64(theta)), dtype=np.float64)
        truth = {"beta": beta, **sites}
        if intercept_scale is not None:
            truth["intercept"] = intercept
        if param_name and param_draw is not None:
            truth[param_name] = theta
        return truth, (X, y)

    return simulate


def augmented_gibbs_sampler(prior, likelihood, *, num_warmup=300, intercept_scale=1.0, likelihood_param=None,
                            beta_draw="auto"):
    """``sample(data, num_samples, seed)`` by the augmented Gibbs engine
    (:func:`sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`, one chain, no bar) on ``data = (X, y)``:
    draws of ``beta``, ``intercept`` (``intercept_scale`` its prior sd; ``None``: no intercept), the
    likelihood's parameter under its ``param_name`` and the hierarchy's estimated hyperparameters under
    their twin's names, the names :func:`augmented_simulator` gives the truth. ``likelihood_param``:
    θ's start (the engine's default: ``likelihood.init_params(y)``); ``beta_draw`` forces Rue's or
    Bhattacharya's draw."""
    from sparsebayes.models.likelihoods import make_likelihood

    from sparsebayes.inference.engines import hierarchy_gibbs_augmented

    likelihood = make_likelihood(likelihood)
    sites = tuple(getattr(prior, "estimated_sites", dict)())
    param_name = getattr(likelihood, "param_name", None)
    fit_intercept = intercept_scale is not None

    def sample(data, num_samples, seed):
        X, y = data
        states, _ = hierarchy_gibbs_augmented.run_augmented(
            X, y, prior, likelihood, num_warmup=num_warmup, num_samples=num_samples, num_chains=1, seed=seed,
            fit_intercept=fit_intercept, likelihood_param=likelihood_param,
            intercept_scale=intercept_scale if fit_intercept else hierarchy_gibbs_augmented.INTERCEPT_SCALE,
            progress_bar=False, beta_draw=beta_draw)
        draws = {"beta": np.asarray(states.beta)[0]}
        if fit_intercept:
            draws["intercept"] = np.asarray(states.intercept)[0]
        if param_name:
            draws[param_name] = np.asarray(states.param)[0]
        if sites:
            twin = prior.gibbs_twin_sites(states.beta, states.aux)
            draws.update({s: np.asarray(twin[s])[0] for s in sites})
        return draws

    return sample


def bayesian_lasso_sampler(*, lam2_shape=1.0, lam2_rate=1.0, noise_prior=(3.0, 2.0), num_warmup=300, variates="auto"):
    """``sample(data, num_samples, seed)`` by Park & Casella's Gibbs
    (:func:`sparsebayes.inference.engines.bayesian_lasso.run_gibbs`, one chain, no bar, no
    pointwise likelihood): draws of
    ``beta``, ``noise_var`` and ``λ²`` named ``gamma``, the names of the same model's
    :func:`hierarchy_simulator` (``LaplacePrior(gamma_prior=(lam2_shape, lam2_rate))``,
    ``noise_prior``, ``scaled=True``: ``λ² ~ Gamma(r, δ)``, ``τ_j² ~ Exp(λ²/2)``,
    ``β_j ~ N(0, σ²τ_j²)``). The sampler integrates a flat intercept out."""
    from sparsebayes.inference.engines.bayesian_lasso import run_gibbs

    c, d = _checked_noise_prior(noise_prior)

    def sample(data, num_samples, seed):
        X, y = data
        idata = run_gibbs(X, y, lam2_shape=lam2_shape, lam2_rate=lam2_rate, c=c, d=d, num_warmup=num_warmup,
                          num_samples=num_samples, num_chains=1, seed=seed, progress_bar=False, log_likelihood=False,
                          variates=variates)
        post = idata.posterior
        return {"beta": post["beta"].values[0], "noise_var": post["noise_var"].values[0], "gamma": post["lam2"].values[0]}

    return sample


def nuts_sampler(model, *, num_warmup=500, rename=None, centre=False, target_accept_prob=0.8, record=None,
                 **model_kwargs):
    """``sample(data, num_samples, seed)`` by NUTS (:func:`sparsebayes.inference.engines.nuts.run_nuts`, one
    chain, no bar, no R-hat check) on ``model(X, y, **model_kwargs)`` for ``data = (X, y)``: every
    posterior variable, ``rename`` mapping the model's site names to the simulator's (e.g.
    ``{"lam2": "gamma"}`` for :func:`sparsebayes.models.bayesian_lasso.bayesian_lasso`). ``centre``:
    ``X``'s columns and ``y`` centred first, for a model that integrates a flat intercept out and
    expects centred data (``bayesian_lasso``). NUTS's divergence warnings pass through; ``record``, a
    list, gets each run's :func:`nuts_health` (divergences and draws)."""
    from sparsebayes.inference.engines.nuts import run_nuts

    rename = dict(rename or {})

    def sample(data, num_samples, seed):
        X, y = data
        if centre:
            X, y = X - X.mean(axis=0), y - y.mean()
        idata = run_nuts(model, X, y, num_warmup=num_warmup, num_samples=num_samples, num_chains=1, seed=seed,
                         progress_bar=False, rhat_max=None, target_accept_prob=target_accept_prob, **model_kwargs)
        if record is not None:
            record.append(nuts_health(idata))
        post = idata.posterior
        return {rename.get(name, name): post[name].values[0] for name in post.data_vars}

    return sample


class NutsHealth(NamedTuple):
    """One NUTS run's count of divergent transitions after warm-up and of kept draws."""

    n_divergences: int
    n_draws: int


def nuts_health(idata):
    """:class:`NutsHealth` of a NUTS run's ``InferenceData`` (``sample_stats.diverging``)."""
    diverging = np.asarray(idata.sample_stats["diverging"].values)
    return NutsHealth(int(diverging.sum()), int(diverging.size))


def divergence_rates(records):
    """``(share of runs with a divergent transition, share of divergent draws)`` over a list of
    :class:`NutsHealth` (the ``record`` of :func:`nuts_sampler` or :func:`collapsed_nuts_sampler`)."""
    if not records:
        raise ValueError("no NUTS runs recorded")
    div = np.array([r.n_divergences for r in records])
    return float(np.mean(div > 0)), float(div.sum() / sum(r.n_draws for r in records))


def collapsed_nuts_sampler(prior, *, noise_var, num_warmup=500, target_accept_prob=None, record=None):
    """``sample(data, num_samples, seed)`` by the collapsed NUTS of a hierarchy with the
    ``"nuts-collapsed"`` capability (:func:`sparsebayes.inference.engines.collapsed_nuts.run`, one chain, no bar:
    the hierarchy's scales by NUTS with β integrated out, β from its Gaussian conditional per draw),
    the twin's default for the horseshoe under the Gaussian likelihood, on ``data = (X, y)`` with σ²
    held at ``noise_var`` (the twin's σ² prior is flat, which no simulator draws from: use
    :func:`hierarchy_simulator` with the same ``noise_var``). Draws of ``beta`` and the hierarchy's
    sites (the horseshoe's ``tau_global``, ``lam_local``). ``target_accept_prob=None``: the
    hierarchy's declared setting (``nuts_settings``), as the twin runs it; ``record`` as for
    :func:`nuts_sampler`."""
    from types import SimpleNamespace

    from sparsebayes.models.priors import require

    from sparsebayes.inference.engines import collapsed_nuts

    require(prior, "nuts-collapsed")
    if not (np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"noise_var must be a positive number, got {noise_var!r}")

    def sample(data, num_samples, seed):
        X, y = data
        t = SimpleNamespace(H=np.asarray(X, dtype=np.float64), y=np.asarray(y, dtype=np.float64), prior=prior,
                            kwargs={"noise_var": float(noise_var)})
        idata = collapsed_nuts.run(t, num_warmup=num_warmup, num_samples=num_samples, num_chains=1, seed=seed,
                                   coords=None, progress_bar=False, target_accept_prob=target_accept_prob)
        if record is not None:
            record.append(nuts_health(idata))
        post = idata.posterior
        return {name: post[name].values[0] for name in post.data_vars}

    return sample


__all__ += ["NutsHealth", "nuts_health", "divergence_rates", "collapsed_nuts_sampler"]


# --- coverage of approximate posteriors ---------------------------------------------------------
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
    """How often an approximate posterior's central intervals cover the truth: for each of
    ``num_replications`` draws ``(truth, data)`` of ``simulate`` (the :func:`run` signature),
    ``approximate(data, seed)`` returns draws (a dict of arrays ``(draws, …)``), and each parameter's
    central ``level`` interval (its draws' ``(1 ∓ level)/2`` quantiles, closed) either covers the true
    value or not. For an exact posterior the share is ``level`` on average over the prior (Talts et
    al. 2018, Sec. 2; Cook, Gelman & Rubin 2006); an approximation's departure from it is its
    miscalibration. A weight pruned in every draw (an interval ``[0, 0]``) covers only a true 0.
    ``parameters`` as for :func:`run`. Returns a :class:`CoverageResult`."""
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
