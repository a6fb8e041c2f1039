"""The checks every route shares (:mod:`sparsebayes.inference._validation`): the one-vs-all targets, the
refusal of a likelihood of labels in a regression, the type-II flags a paper class has no parameter for;
and the settings reader of the generic estimators (``_route_settings``), one message format on every route."""
import dataclasses
import re

import numpy as np
import pytest
from sklearn.preprocessing import label_binarize

from sparsebayes.inference import SparseClassifier, SparseRegressor
from sparsebayes.inference._validation import (check_flags_at_default, check_hierarchy_class, one_vs_all_targets,
                                               regression_likelihood)
from sparsebayes.models.likelihoods import LIKELIHOODS
from sparsebayes.models.priors.typeii import LaplaceVariancePrior, ScaledLaplacePrior


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_one_vs_all_targets_are_scikit_learns_binarized_labels(n_classes):
    y_enc = np.random.default_rng(n_classes).integers(0, n_classes, size=40)
    targets = one_vs_all_targets(y_enc, n_classes)
    oracle = label_binarize(y_enc, classes=list(range(n_classes)))  # one column for two classes, as ours
    assert len(targets) == oracle.shape[1]
    for t, column in zip(targets, oracle.T):
        assert t.dtype == np.float64
        np.testing.assert_array_equal(t, column)


def test_a_regression_takes_the_likelihoods_of_real_and_count_targets_only():
    for name, cls in LIKELIHOODS.items():
        if getattr(cls, "support", "real") in ("binary", "categorical"):
            with pytest.raises(ValueError, match=f"likelihood '{name}' models labels: use SparseClassifier"):
                regression_likelihood(name)
        else:
            assert regression_likelihood(name) == cls()


def test_flags_off_their_default_are_named():
    for prior in (ScaledLaplacePrior(), LaplaceVariancePrior()):
        check_flags_at_default(prior, ("lambda_update", "noise_update"), "Paper", "m")  # the defaults pass
    defaults = {f.name: f.default for f in dataclasses.fields(ScaledLaplacePrior)}
    prior = ScaledLaplacePrior(lambda_update="profiled", noise_update="variances-fixed")
    changed = [f for f in ("lambda_update", "noise_update") if getattr(prior, f) != defaults[f]]
    with pytest.raises(ValueError, match=f"Paper has no parameter for ScaledLaplacePrior's "
                                         f"{changed[0]}=.*method='m'.*leave them at the default"):
        check_flags_at_default(prior, ("lambda_update", "noise_update"), "Paper", "m")
    check_flags_at_default(prior, (), "Paper", "m")  # flags the paper class carries are not checked


#: (estimator, its route's paper class, a setting of it): every route reads ``options`` the same way
ROUTES = [(SparseRegressor(), "AdaptiveSparseRegressor", "tol"), (SparseClassifier(), "SparseProbitClassifier", "tol"),
          (SparseRegressor(method="type2"), "RVMRegressor", "max_iter"),
          (SparseRegressor(method="type2", prior="laplace"), "FLAPRegressor", "max_iter"),
          (SparseRegressor(method="type2", likelihood="poisson"), "PoissonRVMRegressor", "max_iter"),
          (SparseClassifier(method="type2"), "RVMClassifier", "max_iter"),
          (SparseClassifier(method="map"), "SMLRClassifier", "max_iter"),
          (SparseRegressor(method="gibbs", prior="laplace"), "GibbsRegressor", "num_samples"),
          (SparseClassifier(method="nuts"), "NutsClassifier", "num_samples"),
          (SparseRegressor(method="nuts"), "BayesianLassoRegressor", "num_samples")]


@pytest.mark.parametrize("est, paper, setting", ROUTES, ids=lambda v: v if isinstance(v, str) else None)
def test_every_route_reads_options_by_one_rule(est, paper, setting):
    from sparsebayes import inference

    assert setting in getattr(inference, paper)().get_params()  # the oracle: the paper class's parameters
    est.set_params(options={setting: 7})._check_model()
    with pytest.raises(ValueError, match=rf"options \['bogus'\] are not parameters of {paper} \(method="):
        est.set_params(options={"bogus": 1})._check_model()
    with pytest.raises(ValueError, match=r"options \['features'\] are set by prior= and method="):
        est.set_params(options={"features": "linear"})._check_model()
    with pytest.raises(ValueError, match=f"options must be a dict of {paper}'s parameters"):
        est.set_params(options=[setting])._check_model()


@pytest.mark.parametrize("est, refusal", [
    (SparseRegressor(method="type2"), "BLSRegressor (method='type2') fits ScaledLaplacePrior, not Impostor"),
    (SparseRegressor(method="gibbs"), "BayesianLassoRegressor (method='gibbs') fits ScaledLaplacePrior, not Impostor"),
    (SparseClassifier(method="map"), "SMLRClassifier (method='map') fits LaplacePrior, not Impostor")],
    ids=["type2", "bayesian_lasso", "map"])
def test_an_object_of_another_class_under_a_hierarchy_name_is_refused_on_every_route(est, refusal):
    from sparsebayes.models.priors import HIERARCHIES

    name = {"type2": "scaled_laplace", "gibbs": "scaled_laplace", "map": "laplace"}[est.method]

    class Impostor:  # a user's hierarchy that calls itself by a registered name (the oracle: the registry's class)
        def __init__(self):
            self.name = name

        def typeii_penalty(self, lam, noise_var):
            """κ (unused: it makes the object a hierarchy)."""
            return 0.0

    check_hierarchy_class(HIERARCHIES[name](), HIERARCHIES[name], "Paper", "m")  # the registry's own class passes
    with pytest.raises(ValueError, match=re.escape(refusal)):
        est.set_params(prior=Impostor())._check_model()


@pytest.mark.parametrize("est", [SparseRegressor(method="type2"), SparseClassifier(method="map"),
                                 SparseRegressor(method="gibbs"), SparseClassifier(method="nuts")],
                         ids=lambda e: e.method)
def test_a_prior_that_is_no_hierarchy_is_refused_on_every_one_hierarchy_route(est):
    with pytest.raises(ValueError, match="prior must be None, a hierarchy name or a hierarchy object"):
        est.set_params(prior=3.0)._check_model()
