"""The generic hierarchy Gibbs engine (:mod:`sparsebayes.inference.engines.hierarchy_gibbs`) and the type-II
twins that run through it: one-weight posteriors against quadrature on a grid (an oracle that
shares no code with the engine), the progress bar's chunked calls against one call, and its
argument checks."""
import sys

import jax
import numpy as np
import pytest
from sparsebayes.inference.engines import hierarchy_gibbs
from sparsebayes.inference.engines.progress import chunk_lengths, show_progress
from sparsebayes.inference.posterior.twin_typeii import run_typeii_gibbs
from sparsebayes.models import HorseshoePrior


def _one_weight_data(n=12, slope=0.6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x[:, None], slope * x + rng.normal(size=n)


def _batch_se(draws, batches=20):
    """Monte Carlo SE of the mean of ``draws`` (chain, draw) by batch means."""
    c, d = draws.shape
    means = draws[:, : d - d % batches].reshape(c * batches, -1).mean(axis=1)
    return means.std(ddof=1) / np.sqrt(means.size)


def _grid_moments(log_density, beta, log_s2):
    """Posterior means of β and log σ² on a (β, log σ²) grid from the unnormalized ``log_density``
    (log σ², not σ²: with few data σ²'s posterior has heavy tails, its mean a large Monte Carlo SE)."""
    B, S = np.meshgrid(beta, log_s2, indexing="ij")
    logp = log_density(B, np.exp(S)) + S  # + log σ²: the Jacobian of σ² = e^s
    w = np.exp(logp - logp.max())
    w /= w.sum()
    return float(np.sum(w * B)), float(np.sum(w * S))


def _check_means(draws, want, name):
    draws = {**draws, "log_noise_var": np.log(draws["noise_var"])}
    for key, value in want.items():
        got = draws[key].reshape(draws[key].shape[:2])  # (chain, draw): one weight
        z = abs(got.mean() - value) / _batch_se(got)
        assert z < 5, f"{name} {key}: Gibbs {got.mean():.5f}, quadrature {value:.5f}, {z:.1f} SE apart"


SAMPLING = dict(num_warmup=300, num_samples=4000, num_chains=4, seed=1, intercept=False)


def test_laplace_twin_with_fixed_noise_matches_quadrature():
    """FLAP's twin: ``β ~ Laplace(0, 1/√λ)``, σ² fixed; the posterior of one weight on a grid."""
    H, y = _one_weight_data()
    lam, s2 = 9.0, 1.3
    draws = run_typeii_gibbs(H, y, hierarchy="laplace", lam=lam, noise_var=s2, **SAMPLING)
    assert np.all(draws["noise_var"] == s2)
    b = np.linspace(-4, 4, 40001)
    logp = -np.sum((y[:, None] - H @ b[None, :]) ** 2, axis=0) / (2 * s2) - np.sqrt(lam) * np.abs(b)
    w = np.exp(logp - logp.max())
    mean = float(np.sum(w * b) / w.sum())
    _check_means(draws, {"beta": mean}, "laplace, σ² fixed")


def test_scaled_laplace_twin_matches_quadrature():
    """BLS's twin (``scaled``): ``β | σ² ~ Laplace(0, σ/√λ)``, ``p(σ²) ∝ (σ²)^{-(c+1)} e^{-d/σ²}``,
    ``c = 0.5, d = 0.4``: the joint posterior of one weight and σ² on a grid."""
    H, y = _one_weight_data(seed=3)
    lam, c, d = 6.0, 0.5, 0.4
    draws = run_typeii_gibbs(H, y, hierarchy="laplace", lam=lam, scaled=True, c=c, d=d, **SAMPLING)
    n = y.size

    def log_density(B, S2):
        rss = np.sum((y[None, None, :] - B[..., None] * H[:, 0]) ** 2, axis=-1)
        return (-(n / 2 + c + 1) * np.log(S2) - (rss / 2 + d) / S2
                - 0.5 * np.log(S2) - np.sqrt(lam) * np.abs(B) / np.sqrt(S2))

    beta_mean, log_s2_mean = _grid_moments(log_density, np.linspace(-3, 3, 1201), np.linspace(-5, 4, 1601))
    _check_means(draws, {"beta": beta_mean, "log_noise_var": log_s2_mean}, "scaled laplace")


def test_gamma_precision_twin_matches_quadrature():
    """The RVM surrogate: ``α ~ Gamma(ε, ε)`` (``ε = 1``: ``β`` is Student-t with 2 degrees of
    freedom), flat prior on σ² (``c = −1``); six data, so that the prior's tail shapes the posterior
    (with ``ε = 0.5`` the mean of β is 11 SE off)."""
    H, y = _one_weight_data(n=6, slope=2.5, seed=5)
    draws = run_typeii_gibbs(H, y, hierarchy="gamma-precision", surrogate_eps=1.0, **SAMPLING)
    n = y.size

    def log_density(B, S2):
        rss = np.sum((y[None, None, :] - B[..., None] * H[:, 0]) ** 2, axis=-1)
        return -(n / 2) * np.log(S2) - rss / (2 * S2) - 1.5 * np.log1p(B**2 / 2)

    beta_mean, log_s2_mean = _grid_moments(log_density, np.linspace(-4, 8, 1601), np.linspace(-6, 5, 1601))
    _check_means(draws, {"beta": beta_mean, "log_noise_var": log_s2_mean}, "gamma precision")
    np.testing.assert_allclose(draws["beta_raw"] * np.sqrt(1 / draws["precision_surrogate"]), draws["beta"],
                               rtol=1e-12)


@pytest.mark.slow  # suite time: about 10-20 s each on 2 cores
def test_the_progress_bar_cuts_the_sweeps_into_calls_with_the_same_draws(capsys):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    y = X[:, 0] + 0.5 * rng.normal(size=30)
    kw = dict(num_warmup=17, num_samples=26, num_chains=2, seed=4)
    prior = HorseshoePrior(1.0, tau_prior=1.0)
    one_call = hierarchy_gibbs.run(X, y, prior, progress_bar=False, **kw)
    assert "43/43" not in capsys.readouterr().err
    chunked = hierarchy_gibbs.run(X, y, prior, progress_bar=True, **kw)
    assert "43/43" in capsys.readouterr().err
    assert len(chunk_lengths(43, 3)) == 15  # the bar's calls: 3 sweeps each (about a twentieth), then 1
    leaves = [jax.tree_util.tree_leaves(run) for run in (one_call, chunked)]
    assert len(leaves[0]) == 9  # β, σ², λ², ν, τ², ξ; log_lik, log_min_variance, refused
    for a, b in zip(*leaves):
        np.testing.assert_array_equal(a, b)
    assert one_call[0].beta.shape == (2, 26, 4) and one_call[1].log_lik.shape == (2, 26)


@pytest.mark.parametrize("tty", [True, False])
def test_the_default_bar_follows_the_terminal(monkeypatch, tty):
    class Stream:
        def isatty(self):
            return tty

    monkeypatch.setattr(sys, "stderr", Stream())
    assert show_progress(None) is tty
    assert show_progress(False) is False and show_progress(True) is True


@pytest.mark.parametrize("kw, match", [
    (dict(noise_prior=hierarchy_gibbs.NoisePrior(-2.0, 0.0)), "c must be"),
    (dict(noise_prior=hierarchy_gibbs.NoisePrior(0.0, -1.0)), "d must be"),
    (dict(noise_var=0.0), "noise_var must be"),
    (dict(noise_var=float("nan")), "noise_var must be"),
])
def test_bad_noise_settings_are_value_errors(kw, match):
    X, y = _one_weight_data()
    with pytest.raises(ValueError, match=match):
        hierarchy_gibbs.run(X, y, HorseshoePrior(1.0), num_warmup=1, num_samples=2, num_chains=1, **kw)


def test_an_improper_noise_conditional_is_refused():
    X, y = _one_weight_data(n=3)  # 2 degrees of freedom after the intercept, flat prior: IG(0, ·)
    with pytest.raises(ValueError, match="improper"):
        hierarchy_gibbs.run(X, y, HorseshoePrior(1.0), num_warmup=1, num_samples=2, num_chains=1)


@pytest.mark.parametrize("name", [pytest.param("horseshoe", marks=pytest.mark.slow), "flap"])
def test_the_twins_gibbs_shows_its_bar_when_asked(name, capsys):
    """``sample_posterior(..., "gibbs", progress_bar=True)`` reaches the engine's bar, for the regressor
    with the horseshoe and for a type-II twin; without it there is none."""
    from sparsebayes.inference import AdaptiveSparseRegressor, FLAPRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    y = X[:, 0] + 0.3 * rng.normal(size=25)
    est = (AdaptiveSparseRegressor(prior="horseshoe") if name == "horseshoe" else FLAPRegressor()).fit(X, y)
    capsys.readouterr()
    est.sample_posterior(X, y, "gibbs", draws=20, warmup=10, chains=2, progress_bar=False)
    assert "30/30" not in capsys.readouterr().err
    est.sample_posterior(X, y, "gibbs", draws=20, warmup=10, chains=2, progress_bar=True)
    assert "30/30" in capsys.readouterr().err


def _wide_problem(n=8, p=14, seed=7):
    """A p > n design: three strong weights, the rest zero, unit noise; centred."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, :3] @ np.array([2.0, -1.5, 1.0]) + rng.normal(size=n)
    return X - X.mean(0), y - y.mean()


def _z_scores(a, b):
    """|difference of means| over the combined batch-means SE, per (chain, draw, …) array's last axes."""
    flat = [x.reshape(x.shape[0], x.shape[1], -1) for x in (a, b)]
    out = []
    for j in range(flat[0].shape[-1]):
        se = np.hypot(_batch_se(flat[0][..., j]), _batch_se(flat[1][..., j]))
        out.append(abs(flat[0][..., j].mean() - flat[1][..., j].mean()) / se)
    return np.array(out)


def test_the_wide_path_samples_the_posterior_of_the_rue_path():
    """p > n: the engine's Bhattacharya draw (the default there) and Rue's (forced) give the same
    posterior means of β and log σ² within 5 batch-means SE (an error in either β draw moves a mean
    by many SE at these draws: σ² drawn 1.3 times too large in the wide draw gives 10 SE in log σ²)."""
    X, y = _wide_problem()
    kw = dict(num_warmup=300, num_samples=2000, num_chains=2, fit_intercept=False)
    prior = HorseshoePrior(1.0)
    wide, _ = hierarchy_gibbs.run(X, y, prior, seed=1, **kw)
    rue, _ = hierarchy_gibbs.run(X, y, prior, seed=2, beta_draw="rue", **kw)
    for name in ("beta", "noise_var"):
        a, b = (np.log(getattr(s, name)) if name == "noise_var" else getattr(s, name) for s in (wide, rue))
        z = _z_scores(a, b)
        assert np.all(z < 5), f"{name}: Bhattacharya vs Rue, {np.round(z, 1)} SE apart"


def test_the_wide_path_forms_nothing_p_by_p():
    """p > n: the set-up keeps the data (n × p) and no statistics; p ≤ n: the statistics and no data."""
    X, y = _wide_problem(n=5, p=40)
    data = hierarchy_gibbs.gibbs_data(X, y, 5)
    assert data.stats is None and data.X.shape == (5, 40)
    assert all(np.size(leaf) <= 5 * 40 for leaf in jax.tree_util.tree_leaves(data))
    data = hierarchy_gibbs.gibbs_data(X.T[:, :5], X[0], 40)
    assert data.X is None and data.stats.gram.shape == (5, 5)
    with pytest.raises(ValueError, match="β draw must be one of"):
        hierarchy_gibbs.run(X, y, HorseshoePrior(1.0), num_warmup=1, num_samples=2, num_chains=1, beta_draw="lsqr")


def test_a_sweep_that_leaves_float64_is_refused_and_the_chain_stays():
    """:func:`~sparsebayes.inference.engines.hierarchy_gibbs.guarded`: a finite sweep passes through unchanged; a β or σ²
    that is NaN or infinite, or a NaN auxiliary variable, keeps the old state and says so; an infinite
    auxiliary variable (a conditional's limit) passes."""
    old = hierarchy_gibbs.State(np.ones(3), np.float64(0.5), {"tau": np.ones(3)})
    info = hierarchy_gibbs.Info(np.float64(-1.0), np.float64(0.0))
    good = hierarchy_gibbs.State(np.arange(3.0), np.float64(2.0), {"tau": np.array([1.0, np.inf, 2.0])})
    kept, out = hierarchy_gibbs.guarded(good, old, info)
    assert not bool(out.refused)
    for a, b in zip(jax.tree_util.tree_leaves(kept), jax.tree_util.tree_leaves(good)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for bad in (good._replace(beta=np.array([0.0, np.nan, 1.0])), good._replace(noise_var=np.float64(np.inf)),
                good._replace(aux={"tau": np.array([1.0, np.nan, 2.0])})):
        kept, out = hierarchy_gibbs.guarded(bad, old, info)
        assert bool(out.refused)
        for a, b in zip(jax.tree_util.tree_leaves(kept), jax.tree_util.tree_leaves(old)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_sweep_from_a_broken_state_is_refused_in_the_engine():
    """σ² = 0 with a zero prior variance: the plain algebra leaves float64 (the Rue factor fails), the
    engine's step keeps the state and reports the refusal."""
    from sparsebayes.models.priors import LaplacePrior

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = X[:, 0] + 0.1 * rng.normal(size=30)
    data = hierarchy_gibbs.gibbs_data(X - X.mean(0), y - y.mean(), 29)
    prior = LaplacePrior(1.0, gamma_prior=(0.1, 0.1))
    bad = hierarchy_gibbs.State(np.zeros(5), np.float64(0.0), {"tau": np.r_[0.0, np.ones(4)], "gamma": np.float64(1.0)})
    new, info = hierarchy_gibbs.step(bad, data, hierarchy_gibbs.GibbsModel(prior), key=jax.random.PRNGKey(0), scaled=True)
    assert bool(info.refused)
    for a, b in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(bad)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_runs_of_any_length_share_one_program_of_sweeps(programs_built):
    """Without a bar the sweeps run in calls of :func:`~sparsebayes.inference.engines.hierarchy_gibbs.call_length`
    (``CALL_SWEEPS``, the last call's keys padded): a run of another length compiles no new sweep
    program, and the same run cut by the bar into other calls gives the same draws."""
    X, y = _one_weight_data()
    prior = HorseshoePrior(1.0)
    assert hierarchy_gibbs.call_length(700, False) == hierarchy_gibbs.CALL_SWEEPS
    assert hierarchy_gibbs.call_length(40, False) == 64 and hierarchy_gibbs.call_length(1, False) == 1
    longer = hierarchy_gibbs.run(X, y, prior, num_warmup=0, num_samples=hierarchy_gibbs.CALL_SWEEPS + 300,
                                 num_chains=2, seed=3, progress_bar=False)
    with programs_built() as built:
        shorter = hierarchy_gibbs.run(X, y, prior, num_warmup=0, num_samples=hierarchy_gibbs.CALL_SWEEPS + 100,
                                      num_chains=2, seed=3, progress_bar=False)
    assert not [b for b in built if "run_sweeps" in b], built
    again = hierarchy_gibbs.run(X, y, prior, num_warmup=0, num_samples=hierarchy_gibbs.CALL_SWEEPS + 100,
                                num_chains=2, seed=3, progress_bar=True)
    for a, b in zip(jax.tree_util.tree_leaves(shorter), jax.tree_util.tree_leaves(again)):
        np.testing.assert_array_equal(a, b)
    assert longer[0].beta.shape[1] == hierarchy_gibbs.CALL_SWEEPS + 300
