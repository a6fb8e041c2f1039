"""Which subset of inputs predicts as well as all of them: projection predictive variable selection.

Piironen, Paasiniemi & Vehtari (2020), "Projective inference in high-dimensional problems: prediction
and feature selection", Electron. J. Statist. 14(1) (PPV below), after Goutis & Robert (1998) and
Dupuis & Robert (2003). The *reference model* is the posterior a comparison sampled (NUTS, Gibbs, or
any draws of ``β`` on the design ``X``); a *submodel* keeps the inputs ``S``. Each reference draw
``θ_s = (β_s, σ²_s)`` is projected onto the submodel by minimizing the Kullback–Leibler divergence
from the reference's predictive distribution at the observed inputs to the submodel's (PPV eq. 6):

* Gaussian regression (PPV Sec. 3.1 / eq. 10 for the Gaussian case): ``β⊥_s`` is the least-squares
  fit of the reference's fit, ``β⊥_s = argmin ‖Xβ_s − X_S b‖²``, and the noise variance is projected
  as ``σ⊥²_s = σ²_s + ‖Xβ_s − X_S β⊥_s‖²/n``; the divergence per observation is
  ``½ log(σ⊥²_s / σ²_s)``.
* A binary or count GLM (probit, logit, Poisson log-link): ``β⊥_s`` maximizes the expected
  log-likelihood ``Σ_i E_{ỹ_i ~ p(·|η_is)} log p(ỹ_i | x_Siᵀ b)`` (the GLM fit of the reference's
  means ``μ_is`` as fractional responses), by damped Newton steps (:func:`project`, jit + vmap over
  draws, float64); the divergence is ``Σ_i KL(p(·|η_is) ‖ p(·|η⊥_is))/n``.

Constant design columns (the intercept) and an intercept site are in every submodel (PPV Sec. 4).
The inputs enter in the order of a *search* (:func:`search_order`):

* ``"path"``: the sparse fit's own path, as PPV use the Lasso path (Sec. 4.2). For the suite's EM
  and type-II fits there is no path of fits, only the point estimate; its kept inputs ordered by
  ``|β̂_j| · sd(x_j)`` (the standardized size) stand for it, and the inputs it zeroes follow in
  greedy forward order;
* ``"forward"``: greedy forward selection, adding at each step the input whose submodel has the
  smallest mean divergence over the search draws (PPV Sec. 4.2's forward search).

Either stops at ``max_size`` inputs (default :data:`MAX_SIZE`).

The search uses ``search_draws`` thinned draws (projpred's default 20), the evaluation
``num_draws`` thinned draws (400). Each size ``k`` is scored by its expected log predictive density
(elpd) by PSIS-LOO (Vehtari, Gelman & Gabry 2017) with the *reference model's* importance weights
applied to the projected draws' pointwise likelihoods (projpred's ``cv_varsel(validate_search =
FALSE)``: each projected draw is a function of its reference draw, so the reference's leave-one-out
weights carry over; the search itself is not cross-validated, so the curve is optimistic at small
``k``). The suggested size is the smallest ``k`` whose elpd is within one standard error of the
reference model's (PPV Sec. 4.3, the "one standard error" rule on the difference): ``diff_k +
se_diff_k ≥ 0``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .fitted_model import draws_on_raw_terms, likelihood_name, per_basis_matrix, to_raw_terms

#: Likelihoods a reference model may have.
FAMILIES = ("gaussian", "probit", "logit", "poisson")
#: A fitted estimator's likelihood (its registry name) -> the reference model's family.
LIKELIHOOD_FAMILIES = {"gaussian": "gaussian", "probit": "probit", "bernoulli_logistic": "logit", "poisson": "poisson"}
#: PSIS's reliability threshold (Vehtari et al. 2024, "Pareto smoothed importance sampling").
KHAT_MAX = 0.7
#: Damped Newton steps of the GLM projection.
NEWTON_STEPS = 20
#: Inputs the search adds by default (projpred's ``nterms_max`` default is of this order): beyond
#: it the forward search's cost, one projection per candidate per step, grows with ``p²``.
MAX_SIZE = 20
#: A numerical ridge on the selected columns' Gram (or Hessian) matrix, relative to each column's own
#: diagonal entry (so that it does not depend on the columns' units): a column collinear with the
#: others gets a small-norm share instead of a failed factorization.
RIDGE = 1e-10


@dataclass(frozen=True)
class Reference:
    """A reference model as arrays: the design ``X`` (n, p), the draws ``beta`` (S, p), the noise
    variance per draw ``noise_var`` (S,; Gaussian only), the targets ``y`` (n,), the ``family``
    (:data:`FAMILIES`), the column ``names`` and ``always`` (p,) bool: columns in every submodel
    (constant columns: the intercept)."""

    X: np.ndarray
    beta: np.ndarray
    y: np.ndarray
    family: str
    names: tuple
    always: np.ndarray
    noise_var: np.ndarray | None = None

    def __post_init__(self):
        X, beta, y = (np.asarray(a, dtype=np.float64) for a in (self.X, self.beta, self.y))
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if X.ndim != 2 or beta.ndim != 2 or beta.shape[1] != X.shape[1] or y.shape != (X.shape[0],):
            raise ValueError(f"X (n, p), beta (draws, p) and y (n,) must agree; got {X.shape}, {beta.shape}, {y.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(beta)) and np.all(np.isfinite(y))):
            raise ValueError("X, beta and y must be finite")
        if len(self.names) != X.shape[1] or np.shape(self.always) != (X.shape[1],):
            raise ValueError(f"names and always need one entry per column ({X.shape[1]})")
        noise = None
        if self.family == "gaussian":
            if self.noise_var is None:
                raise ValueError("a Gaussian reference needs its noise variance (one per draw, or one number)")
            noise = np.broadcast_to(np.asarray(self.noise_var, dtype=np.float64), (beta.shape[0],)).copy()
            if not np.all(np.isfinite(noise) & (noise > 0)):
                raise ValueError("the noise variance must be positive and finite in every draw")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "always", np.asarray(self.always, dtype=bool))
        object.__setattr__(self, "names", tuple(str(n) for n in self.names))
        object.__setattr__(self, "noise_var", noise)

    def thin(self, num):
        """The reference with ``num`` draws evenly spaced over its draws (all of them if fewer)."""
        idx = thinned(self.beta.shape[0], num)
        return Reference(self.X, self.beta[idx], self.y, self.family, self.names, self.always,
                         None if self.noise_var is None else self.noise_var[idx])


def thinned(total, num):
    """Indices of ``min(num, total)`` draws evenly spaced over ``total``."""
    if num < 1:
        raise ValueError(f"the number of draws must be at least 1, got {num}")
    return np.unique(np.linspace(0, total - 1, min(int(num), total)).round().astype(int))


# --- the likelihood of each family ---------------------------------------------------------------

def _expected_loglik(family):
    """``parts(μ, η) -> (ℓ, ℓ', ℓ'')``: ``ℓ(μ, η) = E_{ỹ ~ p(·|reference mean μ)} log p(ỹ | η)``
    elementwise and its first and second derivatives in ``η``, a JAX function (closed forms; the
    probit's through the inverse Mills ratio ``λ(η) = φ(η)/Φ(η)``: ``d log Φ/dη = λ``,
    ``d² log Φ/dη² = −λ(λ + η)``, with ``log Φ`` evaluated once per call)."""
    import jax.numpy as jnp
    from jax.nn import sigmoid
    from jax.scipy.special import log_ndtr

    if family == "probit":
        def parts(mu, eta):
            lp, lm = log_ndtr(eta), log_ndtr(-eta)
            log_phi = -0.5 * eta**2 - 0.5 * jnp.log(2.0 * jnp.pi)
            a, b = jnp.exp(log_phi - lp), jnp.exp(log_phi - lm)
            return (mu * lp + (1.0 - mu) * lm, mu * a - (1.0 - mu) * b,
                    -mu * a * (a + eta) - (1.0 - mu) * b * (b - eta))
    elif family == "logit":
        def parts(mu, eta):
            s = sigmoid(eta)
            return mu * eta - jnp.logaddexp(0.0, eta), mu - s, -s * sigmoid(-eta)
    elif family == "poisson":
        def parts(mu, eta):
            e = jnp.exp(eta)
            return mu * eta - e, mu - e, -e
    else:
        raise ValueError(f"no GLM projection for family {family!r}")
    return parts


def mean_of(eta, family):
    """The mean ``E[y | η]`` of a GLM family (the inverse link)."""
    import scipy.special
    import scipy.stats
    if family == "probit":
        return scipy.stats.norm.cdf(eta)
    if family == "logit":
        return scipy.special.expit(eta)
    if family == "poisson":
        return np.exp(eta)
    return np.asarray(eta)


def pointwise_log_lik(y, eta, family, noise_var=None):
    """``log p(y_i | η_si)`` (S, n) for draws of the linear predictor ``eta`` (S, n)."""
    import scipy.special
    import scipy.stats
    if family == "gaussian":
        return scipy.stats.norm.logpdf(y, eta, np.sqrt(np.asarray(noise_var))[:, None])
    if family == "probit":
        return scipy.special.log_ndtr((2.0 * y - 1.0) * eta)
    if family == "logit":
        return -np.logaddexp(0.0, -(2.0 * y - 1.0) * eta)
    return scipy.stats.poisson.logpmf(y, np.exp(eta))


def _log_probabilities(eta, family):
    """``(log P(y = 1 | η), log P(y = 0 | η))`` of a binary family, finite far in the tails."""
    import scipy.special
    if family == "probit":
        return scipy.special.log_ndtr(eta), scipy.special.log_ndtr(-eta)
    return -np.logaddexp(0.0, -eta), -np.logaddexp(0.0, eta)


def _kl(family, eta, eta_perp):
    """``KL(p(·|η) ‖ p(·|η⊥))`` per observation, (S, n), from log-probabilities (finite where a mean
    rounds to 0 or 1)."""
    if family == "poisson":
        mu, mp = np.exp(eta), np.exp(eta_perp)
        return mu * (eta - eta_perp) - mu + mp
    (l1, l0), (m1, m0) = _log_probabilities(eta, family), _log_probabilities(eta_perp, family)
    return np.exp(l1) * (l1 - m1) + np.exp(l0) * (l0 - m0)


# --- the projection -------------------------------------------------------------------------------

def _columns(ref, mask):
    """The column indices of a submodel: ``mask`` (bool, p) and the ``always`` columns."""
    return np.flatnonzero(np.asarray(mask, dtype=bool) | ref.always)


def _least_squares(X, eta):
    """``b`` (S, k) minimizing ``‖η_s − X b_s‖²`` per draw, by one Cholesky of ``XᵀX`` with its diagonal
    raised by the relative :data:`RIDGE`."""
    import scipy.linalg
    G = X.T @ X
    G[np.diag_indices_from(G)] *= 1.0 + RIDGE
    if not G.size:
        return np.zeros((eta.shape[0], 0))
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(G, lower=True), (eta @ X).T).T


def project_sets(ref, masks, width=None):
    """Project every draw of ``ref`` onto each submodel of ``masks`` (C, p; the ``always`` columns are
    added). Returns ``(beta_perp (C, S, p), noise_var_perp (C, S) or None, kl (C, S))``, ``kl`` the
    divergence per observation of each draw (module docstring). The GLM projections run as one call
    of the jitted projector on the submodels' columns padded to ``width`` columns (default: the
    largest submodel), so that a search compiles it once."""
    sets = [_columns(ref, m) for m in np.atleast_2d(masks)]
    eta = ref.beta @ ref.X.T
    S, p = ref.beta.shape
    out = np.zeros((len(sets), S, p))
    for c, cols in enumerate(sets):
        out[c][:, cols] = _least_squares(ref.X[:, cols], eta)
    if ref.family == "gaussian":
        resid = eta[None] - out @ ref.X.T
        noise = ref.noise_var + np.mean(resid**2, axis=2)
        return out, noise, 0.5 * np.log(noise / ref.noise_var)
    width = max(len(c) for c in sets) if width is None else int(width)
    if any(len(c) > width for c in sets):
        raise ValueError(f"a submodel has more than width={width} columns")
    C = len(sets)
    Xc, start, pad = np.zeros((C, ref.X.shape[0], width)), np.zeros((C, S, width)), np.zeros((C, width))
    for c, cols in enumerate(sets):
        Xc[c, :, :len(cols)], start[c, :, :len(cols)], pad[c, :len(cols)] = ref.X[:, cols], out[c][:, cols], 1.0
    b = np.asarray(_glm_projector(ref.family)(Xc, mean_of(eta, ref.family), start, pad))
    for c, cols in enumerate(sets):
        out[c][:, cols] = b[c, :, :len(cols)]
    return out, None, np.mean(_kl(ref.family, eta[None], out @ ref.X.T), axis=2)


def project(ref, mask):
    """:func:`project_sets` for one submodel: ``(beta_perp (S, p), noise_var_perp (S,) or None, kl (S,))``."""
    b, noise, kl = project_sets(ref, np.asarray(mask, dtype=bool)[None])
    return b[0], None if noise is None else noise[0], kl[0]


_PROJECTORS = {}


def _glm_projector(family):
    """``(X (C, n, k), μ (S, n), start (C, S, k), mask (C, k)) -> β⊥ (C, S, k)``, jitted once per family,
    vmapped over the submodels and batched over the draws: :data:`NEWTON_STEPS` Newton steps on
    ``−Σ_i ℓ(μ_i, x_iᵀb)`` from ``start`` (the least-squares projection of ``η``), with a step size per
    draw that doubles (up to 1) after a step that lowers the objective and halves after one that does
    not (the step is then not taken); padding columns (``mask`` 0) are pinned at zero. The objective
    is convex in ``b``: the probit, logit and Poisson log-likelihoods are concave in ``η``."""
    if family in _PROJECTORS:
        return _PROJECTORS[family]
    import jax
    import jax.numpy as jnp

    parts = _expected_loglik(family)

    def evaluate(mu, eta):
        ell, d1, d2 = parts(mu, eta)
        value = -jnp.sum(ell, axis=1)
        return jnp.where(jnp.isfinite(value), value, jnp.inf), d1, d2

    def run(X, mu, b, mask):
        pin = jnp.diag(1.0 - mask)
        both = jnp.outer(mask, mask) * (1.0 + RIDGE * jnp.eye(mask.size))

        def step(state, _):
            b, eta, value, d1, d2, t = state
            g = -(d1 @ X) * mask
            H = jnp.einsum("np,sn,nq->spq", X, -d2, X) * both + pin
            delta = jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(H), True), g[..., None])[..., 0]
            new_eta = eta - t[:, None] * (delta @ X.T)
            new_value, new_d1, new_d2 = evaluate(mu, new_eta)
            ok = new_value <= value
            keep = ok[:, None]
            return (jnp.where(keep, b - t[:, None] * delta, b), jnp.where(keep, new_eta, eta),
                    jnp.where(ok, new_value, value), jnp.where(keep, new_d1, d1), jnp.where(keep, new_d2, d2),
                    jnp.where(ok, jnp.minimum(2.0 * t, 1.0), 0.5 * t)), None
        b = b * mask
        eta = b @ X.T
        start = (b, eta, *evaluate(mu, eta), jnp.ones(b.shape[0]))
        return jax.lax.scan(step, start, None, length=NEWTON_STEPS)[0][0]

    fn = jax.jit(jax.vmap(run, in_axes=(0, None, 0, 0)))
    _PROJECTORS[family] = fn
    return fn


# --- the search -----------------------------------------------------------------------------------

def _candidates(ref):
    return [j for j in range(ref.X.shape[1]) if not ref.always[j]]


def _limit(ref, max_size):
    n_cand = len(_candidates(ref))
    return min(n_cand, MAX_SIZE) if max_size is None else min(int(max_size), n_cand)


def forward_order(ref, start=(), max_size=None):
    """Greedy forward search: from the inputs ``start`` (in that order), add at each step the input
    whose submodel has the smallest mean divergence over ``ref``'s draws, up to ``max_size`` inputs
    (default :data:`MAX_SIZE`). Returns column indices. Each step projects every candidate in one
    call, padded to the same number of submodels and columns (one compilation per search)."""
    order = list(start)
    rest = [j for j in _candidates(ref) if j not in order]
    limit = max(_limit(ref, max_size), len(order))
    width = int(ref.always.sum()) + limit
    while rest and len(order) < limit:
        masks = np.zeros((len(rest) + len(order), ref.X.shape[1]), dtype=bool)  # a fixed count per search
        masks[:, order] = True
        masks[np.arange(len(rest)), rest] = True
        masks[len(rest):, rest[0]] = True  # padding: copies of the first candidate
        kl = np.mean(project_sets(ref, masks, width)[2], axis=1)[:len(rest)]
        order.append(rest.pop(int(np.argmin(kl))))
    return order


def path_order(ref, point, max_size=None):
    """The sparse point estimate's path (module docstring): its nonzero inputs by ``|β̂_j| sd(x_j)``,
    largest first, then the others by :func:`forward_order`, up to ``max_size`` inputs."""
    point = np.asarray(point, dtype=np.float64)
    size = np.abs(point) * ref.X.std(axis=0)
    kept = [j for j in sorted(_candidates(ref), key=lambda j: -size[j]) if point[j] != 0]
    return forward_order(ref, kept[:_limit(ref, max_size)], max_size)


def exhaustive_best(ref):
    """Per size ``k``, the subset of ``k`` inputs whose projection has the smallest mean divergence over
    all subsets (``itertools.combinations``; one projection call for all of them): ``{k: (set, kl)}``,
    the oracle of the forward search on a small ``p``."""
    cand = _candidates(ref)
    subsets = [c for k in range(1, len(cand) + 1) for c in combinations(cand, k)]
    masks = np.zeros((len(subsets), ref.X.shape[1]), dtype=bool)
    for c, subset in enumerate(subsets):
        masks[c, list(subset)] = True
    kl = np.mean(project_sets(ref, masks)[2], axis=1)
    out = {}
    for subset, value in zip(subsets, kl):
        if len(subset) not in out or value < out[len(subset)][1]:
            out[len(subset)] = (set(subset), float(value))
    return out


def search_order(ref, search="forward", point=None, max_size=None):
    """Column indices in the order they enter: ``search="forward"`` or ``"path"`` (needs ``point``)."""
    if search == "forward":
        return forward_order(ref, (), max_size)
    if search == "path":
        if point is None:
            raise ValueError("search='path' needs the point estimate's weights (point=...)")
        return path_order(ref, point, max_size)
    raise ValueError(f"search must be 'forward' or 'path', got {search!r}")


# --- the evaluation -------------------------------------------------------------------------------

def _psis_log_weights(log_lik):
    """Normalized PSIS leave-one-out log weights (n, S) from the reference's pointwise log-likelihood
    (S, n) and their Pareto k (n,) (ArviZ's ``psislw``)."""
    ratios = -log_lik.T
    S = ratios.shape[1]
    lw, k = np.full(ratios.shape, -np.log(S)), np.full(ratios.shape[0], -np.inf)
    # an observation every draw predicts alike (p(y_i | θ) ≈ 1 in every draw: ratios spread by < 1e-6)
    # has uniform weights; the Pareto fit of such ratios is degenerate (ArviZ returns NaN)
    spread = np.ptp(ratios, axis=1) > 1e-6
    if spread.any():
        w, kk = _psislw(ratios[spread])
        lw[spread], k[spread] = np.asarray(w), np.asarray(kk)
    bad = ~np.all(np.isfinite(lw), axis=1)
    if bad.any():
        warnings.warn(f"PSIS gave no weights for {int(bad.sum())} observation(s): uniform weights used", UserWarning,
                      stacklevel=3)
        lw[bad], k[bad] = -np.log(S), np.inf
    return lw, k


def _psislw(log_ratios):
    from sparsebayes.inference.posterior.arviz_compat import psislw  # ArviZ 0.x's az.psislw under either version
    return psislw(log_ratios)


def _loo_pointwise(lw, log_lik):
    """``log Σ_s w_is p(y_i | θ_s)`` (n,) with normalized log weights ``lw`` (n, S)."""
    from scipy.special import logsumexp
    return logsumexp(lw + log_lik.T, axis=1)


def select(ref, order):
    """The elpd of each submodel size along ``order`` (column indices), by PSIS-LOO with the reference
    model's weights (module docstring). ``ref`` holds the evaluation draws.

    Returns a ``pandas.DataFrame`` indexed by ``size`` (0 = the ``always`` columns only) with columns
    ``added`` (the input added at that size), ``elpd``, ``se``, ``diff`` (elpd minus the reference's),
    ``se_diff`` and ``kl`` (mean divergence per observation); ``attrs``: ``suggested_size``,
    ``selected`` (the names of the first ``suggested_size`` inputs), ``reference_elpd``,
    ``reference_se``, ``pareto_k_max`` (of the reference's LOO weights), ``n_draws``."""
    import pandas as pd

    eta = ref.beta @ ref.X.T
    ll_ref = pointwise_log_lik(ref.y, eta, ref.family, ref.noise_var)
    lw, khat = _psis_log_weights(ll_ref)
    elpd_ref = _loo_pointwise(lw, ll_ref)
    n = ref.y.size
    rows = []
    mask = np.zeros(ref.X.shape[1], dtype=bool)
    width = int(ref.always.sum()) + len(order)
    for k, j in enumerate([None] + list(order)):
        if j is not None:
            mask[j] = True
        b, noise, kl = (a[0] if a is not None else None for a in project_sets(ref, mask[None], width))
        pw = _loo_pointwise(lw, pointwise_log_lik(ref.y, b @ ref.X.T, ref.family, noise))
        d = pw - elpd_ref
        rows.append(dict(size=k, added="" if j is None else ref.names[j], elpd=pw.sum(),
                         se=np.sqrt(n * np.var(pw)), diff=d.sum(), se_diff=np.sqrt(n * np.var(d)),
                         kl=float(np.mean(kl))))
    df = pd.DataFrame(rows).set_index("size")
    ok = np.flatnonzero((df["diff"] + df["se_diff"]).to_numpy() >= 0)
    suggested = int(df.index[ok[0]]) if ok.size else None
    if suggested is None:
        warnings.warn("no submodel along the search reaches the reference model's elpd within one standard error "
                      "(raise max_size)", UserWarning, stacklevel=2)
    df.attrs.update(suggested_size=suggested,
                    selected=[] if suggested is None else [ref.names[j] for j in order[:suggested]],
                    reference_elpd=float(elpd_ref.sum()), reference_se=float(np.sqrt(n * np.var(elpd_ref))),
                    pareto_k_max=float(np.max(khat)), n_draws=int(ref.beta.shape[0]))
    if np.max(khat) > KHAT_MAX:
        warnings.warn(f"PSIS-LOO of the reference model: max Pareto k {np.max(khat):.2f} > {KHAT_MAX}; the elpd "
                      "estimates of some observations are unreliable", UserWarning, stacklevel=2)
    return df


def projection_selection(ref, *, search="forward", point=None, max_size=None, num_draws=400, search_draws=20):
    """Search (:func:`search_order` on ``search_draws`` thinned draws) and evaluate (:func:`select`
    on ``num_draws`` thinned draws). ``attrs["search"]`` names the search."""
    order = search_order(ref.thin(search_draws), search, point, max_size)
    df = select(ref.thin(num_draws), order)
    df.attrs["search"] = (f"the point estimate's path (kept inputs by |β̂_j|·sd(x_j), then greedy forward by KL)"
                          if search == "path" else "greedy forward by KL")
    df.attrs["order"] = [ref.names[j] for j in order]
    return df


# --- from a Comparison ----------------------------------------------------------------------------

def family_of(est):
    """The likelihood of a fitted estimator's twin (:data:`FAMILIES`), from the likelihood it states
    (:func:`~sparsebayes.comparisons.fitted_model.likelihood_name`); ``ValueError`` for a likelihood
    without a projection here (the multinomial of SMLR, the Student-t, the negative binomial)."""
    name = likelihood_name(est)
    if name == "multinomial":
        raise ValueError("projection selection for the multinomial likelihood (SMLR) is not implemented")
    if name not in LIKELIHOOD_FAMILIES:
        raise ValueError(f"projection selection has no projection for the likelihood {name!r}")
    return LIKELIHOOD_FAMILIES[name]


def reference_from_comparison(cmp, sampler, classifier=None):
    """The :class:`Reference` of a :class:`~sparsebayes.comparisons.compare_any.Comparison`'s draws of
    ``sampler`` on ``cmp.design``: weights always zero (a type-II twin's constant columns) are left
    out; an ``intercept`` site becomes a column of ones; the Bernoulli RVM's draws (raw-term weights
    ``Aβ``) act on ``H A⁻¹``. Returns ``(reference, point)``, ``point`` the point estimate on the same
    columns (the intercept's point is 1: it is always in).

    A one-vs-all posterior (``K`` independent binary models,
    :mod:`sparsebayes.inference.posterior.twin_one_vs_all`) has no one predictive distribution to project;
    ``classifier`` (a class label) picks one class's binary model, its draws and the targets
    ``[y = classifier]``: the reference of that ``k``-vs-rest problem. Without it, a ``ValueError`` says why."""
    from sparsebayes.inference.posterior.twin_one_vs_all import CLASS_DIM, SELECTION_REFUSAL
    one_vs_all = CLASS_DIM in cmp.weight_dims
    if one_vs_all and classifier is None:  # K independent binary posteriors (twin_one_vs_all)
        raise ValueError(SELECTION_REFUSAL)
    if classifier is not None and not one_vs_all:
        raise ValueError(f"classifier= picks one class of a one-vs-all posterior; {type(cmp.estimator).__name__}'s "
                         "is one model")
    family = family_of(cmp.estimator)
    if one_vs_all:
        post = cmp.samples[sampler].posterior
        labels = [str(c) for c in post["beta"].coords[CLASS_DIM].values]
        if str(classifier) not in labels:
            raise ValueError(f"classifier must be one of the classes {labels}, got {classifier!r}")
        k = labels.index(str(classifier))
        beta = np.asarray(post["beta"].sel({CLASS_DIM: labels[k]}).transpose("chain", "draw", "basis").values)
        beta = beta.reshape(-1, beta.shape[-1])
        point = np.asarray(cmp.point, dtype=np.float64).reshape(beta.shape[1], len(labels))[:, k]
        names = [str(n) for n in post["beta"].coords["basis"].values]
    else:
        beta, point = cmp._beta(sampler), np.asarray(cmp.point, dtype=np.float64)
        names = list(cmp.names)
    if len(cmp.weight_dims) != 1 and not one_vs_all:
        raise ValueError("projection selection needs weights on one basis dim")
    H = np.asarray(cmp.design, dtype=np.float64)
    if H.shape[1] < beta.shape[1]:  # a type-II twin: its left-out columns have weight 0 in every draw
        keep = np.any(beta != 0, axis=0)
        if keep.sum() != H.shape[1]:
            raise ValueError(f"the design has {H.shape[1]} columns for {beta.shape[1]} weights and the draws do "
                             "not say which weights are left out")
        beta, point, names = beta[:, keep], point[keep], [n for n, k in zip(names, keep) if k]
    if draws_on_raw_terms(cmp.estimator):  # as verdict.scales: the draws are A β
        A = per_basis_matrix(to_raw_terms(cmp.estimator.feature_map_), H.shape[1])
        H = np.linalg.solve(A.T, H.T).T
    post = cmp.samples[sampler].posterior
    if one_vs_all:
        post = post.sel({CLASS_DIM: labels[k]})
    if "intercept" in post:
        icpt = np.asarray(post["intercept"].transpose("chain", "draw").values, dtype=np.float64).reshape(-1)
        H, beta = np.column_stack([np.ones(H.shape[0]), H]), np.column_stack([icpt, beta])
        point, names = np.r_[1.0, point], ["intercept"] + names
    always = H.std(axis=0) <= 1e-12 * np.maximum(np.abs(H).max(axis=0), 1e-300)
    always &= np.any(H != 0, axis=0)
    noise = None
    if family == "gaussian":
        if "noise_var" in post:
            noise = np.asarray(post["noise_var"].values, dtype=np.float64).reshape(-1)
        else:
            est = cmp.estimator
            noise = getattr(est, "noise_var", None)
            noise = getattr(est, "noise_var_", None) if noise is None else noise
            if noise is None:
                raise ValueError("the Gaussian reference model has no noise variance: neither drawn nor fixed")
    y = np.asarray(cmp.samples[sampler].observed_data["y"].values, dtype=np.float64).reshape(-1)
    if one_vs_all:  # the k-vs-rest targets of class k's binary model
        y = (y == k).astype(np.float64)
    return Reference(H, beta, y, family, names, always, noise), point


# --- rendering ------------------------------------------------------------------------------------

def plot(table, title=None, ax=None):
    """The elpd difference to the reference model against the submodel size, with ±1 SE bars and the
    suggested size marked (``matplotlib.figure.Figure``, not registered with pyplot); drawn on ``ax``
    (a matplotlib axes) when given, whose figure is returned."""
    from matplotlib.figure import Figure
    sizes = table.index.to_numpy()
    if ax is None:
        fig = Figure(figsize=(6.5, 3.6), layout="constrained")
        ax = fig.add_subplot()
    fig = ax.figure
    ax.axhline(0.0, color="0.5", lw=0.8, label="reference model")
    ax.errorbar(sizes, table["diff"], yerr=table["se_diff"], fmt="o-", ms=4, capsize=3, label="submodel, ±1 SE")
    k = table.attrs.get("suggested_size")
    if k is not None:
        ax.axvline(k, color="C3", ls="--", lw=1, label=f"suggested size {k}")
    ax.set_xticks(sizes, [str(s) if not a else f"{s}\n+{a}" for s, a in zip(sizes, table["added"])],
                  fontsize="small")
    ax.set_xlabel("submodel size (input added)")
    ax.set_ylabel("elpd difference to the reference (PSIS-LOO)")
    ax.set_title(title or "Projection predictive selection")
    ax.legend(loc="lower right", fontsize="small")
    return fig


def note(table):
    """One paragraph: what the selection did and its suggestion."""
    k = table.attrs.get("suggested_size")
    chosen = ", ".join(table.attrs.get("selected", [])) or "none beyond the intercept"
    return ("Projection predictive selection (Piironen, Paasiniemi & Vehtari 2020): the "
            f"{table.attrs.get('sampler', '')} posterior's draws projected onto submodels of growing size, inputs "
            f"entering by {table.attrs.get('search', 'search')}; elpd by PSIS-LOO with the reference model's weights "
            f"({table.attrs['n_draws']} draws; max Pareto k {table.attrs['pareto_k_max']:.2f}). "
            + (f"Suggested size {k} (the smallest whose elpd is within one SE of the reference model's): {chosen}."
               if k is not None else "No size reaches the reference model's elpd within one SE."))


def _display(table):
    return table.assign(**{c: table[c].map(lambda v: f"{v:.2f}") for c in ("elpd", "se", "diff", "se_diff")},
                        kl=table["kl"].map(lambda v: f"{v:.3g}"), added=table["added"].replace("", "—"))


def selection_markdown(table):
    """The selection section of ``report.md``."""
    return "\n".join(["## Selection: which inputs predict as well as all", "", note(table), "",
                      _display(table).to_markdown(disable_numparse=True), ""])


def selection_html(table):
    """The selection section of ``report.html`` (escaped)."""
    import html
    return "\n".join(["<h2>Selection: which inputs predict as well as all</h2>", f"<p>{html.escape(note(table))}</p>",
                      _display(table).to_html()])


def _class_figure(cmp, tables):
    """One panel per class of a one-vs-all comparison's per-class selections (``{class: table}``)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6.5, 3.0 * len(tables)), layout="constrained")
    for ax, (c, table) in zip(fig.subplots(len(tables), 1, squeeze=False)[:, 0], tables.items()):
        plot(table, f"{type(cmp.estimator).__name__}: class {c} vs rest ({table.attrs['sampler']})", ax=ax)
    return fig


def report_sections(cmp, plot_path=None):
    """``(markdown, html)`` of the report's selection section for a comparison: :meth:`Comparison.select`
    with its table, note and plot (embedded in the HTML; also written to ``plot_path`` when given; a
    one-vs-all posterior's per class, one panel each), and
    the approximation check's line (:mod:`sparsebayes.comparisons.approximation_check`). What cannot be
    computed for this model is said in one line instead; warnings raised on the way are listed, not raised."""
    import base64
    import html
    import io
    from pathlib import Path

    from sparsebayes.inference.posterior.twin_one_vs_all import CLASS_DIM

    lines, tables, png = [], {}, None
    one_vs_all = CLASS_DIM in cmp.weight_dims
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if one_vs_all:  # K independent binary models: one selection per class's k-vs-rest model
                for c in cmp.idata.posterior["beta"].coords[CLASS_DIM].values:
                    tables[str(c)] = cmp.select(classifier=str(c))
                fig = _class_figure(cmp, tables)
            else:
                tables[None] = cmp.select()
                fig = cmp.plot_selection(tables[None])
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=100)
            png = base64.b64encode(buf.getvalue()).decode("ascii")
            if plot_path is not None:
                Path(plot_path).write_bytes(buf.getvalue())
        except ValueError as err:
            tables = {}
            lines.append(f"Projection selection not available for this model: {err}")
        try:
            lines.append("Approximation check: " + cmp.approximation_check()["line"])
        except ValueError as err:
            lines.append(f"Approximation check not available for this model: {err}")
    lines += [f"warning: {w.message}" for w in caught if issubclass(w.category, UserWarning)]
    if one_vs_all and tables:
        lines.insert(0, "One-vs-all: K independent binary models, so inputs are selected per class, on each class's "
                        "k-vs-rest model (its draws and the targets [y = k]).")
        heading = "## Selection: which inputs predict as well as all"
        md = "\n".join([heading, ""] + [f"### class {c} (vs rest)\n\n{note(t)}\n\n"
                                         f"{_display(t).to_markdown(disable_numparse=True)}\n" for c, t in tables.items()])
        page = "\n".join(["<h2>Selection: which inputs predict as well as all</h2>"] + [
            f"<h3>class {html.escape(c)} (vs rest)</h3>\n<p>{html.escape(note(t))}</p>\n{_display(t).to_html()}"
            for c, t in tables.items()])
    else:
        table = tables.get(None)
        md = (selection_markdown(table) if table is not None else "## Selection: which inputs predict as well as all\n")
        page = (selection_html(table) if table is not None
                else "<h2>Selection: which inputs predict as well as all</h2>")
    md += "\n" + "\n".join(f"- {line}" for line in lines) + "\n"
    if png is not None:
        page += f'\n<img alt="projection selection" src="data:image/png;base64,{png}">'
    page += "\n<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"
    return md, page
