"""The sampler-health gate (:mod:`sparsebayes.comparisons.sampler_health`): one rule, one set of
thresholds, used by ``Comparison.diagnostics``, ``Comparison.usable`` and the verdict.

Synthetic ``InferenceData``: independent normal draws (4 chains × 500, so every ESS is near 2,000
and R-hat near 1) pass; each failure is made by hand (a divergence, one chain shifted, draws
repeated, tails that come in runs, an energy that moves as a random walk), so
each check is seen to fail alone. The Comparison tests reuse the verdict tests' exact Gaussian
posterior, so nothing compiles a sampler."""
import numpy as np
import pytest

from sparsebayes.comparisons import sampler_health as H
from sparsebayes.comparisons import verdict as V
from sparsebayes.inference.posterior import arviz_compat as compat

CHAINS, DRAWS, P = 4, 500, 3


def _idata(beta, *, diverging=None, energy=None):
    stats = {"diverging": np.zeros(beta.shape[:2], dtype=bool) if diverging is None else diverging}
    if energy is not None:
        stats["energy"] = energy
    return compat.from_dict({"posterior": {"beta": beta}, "sample_stats": stats}, dims={"beta": ["basis"]})


def _draws(seed=0):
    return np.random.default_rng(seed).normal(size=(CHAINS, DRAWS, P))


def _iid_energy(seed=1):
    return np.random.default_rng(seed).normal(size=(CHAINS, DRAWS))


def _sticky_tails(seed=3, stay=0.9):
    """N(0, 1) draws whose bulk is independent but whose tails come in runs: whether a draw lies in the
    outer 10 % (``|x| > z_0.95``) is a Markov chain that stays with probability ``stay`` (stationary
    at 10 %); magnitudes inside each region and signs are independent. The rank-normalized bulk ESS
    stays near the draw count; the tail ESS (of the 5 % and 95 % quantile indicators) does not."""
    import scipy.stats
    rng = np.random.default_rng(seed)
    leave = (1 - stay) * 0.1 / 0.9
    inside = np.empty((CHAINS, DRAWS, P), dtype=bool)
    e = rng.random((CHAINS, P)) < 0.1
    for t in range(DRAWS):
        e = np.where(e, rng.random((CHAINS, P)) < stay, rng.random((CHAINS, P)) < leave)
        inside[:, t] = e
    u = rng.random((CHAINS, DRAWS, P))
    mag = scipy.stats.norm.ppf(0.5 + 0.5 * np.where(inside, 0.9 + 0.1 * u, 0.9 * u))
    return mag * rng.choice([-1.0, 1.0], size=(CHAINS, DRAWS, P))


def _failure(kind):
    """``(beta, diverging, energy)`` failing exactly the check ``kind``."""
    beta, div, energy = _draws(), None, _iid_energy()
    if kind == "divergence":
        div = np.zeros((CHAINS, DRAWS), dtype=bool)
        div[1, 17] = True
    elif kind == "r_hat":
        beta[0] += 0.3  # one chain off the others by 0.3 sd: R-hat ≈ 1.02, ESS still high
    elif kind == "ess_bulk":
        beta = np.repeat(beta[:, :50], 10, axis=1)  # 50 distinct draws per chain
    elif kind == "ess_tail":
        beta = _sticky_tails()
    elif kind == "bfmi":
        energy = np.cumsum(_iid_energy(), axis=1)  # a random walk: E[(ΔE)²] / Var(E) far below 0.3
    return beta, div, energy


def test_independent_draws_pass_every_check():
    stats = H.health(_idata(_draws(), energy=_iid_energy()))
    assert stats["r_hat_max"] < 1.01 and stats["ess_bulk_min"] > 1000 and stats["ess_tail_min"] > 1000
    assert stats["divergences"] == 0 and stats["bfmi_min"] > 0.3
    assert H.failed_checks(stats) == [] and H.usable(_idata(_draws(), energy=_iid_energy()))


@pytest.mark.parametrize("kind, words", [("divergence", "divergent"), ("r_hat", "R-hat"), ("ess_bulk", "bulk ESS"),
                                         ("ess_tail", "tail ESS"), ("bfmi", "E-BFMI")])
def test_each_failure_fails_the_gate(kind, words):
    beta, div, energy = _failure(kind)
    stats = H.health(_idata(beta, diverging=div, energy=energy))
    failed = H.failed_checks(stats)
    assert failed and any(words in line for line in failed), (kind, stats, failed)
    assert not H.usable(_idata(beta, diverging=div, energy=energy))
    # each threshold is the one that fails: the statistic is on the wrong side of it
    value = {"divergence": stats["divergences"] > H.DIVERGENCES_MAX, "r_hat": stats["r_hat_max"] > H.RHAT_MAX,
             "ess_bulk": stats["ess_bulk_min"] < H.ESS_MIN, "ess_tail": stats["ess_tail_min"] < H.ESS_MIN,
             "bfmi": stats["bfmi_min"] < H.BFMI_MIN}[kind]
    assert value
    if kind == "ess_tail":  # the tails fail while the bulk mixes
        assert stats["ess_bulk_min"] >= H.ESS_MIN, stats


def test_missing_statistics_pass():
    """One chain has no R-hat and a Gibbs run no energy: NaN is no evidence of a failure."""
    beta = np.random.default_rng(0).normal(size=(1, 2000, P))
    stats = H.health(compat.from_dict({"posterior": {"beta": beta}}))
    assert np.isnan(stats["r_hat_max"]) and np.isnan(stats["bfmi_min"]) and stats["divergences"] == 0
    assert H.failed_checks(stats) == []


def test_one_set_of_thresholds():
    """compare_any's names are the gate's own objects, and verdict keeps no copy of its own."""
    from sparsebayes.comparisons import compare_any
    assert (compare_any.RHAT_MAX, compare_any.ESS_MIN, compare_any.BFMI_MIN) == (H.RHAT_MAX, H.ESS_MIN, H.BFMI_MIN)
    for name in ("RHAT_MAX", "ESS_MIN", "ESS_BULK_MIN", "BFMI_MIN"):
        assert not hasattr(V, name) or getattr(V, name) is getattr(H, name)


def _comparison(draws, *, diverging=None, energy=None):
    """A :class:`Comparison` (one sampler, ``exact``) of a Laplace fit with a vague γ on a small
    regression, whose posterior ``draws`` (chain, draw, basis) are given."""
    import pandas as pd

    from sparsebayes.comparisons.compare_any import POINT_GROUP, Comparison
    from sparsebayes.inference import AdaptiveSparseRegressor
    from sparsebayes.inference.posterior.twin_posterior import point_estimate_dataset
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 2)), columns=["a", "b"])
    y = 1.5 * X["a"] + rng.normal(size=120)
    est = AdaptiveSparseRegressor(prior="laplace", gamma=1e-8).fit(X, y)
    names = list(est.feature_map_.get_feature_names_out(["a", "b"]))
    stats = {"diverging": np.zeros(draws.shape[:2], dtype=bool) if diverging is None else diverging}
    if energy is not None:
        stats["energy"] = energy
    idata = compat.from_dict({"posterior": {"beta": draws}, "sample_stats": stats, "observed_data": {"y": y.to_numpy()}},
                             coords={"basis": names}, dims={"beta": ["basis"], "y": ["obs"]})
    compat.set_group(idata, POINT_GROUP, point_estimate_dataset(est, names))
    H_ = np.asarray(est.feature_map_.transform(X.to_numpy()), dtype=np.float64)
    return Comparison(estimator=est, idata=idata, samples={"exact": idata}, names=names, design=H_,
                      prior_beta=np.zeros((10, len(names))), az=None), H_, y.to_numpy()


def _exact_draws(H_, y, seed):
    """Exact draws (chain, draw, p) of the flat-prior Gaussian posterior at σ² = 1 (Cholesky of HᵀH)."""
    L = np.linalg.cholesky(H_.T @ H_)
    mean = np.linalg.solve(H_.T @ H_, H_.T @ y)
    z = np.random.default_rng(seed).normal(size=(CHAINS * DRAWS, H_.shape[1]))
    return (mean + np.linalg.solve(L.T, z.T).T).reshape(CHAINS, DRAWS, -1)


@pytest.mark.parametrize("kind", ["bfmi", "ess_tail", "divergence", "r_hat"])
def test_a_failed_part_is_unusable_in_the_comparison_and_its_verdict(kind):
    """``Comparison.usable``, ``diagnostics()["usable"]`` and the verdict read the same gate; the
    energy and tail checks are ones the verdict's own rule once left out."""
    _, H_, y = _comparison(np.zeros((CHAINS, DRAWS, 3)))
    draws = _exact_draws(H_, y, seed=1)
    energy = _iid_energy(seed=2)
    base, _, _ = _comparison(draws, energy=energy)
    assert base.usable == {"exact": True} and base.diagnostics()["exact"]["usable"]
    assert base.verdict().exact_usable.all() and not base.diagnostics()["exact"]["warnings"]
    bad, div, sd = draws.copy(), None, draws.std(axis=(0, 1))
    if kind == "bfmi":
        energy = np.cumsum(energy, axis=1)
    elif kind == "divergence":
        div = np.zeros((CHAINS, DRAWS), dtype=bool)
        div[0, 3] = True
    elif kind == "r_hat":
        bad[0] += 0.3 * sd
    else:
        bad = draws.mean(axis=(0, 1)) + sd * _sticky_tails()
    cmp, _, _ = _comparison(bad, diverging=div, energy=energy)
    assert cmp.usable == {"exact": False} and not cmp.diagnostics()["exact"]["usable"]
    assert cmp.diagnostics()["exact"]["warnings"]
    v = cmp.verdict()
    assert not v.exact_usable.any() and (v.exact_agreement == "unusable").all()
    assert v.attrs["unusable"]["exact"] == H.failed_checks(cmp.diagnostics()["exact"])
