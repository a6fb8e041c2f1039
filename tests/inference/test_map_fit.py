"""The MAP fitting core (:mod:`sparsebayes.inference.estimators.map_fit`) and the ``"map"`` route of
``SparseClassifier`` (:mod:`sparsebayes.inference.estimators.map_fitted`): the record against scikit-learn's
logistic regression and a direct computation of eq. 3's objective; the route against the core called directly;
``prior_`` and ``likelihood_`` refit the model; the refusals."""
import numpy as np
import pytest
import scipy.special
import sklearn
from sklearn.linear_model import LogisticRegression

from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.inference.estimators import map_fit
from sparsebayes.inference.estimators.map_fit import MapOptions, fit_map_model, map_basis, map_feature_map, map_penalty
from sparsebayes.inference.estimators.smlr import SMLRClassifier
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier
from sparsebayes.models import HorseshoePrior, LaplacePrior
from sparsebayes.models.priors.penalty import FlatPrior, GaussianPrior, penalty_prior

#: scikit-learn's l1 logistic regression (``penalty`` deprecated from 1.8 on, for ``l1_ratio``)
_L1 = {"l1_ratio": 1.0} if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 8) else {"penalty": "l1"}


def _blobs(n=90, m=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 2.0, 0.0], [2.0, -1.0, 0.0], [-2.0, -1.0, 0.0]])[:m]
    y = np.repeat(np.arange(m), n // m)
    return centers[y] + rng.normal(size=(n, 3)), y


def _core(X, y_enc, penalty, lam, **options):
    options = MapOptions(**{"features": None, "tol": 1e-11, "max_iter": 20000, "solver": "newton", **options})
    basis = map_basis(X, map_feature_map(options.features, options.kernel_width, options.standardize))
    return basis, fit_map_model(basis, y_enc, np.unique(y_enc), penalty, lam, options, owner="test")


@pytest.mark.parametrize("penalty, lam", [("l2", 0.7), ("l1", 2.0)])
def test_binary_record_is_scikit_learns_logistic_regression(penalty, lam):
    """Two classes on the raw inputs (no bias column): eq. 3 with ``λ = 1/C`` is ``LogisticRegression``'s
    objective ``‖w‖ penalty + C Σ log-loss``; the record's ``coef`` (the log-odds of class 1, sklearn's layout)
    is its weights, zeros included."""
    X, y = _blobs(m=2)
    _, fit = _core(X, y, penalty, lam)
    kind = dict(_L1, solver="liblinear") if penalty == "l1" else dict(solver="lbfgs")  # lbfgs: the default l2
    ref = LogisticRegression(C=1.0 / lam, fit_intercept=False, tol=1e-12, max_iter=100000, **kind).fit(X, y)
    np.testing.assert_allclose(fit.coef, ref.coef_, atol=1e-6)
    np.testing.assert_array_equal(fit.intercept, [0.0])
    if penalty == "l1":
        np.testing.assert_array_equal(fit.coef == 0, np.abs(ref.coef_) < 1e-10)


@pytest.mark.parametrize("penalty, lam", [("l1", 0.5), ("l2", 0.5), (None, 0.0)])
def test_record_objective_and_counts_are_eq3_at_its_weights(penalty, lam):
    """The record's objective is ℓ(W) − penalty(W) computed directly from its weights (003 eqs. 2–3, the
    reference class's logit zero), its λ and prior the penalty's, and its counts those of its weights."""
    X, y = _blobs(seed=1)
    basis, fit = _core(X, y, penalty, lam, features="linear", standardize=False)
    W = map_fit.scale_bias_row(fit.basis_weights[:, :-1], 1.0 / fit.bias_scale)  # the penalized problem's
    logits = np.hstack([basis.design @ W, np.zeros((len(y), 1))])
    loglik = np.sum(logits[np.arange(len(y)), y] - scipy.special.logsumexp(logits, axis=1))
    prior = {"l1": lam * np.abs(W).sum(), "l2": 0.5 * lam * np.sum(W**2), None: 0.0}[penalty]
    np.testing.assert_allclose(fit.objective, loglik - prior, rtol=1e-10)
    assert fit.lam == lam and fit.prior == penalty_prior(penalty, lam)
    assert fit.n_nonzero == np.count_nonzero(W) and fit.n_active == np.count_nonzero(np.any(W != 0, axis=1))
    assert fit.converged and fit.optimality_residual < 1e-6


def test_lam_relative_is_a_fraction_of_lambda_max():
    """``lam_relative``: λ is ``lam · λ_max`` of the penalized design (:func:`lambda_max`, the λ at which every
    weight is zero); just above λ_max every weight is zero, just below one is not."""
    X, y = _blobs(seed=2)
    basis, fit = _core(X, y, "l1", 0.3, features="linear", lam_relative=True)
    top = map_fit.lambda_max(basis.design, y, 3)
    assert fit.lam == 0.3 * top
    with pytest.warns(DegenerateFitWarning, match="every weight is zero"):
        assert _core(X, y, "l1", 1.001, features="linear", lam_relative=True)[1].n_nonzero == 0
    assert _core(X, y, "l1", 0.999, features="linear", lam_relative=True)[1].n_nonzero > 0


@pytest.mark.parametrize("prior, expected", [
    (LaplacePrior.from_lam(0.5), ("l1", 0.5)), (GaussianPrior(2.0), ("l2", 2.0)), (FlatPrior(), (None, 0.0))])
def test_map_penalty_reads_the_hierarchy_as_its_penalty(prior, expected):
    assert map_penalty(prior) == expected
    assert penalty_prior(*map_penalty(prior)) == prior  # and back (the fitted prior_)


@pytest.mark.parametrize("prior, words", [(HorseshoePrior(), ["HorseshoePrior", "'laplace'"]),
                                          (LaplacePrior(1.0, gamma_prior=(1.0, 1.0)), ["gamma_prior", "method='em'"])])
def test_map_penalty_refuses_what_bound_optimization_does_not_fit(prior, words):
    with pytest.raises(ValueError) as err:
        map_penalty(prior)
    for word in words:
        assert word in str(err.value)


@pytest.mark.parametrize("kw", [dict(prior="laplace", options={"lam": 0.2}), dict(prior=GaussianPrior(0.5)),
                                dict(prior="laplace", options={"lam": 0.05, "lam_relative": True}, features="kernel")])
def test_route_is_the_core_named(kw):
    """``SparseClassifier(method="map")`` fits by the core (route ``"map"``): its attributes
    are the record's, and it answers with the record's weights (eq. 1's softmax of ``[h(x)ᵀW, 0]``)."""
    X, y = _blobs(seed=3)
    est = SparseClassifier(method="map", **kw).fit(X, y)
    assert est._route_ == "map"
    penalty, lam = map_penalty(kw["prior"]) if not isinstance(kw["prior"], str) else ("l1", kw["options"]["lam"])
    options = {k: v for k, v in (kw.get("options") or {}).items() if k != "lam"}
    options = MapOptions(features=kw.get("features", "linear"), **options)
    basis = map_basis(X, map_feature_map(options.features, options.kernel_width, options.standardize))
    fit = fit_map_model(basis, y, np.unique(y), penalty, lam, options, owner="test")
    np.testing.assert_array_equal(est.coef_, fit.coef)
    np.testing.assert_array_equal(est.intercept_, fit.intercept)
    assert (est.n_iter_, est.objective_, est.lam_, est.prior_) == (fit.n_iter, fit.objective, fit.lam, fit.prior)
    design = map_feature_map(options.features, options.kernel_width, options.standardize).fit(X).transform(X)
    logits = np.hstack([np.asarray(design) @ fit.basis_weights[:, :-1], np.zeros((len(y), 1))])
    np.testing.assert_allclose(est.predict_proba(X), scipy.special.softmax(logits, axis=1), rtol=1e-10, atol=1e-14)


def test_prior_and_likelihood_refit_the_model():
    """``prior=est.prior_, link=est.likelihood_`` under ``method="map"`` refits ``est``'s model: the same weights."""
    X, y = _blobs(seed=4)
    est = SMLRClassifier(lam=0.02, lam_relative=True).fit(X, y)
    again = SparseClassifier(method="map", prior=est.prior_, link=est.likelihood_).fit(X, y)
    np.testing.assert_array_equal(again.coef_, est.coef_)
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


def test_warm_start_starts_from_the_previous_weights(monkeypatch):
    """``warm_start``: the engine starts from the previous fit's weights (the same optimum as a cold fit); a failed
    fit drops them, as it drops every fitted attribute."""
    X, y = _blobs(seed=5)
    starts, engine = [], map_fit.fit_coef

    def spy(*args, coef0=None, **kwargs):
        starts.append(coef0)
        return engine(*args, coef0=coef0, **kwargs)

    monkeypatch.setattr(map_fit, "fit_coef", spy)
    est = SMLRClassifier(lam=0.5, warm_start=True, tol=1e-10, solver="newton").fit(X, y)
    previous = est._basis_weights_.copy()
    est.set_params(lam=0.4).fit(X, y)
    assert starts[0] is None and est.bias_scale_ == 1.0
    np.testing.assert_array_equal(starts[1], previous[:, :-1])
    cold = SMLRClassifier(lam=0.4, tol=1e-10, solver="newton").fit(X, y)
    np.testing.assert_allclose(est.coef_, cold.coef_, atol=1e-7)
    with pytest.raises(ValueError):
        est.fit(X, np.zeros(len(y)))  # one class: the fit fails
    est.fit(X, y)
    assert starts[-1] is None  # nothing to warm-start from


@pytest.mark.parametrize("est, words", [
    (SparseClassifier(method="map", link="probit"), ["not 'probit'", "method='em'"]),
    (SparseClassifier(method="map", options={"lamb": 1.0}), ["lamb", "SMLRClassifier"]),
    (SparseClassifier(method="map", prior=GaussianPrior(1.0), options={"lam": 2.0}), ["['lam']", "set by prior="]),
    (SparseClassifier(method="map", prior="gaussian", options={"lam_relative": True}), ["lam_relative", "'l1'"]),
    (SparseClassifier(method="map", options={"warm_start": "yes"}), ["warm_start must be True or False"]),
])
def test_route_refusals_name_the_problem(est, words):
    X, y = _blobs(seed=6)
    with pytest.raises(ValueError) as err:
        est.fit(X, y)
    for word in words:
        assert word in str(err.value)


def test_logistic_link_is_the_multinomial_for_two_classes():
    X, y = _blobs(m=2, seed=7)
    by_link = SparseClassifier(method="map", link="logistic").fit(X, y)
    np.testing.assert_array_equal(by_link.coef_, SparseClassifier(method="map").fit(X, y).coef_)


def test_the_cross_validation_modules_import_first():
    """:mod:`.smlr_cv` and :mod:`.smlr_cv_path` (which a joblib worker imports first, to unpickle a fold's task)
    import in a fresh process before :mod:`.smlr`: they build on the MAP core, not on the paper class."""
    import subprocess
    import sys

    for module in ("smlr_cv_path", "smlr_cv"):
        code = f"import sparsebayes.inference.estimators.{module} as m; print(m.__name__)"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
