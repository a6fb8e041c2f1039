"""NUTS chains that never move are reported (issue 42): under columns in units from 1e-8 to 1e8 the
Laplace basis is centred, not scaled, warm-up adapts the step size down to ~1e-18, and the chain
stays at its start; the sampling estimators then issue a DegenerateFitWarning that says what to
change, where before they returned the starting point as a posterior in silence.

The stuck case is checked against what the draws themselves show (every draw of a weight equal to
the first), and a chain on the same data in standardized units, which moves, gives no warning."""
import warnings

import arviz as az
import numpy as np

from sparsebayes.inference import NutsClassifier
from sparsebayes.inference._warnings import DegenerateFitWarning
from sparsebayes.inference.estimators.sampling_fit import STUCK_ACCEPTANCE, stuck_chains


def _idata(posterior, acceptance):
    return az.from_dict(posterior=posterior, sample_stats={"acceptance_rate": acceptance,
                                                           "step_size": np.full_like(acceptance, 0.1)})


def test_stuck_chains_finds_a_frozen_component_and_a_chain_that_never_accepts():
    rng = np.random.default_rng(0)
    moving = rng.standard_normal((2, 50, 3))
    accept = np.full((2, 50), 0.8)
    assert stuck_chains(_idata({"beta": moving, "intercept": rng.standard_normal((2, 50))}, accept)) is None
    frozen = moving.copy()
    frozen[1, :, 2] = frozen[1, 0, 2]  # one weight of one chain never moves
    sites, low, _ = stuck_chains(_idata({"beta": frozen}, accept))
    assert sites == ["beta[2]"] and not low
    rare = accept.copy()
    rare[0] = 0.5 * STUCK_ACCEPTANCE  # moves a little, but accepts almost nothing
    sites, low, _ = stuck_chains(_idata({"beta": moving}, rare))
    assert sites == [] and low


def _units_case():
    """Probit labels on 3 columns and a copy of the first, in units 1e8, 1e-8, 1, 1e8 (seed 3: the
    one of seeds 0-3 whose chain sticks at 50 warm-up sweeps)."""
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((30, 3))
    Z = np.column_stack([Z, Z[:, 0]])
    y = (Z[:, 0] - Z[:, 1] + rng.logistic(size=30) > 0).astype(int)
    return Z, y, np.array([1e8, 1e-8, 1.0, 1e8])


def _fit(X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = NutsClassifier(num_warmup=50, num_samples=100, num_chains=1, rhat_max=np.inf).fit(X, y)
    return est, [w for w in caught if issubclass(w.category, DegenerateFitWarning)]


def test_a_nuts_chain_stuck_at_its_start_warns_and_says_what_to_change():
    Z, y, units = _units_case()
    est, warned = _fit(Z * units, y)
    beta = np.asarray(est.idata_.posterior["beta"])
    assert np.any(np.all(beta == beta[:, :1], axis=1)), "the case must stick to test the warning"
    assert len(warned) == 1, [str(w.message) for w in warned]
    message = str(warned[0].message)
    assert "never moved" in message and "scale X" in message and "num_warmup" in message
    est, warned = _fit(Z, y)  # the same data in standardized units: the chain moves, nothing to say
    beta = np.asarray(est.idata_.posterior["beta"])
    assert not np.any(np.all(beta == beta[:, :1], axis=1))
    assert warned == []
