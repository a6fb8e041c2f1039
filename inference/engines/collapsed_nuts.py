"""NUTS on a Gaussian regression with a Gaussian scale-mixture prior, the weights integrated out.

The model is the twin's own (:func:`sparsebayes.models.adaptive.sparse_regression_model` with a
hierarchy object): ``y | β, σ² ~ N(Hβ, σ² I)``, ``β | v ~ N(0, diag v)``, ``v`` from the hierarchy's
scales (the horseshoe's ``v_i = τ² λ_i²``), σ² flat (000 eq. 6) or fixed. Given ``(v, σ²)`` the
weights are Gaussian, so they integrate out in closed form (the marginal likelihood of the type-II
papers, Tipping 2001 eq. 7, at per-weight variances ``v``):

``y | v, σ² ~ N(0, Σ_y)``, ``Σ_y = σ² I + H diag(v) Hᵀ``. With ``d = √v``, ``G = HᵀH``, ``b = Hᵀy`` and
``M = I + diag(d) G diag(d) / σ² = L Lᵀ`` (p × p, well conditioned as any ``v_i → 0``),

* ``log |Σ_y| = n log σ² + 2 Σ log L_ii`` (the matrix determinant lemma), and
* ``yᵀ Σ_y⁻¹ y = yᵀy/σ² − ‖c‖²``, ``c = L⁻¹ (d ∘ b) / σ²`` (Woodbury),

so NUTS samples the scales and σ² only, on a posterior with neither the funnel of the centred form
nor the curved ridge ``τ λ_i z_i = β_i`` of the non-centred one (the ridge made NUTS diverge on
well-identified weights). The weights are then drawn exactly from their conditional,
``β | v, σ², y ~ N(μ, V)`` with ``V = (G/σ² + diag(v)⁻¹)⁻¹ = diag(d) M⁻¹ diag(d)`` and ``μ = V b / σ²``,
i.e. ``β = d ∘ (M⁻¹ (d ∘ b)/σ² + L⁻ᵀ z)``, ``z ~ N(0, I)``: one independent draw per NUTS draw, so
``(β, v, σ²)`` are draws of the joint posterior and their diagnostics are NUTS's.

The hierarchy supplies the statement of ``v`` (``sample_variance``, the same sites as its
``sample_beta``) and its remaining twin sites given β (``twin_sites_given_beta``: the horseshoe's
``beta_raw``), the ``"nuts-collapsed"`` capability of :data:`sparsebayes.models.priors.CAPABILITIES`;
its declared NUTS settings are read by the runner (:func:`sparsebayes.inference.engines.nuts.settings`).
The algebra is p × p per gradient, so the form is used up to :data:`MAX_WEIGHTS` weights.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints

from sparsebayes.models.priors import supports

from sparsebayes.inference.engines.nuts import run_nuts

#: Most weights for which the twin integrates β out (a p × p Cholesky per gradient evaluation).
MAX_WEIGHTS = 200
#: The site of the variances inside the collapsed model (dropped from the output).
VARIANCE_SITE = "prior_variance"


def collapsible(prior, model, kwargs, n_weights):
    """Whether the twin ``model`` with keyword arguments ``kwargs`` is the Gaussian regression with a
    hierarchy that has the ``"nuts-collapsed"`` capability, at most :data:`MAX_WEIGHTS` weights."""
    from sparsebayes.models.adaptive import sparse_regression_model
    return (model is sparse_regression_model and kwargs.get("prior") is prior and prior is not None
            and supports(prior, "nuts-collapsed") and n_weights <= MAX_WEIGHTS)


def collapsed_model(G, b, yty, n, *, prior, noise_var=None):
    """``p(v, σ² | y)`` up to a constant: the hierarchy's statement of ``v`` (``prior.sample_variance``;
    site :data:`VARIANCE_SITE` records it), σ² flat (site ``noise_var``) unless given, and the log
    marginal likelihood of the module docstring as the factor ``y_marginal``."""
    v = numpyro.deterministic(VARIANCE_SITE, prior.sample_variance(G.shape[0]))
    if noise_var is None:
        noise_var = numpyro.sample("noise_var", dist.ImproperUniform(constraints.positive, (), ()))
    numpyro.factor("y_marginal", log_marginal_likelihood(G, b, yty, n, v, noise_var))


def log_marginal_likelihood(G, b, yty, n, v, noise_var):
    """``log N(y; 0, σ² I + H diag(v) Hᵀ)`` from ``G = HᵀH``, ``b = Hᵀy``, ``yty = yᵀy`` and ``n`` (module
    docstring: determinant lemma and Woodbury on the p × p ``M``)."""
    d = jnp.sqrt(v)
    M = jnp.eye(G.shape[0]) + d[:, None] * G * d[None, :] / noise_var
    L = jnp.linalg.cholesky(M)
    c = jax.scipy.linalg.solve_triangular(L, d * b / noise_var, lower=True)
    log_det = n * jnp.log(noise_var) + 2.0 * jnp.sum(jnp.log(jnp.diag(L)))
    return -0.5 * (n * jnp.log(2.0 * jnp.pi) + log_det + yty / noise_var - c @ c)


def conditional_beta(G, b, v, noise_var, z):
    """Draws of ``β | v, σ², y`` (module docstring), batched over the leading axes of ``v`` (…, p),
    ``noise_var`` (…) and the standard normal ``z`` (…, p); NumPy, float64."""
    v, s2, z = (np.asarray(a, dtype=np.float64) for a in (v, noise_var, z))
    d = np.sqrt(v)
    M = np.eye(G.shape[0]) + d[..., :, None] * G * d[..., None, :] / s2[..., None, None]
    L = np.linalg.cholesky(M)
    rhs = (d * b / s2[..., None])[..., None]
    mean = np.linalg.solve(np.swapaxes(L, -1, -2), np.linalg.solve(L, rhs))[..., 0]
    noise = np.linalg.solve(np.swapaxes(L, -1, -2), z[..., None])[..., 0]
    return d * (mean + noise)


def run(t, *, num_warmup, num_samples, num_chains, seed, coords, progress_bar, target_accept_prob=None):
    """NUTS on :func:`collapsed_model` for twin ``t`` (design ``t.H``, targets ``t.y``, ``t.prior``, a fixed
    ``noise_var`` in ``t.kwargs`` if any), then β from its conditional (seeded by ``seed``): an
    ``InferenceData`` with the twin's names (``beta``, ``noise_var``, the hierarchy's sites),
    NUTS's ``sample_stats``, pointwise ``log_likelihood`` ``y`` and ``observed_data`` ``y``;
    ``posterior.attrs["inference"] = "nuts-collapsed"`` beside the runner's timings and settings."""
    import scipy.stats

    from sparsebayes.inference.posterior.arviz_compat import dataset, from_dict
    H, y = np.asarray(t.H, dtype=np.float64), np.asarray(t.y, dtype=np.float64)
    # yᵀy as a 0-d array: a traced input of the runner's compiled program (a float would be a
    # static argument, and each new data set would compile NUTS anew)
    G, b, yty, n = H.T @ H, H.T @ y, np.asarray(y @ y), H.shape[0]
    fixed = {"noise_var": float(t.kwargs["noise_var"])} if "noise_var" in t.kwargs else {}
    raw = run_nuts(collapsed_model, G, b, yty=yty, n=n, prior=t.prior, num_warmup=num_warmup,
                   num_samples=num_samples, num_chains=num_chains, seed=seed, progress_bar=progress_bar,
                   rhat_max=None, target_accept_prob=target_accept_prob, dims={VARIANCE_SITE: ["basis"]},
                   coords=coords, **fixed)
    post = raw.posterior
    v = np.asarray(post[VARIANCE_SITE].values)
    s2 = np.asarray(post["noise_var"].values) if "noise_var" in post else np.full(v.shape[:2], fixed["noise_var"])
    z = np.random.default_rng(seed).standard_normal(v.shape)
    beta = conditional_beta(G, b, v, s2, z)
    sites = {k: np.asarray(post[k].values) for k in post.data_vars if k != VARIANCE_SITE}
    sites.update(t.prior.twin_sites_given_beta(beta, sites))
    sites["beta"] = beta
    loglik = scipy.stats.norm.logpdf(y, np.einsum("cdp,np->cdn", beta, H), np.sqrt(s2)[..., None])
    idata = from_dict({"posterior": sites, "sample_stats": {k: v_.values for k, v_ in dataset(raw, "sample_stats").items()},
                       "log_likelihood": {"y": loglik}, "observed_data": {"y": y}}, coords=coords,
                      dims={**{k: ["basis"] for k, val in sites.items() if np.ndim(val) == 3}, "y": ["obs"]})
    idata.posterior.attrs.update({k: v_ for k, v_ in post.attrs.items() if k not in ("created_at",)})
    idata.posterior.attrs["inference"] = "nuts-collapsed"
    return idata
