"""Draws depend on the seed and the values only, not on the container: a DataFrame's values are
column-major, and NumPy's column means of a column-major array differ from a row-major one's in the
last bits, which a sampler's chaotic trajectories then carry into different draws."""
import numpy as np
import pandas as pd
import pytest
from sparsebayes.inference import BayesianLassoRegressor


@pytest.mark.parametrize("sampler", [pytest.param("nuts", marks=pytest.mark.slow), "gibbs"])
def test_the_bayesian_lasso_draws_the_same_from_a_dataframe_and_an_array(sampler):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, 0.0, -0.5]) + 0.3 * rng.normal(size=40)
    kw = dict(sampler=sampler, num_warmup=50, num_samples=50, num_chains=1, seed=0)
    containers = (X, pd.DataFrame(X, columns=["a", "b", "c"]), np.asfortranarray(X))
    fits = [BayesianLassoRegressor(**kw).fit(data, y) for data in containers]
    first = fits[0].idata_.posterior["beta"].values
    for data, fit in zip(containers[1:], fits[1:]):
        np.testing.assert_array_equal(fit.idata_.posterior["beta"].values, first)
        # the draws are the same to the bit; the prediction's matrix-vector product itself rounds by layout
        np.testing.assert_allclose(fit.predict(data), fits[0].predict(X), rtol=0, atol=1e-12)
