"""The estimators :mod:`sparsebayes.inference` exports, and the short sampler settings of the tests that
walk all of them (scikit-learn's checks, a refit's compile count, the reliability invariances, the
estimators' own model statements): one definition, so that each of those tests asks the same question
of a newly exported estimator ("is it covered?") and fits the samplers alike.

Test modules import it by name (``tests/`` is on ``sys.path``, :mod:`tests.conftest`)."""
import numpy as np
from sklearn.base import BaseEstimator

import sparsebayes.inference as inference

#: The names of the estimator classes :mod:`sparsebayes.inference` exports.
EXPORTED = frozenset(name for name in inference.__all__
                     if isinstance(getattr(inference, name), type) and issubclass(getattr(inference, name), BaseEstimator))

#: Short Gibbs chains (two, so that the chain dimension is there); R-hat is not checked: these tests fit
#: data sets too small for it to mean anything.
SHORT_GIBBS = dict(num_warmup=20, num_samples=40, num_chains=2, rhat_max=np.inf)
#: Short NUTS chains (one: each NUTS shape compiles a program of its own).
SHORT_NUTS = dict(num_warmup=20, num_samples=40, num_chains=1, rhat_max=np.inf)


def uncovered(estimators):
    """The exported estimator classes' names that no instance in ``estimators`` is of."""
    return EXPORTED - {type(est).__name__ for est in estimators}


def assert_fit_refused(est, words):
    """``est.fit`` on a small two-class data set (30 × 3, labels 0/1, which a regressor fits as numbers)
    raises a ValueError whose message has every one of ``words``; returns the error."""
    import pytest

    X, y = np.random.default_rng(0).normal(size=(30, 3)), np.r_[np.zeros(15), np.ones(15)]
    with pytest.raises(ValueError) as err:
        est.fit(X, y)
    for word in words:
        assert word in str(err.value)
    return err.value
