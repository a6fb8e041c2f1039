"""The sequential type-II engine against direct computations and a slow direct optimiser."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import xlogy
from scipy.optimize import minimize

from sparsebayes.comparisons.synthetic import sinc
from sparsebayes.inference.engines import typeii, typeii_batch, typeii_exact, typeii_linalg, typeii_moves
from sparsebayes.models.features import GaussianKernelFeatures
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior, optimal_variance

PRIORS = {"rvm": ARDPrior(), "bls": ScaledLaplacePrior(), "flap": LaplaceVariancePrior(),
          "flap-sigma": LaplaceVariancePrior(noise_update="variances-fixed", lambda_update="algorithm1")}
# The exact-ascent variants: every move scored with λ re-maximised.
PROFILED = {name: prior.replace(lambda_update="profiled") for name, prior in PRIORS.items()}


def _sinc_design(n=40, sigma=0.1, seed=0, width=2.0):
    X, y = sinc(n, sigma=sigma, seed=seed)
    return GaussianKernelFeatures(width=width).fit(X).transform(X), y


def _linear_design(n=25, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    y = X @ np.array([3, 1.5, 0, 0, 2, 0, 0, 0]) + rng.normal(size=n)
    return X - X.mean(0), y - y.mean()


def _log_marginal(Phi, y, v, noise_var):
    """−½(log|C| + yᵀC⁻¹y + N log 2π), C = σ²I + Φ diag(v) Φᵀ, computed directly."""
    n = Phi.shape[0]
    C = noise_var * jnp.eye(n) + (Phi * v) @ Phi.T
    L = jnp.linalg.cholesky(C)
    a = jax.scipy.linalg.solve_triangular(L, y, lower=True)
    return -0.5 * (2 * jnp.sum(jnp.log(jnp.diag(L))) + a @ a + n * jnp.log(2 * jnp.pi))


def _bls_direct(Phi, y, tau, noise_var):
    """004 eq. 13 with a=b=c=d=0, the exponential prior over the A active τ_i, λ at eq. 17."""
    active = tau > 0
    A = jnp.sum(active)
    T = jnp.sum(tau)
    lam = 2 * (A - 1) / T
    prior = xlogy(A - 1.0, lam) - A * jnp.log(2.0) - 0.5 * lam * T - jnp.log(noise_var)
    return _log_marginal(Phi, y, noise_var * tau, noise_var) + prior


def _fit(Phi, y, prior, noise0, **kw):
    data = typeii_exact.make_data(Phi, y)
    kw.setdefault("capacity", Phi.shape[1])
    return typeii_exact.fit(data, prior, noise0, **kw)


@pytest.mark.parametrize("name", list(PRIORS))
def test_objective_never_decreases(name):
    Phi, y = _sinc_design(n=50, sigma=0.2, seed=3)
    data = typeii_exact.make_data(Phi, y)
    noise0 = 0.01 * np.mean(y**2) if name == "flap" else 0.1 * np.var(y)
    start = typeii_exact.start(data, PROFILED[name], noise0, 51)
    state, info = typeii.trace(start, data, typeii.make_model(PROFILED[name]), n_steps=150, tol=1e-9)
    trace = np.r_[float(start.objective), np.asarray(info.objective)]
    # each step's Info: a profiled move's gain is the exact change of L, so the step's rise of L is
    # that gain (FLAP: σ² fixed) or that gain plus a σ² update's, which is an ascent too
    kind, gain, rise = np.asarray(info.kind), np.asarray(info.gain), np.diff(trace)
    moved = kind < 2
    assert set(np.unique(kind)) <= {0, 1, 2} and moved.sum() > 2
    tol = 1e-8 * np.maximum(1.0, np.abs(trace[1:]))
    if name == "flap":
        np.testing.assert_allclose(rise[moved], gain[moved], atol=float(tol.max()))
    assert np.all(rise[moved] >= gain[moved] - tol[moved])
    assert np.all(np.isfinite(trace))
    assert np.all(np.diff(trace) >= -1e-9 * np.maximum(1.0, np.abs(trace[1:])))
    assert trace[-1] > trace[0]


@pytest.mark.parametrize("name", list(PRIORS))
def test_profiled_moves_re_estimate_a_lone_basis(name):
    """With one basis in the model, its delete is not allowed and so not scored: the re-estimate
    stays on offer. Before, the delete's score (no τ_i left: λ = 0 and a log-λ term of +∞ when
    a = 0) crowded it out, and a fit that kept one basis stopped at its starting variance
    (profiled BLS, N = 40: v 189.5 where L peaks at 2.33, 1.69 nats lower)."""
    rng = np.random.default_rng(2)
    Phi = rng.normal(size=(40, 10))
    y = Phi[:, 0] + 2.0 * rng.normal(size=40)
    data = typeii_exact.make_data(Phi, y)
    prior = PROFILED[name]
    state = typeii_exact.start(data, prior, 0.05, capacity=8)
    proposal, gain, _ = typeii_exact.candidate_gains(data, state, prior, 1.0 - 1e-3)
    lone = int(np.argmax(np.asarray(state.var)))
    assert np.isfinite(float(gain[lone])) and float(proposal[lone]) > 0
    fitted = typeii_exact.fit(data, prior, 0.05, capacity=8)
    active = np.flatnonzero(np.asarray(fitted.var))
    if active.size == 1:  # then the lone variance must be where L peaks (λ* = 0 for a = 0)
        s, q = typeii_exact.sparsity_quality(fitted)
        m = int(active[0])
        best = optimal_variance(s[m], q[m], prior.typeii_penalty(fitted.lam, fitted.noise_var))
        assert float(fitted.var[m]) == pytest.approx(float(best), rel=1e-3)


@pytest.mark.parametrize("name", list(PRIORS))
def test_reported_objective_equals_direct_evidence_plus_prior(name):
    Phi, y = _sinc_design(n=30, seed=1)
    prior = PRIORS[name]
    noise0 = 0.01 * np.mean(y**2) if name == "flap" else 0.1 * np.var(y)
    st = _fit(Phi, y, prior, noise0, max_iter=40)
    v, s2, lam = np.asarray(st.var), float(st.noise_var), float(st.lam)
    A, T = int((v > 0).sum()), v.sum()
    direct = float(_log_marginal(Phi, y, v, s2))
    A, lam = float(A), float(lam)
    if name == "bls":
        direct += float(xlogy(A - 1.0, lam)) - A * np.log(2) - 0.5 * lam * T / s2 - np.log(s2)
        assert lam == pytest.approx(2 * (A - 1) / (T / s2), rel=1e-10)  # eq. 17
    elif name in ("flap", "flap-sigma"):
        direct += float(xlogy(A - 1.0, lam)) - A * np.log(2) - 0.5 * lam * T - (np.log(s2) if name == "flap-sigma" else 0)
    assert float(st.objective) == pytest.approx(direct, abs=1e-7 * max(1, abs(direct)))


def _optimise_support(Phi, y, support, x0):
    """Slow reference: L-BFGS over (log τ_support, log σ²) of the directly computed objective."""
    Phi_s = jnp.asarray(Phi[:, support])

    def neg(z):
        return -_bls_direct(Phi_s, jnp.asarray(y), jnp.exp(z[:-1]), jnp.exp(z[-1]))

    f = jax.jit(jax.value_and_grad(neg))
    res = minimize(lambda z: tuple(np.asarray(t, dtype=float) for t in f(z)), x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
    return -res.fun


@pytest.mark.parametrize("seed", [1, pytest.param(0, marks=[pytest.mark.slow, pytest.mark.xfail(
    strict=True, reason="local optimum: adding basis 6 and re-fitting all τ and σ² jointly gains 0.077 nats, "
    "no single add/re-estimate/delete at fixed σ² does (see the report)")])])
def test_bls_sequential_reaches_the_direct_optimum(seed):
    Phi, y = _linear_design(seed=seed)
    st = _fit(Phi, y, PROFILED["bls"], 0.1 * np.var(y), tol=1e-13, noise_tol=1e-12)
    assert bool(st.converged)
    v, s2 = np.asarray(st.var), float(st.noise_var)
    support = np.flatnonzero(v > 0)
    engine = float(st.objective)
    assert engine == pytest.approx(float(_bls_direct(Phi, y, v / s2, s2)), abs=1e-8)
    # same support from a generic start: the continuous optimum
    x0 = np.r_[np.zeros(len(support)), np.log(np.var(y))]
    best_same = _optimise_support(Phi, y, support, x0)
    assert abs(engine - best_same) < 1e-6
    # every support one flip away (add or drop one basis function) is no better
    for j in range(Phi.shape[1]):
        flipped = np.setdiff1d(support, [j]) if j in support else np.union1d(support, [j])
        if len(flipped) == 0:
            continue
        assert _optimise_support(Phi, y, flipped, np.r_[np.zeros(len(flipped)), np.log(np.var(y))]) < engine + 1e-6


@pytest.mark.parametrize("design", ["linear", pytest.param("sinc", marks=[pytest.mark.slow, pytest.mark.xfail(
    strict=True, reason="the sequential RVM stops at a local optimum 1.1 nats below one L-BFGS finds (see the report)")])])
def test_rvm_sequential_reaches_the_direct_optimum(design):
    Phi, y = _linear_design(seed=2) if design == "linear" else _sinc_design(n=25, sigma=0.1, seed=4)
    st = _fit(Phi, y, ARDPrior(), 0.1 * np.var(y), tol=1e-13, noise_tol=1e-12)
    engine = float(st.objective)
    Phi_j, y_j = jnp.asarray(Phi), jnp.asarray(y)

    def neg(z):  # z = (v_1..v_M ≥ 0, log σ²)
        return -_log_marginal(Phi_j, y_j, z[:-1], jnp.exp(z[-1]))

    f = jax.jit(jax.value_and_grad(neg))
    best = -np.inf
    rng = np.random.default_rng(0)
    m = Phi.shape[1]
    for start in range(6):
        x0 = np.r_[rng.uniform(0, 0.5, m) if start else np.full(m, 0.1), np.log(0.1 * np.var(y))]
        res = minimize(lambda z: tuple(np.asarray(t, dtype=float) for t in f(z)), x0, jac=True, method="L-BFGS-B",
                       bounds=[(0, None)] * m + [(None, None)], options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-9})
        best = max(best, -res.fun)
    assert engine >= best - 1e-6
    assert engine == pytest.approx(float(_log_marginal(Phi_j, y_j, st.var, st.noise_var)), abs=1e-8)


@pytest.mark.parametrize("name", [pytest.param("rvm", marks=pytest.mark.slow), "bls"])
def test_growing_capacity_takes_the_steps_of_a_fit_with_every_slot(name):
    """:func:`typeii_exact.fit_growing` from 4 slots (paused and widened, never restarted) ends where
    a fit with a slot for every basis function ends, step for step; with a limit below the
    model's size (RVM) it pauses, widens, and then refuses adds at the limit exactly as
    :func:`typeii_exact.fit` in that many slots does."""
    Phi, y = _sinc_design(n=60, sigma=0.05, seed=2)
    data = typeii_exact.make_data(Phi, y)
    prior, noise0, m = PRIORS[name], 0.1 * np.var(y), Phi.shape[1]
    full = typeii_exact.fit(data, prior, noise0, capacity=m, noise_every=3)
    grown = typeii_exact.fit_growing(data, prior, noise0, limit=m, start=4, noise_every=3)
    assert int((np.asarray(full.var) > 0).sum()) > 4  # so 4 slots had to grow
    assert int(grown.n_iter) == int(full.n_iter) and bool(grown.converged) and not bool(grown.capacity_hit)
    np.testing.assert_array_equal(np.asarray(grown.var) > 0, np.asarray(full.var) > 0)
    assert float(grown.objective) == pytest.approx(float(full.objective), abs=1e-9)
    if name != "rvm":
        return
    capped = typeii_exact.fit_growing(data, prior, noise0, limit=4, start=1, noise_every=3)
    direct = typeii_exact.fit(data, prior, noise0, capacity=4, noise_every=3)
    assert bool(capped.capacity_hit) and int(capped.n_iter) == int(direct.n_iter)
    assert float(capped.objective) == pytest.approx(float(direct.objective), abs=1e-9)


@pytest.mark.parametrize("name", ["rvm", "bls"])
def test_a_paused_step_changes_nothing_but_the_capacity_flag(name):
    """With ``pause_when_full``, a step whose best move is an add with no free slot leaves the
    state as it was (bit for bit) and sets ``capacity_hit``; without it, the step moves."""
    Phi, y = _sinc_design(n=60, sigma=0.05, seed=2)
    data, prior = typeii_exact.make_data(Phi, y), PRIORS[name]
    state = typeii_exact.start(data, prior, 0.1 * np.var(y), 1)  # the one slot is taken
    move = typeii_exact.choose_move(data, state, prior)
    assert float(move.blocked) > max(float(move.gain), 1e-9)  # the best move is a refused add
    paused, info = typeii_exact.take_step(state, data, prior, noise_every=1, pause_when_full=True)
    assert int(info.kind) == typeii_moves.PAUSED and int(info.basis) == int(move.m)
    assert bool(paused.capacity_hit) and not bool(state.capacity_hit)
    for field in state._fields:
        if field != "capacity_hit":
            np.testing.assert_array_equal(np.asarray(getattr(paused, field)), np.asarray(getattr(state, field)),
                                          err_msg=field)
    moved, info = typeii_exact.take_step(state, data, prior, noise_every=1)
    assert int(moved.n_iter) == 1 and bool(moved.capacity_hit)
    assert int(info.kind) != typeii_moves.PAUSED and float(info.objective) == float(moved.objective)


def test_batch_growing_takes_the_steps_of_single_fits():
    """:func:`typeii_batch.fit_batch_growing` from 2 slots: each fit ends where its single fit with
    every slot ends.

    The fits stop at ``tol=1e-7``, where their last gains (1.7e-7 and more) and the next ones
    (1e-10 and less) lie far from it. At the default 1e-9 they stop in a tail of gains of 1e-9 to
    1e-11, where the rounding of a differently compiled program (the ``vmap``-ed one, or another
    CPU) decides whether one more step is taken: 100 steps against 101 at XLA's optimization
    level 0, with the same support and ``L`` within 3e-11."""
    designs = [_sinc_design(n=60, sigma=0.05, seed=k) for k in (2, 3, 4)]
    data = jax.vmap(typeii_exact.make_data)(np.stack([d[0] for d in designs]), np.stack([d[1] for d in designs]))
    noise0 = 0.1 * np.array([np.var(d[1]) for d in designs])
    m = designs[0][0].shape[1]
    batch = typeii_batch.fit_batch_growing(data, PRIORS["rvm"], noise0, limit=m, start=2, noise_every=3, tol=1e-7)
    for k, (P, yk) in enumerate(designs):
        one = typeii_exact.fit(typeii_exact.make_data(P, yk), PRIORS["rvm"], noise0[k], capacity=m, noise_every=3, tol=1e-7)
        assert int((np.asarray(one.var) > 0).sum()) > 2
        assert int(batch.n_iter[k]) == int(one.n_iter) and not bool(batch.capacity_hit[k])
        assert float(batch.objective[k]) == pytest.approx(float(one.objective), abs=1e-9)


def test_rvm_moves_at_the_current_lambda_are_its_profiled_moves():
    """The RVM has no λ: scoring moves at the current λ (its default, the cheaper way) takes the
    very steps of the profiled scoring, the exact change of ``L``."""
    Phi, y = _sinc_design(n=60, sigma=0.2, seed=4)
    noise0 = 0.1 * np.var(y)
    assert not PRIORS["rvm"].profile_lambda and PROFILED["rvm"].profile_lambda
    a, b = (_fit(Phi, y, prior, noise0, noise_every=5) for prior in (PRIORS["rvm"], PROFILED["rvm"]))
    assert bool(a.converged) and int(a.n_iter) == int(b.n_iter) > 10
    np.testing.assert_array_equal(np.asarray(a.var) > 0, np.asarray(b.var) > 0)
    assert float(a.objective) == pytest.approx(float(b.objective), abs=1e-10)


@pytest.mark.parametrize("name", ["bls", "flap-sigma"])
def test_algorithm1_stops_at_a_fixed_point_of_eqs_16_and_17(name):
    """004 Algorithm 1 (the default of these hierarchies): at convergence every v_i is eq. 16 at the
    final λ (0 exactly where q_i² − s_i ≤ 2κ) and λ is eq. 17 over the active set."""
    Phi, y = _linear_design(n=40, seed=5)
    prior = PRIORS[name].replace(lambda_update="algorithm1")
    assert not prior.profile_lambda
    noise0 = 0.1 * np.var(y)
    st = _fit(Phi, y, prior, noise0, tol=1e-12, noise_tol=1e-12, max_iter=5000)
    assert bool(st.converged)
    s, q = typeii_exact.sparsity_quality(st)
    v, lam, s2 = np.asarray(st.var), float(st.lam), float(st.noise_var)
    kappa = float(prior.typeii_penalty(lam, s2))
    # the stop prior is a gain below 1e-12; ℓ_i is flat at its maximum (gain ∝ δv²), so a weakly
    # determined v_i may still sit ~1e-5 (relative) from eq. 16: 1e-4 is the stated tolerance
    np.testing.assert_allclose(v, np.asarray(optimal_variance(s, q, kappa)), rtol=1e-4, atol=1e-12)
    assert 0 < (v > 0).sum() < v.size
    sum_tau = v.sum() / s2 if name == "bls" else v.sum()
    assert lam == pytest.approx(2 * ((v > 0).sum() - 1) / sum_tau, rel=1e-10)


@pytest.mark.parametrize("noise_update", ["eq18", "variances-fixed"])
def test_bls_noise_updates_stop_at_their_fixed_points(noise_update):
    """At convergence σ² is the update's own fixed point: 004 eq. 18, ``yᵀC̃⁻¹y/(N + 2)`` (τ
    fixed), or Tipping & Faul's ``‖y − Φμ‖²/(N + 2 − Σγ_i)`` (the prior variances fixed; the
    + 2 is the paper's 1/σ² prior). A kernel design where the two differ by far more than the
    tolerance."""
    Phi, y = _sinc_design(n=60, sigma=0.05, seed=2, width=1.0)
    prior = ScaledLaplacePrior(noise_update=noise_update)
    st = _fit(Phi, y, prior, 0.1 * np.var(y), tol=1e-12, noise_tol=1e-12, max_iter=5000)
    assert bool(st.converged)
    n = y.size
    w = np.asarray(typeii_exact.coefficients(st, Phi.shape[1]))
    v = np.asarray(st.var)
    active = v > 0
    Sigma = np.asarray(typeii_exact.posterior_covariance(st, Phi.shape[1]))
    gamma = np.sum(1.0 - np.diag(Sigma)[active] / v[active])
    s2 = float(st.noise_var)
    eq18 = (y @ y - y @ Phi @ w) / (n + 2)
    tipping_faul = np.sum((y - Phi @ w) ** 2) / (n + 2 - gamma)
    assert abs(eq18 - tipping_faul) > 0.05 * s2
    expect = eq18 if noise_update == "eq18" else tipping_faul
    assert s2 == pytest.approx(expect, rel=1e-6)


def test_flags_are_static_data_and_compose_and_bad_flags_are_refused():
    """The flags are fields of the one class (no class made per flag), static in the pytree: the
    hyperparameters are its leaves, so jit reuses a compiled fit per (class, flags)."""
    prior = ScaledLaplacePrior(a=1.0).replace(noise_update="variances-fixed").replace(lambda_update="profiled")
    same = ScaledLaplacePrior(a=1.0, lambda_update="profiled", noise_update="variances-fixed")
    assert type(prior) is ScaledLaplacePrior and prior == same and prior.a == 1.0 and prior.profile_lambda
    leaves, treedef = jax.tree_util.tree_flatten(prior)
    assert leaves == [1.0, 0.0, 0.0, 0.0]
    assert treedef == jax.tree_util.tree_structure(ScaledLaplacePrior(a=2.0, lambda_update="profiled",
                                                                      noise_update="variances-fixed"))
    assert treedef != jax.tree_util.tree_structure(ScaledLaplacePrior(a=1.0))
    assert prior.replace(noise_update="eq18").noise_update == "eq18"
    with pytest.raises(ValueError, match="ARDPrior.noise_update"):
        ARDPrior(noise_update="eq18")
    with pytest.raises(ValueError, match="noise_update"):
        ScaledLaplacePrior(noise_update="ml")
    with pytest.raises(ValueError, match="lambda_update"):
        LaplaceVariancePrior(lambda_update="paper")


def test_bls_pruning_rule_unit_cases():
    noise_var, lam, s = 0.5, 4.0, 1.0
    kappa = lam / (2 * noise_var)  # BLS: κ = λ/(2σ²), threshold q² − s > λσ⁻² = 8
    below, at, above = 3.0 - 1e-6, 3.0, 3.1  # q² − s just below, at, above 8
    assert float(optimal_variance(s, below, kappa)) == 0.0
    assert float(optimal_variance(s, at, kappa)) == 0.0
    v = float(optimal_variance(s, above, kappa))
    q2, lsi = above**2, lam / noise_var
    tau_eq16 = (-s - 2 * lsi + np.sqrt(s**2 + 4 * q2 * lsi)) / (2 * lam * s)
    assert v > 0 and v / noise_var == pytest.approx(tau_eq16, rel=1e-12)
    # brute force: ℓ(τ) of eq. 14 is maximised at eq. 16 (or at 0 below the threshold)
    taus = np.linspace(0, 5 * tau_eq16, 200001)
    for q, expect in ((below, 0.0), (above, tau_eq16)):
        ell = 0.5 * (-np.log1p(noise_var * taus * s) + q**2 * noise_var * taus / (1 + noise_var * taus * s) - lam * taus)
        assert taus[np.argmax(ell)] == pytest.approx(expect, abs=taus[1] * 1.01)


def test_rvm_rule_is_tipping_faul():
    s, q = 2.0, 3.0
    assert float(optimal_variance(s, q, 0.0)) == pytest.approx((q * q - s) / s**2)  # α = s²/(q² − s)
    assert float(optimal_variance(s, 1.0, 0.0)) == 0.0


@pytest.mark.parametrize("lanes", [1, 2], ids=["sequential", "two-lanes"])
@pytest.mark.parametrize("prior", [ScaledLaplacePrior(), ARDPrior()], ids=["bls", "rvm"])
def test_batched_fits_equal_single_fits_and_predict(prior, lanes):
    """The batch takes the same steps as single fits: five data sets one after another, or on two
    ``vmap``-ed lanes (a lane whose fit stops takes the next data set), end where five single fits
    end, step counts included."""
    designs = [_sinc_design(n=40, seed=k) for k in range(5)]
    Phi = np.stack([d[0] for d in designs])
    y = np.stack([d[1] for d in designs])
    data = jax.vmap(typeii_exact.make_data)(Phi, y)
    noise0 = 0.1 * y.var(axis=1)
    batch = typeii_batch.fit_batch(data, prior, noise0, capacity=41, noise_every=3, lanes=lanes)
    for k in range(5):
        single = _fit(Phi[k], y[k], prior, noise0[k], capacity=41, noise_every=3)
        assert float(batch.objective[k]) == pytest.approx(float(single.objective), abs=1e-8)
        assert int(batch.n_iter[k]) == int(single.n_iter)
        assert bool(batch.converged[k]) == bool(single.converged)
    mean, var = typeii_exact.predict(single, jnp.asarray(Phi[4]))
    np.testing.assert_allclose(mean, Phi[4] @ np.asarray(typeii_exact.coefficients(single, 41)), atol=1e-10)
    assert np.all(np.asarray(var) >= float(single.noise_var))


def test_make_data_takes_an_aligned_design_without_copying_it():
    """``fit_design``'s padded design (:func:`typeii_linalg.aligned_zeros`) reaches the engine without a
    copy, and the packed products are those of the design."""
    Phi, y = _sinc_design(n=40)
    P = typeii_linalg.aligned_zeros(Phi.shape)
    assert P.ctypes.data % 64 == 0 and P.flags["C_CONTIGUOUS"] and not P.any()
    P[:] = Phi
    data = typeii_exact.make_data(P, y)
    if jax.default_backend() == "cpu":
        assert data.Phi.unsafe_buffer_pointer() == P.ctypes.data
    np.testing.assert_allclose(np.asarray(data.col_sq), (Phi**2).sum(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(data.Phity), Phi.T @ y, rtol=1e-12, atol=1e-12)
    assert float(data.n_obs) == 40 and bool(np.all(np.asarray(data.basis_mask)))


def test_sweep_inverse_equals_numpy_with_identity_rows():
    """The batched path's sweep-operator inverse (no LAPACK) on an SPD matrix whose free slots
    are identity rows, some of them after the last active one (not swept) and some between."""
    rng = np.random.default_rng(0)
    active = np.zeros(12, bool)
    active[[0, 2, 3, 7]] = True
    A = rng.standard_normal((12, 12))
    P = np.where(active[:, None] & active[None, :], A @ A.T + 1e-3 * np.eye(12), np.eye(12))
    for inverse in (typeii_linalg.spd_inverse_sweep, typeii_linalg.spd_inverse_lapack):
        P_inv, logdet = jax.jit(inverse)(jnp.asarray(P), jnp.asarray(active))
        np.testing.assert_allclose(np.asarray(P_inv), np.linalg.inv(P), rtol=1e-8, atol=1e-8 * np.abs(np.linalg.inv(P)).max())
        assert float(logdet) == pytest.approx(np.linalg.slogdet(P)[1], abs=1e-9)


def test_collinear_near_duplicate_column_is_kept_out_by_the_guard():
    """BLS (unlike the RVM, where a duplicate has q² − s = 0 at the optimum) would add a near-copy of a
    column already in; the alignment guard keeps it out."""
    Phi, y = _linear_design()
    rng = np.random.default_rng(0)
    Phi = np.c_[Phi, Phi[:, 0] + 1e-3 * rng.standard_normal(len(y))]
    guarded = np.asarray(_fit(Phi, y, ScaledLaplacePrior(), 0.1 * np.var(y)).var)
    unguarded = np.asarray(_fit(Phi, y, ScaledLaplacePrior(), 0.1 * np.var(y), align_max=2.0).var)
    assert unguarded[0] > 0 and unguarded[-1] > 0  # without the guard both copies enter
    assert not (guarded[0] > 0 and guarded[-1] > 0)


def test_rank_one_updates_equal_a_fresh_recompute():
    """Σ, μ, log|Σ|, S, Q after many add / re-estimate / delete moves (FLAP: σ² fixed, so nothing
    is ever recomputed from scratch) equal a Cholesky recompute of the same active set."""
    Phi, y = _sinc_design(n=50, sigma=0.2, seed=3)
    data = typeii_exact.make_data(Phi, y)
    prior = PRIORS["flap"]
    state = typeii_exact.start(data, prior, 0.01 * np.mean(y**2), 51)
    step = jax.jit(lambda st: typeii_exact.take_step(st, data, prior)[0])
    n_moves = {"add": 0, "delete": 0}
    for _ in range(80):
        before = np.asarray(state.var) > 0
        state = step(state)
        after = np.asarray(state.var) > 0
        n_moves["add"] += int((after & ~before).sum())
        n_moves["delete"] += int((before & ~after).sum())
    assert n_moves["add"] > 5
    fresh = typeii_exact._recompute(data, state, state.var, state.noise_var)
    for field in ("Sigma", "mu", "S", "Q"):
        np.testing.assert_allclose(np.asarray(getattr(state, field)), np.asarray(getattr(fresh, field)),
                                   rtol=1e-7, atol=1e-8 * float(np.max(np.abs(getattr(fresh, field)))))
    assert float(state.logdet_Sigma) == pytest.approx(float(fresh.logdet_Sigma), abs=1e-7)


def test_predictive_variance_is_noise_plus_the_posterior_quadratic_form():
    Phi, y = _sinc_design(n=40, seed=2)
    st = _fit(Phi, y, ARDPrior(), 0.1 * np.var(y))
    v, s2 = np.asarray(st.var), float(st.noise_var)
    A = v > 0
    Sigma = np.linalg.inv(Phi[:, A].T @ Phi[:, A] / s2 + np.diag(1 / v[A]))  # 004 Sec. 2.4, directly
    mu = Sigma @ Phi[:, A].T @ y / s2
    Phi_new = Phi[:7]
    mean, var = typeii_exact.predict(st, jnp.asarray(Phi_new))
    np.testing.assert_allclose(mean, Phi_new[:, A] @ mu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var, s2 + np.einsum("ij,jk,ik->i", Phi_new[:, A], Sigma, Phi_new[:, A]), rtol=1e-8)


def test_padding_rows_and_columns_change_nothing():
    Phi, y = _linear_design()
    st = _fit(Phi, y, ScaledLaplacePrior(), 0.1 * np.var(y), capacity=8)
    Phi_pad = np.zeros((32, 16))
    Phi_pad[:25, :8] = Phi
    y_pad = np.r_[y, np.zeros(7)]
    mask = np.arange(16) < 8
    st_pad = typeii_exact.fit(typeii_exact.make_data(Phi_pad, y_pad, n_obs=25, basis_mask=mask), ScaledLaplacePrior(), 0.1 * np.var(y),
                        capacity=16)
    assert float(st_pad.objective) == pytest.approx(float(st.objective), abs=1e-9)


@pytest.mark.parametrize("seed", [2, 3])
def test_a_fit_on_a_wide_correlated_design_stops_only_when_no_move_gains(seed):
    """p > n, strongly correlated columns (the audit's AR(ρ) designs, ρ = 0.9 and 0.99). The
    printed eq. 19 divided by ``1 − v_i S_i``, which cancels for a well-determined weight: at
    the small σ² such fits reach, ``s_i`` came out negative, the gain NaN, and the fit stopped
    as converged with moves worth 0.7–1.6 nats left."""
    from sparsebayes.inference.engines.typeii_design import fit_design

    rng = np.random.default_rng(seed)
    n, p, rho = 40, 120, [0.0, 0.5, 0.9, 0.99][seed]
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * Z[:, j]
    beta = np.zeros(p)
    beta[rng.choice(p, 8, replace=False)] = 3 * rng.standard_normal(8)
    X -= X.mean(0)
    y = X @ beta + 0.5 * rng.standard_normal(n)
    y -= y.mean()
    st = fit_design(X, y, ARDPrior(), 0.1 * np.var(y), tol=1e-9, noise_every=5)
    assert bool(st.converged)
    padded = np.zeros((n, st.var.shape[0]))
    padded[:, :p] = X
    data = typeii_exact.make_data(padded, y, basis_mask=np.arange(padded.shape[1]) < p)
    s, q = typeii_exact.sparsity_quality(st)
    assert np.all(np.isfinite(s)) and np.all(np.asarray(s)[np.asarray(st.var) > 0] >= 0)
    _, gain, _ = typeii_exact.candidate_gains(data, st, ARDPrior(), 1 - 1e-3)
    assert float(jnp.max(gain)) <= 1e-6


def test_a_variance_move_gain_is_exact_where_the_two_objectives_cancel():
    """``variance_objective_change`` against ``ℓ(v') − ℓ(v)`` taken in 50-digit decimal arithmetic
    from the same inputs: 1e-12 relative (or 1e-15 absolute) from moderate ``q²/s`` up to 3e10, where
    the difference of the two double ``ℓ`` values is off by a rounding unit of ``ℓ`` (~1e-6)."""
    from decimal import Decimal, getcontext

    from sparsebayes.models.priors.typeii import variance_objective_change

    getcontext().prec = 50

    def ell(v, s, q, kappa):
        v, s, q, kappa = map(Decimal, (v, s, q, kappa))
        return (-(1 + v * s).ln() + q * q * v / (1 + v * s)) / 2 - kappa * v

    rng = np.random.default_rng(0)
    worst_naive = 0.0
    for scale in (1.0, 1e4, 1e8, 1e10):
        s = scale * rng.uniform(0.5, 2.0, 50)
        q = np.sqrt(s * rng.uniform(1.5, 40.0, 50)) * np.sqrt(scale)
        kappa = rng.uniform(0.0, 1.0, 50)
        v_old = rng.uniform(0.1, 3.0, 50) / s
        v_new = v_old * (1 + rng.choice([-1.0, 1.0], 50) * 10.0 ** rng.uniform(-9, 0, 50))
        v_new[:5] = 0.0  # deletions
        got = np.asarray(variance_objective_change(jnp.asarray(v_new), jnp.asarray(v_old), jnp.asarray(s),
                                                   jnp.asarray(q), jnp.asarray(kappa)))
        for i in range(50):
            want = float(ell(v_new[i], s[i], q[i], kappa[i]) - ell(v_old[i], s[i], q[i], kappa[i]))
            assert abs(got[i] - want) <= 1e-12 * abs(want) + 1e-15, (scale, i, got[i], want)
            naive = float(ell(v_new[i], s[i], q[i], kappa[i])) - float(ell(v_old[i], s[i], q[i], kappa[i]))
            worst_naive = max(worst_naive, abs(naive - want))
    assert worst_naive > 1e-7  # the cancellation the stable form avoids is real at these magnitudes
