"""The Laplace path of the type-II engine with the Bernoulli-logistic likelihood (the classification
RVM) and its estimator.

Oracles: the Laplace evidence and the mode recomputed independently (scipy's optimizer,
dense slogdet); S_m, Q_m against the linearized Gaussian problem built densely; and, when the
``fastrvm`` package (Tipping's SparseBayes in C++, ``bench`` extra) is installed, its
Bernoulli RVM on the same basis: on at least 4 of 5 Ripley subsets the same relevance
vectors and log evidence within 1e-3 nats, and never more than 0.5 nats below it.
"""
import numpy as np
import pytest
import scipy.optimize
from scipy.special import expit, log_expit

from sparsebayes.comparisons import datasets
from sparsebayes.inference import RVMClassifier
from sparsebayes.inference.engines import typeii_laplace, typeii_laplace_mode
from sparsebayes.models.features import GaussianKernelFeatures
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood

RIPLEY_WIDTH = 0.5 / np.sqrt(2)  # Tipping's exp(-|x-x'|^2 / r^2), r = 0.5
BERNOULLI = BernoulliLogisticLikelihood()


def _fit(Phi, t, mask, **kw):
    return typeii_laplace.fit(Phi, t, mask, likelihood=BERNOULLI, **kw)


def _ripley_subset(seed, n=100):
    tr, _ = datasets.ripley_synth()
    idx = np.random.default_rng(seed).choice(len(tr.y), n, replace=False)
    X, y = tr.X[idx], tr.y[idx].astype(float)
    feats = GaussianKernelFeatures(width=RIPLEY_WIDTH).fit(X)
    return X, y, feats, feats.transform(X)


def _dense_evidence(Phi, t, var):
    """Laplace evidence with the mode found by scipy (BFGS on the active weights)."""
    A = np.flatnonzero(var > 0)
    P, inv_v = Phi[:, A], 1.0 / var[A]

    def neg(w):
        eta = P @ w
        return -(np.sum(t * log_expit(eta) + (1 - t) * log_expit(-eta)) - 0.5 * np.sum(inv_v * w * w))

    def grad(w):
        return -((t - expit(P @ w)) @ P - inv_v * w)

    w = scipy.optimize.minimize(neg, np.zeros(A.size), jac=grad, method="BFGS", options={"gtol": 1e-10}).x
    y = expit(P @ w)
    Hess = (P * (y * (1 - y))[:, None]).T @ P + np.diag(inv_v)
    return -neg(w) - 0.5 * np.sum(np.log(var[A])) - 0.5 * np.linalg.slogdet(Hess)[1], A, w


def test_evidence_and_mode_match_an_independent_computation():
    _, y, _, Phi = _ripley_subset(0)
    st = _fit(Phi, y, np.ones(Phi.shape[1], bool))
    var = np.asarray(st.var)
    ev, A, w = _dense_evidence(Phi, y, var)
    m = RVMClassifier(kernel_width=RIPLEY_WIDTH).fit(*_ripley_subset(0)[:2])
    np.testing.assert_array_equal(m.prior_var_[0], var)
    yA = expit(Phi[:, A] @ w)
    Hess = (Phi[:, A] * (yA * (1 - yA))[:, None]).T @ Phi[:, A] + np.diag(1 / var[A])
    np.testing.assert_allclose(m.laplace_cov_[0], np.linalg.inv(Hess), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(typeii_laplace.coefficients(st, Phi.shape[1]))[A], w, rtol=1e-5, atol=1e-6)
    assert float(st.objective) == pytest.approx(ev, abs=1e-6)


def test_model_equals_solver_log_joint_up_to_a_constant():
    """NumPyro's log density of ``rvm_classifier_model`` at fixed α minus the engine's log joint is constant in w."""
    from numpyro.infer.util import log_density

    from sparsebayes.models.bayesian_lasso import rvm_classifier_model

    _, t, _, Phi = _ripley_subset(2, n=30)
    var = np.random.default_rng(0).uniform(0.5, 20.0, Phi.shape[1])
    rng = np.random.default_rng(1)
    diffs = []
    for _ in range(5):
        w = rng.normal(scale=2.0, size=Phi.shape[1])
        lp, _ = log_density(rvm_classifier_model, (Phi, t), {"prior_var": var}, {"w": w})
        diffs.append(float(lp) - float(typeii_laplace_mode._log_joint(BERNOULLI, w, Phi, t, 1.0 / var)))
    assert np.ptp(diffs) < 1e-8


@pytest.mark.parametrize("slots", [
    [17, -1, 0, 5],  # all slots at once (capacity 4)
    [-1, -1, 17, -1, -1, -1, -1, -1, -1, 0, -1, -1, -1, -1, 5, -1],  # 3 active gathered into 4 of 16
    [-1, 17, 3, -1, 0, -1, 11, -1, -1, 25, -1, -1, -1, 5, -1, -1],  # 6 active gathered into 8 of 16
])
def test_sparsity_and_quality_equal_the_linearized_gaussian_problem(slots):
    _, t, _, Phi = _ripley_subset(1, n=40)
    var = np.zeros(Phi.shape[1])
    active = [m for m in slots if m >= 0]
    var[active] = np.linspace(0.7, 30.0, len(active))
    state = typeii_laplace.State(
        var=var, basis_of_slot=np.array(slots, np.int32), w=np.zeros(len(slots)), objective=0.0, n_iter=0,
        converged=False, capacity_hit=False, last_gain=0.0, stalled=False)
    state, L = typeii_laplace_mode._settle(BERNOULLI, Phi, t, state)
    S, Q, _, _ = typeii_laplace_mode.sparsity_quality(BERNOULLI, Phi, t, state, L)
    w = np.asarray(typeii_laplace.coefficients(state, Phi.shape[1]))
    y = expit(Phi @ w)
    b = y * (1 - y)
    t_hat = Phi @ w + (t - y) / b
    C = np.diag(1 / b) + (Phi * var) @ Phi.T
    Ci = np.linalg.inv(C)
    np.testing.assert_allclose(np.asarray(S), np.einsum("nm,nk,km->m", Phi, Ci, Phi), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(Q), Phi.T @ Ci @ t_hat, rtol=1e-6, atol=1e-8)


def test_a_cycling_fit_stops_and_keeps_the_best_state():
    """Glass, fold 0, class 3 vs rest, h = 1: add/delete of one kernel cycles (fastrvm loops to its limit)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    d = datasets.forensic_glass()
    tr, _ = next(iter(StratifiedKFold(10, shuffle=True, random_state=0).split(d.X, d.y)))
    X = StandardScaler().fit(d.X[tr]).transform(d.X[tr])
    Phi = GaussianKernelFeatures(width=1.0).fit(X).transform(X)
    t = (d.y[tr] == np.unique(d.y)[2]).astype(float)
    mask = np.ones(Phi.shape[1], bool)
    best = _fit(Phi, t, mask, patience=50)
    last = _fit(Phi, t, mask, patience=10**6, max_iter=301)
    assert bool(best.stalled) and not bool(best.converged) and not bool(last.converged)
    assert float(best.objective) > float(last.objective) + 1.0  # the cycle's low point is 6 nats down
    ev, _, _ = _dense_evidence(Phi, t, np.asarray(best.var))
    assert float(best.objective) == pytest.approx(ev, abs=1e-5)
    # growing from two slots stalls at the same step, in the same state, as a fit with every slot
    # (objectives to 1e-8: along the cycle each mode is found to a Newton step of 1e-8, and the
    # slot count changes the rounding)
    full = _fit(Phi, t, mask, patience=50, capacity=Phi.shape[1])
    grown = _fit(Phi, t, mask, patience=50, capacity=2)
    assert bool(grown.stalled) and int(grown.n_iter) == int(full.n_iter)
    np.testing.assert_array_equal(np.asarray(grown.var) > 0, np.asarray(full.var) > 0)
    assert float(grown.objective) == pytest.approx(float(full.objective), abs=1e-8)


def test_growing_slots_takes_the_steps_of_a_fit_with_every_slot():
    """From two slots, paused and doubled (never restarted) whenever an add finds none free, the
    fit ends where a fit with a slot for every basis function ends, step for step."""
    _, y, _, Phi = _ripley_subset(3, n=60)
    mask = np.ones(Phi.shape[1], bool)
    full = _fit(Phi, y, mask, capacity=Phi.shape[1])
    grown = _fit(Phi, y, mask, capacity=2)
    assert int((np.asarray(full.var) > 0).sum()) >= 3  # so two slots had to grow
    assert int(grown.n_iter) == int(full.n_iter) and not bool(grown.capacity_hit)
    np.testing.assert_array_equal(np.asarray(grown.var) > 0, np.asarray(full.var) > 0)
    assert float(grown.objective) == pytest.approx(float(full.objective), abs=1e-9)


def test_padding_to_a_bucket_changes_no_step():
    """``fit`` pads the data to a bucketed shape (zero rows, masked columns); the engine run on
    the exact shapes takes the same steps to the same state and, less the padded rows' constant
    log 2 each, the same evidence."""
    import jax.numpy as jnp

    _, y, _, Phi = _ripley_subset(4, n=37)
    mask = np.ones(Phi.shape[1], bool)
    padded = _fit(Phi, y, mask, capacity=Phi.shape[1])
    assert typeii_laplace._padded(Phi, y, mask)[0].shape == (40, 40)
    data = typeii_laplace.LaplaceData(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask))
    exact = typeii_laplace._start_and_run(data, typeii_laplace.make_model(BERNOULLI), capacity=Phi.shape[1],
                                          max_iter=1000, tol=1e-6, patience=100, pause_when_full=False)
    assert bool(exact.converged) and int(padded.n_iter) == int(exact.n_iter)
    # the sums run over more (zero) terms, so rounding differs; Newton stops at a relative step of
    # 1e-8, which leaves the mode, and the variances that follow from it, uncertain at about 1e-9
    np.testing.assert_allclose(padded.var, np.asarray(exact.var), rtol=1e-7, atol=1e-12)
    assert float(padded.objective) == pytest.approx(float(exact.objective), abs=1e-9)
    np.testing.assert_allclose(typeii_laplace.coefficients(padded, Phi.shape[1]),
                               typeii_laplace.coefficients(exact, Phi.shape[1]), atol=1e-9)


def test_a_new_number_of_points_in_the_same_bucket_compiles_nothing(programs_built):
    """37 and 39 training points share the 40-row bucket: the second fit, Laplace covariance
    included, reuses every compiled program (before the padding, each new n compiled 17–69)."""
    X, y = _ripley_subset(5, n=39)[:2]
    RVMClassifier(kernel_width=RIPLEY_WIDTH).fit(X[:37], y[:37])
    with programs_built() as built:
        m = RVMClassifier(kernel_width=RIPLEY_WIDTH).fit(X, y)
    assert built == []
    assert m.laplace_cov_[0].shape == (m.active_[0].sum(),) * 2


def test_agrees_with_fastrvm_on_ripley_subsets():
    sb = pytest.importorskip("fastrvm._sparsebayes_bindings")
    same, gaps = 0, []
    for seed in range(5):
        _, y, _, Phi = _ripley_subset(seed)
        res = sb.SparseBayes(sb.Likelihood.Bernoulli, 10000, False, False, False, True, False, None).inference(Phi, y)
        ev_fast = float(np.asarray(res["log_marginal_likelihood_trace"]).ravel()[-1])
        st = _fit(Phi, y, np.ones(Phi.shape[1], bool), capacity=4)  # exercises the growth
        ours = float(st.objective)
        gaps.append(ev_fast - ours)
        same += (set(np.flatnonzero(np.asarray(st.var))) == set(np.asarray(res["relevant_idx"]).ravel().tolist())
                 and abs(ours - ev_fast) < 1e-3)
    assert same >= 4, gaps
    assert max(gaps) < 0.5, gaps


def test_classifier_on_ripley_is_sparse_and_accurate():
    tr, te = datasets.ripley_synth()
    m = RVMClassifier(kernel_width=RIPLEY_WIDTH).fit(tr.X, tr.y)
    err = np.mean(m.predict(te.X) != te.y)
    assert err <= 0.11 and 2 <= m.n_active_ <= 10  # Tipping (2001): 9.3 % with 4 vectors
    proba = m.predict_proba(te.X[:5])
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert m.converged_.all()


def test_one_vs_rest_probabilities_and_string_labels():
    d = datasets.iris()
    labels = np.array(["setosa", "versicolor", "virginica"])[d.y]
    m = RVMClassifier(kernel_width=1.0).fit(d.X, labels)
    assert m.beta_.shape == (3, d.X.shape[0] + 1) and m.active_.shape == m.beta_.shape
    assert m.coef_.shape == (3, d.X.shape[0]) and m.intercept_.shape == (3,)
    p = m.predict_proba(d.X)
    np.testing.assert_allclose(p.sum(1), 1.0)
    assert set(m.predict(d.X)) <= set(labels)
    assert np.mean(m.predict(d.X) == labels) > 0.95
    idata = m.to_inference_data()
    assert idata.posterior["beta"].shape == (1, 1, 3, d.X.shape[0] + 1)
    draws = m.to_inference_data(draws=4000).posterior["beta"].values[0]  # N(w*, Σ) at the fitted α
    np.testing.assert_array_equal(draws[:, ~m.active_], 0.0)
    for c in range(3):
        A = m.active_[c]
        np.testing.assert_allclose(draws[:, c, A].mean(0), m.beta_[c, A], atol=0.1 * np.sqrt(np.diag(m.laplace_cov_[c])).max())
        np.testing.assert_allclose(np.cov(draws[:, c, A].T), m.laplace_cov_[c], rtol=0.15, atol=0.05 * np.abs(m.laplace_cov_[c]).max())


@pytest.mark.parametrize(
    "X,y,match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [2, 3]]), [0, 1, 0], "NaN"),
        (np.arange(6.0).reshape(3, 2), [1, 1, 1], "single class"),
        (np.ones((3, 2)), [0, 1], "inconsistent numbers of samples"),
    ],
)
def test_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        RVMClassifier().fit(X, y)
