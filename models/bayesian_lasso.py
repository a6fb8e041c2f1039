"""NumPyro models of the Bayesian Lasso family (Park & Casella 2008; Helgøy & Li, 004).

* :func:`bayesian_lasso`: Park–Casella's hierarchy, ``β | σ², τ² ~ N(0, σ² diag τ²)``,
  ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)``, ``σ² ~ 1/σ²`` (or ``InvGamma(c, d)``).
* :func:`bls_model`: the BLS hierarchy of 004 eqs. 5–9: ``w_i ~ N(0, τ_i σ²)``,
  ``τ_i ~ Exp(λ/2)``, ``λ ~ Gamma(a, b)``, ``σ² ~ InvGamma(c, d)``.
* :func:`rvm_model`: Tipping's RVM, ``w_i ~ N(0, α_i⁻¹)``, ``α_i ~ Gamma(a, b)`` (004 Sec. 2.5).
* :func:`rvm_classifier_model`: the same prior with a Bernoulli-logistic likelihood (Tipping 2001).
* :func:`flap_model`: Babacan et al.'s Laplace hierarchy, ``w_i ~ N(0, γ_i)``,
  ``γ_i ~ Exp(λ/2)``, ``λ ~ Gamma(a, b)``; ``σ²`` fixed or given a prior.

Flat hyperpriors: the papers set ``a = b = c = d = 0`` (004 Sec. 3), i.e. ``p(λ) ∝ 1/λ`` and
``p(σ²) ∝ 1/σ²``, which are improper. The ``1/σ²`` prior of the Bayesian Lasso gives a proper
posterior (Park & Casella, 2008, Sec. 2), so it is kept exactly (an improper flat site plus a
``-log σ²`` factor). For the other improper pieces NUTS runs on a *labelled proper surrogate*:
any hyperparameter pair given as 0 is replaced by ``surrogate_eps`` (Gamma(ε, ε) /
InvGamma(ε, ε), default ε = 1e-3), and the deterministic site ``"surrogate_eps"`` records
that a surrogate was used. The type-II engine (``sparsebayes.inference.engines.typeii``) uses the
flat priors themselves, through :mod:`sparsebayes.models.priors.typeii`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from ._checks import check_design, check_number
from .priors import variance_of_precision

SURROGATE_EPS = 1e-3


def _traced(value):
    """A hyperparameter traced by a compiled runner (:func:`sparsebayes.inference.engines.nuts.run_nuts` traces
    non-zero floats, after tracing the model once on the values themselves, where they were checked):
    it is positive, and its value cannot be read in Python."""
    return isinstance(value, jax.core.Tracer)


def _is_zero(value):
    """``value == 0`` for a checked hyperparameter (a traced one is not zero: :func:`_traced`)."""
    return not _traced(value) and value == 0


def _proper(shape, rate, eps, names):
    """Replace an improper ``0`` hyperparameter by ``eps``; returns (shape, rate, used).

    ``names``: the pair's parameter names, for the ``ValueError`` a negative or non-finite one
    raises (a negative rate was taken for an improper 0 and replaced without a word)."""
    for name, value in zip(names, (shape, rate)):
        if not _traced(value):
            check_number(name, value, 0.0)
    used = _is_zero(shape) or _is_zero(rate)
    return (eps if _is_zero(shape) else shape), (eps if _is_zero(rate) else rate), used


def _gamma_site(name, shape, rate, eps, names):
    """``name ~ Gamma(shape, rate)``, an improper ``0`` replaced by ``eps``; returns (value, used)."""
    shape, rate, used = _proper(shape, rate, eps, names)
    return numpyro.sample(name, dist.Gamma(shape, rate)), used


def _noise_var_site(c, d, eps):
    """``σ²`` with ``InvGamma(c, d)``; ``c = d = 0`` is the proper-posterior ``1/σ²`` prior kept exactly.

    Returns (value, used): ``used`` says an improper half-specified pair was replaced by ``eps``.
    """
    if _is_zero(c) and _is_zero(d):  # exactly 0: anything else is checked by _proper
        noise_var = numpyro.sample("noise_var", dist.ImproperUniform(dist.constraints.positive, (), ()))
        numpyro.factor("noise_var_jeffreys", -jnp.log(noise_var))
        return noise_var, False
    c, d, used = _proper(c, d, eps, ("c", "d"))
    return numpyro.sample("noise_var", dist.InverseGamma(c, d)), used


def _label_surrogate(used, eps):
    """Record, once, that a proper surrogate replaced an improper hyperprior."""
    if used:
        numpyro.deterministic("surrogate_eps", jnp.asarray(eps))


def _exponential_scale_mixture(plate, n_weights, scale_site, weight_site, lam, noise_scale, marginal=False):
    """``v_i ~ Exp(λ/2)``, ``w_i | v_i ~ N(0, v_i · noise_scale)``: the Laplace prior as a scale mixture.

    ``marginal``: ``v`` integrated out, ``w_i ~ Laplace(0, √(noise_scale/λ))`` (the mixture's
    marginal; no ``scale_site``). The same posterior over the other sites, without the funnel
    between ``w_i`` and ``v_i`` where NUTS diverges."""
    with numpyro.plate(plate, n_weights):
        if marginal:
            return numpyro.sample(weight_site, dist.Laplace(0.0, jnp.sqrt(noise_scale / lam)))
        v = numpyro.sample(scale_site, dist.Exponential(lam / 2.0))
        return numpyro.sample(weight_site, dist.Normal(0.0, jnp.sqrt(v * noise_scale)))


def _gaussian_observations(Phi, w, noise_var, y):
    with numpyro.plate("data", Phi.shape[0]):
        numpyro.sample("y", dist.Normal(Phi @ w, jnp.sqrt(noise_var)), obs=y)


def bayesian_lasso(X, y=None, *, lam2_shape=1.0, lam2_rate=1.78, c=0.0, d=0.0, surrogate_eps=SURROGATE_EPS,
                   marginal=False):
    """Park & Casella (2008) Bayesian Lasso for centred ``y`` and centred ``X``.

    ``β | σ², τ² ~ N(0, σ² diag(τ²))``, ``τ_j² ~ Exp(λ²/2)``, ``λ² ~ Gamma(r, δ)``
    (defaults r = 1, δ = 1.78, Park & Casella's choice for the diabetes data; ``λ`` has the units
    of ``X``, as ``β_j``'s prior scale is ``σ/λ``, so ``δ`` suits one scale of ``X`` only: columns
    ``s`` times larger want ``δ/s²``),
    ``σ² ~ InvGamma(c, d)`` with ``c = d = 0`` the ``1/σ²`` prior. The intercept has a flat
    prior and is integrated out, as in Park & Casella (Sec. 2): the centred data then carry
    ``n − 1`` degrees of freedom, ``p(y_c | β, σ²) ∝ (σ²)^{−(n−1)/2} exp(−‖y_c − X_cβ‖²/(2σ²))``,
    written as the ``n`` Gaussian observations plus a ``+½ log σ²`` factor. This is the
    posterior the Gibbs sampler (:func:`sparsebayes.inference.engines.bayesian_lasso.run_gibbs`) draws from whenever
    ``r, δ > 0`` and ``c, d`` are both positive or both 0; a zero among them otherwise takes
    the labelled surrogate here (module docstring) but the exact improper prior in the Gibbs
    sampler, a difference of a factor such as ``(σ²)^{−ε}`` or ``e^{−ελ²}``.

    ``marginal=True``: ``τ²`` integrated out, ``β_j | σ², λ² ~ Laplace(0, σ/λ)`` (the conditional
    Laplace prior of Park & Casella), the same posterior over β, σ² and λ², which NUTS samples
    without the divergences of the scale mixture's funnel.
    """
    check_design(X, y)
    lam2, used_lam = _gamma_site("lam2", lam2_shape, lam2_rate, surrogate_eps, ("lam2_shape", "lam2_rate"))
    noise_var, used_noise = _noise_var_site(c, d, surrogate_eps)
    _label_surrogate(used_lam or used_noise, surrogate_eps)
    beta = _exponential_scale_mixture("features", X.shape[1], "tau2", "beta", lam2, noise_var, marginal)
    _gaussian_observations(X, beta, noise_var, y)
    numpyro.factor("intercept_integrated_out", 0.5 * jnp.log(noise_var))


def bls_model(Phi, y=None, *, a=0.0, b=0.0, c=0.0, d=0.0, surrogate_eps=SURROGATE_EPS, marginal=False):
    """The BLS hierarchy, 004 eqs. 5–9 (``Phi`` holds the bias and kernel/linear columns).

    The same hierarchy as :func:`bayesian_lasso` with a Gamma prior on ``λ`` instead of ``λ²``;
    ``marginal=True``: ``τ`` integrated out, ``w_i | σ², λ ~ Laplace(0, σ/√λ)``.
    """
    check_design(Phi, y, "Phi")
    lam, used_lam = _gamma_site("lam", a, b, surrogate_eps, ("a", "b"))
    noise_var, used_noise = _noise_var_site(c, d, surrogate_eps)
    _label_surrogate(used_lam or used_noise, surrogate_eps)
    w = _exponential_scale_mixture("basis", Phi.shape[1], "tau", "w", lam, noise_var, marginal)
    _gaussian_observations(Phi, w, noise_var, y)


def rvm_model(Phi, y=None, *, a=0.0, b=0.0, c=0.0, d=0.0, surrogate_eps=SURROGATE_EPS):
    """Tipping's RVM: ``w_i ~ N(0, α_i⁻¹)``, ``α_i ~ Gamma(a, b)`` (004 Sec. 2.5), ``σ² ~ InvGamma(c, d)``."""
    check_design(Phi, y, "Phi")
    a, b, used_alpha = _proper(a, b, surrogate_eps, ("a", "b"))
    noise_var, used_noise = _noise_var_site(c, d, surrogate_eps)
    _label_surrogate(used_alpha or used_noise, surrogate_eps)
    with numpyro.plate("basis", Phi.shape[1]):
        alpha = numpyro.sample("alpha", dist.Gamma(a, b))
        w = numpyro.sample("w", dist.Normal(0.0, jnp.sqrt(variance_of_precision(alpha))))
    _gaussian_observations(Phi, w, noise_var, y)


def rvm_classifier_model(Phi, y=None, *, prior_var=None, a=0.0, b=0.0, surrogate_eps=SURROGATE_EPS):
    """Tipping's RVM classifier: ``P(y = 1) = σ(Φw)``, ``w_i ~ N(0, α_i⁻¹)``, ``α_i ~ Gamma(a, b)``.

    ``prior_var`` given (``1/α_i`` per column of ``Phi``, e.g. the active columns of a fitted
    :class:`~sparsebayes.inference.RVMClassifier`): the weights' posterior at those fixed
    variances, which the classifier's Laplace approximation ``N(w*, Σ)`` stands in for.
    """
    check_design(Phi, y, "Phi")
    if prior_var is None:
        a, b, used = _proper(a, b, surrogate_eps, ("a", "b"))
        _label_surrogate(used, surrogate_eps)
    with numpyro.plate("basis", Phi.shape[1]):
        if prior_var is None:
            prior_var = variance_of_precision(numpyro.sample("alpha", dist.Gamma(a, b)))
        w = numpyro.sample("w", dist.Normal(0.0, jnp.sqrt(prior_var)))
    with numpyro.plate("data", Phi.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=Phi @ w), obs=y)


def flap_model(Phi, y=None, *, a=0.0, b=0.0, noise_var=None, c=0.0, d=0.0, surrogate_eps=SURROGATE_EPS):
    """Babacan et al. (2010): ``w_i ~ N(0, γ_i)``, ``γ_i ~ Exp(λ/2)``, ``λ ~ Gamma(a, b)``.

    ``noise_var`` given: FLAP with the noise fixed; ``None``: FLAPσ with ``σ² ~ InvGamma(c, d)``.
    """
    check_design(Phi, y, "Phi")
    lam, used = _gamma_site("lam", a, b, surrogate_eps, ("a", "b"))
    if noise_var is None:
        noise_var, used_noise = _noise_var_site(c, d, surrogate_eps)
        used = used or used_noise
    _label_surrogate(used, surrogate_eps)
    w = _exponential_scale_mixture("basis", Phi.shape[1], "gamma", "w", lam, 1.0)
    _gaussian_observations(Phi, w, noise_var, y)
