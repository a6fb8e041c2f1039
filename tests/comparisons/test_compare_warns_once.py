"""``compare`` builds the model's twin more than once (for the checks, each sampler, the prior draws):
what the twin warns is said once."""
import warnings

import numpy as np
import pandas as pd
import pytest
import sparsebayes
from sparsebayes.inference import BLSRegressor
from sparsebayes.inference._warnings import DegenerateFitWarning


@pytest.mark.slow  # a NUTS program compiled for the twin
def test_flat_limit_warning_is_said_once_in_a_one_input_compare():
    """One input: BLS's type-II λ update gives λ = 0 (004 eq. 17, at most one kept weight), the twin is the
    flat limit, and its ``DegenerateFitWarning`` comes once, not once per time the twin is built."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=40)})
    y = 0.5 * X["x"] + rng.normal(size=40)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        cmp = sparsebayes.compare(BLSRegressor(), X, y, num_warmup=20, num_samples=20, num_chains=1, seed=0,
                                  prior_draws=10)
    assert cmp.estimator.gamma_ == 0.0
    flat = [w for w in said if issubclass(w.category, DegenerateFitWarning) and "λ = 0" in str(w.message)]
    assert len(flat) == 1, [str(w.message) for w in flat]
