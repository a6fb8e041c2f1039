"""``kernel_width="scale"`` (scikit-learn's ``gamma="scale"``), centred polynomial maps, and kernel
distances far from the origin."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier
from sparsebayes.inference.estimators._base import fit_design_or_factor, make_feature_map
from sparsebayes.models import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures, gaussian_kernel


def _data(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * [1.0, 3.0, 0.2] + [1.0, -2.0, 5.0]


def test_scale_width_is_sklearns_gamma_scale_on_centred_columns():
    """exp(−γ‖x − x'‖²) with γ = 1/(d · X.var()) is exp(−‖x − x'‖²/(2h²)) at h = √(d · X.var()/2)
    when the columns are centred (there d · X.var() = Σ_j var(x_j), our definition)."""
    X, Xt = _data(0), _data(1, n=15)
    Xt = Xt - X.mean(axis=0)
    X = X - X.mean(axis=0)
    fm = GaussianKernelFeatures(width="scale", bias=False).fit(X)
    gamma = 1.0 / (X.shape[1] * X.var())
    np.testing.assert_allclose(fm.transform(X), rbf_kernel(X, gamma=gamma), rtol=1e-12)
    np.testing.assert_allclose(fm.transform(Xt), rbf_kernel(Xt, X, gamma=gamma), rtol=1e-12)
    svc = SVC(gamma="scale").fit(X, (X[:, 0] > 1).astype(int))  # sklearn's own resolution of "scale"
    np.testing.assert_allclose(1.0 / (2.0 * fm.width_**2), svc._gamma, rtol=1e-12)
    const = GaussianKernelFeatures(width="scale").fit(np.ones((4, 2)))
    assert const.width_ == pytest.approx(np.sqrt(0.5))  # sklearn's γ = 1 for X.var() = 0


def test_scale_width_ignores_per_column_offsets_and_constant_columns():
    """Distances between points do not see per-column offsets or a constant column; neither does the
    width (scikit-learn's global ``X.var()`` does: its γ moves by a factor of 16 here)."""
    X = _data(0)
    base = GaussianKernelFeatures(width="scale").fit(X)
    shifted = GaussianKernelFeatures(width="scale").fit(X + [100.0, -3.0, 7.0])
    padded = GaussianKernelFeatures(width="scale").fit(np.column_stack([X, np.full(len(X), 3.0)]))
    assert shifted.width_ == pytest.approx(base.width_, rel=1e-12)
    assert padded.width_ == pytest.approx(base.width_, rel=1e-12)
    assert (X + [100.0, -3.0, 7.0]).var() * 3 > 16 * base.width_**2 * 2


def test_numeric_widths_are_unchanged_and_other_strings_rejected():
    X, Xt = _data(0), _data(1, n=15)
    fm = GaussianKernelFeatures(width=0.7).fit(X)
    assert fm.width_ == 0.7
    np.testing.assert_array_equal(fm.transform(Xt)[:, 1:], gaussian_kernel(Xt, X, 0.7))
    for bad in ("auto", "Scale", ""):
        with pytest.raises(ValueError, match="kernel width must be a finite number > 0 or 'scale'"):
            GaussianKernelFeatures(width=bad).fit(X)
        with pytest.raises(ValueError, match="kernel width must be a finite number > 0 or 'scale'"):
            AdaptiveSparseRegressor(features="kernel", kernel_width=bad).fit(X, X[:, 0])


def test_estimators_default_to_the_scale_width_on_both_design_paths():
    """The default ``kernel_width`` is ``"scale"``, resolved at fit; the low-rank factor (n > 300,
    where the kernel rows are computed apart from the feature map) uses the resolved width too."""
    assert AdaptiveSparseRegressor().kernel_width == SparseProbitClassifier().kernel_width == "scale"
    rng = np.random.default_rng(0)
    X = rng.uniform(-10, 10, size=(400, 1))
    y = np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=400)
    fm, H, factor = fit_design_or_factor(X, "kernel", kernel_width="scale")
    assert H is None and factor is not None
    K = make_feature_map("kernel", kernel_width="scale").fit(X).transform(X)
    assert fm.width_ == pytest.approx(np.sqrt(X[:, 0].var() / 2))
    np.testing.assert_allclose(factor.basis @ factor.design, K, atol=400 * 1e-13)
    dense = AdaptiveSparseRegressor(features="kernel", prior="laplace", low_rank=False).fit(X, y)
    low = AdaptiveSparseRegressor(features="kernel", prior="laplace").fit(X, y)
    assert low.design_rank_ is not None and dense.feature_map_.width_ == low.feature_map_.width_
    np.testing.assert_allclose(low.predict(X), dense.predict(X), atol=1e-6)


def test_kernel_distances_far_from_the_origin_keep_their_digits():
    """At an offset of 1e8 the expansion ‖x‖² + ‖c‖² − 2xᵀc rounds every distance away; measured
    from the training mean, the kernel matches the one at the origin to the rounding of X + 1e8."""
    X, Xt = _data(0), _data(1, n=15)
    ref = GaussianKernelFeatures(width=1.0).fit(X).transform(Xt)
    far = GaussianKernelFeatures(width=1.0).fit(X + 1e8)
    np.testing.assert_allclose(far.transform(Xt + 1e8), ref, rtol=0, atol=1e-6)
    assert np.any(far.offset_ != 0)
    assert not GaussianKernelFeatures(width=1.0).fit(X).offset_.any()  # near the origin: as computed before


@pytest.mark.parametrize("Map", [LinearFeatures, QuadraticFeatures])
@pytest.mark.parametrize("center,scale", [(True, False), (True, True), (False, True)])
def test_standardized_maps_re_express_their_weights_in_the_raw_terms(Map, center, scale):
    """``h(x)ᵀβ = h_raw(x)ᵀ raw_weights(β)`` for the standardized map, on any β; ``center`` needs a bias."""
    X, Xt = _data(0), _data(1, n=15)
    fm = Map(center=center, scale=scale).fit(X)
    raw = Map().fit(X)
    np.testing.assert_allclose(fm.mean_, X.mean(0) if center else 0.0)
    np.testing.assert_allclose(fm.scale_, X.std(0) if scale else 1.0)
    beta = np.random.default_rng(2).normal(size=(5, fm.n_output_features_))
    np.testing.assert_allclose(raw.transform(Xt) @ fm.raw_weights(beta).T, fm.transform(Xt) @ beta.T, rtol=1e-10)
    np.testing.assert_array_equal(raw.raw_weights(beta), beta)
    with pytest.raises(ValueError, match="center=True needs bias=True"):
        Map(center=True, bias=False).fit(X)
