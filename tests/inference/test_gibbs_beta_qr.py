"""The QR β draw of :mod:`sparsebayes.inference.engines.gibbs_beta` and its use as Rue's fallback (issue 42).

* :func:`~sparsebayes.inference.engines.gibbs_beta.qr_draw` is affine in its normals, ``β = m + Jε``: its
  mean ``m`` and covariance ``JJᵀ`` are checked against the conditional ``N(A⁻¹b, A⁻¹)`` computed
  independently: by NumPy's dense solve and inverse of ``A`` on a well-conditioned problem, and in
  exact rational arithmetic (``fractions``) on collinear columns in units of 1e8, where forming
  ``A`` in float64 loses the prior precision of the null direction and its Cholesky factor fails;
* the augmented sweeps draw a chain's refused sweep again by QR (:func:`~sparsebayes.inference.
  hierarchy_gibbs_augmented.run_augmented_sweeps`): no sweep stays refused on that design, and where the
  Cholesky factor is finite every draw is the one of the sweeps without the retry, bit for bit;
* the augmented sweep refuses a sweep whose state is not finite (the chain stays where it was,
  ``Info.refused``), as the Gaussian sweep does.
"""
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from sparsebayes.inference.engines import gibbs_beta as gb
from sparsebayes.inference.engines import hierarchy_gibbs, hierarchy_gibbs_augmented
from sparsebayes.inference.estimators.sampling_fit import gibbs_hierarchy
from sparsebayes.models.likelihoods.probit import ProbitLikelihood


def _affine(draw, p):
    """``(m, J)`` of a draw ``β(ε) = m + Jε``: the value at ``ε = 0`` and the Jacobian."""
    zero = jnp.zeros(p)
    return np.asarray(draw(zero)), np.asarray(jax.jacfwd(draw)(zero))


def _exact_conditional(X, z, omega, v):
    """Mean and covariance of ``N(A⁻¹XᵀΩz, A⁻¹)``, ``A = XᵀΩX + diag(1/v)``, in exact rationals
    (the float64 inputs converted exactly), by Gauss–Jordan elimination; returned as floats."""
    n, p = X.shape
    F = [[Fraction(float(x)) for x in row] for row in X]
    w = [Fraction(float(o)) for o in omega]
    zz = [Fraction(float(t)) for t in z]
    A = [[sum(F[k][i] * w[k] * F[k][j] for k in range(n)) + (1 / Fraction(float(v[i])) if i == j else 0)
          for j in range(p)] for i in range(p)]
    b = [sum(F[k][i] * w[k] * zz[k] for k in range(n)) for i in range(p)]
    aug = [A[i] + [Fraction(int(i == j)) for j in range(p)] + [b[i]] for i in range(p)]
    for c in range(p):
        piv = next(r for r in range(c, p) if aug[r][c] != 0)
        aug[c], aug[piv] = aug[piv], aug[c]
        aug[c] = [x / aug[c][c] for x in aug[c]]
        for r in range(p):
            if r != c and aug[r][c] != 0:
                f = aug[r][c]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[c])]
    cov = np.array([[float(aug[i][p + j]) for j in range(p)] for i in range(p)])
    mean = [aug[i][2 * p] for i in range(p)]

    def quad(U, W):  # Uᵀ A W for float64 arrays (p, k), exactly, as floats
        Uf = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(U.T)]
        Wf = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(W.T)]
        return np.array([[float(sum(u[i] * A[i][j] * w[j] for i in range(p) for j in range(p))) for w in Wf]
                         for u in Uf])

    def mahalanobis(m):  # ‖m − mean‖ in the conditional's metric, (m − mean)ᵀ A (m − mean), exactly
        d = [Fraction(float(x)) - y for x, y in zip(m, mean)]
        return float(sum(d[i] * A[i][j] * d[j] for i in range(p) for j in range(p))) ** 0.5

    return np.array([float(x) for x in mean]), cov, mahalanobis, quad


def _collinear_problem(seed=0, units=1e8):
    """Probit-like pseudo-data on 4 columns, the last a copy of the first, all in ``units``."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((12, 3))
    X = np.column_stack([Z, Z[:, 0]]) * units
    z = Z @ np.array([1.0, -0.5, 0.0]) + rng.standard_normal(12)
    omega = rng.uniform(0.2, 3.0, 12)
    v = rng.uniform(0.5, 2.0, 4)
    return X, z, omega, v


def test_qr_draw_has_the_dense_conditionals_mean_and_covariance():
    rng = np.random.default_rng(1)
    n, p = 9, 4
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 2.0, p)
    z, omega, v, s2 = rng.normal(size=n), rng.uniform(0.2, 3.0, n), rng.uniform(0.1, 3.0, p), 0.7
    A = X.T @ (omega[:, None] * X) / s2 + np.diag(1 / v)
    mean, J = _affine(lambda e: gb.qr_draw(e, X, z, omega, v, s2), p)
    np.testing.assert_allclose(mean, np.linalg.solve(A, X.T @ (omega * z) / s2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(J @ J.T, np.linalg.inv(A), rtol=1e-10, atol=1e-12)


def test_qr_draw_matches_the_exact_conditional_where_the_cholesky_factor_fails():
    X, z, omega, v = _collinear_problem()
    p = X.shape[1]
    chol = gb.rue_draw(jnp.zeros(p), X, z, omega, v, 1.0)
    assert not np.all(np.isfinite(np.asarray(chol))), "the case must break the Cholesky draw"
    mean, J = _affine(lambda e: gb.qr_draw(e, X, z, omega, v, 1.0), p)
    exact_mean, exact_cov, mahalanobis, quad = _exact_conditional(X, z, omega, v)
    # in the conditional's own metric (its sds range from ~1e-9 to ~1, the null direction of the
    # duplicated column keeping its prior variance): the mean within 1e-6 sd, JᵀAJ = I (cov J Jᵀ = A⁻¹)
    assert mahalanobis(mean) <= 1e-6
    np.testing.assert_allclose(quad(J, J), np.eye(p), atol=1e-6)
    assert np.linalg.norm(J @ J.T - exact_cov) <= 1e-6 * np.linalg.norm(exact_cov)
    key = jax.random.PRNGKey(3)  # draw_beta's "qr": the QR draw from Rue's normals
    normal = jax.random.normal(jax.random.split(key)[0], (p,))
    np.testing.assert_array_equal(np.asarray(gb.draw_beta(key, X, z, omega, v, 1.0, method="qr")),
                                  np.asarray(gb.qr_draw(normal, X, z, omega, v, 1.0)))


def _augmented(X, y, num_chains, sweeps, seed=0):
    """A probit Laplace chain's inputs for :func:`hierarchy_gibbs_augmented.run_augmented_sweeps`."""
    _, prior = gibbs_hierarchy("laplace")
    n, p = X.shape
    data = hierarchy_gibbs_augmented.AugmentedData(jnp.asarray(np.column_stack([np.ones(n), X])), jnp.asarray(y, float),
                                         jnp.array([100.0]))
    start = hierarchy_gibbs_augmented.AugmentedState(jnp.zeros(p), jnp.zeros(()), jnp.ones(()), prior.gibbs_init(p))
    start = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (num_chains, *jnp.shape(a))), start)
    keys = hierarchy_gibbs.sweep_keys(seed, num_chains, sweeps)
    return start, keys, data, prior


def _sweeps_without_retry(start, keys, data, prior, lik):
    """The sweeps as :func:`hierarchy_gibbs_augmented.run_augmented_sweeps` ran them before the QR retry (the
    data and prior arguments of the compiled program, as there, not constants folded into it)."""

    def sweeps(st, ks, data, prior):
        step = jax.vmap(lambda s, k: hierarchy_gibbs_augmented.augmented_step(s, data, hierarchy_gibbs_augmented.AugmentedModel(prior, lik), key=k))

        def body(s, k):
            s, info = step(s, k)
            return s, (s, info)

        return jax.lax.scan(body, st, ks)[1]

    return jax.jit(sweeps)(start, keys, data, prior)


def _probit_data(X_scale, seed):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((30, 3))
    Z = np.column_stack([Z, Z[:, 0]])
    return Z * X_scale, (Z[:, 0] - Z[:, 1] + rng.logistic(size=30) > 0).astype(float)


def test_augmented_sweeps_retry_refused_chains_by_qr_and_leave_the_others_bit_for_bit():
    lik = ProbitLikelihood()
    X, y = _probit_data(1.0, 0)  # ordinary units: Cholesky everywhere, the draws exactly as before
    start, keys, data, prior = _augmented(X, y, 2, 40)
    _, states, infos = hierarchy_gibbs_augmented.run_augmented_sweeps(start, keys, data, prior, lik)
    old_states, old_infos = _sweeps_without_retry(start, keys, data, prior, lik)
    assert not np.any(np.asarray(old_infos.refused))
    for a, b in zip(jax.tree_util.tree_leaves((states, infos)), jax.tree_util.tree_leaves((old_states, old_infos))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    X, y = _probit_data(1e8, 0)  # a duplicated column in units of 1e8: Rue's factor fails
    start, keys, data, prior = _augmented(X, y, 2, 40)
    _, old_infos = _sweeps_without_retry(start, keys, data, prior, lik)
    assert np.any(np.asarray(old_infos.refused)), "the case must make Rue's draw fail to test the retry"
    _, states, infos = hierarchy_gibbs_augmented.run_augmented_sweeps(start, keys, data, prior, lik)
    assert not np.any(np.asarray(infos.refused))
    beta = np.asarray(states.beta)
    assert np.all(np.isfinite(beta)) and np.all(np.ptp(beta, axis=0) > 0)  # every chain moves


class _BrokenProbit:
    """The probit augmentation with a NaN row precision once ``η`` leaves 0: a genuinely broken sweep."""

    def __init__(self):
        self._inner = ProbitLikelihood()

    def gibbs_augment(self, key, y, eta, param):
        z, omega = self._inner.gibbs_augment(key, y, eta, param)
        return z, jnp.where(jnp.any(eta != 0), jnp.nan, 1.0) * omega

    def log_lik(self, y, eta, param=None):
        return self._inner.log_lik(y, eta)


def test_the_augmented_sweep_refuses_a_state_that_is_not_finite():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((15, 3))
    y = (X[:, 0] > 0).astype(float)
    _, prior = gibbs_hierarchy("laplace")
    design = jnp.column_stack([jnp.ones(15), X])
    data = hierarchy_gibbs_augmented.AugmentedData(design, jnp.asarray(y), jnp.array([100.0]))
    start = hierarchy_gibbs_augmented.AugmentedState(jnp.zeros(3), jnp.zeros(()), jnp.ones(()), prior.gibbs_init(3))
    lik = _BrokenProbit()
    step = jax.jit(lambda s, k: hierarchy_gibbs_augmented.augmented_step(s, data, hierarchy_gibbs_augmented.AugmentedModel(prior, lik), key=k))
    first, info = step(start, jax.random.PRNGKey(0))  # η = 0: the ordinary probit sweep
    assert not bool(info.refused) and np.all(np.isfinite(np.asarray(first.beta)))
    second, info = step(first, jax.random.PRNGKey(1))  # η ≠ 0: NaN precisions, the draw is not finite
    assert bool(info.refused)
    for a, b in zip(jax.tree_util.tree_leaves(second), jax.tree_util.tree_leaves(first)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
