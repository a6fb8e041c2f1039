"""The type-II regressors read their fitted attributes and warnings from the engine fields they fetch
(:data:`~sparsebayes.inference.engines.typeii_exact.RESULT_FIELDS`): a fit stopped by ``max_iter`` says its last gain, and the attributes are the
engine state's."""
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.inference.estimators import typeii_estimators as E
from sparsebayes.inference.engines.typeii_design import fit_design
from sparsebayes.inference.estimators.typeii_fit import prepare_typeii, typeii_basis


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-5, 5, (60, 1))
    return X, np.sinc(X[:, 0] / np.pi) + 0.1 * rng.standard_normal(60)


def test_max_iter_warning_names_the_last_gain():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match=r"did not converge in max_iter=3 steps \(last gain [0-9.e+-]+\)"):
        E.RVMRegressor(features="kernel", max_iter=3).fit(X, y)


def test_attributes_are_the_engine_states():
    X, y = _data()
    est = E.RVMRegressor(features="kernel", fit_intercept=False).fit(X, y)
    prior, options = E.RVMRegressor(features="kernel", fit_intercept=False)._typeii_setup()
    prob = prepare_typeii(typeii_basis(X, options), y, prior, options, owner="RVMRegressor")
    st = fit_design(prob.Phi, prob.y, prob.prior, prob.noise_var, noise_every=5, n_obs=prob.n_obs)
    slots = np.asarray(st.basis_of_slot)
    order = np.argsort(slots[slots >= 0])
    assert np.array_equal(np.flatnonzero(est.coef_), np.sort(slots[slots >= 0]))
    assert np.array_equal(est.coef_[np.sort(slots[slots >= 0])], np.asarray(st.mu)[slots >= 0][order])
    assert est.objective_ == float(st.objective) and est.noise_var_ == float(st.noise_var)
    assert est.n_iter_ == int(st.n_iter) and est.converged_ == bool(st.converged)
