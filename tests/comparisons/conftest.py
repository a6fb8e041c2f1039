"""Fixtures shared by the ``compare`` tests of this folder."""
import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def three_inputs():
    """``(X, y)``: 50 rows of three standard normal inputs in a DataFrame (columns ``height``, ``load``,
    ``idle``) and ``y = 1 + 2·height − load + 0.5 ε``: two inputs matter, one does not."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(50, 3)), columns=["height", "load", "idle"])
    return X, 1.0 + 2.0 * X["height"] - X["load"] + 0.5 * rng.normal(size=50)
