"""Statistics that ArviZ 0.x and 1.x compute with other defaults or names, brought to one meaning by
:mod:`sparsebayes.inference.posterior.arviz_compat`, checked under whichever ArviZ is installed against direct
computations: PSIS's smoothed weights and ``k̂`` (``psislw``: 1.x takes a log-likelihood and leaves the
weights unnormalized), the tail ESS at the 5 % and 95 % quantiles (1.x's default is 11 % / 89 %),
``loo`` under 0.x's names, and a plot's figure taken out of pyplot (``figure(detach=True)``)."""
import numpy as np
import pytest
import scipy.special
import scipy.stats

from sparsebayes.inference.posterior import arviz_compat as compat


def _gpd_log_ratios(k, size, seed):
    """Log importance ratios whose ratios are generalized Pareto with shape ``k`` (scale 1)."""
    return np.log(scipy.stats.genpareto.rvs(k, size=size, random_state=np.random.default_rng(seed)))


def test_psislw_normalizes_and_leaves_the_body_of_the_weights_alone():
    """Below the tail cut-off PSIS keeps the raw ratios: there ``log w − log r`` is one constant, the
    normalizer ``−logsumexp(lw_raw)`` up to the tail's change, and the weights sum to one."""
    ratios = np.random.default_rng(0).normal(scale=0.5, size=(3, 2000))
    lw, k = compat.psislw(ratios)
    assert lw.shape == ratios.shape and k.shape == (3,)
    np.testing.assert_allclose(scipy.special.logsumexp(lw, axis=-1), 0.0, atol=1e-12)
    for row in range(3):
        body = ratios[row] < np.quantile(ratios[row], 0.8)  # the tail PSIS smooths is the top 3√S ≈ 134 draws
        shift = lw[row, body] - ratios[row, body]
        np.testing.assert_allclose(shift, shift[0], atol=1e-10)
    one_lw, one_k = compat.psislw(ratios[0])
    np.testing.assert_allclose(one_lw, lw[0], atol=1e-12)
    assert one_k.shape == () and float(one_k) == pytest.approx(k[0], abs=1e-12)


@pytest.mark.parametrize("shape", [0.2, 1.2])
def test_psislw_khat_estimates_a_known_pareto_shape(shape):
    """Ratios drawn from a generalized Pareto of shape ``k``: ``k̂`` is within 0.2 of it (Vehtari et al.
    2024: the tail of 3√S of 8,000 draws estimates ``k`` to about ±0.1), each side of the 0.7 gate."""
    lw, k = compat.psislw(_gpd_log_ratios(shape, 8000, seed=1))
    assert abs(float(k) - shape) < 0.2 and (float(k) < 0.7) == (shape < 0.7)
    assert np.all(np.isfinite(lw))


def test_psislw_khat_is_never_nan():
    """Ratios too heavy for the Pareto fit (log of |Cauchy|^20): ``k̂`` is a number or ``inf``, never NaN."""
    cauchy = np.abs(scipy.stats.cauchy.rvs(size=(2, 1000), random_state=np.random.default_rng(2)))
    _, k = compat.psislw(20 * np.log(cauchy))
    assert not np.any(np.isnan(k)) and np.all(k > 0.7)


def _indicator_ess(x, q):
    """Split-chain ESS (Vehtari et al. 2021, eqs. 10-11, Geyer's initial monotone sequence) of the
    indicator ``x ≤ quantile_q(x)`` over ``x`` (chains, draws), computed here from its autocovariances."""
    ind = (x <= np.quantile(x, q)).astype(np.float64)
    half = ind.shape[1] // 2
    c = np.concatenate([ind[:, :half], ind[:, -half:]])  # split chains (the middle draw of an odd count dropped)
    m, n = c.shape
    dev = c - c.mean(axis=1, keepdims=True)
    acov = np.array([np.mean(dev[:, :n - t] * dev[:, t:], axis=1) for t in range(n)]).T  # (m, n), biased
    w = acov[:, 0].mean() * n / (n - 1)
    var_plus = w * (n - 1) / n + c.mean(axis=1).var(ddof=1)
    rho = 1 - (w - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    pairs = rho[:-1:2] + rho[1::2]  # Geyer: sum pairs while positive, made monotone
    pairs = pairs[:np.argmax(pairs <= 0)] if np.any(pairs <= 0) else pairs
    pairs = np.minimum.accumulate(pairs)
    tau = -1 + 2 * pairs.sum()
    return m * n / tau


def test_tail_ess_is_at_the_5_and_95_percent_quantiles():
    """Chains whose draws move slowly (AR(1), φ = 0.9): the tail ESS is the smaller ESS of the 5 % and
    95 % quantile indicators, computed here directly; at 11 % / 89 % (ArviZ 1.x's own default) it is
    another number."""
    rng = np.random.default_rng(5)
    chains, draws = 4, 600
    x = np.empty((chains, draws))
    x[:, 0] = rng.normal(size=chains)
    for t in range(1, draws):
        x[:, t] = 0.9 * x[:, t - 1] + np.sqrt(1 - 0.81) * rng.normal(size=chains)
    idata = compat.from_dict({"posterior": {"theta": x}})
    got = float(compat.ess(idata, method="tail")["theta"])
    want = min(_indicator_ess(x, 0.05), _indicator_ess(x, 0.95))
    assert got == pytest.approx(want, rel=0.02)
    other = min(_indicator_ess(x, 0.11), _indicator_ess(x, 0.89))
    assert abs(other - want) > 0.1 * want  # the check tells the two conventions apart


def test_loo_has_0x_names_and_its_elpd_is_the_psis_estimate():
    """``loo``'s ``elpd_loo`` is Σ_i log Σ_s w_is p(y_i | θ_s) with the PSIS weights of ``−log p(y_i | θ_s)``
    (Vehtari, Gelman & Gabry 2017, eq. 10), here from ``psislw``; ``elpd_loo`` agrees."""
    rng = np.random.default_rng(6)
    ll = rng.normal(-1.0, 0.3, size=(2, 500, 9))
    idata = compat.from_dict({"posterior": {"mu": rng.normal(size=(2, 500))}, "log_likelihood": {"y": ll},
                              "observed_data": {"y": np.zeros(9)}}, dims={"y": ["obs"]})
    res = compat.loo(idata)
    assert set(res) == {"elpd_loo", "se", "p_loo", "pareto_k"} and res["pareto_k"].shape == (9,)
    flat = ll.reshape(-1, 9).T  # (obs, draws)
    lw, k = compat.psislw(-flat)
    pointwise = scipy.special.logsumexp(lw + flat, axis=1)
    assert res["elpd_loo"] == pytest.approx(pointwise.sum(), abs=0.05)
    # ArviZ smooths with the chains' relative ESS (a longer tail than r_eff = 1 here): the pointwise
    # terms move by ~1e-3 of their spread of ~1e-2, so their sd agrees to 10 %
    assert res["se"] == pytest.approx(np.sqrt(9 * pointwise.var()), rel=0.1)
    lppd = np.sum(scipy.special.logsumexp(flat, axis=1) - np.log(flat.shape[1]))
    assert res["p_loo"] == pytest.approx(lppd - res["elpd_loo"], abs=1e-9)
    assert compat.elpd_loo(idata) == pytest.approx(res["elpd_loo"], rel=1e-12)


def test_figure_detach_takes_it_out_of_pyplot_only():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    before = plt.get_fignums()
    fig = plt.figure()
    ax = fig.add_subplot()
    ax.plot([0, 1])
    assert compat.figure(ax, detach=True) is fig and plt.get_fignums() == before
    fig.savefig(__import__("io").BytesIO(), format="png")  # still draws
    own = Figure()
    assert compat.figure(own.add_subplot(), detach=True) is own and plt.get_fignums() == before
    kept = plt.figure()
    assert compat.figure(kept.add_subplot()) is kept and kept.number in plt.get_fignums()  # default: left open
    plt.close(kept)
