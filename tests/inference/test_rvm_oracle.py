"""RVM against an independent implementation on the same sinc basis.

Oracle: the ``fastrvm`` package (Tipping's SparseBayes in C++, the ``bench`` extra) when
installed, otherwise scikit-learn's ``ARDRegression``. Both sequential algorithms climb the same
multimodal evidence and can stop at different local maxima, so the comparison is over eight data
sets (four seeds × σ ∈ {0.1, 0.3}). Tolerances, with fastrvm: our log evidence (computed directly
from the fitted α, σ²) no worse than fastrvm's own on average (mean gap ≥ −0.05 nats), within
0.5 nats on each data set, and the number of relevance vectors within ±2. Measured: gaps 0 on
four sets (the same support), +0.27 and +0.005 on two, −0.22 and −0.17 on two (other supports, mean −0.014).
With ARD (which keeps many more weights): our evidence at least ARD's minus 0.01 on each of the four
σ = 0.1 sets.
"""
import numpy as np
import pytest

from sparsebayes.comparisons.synthetic import sinc
from sparsebayes.inference.estimators.typeii_estimators import RVMRegressor
from sparsebayes.models.features import GaussianKernelFeatures

CASES = [(seed, sigma) for seed in (7, 1, 2, 3) for sigma in (0.1, 0.3)]


def _log_evidence(Phi, y, var, noise_var):
    C = noise_var * np.eye(len(y)) + (Phi * var) @ Phi.T
    sign, logdet = np.linalg.slogdet(C)
    return -0.5 * (logdet + y @ np.linalg.solve(C, y) + len(y) * np.log(2 * np.pi))


def _ours(seed, sigma):
    X, y = sinc(100, sigma=sigma, seed=seed)
    feats = GaussianKernelFeatures(width=2.0).fit(X)
    Phi = feats.transform(X)
    ours = RVMRegressor(features=feats, fit_intercept=False).fit(X, y)
    var = np.zeros(Phi.shape[1])
    # Σ⁻¹ = ΦᵀΦ/σ² + diag(1/v) on the active set: its diagonal gives 1/v
    var[ours.active_] = 1.0 / np.maximum(np.diag(np.linalg.inv(ours.sigma_))
                                         - (Phi[:, ours.active_] ** 2).sum(0) / ours.noise_var_, 1e-300)
    ev_ours = _log_evidence(Phi, y, var, ours.noise_var_)
    assert ev_ours == pytest.approx(ours.objective_, abs=1e-6)
    return Phi, y, ours, ev_ours


def test_rvm_matches_independent_implementation():
    try:
        from fastrvm import _sparsebayes_bindings as sb
    except ImportError:
        sb = None
    gaps = []
    for seed, sigma in (CASES if sb is not None else CASES[::2]):  # ARD (slow, no multimodality to average): σ = 0.1
        Phi, y, ours, ev_ours = _ours(seed, sigma)
        if sb is None:
            from sklearn.linear_model import ARDRegression

            ard = ARDRegression(fit_intercept=False, max_iter=500).fit(Phi, y)
            keep = ard.lambda_ < ard.threshold_lambda
            assert ev_ours >= _log_evidence(Phi, y, np.where(keep, 1.0 / ard.lambda_, 0.0), 1.0 / ard.alpha_) - 0.01
            continue
        res = sb.SparseBayes(sb.Likelihood.Gaussian, 10000, False, False, False, True, False, None).inference(Phi, y)
        # fastrvm's own final log evidence, less the constant N/2 log 2π that its trace leaves out
        ev_fast = float(np.asarray(res["log_marginal_likelihood_trace"]).ravel()[-1]) - 0.5 * len(y) * np.log(2 * np.pi)
        gaps.append(ev_ours - ev_fast)
        assert abs(ours.n_active_ - np.asarray(res["relevant_idx"]).size) <= 2, (seed, sigma)
    if gaps:
        assert min(gaps) > -0.5 and np.mean(gaps) >= -0.05, gaps
