"""The helpers of ``arviz_compat`` that the notebooks call, under whichever ArviZ is installed:
``summary`` at any HDI probability and for each ``kind`` (the same columns under ArviZ 0.x and 1.x, 0.x's
names; the HDI checked against the narrowest interval of the sorted draws), and ``plot_forest`` of a
point estimate beside draws."""
import numpy as np
import pytest

from sparsebayes.inference.posterior import arviz_compat as compat


def _fit():
    rng = np.random.default_rng(7)
    return compat.from_dict({"posterior": {"beta": rng.standard_t(4, size=(2, 400, 3)),
                                           "s": rng.gamma(2.0, size=(2, 400))}},
                            coords={"basis": ["a", "b", "c"]}, dims={"beta": ["basis"]})


def _narrowest(x, prob):
    """The narrowest interval holding ``prob`` of the draws ``x`` (0.x's and 1.x's HDI of a sample)."""
    x = np.sort(x)
    k = int(np.floor(prob * x.size))
    lo = int(np.argmin(x[k:] - x[:x.size - k]))
    return x[lo], x[lo + k]


@pytest.mark.parametrize("prob, lo, hi", [(0.95, "hdi_2.5%", "hdi_97.5%"), (0.9, "hdi_5%", "hdi_95%"),
                                          (0.94, "hdi_3%", "hdi_97%")])
def test_arviz1_summary_names_and_computes_the_hdi_asked_for(prob, lo, hi):
    idata = _fit()
    table = compat.summary(idata, var_names=["beta"], hdi_prob=prob)
    assert list(table.columns) == ["mean", "sd", lo, hi, *compat.SUMMARY_COLUMNS[4:]]
    draws = idata.posterior["beta"].values.reshape(-1, 3)
    for j in range(3):
        a, b = _narrowest(draws[:, j], prob)
        step = np.diff(np.sort(draws[:, j])).max()  # the two versions may differ by one order statistic
        assert abs(table[lo].iloc[j] - a) <= step and abs(table[hi].iloc[j] - b) <= step


def test_arviz1_summary_kinds_take_their_columns():
    idata = _fit()
    stats = compat.summary(idata, var_names=["beta"], kind="stats", hdi_prob=0.95)
    assert list(stats.columns) == ["mean", "sd", "hdi_2.5%", "hdi_97.5%"]
    assert list(stats.index) == ["beta[a]", "beta[b]", "beta[c]"]
    np.testing.assert_allclose(stats["mean"], idata.posterior["beta"].values.reshape(-1, 3).mean(axis=0), rtol=1e-12)
    diag = compat.summary(idata, kind="diagnostics")
    assert list(diag.columns) == list(compat.SUMMARY_COLUMNS[4:]) and "s" in diag.index


@pytest.mark.parametrize("kwargs, word", [({"kind": "everything"}, "kind"), ({"hdi_prob": 1.0}, "hdi_prob"),
                                          ({"hdi_prob": "95%"}, "hdi_prob")])
def test_arviz1_summary_rejects_bad_arguments(kwargs, word):
    with pytest.raises(ValueError, match=word):
        compat.summary(_fit(), **kwargs)


def test_arviz1_forest_of_a_point_beside_draws_has_a_row_per_weight_and_no_warning():
    """A point estimate (one chain, one draw) beside draws of other lengths: one row per weight, and no
    warning of xarray's about joining the two (arviz-plots under ArviZ 1.x concatenates the fits)."""
    import warnings

    import matplotlib.pyplot as plt
    draws = _fit()
    point = compat.from_dict({"posterior": {"beta": np.zeros((1, 1, 3))}}, coords={"basis": ["a", "b", "c"]},
                             dims={"beta": ["basis"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        fig = compat.plot_forest({"point": point, "draws": draws}, var_names=["beta"], combined=True)
    labels = [t.get_text() for ax in fig.axes for t in (*ax.get_yticklabels(), *ax.texts)]
    plt.close(fig)
    for name in "abc":  # "beta[a]" (ArviZ 0.x) or "a" (1.x)
        assert sum(label == name or label.endswith(f"[{name}]") for label in labels) == 1, labels
