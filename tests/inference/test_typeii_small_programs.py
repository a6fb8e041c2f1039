"""The Gaussian type-II engine's small-fit programs and its one-program first fit.

A small fit on a CPU (``N · M · K`` at most ``typeii_exact.SMALL_FIT_MAX``) runs programs compiled with
``typeii_exact.SMALL_FIT_COMPILE`` (XLA:CPU's elemental emitters, one LLVM module), and the estimators hand
the engine a ``typeii_exact.Design`` whose products the fit's own program computes. Both change how the
program is built, not what it computes: checked here against the engine at XLA's defaults on data
packed by ``typeii_exact.make_data`` (the products in a program of their own), to 1e-10.
"""
import warnings

import jax
import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler

from sparsebayes.inference import BLSRegressor, FLAPRegressor, RVMRegressor

from sparsebayes.inference.engines import typeii_exact
from sparsebayes.inference.engines import typeii_design
from sparsebayes.models.priors.typeii import LaplaceVariancePrior, ScaledLaplacePrior

ATTRS = ("coef_", "intercept_", "sigma_", "noise_var_", "objective_")


def _data_sets(n_sets, n=200, p=8):
    for seed in range(n_sets):
        X, y = make_regression(n_samples=n, n_features=p, n_informative=3, noise=1.0 + seed, random_state=seed)
        yield StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def _default_engine(monkeypatch):
    """``fit_design`` as before: the products by ``make_data``'s own program, every fit at XLA's defaults."""
    monkeypatch.setattr(typeii_exact, "programs", lambda shape, capacity, backend=None: (typeii_exact.fit, typeii_exact.run))
    monkeypatch.setattr(typeii_design, "engine_data", lambda packed: (
        typeii_exact.make_gram_data(packed.Phi, packed.y, packed.yy, packed.n_obs, packed.basis_mask) if packed.gram
        else typeii_exact.make_data(packed.Phi, packed.y, n_obs=packed.n_obs, basis_mask=packed.basis_mask, yy=packed.yy)))


def _fits(make, sets):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [make().fit(X, y) for X, y in sets]


def _assert_same_fits(ours, oracle):
    for a, b in zip(ours, oracle):
        assert a.n_iter_ == b.n_iter_ and a.converged_ == b.converged_
        np.testing.assert_array_equal(a.active_, b.active_)
        for name in ATTRS:
            x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-10 * max(1.0, float(np.max(np.abs(y)))), err_msg=name)


def test_the_small_fit_rule():
    assert typeii_exact.programs((256, 8), 8, backend="cpu") == (typeii_exact._fit_small, typeii_exact._run_small)
    assert typeii_exact.programs((4096, 1024), 16, backend="cpu") == (typeii_exact.fit, typeii_exact.run)  # N·M·K > 2^22
    assert typeii_exact.programs((256, 8), 8, backend="gpu") == (typeii_exact.fit, typeii_exact.run)  # the options are XLA:CPU's


def test_a_design_and_packed_data_give_the_same_fields():
    X, y = next(_data_sets(1, n=30, p=5))
    mask = np.arange(5) < 4
    design = typeii_exact.make_design(X, y, n_obs=29, basis_mask=mask, yy=float(y @ y) + 1.0)
    packed = typeii_exact.make_data(X, y, n_obs=29, basis_mask=mask, yy=float(y @ y) + 1.0)
    for name, a, b in zip(packed._fields, jax.device_get(design.engine_data()), jax.device_get(packed)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)


def test_a_small_first_fit_equals_the_default_engine(monkeypatch):
    """The estimators' path (a :class:`typeii_exact.Design`, the small-fit programs) against the engine at XLA's
    defaults on ``make_data``'s fields: two data sets of one padded shape, so one program each way."""
    sets = list(_data_sets(2))
    ours = _fits(RVMRegressor, sets)
    assert typeii_exact._fit_small._cache_size() >= 1  # the small program ran
    _default_engine(monkeypatch)
    _assert_same_fits(ours, _fits(RVMRegressor, sets))


@pytest.mark.slow
@pytest.mark.parametrize("make", [BLSRegressor, lambda: BLSRegressor(noise_update="variances-fixed"), FLAPRegressor,
                                  lambda: FLAPRegressor(estimate_noise=True)],
                         ids=["bls", "bls-vf", "flap", "flap-sigma"])
def test_every_hierarchy_fits_as_with_the_default_engine(make, monkeypatch):
    """Three data sets, and a 50 × 60 design whose fit outgrows 16 slots (the later programs take the
    products from ``make_data``)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 60))
    sets = list(_data_sets(3)) + [(X, X[:, :10] @ np.full(10, 3.0) + rng.normal(size=50))]
    ours = _fits(make, sets)
    _default_engine(monkeypatch)
    _assert_same_fits(ours, _fits(make, sets))


def test_hierarchies_with_equal_flags_are_distinct_pytrees():
    """FLAPσ and BLS with the RVM's σ² update have the same flags and leaves: their tree structures must
    differ (the class is in the static data), else a compiled program of one may serve the other."""
    flap_sigma = LaplaceVariancePrior(lambda_update="algorithm1", noise_update="variances-fixed")
    bls_vf = ScaledLaplacePrior(noise_update="variances-fixed")
    assert jax.tree.structure(flap_sigma) != jax.tree.structure(bls_vf)
    assert jax.tree.structure(bls_vf) == jax.tree.structure(bls_vf.replace(a=1.0))  # hyperparameters are leaves
    assert jax.tree.unflatten(jax.tree.structure(bls_vf), jax.tree.leaves(bls_vf)) == bls_vf
    # under jit, each hierarchy runs its own σ² update
    which = jax.jit(lambda prior: prior.typeii_penalty(1.0, 2.0))
    assert float(which(flap_sigma)) == float(flap_sigma.typeii_penalty(1.0, 2.0))
    assert float(which(bls_vf)) == float(bls_vf.typeii_penalty(1.0, 2.0))
