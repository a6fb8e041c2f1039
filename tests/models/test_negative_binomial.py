"""The negative binomial's start of its dispersion (``init_params``): the moments' estimate, capped at
``START_MAX`` where the counts are not over-dispersed (a start at the Poisson limit stalled the Gibbs
engine, whose Pólya-Gamma draw sums ``y + r`` variates a row), with EM's fit unchanged by the cap: its
dispersion update searches the whole range from the first iteration (checked against EM started at the
old start, 10⁸, the Poisson limit)."""
import numpy as np
import pytest

from sparsebayes.inference.engines import hierarchy_gibbs_augmented
from sparsebayes.inference.engines.em_slices import fit_em
from sparsebayes.inference.engines.gibbs_augment import MAX_CONCENTRATION
from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture
from sparsebayes.models import LaplacePrior
from sparsebayes.models.likelihoods import NegativeBinomialLikelihood
from sparsebayes.models.likelihoods.negative_binomial import START_MAX


class PoissonLimitStart(NegativeBinomialLikelihood):
    """EM's start of r at the Poisson limit 10⁸ where the counts are not over-dispersed."""

    def init_params(self, t):
        t = np.asarray(t, dtype=np.float64)
        m, v = float(np.mean(t)), float(np.var(t))
        return float(np.clip(m * m / (v - m), 1e-3, 1e8)) if v > m > 0 else 1e8


def _counts(kind, seed, n=200):
    """Under-dispersed counts (binomial: var < mean, the moments have no r) or over-dispersed ones (NB, r = 2),
    on three columns, the last without effect."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    eta = X @ np.array([0.5, -0.3, 0.0])
    if kind == "binomial":
        return X, rng.binomial(6, 1.0 / (1.0 + np.exp(-eta))).astype(float)
    mu = np.exp(0.5 + eta)
    return X, rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)


def test_the_start_is_the_moments_estimate_capped():
    lik = NegativeBinomialLikelihood()
    y = np.array([2.0, 3.0, 2.0, 3.0, 2.0, 3.0])  # var < mean: no over-dispersion
    assert lik.init_params(y) == START_MAX <= 100.0
    assert lik.init_params(np.zeros(5)) == START_MAX
    _, y = _counts("nb", 0)
    m, v = y.mean(), y.var()
    assert lik.init_params(y) == pytest.approx(m * m / (v - m), rel=1e-12) and lik.init_params(y) < START_MAX
    y = np.random.default_rng(0).poisson(5.0, 20000).astype(float)  # barely over-dispersed: m²/(v − m) about 630
    assert np.var(y) > np.mean(y) and lik.init_params(y) == START_MAX


@pytest.mark.parametrize("kind,seed", [("binomial", 0), ("binomial", 1), ("binomial", 2), ("nb", 0)])
def test_em_reaches_the_fit_of_the_poisson_limit_start(kind, seed):
    """EM (Laplace prior) from the capped start and from 10⁸: the same weights (to 10⁻⁷) and the same
    objective to its own rounding (at r ≳ 10⁷, ``gammaln(y + r) − gammaln(r)`` rounds by ``ε r log r`` a
    row: some 10⁻⁵ over 200 rows, where the likelihood is flat in r to that level anyway)."""
    X, y = _counts(kind, seed)
    H = np.c_[np.ones(y.size), X]
    new = fit_em(H, y, LaplacePrior(1.0), NegativeBinomialLikelihood(), tol=1e-8)
    old = fit_em(H, y, LaplacePrior(1.0), PoissonLimitStart(), tol=1e-8)
    np.testing.assert_allclose(new.beta, old.beta, atol=1e-7)
    assert new.objective >= old.objective - 1e-4, (new.objective, old.objective)
    assert (new.noise_var > 1e6) == (old.noise_var > 1e6) == (kind == "binomial")


@pytest.mark.slow  # the sweep's compilation: about 15 s on one core
def test_the_gibbs_engine_starts_under_the_cap_and_keeps_r_bounded():
    """Under-dispersed counts with the start left to the likelihood: the chains start at r ≤ START_MAX (not
    the Poisson limit, where each sweep would sum 10⁸ Pólya-Gamma variates a row) and every draw of r stays
    finite and below the move's bound."""
    X, y = _counts("binomial", 0, n=40)
    states, _ = hierarchy_gibbs_augmented.run_augmented(X, y, LaplaceMixture(1.0), NegativeBinomialLikelihood(), num_warmup=20,
                                              num_samples=30, num_chains=2, progress_bar=False)
    r = np.asarray(states.param)
    assert np.all(np.isfinite(r)) and np.all((r > 0) & (r <= MAX_CONCENTRATION))
    assert np.all(np.isfinite(np.asarray(states.beta)))
