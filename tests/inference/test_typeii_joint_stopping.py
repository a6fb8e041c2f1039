"""The type-II engines stop with every estimated hyperparameter converged (issue 42, class 2).

EM's rule watched the weights alone and stopped with γ or τ 25-90 % from the joint mode. The
sequential type-II engine (:mod:`sparsebayes.inference.engines.typeii`) stops on the joint state already:
λ is set to its maximiser given the variances after every move (004 eq. 17), σ² is re-estimated
whenever no single-variance move gains more than ``tol`` nats and the fit ends only when then σ²
moved by less than ``noise_tol`` (relative) too, so at the stop no coordinate of the objective, a
variance, λ or σ², has more than ``tol`` to gain. This checks what that gives, for every type-II
estimator and each hyperparameter it estimates (BLS: λ and σ², under both λ updates and both σ²
updates; FLAP: λ; FLAPσ: λ and σ²; RVM: σ²): the fit at the default ``tol`` lies within
:data:`HYPER_RTOL` (relative) of the fit at ``tol = 1e-12`` in every estimated hyperparameter, and
its predictions within :data:`PRED_TOL` of the targets' sd, on a linear design, the same with ``y``
in units of 1e-4, and (slow) Helgøy & Li's kernel design on sinc data. A fit that ``max_iter`` ends
warns, naming ``max_iter``.
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.inference import BLSRegressor, FLAPRegressor, RVMRegressor
from sparsebayes.models.features import GaussianKernelFeatures

#: How far (relative) the default-tolerance fit's estimated hyperparameters may lie from the
#: converged ones (measured: at most 0.5 %, BLS's λ), and its predictions (in sd(y)).
HYPER_RTOL = 1e-2
PRED_TOL = 1e-2

#: estimator name -> (factory, the hyperparameters it estimates, as fitted attributes)
ESTIMATORS = {
    "bls": (lambda **k: BLSRegressor(**k), ("gamma_", "noise_var_")),
    "bls-profiled": (lambda **k: BLSRegressor(lambda_update="profiled", **k), ("gamma_", "noise_var_")),
    "bls-variances-fixed": (lambda **k: BLSRegressor(noise_update="variances-fixed", **k), ("gamma_", "noise_var_")),
    "flap": (lambda **k: FLAPRegressor(**k), ("gamma_",)),
    "flap-sigma": (lambda **k: FLAPRegressor(estimate_noise=True, **k), ("gamma_", "noise_var_")),
    "rvm": (lambda **k: RVMRegressor(**k), ("noise_var_",)),
}


def _linear(scale=1.0, seed=0, n=60, p=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:3] = [2.0, -1.5, 1.0]
    return X, scale * (X @ beta + 0.5 * rng.standard_normal(n)), {}


def _sinc(seed=0, n=60):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-10.0, 10.0, n))[:, None]
    return x, np.sinc(x[:, 0] / np.pi) + 0.1 * rng.standard_normal(n), dict(
        features=GaussianKernelFeatures.from_helgoy_li(2.0), fit_intercept=False)


DATA = {"linear": lambda: _linear(), "linear-y-small-units": lambda: _linear(1e-4), "sinc-kernel": _sinc}


def _fits(make, X, y, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fit's own warnings (e.g. Algorithm 1's cycle) are not under test
        return make(**kw).fit(X, y), make(tol=1e-12, max_iter=100_000, **kw).fit(X, y)


def _deviations(quick, exact, names, X, y):
    """Relative deviation of each estimated hyperparameter, and of the predictions in sd(y)."""
    dev = {name: abs(getattr(quick, name) - getattr(exact, name)) / abs(getattr(exact, name)) for name in names}
    dev["predictions"] = float(np.max(np.abs(quick.predict(X) - exact.predict(X))) / np.std(y))
    return dev


CASES = [pytest.param(est, data, marks=pytest.mark.slow if data == "sinc-kernel" else ())
         for est in ESTIMATORS for data in DATA]


@pytest.mark.parametrize("name, data", CASES)
def test_the_default_tolerance_fit_is_near_the_converged_one(name, data):
    make, names = ESTIMATORS[name]
    X, y, kw = DATA[data]()
    quick, exact = _fits(make, X, y, kw)
    dev = _deviations(quick, exact, names, X, y)
    assert max(dev[n] for n in names) <= HYPER_RTOL, dev
    assert dev["predictions"] <= PRED_TOL, dev
    assert quick.n_iter_ <= exact.n_iter_


def test_the_check_has_teeth_at_a_coarse_tolerance():
    """The same comparison with ``tol = 0.5`` nats, far coarser than the default, fails it: the
    tolerance above is one the default meets, not one any stopping meets."""
    make, names = ESTIMATORS["bls"]
    X, y, kw = DATA["linear"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coarse, exact = make(tol=0.5, **kw).fit(X, y), make(tol=1e-12, max_iter=100_000, **kw).fit(X, y)
    dev = _deviations(coarse, exact, names, X, y)
    assert max(dev[n] for n in names) > HYPER_RTOL, dev


@pytest.mark.parametrize("name", ["bls", "flap", "flap-sigma", "rvm"])
def test_max_iter_ending_a_fit_warns_naming_max_iter(name):
    make, _ = ESTIMATORS[name]
    X, y, kw = DATA["linear"]()
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        est = make(max_iter=2, **kw).fit(X, y)
    assert not est.converged_
