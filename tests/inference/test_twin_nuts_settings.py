"""What the NUTS twin of a fitted estimator hands the NUTS runner: the parametrization and settings
the hierarchy declares. The Laplace hierarchies are sampled through their marginal (no τ funnel:
the Bayesian Lasso and the Laplace EM twin), the horseshoe with its declared target acceptance; a
caller's own target acceptance wins. A spy stands in for the runner, so nothing compiles."""
import numpy as np
import pytest

from sparsebayes.inference import AdaptiveSparseRegressor, BayesianLassoRegressor
from sparsebayes.inference.engines import nuts as runner
from sparsebayes.inference.engines import collapsed_nuts
from sparsebayes.inference.posterior import twin_posterior
from sparsebayes.models import HorseshoePrior


class _Stop(Exception):
    pass


@pytest.fixture
def handed(monkeypatch):
    """The keyword arguments ``sample_posterior`` gives ``run_nuts``, and the kernel settings the runner
    would resolve from them (:func:`sparsebayes.inference.engines.nuts.settings`)."""
    seen = {}

    def spy(model, H, y, **kwargs):
        seen.update(kwargs, model=model)
        seen["resolved"] = runner.settings(kwargs, kwargs.get("target_accept_prob"), kwargs.get("max_tree_depth"))
        raise _Stop
    monkeypatch.setattr(twin_posterior, "run_nuts", spy)
    monkeypatch.setattr(collapsed_nuts, "run_nuts", spy)
    return seen


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return X, X @ np.array([1.0, 0.0, -0.5]) + 0.3 * rng.normal(size=60)


def _nuts(est, X, y, **kw):
    with pytest.raises(_Stop):
        twin_posterior.sample_posterior(est, X, y, "nuts", **kw)


def test_laplace_twins_sample_the_marginal(handed):
    X, y = _data()
    _nuts(BayesianLassoRegressor(num_warmup=20, num_samples=20, num_chains=1).fit(X - X.mean(0), y), X - X.mean(0), y)
    assert handed["marginal"] is True and handed["resolved"] == (0.8, 10)
    handed.clear()
    _nuts(AdaptiveSparseRegressor(prior="laplace").fit(X, y), X, y)
    assert handed["marginal"] is True


def test_the_horseshoe_twin_runs_collapsed_at_its_declared_target(handed):
    """The Gaussian regression integrates β out (the hierarchy's scales alone go to NUTS); the probit
    classifier, which cannot, samples the statement itself; both at the declared target acceptance."""
    from sparsebayes.inference import SparseProbitClassifier
    from sparsebayes.models.likelihoods import ProbitLikelihood
    from sparsebayes.models.model import sparse_model
    X, y = _data()
    est = AdaptiveSparseRegressor(prior="horseshoe").fit(X, y)
    _nuts(est, X, y)
    assert handed["model"] is collapsed_nuts.collapsed_model
    assert handed["target_accept_prob"] is None and isinstance(handed["prior"], HorseshoePrior)
    assert handed["resolved"][0] == HorseshoePrior.nuts_settings["target_accept_prob"]
    handed.clear()
    labels = y > 0
    _nuts(SparseProbitClassifier(prior="horseshoe").fit(X, labels), X, labels)
    assert handed["model"].__wrapped__ is sparse_model and type(handed["likelihood"]) is ProbitLikelihood
    assert handed["resolved"][0] == HorseshoePrior.nuts_settings["target_accept_prob"]
    handed.clear()
    _nuts(est, X, y, target_accept_prob=0.85)
    assert handed["resolved"][0] == 0.85
