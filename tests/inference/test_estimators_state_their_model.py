"""Every estimator states its own model: its ``posterior_model`` hook builds its twin and its fitted
``likelihood_`` names its likelihood, so that the twin (``inference/twin_*.py``) and the comparisons
(``comparisons/*.py``) never ask an estimator's class."""
import ast
import pathlib

import numpy as np
import pytest
import sparsebayes.inference as inference
from public_estimators import EXPORTED
from sklearn.base import BaseEstimator
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood, GaussianLikelihood, PoissonLikelihood
from sparsebayes.models.likelihoods.multinomial import MultinomialLogisticLikelihood

ROOT = pathlib.Path(inference.__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("inference/twin_*.py"), *ROOT.glob("comparisons/*.py")])


def _names(node):
    """The plain names ``isinstance``'s second argument is made of (a name, an attribute, a tuple of them)."""
    if isinstance(node, ast.Tuple):
        return [n for elt in node.elts for n in _names(elt)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return []


def _estimator_classes(module_globals, name):
    """Whether ``name`` is an exported estimator class, or a module-level estimator class or tuple of them."""
    if name in EXPORTED:
        return True
    value = module_globals.get(name)
    values = value if isinstance(value, tuple) else (value,)
    return any(isinstance(v, type) and issubclass(v, BaseEstimator) for v in values)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_isinstance_on_an_estimator_class(path):
    import importlib
    module = importlib.import_module(f"sparsebayes.{path.parent.name}.{path.stem}")
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                and len(node.args) == 2):
            bad = [n for n in _names(node.args[1]) if _estimator_classes(vars(module), n)]
            if bad:
                found.append(f"line {node.lineno}: isinstance(..., {', '.join(bad)})")
    assert not found, f"{path.name} asks an estimator's class: {found}"


def test_the_check_finds_an_isinstance_on_an_estimator_class(tmp_path):
    """The check above can fail: it flags the forms the twin used (a class, a tuple alias, a local import)."""
    source = ("from sparsebayes.inference import RVMClassifier\nTYPEII = (RVMClassifier,)\n"
              "def f(est):\n    return isinstance(est, TYPEII) or isinstance(est, (RVMRegressor, int))\n")
    module_globals = {"RVMClassifier": inference.RVMClassifier, "TYPEII": (inference.RVMClassifier,)}
    calls = [n for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "isinstance"]
    flagged = [[n for n in _names(c.args[1]) if _estimator_classes(module_globals, n)] for c in calls]
    assert flagged == [["TYPEII"], ["RVMRegressor"]]


RNG = np.random.default_rng(0)
X = RNG.normal(size=(30, 2))
Y_REG = X @ np.array([1.0, -0.5]) + 0.3 * RNG.normal(size=30)
Y_COUNTS = RNG.poisson(np.exp(0.5 * X[:, 0]))
Y_BIN = (X[:, 0] + 0.3 * RNG.normal(size=30) > 0).astype(int)
Y_THREE = np.digitize(X[:, 0] + 0.3 * RNG.normal(size=30), [-0.5, 0.5])

CASES = [
    (inference.RVMRegressor(), Y_REG, GaussianLikelihood, "gaussian"),
    (inference.BLSRegressor(), Y_REG, GaussianLikelihood, "gaussian"),
    (inference.FLAPRegressor(estimate_noise=True), Y_REG, GaussianLikelihood, "gaussian"),
    (inference.BayesianLassoRegressor(num_warmup=20, num_samples=20, num_chains=1), Y_REG, GaussianLikelihood, "gaussian"),
    (inference.PoissonRVMRegressor(), Y_COUNTS, PoissonLikelihood, "poisson"),
    (inference.RVMClassifier(features="linear"), Y_BIN, BernoulliLogisticLikelihood, "bernoulli_logistic"),
    (inference.SMLRClassifier(lam=0.1), Y_THREE, MultinomialLogisticLikelihood, "multinomial"),
    (inference.SMLRCV(cv=3, n_lams=3), Y_THREE, MultinomialLogisticLikelihood, "multinomial"),
]


@pytest.mark.parametrize("est, y, cls, name", CASES, ids=[type(case[0]).__name__ for case in CASES])
def test_a_fit_states_its_likelihood_and_a_failed_refit_clears_it(est, y, cls, name):
    from sparsebayes.comparisons.fitted_model import draws_on_raw_terms, likelihood_name

    assert not hasattr(est, "likelihood_")
    est.fit(X, y)
    assert type(est.likelihood_) is cls
    assert likelihood_name(est) == name
    # the basis of the draws: the Bernoulli RVM's are the raw terms' weights, the others' the design's
    assert draws_on_raw_terms(est) == (type(est) is inference.RVMClassifier)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        est.fit(bad, y)
    assert not hasattr(est, "likelihood_") and not hasattr(est, "prior_")


@pytest.mark.parametrize("est, y", [(inference.RVMRegressor(), Y_REG),
                                    (inference.FLAPRegressor(estimate_noise=True), Y_REG),
                                    (inference.RVMClassifier(features="linear"), Y_BIN),
                                    (inference.SMLRClassifier(lam=0.1), Y_THREE)],
                         ids=["RVMRegressor", "FLAPRegressor", "RVMClassifier", "SMLRClassifier"])
def test_the_twin_is_the_estimators_own_record(est, y):
    """twin() returns what the estimator's own hook builds (no class dispatch in between): the same
    design, targets and model arguments."""
    from sparsebayes.inference.posterior.twin_posterior import twin

    est.fit(X, y)
    eps = 1e-3 if type(est) in (inference.RVMRegressor, inference.RVMClassifier) else None
    t = twin(est, X, y, surrogate_eps=eps)
    own = est.posterior_model(X, y, surrogate_eps=eps)
    np.testing.assert_array_equal(t.H, own.H)
    np.testing.assert_array_equal(t.y, own.y)
    assert t.model is own.model and t.label == own.label
    assert set(t.kwargs) == set(own.kwargs)


def test_an_estimator_without_its_own_hook_is_a_value_error_naming_it():
    from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
    from sparsebayes.inference.posterior.twin_posterior import twin

    class Unwritten(PosteriorSamplingMixin, BaseEstimator):
        def fit(self, X, y):
            self.coef_ = np.zeros(X.shape[1])
            return self

    with pytest.raises(ValueError, match="Unwritten has no posterior model here"):
        twin(Unwritten().fit(X, Y_REG), X, Y_REG)
