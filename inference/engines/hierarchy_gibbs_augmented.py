"""Gibbs sampling under non-Gaussian likelihoods by their conjugate augmentation: the hierarchy engine's
sweep (:mod:`.hierarchy_gibbs`) on the pseudo-model a likelihood's ``gibbs_augment`` makes of the data.

A sweep draws ``(z, ω)`` given ``η`` (:mod:`.gibbs_augment`): probit (Albert & Chib 1993), logistic and
negative binomial (Pólya-Gamma; Polson, Scott & Windle 2013), Student-t (Gamma scales); then ``(b₀, β)``
from the pseudo-model ``z ~ N(η, 1/ω)`` by the same β draws as the Gaussian sweep (unit noise variance;
the intercept one more column under ``N(0, 10²)``), the hierarchy's conditionals, and the likelihood's
own parameter (``gibbs_param_step``). The Poisson has no conjugate augmentation and stays with NUTS.

The engine contract (:mod:`.driver`): :class:`AugmentedState`, :func:`augmented_step` (pure, ``model``
an :class:`AugmentedModel`), the jit boundary :func:`run_augmented_sweeps`; :func:`run_augmented` checks
the data and drives it (:func:`~.hierarchy_gibbs.drive`), also reached by
:func:`~.hierarchy_gibbs.run` with ``likelihood=``.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from sparsebayes.models._registry import missing_pieces
from sparsebayes.models.likelihoods import LIKELIHOOD_CAPABILITIES, make_likelihood
from sparsebayes.models.priors import require

from sparsebayes.inference.engines import gibbs_beta
from sparsebayes.inference.engines.hierarchy_gibbs import Info, drive, guarded, sweep_keys, trace
from sparsebayes.inference._validation import check_count, check_data, check_number, check_sampler_counts


#: The prior sd of the intercept under a non-Gaussian likelihood (:func:`run_augmented`), where it
#: cannot be integrated out by centring: ``b₀ ~ N(0, 10²)``, wide on the scale of a linear predictor.
INTERCEPT_SCALE = 10.0


class AugmentedModel(NamedTuple):
    """What an augmented sweep fits (:func:`augmented_step`), the driver's ``model``: the hierarchy
    ``prior`` and the ``likelihood`` with a conjugate augmentation."""

    prior: object
    likelihood: object



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
    """The jit boundary of :func:`augmented_step`, as :func:`~.hierarchy_gibbs.run_sweeps` (``likelihood`` static).

    On Rue's path a sweep that a chain's :func:`~.hierarchy_gibbs.guarded` refused is drawn again for that chain, from
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
    ``beta_draw`` as :func:`~.hierarchy_gibbs.run`'s: Rue's draw for ``p + 1 ≤ n``, else Bhattacharya's, or CG
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
    keys = sweep_keys(seed, num_chains, num_warmup + num_samples)
    return drive(lambda st, k: run_augmented_sweeps(st, k, data, prior, likelihood, beta_draw),
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
