"""EM with estimated shared hyperparameters stops on the joint change (issue 42, class 2).

The weights settle within a few iterations while an estimated γ or τ is still travelling; a rule on
``‖Δβ‖/‖β‖`` alone stopped 25-90 % from the joint mode (γ stayed at its start with y in small
units). For every estimator and hierarchy with an estimated hyperparameter, the fit at the default
tolerance lies within ``5 · tol`` (relative) of the fit at ``tol = 1e-12``, in the hyperparameter
and in the weights; a fit that ``max_iter`` ends warns.
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference.engines.em import distance_to_fixed_point
from sparsebayes.models.priors.horseshoe import HorseshoePrior
from sparsebayes.models.priors import LaplacePrior

#: The default tolerance, and how far (relative) its fit may lie from the converged one.
TOL = 1e-3
SLACK = 5 * TOL

PRIORS = {"laplace-vague": lambda: LaplacePrior(1.0, (1.0, 1e-3)),
          "laplace-informative": lambda: LaplacePrior(1.0, (3.0, 0.5)),
          "horseshoe": lambda: HorseshoePrior(1.0, 1.0)}


def _problem(seed=0, n=60, p=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:3] = [2.0, -1.5, 1.0]
    eta = X @ beta
    return X, eta + 0.5 * rng.standard_normal(n), (eta + rng.standard_normal(n) > 0).astype(int)


def _shared(est):
    prior = est.prior_
    return float(prior.gamma) if hasattr(prior, "gamma") else float(prior.tau)


def _fits(cls, prior, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quick = cls(prior=PRIORS[prior](), tol=TOL).fit(X, y)
        exact = cls(prior=PRIORS[prior](), tol=1e-12, max_iter=100_000).fit(X, y)
    return quick, exact


@pytest.mark.parametrize("prior", sorted(PRIORS))
@pytest.mark.parametrize("kind", ["regression", "regression-small-units", "probit"])
def test_the_default_tolerance_fit_is_near_the_converged_joint_mode(prior, kind):
    X, y, labels = _problem()
    if kind == "probit":
        if prior == "laplace-vague":
            pytest.skip("the vague hyperprior's joint mode on these labels is the empty model (no weights to compare)")
        quick, exact = _fits(SparseProbitClassifier, prior, X, labels)
    else:
        quick, exact = _fits(AdaptiveSparseRegressor, prior, X, y * (1e-4 if kind.endswith("units") else 1.0))
    assert _shared(quick) == pytest.approx(_shared(exact), rel=SLACK)
    np.testing.assert_allclose(quick.beta_, exact.beta_, rtol=0, atol=SLACK * np.max(np.abs(exact.beta_)))
    assert quick.n_iter_ < exact.n_iter_  # the default tolerance did stop earlier


def test_a_fixed_hyperparameter_keeps_the_rule_on_the_weights():
    """γ fixed: the objective is not needed and the stopping rule is ``‖Δβ‖/‖β‖ < tol`` itself, so the
    fit at a tolerance just above the last step's change stops where the one at the default does."""
    X, y, _ = _problem()
    est = AdaptiveSparseRegressor(prior=LaplacePrior(5.0), tol=TOL).fit(X, y)
    longer = AdaptiveSparseRegressor(prior=LaplacePrior(5.0), tol=TOL, max_iter=est.n_iter_ - 1)
    with pytest.warns(ConvergenceWarning):
        longer.fit(X, y)


def test_max_iter_ending_a_joint_fit_warns_naming_max_iter():
    X, y, _ = _problem()
    with pytest.warns(ConvergenceWarning, match="max_iter=4"):
        AdaptiveSparseRegressor(prior=PRIORS["laplace-vague"](), max_iter=4).fit(X, y)


@pytest.mark.parametrize("change, previous, expected", [
    (1e-4, np.inf, 1e-4),             # first step: no rate yet
    (0.5e-4, 1e-4, 0.5e-4),          # ρ = 1/2: one more change to go, no more than the change itself
    (0.9e-4, 1e-4, 0.9e-4 * 9.0),    # ρ = 0.9: nine changes to go
    (2e-4, 1e-4, 2e-4 * 99.0),       # growing: read as the largest rate
    (0.0, 0.0, 0.0),                 # converged to rounding: no 0/0
])
def test_distance_to_fixed_point_is_the_geometric_tail(change, previous, expected):
    assert float(distance_to_fixed_point(np.float64(change), np.float64(previous))) == pytest.approx(expected, rel=1e-12)
