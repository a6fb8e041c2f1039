"""Every estimator's ``__init__`` stores its arguments as given and nothing else (scikit-learn's rule,
:func:`~sparsebayes.inference.estimators._base.set_init_params`), and each paper class fixes the
generic estimator's other arguments one way: class attributes, not parameters.

The oracle is the constructor's signature (``inspect``), which is what scikit-learn's ``get_params``
reads, and the method each paper names in its docstring.
"""
import inspect

import pytest
from sklearn.base import BaseEstimator, clone

import sparsebayes.inference as inference
from sparsebayes.inference import (SMLRClassifier, AdaptiveSparseRegressor, BayesianLassoRegressor, BLSRegressor,
                                   FLAPRegressor, GibbsClassifier, GibbsRegressor, NutsClassifier, NutsRegressor,
                                   PoissonRVMRegressor, RVMClassifier, RVMRegressor, SparseProbitClassifier)
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior

ESTIMATORS = [getattr(inference, name) for name in inference.__all__
              if inspect.isclass(getattr(inference, name)) and issubclass(getattr(inference, name), BaseEstimator)]

#: The paper classes and the generic estimator's method each fixes (their module docstrings).
FIXED_METHOD = {AdaptiveSparseRegressor: "em", SparseProbitClassifier: "em", RVMRegressor: "type2",
                BLSRegressor: "type2", FLAPRegressor: "type2", PoissonRVMRegressor: "type2", RVMClassifier: "type2",
                SMLRClassifier: "map", GibbsRegressor: "gibbs", GibbsClassifier: "gibbs", NutsRegressor: "nuts",
                NutsClassifier: "nuts", BayesianLassoRegressor: "gibbs"}


def _signature_params(cls):
    return [name for name, p in inspect.signature(cls.__init__).parameters.items() if name != "self"
            and p.kind != p.VAR_KEYWORD]


def test_every_paper_class_is_listed():
    generic = {"SparseRegressor", "SparseClassifier", "SMLRCV"}
    assert {cls for cls in ESTIMATORS if cls.__name__ not in generic} == set(FIXED_METHOD)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_init_stores_each_argument_as_given_and_nothing_else(cls):
    values = {name: object() for name in _signature_params(cls)}
    est = cls(**values)
    assert set(vars(est)) == set(values)  # no attribute but the parameters (a fixed method is the class's)
    assert all(vars(est)[name] is value for name, value in values.items())
    params = est.get_params(deep=False)
    assert set(params) == set(values) and all(params[name] is value for name, value in values.items())
    signature = inspect.signature(cls.__init__).parameters
    assert cls().get_params(deep=False) == {name: signature[name].default for name in values}


@pytest.mark.parametrize("cls", list(FIXED_METHOD), ids=lambda cls: cls.__name__)
def test_paper_classes_fix_method_as_a_class_attribute(cls):
    est = cls()
    assert "method" not in est.get_params() and "options" not in est.get_params()
    assert est.method == FIXED_METHOD[cls] and est.options is None
    twin = clone(est)
    assert type(twin) is cls and twin.method == est.method
    with pytest.raises(ValueError, match="method"):
        est.set_params(method="em")


@pytest.mark.parametrize("cls, hierarchy", [(RVMRegressor, ARDPrior), (BLSRegressor, ScaledLaplacePrior),
                                            (FLAPRegressor, LaplaceVariancePrior)])
def test_type2_paper_classes_fix_their_hierarchy(cls, hierarchy):
    est = cls()
    assert "prior" not in est.get_params() and "likelihood" not in est.get_params()
    assert est.prior == hierarchy() and est.likelihood == "gaussian"


def test_bayesian_lasso_method_follows_its_sampler():
    assert BayesianLassoRegressor(sampler="nuts-marginal").method == "nuts"
    assert BayesianLassoRegressor().set_params(sampler="nuts").method == "nuts"
