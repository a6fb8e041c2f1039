"""The batched entry point of the type-II regressors gives the fitted estimators of single ``fit`` calls."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.comparisons.synthetic import sinc
from sparsebayes.inference.engines import typeii_design
from sparsebayes.inference.estimators.typeii_estimators import BLSRegressor, FLAPRegressor, RVMRegressor
from sparsebayes.inference.estimators.typeii_many import fit_many
from sparsebayes.models.features import GaussianKernelFeatures


def _sets(k=3, n=40):
    return [sinc(n, sigma=0.1, seed=s) for s in range(k)]


@pytest.mark.parametrize("estimator", [
    RVMRegressor(fit_intercept=False, tol=1e-7, noise_every=3),
    BLSRegressor(tol=1e-7, noise_update="variances-fixed"),
    FLAPRegressor(fit_intercept=False, tol=1e-7),
], ids=["rvm", "bls", "flap"])
@pytest.mark.parametrize("driver, noise_rel", [("one-by-one", 1e-9), pytest.param("lanes", 1e-8, marks=pytest.mark.slow)])
def test_fit_many_gives_the_estimators_of_single_fits(estimator, driver, noise_rel, monkeypatch):
    """Three data sets, each with its own kernel width: the batch's fitted estimators are those of
    three ``fit`` calls (the same support and steps; ``L`` and the weights to rounding: the batch
    is a differently compiled program of the same steps).

    Both drivers of :func:`~sparsebayes.inference.engines.typeii_design.fit_designs` are named, whatever
    the backend would choose (:func:`~sparsebayes.inference.engines.typeii_design.batch_lanes`: one fit
    after another on a CPU, ``vmap``-ed lanes on an accelerator). The lanes recompute the
    posterior by a sweep, not LAPACK: σ² agrees to 1e-8 there (1.0e-9 was seen on the width-0.7
    design), as in ``test_typeii_lanes.py``."""
    real_lanes, used = typeii_design.batch_lanes, []

    def lanes(n_fits, capacity, backend=None):
        used.append(1 if driver == "one-by-one" else real_lanes(n_fits, capacity, backend="gpu"))
        return used[-1]

    monkeypatch.setattr(typeii_design, "batch_lanes", lanes)
    sets = _sets()
    widths = (0.35, 0.5, 0.7)
    ests = [clone(estimator).set_params(features=GaussianKernelFeatures.from_helgoy_li(r)) for r in widths]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        many = fit_many(ests, [X for X, _ in sets], [y for _, y in sets])
        singles = [clone(e).fit(X, y) for e, (X, y) in zip(ests, sets)]
    assert used == [1 if driver == "one-by-one" else 3]  # one compiled call for the three designs
    assert [e.feature_map_.width_ for e in many] == [e.feature_map_.width_ for e in singles]
    for got, want, (X, _) in zip(many, singles, sets):
        assert got is not want and got.active_.sum() > 2
        np.testing.assert_array_equal(got.active_, want.active_)
        assert got.n_iter_ == want.n_iter_ and got.converged_ == want.converged_
        assert got.objective_ == pytest.approx(want.objective_, abs=1e-8)
        assert got.noise_var_ == pytest.approx(want.noise_var_, rel=noise_rel)
        np.testing.assert_allclose(got.coef_, want.coef_, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(got.predict(X), want.predict(X), rtol=1e-7, atol=1e-9)


def test_fit_many_sets_the_empty_model_where_fit_does():
    (X, y), (X2, y2) = _sets(2)
    est = RVMRegressor(features="kernel", kernel_width=1.0)
    with pytest.warns(Warning, match="y is constant"):
        many = fit_many(est, [X, X2], [np.full_like(y, 3.0), y2])
    assert not many[0].active_.any() and many[0].intercept_ == 3.0
    assert many[1].active_.any()


def test_fit_many_refuses_mixed_configurations():
    (X, y), = _sets(1)
    with pytest.raises(ValueError, match="one class"):
        fit_many([RVMRegressor(), BLSRegressor()], [X, X], [y, y])
    with pytest.raises(ValueError, match="engine controls"):
        fit_many([RVMRegressor(), RVMRegressor(tol=1e-3)], [X, X], [y, y])
    with pytest.raises(ValueError, match="one hierarchy"):
        fit_many([BLSRegressor(), BLSRegressor(a=1.0)], [X, X], [y, y])
    with pytest.raises(ValueError, match="as many X as y"):
        fit_many(RVMRegressor(), [X, X], [y])
