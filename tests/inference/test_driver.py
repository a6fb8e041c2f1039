"""The one engine driver (:mod:`sparsebayes.inference.engines.driver`): its loop and trace on a toy engine,
each conforming engine's ``run`` against a loop its caller owns, and the contract's signatures."""
import importlib
import inspect
import pkgutil
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import sparsebayes.inference.engines as engines
from sparsebayes.inference.engines import (bound, driver, em, hierarchy_gibbs, hierarchy_gibbs_augmented, hierarchy_gibbs_batch,
                                          hierarchy_gibbs_variates, typeii, typeii_exact, typeii_laplace, typeii_param)
from sparsebayes.inference.engines._compile import QUICK_COMPILE
from sparsebayes.models.likelihoods import GaussianLikelihood, make_likelihood
from sparsebayes.models.priors import JeffreysPrior, LaplacePrior
from sparsebayes.models.priors.typeii import LaplaceVariancePrior, ScaledLaplacePrior


# --- a toy engine: two quantities, one settling fast (Newton's square root) and one slowly (a
# --- geometric contraction), so a rule on the first alone would stop early


class ToyState(NamedTuple):
    root: jax.Array
    decay: jax.Array
    n_iter: jax.Array
    rel_change: jax.Array


class ToyInfo(NamedTuple):
    root: jax.Array
    rel_change: jax.Array


def toy_init(data, model, root0):
    return ToyState(jnp.asarray(root0, jnp.float64), jnp.asarray(1.0), jnp.asarray(0), jnp.asarray(jnp.inf))


def toy_step(state, data, model):
    """``root ← (root + a/root)/2`` (``data`` = a), ``decay ← model · decay``; the change covers both."""
    root = 0.5 * (state.root + data / state.root)
    decay = model * state.decay
    change = jnp.maximum(jnp.abs(root - state.root) / jnp.abs(root), jnp.abs(decay - state.decay))
    new = ToyState(root, decay, state.n_iter + 1, change)
    return new, ToyInfo(root, change)


@partial(jax.jit, static_argnames=("max_iter",))
def toy_run(state, data, model, tol, *, max_iter, halt_at=None):
    halt = None if halt_at is None else (lambda s: s.n_iter >= halt_at)
    return driver.run(toy_step, state, data, model, tol=tol, max_iter=max_iter, halt=halt)


@partial(jax.jit, static_argnames=("n_steps", "hold"))
def toy_trace(state, data, model, tol, *, n_steps, hold=False):
    if not hold:
        return driver.trace(toy_step, state, data, model, n_steps=n_steps)
    return driver.trace(toy_step, state, data, model, n_steps=n_steps, converged=driver.rel_change_below, tol=tol,
                        rest=lambda s: ToyInfo(s.root, jnp.zeros(())))


A, RATE = 2.0, 0.5


def test_run_stops_at_the_first_step_whose_change_of_every_quantity_is_below_tol():
    tol = 1e-6
    start = toy_init(A, RATE, 1.0)
    final = toy_run(start, A, RATE, tol, max_iter=100)
    changes = np.asarray(toy_trace(start, A, RATE, tol, n_steps=40)[1].rel_change)
    first = int(np.argmax(changes < tol)) + 1  # steps taken when the change first falls below tol
    assert int(final.n_iter) == first and float(final.rel_change) < tol
    # the root alone settled long before: Newton's change is below tol by step 5, the decay's 0.5**k is not
    assert first > 15 and float(final.root) == pytest.approx(np.sqrt(A), rel=1e-15)


def test_run_stops_at_max_iter_and_on_halt_and_leaves_a_converged_state_as_it_is():
    start = toy_init(A, RATE, 1.0)
    assert int(toy_run(start, A, RATE, 0.0, max_iter=7).n_iter) == 7
    assert int(toy_run(start, A, RATE, 0.0, max_iter=50, halt_at=3).n_iter) == 3
    done = toy_run(start, A, RATE, 1e-3, max_iter=100)
    again = toy_run(done, A, RATE, 1e-3, max_iter=100)
    assert int(again.n_iter) == int(done.n_iter)


def test_a_nan_change_stops_the_loop():
    start = toy_init(-1.0, RATE, jnp.nan)  # every iterate NaN
    assert int(toy_run(start, -1.0, RATE, 1e-6, max_iter=50).n_iter) == 1


def test_trace_returns_n_steps_infos_and_ends_in_runs_state_when_it_stops_at_the_same_step():
    tol = 1e-6
    start = toy_init(A, RATE, 3.0)
    final = toy_run(start, A, RATE, tol, max_iter=100)
    k = int(final.n_iter)
    last, infos = toy_trace(start, A, RATE, tol, n_steps=k)
    assert infos.root.shape == (k,) and infos.rel_change.shape == (k,)
    for a, b in zip(final, last):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(infos.root[-1]), np.asarray(final.root))
    # with converged, a longer trace holds the stopped state: still run's
    held, infos = toy_trace(start, A, RATE, tol, n_steps=k + 5, hold=True)
    for a, b in zip(final, held):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert np.all(np.asarray(infos.rel_change[k:]) == 0.0)


def test_a_trace_with_inputs_feeds_step_t_its_input_t_and_holds_a_converged_state():
    """A sampler's trace: each step reads its own input (here a per-step factor on the decay); the same
    as a Python loop of the steps, and with ``converged`` a stopped state stays and reports ``rest``."""
    factors = jnp.asarray(np.random.default_rng(0).uniform(0.1, 0.9, 12))

    def step(state, data, model, factor):
        return toy_step(state, data, model * factor)

    start = toy_init(A, RATE, 3.0)
    last, infos = jax.jit(lambda s, d, m, x: driver.trace(step, s, d, m, inputs=x))(start, A, RATE, factors)
    state = start
    for t in range(12):
        state, info = jax.jit(step)(state, A, RATE, factors[t])
        np.testing.assert_allclose(float(infos.rel_change[t]), float(info.rel_change), rtol=1e-14)
    np.testing.assert_allclose(float(last.decay), float(state.decay), rtol=1e-14)
    assert infos.root.shape == (12,) and int(last.n_iter) == 12
    held, infos = driver.trace(step, start, A, RATE, inputs=factors, converged=lambda s, tol: s.n_iter >= 5,
                               rest=lambda s: ToyInfo(s.root, jnp.zeros(())))
    assert int(held.n_iter) == 5 and np.all(np.asarray(infos.rel_change[5:]) == 0.0)


def test_a_loop_the_caller_owns_takes_runs_steps():
    tol = 1e-6
    state = toy_init(A, RATE, 3.0)
    final = toy_run(state, A, RATE, tol, max_iter=100)
    step = jax.jit(toy_step)
    while not bool(driver.rel_change_below(state, tol)):
        state = step(state, A, RATE)[0]
    assert int(state.n_iter) == int(final.n_iter)
    np.testing.assert_allclose(float(state.root), float(final.root), rtol=1e-15)


# --- each conforming engine's run = the hand-written loop it replaced, compiled alike: the same bits


def _hand_loop(step, cond, start, args, compiler_options=None):
    """The loop each engine wrote for itself, ``lax.while_loop(cond(*args), step(·, *args))`` from
    ``start(*args)``, in one program whose arguments are ``args`` (the data and settings, as the
    engine's ``run`` takes them: captured as constants, XLA would fold them into other bits)."""
    program = jax.jit(lambda *a: lax.while_loop(cond(*a), lambda s: step(s, *a)[0], start(*a)),
                      compiler_options=compiler_options)
    return program(*args)


def _assert_same(a, b, fields):
    for f in fields:
        for x, y in zip(jax.tree.leaves(getattr(a, f)), jax.tree.leaves(getattr(b, f)), strict=True):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=f)


@pytest.mark.parametrize("prior,shrink_below", [(LaplacePrior(1.0, (1.0, 1.0)), -1), (JeffreysPrior(), 4)],
                         ids=["laplace-gamma-estimated", "jeffreys-halts-on-shrink"])
def test_em_run_is_its_hand_written_loop(prior, shrink_below):
    """γ estimated: the loop stops on the joint change; Jeffreys prunes, and the loop halts once at most
    ``shrink_below`` weights are left (the active set's compaction)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = X @ np.array([2.0, 0, 0, -1.0, 0, 0.5]) + 0.3 * rng.normal(size=40)
    data = em.EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X))
    model = em.EMModel(prior, GaussianLikelihood())
    controls = em.EMControls(*(np.float64(c) for c in (1e-8, 500, shrink_below, 1e-8, 1e-12, 0.0)))
    start = em.init(data, model, em.RidgeStart(X)(y), float(np.var(y)))
    final, _ = em.run(start, data, model, controls, estimate_noise=True)
    hand = _hand_loop(lambda s, st, d, m, c: em.step(s, d, m, controls=c, estimate_noise=True),
                      lambda st, d, m, c: lambda s: (s.rel_change >= c.tol) & (s.n_iter < c.max_iter)
                      & (jnp.sum(s.beta != 0) > c.shrink_below), lambda st, *_: st, (start, data, model, controls))
    assert 5 < int(final.n_iter) < 500
    halted = int(np.sum(np.asarray(final.beta) != 0)) <= shrink_below
    assert halted == (float(final.rel_change) >= 1e-8) == (shrink_below > 0)
    _assert_same(final, hand, ("beta", "noise_var", "n_iter", "rel_change", "prior"))


@pytest.mark.parametrize("solver", ["block", "componentwise"])
def test_bound_run_is_its_hand_written_loop(solver):
    rng = np.random.default_rng(1)
    X = np.c_[np.ones(60), rng.normal(size=(60, 3))]
    y = rng.integers(0, 3, size=60)
    prior = LaplacePrior.from_lam(2.0)
    problem = bound.make_problem(X, y, 3, solver=solver, prior=prior)
    assert bound.is_small(X.shape, 2)  # bound.run's program is the quick one
    final, info = bound.run(problem, prior, solver=solver, tol=1e-8, max_iter=400)
    hand = _hand_loop(lambda s, p, m, tol, max_iter: bound.step(s, p, m, solver=solver, tol=tol),
                      lambda p, m, tol, max_iter: lambda s: (s.n_iter < max_iter)
                      & ~((s.rel_change < tol) & s.last_full),
                      lambda p, m, *_: bound.init(p, m, solver=solver),
                      (problem, prior, np.float64(1e-8), np.int64(400)), QUICK_COMPILE)
    assert 3 < int(final.n_iter) < 400 and bool(info.converged)
    _assert_same(final, hand, ("coef", "objective", "n_iter", "rel_change"))


def test_typeii_run_is_its_hand_written_loop():
    rng = np.random.default_rng(2)
    Phi = rng.normal(size=(30, 8))
    y = Phi @ np.array([1.5, 0, 0, -2.0, 0, 0, 0, 0.7]) + 0.2 * rng.normal(size=30)
    data = typeii_exact.make_data(Phi, y)
    prior = ScaledLaplacePrior()
    start = typeii_exact.start(data, prior, 0.1 * np.var(y), 8)
    final = typeii_exact.programs(Phi.shape, 8)[1](start, data, prior, max_iter=200)  # the small fit's program
    hand = _hand_loop(lambda s, st, d, p: typeii_exact.take_step(s, d, p),
                      lambda st, d, p: lambda s: ~s.converged & ~s.cycled & (s.n_iter < 200), lambda st, *_: st,
                      (start, data, prior),
                      typeii_exact.SMALL_FIT_COMPILE)
    assert 2 < int(final.n_iter) < 200 and bool(final.converged)
    _assert_same(final, hand, ("var", "mu", "Sigma", "noise_var", "objective", "n_iter"))


@pytest.mark.slow  # two compilations of the Laplace loop (15-25 s); the default suite's check is the caller's loop below
@pytest.mark.parametrize("likelihood,prior", [("poisson", None), ("negative_binomial", LaplaceVariancePrior())],
                         ids=["poisson-ard", "negbin-flap-dispersion"])
def test_typeii_laplace_run_is_its_hand_written_loop(likelihood, prior):
    """From the unsettled start (the first iteration settles it, counting no step), to convergence or
    ``patience`` steps without a better ``L``; the negative binomial's dispersion moves between moves."""
    rng = np.random.default_rng(5)
    Phi = np.c_[np.ones(50), rng.normal(size=(50, 5))]
    t = rng.poisson(np.exp(0.5 + Phi[:, 1] - 0.7 * Phi[:, 3])).astype(float)
    lik = make_likelihood(likelihood)
    data = typeii_laplace.LaplaceData(jnp.asarray(Phi), jnp.asarray(t), jnp.ones(6, bool),
                                      jnp.asarray(50, jnp.int32) if likelihood != "poisson" else None)
    model = typeii_laplace.make_model(lik, prior)
    own = typeii_param.has_own_parameter(lik)
    start = typeii_laplace.start(data, model, 6, params=2.0 if own else None, settle=False)
    final = typeii_laplace.run(start, data, model, max_iter=200, tol=1e-6, patience=7, estimate_params=own)
    hand = _hand_loop(lambda s, st, d, m: typeii_laplace.take_step(s, d, m, tol=1e-6, estimate_params=own),
                      lambda st, d, m: lambda s: ((~s.converged & (s.since < 7)) | (s.since < 0)) & (s.n_iter < 200),
                      lambda st, *_: st, (start, data, model))
    assert 2 < int(final.n_iter) < 200 and bool(final.converged) and int(final.since) >= 0
    assert not own or float(final.params) != 2.0
    _assert_same(final, hand, ("var", "w", "objective", "n_iter", "params", "since", "best"))


def test_a_loop_of_typeii_laplace_steps_the_caller_owns_reaches_runs_fit_and_patience_stops_it():
    """A Python loop of jitted steps from the settled start ends where :func:`typeii_laplace.run` does;
    with ``patience`` 1 the run stops at the first step whose ``L`` is not above the best so far, which
    the step's own count (``since``) says."""
    rng = np.random.default_rng(6)
    Phi = np.c_[np.ones(40), rng.normal(size=(40, 4))]
    t = (Phi[:, 1] + 0.8 * rng.normal(size=40) > 0).astype(float)
    data = typeii_laplace.LaplaceData(jnp.asarray(Phi), jnp.asarray(t), jnp.ones(5, bool))
    model = typeii_laplace.make_model(make_likelihood("bernoulli_logistic"))
    state = start = typeii_laplace.start(data, model, 5)
    final = typeii_laplace.run(start, data, model, max_iter=100, tol=1e-6, patience=100)
    step = jax.jit(lambda s: typeii_laplace.take_step(s, data, model, tol=1e-6))
    objectives = [float(start.objective)]
    while not bool(typeii_laplace.stopped(state, patience=100)) and int(state.n_iter) < 100:
        state, info = step(state)
        objectives.append(float(info.objective))
        assert objectives[-1] == float(state.objective)
        assert int(state.since) == len(objectives) - 1 - int(np.argmax(objectives))  # steps since the best L
    assert bool(final.converged) and int(state.n_iter) == int(final.n_iter) > 1
    _assert_same(final, state, ("var", "w", "objective", "since"))
    impatient = typeii_laplace.run(start, data, model, max_iter=100, tol=1e-6, patience=1)
    first_not_better = next((k for k in range(1, len(objectives)) if objectives[k] <= max(objectives[:k])),
                            int(final.n_iter))
    assert int(impatient.n_iter) == first_not_better


def test_a_loop_of_em_steps_the_caller_owns_reaches_runs_fit():
    """The caller may own the loop: a Python loop of jitted steps stops where :func:`em.run` does."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    y = X @ np.array([1.0, 0, -2.0, 0]) + 0.1 * rng.normal(size=30)
    data = em.EMData(jnp.asarray(X), jnp.asarray(y), jnp.asarray(X.T @ X))
    model = em.EMModel(LaplacePrior(1.0), GaussianLikelihood())
    controls = em.EMControls(*(np.float64(c) for c in (1e-8, 500, -1, 1e-8, 1e-12, 0.0)))
    state = start = em.init(data, model, em.RidgeStart(X)(y), float(np.var(y)))
    final, _ = em.run(start, data, model, controls, estimate_noise=True)
    step = jax.jit(lambda s: em.step(s, data, model, controls=controls, estimate_noise=True)[0])
    while not bool(driver.rel_change_below(state, controls.tol)) and int(state.n_iter) < 500:
        state = step(state)
    assert int(state.n_iter) == int(final.n_iter)
    np.testing.assert_allclose(np.asarray(state.beta), np.asarray(final.beta), rtol=1e-10, atol=1e-14)


def test_em_init_names_a_start_of_the_wrong_length():
    X = np.eye(4)
    data = em.EMData(X, np.ones(4), X)
    with pytest.raises(ValueError, match="one weight per column"):
        em.init(data, em.EMModel(LaplacePrior(1.0), GaussianLikelihood()), np.ones(3), 1.0)


# --- the contract: every module here with an init or a step conforms, or is listed as pending


def _engine_modules():
    names = [m.name for m in pkgutil.iter_modules(engines.__path__)]
    found = {}
    for name in names:
        module = importlib.import_module(f"{engines.__name__}.{name}")
        own = {f for f in ("init", "step") if inspect.isfunction(getattr(module, f, None))
               and getattr(module, f).__module__ == module.__name__}  # its own, not imported
        if own:
            found[name] = module
    return found


def test_every_engine_keeps_the_contract_with_the_model_in_one_slot():
    found = _engine_modules()
    unlisted = set(found) - set(driver.ENGINES) - set(driver.PENDING)
    assert not unlisted, f"engines with an init/step outside the driver's contract, not listed as pending: {unlisted}"
    for name, model_name in driver.ENGINES.items():
        module = found.get(name)
        assert module is not None, f"{name} is listed as conforming but has no init/step"
        init = list(inspect.signature(module.init).parameters.values())
        step = list(inspect.signature(module.step).parameters.values())
        assert init[1].name == model_name, (name, [p.name for p in init])
        assert [p.name for p in step[:3]] == ["state", init[0].name, model_name], (name, [p.name for p in step])
        assert all(p.kind is p.KEYWORD_ONLY or p.kind is p.VAR_KEYWORD for p in step[3:]), \
            f"{name}.step takes settings positionally: {[p.name for p in step[3:]]}"
        # a sampler has no tolerance, so no run of the driver's: its trace is the chain
        for loop in ("trace",) if name in driver.SAMPLERS else ("run", "trace"):
            assert callable(getattr(module, loop, None)), f"{name} has no {loop}"
    assert set(driver.SAMPLERS) <= set(driver.ENGINES)


def test_a_samplers_steps_take_their_randomness_as_a_keyword_only_setting_and_the_model_in_its_slot():
    """The Gibbs engine's three sweeps (keys, pre-drawn variates, an augmented likelihood): the model in
    the driver's slot, the randomness keyword-only."""
    for step, randomness in ((hierarchy_gibbs.step, "key"), (hierarchy_gibbs_variates.step_from, "variates"),
                             (hierarchy_gibbs_augmented.augmented_step, "key")):
        params = inspect.signature(step).parameters
        assert list(params)[:3] == ["state", "data", "model"], step.__name__
        assert params[randomness].kind is inspect.Parameter.KEYWORD_ONLY, step.__name__


@pytest.mark.parametrize("loop", [em.run, em.trace, bound._run, bound._trace, typeii.run, typeii.trace,
                                  typeii_exact.run, typeii_laplace.run, hierarchy_gibbs.trace,
                                  hierarchy_gibbs_batch._sum_batch_draws])
def test_the_engines_loops_are_the_drivers(loop):
    source = inspect.getsource(loop.__wrapped__ if hasattr(loop, "__wrapped__") else loop)
    assert "driver." in source and "while_loop" not in source and "lax.scan" not in source


# --- the Gibbs engine's chains through the driver = the hand-written scans they replaced: the same bits


def _hand_scan(chains_step, state, inputs, *args):
    """The scan each Gibbs program wrote for itself: ``lax.scan`` of a sweep of every chain over the
    sweeps' keys or variates, keeping every state, in one program whose arguments are the data and model
    (as the engine's programs take them)."""

    def program(st, xs, *a):
        def body(s, x):
            s, info = chains_step(s, x, *a)
            return s, (s, info)

        last, (states, infos) = lax.scan(body, st, xs)
        return last, states, infos

    return jax.jit(program)(state, inputs, *args)


def _gibbs_problem(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, :2] @ np.array([1.5, -1.0]) + 0.5 * rng.normal(size=n)
    return X - X.mean(0), y - y.mean()


@pytest.mark.parametrize("n,p,prior_name", [(25, 4, "laplace"), (8, 12, "horseshoe")],
                         ids=["rue-laplace", "bhattacharya-horseshoe"])
def test_gibbs_run_sweeps_is_its_hand_written_scan(n, p, prior_name):
    from sparsebayes.models import HorseshoePrior

    X, y = _gibbs_problem(n, p, 4)
    prior = LaplacePrior(1.0, gamma_prior=(0.1, 0.1)) if prior_name == "laplace" else HorseshoePrior(1.0, tau_prior=1.0)
    data = hierarchy_gibbs.gibbs_data(X, y, n - 1)
    noise = hierarchy_gibbs.NoisePrior(jnp.float64(-1.0), jnp.float64(0.0))
    start = hierarchy_gibbs.init(data, hierarchy_gibbs.GibbsModel(prior, noise), float(np.mean(y**2)))
    state = jax.tree.map(lambda a: jnp.broadcast_to(a, (2, *jnp.shape(a))), start)
    keys = hierarchy_gibbs.sweep_keys(5, 2, 6)
    ours = hierarchy_gibbs.run_sweeps(state, keys, data, prior, noise, scaled=True)
    hand = _hand_scan(lambda s, k, d, pr, no: jax.vmap(lambda c, kk: hierarchy_gibbs.step(
        c, d, hierarchy_gibbs.GibbsModel(pr, no), key=kk, scaled=True))(s, k), state, keys, data, prior, noise)
    assert not np.any(np.asarray(ours[2].refused))
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(hand), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_gibbs_augmented_sweeps_are_their_hand_written_scan():
    """The probit sweeps on Rue's path (its QR retry is never taken here: no sweep is refused)."""
    X, _ = _gibbs_problem(30, 3, 5)
    y = (X[:, 0] > 0).astype(float)
    prior = LaplacePrior(1.0)
    lik = make_likelihood("probit")
    data = hierarchy_gibbs_augmented.AugmentedData(jnp.column_stack([jnp.ones(30), X]), jnp.asarray(y), jnp.array([100.0]))
    start = hierarchy_gibbs_augmented.AugmentedState(jnp.zeros(3), jnp.zeros(()), jnp.ones(()), prior.gibbs_init(3))
    state = jax.tree.map(lambda a: jnp.broadcast_to(a, (2, *jnp.shape(a))), start)
    keys = hierarchy_gibbs.sweep_keys(6, 2, 6)
    ours = hierarchy_gibbs_augmented.run_augmented_sweeps(state, keys, data, prior, lik)
    hand = _hand_scan(lambda s, k, d, pr: jax.vmap(lambda c, kk: hierarchy_gibbs_augmented.augmented_step(
        c, d, hierarchy_gibbs_augmented.AugmentedModel(pr, lik), key=kk))(s, k), state, keys, data, prior)
    assert not np.any(np.asarray(ours[2].refused))
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(hand), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("program", [hierarchy_gibbs.run_sweeps, hierarchy_gibbs_augmented.run_augmented_sweeps,
                                     hierarchy_gibbs_variates.run_from_variates])
def test_the_gibbs_programs_chains_are_its_trace(program):
    source = inspect.getsource(program.__wrapped__ if hasattr(program, "__wrapped__") else program)
    assert "return trace(" in source and "lax.scan" not in source
