"""The one sequential type-II engine (:mod:`sparsebayes.inference.engines.typeii`): one model type, one
``init``/``step``/``run``/``trace``/``fit`` for every likelihood, the data step chosen by the likelihood's
``conjugate_noise``. Its programs take the data steps' very steps: the same bits as the Gaussian's
(:mod:`~sparsebayes.inference.engines.typeii_exact`) and the Laplace path's
(:mod:`~sparsebayes.inference.engines.typeii_laplace`) own programs, and as a loop of steps by hand."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsebayes.inference.engines import typeii, typeii_exact, typeii_laplace
from sparsebayes.inference.engines.typeii_moves import TypeIIModel
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, GaussianLikelihood, make_likelihood
from sparsebayes.models.priors import JeffreysPrior
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior


def _gaussian_problem():
    rng = np.random.default_rng(2)
    Phi = rng.normal(size=(30, 8))
    y = Phi @ np.array([1.5, 0, 0, -2.0, 0, 0, 0, 0.7]) + 0.2 * rng.normal(size=30)
    return Phi, y


def _same(a, b, fields):
    for f in fields:
        np.testing.assert_array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)), err_msg=f)


def test_the_likelihood_picks_the_data_step_and_the_model_is_checked():
    assert typeii.linearization(typeii.make_model(ARDPrior())) is typeii_exact
    assert typeii.linearization(typeii.make_model(None, "poisson")) is typeii_laplace
    model = typeii.make_model(None, BernoulliLogisticLikelihood())
    assert isinstance(model, TypeIIModel) and isinstance(model.prior, ARDPrior)  # the RVM's by default
    assert isinstance(typeii.make_model(ScaledLaplacePrior()).likelihood, GaussianLikelihood)
    with pytest.raises(ValueError, match="needs a type-II hierarchy"):
        typeii.make_model(None)
    with pytest.raises(ValueError, match="JeffreysPrior"):
        typeii.make_model(JeffreysPrior())
    with pytest.raises(ValueError, match="JeffreysPrior"):
        typeii.make_model(JeffreysPrior(), "poisson")
    with pytest.raises(ValueError, match="noise variance"):
        Phi, y = _gaussian_problem()
        typeii.init(typeii_exact.make_data(Phi, y), typeii.make_model(ARDPrior()), 8)


def test_the_engines_gaussian_fit_is_the_gaussian_fit_bit_for_bit():
    """The engine's fit on the Gaussian (BLS) against :func:`typeii_exact.fit`: the same bits (two compilations)."""
    Phi, y = _gaussian_problem()
    data, nv, prior = typeii_exact.make_data(Phi, y), 0.1 * np.var(y), ScaledLaplacePrior()
    ref = typeii_exact.fit(data, prior, nv, capacity=8, max_iter=200, tol=1e-9)
    assert 2 < int(ref.n_iter) < 200 and bool(ref.converged | ref.cycled)
    _same(typeii.fit(data, typeii.make_model(prior), capacity=8, params=nv, max_iter=200, tol=1e-9), ref,
          ("var", "basis_of_slot", "mu", "Sigma", "S", "Q", "noise_var", "lam", "objective", "n_iter"))


@pytest.mark.slow  # six compilations of the Gaussian loop (20-30 s)
@pytest.mark.parametrize("prior", [ScaledLaplacePrior(), LaplaceVariancePrior()], ids=["bls", "flap"])
def test_the_engines_gaussian_programs_are_the_gaussian_ones_bit_for_bit(prior):
    """The engine's fit, run and trace against :func:`typeii_exact.fit`, ``run`` and ``trace``: the same
    steps, the same bits (a start computed eagerly differs from one computed inside a program by an ulp,
    so the run and the trace both start from the one computed here)."""
    Phi, y = _gaussian_problem()
    data, nv = typeii_exact.make_data(Phi, y), 0.1 * np.var(y)
    model = typeii.make_model(prior)
    fields = ("var", "basis_of_slot", "mu", "Sigma", "S", "Q", "noise_var", "lam", "objective", "n_iter")
    ref = typeii_exact.fit(data, prior, nv, capacity=8, max_iter=200, tol=1e-9)
    assert 2 < int(ref.n_iter) < 200 and bool(ref.converged | ref.cycled)
    _same(typeii.fit(data, model, capacity=8, params=nv, max_iter=200, tol=1e-9), ref, fields)
    start = typeii.init(data, model, 8, params=nv)
    _same(start, typeii_exact.start(data, prior, nv, 8), fields)
    ran = typeii_exact.run(start, data, prior, max_iter=200, tol=1e-9)
    _same(typeii.run(start, data, model, max_iter=200, tol=1e-9), ran, fields)
    last, info = typeii.trace(start, data, model, n_steps=int(ran.n_iter) + 3, tol=1e-9)
    _same(last, ran, fields)
    assert np.all(np.asarray(info.kind)[int(ran.n_iter):] == 2)  # stopped: no move


@pytest.mark.slow  # compiles the Laplace loop twice more (10-20 s)
@pytest.mark.parametrize("likelihood,prior", [("bernoulli_logistic", None), ("negative_binomial", LaplaceVariancePrior())],
                         ids=["rvm-classifier", "negbin-flap-dispersion"])
def test_the_engines_laplace_run_and_fit_are_the_laplace_programs_bit_for_bit(likelihood, prior):
    """On a non-Gaussian likelihood the engine's run (from the unsettled start) and fit take the Laplace
    path's steps: the same final state as :func:`typeii_laplace.run` and ``_start_and_run``."""
    rng = np.random.default_rng(4)
    Phi = rng.normal(size=(50, 6))
    eta = Phi @ np.array([1.2, 0, -0.8, 0, 0, 0.5])
    t = ((rng.uniform(size=50) < 1 / (1 + np.exp(-eta))).astype(float) if likelihood == "bernoulli_logistic"
         else rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(eta))).astype(float))
    lik = make_likelihood(likelihood)
    own = likelihood == "negative_binomial"
    data = typeii_laplace.LaplaceData(jnp.asarray(Phi), jnp.asarray(t), jnp.ones(6, bool),
                                      jnp.asarray(50, jnp.int32) if own else None)
    model = typeii.make_model(prior, lik)
    kw = dict(max_iter=200, tol=1e-6, patience=7, estimate_params=own)
    start = typeii.init(data, model, 6, params=2.0 if own else None, settle=False)
    fields = ("var", "basis_of_slot", "w", "chol", "objective", "params", "lam", "n_iter", "converged", "since")
    _same(typeii.run(start, data, model, **kw), typeii_laplace.run(start, data, model, **kw), fields)
    _same(typeii.fit(data, model, capacity=6, params=2.0 if own else 1.0, **kw),
          typeii_laplace._start_and_run(data, model, 2.0 if own else 1.0, capacity=6, pause_when_full=False, **kw),
          fields)
    jax.clear_caches()


def test_the_estimators_fitting_cores_drive_the_engine_not_a_data_step():
    """The fitting cores (and every estimator module) import the engine, never a data step's module: the
    data steps are the engine's to pick (:func:`typeii.linearization`)."""
    import ast
    import pathlib

    import sparsebayes.inference.estimators as estimators

    for path in pathlib.Path(estimators.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        named = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        for step in ("typeii_exact", "typeii_laplace"):
            assert not any(n and n.split(".")[-1] == step for n in named), f"{path.name} imports {step}"


def test_fit_model_on_the_gaussian_is_the_padded_growing_fit_and_its_sigma_the_dense_one():
    """:func:`typeii.fit_model` of a Gaussian model is the Gaussian path's padded growing fit
    (:func:`typeii_design.fit_design`, the same bits); the engine's covariance over the active columns is
    the dense ``(A⁻¹ ... )``: ``(ΦₐᵀΦₐ/σ² + diag(1/var))⁻¹`` computed directly, and its coefficients ``Σ Φₐᵀy/σ²``."""
    from sparsebayes.inference.engines import typeii_design

    Phi, y = _gaussian_problem()
    nv, prior = 0.1 * np.var(y), ARDPrior()
    with pytest.raises(ValueError, match="noise variance"):
        typeii.fit_model(Phi, y, typeii.make_model(prior))
    state = typeii.host_result(typeii.fit_model(Phi, y, typeii.make_model(prior), params=nv, max_iter=200, tol=1e-9))
    ref = typeii_exact.result_fields(typeii_design.fit_design(Phi, y, prior, nv, max_iter=200, tol=1e-9))
    _same(state, ref, ("var", "basis_of_slot", "mu", "Sigma", "noise_var", "objective", "n_iter"))
    var = np.asarray(state.var)[:Phi.shape[1]]
    active = var > 0
    assert 1 < active.sum() < Phi.shape[1]
    Pa, s2 = Phi[:, active], float(state.noise_var)
    dense = np.linalg.inv(Pa.T @ Pa / s2 + np.diag(1.0 / var[active]))
    np.testing.assert_allclose(typeii.posterior_covariance(state, None), dense, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(np.asarray(typeii.coefficients(state, Phi.shape[1]))[active], dense @ Pa.T @ y / s2,
                               rtol=1e-7, atol=1e-10)
    assert not bool(typeii.last_basis_pruned(state, prior))
    with pytest.raises(ValueError, match="Laplace path"):
        typeii.stopped_at_start(state)


def test_fit_model_on_a_count_likelihood_is_the_laplace_paths_fit():
    """:func:`typeii.fit_model` of a non-Gaussian model is :func:`typeii_laplace.fit` (the same bits), and the
    engine's readers of its state are the Laplace path's: the coefficients, the covariance at the mode
    (against the dense ``(ΦₐᵀBΦₐ + diag(1/var))⁻¹`` with ``B`` the Poisson curvature ``exp(η)``)."""
    rng = np.random.default_rng(5)
    Phi = rng.normal(size=(40, 5))
    t = rng.poisson(np.exp(0.3 + Phi @ np.array([0.8, 0, -0.6, 0, 0]))).astype(float)
    model = typeii.make_model(None, "poisson")
    state = typeii.fit_model(Phi, t, model, max_iter=200)
    ref = typeii_laplace.fit(Phi, t, np.ones(5, bool), likelihood=model.likelihood, max_iter=200)
    _same(state, ref, ("var", "basis_of_slot", "w", "chol", "objective", "lam", "n_iter", "converged"))
    coef = np.asarray(typeii.coefficients(state, 5))
    np.testing.assert_array_equal(coef, typeii_laplace.coefficients(ref, 5))
    active = np.asarray(state.var) > 0
    assert 1 <= active.sum() < 5
    Pa = Phi[:, active]
    B = np.exp(Phi @ coef)
    dense = np.linalg.inv(Pa.T @ (B[:, None] * Pa) + np.diag(1.0 / np.asarray(state.var)[active]))
    np.testing.assert_allclose(typeii.posterior_covariance(state, model, Phi, t), dense, rtol=1e-6)
    assert typeii.stopped_at_start(state) == typeii_laplace.stopped_at_start(ref)
    with pytest.raises(ValueError, match="Gaussian path"):
        typeii.last_basis_pruned(state, ARDPrior())
    with pytest.raises(ValueError, match="Gaussian type-II path only"):
        typeii.fit_models([], model, [])
