"""SMLR / RMLR estimators: scikit-learn API, labels, sparsity, bad input."""
import warnings

import numpy as np
import pytest
import scipy.special
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.estimators.smlr import SMLRClassifier
from sparsebayes.inference.estimators.smlr_cv import SMLRCV


def _three_blobs(n=90, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat([0, 1, 2], n // 3)
    return centers[y] + rng.normal(size=(n, 2)), y


def test_string_labels_and_reference_column():
    X, y = _three_blobs()
    labels = np.array(["setosa", "virginica", "versicolor"])[y]
    clf = SMLRClassifier(lam=0.5).fit(X, labels)
    assert list(clf.classes_) == sorted(set(labels))
    assert clf.coef_.shape == (3, 2) and clf.intercept_.shape == (3,)  # a row per class, 2 inputs
    np.testing.assert_array_equal(clf.coef_[-1], 0.0)  # the reference class
    assert clf.intercept_[-1] == 0.0
    assert set(clf.predict(X)) <= set(labels)
    assert clf.score(X, labels) > 0.9
    np.testing.assert_allclose(clf.predict_proba(X).sum(1), 1.0)


def test_labels_not_zero_based_give_same_fit():
    X, y = _three_blobs()
    a = SMLRClassifier(lam=0.5).fit(X, y)
    b = SMLRClassifier(lam=0.5).fit(X, 10 * y + 7)
    np.testing.assert_allclose(a.coef_, b.coef_)
    np.testing.assert_array_equal(b.predict(X), 10 * a.predict(X) + 7)


def test_rmlr_keeps_every_kernel_and_smlr_fewer():
    X, y = _three_blobs(60)
    kw = dict(features="kernel", kernel_width=1.0, lam=0.5, tol=1e-5, max_iter=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        smlr = SMLRClassifier(penalty="l1", **kw).fit(X, y)
    rmlr = SMLRClassifier(penalty="l2", **kw).fit(X, y)
    assert rmlr.active_.all() and rmlr.n_active_ == 61
    assert 0 < smlr.n_active_ < 61 and smlr.n_active_ == np.count_nonzero(smlr.active_)
    assert len(smlr.relevance_indices_) <= smlr.n_active_


def test_auto_solver_rule_and_solvers_agree():
    X, y = _three_blobs(120)
    clf = SMLRClassifier(lam=1.0, solver="componentwise", tol=1e-10, max_iter=20000).fit(X, y)
    ref = SMLRClassifier(lam=1.0, solver="auto", tol=1e-10, max_iter=20000).fit(X, y)
    assert ref.solver_ == "block"  # n = 120 > (d m)^2 = (3 * 3)^2 = 81
    np.testing.assert_allclose(clf.coef_, ref.coef_, atol=1e-6)
    assert clf.optimality_residual_ < 1e-5 and ref.optimality_residual_ < 1e-5


@pytest.mark.parametrize("n, d, m, expected", [
    (82, 3, 3, "block"),             # n > (dm)² = 81: the paper's rule
    (81, 3, 3, "newton"),            # n = (dm)²: not block; d(m−1) = 6 weights
    (100, 512, 3, "newton"),         # d(m−1) = 1024 = NEWTON_MAX_WEIGHTS
    (100, 513, 3, "surrogate-cd"),   # 1026 weights: beyond Newton
    (10**8, 10, 10, "block"),
])
def test_auto_takes_each_solver_on_its_side_of_the_rules(n, d, m, expected):
    from sparsebayes.inference.estimators.map_fit import choose_solver

    assert choose_solver("auto", n, d, m, backend="cpu") == expected  # the CPU rules, on any machine
    assert choose_solver("componentwise", n, d, m) == "componentwise"  # a named solver is kept


def test_auto_solver_is_the_one_that_ran(monkeypatch):
    from sparsebayes.inference.estimators import map_fit

    monkeypatch.setattr(map_fit.jax, "default_backend", lambda: "cpu")  # the CPU rule, on any machine
    X, y = _three_blobs(30)  # n = 30 ≤ 81: Newton, not block
    assert SMLRClassifier(lam=1.0, solver="auto").fit(X, y).solver_ == "newton"


@pytest.mark.parametrize("backend", ["gpu", "cuda", "tpu"])
def test_auto_takes_the_dense_block_solver_on_an_accelerator(backend, monkeypatch):
    from sparsebayes.inference.estimators import map_fit

    for n, d, m in [(81, 3, 3), (100, 513, 3), (100_000, 500, 10)]:  # Newton / surrogate-cd on a CPU
        assert map_fit.choose_solver("auto", n, d, m, backend=backend) == "block"
        assert map_fit.choose_solver("auto", n, d, m, backend="cpu") != "block"
    monkeypatch.setattr(map_fit.jax, "default_backend", lambda: backend)  # the backend stubbed
    X, y = _three_blobs(30)
    assert SMLRClassifier(lam=1.0, solver="auto").fit(X, y).solver_ == "block"


@pytest.mark.parametrize("seed", [1, 2, 3, 5])
def test_block_at_default_tol_sets_the_same_zeros_as_componentwise(seed):
    """Eq. 13 alone only shrinks weights towards zero; the block solver must still end with exact zeros."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((400, 7))
    y = (X @ np.array([2, -1, 0, 0, 0.5, 0, 0]) + rng.logistic(size=400) > 0).astype(int) + (rng.random(400) < 0.3)
    block = SMLRClassifier(lam=5.0, solver="block").fit(X, y)
    cw = SMLRClassifier(lam=5.0, solver="componentwise").fit(X, y)
    np.testing.assert_array_equal(block.coef_ != 0, cw.coef_ != 0)
    assert block.optimality_residual_ < 1e-2


def test_convergence_warning_when_max_iter_too_small():
    X, y = _three_blobs()
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        clf = SMLRClassifier(lam=0.1, solver="componentwise", max_iter=2, tol=1e-12).fit(X, y)
    assert clf.n_iter_ == 2


def test_a_stop_far_from_the_map_warns_although_the_change_is_small():
    """Near-separable blobs at λ = 1e-4: the MM steps crawl, and their relative change fell under
    ``tol`` with the gradient 40× λ away from λ∂‖W‖₁ (objective −0.0036 against Newton's −0.0015),
    silently. Now a ConvergenceWarning names the residual; Newton reaches the MAP without one."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=90, centers=3, cluster_std=0.5, center_box=(-30, 30), random_state=0)
    with pytest.warns(ConvergenceWarning, match="optimality residual"):
        crawled = SMLRClassifier(lam=1e-4, solver="componentwise", max_iter=20_000).fit(X, y)
    assert crawled.optimality_residual_ > 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        newton = SMLRClassifier(lam=1e-4, solver="newton", max_iter=20_000).fit(X, y)
    assert newton.optimality_residual_ < 1e-6 and newton.objective_ > crawled.objective_


def test_warm_start_reuses_previous_solution():
    X, y = _three_blobs()
    clf = SMLRClassifier(lam=0.5, warm_start=True, solver="componentwise", tol=1e-8).fit(X, y)
    first = clf.n_iter_
    clf.fit(X, y)
    assert clf.n_iter_ < first


def test_inference_data():
    X, y = _three_blobs()
    clf = SMLRClassifier(lam=0.5).fit(X, y)
    idata = clf.to_inference_data()
    assert isinstance(idata, compat.idata_type())
    beta = idata.posterior["beta"].values[0, 0]  # basis × class: the bias row, then the inputs'
    # the model's weights, on the standardized inputs; coef_ and intercept_ are the same function of the raw ones
    raw = clf.feature_map_.raw_weights(beta.T).T
    np.testing.assert_array_equal(raw[0], clf.intercept_)
    np.testing.assert_array_equal(raw[1:].T, clf.coef_)
    assert idata.attrs["penalty"] == "l1"


def test_features_kernel_is_the_gaussian_kernel_map_and_coef_has_a_basis_dim():
    """``features="kernel"`` (the keyword of every estimator) fits as the ``GaussianKernelFeatures``
    transformer of that width; ``coef``'s dims are (chain, draw, basis, class), as the other
    estimators' with a feature map; the old ``"rbf"`` is refused with the allowed values named."""
    from sparsebayes.models.features import GaussianKernelFeatures

    X, y = _three_blobs(60)
    by_name = SMLRClassifier(features="kernel", kernel_width=0.7, lam=0.5, tol=1e-10).fit(X, y)
    by_map = SMLRClassifier(features=GaussianKernelFeatures(width=0.7), lam=0.5, tol=1e-10).fit(X, y)
    assert isinstance(by_name.feature_map_, GaussianKernelFeatures) and by_name.feature_map_.width == 0.7
    np.testing.assert_allclose(by_name.coef_, by_map.coef_, atol=1e-12)
    assert by_name.to_inference_data().posterior["beta"].dims == ("chain", "draw", "basis", "class")
    for Est in (SMLRClassifier, SMLRCV):
        with pytest.raises(ValueError, match=r"features must be 'linear', 'quadratic', 'kernel', None or a "
                                             r"transformer, got 'rbf'"):
            Est(features="rbf").fit(X, y)


def test_cv_picks_from_grid_and_refits():
    X, y = _three_blobs(90)
    cv = SMLRCV(lams=[0.01, 0.3, 3.0, 30.0], cv=3).fit(X, y)
    assert cv.lam_ in (0.01, 0.3, 3.0, 30.0)
    assert cv.cv_errors_.shape == (1, 4)
    assert cv.cv_errors_[0, 0] > cv.cv_errors_.min()  # λ = 30 zeroes the classifier: worst
    assert cv.score(X, y) > 0.9


def test_lambda_max_is_the_gradient_at_zero_and_the_edge_of_the_all_zero_estimate():
    """``lambda_max`` (NumPy, eq. 9 at W = 0) against the model's own JAX gradient, and eq. 15:
    just above it SMLR's estimate is all zeros, just below it is not (on the design ``[1, X]``: the raw
    basis, ``standardize=False``)."""
    from sparsebayes.inference.estimators.smlr_scale import lambda_max
    from sparsebayes.models.likelihoods import multinomial as mm

    X, y = _three_blobs(90)
    Phi = np.column_stack([np.ones(len(y)), X])
    g = np.asarray(mm.gradient(np.zeros((3, 2)), Phi, mm.one_hot_reference(y, 3)))
    top = lambda_max(Phi, y, 3)
    assert top == pytest.approx(np.max(np.abs(g)), rel=1e-12)
    for solver in ("block", "componentwise", "surrogate-cd", "newton"):  # block: pruning floor at the start's scale
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # the block fit ran to max_iter before
            above = SMLRClassifier(lam=1.001 * top, tol=1e-10, solver=solver, standardize=False).fit(X, y)
        assert np.all(above.coef_ == 0) and above.n_nonzero_ == 0, solver
        below = SMLRClassifier(lam=0.99 * top, tol=1e-10, solver=solver, standardize=False).fit(X, y)
        assert np.any(below.coef_ != 0), solver


@pytest.mark.parametrize("solver", ["block", "componentwise", "surrogate-cd", "newton"])
def test_at_lambda_max_itself_every_solver_stops_at_zero(solver):
    """λ = ``lambda_max`` exactly (the top of SMLRCV's grid). Here the engine's gradient at zero
    came out an ulp above the NumPy λ_max: surrogate-cd and newton then flipped a weight between
    0 and 1e-16, a relative change of 1, for all 2000 iterations and a ConvergenceWarning. Now
    λ_max carries the summation's error bound and relative changes a floor (``LOGIT_FLOOR``)."""
    from sparsebayes.inference.estimators.smlr_scale import lambda_max

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5))
    y = rng.integers(0, 3, 60)
    X[:, 0] += 1.5 * (y == 0)
    X[:, 1] += 1.5 * (y == 1)
    top = lambda_max(np.column_stack([np.ones(60), X]), y, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = SMLRClassifier(lam=top, solver=solver).fit(X, y)
    assert fit.n_nonzero_ == 0 and fit.n_iter_ < 100


def test_cv_scores_new_fold_sizes_without_compiling(programs_built):
    """The CV's scoring (log-softmax of the held-out logits) and its λ grid run in NumPy, and the
    fits on bucketed shapes: another number of points in the same buckets compiles nothing
    (each new n compiled about 30 small programs before, 1 s)."""
    X, y = _three_blobs(93)
    SMLRCV(cv=3, n_lams=3).fit(X[:90], y[:90])
    with programs_built() as built:
        cv = SMLRCV(cv=3, n_lams=3).fit(X, y)
    assert built == []
    assert np.isfinite(cv.cv_log_loss_).all() and cv.score(X, y) > 0.9


def test_cv_progress_bar_counts_every_fit_and_changes_nothing(capsys):
    X, y = _three_blobs(90)
    quiet = SMLRCV(lams=[0.01, 0.3, 3.0], cv=3, kernel_widths=[0.5, 1.0], features="kernel").fit(X, y)
    shown = SMLRCV(lams=[0.01, 0.3, 3.0], cv=3, kernel_widths=[0.5, 1.0], features="kernel", progress_bar=True).fit(X, y)
    err = capsys.readouterr().err  # 2 widths × 3 folds × 3 λ, and the refit
    assert "SMLRCV" in err and "19/19" in err
    np.testing.assert_array_equal(shown.coef_, quiet.coef_)
    np.testing.assert_array_equal(shown.cv_errors_, quiet.cv_errors_)


def test_cv_class_absent_from_training_folds_is_an_error():
    X, y = _three_blobs(90)
    y = y.copy()
    y[:30] = 1
    y[:1] = 0  # class 0 has 1 sample: some training fold lacks it (2 samples: 2 folds, see test_smlr_reliability)
    with pytest.raises(ValueError, match="absent from some training folds"):
        SMLRCV(cv=3).fit(X, y)


@pytest.mark.parametrize(
    "X,y,match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [2, 3]]), [0, 1, 0], "NaN"),
        (np.array([[0.0, np.inf], [1.0, 2.0], [2, 3]]), [0, 1, 0], "infinity"),
        (np.zeros((0, 2)), [], "0 sample"),
        (np.ones((3, 2)), [0, 1], "inconsistent numbers of samples"),
        (np.arange(6.0).reshape(3, 2), [1, 1, 1], "single class"),
        (np.array([["a", "b"], ["c", "d"]]), [0, 1], "could not convert|numeric"),
        (np.arange(6.0).reshape(3, 2), [0.5, 1.2, 3.3], "class labels|continuous|Unknown label"),
    ],
)
def test_bad_input_raises_clear_value_error(X, y, match):
    with pytest.raises(ValueError, match=match):
        SMLRClassifier().fit(X, y)


@pytest.mark.parametrize("params,match", [({"penalty": "l3"}, "penalty"), ({"lam": -1.0}, "lam"),
                                          ({"lam": np.nan}, "lam"), ({"solver": "lbfgs"}, "solver"),
                                          ({"features": "poly"}, "features")])
def test_bad_parameters_raise(params, match):
    X, y = _three_blobs()
    with pytest.raises(ValueError, match=match):
        SMLRClassifier(**params).fit(X, y)


def test_predict_with_wrong_number_of_features():
    X, y = _three_blobs()
    clf = SMLRClassifier().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.ones((2, 3)))


def test_cv_tie_break_sparsest_takes_the_largest_lambda_among_fewest_errors():
    X, y = _three_blobs(90)
    lams = [3.0, 1.0, 0.3, 0.1, 0.03, 0.01]
    sparse = SMLRCV(lams=lams, cv=3, tie_break="sparsest").fit(X, y)
    by_loss = SMLRCV(lams=lams, cv=3, tie_break="log_loss").fit(X, y)
    np.testing.assert_array_equal(sparse.cv_errors_, by_loss.cv_errors_)  # same CV, different choice
    best = sparse.cv_errors_[0] == sparse.cv_errors_.min()
    assert sparse.lam_ == max(np.asarray(sparse.lams_)[best])
    assert by_loss.lam_ in np.asarray(by_loss.lams_)[best]
    assert sparse.lam_ >= by_loss.lam_ and sparse.n_nonzero_ <= by_loss.n_nonzero_
    with pytest.raises(ValueError, match="tie_break"):
        SMLRCV(tie_break="smallest").fit(X, y)


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_cv_chooses_the_kernel_width_too():
    X, y = _three_blobs(90)
    cv = SMLRCV(features="kernel", kernel_widths=[0.3, 1.0, 3.0], n_lams=4, cv=3).fit(X, y)
    assert cv.cv_errors_.shape == (3, 4) and np.asarray(cv.lams_).shape == (3, 4)
    w = [0.3, 1.0, 3.0].index(cv.kernel_width_)
    l = int(np.flatnonzero(np.asarray(cv.lams_)[w] == cv.lam_)[0])
    best = cv.cv_errors_ == cv.cv_errors_.min()
    assert best[w, l] and cv.lam_ == np.asarray(cv.lams_)[best].max()
    assert cv.feature_map_.width == cv.kernel_width_ and cv.score(X, y) > 0.9


def test_failed_refit_leaves_nothing_fitted():
    X, y = _three_blobs()
    for est in (SMLRClassifier(lam=0.5), SMLRCV(cv=3, n_lams=3)):
        est.fit(X, y)
        with pytest.raises(ValueError, match="single class"):
            est.fit(X, np.zeros(len(y)))
        assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]


def test_maximum_likelihood_on_separable_classes_warns_that_no_estimate_exists():
    X, y = _three_blobs(seed=1)
    separable = X[:, 0] > 0  # two classes split by a line
    with pytest.warns(ConvergenceWarning, match="separable"):
        SMLRClassifier(penalty=None).fit(X, separable.astype(int))
    with pytest.warns(ConvergenceWarning, match="separable"):  # three classes, each its own region
        SMLRClassifier(penalty=None).fit(X, np.digitize(X[:, 0], [-1.0, 1.0]))
    with warnings.catch_warnings():  # overlapping classes: the ML estimate exists, no warning
        warnings.simplefilter("error", ConvergenceWarning)
        SMLRClassifier(penalty=None).fit(X, y)
        SMLRClassifier(penalty="l2", lam=1.0).fit(X, separable.astype(int))  # a prior keeps it finite


@pytest.mark.slow
def test_rmlr_laplace_approximation_is_the_numpyro_models_curvature():
    """Model = solver: the precision is minus the Hessian (autodiff) of the NumPyro RMLR model's log
    density at the MAP; the draws have that covariance (class-major order) and the MAP as mean."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    from sparsebayes.models.priors.penalty import GaussianPrior
    from sparsebayes.models.likelihoods.multinomial import flatten, multinomial_logistic_model, unflatten

    X, y = _three_blobs()
    clf = SMLRClassifier(penalty="l2", lam=0.5).fit(X, y)
    cov = clf.laplace_covariance(X)
    Phi = jnp.asarray(clf.feature_map_.transform(X))
    W = np.vstack([clf.intercept_, clf.coef_.T])[:, :-1]  # basis × free classes

    def log_joint(w):
        return log_density(multinomial_logistic_model, (Phi, jnp.asarray(y)), dict(n_classes=3, prior=GaussianPrior(0.5)),
                           {"coef": unflatten(w, W.shape[0])})[0]

    precision = -np.asarray(jax.hessian(log_joint)(flatten(W)))
    np.testing.assert_allclose(cov @ precision, np.eye(W.size), atol=1e-8)
    n = 20_000
    draws = clf.to_inference_data(X, draws=n, seed=0).posterior["beta"].values[0]
    assert draws.shape == (n, W.shape[0], 3) and np.all(draws[..., -1] == 0)
    flat = draws[..., :-1].transpose(0, 2, 1).reshape(n, -1)  # flatten's class-major order, per draw
    np.testing.assert_array_equal(flat[0], np.asarray(flatten(draws[0, :, :-1])))
    np.testing.assert_allclose(np.cov(flat.T), cov, atol=0.05 * np.abs(cov).max())
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(flat.mean(0) - np.asarray(flatten(W))) < 5 * se)
    with pytest.raises(ValueError, match="penalty='l2'"):
        SMLRClassifier(lam=0.5).fit(X, y).laplace_covariance(X)
    with pytest.raises(ValueError, match="training inputs"):
        clf.to_inference_data(draws=10)
    # other inputs would give another (wrong) Hessian: refused, and the bounds' likewise
    for other in (X[:5], X + 1e-9, X[::-1]):
        with pytest.raises(ValueError, match="X must be the training inputs"):
            clf.to_inference_data(other, draws=10)
    binary = SMLRClassifier(lam=0.5).fit(X, y == 0)
    with pytest.raises(ValueError, match="X must be the training inputs"):
        binary.generalization_bounds(X[::-1], (y == 0)[::-1])
    import pickle

    assert pickle.loads(pickle.dumps(clf)).laplace_covariance(X.tolist()) == pytest.approx(cov)


def test_log_proba_and_decision_function_stay_in_log_space():
    """Far from the data the probabilities round to 0; their logs, and the logits, stay exact."""
    X, y = _three_blobs(90)
    clf = SMLRClassifier(lam=1e-3).fit(X, y)
    X_far = X * 200.0
    logits = X_far @ clf.coef_.T + clf.intercept_  # linear basis: the bias is intercept_
    ref = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    assert ref.min() < -800  # exp underflows to 0 here
    np.testing.assert_allclose(clf.predict_log_proba(X_far), ref, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(clf.decision_function(X_far), logits, rtol=1e-10, atol=1e-9)
    np.testing.assert_array_equal(clf.predict(X_far), clf.classes_[np.argmax(logits, axis=1)])
    np.testing.assert_allclose(clf.predict_proba(X), np.exp(clf.predict_log_proba(X)), rtol=1e-12)
    binary = SMLRClassifier(lam=0.1).fit(X[y != 2], y[y != 2])
    d = binary.decision_function(X[y != 2])
    assert d.shape == (int(np.sum(y != 2)),)
    np.testing.assert_array_equal(binary.predict(X[y != 2]), binary.classes_[(d > 0).astype(int)])
    np.testing.assert_allclose(scipy.special.expit(d), binary.predict_proba(X[y != 2])[:, 1], rtol=1e-10)


def test_cv_that_chooses_the_all_zero_estimate_says_so():
    """A grid of λ all above λ_max: every fold has the all-zero fit, and SMLRCV returned it
    silently. (Inputs in small units did this with the default grid until the bias column took
    the inputs' scale: test_smlr_reliability.)"""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X @ [1.5, 0.0, -2.0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    with pytest.warns(UserWarning, match="every weight is zero"):
        small = SMLRCV(cv=2, lams=[1e3, 1e4]).fit(X, y)
    assert small.n_nonzero_ == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert SMLRCV(cv=2).fit(X, y).n_nonzero_ > 0


def test_smlr_is_the_generic_classifier_with_method_map():
    """SMLRClassifier is ``SparseClassifier(method="map")`` with SMLR's parameters (the same names and
    defaults): it fits by the MAP route."""
    from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier

    assert issubclass(SMLRClassifier, SparseClassifier)
    assert SMLRClassifier().get_params() == dict(
        penalty="l1", lam=1.0, lam_relative=False, solver="auto", features="linear", kernel_width="scale",
        standardize=True, tol=1e-6, max_iter=2000, warm_start=False, random_state=0)
    X, y = _three_blobs()
    clf = SMLRClassifier(penalty="l2", lam=0.5).fit(X, y)
    assert clf._route_ == "map"
    generic = SparseClassifier(method="map", prior="gaussian", options={"lam": 0.5}).fit(X, y)
    np.testing.assert_array_equal(generic.coef_, clf.coef_)
    np.testing.assert_array_equal(generic.decision_function(X), clf.decision_function(X))
