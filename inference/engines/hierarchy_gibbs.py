"""Gibbs sampling for linear regression under any hierarchy with conjugate conditionals: the sweep.

The model is the EM engine's (000 Sec. 3): ``y = Xβ + w``, ``w ~ N(0, σ² I)``, ``β_i | v_i ~ N(0, v_i)``,
the hierarchy's prior on ``v`` through auxiliary variables, and the prior
``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}`` on σ² (:class:`NoisePrior`; ``c = −1, d = 0``: the papers'
flat prior, 000 eq. 6). With ``fit_intercept`` the intercept has a flat prior and is integrated
out (``X`` and ``y`` centred, ``m = n − 1`` degrees of freedom). One sweep:

* ``β | v, σ² ~ N(A⁻¹Xᵀy/σ², A⁻¹)``, ``A = XᵀX/σ² + diag(1/v)``, drawn as the shape calls for
  (:mod:`.gibbs_beta`): for ``p ≤ n`` by the Cholesky factor of ``A`` from the sufficient statistics
  ``XᵀX``, ``Xᵀy`` computed once (Rue 2001; a sweep then costs ``O(p³)`` whatever ``n``), for
  ``p > n`` by Bhattacharya, Chakraborty & Mallick (2016) from ``X`` (``O(n²p)``, no ``p × p`` array
  anywhere, set-up included);
* ``σ² | β ~ IG(m/2 + c, ‖y − Xβ‖²/2 + d)`` (flat prior: ``IG(m/2 − 1, ‖y − Xβ‖²/2)``), or σ² held
  fixed;
* the hierarchy's own conditionals for its auxiliary variables given β (``gibbs_update``), and
  ``v`` from them (``gibbs_prior_variance``): e.g. Makalic & Schmidt (2016) for the horseshoe.

``scaled``: the prior variances are σ² times the hierarchy's, ``β_i | σ², v_i ~ N(0, σ² v_i)``
(Park & Casella 2008; the BLS twin, 004 eq. 5). Then ``σ² | β, v ~ IG(m/2 + c + p/2,
‖y − Xβ‖²/2 + d + Σ β_i²/(2v_i))`` and the hierarchy updates on ``β/σ``, which has its unscaled
prior.

The engine contract (:mod:`.driver`): :class:`State`, :class:`Info`, ``init(data, model, ...)``
(:func:`init`) and the pure ``step(state, data, model, *, key, ...)`` (:func:`step`), ``model`` a
:class:`GibbsModel` (hierarchy and σ²'s prior); the chain is :func:`trace`, the driver's scan over the
sweeps' keys or variates, chains by ``vmap``, inside the jit boundary :func:`run_sweeps`; :func:`run`
checks the data and drives it (:func:`drive`), in about 20 compiled calls with a progress bar. This
engine is the one a new hierarchy plugs into, by the methods ``gibbs_init``, ``gibbs_prior_variance``
and ``gibbs_update`` (:data:`sparsebayes.models.priors.CAPABILITIES`), and optionally
``gibbs_global_step(key, aux, log_marginal)``: a move of the hierarchy's global scale given the data
with β integrated out (``log_marginal(v)``, :func:`~.gibbs_beta.log_marginal`), made before β is
drawn, so that the pair is drawn as a block (Johndrow, Orenstein & Bhattacharya 2020; the horseshoe's
:class:`~sparsebayes.models.priors.horseshoe.BlockedTauHorseshoe`). Hierarchies without it sweep as before.

The same sweep's relatives, each its own module, all reached from :func:`run`:

* :mod:`.hierarchy_gibbs_variates`: a hierarchy that declares its standard variates (``gibbs_variates``,
  ``gibbs_update_from``: the Laplace prior, and with it Park & Casella's Bayesian Lasso,
  :mod:`sparsebayes.inference.engines.bayesian_lasso`) sweeps from variates drawn ahead (:func:`run`
  with ``variates=``): NumPy's generators on a CPU, no sampler in the compiled sweep;
* :mod:`.hierarchy_gibbs_augmented`: other likelihoods (:func:`run` with ``likelihood=``) by their
  conjugate augmentation: probit, logistic and negative binomial (Pólya-Gamma), Student-t;
* :mod:`.hierarchy_gibbs_batch`: posterior means over a batch of data sets, one chain each.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from sparsebayes.models.likelihoods import conjugate_noise, make_likelihood
from sparsebayes.models.priors import require

from sparsebayes.inference.engines import driver, gibbs_beta

from sparsebayes.inference.engines.progress import bar_chunk, progress, show_progress
from sparsebayes.inference._validation import check_count, check_data, check_number, check_sampler_counts


class State(NamedTuple):
    """One chain's draw: the weights, σ² and the hierarchy's auxiliary variables (a dict by name)."""

    beta: jax.Array
    noise_var: jax.Array
    aux: dict


class Info(NamedTuple):
    """Per sweep: the Gaussian log likelihood of the data at the state (for ``log_likelihood`` and
    diagnostics), the log of the smallest prior variance (how deep the sweep shrank a weight) and
    whether the sweep was refused (:func:`guarded`: it left float64, and the chain stayed where it was)."""

    log_lik: jax.Array
    log_min_variance: jax.Array
    refused: jax.Array = False


class GibbsData(NamedTuple):
    """What every sweep reads: on the Bhattacharya path (``p > n``) ``X`` and ``y`` and no ``stats``;
    on the Rue path the :class:`~.gibbs_beta.GaussianStats` and no ``X``, ``y`` (a sweep never reads
    the data there); the degrees of freedom ``m`` on both."""

    X: jax.Array | None
    y: jax.Array | None
    stats: gibbs_beta.GaussianStats | None
    dof: jax.Array


def gibbs_data(X, y, dof, beta_draw="auto"):
    """The :class:`GibbsData` of centred ``(X, y)``: the β draw as the shape calls for
    (:func:`~.gibbs_beta.choose_method`; ``beta_draw`` may force one), and with it what the sweeps
    read: the sufficient statistics for Rue's draw (one pass over the data, then nothing of size
    ``n``), the data alone for Bhattacharya's (nothing ``p × p`` is formed)."""
    X, y = jnp.asarray(X), jnp.asarray(y)
    if gibbs_beta.choose_method(*X.shape, beta_draw) == "rue":
        return GibbsData(None, None, gibbs_beta.gaussian_stats(X, y), jnp.float64(dof))
    return GibbsData(X, y, None, jnp.float64(dof))




class NoisePrior(NamedTuple):
    """``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``: ``c = −1, d = 0`` flat (000 eq. 6), ``c = d = 0`` ``1/σ²``."""

    c: float = -1.0
    d: float = 0.0


#: The papers' flat prior on σ², the default.
FLAT = NoisePrior()


class GibbsModel(NamedTuple):
    """What a Gaussian sweep fits (:func:`step`, :func:`~.hierarchy_gibbs_variates.step_from`), the driver's ``model``
    (:mod:`.driver`): the hierarchy ``prior`` and the Gaussian likelihood's prior on σ², ``noise``
    (:class:`NoisePrior`)."""

    prior: object
    noise: NoisePrior = FLAT




def init(data, model, y_power, noise_var=None):
    """The start: with more degrees of freedom than weights, the near-least-squares anchor of the
    statistics for β and its residual variance for σ²; else (``p ≥ m``, where least squares
    interpolates and would start σ² at its floor, from which a chain climbs slowly) ``β = 0`` and σ²
    the mean square ``y_power`` of ``y``. A given ``noise_var`` replaces σ² (held fixed by
    :func:`step` with ``fixed_noise``); the hierarchy's own start for the auxiliary variables
    (``model``: a :class:`GibbsModel`)."""
    floor = 1e-12 * y_power + 1e-300
    p = data.stats.gram.shape[0] if data.stats is not None else data.X.shape[1]
    if data.stats is not None and p < float(data.dof):
        beta = data.stats.anchor
        start_var = jnp.maximum(data.stats.anchor_rss / jnp.maximum(data.dof, 1.0), floor)
    else:
        beta = jnp.zeros(p, jnp.float64)
        start_var = jnp.maximum(jnp.asarray(y_power, jnp.float64), floor)
    return State(beta, jnp.asarray(start_var if noise_var is None else noise_var, jnp.float64),
                 model.prior.gibbs_init(beta.shape[0]))


def step(state, data, model, *, key, scaled=False, fixed_noise=False, beta_draw="auto"):
    """One sweep of the three conditionals (module docstring) under ``model`` (a :class:`GibbsModel`),
    pure; returns ``(state, info)``. ``key``: the sweep's randomness, a PRNG key (:mod:`.driver`).
    ``beta_draw`` ``"cg"`` or a :class:`~.gibbs_beta.CG` (with ``data`` holding ``X``, ``y``): β by
    :func:`~.gibbs_beta.cg_draw`, warm-started at the chain's β; otherwise the draw ``data`` calls for."""
    prior, noise = model
    k_beta, k_noise, k_aux = jax.random.split(key, 3)
    dtype = state.beta.dtype
    tiny = jnp.finfo(dtype).tiny
    aux = state.aux
    use_cg = data.stats is None and gibbs_beta.choose_method(1, 1, beta_draw) == "cg"
    if hasattr(prior, "gibbs_global_step"):  # the global scale drawn with β integrated out, then β given it
        k_beta, k_global = jax.random.split(k_beta)

        def log_marginal(hv):
            vv = jnp.maximum(state.noise_var * hv if scaled else hv, tiny)
            if data.stats is not None:
                return gibbs_beta.log_marginal_from_gram(data.stats.gram, data.stats.Xty, vv, state.noise_var)
            return gibbs_beta.log_marginal(data.X, data.y, None, vv, state.noise_var,
                                           "auto" if use_cg else "bhattacharya")

        aux = prior.gibbs_global_step(k_global, aux, log_marginal)
    hierarchy_var = prior.gibbs_prior_variance(aux)
    v = jnp.maximum(state.noise_var * hierarchy_var if scaled else hierarchy_var, tiny)
    p = state.beta.shape[0]
    if data.stats is not None:  # Rue's draw and the residual from the statistics: O(p³), not O(n)
        beta = gibbs_beta.rue_draw_from_stats(jax.random.normal(k_beta, (p,), dtype), data.stats, v, state.noise_var)
        rss = gibbs_beta.stats_rss(data.stats, beta)
    elif use_cg:  # conjugate gradients from the chain's β: O(np) per iteration, nothing p × p or n × n
        k_p, k_n = jax.random.split(k_beta)
        opts = gibbs_beta.cg_options(beta_draw)
        beta = gibbs_beta.cg_draw(jax.random.normal(k_p, (p,), dtype), jax.random.normal(k_n, (data.X.shape[0],), dtype),
                                  data.X, data.y, None, v, state.noise_var, init=state.beta, tol=opts.tol,
                                  maxiter=opts.maxiter)
        rss = jnp.sum((data.y - data.X @ beta) ** 2)
    else:  # Bhattacharya's: O(n²p), nothing p × p
        k_p, k_n = jax.random.split(k_beta)
        beta = gibbs_beta.bhattacharya_draw(jax.random.normal(k_p, (p,), dtype),
                                            jax.random.normal(k_n, (data.X.shape[0],), dtype),
                                            data.X, data.y, None, v, state.noise_var)
        rss = jnp.sum((data.y - data.X @ beta) ** 2)
    noise_var = state.noise_var
    if not fixed_noise:
        shape = 0.5 * data.dof + noise.c
        rate = 0.5 * rss + noise.d
        if scaled:
            shape = shape + 0.5 * beta.shape[0]
            rate = rate + 0.5 * jnp.sum(beta**2 / jnp.maximum(hierarchy_var, tiny))
        noise_var = rate / jax.random.gamma(k_noise, shape, dtype=rss.dtype)
    aux = prior.gibbs_update(k_aux, beta / jnp.sqrt(noise_var) if scaled else beta, aux)
    log_lik = -0.5 * data.dof * jnp.log(2 * jnp.pi * noise_var) - 0.5 * rss / noise_var
    return guarded(State(beta, noise_var, aux), state, Info(log_lik, jnp.log(jnp.min(v))))


def guarded(new, old, info):
    """``(new, info)`` when the sweep stayed in float64, else ``(old, info)`` with ``info.refused`` set: a β
    or σ² that is NaN or infinite, or a NaN among the auxiliary variables (an infinite one can be a
    conditional's limit, e.g. a horseshoe scale), is a breakdown of the sweep's algebra. With ``p > n``
    and a vague prior on the global scale a chain can drift towards σ² → 0 and prior variances → ∞,
    where the β draw's Cholesky factor fails; the chain then stays where it was, and callers count the
    refusals (the draws after one no longer follow the posterior). Any state of named arrays and an
    ``aux`` dict: :class:`State` (β, σ²) and :class:`~.hierarchy_gibbs_augmented.AugmentedState` (β, the intercept, the
    likelihood's parameter) alike."""
    finite = [jnp.all(jnp.isfinite(leaf)) for name, leaf in new._asdict().items() if name != "aux"]
    no_nan = [~jnp.any(jnp.isnan(leaf)) for leaf in jax.tree_util.tree_leaves(new.aux)]
    ok = jnp.all(jnp.stack(finite + no_nan))
    kept = jax.tree_util.tree_map(lambda a, b: jnp.where(ok, a, b), new, old)
    return kept, info._replace(refused=~ok)


@partial(jax.jit, static_argnames=("scaled", "fixed_noise", "beta_draw"))
def run_sweeps(state, keys, data, prior, noise=FLAT, *, scaled=False, fixed_noise=False, beta_draw="auto"):
    """The jit boundary: one sweep per key of ``keys`` (sweep, chain, 2) for every chain of
    ``state`` (chain-major), ``vmap`` inside the ``scan``; returns ``(last state, every sweep's
    state and Info (sweep, chain, …))``. Compiled once per shape and hierarchy type: data, prior
    and noise prior are arguments."""
    chains_step = jax.vmap(lambda s, k, d, m: step(s, d, m, key=k, scaled=scaled, fixed_noise=fixed_noise,
                                                   beta_draw=beta_draw), in_axes=(0, 0, None, None))
    return trace(lambda s, d, m, k: chains_step(s, k, d, m), state, data, GibbsModel(prior, noise), keys)


def trace(chains_step, state, data, model, inputs):
    """The chain: :func:`~.driver.trace` of ``chains_step(state, data, model, inputs[t])`` (a sweep of
    every chain, with its settings bound) over the sweeps' randomness ``inputs`` (keys or variates,
    sweep-major); returns ``(last state, every sweep's state and Info)``, each stacked by sweep. A
    sampler's trace keeps every state, not only the step's info, as its draws."""

    def keep_state(s, d, m, u):
        new, info = chains_step(s, d, m, u)
        return new, (new, info)

    last, (states, infos) = driver.trace(keep_state, state, data, model, inputs=inputs)
    return last, states, infos


def run(X, y, prior, *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, fit_intercept=True,
        noise_prior=FLAT, noise_var=None, scaled=False, progress_bar=None, beta_draw="auto", likelihood=None,
        likelihood_param=None, intercept_scale=None, variates=None):
    """Draws of ``(β, σ², aux)`` (:class:`State`) and the sweeps' :class:`Info`, each with leading
    axes ``(chain, draw)``.

    ``likelihood``: ``None`` or the Gaussian (by name or object): this engine's Gaussian sweep below;
    any other likelihood with a conjugate augmentation (``"probit"``, ``"bernoulli_logistic"``,
    ``"student_t"``, ``"negative_binomial"`` or an object with ``gibbs_augment``): the augmented sweep
    of :func:`~.hierarchy_gibbs_augmented.run_augmented` (``likelihood_param``, ``intercept_scale`` are its,
    ``None``: its defaults; ``noise_prior``,
    ``noise_var`` and ``scaled`` are the Gaussian's and must stay at their defaults there).

    ``fit_intercept`` integrates a flat-prior intercept out (its conditional given the rest is
    ``N(ȳ − x̄ᵀβ, σ²/n)``); ``noise_prior`` is σ²'s prior, ``noise_var`` a value to hold σ² at
    instead, ``scaled`` the σ²-scaled prior variances (module docstring). ``progress_bar``: a tqdm
    bar over the sweeps (``None``: when standard error is a terminal); the sweeps then run in about
    20 compiled calls, with the same draws (every sweep's key is split from ``seed`` first).
    ``beta_draw``: ``"auto"`` (Rue's draw from sufficient statistics for ``p ≤ n``, Bhattacharya's
    for ``p > n``) or ``"rue"``, ``"bhattacharya"`` forced (:func:`gibbs_data`), or ``"cg"`` / a
    :class:`~.gibbs_beta.CG` (its tolerance and iterations): the prior-preconditioned conjugate
    gradient draw of Nishimura & Suchard (2023) from ``X`` at any shape, warm-started at each chain's β.

    ``variates``: ``None`` (default) draws every random number from JAX keys inside the sweeps (a
    sweep's key split from ``seed``); ``"auto"``, ``"numpy"`` or ``"device"`` reads them pre-drawn
    (:func:`~.hierarchy_gibbs_variates.run_with_variates`, :func:`~.hierarchy_gibbs_variates.step_from`) for a hierarchy that declares its standard variates
    (the Laplace prior: Park & Casella's Bayesian Lasso), with over-dispersed starts, and no Gamma
    sampler compiled into the sweep. The two give different draws of the same posterior.
    """
    if variates is not None:
        if likelihood is not None and not conjugate_noise(make_likelihood(likelihood)):
            raise ValueError("variates applies to the Gaussian likelihood; the augmented sweeps draw from keys")
        if noise_var is not None:
            raise ValueError("variates needs σ² drawn, not held (noise_var=None)")
        from sparsebayes.inference.engines.hierarchy_gibbs_variates import run_with_variates

        return run_with_variates(X, y, prior, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                                 seed=seed, fit_intercept=fit_intercept, noise_prior=noise_prior, scaled=scaled,
                                 progress_bar=progress_bar, beta_draw=beta_draw, variates=variates)[:2]
    if likelihood is not None and not conjugate_noise(make_likelihood(likelihood)):
        if noise_prior != FLAT or noise_var is not None or scaled:
            raise ValueError("noise_prior, noise_var and scaled apply to the Gaussian likelihood only; the "
                             f"{make_likelihood(likelihood).name!r} likelihood's own parameter has its own draw")
        from sparsebayes.inference.engines.hierarchy_gibbs_augmented import run_augmented

        scale = {} if intercept_scale is None else {"intercept_scale": intercept_scale}
        return run_augmented(X, y, prior, likelihood, num_warmup=num_warmup, num_samples=num_samples,
                             num_chains=num_chains, seed=seed, fit_intercept=fit_intercept,
                             likelihood_param=likelihood_param, progress_bar=progress_bar, beta_draw=beta_draw,
                             **scale)
    require(prior, "gibbs")
    gibbs_beta.choose_method(1, 1, beta_draw)  # a ValueError for an unknown draw, before the data checks
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    for name, value in zip(("c", "d"), noise_prior):
        check_number(name, value, -1.0 if name == "c" else 0.0)
    if noise_var is not None:
        check_number("noise_var", noise_var, 0.0, strict=True)
    X, y = check_data(X, y, min_samples=3)
    X = np.ascontiguousarray(X)  # a DataFrame's column-major values: the same sums, so the same draws
    if fit_intercept:
        X, y = X - X.mean(axis=0), y - y.mean()
    dof = X.shape[0] - (1 if fit_intercept else 0)
    if noise_var is None and 0.5 * dof + noise_prior.c + (0.5 * X.shape[1] if scaled else 0.0) <= 0:
        raise ValueError(f"σ²'s conditional is improper with {dof} degrees of freedom and c = {noise_prior.c}")
    data = gibbs_data(X, y, dof, beta_draw)
    noise = NoisePrior(*(jnp.float64(v) for v in noise_prior))
    start = init(data, GibbsModel(prior, noise), float(np.mean(y**2)), noise_var)
    state = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (num_chains, *jnp.shape(a))), start)
    total = num_warmup + num_samples
    keys = sweep_keys(seed, num_chains, total)
    extra = {} if gibbs_beta.choose_method(1, 1, beta_draw) != "cg" else {"beta_draw": beta_draw}
    return drive(lambda st, k: run_sweeps(st, k, data, prior, noise, scaled=bool(scaled),
                                           fixed_noise=noise_var is not None, **extra),
                  state, keys, num_warmup, progress_bar)


#: Sweeps per compiled call without a progress bar (a shorter run: the next power of two above its
#: length), so that every run of a shape calls one program whatever its number of sweeps.
CALL_SWEEPS = 512


def call_length(total, show):
    """Sweeps per compiled call of :func:`drive`: about ``total / 20`` with a bar, else
    :data:`CALL_SWEEPS` or the next power of two ``≥ total`` when that is smaller."""
    if show:
        return bar_chunk(total, True)
    return min(CALL_SWEEPS, 1 << max(0, (total - 1).bit_length()))


def drive(sweeps, state, keys, num_warmup, progress_bar):
    """Run ``sweeps(state, keys)`` (a jitted :func:`run_sweeps`-like call) over ``keys`` (sweep, chain, 2)
    in calls of :func:`call_length` sweeps each, with a progress bar between them; the last call's keys
    are padded with copies of its last key and its extra sweeps dropped (they come after every kept one),
    so that one program serves any number of sweeps. The same draws however the sweeps are cut (every
    sweep's key is split first). Returns the draws after the warm-up, each ``(chain, draw, …)``."""
    total = keys.shape[0]
    show = show_progress(progress_bar)
    size = call_length(total, show)
    states, infos = [], []
    keys = np.asarray(keys)  # cut, padded and trimmed in NumPy: each JAX slice would compile a program of its own
    with progress(total, "gibbs", show) as bar:
        for start in range(0, total, size):
            part = keys[start:start + size]
            m = part.shape[0]
            if m < size:
                part = np.concatenate([part, np.broadcast_to(part[-1:], (size - m, *part.shape[1:]))])
            state, s, i = sweeps(state, part)
            states.append(jax.tree_util.tree_map(lambda a: np.asarray(a)[:m], s))
            infos.append(jax.tree_util.tree_map(lambda a: np.asarray(a)[:m], i))
            bar.update(m)

    def kept(parts):  # the draws after the warm-up, (chain, draw, …)
        return jax.tree_util.tree_map(lambda *a: np.swapaxes(np.concatenate(a)[num_warmup:], 0, 1), *parts)

    return kept(states), kept(infos)


def sweep_keys(seed, num_chains, total):
    """Every sweep's key, split from ``seed`` first (the same draws whatever the chunking): (sweep, chain, 2)."""
    return _split_sweeps(jax.random.PRNGKey(seed), num_chains, total)


@partial(jax.jit, static_argnums=(1, 2))
def _split_sweeps(key, num_chains, total):
    """:func:`sweep_keys`'s splits as one program (eagerly, each of its three steps compiled one)."""
    chain_keys = jax.random.split(key, num_chains)
    return jnp.swapaxes(jax.vmap(lambda k: jax.random.split(k, total))(chain_keys), 0, 1)
