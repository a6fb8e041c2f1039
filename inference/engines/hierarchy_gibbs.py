"""Gibbs sampling for linear regression under any hierarchy with conjugate conditionals.

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

Other likelihoods (:func:`run_augmented`, or :func:`run` with ``likelihood=``) by their conjugate
augmentation (the likelihood's ``gibbs_augment``, :mod:`.gibbs_augment`): probit (Albert & Chib 1993),
logistic and negative binomial (Pólya-Gamma; Polson, Scott & Windle 2013), Student-t (Gamma scales).
A sweep draws ``(z, ω)`` given ``η``, then ``(b₀, β)`` from the pseudo-model ``z ~ N(η, 1/ω)`` by the
same β draws (unit noise variance; the intercept one more column under ``N(0, 10²)``), the hierarchy's
conditionals, and the likelihood's own parameter (``gibbs_param_step``). The Poisson has no
conjugate augmentation and stays with NUTS.

The engine contract (:mod:`.driver`): :class:`State`, :class:`Info`, ``init(data, model, ...)``
(:func:`init`) and the pure ``step(state, data, model, *, key, ...)`` (:func:`step`; :func:`step_from`
with ``variates=`` and :func:`augmented_step` in the same slots), ``model`` a :class:`GibbsModel` or
:class:`AugmentedModel` (hierarchy and likelihood); the chain is :func:`trace`, the driver's scan over
the sweeps' keys or variates, chains by ``vmap``, inside the jit boundaries :func:`run_sweeps`,
:func:`run_augmented_sweeps` and :func:`run_from_variates`; :func:`run` checks the data and drives
it, in about 20 compiled calls with a progress bar. A hierarchy that declares its standard variates
(``gibbs_variates``, ``gibbs_update_from``: the Laplace prior, and with it Park & Casella's Bayesian Lasso,
:mod:`sparsebayes.inference.engines.bayesian_lasso`) can instead sweep from variates drawn
ahead (:func:`run` with ``variates=``, :func:`step_from`): NumPy's generators on a CPU, no sampler in the
compiled sweep. This engine is the one a new hierarchy plugs into, by the methods ``gibbs_init``,
``gibbs_prior_variance`` and ``gibbs_update`` (:data:`sparsebayes.models.priors.CAPABILITIES`), and
optionally ``gibbs_global_step(key, aux, log_marginal)``: a move of the hierarchy's global scale given the data with β integrated out
(``log_marginal(v)``, :func:`~.gibbs_beta.log_marginal`), made before β is drawn, so that the pair is
drawn as a block (Johndrow, Orenstein & Bhattacharya 2020; the horseshoe's
:class:`~sparsebayes.models.priors.horseshoe.BlockedTauHorseshoe`). Hierarchies without it sweep as before.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from sparsebayes.models._registry import missing_pieces
from sparsebayes.models.likelihoods import LIKELIHOOD_CAPABILITIES, conjugate_noise, make_likelihood
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


#: The prior sd of the intercept under a non-Gaussian likelihood (:func:`run_augmented`), where it
#: cannot be integrated out by centring: ``b₀ ~ N(0, 10²)``, wide on the scale of a linear predictor.
INTERCEPT_SCALE = 10.0


class NoisePrior(NamedTuple):
    """``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``: ``c = −1, d = 0`` flat (000 eq. 6), ``c = d = 0`` ``1/σ²``."""

    c: float = -1.0
    d: float = 0.0


#: The papers' flat prior on σ², the default.
FLAT = NoisePrior()


class GibbsModel(NamedTuple):
    """What a Gaussian sweep fits (:func:`step`, :func:`step_from`), the driver's ``model``
    (:mod:`.driver`): the hierarchy ``prior`` and the Gaussian likelihood's prior on σ², ``noise``
    (:class:`NoisePrior`)."""

    prior: object
    noise: NoisePrior = FLAT


class AugmentedModel(NamedTuple):
    """What an augmented sweep fits (:func:`augmented_step`), the driver's ``model``: the hierarchy
    ``prior`` and the ``likelihood`` with a conjugate augmentation."""

    prior: object
    likelihood: object


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
    ``aux`` dict: :class:`State` (β, σ²) and :class:`AugmentedState` (β, the intercept, the
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
        likelihood_param=None, intercept_scale=INTERCEPT_SCALE, variates=None):
    """Draws of ``(β, σ², aux)`` (:class:`State`) and the sweeps' :class:`Info`, each with leading
    axes ``(chain, draw)``.

    ``likelihood``: ``None`` or the Gaussian (by name or object): this engine's Gaussian sweep below;
    any other likelihood with a conjugate augmentation (``"probit"``, ``"bernoulli_logistic"``,
    ``"student_t"``, ``"negative_binomial"`` or an object with ``gibbs_augment``): the augmented sweep
    of :func:`run_augmented` (``likelihood_param``, ``intercept_scale`` are its; ``noise_prior``,
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
    (:func:`run_with_variates`, :func:`step_from`) for a hierarchy that declares its standard variates
    (the Laplace prior: Park & Casella's Bayesian Lasso), with over-dispersed starts, and no Gamma
    sampler compiled into the sweep. The two give different draws of the same posterior.
    """
    if variates is not None:
        if likelihood is not None and not conjugate_noise(make_likelihood(likelihood)):
            raise ValueError("variates applies to the Gaussian likelihood; the augmented sweeps draw from keys")
        if noise_var is not None:
            raise ValueError("variates needs σ² drawn, not held (noise_var=None)")
        return run_with_variates(X, y, prior, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                                 seed=seed, fit_intercept=fit_intercept, noise_prior=noise_prior, scaled=scaled,
                                 progress_bar=progress_bar, beta_draw=beta_draw, variates=variates)[:2]
    if likelihood is not None and not conjugate_noise(make_likelihood(likelihood)):
        if noise_prior != FLAT or noise_var is not None or scaled:
            raise ValueError("noise_prior, noise_var and scaled apply to the Gaussian likelihood only; the "
                             f"{make_likelihood(likelihood).name!r} likelihood's own parameter has its own draw")
        return run_augmented(X, y, prior, likelihood, num_warmup=num_warmup, num_samples=num_samples,
                             num_chains=num_chains, seed=seed, fit_intercept=fit_intercept,
                             likelihood_param=likelihood_param, intercept_scale=intercept_scale,
                             progress_bar=progress_bar, beta_draw=beta_draw)
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
    keys = _sweep_keys(seed, num_chains, total)
    extra = {} if gibbs_beta.choose_method(1, 1, beta_draw) != "cg" else {"beta_draw": beta_draw}
    return _drive(lambda st, k: run_sweeps(st, k, data, prior, noise, scaled=bool(scaled),
                                           fixed_noise=noise_var is not None, **extra),
                  state, keys, num_warmup, progress_bar)


#: Sweeps per compiled call without a progress bar (a shorter run: the next power of two above its
#: length), so that every run of a shape calls one program whatever its number of sweeps.
CALL_SWEEPS = 512


def call_length(total, show):
    """Sweeps per compiled call of :func:`_drive`: about ``total / 20`` with a bar, else
    :data:`CALL_SWEEPS` or the next power of two ``≥ total`` when that is smaller."""
    if show:
        return bar_chunk(total, True)
    return min(CALL_SWEEPS, 1 << max(0, (total - 1).bit_length()))


def _drive(sweeps, state, keys, num_warmup, progress_bar):
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


def _sweep_keys(seed, num_chains, total):
    """Every sweep's key, split from ``seed`` first (the same draws whatever the chunking): (sweep, chain, 2)."""
    return _split_sweeps(jax.random.PRNGKey(seed), num_chains, total)


@partial(jax.jit, static_argnums=(1, 2))
def _split_sweeps(key, num_chains, total):
    """:func:`_sweep_keys`'s splits as one program (eagerly, each of its three steps compiled one)."""
    chain_keys = jax.random.split(key, num_chains)
    return jnp.swapaxes(jax.vmap(lambda k: jax.random.split(k, total))(chain_keys), 0, 1)


# --- Non-Gaussian likelihoods by data augmentation ----------------------------------------------


class AugmentedState(NamedTuple):
    """One chain's draw under an augmented likelihood: the weights, the intercept (0 without one),
    the likelihood's own parameter (its ``params``: the Student-t's ``s²``, the negative binomial's
    dispersion; 1 and unused for probit and logistic) and the hierarchy's auxiliary variables."""

    beta: jax.Array
    intercept: jax.Array
    param: jax.Array
    aux: dict


class AugmentedData(NamedTuple):
    """What an augmented sweep reads: the design with a leading column of ones when there is an
    intercept, the response, and the intercept's prior variance (shape (1,), or (0,) without one)."""

    design: jax.Array
    y: jax.Array
    lead_var: jax.Array


def require_gibbs_likelihood(likelihood):
    """``likelihood`` if it has a conjugate augmentation (:data:`LIKELIHOOD_CAPABILITIES` ``"gibbs"``),
    else a ``ValueError`` that says so and points to NUTS (e.g. the Poisson)."""
    missing = missing_pieces(likelihood, LIKELIHOOD_CAPABILITIES["gibbs"])
    if missing:
        family = type(likelihood).__name__.removesuffix("Likelihood") or likelihood.name
        raise ValueError(f"{family} has no conjugate augmentation: use method='nuts' (the Gibbs engine needs "
                         f"{', '.join(LIKELIHOOD_CAPABILITIES['gibbs'])}; missing: {', '.join(missing)})")
    return likelihood


def augmented_step(state, data, model, *, key, beta_draw="auto"):
    """One sweep under ``model`` (an :class:`AugmentedModel`: the hierarchy and a likelihood with a
    conjugate augmentation), pure; returns ``(state, info)``. ``key``: the sweep's randomness.

    With ``η = b₀ + Xβ``: ``(z, ω) | y, η, θ`` by ``likelihood.gibbs_augment`` (Albert & Chib 1993;
    Polson, Scott & Windle 2013; the t's scale mixture), so that ``z ~ N(η, 1/ω)``; then
    ``(b₀, β) | z, ω, v ~ N(A⁻¹XᵀΩz, A⁻¹)``, ``A = XᵀΩX + diag(1/v)`` with ``v₀`` the intercept's
    prior variance (:func:`~.gibbs_beta.draw_beta`, unit noise variance: the likelihood's scale is in
    ``ω``); the hierarchy's conditionals given β; and the likelihood's own parameter θ by its
    ``gibbs_param_step`` (given the new ``η`` and the sweep's ``ω``), where it has one. A likelihood's
    ``gibbs_rescale`` (a parameter expansion: the probit's PX-DA) moves ``z`` given ``v`` before β's draw."""
    prior, likelihood = model
    k_aug, k_beta, k_aux, k_param = jax.random.split(key, 4)
    dtype = state.beta.dtype
    eta = data.design @ jnp.concatenate([jnp.broadcast_to(state.intercept, data.lead_var.shape), state.beta])
    z, omega = likelihood.gibbs_augment(k_aug, data.y, eta, state.param)
    aux = state.aux
    if hasattr(prior, "gibbs_global_step"):  # the global scale given (z, ω), β integrated out
        k_beta, k_global = jax.random.split(k_beta)
        aux = prior.gibbs_global_step(k_global, aux, lambda hv: gibbs_beta.log_marginal(
            data.design, z, omega, jnp.concatenate([data.lead_var, jnp.maximum(hv, jnp.finfo(dtype).tiny)]),
            jnp.ones((), dtype), beta_draw))
    v = jnp.maximum(prior.gibbs_prior_variance(aux), jnp.finfo(dtype).tiny)
    rescale = getattr(likelihood, "gibbs_rescale", None)  # a parameter expansion of the latents given v (PX-DA)
    if rescale is not None:
        k_beta, k_px = jax.random.split(k_beta)
        z = rescale(k_px, z, data.design, jnp.concatenate([data.lead_var, v]))
    coef = gibbs_beta.draw_beta(k_beta, data.design, z, omega, jnp.concatenate([data.lead_var, v]),
                                jnp.ones((), dtype), beta_draw,
                                init=jnp.concatenate([jnp.broadcast_to(state.intercept, data.lead_var.shape),
                                                      state.beta]))
    lead = data.lead_var.shape[0]
    beta, intercept = coef[lead:], jnp.sum(coef[:lead])
    aux = prior.gibbs_update(k_aux, beta, aux)
    eta = data.design @ coef
    param_step = getattr(likelihood, "gibbs_param_step", None)
    param = state.param if param_step is None else param_step(k_param, data.y, eta, state.param, omega)
    log_lik = jnp.sum(likelihood.log_lik(data.y, eta, param))
    return guarded(AugmentedState(beta, intercept, param, aux), state, Info(log_lik, jnp.log(jnp.min(v))))


@partial(jax.jit, static_argnames=("likelihood", "beta_draw"))
def run_augmented_sweeps(state, keys, data, prior, likelihood, beta_draw="auto"):
    """The jit boundary of :func:`augmented_step`, as :func:`run_sweeps` (``likelihood`` static).

    On Rue's path a sweep that a chain's :func:`guarded` refused is drawn again for that chain, from
    the same key, with the QR draw (:func:`~.gibbs_beta.qr_draw`): forming ``HᵀΩH`` rounds by
    ``ε‖Ω^½H‖²``, which on collinear columns in large units swamps the prior precision of the null
    direction, so Rue's Cholesky factor fails where the posterior is well defined. The retry runs
    only when some chain was refused (a ``cond`` outside the chains' ``vmap``), and every other chain
    keeps its Cholesky draw bit for bit; a sweep the QR draw leaves non-finite too stays refused."""
    def chains(draw):
        return jax.vmap(lambda s, k, d, m: augmented_step(s, d, m, key=k, beta_draw=draw), in_axes=(0, 0, None, None))

    chains_step, qr_step = chains(beta_draw), chains("qr")
    n, p = data.design.shape
    retry = gibbs_beta.choose_method(n, p, beta_draw) == "rue"

    def with_qr(old, k, d, m, new, info):  # each refused chain's sweep again by QR, the others as they were
        again = qr_step(old, k, d, m)

        def pick(a, b):
            return jnp.where(info.refused.reshape(info.refused.shape + (1,) * (jnp.ndim(a) - 1)), a, b)

        return jax.tree_util.tree_map(pick, again, (new, info))

    def sweep(s, d, m, k):
        new, info = chains_step(s, k, d, m)
        if retry:
            new, info = jax.lax.cond(jnp.any(info.refused), lambda o, kk, a, b: with_qr(o, kk, d, m, a, b),
                                     lambda o, kk, a, b: (a, b), s, k, new, info)
        return new, info

    return trace(sweep, state, data, AugmentedModel(prior, likelihood), keys)


def _check_support(likelihood, y):
    support = getattr(likelihood, "support", "real")
    if support == "binary" and not np.all((y == 0) | (y == 1)):
        raise ValueError(f"y must hold only 0 and 1 for the {likelihood.name!r} likelihood")
    if support == "counts" and not np.all((y >= 0) & (y == np.round(y))):
        raise ValueError(f"y must hold non-negative integer counts for the {likelihood.name!r} likelihood")


def run_augmented(X, y, prior, likelihood, *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0,
                  fit_intercept=True, likelihood_param=None, intercept_scale=INTERCEPT_SCALE, progress_bar=None,
                  beta_draw="auto"):
    """Gibbs draws of ``(β, b₀, θ, aux)`` (:class:`AugmentedState`) and the sweeps' :class:`Info` (the
    log likelihood ``Σ log p(y_i | η_i, θ)`` at each draw), leading axes ``(chain, draw)``, for
    ``y_i ~ likelihood(η_i = b₀ + x_iᵀβ, θ)`` under the hierarchy ``prior`` (:func:`augmented_step`).

    The intercept has the prior ``b₀ ~ N(0, intercept_scale²)`` and is drawn with β as one more
    column of ones (without the Gaussian's centring, which integrates it out only there);
    ``fit_intercept=False``: no intercept. ``likelihood_param``: θ's start (or its fixed value for
    a likelihood without ``gibbs_param_step``), default ``likelihood.init_params(y)``, 1 for those
    without a parameter. The Student-t's ``s²`` has Jeffreys' prior, the negative binomial's
    dispersion Gamma(1, 0.1) (their ``gibbs_param_step``). Chains start at ``β = 0``, ``b₀ = 0``.
    ``beta_draw`` as :func:`run`'s: Rue's draw for ``p + 1 ≤ n``, else Bhattacharya's, or CG
    warm-started at the chain's ``(b₀, β)``.
    """
    likelihood = require_gibbs_likelihood(make_likelihood(likelihood))
    require(prior, "gibbs")
    gibbs_beta.choose_method(1, 1, beta_draw)
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    check_number("intercept_scale", intercept_scale, 0.0, strict=True)
    X, y = check_data(X, y, min_samples=3)
    _check_support(likelihood, y)
    if likelihood_param is None:
        start_param = float(likelihood.init_params(y)) if getattr(likelihood, "param_name", None) else 1.0
    else:
        check_number("likelihood_param", likelihood_param, 0.0, strict=True)
        start_param = float(likelihood_param)
    n, p = X.shape
    design = np.hstack([np.ones((n, 1)), X]) if fit_intercept else X
    lead_var = np.full(1 if fit_intercept else 0, float(intercept_scale) ** 2)
    data = AugmentedData(jnp.asarray(design, jnp.float64), jnp.asarray(y, jnp.float64), jnp.asarray(lead_var))
    start = AugmentedState(jnp.zeros(p, jnp.float64), jnp.zeros((), jnp.float64),
                           jnp.asarray(start_param, jnp.float64), prior.gibbs_init(p))
    state = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (num_chains, *jnp.shape(a))), start)
    keys = _sweep_keys(seed, num_chains, num_warmup + num_samples)
    return _drive(lambda st, k: run_augmented_sweeps(st, k, data, prior, likelihood, beta_draw),
                  state, keys, num_warmup, progress_bar)


def augmented_inference_data(states, infos, X, y, likelihood, prior=None, *, fit_intercept=True, coords=None,
                             seed=0, log_likelihood=True):
    """ArviZ ``InferenceData`` of :func:`run_augmented`'s draws on the data ``(X, y)`` they were drawn
    on: ``posterior`` ``beta`` (dim ``basis``), ``intercept`` (with ``fit_intercept``), the likelihood's
    parameter under its ``param_name`` (where it has one) and, where the hierarchy names them
    (``gibbs_twin_sites``), its NumPyro twin's sites; ``sample_stats`` ``log_lik`` and
    ``log_min_variance``; ``log_likelihood`` ``y`` (dim ``obs``: ``log p(y_i | η_i, θ)`` per draw and
    row, for LOO); ``observed_data`` ``y``; ``posterior_predictive`` ``y`` (``likelihood.sample`` at
    each draw, keys from ``seed``). ``coords``: e.g. ``{"basis": names}``. ``log_likelihood=False``: no
    ``log_likelihood`` group (``S × n`` floats; :mod:`sparsebayes.inference.posterior.pointwise_loglik` computes
    the same values from the draws when LOO asks)."""
    from sparsebayes.inference.posterior.arviz_compat import from_dict

    likelihood = make_likelihood(likelihood)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    beta, intercept, param = np.asarray(states.beta), np.asarray(states.intercept), np.asarray(states.param)
    eta = np.einsum("cdp,np->cdn", beta, X) + (intercept[..., None] if fit_intercept else 0.0)
    post = {"beta": beta}
    if fit_intercept:
        post["intercept"] = intercept
    param_name = getattr(likelihood, "param_name", None)
    if param_name:
        post[param_name] = param
    if prior is not None and hasattr(prior, "gibbs_twin_sites"):
        post.update(prior.gibbs_twin_sites(beta, states.aux))
    loglik = (np.asarray(likelihood.log_lik(jnp.asarray(y), jnp.asarray(eta), jnp.asarray(param)[..., None]))
              if log_likelihood else None)
    keys = jax.random.split(jax.random.PRNGKey(seed), eta.shape[0] * eta.shape[1])
    predictive = jax.vmap(lambda k, e, t: likelihood.sample(k, e, t))(
        keys, jnp.asarray(eta.reshape(-1, eta.shape[-1])), jnp.asarray(param.reshape(-1)))
    groups = {"posterior": post,
              "sample_stats": {"log_lik": np.asarray(infos.log_lik), "log_min_variance": np.asarray(infos.log_min_variance)},
              "observed_data": {"y": y},
              "posterior_predictive": {"y": np.asarray(predictive, dtype=np.float64).reshape(eta.shape)}}
    if log_likelihood:
        groups["log_likelihood"] = {"y": loglik}
    return from_dict(groups,
                     coords=coords,
                     dims={**{k: ["basis"] for k, v in post.items() if np.ndim(v) == 3}, "y": ["obs"]})


# --- Sweeps from pre-drawn standard variates ------------------------------------------------------


class VariateData(NamedTuple):
    """What a sweep from pre-drawn variates (:func:`step_from`) reads of centred ``(X, y)``, possibly
    padded with zero rows (which change no draw: they add nothing to ``XᵀX``, ``Xᵀy`` or the residual,
    and their Bhattacharya rows decouple): ``X`` and ``y``; the bordered Gram matrix on Rue's path
    (:func:`~.gibbs_beta.bordered_gram`; ``None`` on Bhattacharya's, where it would be the one ``p × p``
    array); ``X = QR`` (reduced) with ``Qᵀy`` and ``‖y − QQᵀy‖²``, so that
    ``‖y − Xβ‖² = ‖Qᵀy − Rβ‖² + ‖y − QQᵀy‖²`` costs ``min(n, p)·p``, a sum of two non-negative terms;
    and the degrees of freedom ``m``."""
    X: jax.Array
    y: jax.Array
    bordered: jax.Array | None
    R: jax.Array
    Qty: jax.Array
    rss_perp: jax.Array
    dof: jax.Array


def variate_data(X, y, dof, use_rue):
    """The :class:`VariateData` of ``(X, y)``, set up once per run (inside its first program)."""
    Q, R = jnp.linalg.qr(X)
    Qty = Q.T @ y
    return VariateData(X, y, gibbs_beta.bordered_gram(X, y) if use_rue else None, R, Qty,
                       jnp.sum((y - Q @ Qty) ** 2), dof)


def residual_sum_of_squares(data, beta):
    """``‖y − Xβ‖²`` through the QR factor of :class:`VariateData`: ``‖Qᵀy − Rβ‖² + ‖y − QQᵀy‖²``."""
    return data.rss_perp + jnp.sum((data.Qty - data.R @ beta) ** 2)


def step_from(state, data, model, *, variates, scaled=False):
    """:func:`step` with every random number read from ``variates`` (one sweep's
    :class:`~.gibbs_variates.SweepVariates`: the sweep's randomness, :mod:`.driver`) under ``model``
    (a :class:`GibbsModel`), pure; returns ``(state, info)``.

    The same three conditionals (module docstring): β by Rue's draw from the bordered Gram matrix
    (:func:`~.gibbs_beta.rue_draw_bordered`, ``p ≤ n``) or Bhattacharya's (``p > n``), from the
    variates' normals; ``σ² = rate / G`` with ``G`` the standard ``Gamma(m/2 + c [+ p/2])`` variate;
    the hierarchy's auxiliary variables by ``prior.gibbs_update_from(variates.aux, β, aux)``, the
    transform of the standard variates it declared (``gibbs_variates``). No random number is drawn
    inside the compiled sweep, so a run compiles no Gamma sampler and the variates come from the
    faster generator where the engine runs (:mod:`.gibbs_variates`)."""
    prior, noise = model
    tiny = jnp.finfo(state.beta.dtype).tiny
    hierarchy_var = jnp.maximum(prior.gibbs_prior_variance(state.aux), tiny)
    v = jnp.maximum(state.noise_var * hierarchy_var if scaled else hierarchy_var, tiny)
    if data.bordered is not None:  # σ²/v: 1/τ when scaled, and so free of σ² there
        relative = 1.0 / hierarchy_var if scaled else state.noise_var / v
        beta = gibbs_beta.rue_draw_bordered(variates.beta_normal, data.bordered, relative, state.noise_var)
    else:
        beta = gibbs_beta.bhattacharya_draw(variates.beta_normal, variates.row_normal, data.X, data.y, None, v,
                                            state.noise_var)
    rss = residual_sum_of_squares(data, beta)
    rate = 0.5 * rss + noise.d
    if scaled:
        rate = rate + 0.5 * jnp.sum(beta**2 / hierarchy_var)
    noise_var = rate / variates.noise_gamma
    aux = prior.gibbs_update_from(variates.aux, beta / jnp.sqrt(noise_var) if scaled else beta, state.aux)
    log_lik = -0.5 * data.dof * jnp.log(2 * jnp.pi * noise_var) - 0.5 * rss / noise_var
    return guarded(State(beta, noise_var, aux), state, Info(log_lik, jnp.log(jnp.min(v))))


def _sweeps_from_variates(state, variates, data, prior, noise, scaled):
    """The sweeps of ``variates`` (sweep-major) for every chain of ``state`` (``vmap`` inside the
    ``scan``) on the set-up ``data``: ``(last state, every sweep's state and Info (sweep, chain, …))``."""
    chains_step = jax.vmap(lambda s, d, m, u: step_from(s, d, m, variates=u, scaled=scaled),
                           in_axes=(0, None, None, 0))
    return trace(chains_step, state, data, GibbsModel(prior, noise), variates)


@partial(jax.jit, static_argnames=("scaled", "use_rue"))
def run_from_variates(state, variates, X, y, dof, prior, noise=FLAT, *, scaled=False, use_rue=True):
    """The jit boundary of :func:`step_from` for a run of one call: :func:`variate_data` of ``(X, y)`` and
    the sweeps of ``variates`` in one program, so that a first fit compiles one program; returns ``(last
    state, every sweep's state and Info (sweep, chain, …))``. A run cut into several calls (a progress
    bar, the variates' budget) sets the data up once instead (:func:`run_on_variate_data`): the set-up
    is ``O(np²)`` and a copy of ``X``, each sweep ``O(p³)`` on Rue's path, independent of ``n``."""
    return _sweeps_from_variates(state, variates, variate_data(X, y, dof, use_rue), prior, noise, scaled)


#: :func:`variate_data` as its own program, for runs cut into several calls.
variate_data_jit = jax.jit(lambda X, y, dof, use_rue: variate_data(X, y, dof, use_rue), static_argnums=(3,))


@partial(jax.jit, static_argnames=("scaled",))
def run_on_variate_data(state, variates, data, prior, noise=FLAT, *, scaled=False):
    """:func:`run_from_variates` on data set up once (:func:`variate_data_jit`): the calls of a run cut into
    several take the same sweeps as one call, and none of them reads ``X`` again."""
    return _sweeps_from_variates(state, variates, data, prior, noise, scaled)


def can_take_variates(prior, noise_var=None, beta_draw="auto"):
    """Whether :func:`run` can sweep ``prior`` from pre-drawn variates: the hierarchy declares them
    (``gibbs_variates``, ``gibbs_update_from``) and has no ``gibbs_global_step`` (a slice move, whose
    number of draws is not known ahead), σ² is drawn, not held, and β by a direct draw (not CG)."""
    return (hasattr(prior, "gibbs_variates") and hasattr(prior, "gibbs_update_from")
            and not hasattr(prior, "gibbs_global_step") and noise_var is None
            and gibbs_beta.choose_method(1, 1, beta_draw) in ("auto", "rue", "bhattacharya"))


#: Up to this many features :func:`dispersed_start` solves its ridge fit in the ``p × p`` (primal)
#: form; above and for ``p > n``, in the ``n × n`` (dual) form, the same fit without a ``p × p`` array.
PRIMAL_START_MAX = 1024


def ridge_start(X, y):
    """The ridge fit ``(XᵀX + εI)⁻¹Xᵀy = Xᵀ(XXᵀ + εI)⁻¹y``, ``ε = 10⁻³ tr(XᵀX)/p + 10⁻¹²``: by the
    first (primal) form when ``p ≤ n`` or ``p ≤`` :data:`PRIMAL_START_MAX`, else by the second
    (dual, ``n × n``: no ``p × p`` array at large ``p``). At small ``p`` the primal form is kept
    whatever ``n``, so the starts, and with them the draws at a seed, do not depend on the form."""
    n, p = X.shape
    if p <= max(n, PRIMAL_START_MAX):
        G = X.T @ X
        return np.linalg.solve(G + np.eye(p) * (1e-3 * np.trace(G) / p + 1e-12), X.T @ y)
    eps = 1e-3 * np.sum(X * X) / p + 1e-12
    return X.T @ np.linalg.solve(X @ X.T + eps * np.eye(n), y)


def dispersed_start(X, y, prior, num_chains, rng):
    """Over-dispersed starts around a ridge fit (:func:`ridge_start`), different per chain (``rng`` a
    NumPy Generator): ``β = β_ridge ∘ (1 + 0.1 z)``, σ² the ridge residual's variance (floored), the
    hierarchy's own start for its auxiliary variables. Chains that start apart make R-hat meaningful."""
    p = X.shape[1]
    ridge = ridge_start(X, y)
    s2 = max(np.var(y - X @ ridge), 1e-6 * np.var(y) + 1e-12)
    beta = ridge[None, :] * (1.0 + 0.1 * rng.standard_normal((num_chains, p)))
    aux = jax.tree_util.tree_map(lambda a: np.broadcast_to(np.asarray(a), (num_chains, *np.shape(a))).copy(),
                                 prior.gibbs_init(p))
    return State(beta, np.full(num_chains, s2), aux)


def _variate_chunk(total, per_sweep, show, budget):
    """Sweeps per call: all of them, or about a twentieth with a progress bar, and at most as many as
    keep one call's variates within ``budget`` numbers."""
    return max(1, min(bar_chunk(total, show), budget // max(per_sweep, 1)))


def _variate_setup(X, y, prior, noise_prior, scaled, fit_intercept, beta_draw):
    """The centred, padded data of a variate run and its plan's sizes: ``(Xp, yp, dof, n, rows,
    use_rue, noise_shape)``. Zero rows pad ``n`` up to a shared size (:func:`~._shapes.bucket`), so a
    new ``n`` mostly reuses the compiled sweeps."""
    from sparsebayes.inference.engines._shapes import bucket, pad_to

    if fit_intercept:
        X, y = X - X.mean(axis=-2, keepdims=True), y - y.mean(axis=-1, keepdims=True)
    n, p = X.shape[-2:]
    dof = n - (1 if fit_intercept else 0)
    use_rue = gibbs_beta.choose_method(n, p, beta_draw) == "rue"
    rows = bucket(n, per_octave=4)
    Xp, yp = pad_to(X, (*X.shape[:-2], rows, p)), pad_to(y, (*y.shape[:-1], rows))
    noise_shape = 0.5 * dof + float(noise_prior.c) + (0.5 * p if scaled else 0.0)
    return Xp, yp, dof, n, rows, use_rue, noise_shape


def run_with_variates(X, y, prior, *, num_warmup=1000, num_samples=1000, num_chains=4, seed=0, fit_intercept=True,
                      noise_prior=FLAT, scaled=False, progress_bar=None, beta_draw="auto", variates="auto"):
    """:func:`run` from pre-drawn variates (:func:`step_from`; ``variates`` ``"auto"``, ``"numpy"`` or
    ``"device"``: where they are drawn, :func:`~.gibbs_variates.choose_variates`), for a hierarchy that
    declares them (:func:`can_take_variates`; a ``ValueError`` otherwise). Returns ``(states, infos,
    attrs)``: the draws and the sweeps' :class:`Info`, each ``(chain, draw, …)``, and ``attrs`` with
    ``sampling_seconds`` (warm-up and sampling, the compile excluded), ``refused_sweeps`` (after the
    warm-up: :func:`guarded`) and ``variates`` (the source used).

    Chains start over-dispersed (:func:`dispersed_start`). The variates come from one stream per field
    (:func:`~.gibbs_variates.variate_streams`), drawn sweep-major, so the draws are the same however
    the sweeps are cut into calls (a progress bar cuts them into about 20); the arrays of a call are
    bounded (16 MiB of host variates), which cuts long runs of wide problems too."""
    import time

    from sparsebayes.inference.engines import gibbs_variates as gv
    from sparsebayes.inference.engines.progress import chunk_lengths

    require(prior, "gibbs")
    if not can_take_variates(prior, None, beta_draw):
        raise ValueError(f"{type(prior).__name__} declares no standard variates (gibbs_variates and "
                         "gibbs_update_from), or draws a global scale by a slice move, or beta_draw is CG: run it with variates=None "
                         "(random keys inside the sweeps)")
    gv.choose_variates(variates)
    check_sampler_counts(num_warmup, num_samples, num_chains)
    check_count("seed", seed, 0)
    for name, value in zip(("c", "d"), noise_prior):
        check_number(name, value, -1.0 if name == "c" else 0.0)
    X, y = check_data(X, y, min_samples=2)  # n = 2 with an intercept: σ²'s shape is checked (variate_plan)
    X = np.ascontiguousarray(X)
    Xp, yp, dof, n, rows, use_rue, noise_shape = _variate_setup(X, y, prior, noise_prior, scaled, fit_intercept,
                                                                beta_draw)
    p = X.shape[1]
    plan = gv.variate_plan(prior, n, 0 if use_rue else rows, p, noise_shape)
    streams = gv.variate_streams(seed, len(plan.aux))
    state = dispersed_start(Xp[:n], yp[:n], prior, num_chains, streams[0])
    noise = NoisePrior(*(np.float64(v) for v in noise_prior))
    total = num_warmup + num_samples
    show = show_progress(progress_bar)
    source = gv.VariateSource(variates, seed, streams, num_chains, plan)
    lengths = chunk_lengths(total, _variate_chunk(total, source.per_sweep(), show, source.budget))
    one = gv.draw_variates(gv.variate_streams(0, len(plan.aux)), 1, num_chains, plan)  # for the shapes
    dof_arg = np.float64(dof)

    def shapes(m):
        return jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct((m, *a.shape[1:]), a.dtype), one)

    if len(lengths) == 1:  # one program: the data's set-up and the sweeps
        data_args = (Xp, yp, dof_arg)
        compiled = {m: run_from_variates.lower(state, shapes(m), *data_args, prior, noise, scaled=bool(scaled),
                                               use_rue=use_rue).compile() for m in set(lengths)}  # outside the timing
    else:  # several calls: the data set up once (a copy of X and its QR), each call reads only that
        data_args = (variate_data_jit(Xp, yp, dof_arg, use_rue),)
        compiled = {m: run_on_variate_data.lower(state, shapes(m), *data_args, prior, noise,
                                                 scaled=bool(scaled)).compile() for m in set(lengths)}
    source.compile(lengths)
    chunks = []
    t0 = time.perf_counter()
    with progress(total, "gibbs", show) as bar:
        for m in lengths:
            state, states, infos = compiled[m](state, source.next(m), *data_args, prior, noise)
            chunks.append((states, infos))
            if show:
                jax.block_until_ready(state)  # the bar shows sweeps done, not sweeps queued
            bar.update(m)
    jax.block_until_ready(chunks)
    seconds = time.perf_counter() - t0
    states, infos = jax.tree_util.tree_map(
        lambda *a: np.swapaxes(np.concatenate([np.asarray(x) for x in a])[num_warmup:], 0, 1), *chunks)
    attrs = {"sampling_seconds": seconds, "refused_sweeps": int(np.count_nonzero(infos.refused)),
             "variates": source.source}
    return states, infos, attrs


@partial(jax.jit, static_argnames=("scaled", "use_rue"))
def _sum_batch_draws(variates, state, sums, Xs, ys, dof, first_kept, prior, noise, scaled, use_rue):
    """The sweeps of ``variates`` (sweep-major) for every data set of a batch (``vmap`` inside the
    ``scan``; one chain each), adding up the β draws of sweeps ``first_kept`` on: ``(last state, sums,
    refused sweeps per data set)``."""
    data = jax.vmap(lambda X, y: variate_data(X, y, dof, use_rue))(Xs, ys)
    sets_step = jax.vmap(lambda s, d, m, u: step_from(s, d, m, variates=u, scaled=scaled), in_axes=(0, 0, None, 0))

    def summing_step(carry, d, m, inp):  # a sweep of every data set, its β added to the sums once kept
        state, sums = carry
        u, i = inp
        new, info = sets_step(state, d, m, u)
        return (new, sums + jnp.where(i >= first_kept, new.beta, 0.0)), info.refused

    sweeps = variates.noise_gamma.shape[0]
    (state, sums), bad = driver.trace(summing_step, (state, sums), data, GibbsModel(prior, noise),
                                      inputs=(variates, jnp.arange(sweeps)))
    return state, sums, jnp.sum(bad, axis=0)


def posterior_mean_batch(Xs, ys, prior, num_warmup, num_samples, *, seed=0, noise_prior=FLAT, scaled=False,
                         fit_intercept=True, variates="auto"):
    """Posterior mean of β for a batch of data sets ``Xs`` (B, n, p), ``ys`` (B, n) under the hierarchy
    ``prior`` (one that declares its variates: :func:`can_take_variates`), one chain each, ``vmap``
    over data sets, sweeps from pre-drawn variates (:func:`step_from`; ``variates`` as for
    :func:`run_with_variates`). ``fit_intercept`` centres each data set (``m = n − 1``).

    Only running sums are kept, so thousands of draws over a 100-data-set table fit in memory: the
    sweeps run in calls of at most 16 MiB of host variates. Returns the means (B, p) and, per data
    set, the number of refused sweeps (:func:`guarded`). Inputs are checked (``ValueError`` naming
    the problem): a 3-D ``Xs`` with at least 2 rows per set, ``ys`` of matching shape, finite."""
    from sparsebayes.inference._validation import as_numeric_array, check_finite
    from sparsebayes.inference.engines import gibbs_variates as gv
    from sparsebayes.inference.engines.progress import chunk_lengths

    require(prior, "gibbs")
    if not can_take_variates(prior):
        raise ValueError(f"{type(prior).__name__} declares no standard variates (gibbs_variates and gibbs_update_from)")
    check_sampler_counts(num_warmup, num_samples, 1)
    check_count("seed", seed, 0)
    gv.choose_variates(variates)
    Xs, ys = as_numeric_array(Xs, "Xs"), as_numeric_array(ys, "ys")
    if Xs.ndim != 3 or min(Xs.shape) < 1 or Xs.shape[1] < 2:
        raise ValueError(f"Xs must be a 3-D array (data sets × samples × features) with at least 2 samples, "
                         f"got shape {Xs.shape}")
    if ys.shape != Xs.shape[:2]:
        raise ValueError(f"ys must have shape {Xs.shape[:2]} (data sets × samples) to match Xs, got {ys.shape}")
    check_finite(Xs, "Xs")
    check_finite(ys, "ys")
    B, n, p = Xs.shape
    Xp, yp, dof, n, rows, use_rue, noise_shape = _variate_setup(Xs, ys, prior, noise_prior, scaled, fit_intercept,
                                                                "auto")
    plan = gv.variate_plan(prior, n, 0 if use_rue else rows, p, noise_shape)
    streams = gv.variate_streams(seed, len(plan.aux))
    starts = [dispersed_start(X[:n], y[:n], prior, 1, streams[0]) for X, y in zip(Xp, yp)]
    state = jax.tree_util.tree_map(lambda *a: np.concatenate(a), *starts)
    noise = NoisePrior(*(np.float64(v) for v in noise_prior))
    sums, refused, done = np.zeros((B, p)), np.zeros(B, np.int64), 0
    total = num_warmup + num_samples
    source = gv.VariateSource(variates, seed, streams, B, plan)
    for m in chunk_lengths(total, _variate_chunk(total, source.per_sweep(), False, source.budget)):
        state, sums, bad = _sum_batch_draws(source.next(m), state, sums, Xp, yp, np.float64(dof), num_warmup - done,
                                            prior, noise, bool(scaled), use_rue)
        refused += np.asarray(bad)
        done += m
    return np.asarray(sums) / num_samples, refused
