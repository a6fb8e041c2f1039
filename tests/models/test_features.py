import numpy as np
import pytest

from sparsebayes.models import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures, gaussian_kernel


def test_quadratic_feature_count_and_values():
    X = np.arange(12, dtype=float).reshape(4, 3)
    F = QuadraticFeatures().fit_transform(X)
    d = 3
    assert F.shape == (4, 1 + d + d * (d + 1) // 2)
    # bias, linear terms, then x_i x_j for i <= j
    np.testing.assert_allclose(F[:, 0], 1.0)
    np.testing.assert_allclose(F[:, 1:4], X)
    expected = [X[:, i] * X[:, j] for i in range(d) for j in range(i, d)]
    np.testing.assert_allclose(F[:, 4:], np.array(expected).T)


def test_gaussian_kernel_matches_definition_and_helgoy_li_parametrization():
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    K = gaussian_kernel(X, C, 0.7)
    direct = np.exp(-((X[:, None, :] - C[None]) ** 2).sum(-1) / (2 * 0.7**2))
    np.testing.assert_allclose(K, direct, rtol=1e-12)
    r = 1.3
    F = GaussianKernelFeatures.from_helgoy_li(r, bias=False).fit(C).transform(X)
    np.testing.assert_allclose(F, np.exp(-(r**2) * ((X[:, None, :] - C[None]) ** 2).sum(-1)), rtol=1e-12)


def test_kernel_features_name_their_centres():
    X = np.random.default_rng(1).normal(size=(6, 2))
    fm = GaussianKernelFeatures(width=1.0).fit(X)
    assert fm.transform(X).shape == (6, 7)
    mask = np.zeros(7, bool)
    mask[[0, 2, 5]] = True  # bias, kernels of points 1 and 4
    np.testing.assert_array_equal(fm.centers_for(mask), [1, 4])


def test_bad_width_is_a_value_error():
    with pytest.raises(ValueError, match="width"):
        GaussianKernelFeatures(width=0.0).fit(np.ones((3, 2)))


def test_feature_names_follow_the_columns_the_maps_compute():
    """Names are checked against the columns: a quadratic name's factors multiply to its column."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(6, 3)), columns=["age", "bmi", "bp"])
    quad = QuadraticFeatures().fit(X)
    names, H = list(quad.get_feature_names_out()), quad.transform(X)
    assert names[:4] == ["bias", "age", "bmi", "bp"] and len(names) == H.shape[1] == 1 + 3 + 6
    for name, column in zip(names[4:], H[:, 4:].T):
        factors = name[:-2].split() * 2 if name.endswith("^2") else name.split()
        np.testing.assert_allclose(column, np.prod([X[f] for f in factors], axis=0))
    assert list(LinearFeatures(bias=False).fit(X.values).get_feature_names_out()) == ["x0", "x1", "x2"]
    kern = GaussianKernelFeatures().fit(X)
    assert list(kern.get_feature_names_out()) == ["bias"] + [f"kernel_{i}" for i in range(6)]
    with pytest.raises(ValueError, match="2 names"):
        LinearFeatures().fit(X).get_feature_names_out(["a", "b"])
