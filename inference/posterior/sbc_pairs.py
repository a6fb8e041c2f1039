"""The suite's (simulator, sampler) pairs for simulation-based calibration (:mod:`.sbc`).

:func:`~sparsebayes.inference.posterior.sbc.run` calibrates any pair of callables ``simulate(rng) ->
(truth, data)`` and ``sample(data, num_samples, seed) -> draws``; this module builds them for the
suite's models and engines. :func:`hierarchy_simulator` is the suite's regression model under any
hierarchy with a NumPyro sampling statement (``sample_beta``), σ² from a proper inverse gamma, and
:func:`augmented_simulator` the same hierarchy under any likelihood with a sampler (probit, logistic,
Student-t, negative binomial); :func:`hierarchy_gibbs_sampler`, :func:`augmented_gibbs_sampler`,
:func:`bayesian_lasso_sampler`, :func:`nuts_sampler` and :func:`collapsed_nuts_sampler` wrap the suite's
engines (:func:`sparsebayes.inference.engines.hierarchy_gibbs.run`,
:func:`sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`,
:func:`sparsebayes.inference.engines.bayesian_lasso.run_gibbs`,
:func:`sparsebayes.inference.engines.nuts.run_nuts`,
:func:`sparsebayes.inference.engines.collapsed_nuts.run`) in the ``sample`` signature, with the
hierarchy's own site names. The NUTS samplers can record each run's divergences
(:func:`nuts_health`, :func:`divergence_rates`). Engines and NumPyro are imported when a pair is built.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["NutsHealth", "augmented_gibbs_sampler", "augmented_simulator", "bayesian_lasso_sampler",
           "collapsed_nuts_sampler", "divergence_rates", "hierarchy_gibbs_sampler", "hierarchy_simulator",
           "nuts_health", "nuts_sampler"]


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
