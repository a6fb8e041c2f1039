"""A refit with new hyperparameter values builds no new program, for every estimator.

Hyperparameters (γ, λ, the hyperprior constants, tolerances, iteration limits, kernel widths)
are traced values of the compiled engines, not constants baked into them: a user sweeping them
by hand, by ``GridSearchCV`` or by ``cross_val_score`` pays each engine's compile once per
shape. The first fit of each pair compiles (or reuses what another test compiled); the second,
same shapes and other values, must build nothing (``programs_built`` counts compiles and
disk-cache loads alike).
"""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from public_estimators import SHORT_GIBBS, SHORT_NUTS, uncovered

import sparsebayes.inference as inference
from sparsebayes.models import HorseshoePrior, LaplacePrior

rng = np.random.default_rng(3)
XR = rng.normal(size=(60, 4))
YR = XR @ np.array([1.5, 0.0, -1.0, 0.0]) + 0.3 * rng.normal(size=60)
XC, YC = make_classification(n_samples=60, n_features=4, n_informative=2, n_redundant=0, random_state=3)
Y3 = np.digitize(XC[:, 0] + 0.5 * rng.normal(size=60), [-0.5, 0.5])

# (estimator, data, {parameter: (first value, second value)})
CASES = [
    (inference.AdaptiveSparseRegressor(prior="laplace"), "reg", {"gamma": (1.0, 3.0), "tol": (1e-3, 1e-4), "max_iter": (500, 700)}),
    (inference.AdaptiveSparseRegressor(features="kernel"), "reg", {"kernel_width": (1.0, 1.7)}),
    (inference.AdaptiveSparseRegressor(noise_var=0.1), "reg", {"noise_var": (0.1, 0.2)}),
    (inference.SparseProbitClassifier(prior="laplace"), "clf", {"gamma": (1.0, 4.0), "tol": (1e-3, 1e-4)}),
    (inference.RVMRegressor(features="kernel"), "reg", {"kernel_width": (1.0, 1.5), "tol": (1e-9, 1e-8)}),
    (inference.BLSRegressor(), "reg", {"a": (0.0, 1.0), "b": (0.0, 0.5), "max_iter": (2000, 900)}),
    (inference.FLAPRegressor(), "reg", {"noise_var": (None, 0.2)}),
    (inference.FLAPRegressor(estimate_noise=True), "reg", {"c": (0.0, 1.0), "d": (0.0, 0.1)}),
    (inference.RVMClassifier(), "clf", {"kernel_width": (1.0, 1.3), "tol": (1e-6, 1e-5), "max_iter": (1000, 400)}),
    (inference.SMLRClassifier(), "clf3", {"lam": (0.5, 0.2), "tol": (1e-6, 1e-7)}),
    (inference.SMLRClassifier(penalty="l2"), "clf3", {"lam": (0.5, 2.0)}),
    (inference.SMLRCV(cv=3, n_lams=3), "clf3", {"lams": (None, [0.05, 0.1, 0.3])}),
    (inference.BayesianLassoRegressor(num_warmup=30, num_samples=40, num_chains=2, rhat_max=np.inf), "reg",
     {"lam2_shape": (1.0, 2.0), "lam2_rate": (1.78, 0.5)}),
    (inference.PoissonRVMRegressor(), "count", {"tol": (1e-6, 1e-5), "max_iter": (1000, 300)}),
    (inference.SparseRegressor(method="em", prior="laplace"), "reg", {"options": ({"gamma": 1.0}, {"gamma": 2.5})}),
    (inference.SparseClassifier(method="map"), "clf3", {"options": ({"lam": 0.5}, {"lam": 0.3})}),
    (inference.GibbsRegressor(**SHORT_GIBBS), "reg",
     {"prior": (HorseshoePrior(tau=0.5), HorseshoePrior(tau=0.3)), "seed": (0, 1)}),
    (inference.GibbsClassifier(**SHORT_GIBBS), "clf",
     {"prior": (LaplacePrior(gamma=1.0), LaplacePrior(gamma=3.0)), "seed": (0, 1)}),
    # run_nuts traces the hierarchy's values (its programs are keyed by the hierarchy's class and
    # structure): a new γ, new horseshoe scales, new λ² hyperparameters build nothing
    (inference.NutsRegressor(**SHORT_NUTS), "reg",
     {"prior": (LaplacePrior(gamma=1.0), LaplacePrior(gamma=3.0)), "seed": (0, 1)}),
    (inference.NutsClassifier(**SHORT_NUTS), "clf",
     {"prior": (HorseshoePrior(tau=0.5, tau_prior=1.0), HorseshoePrior(tau=0.3, tau_prior=2.0)), "seed": (0, 1)}),
    pytest.param(inference.BayesianLassoRegressor(sampler="nuts-marginal", **SHORT_NUTS), "reg",
                 {"lam2_shape": (1.0, 2.0), "lam2_rate": (1.78, 0.5), "c": (1.0, 2.0), "d": (0.5, 1.0)},
                 marks=pytest.mark.slow),  # a NUTS compile of its own (the Gibbs case above is the default's)
]

YCOUNT = rng.poisson(np.exp(0.5 * XR[:, 0]))
DATA = {"reg": (XR, YR), "clf": (XC, YC), "clf3": (XC, Y3), "count": (XR, YCOUNT)}


def _fit(est, data, values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings of tiny data sets are not under test here
        return est.set_params(**values).fit(*DATA[data])


def _case_id(case):
    est, _, params = case.values if hasattr(case, "values") else case
    sampler = f"-{est.sampler}" if isinstance(getattr(est, "sampler", None), str) and est.sampler != "gibbs" else ""
    return f"{type(est).__name__}{sampler}-{'-'.join(params)}"


@pytest.mark.parametrize("est, data, params", CASES, ids=[_case_id(c) for c in CASES])
def test_a_refit_with_new_hyperparameters_builds_no_program(programs_built, est, data, params):
    first = {k: v[0] for k, v in params.items()}
    second = {k: v[1] for k, v in params.items()}
    _fit(est, data, first)
    with programs_built() as built:
        _fit(est, data, second)
    assert built == [], f"{len(built)} programs built by a refit with {second}"


def test_every_exported_estimator_has_a_case():
    assert uncovered((c.values if hasattr(c, "values") else c)[0] for c in CASES) == set()
