"""The measured coverage of the approximate posteriors (:mod:`sparsebayes.inference.posterior.approximation_coverage`):
the documented table is the constant, the constant is what the measurement gives (slow), and the
labels the estimators put on their approximations' draws find their rows."""
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sparsebayes.inference.posterior import approximation_coverage as ac

PAGE = Path(__file__).resolve().parents[2] / "docs" / "approximation_coverage.md"


def test_the_page_shows_the_measured_constant_and_the_exact_reference_is_nominal():
    """Every case has its row on the page with :data:`MEASURED`'s numbers; the exact Gibbs reference
    covers at its levels (within 3 binomial SE of 2,000 pairs), the approximations below it."""
    assert set(ac.MEASURED) == set(ac.cases())
    rows = {m.group(1): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^\| `([\w-]+)` \|[^|]*\| ([\d.]+) ± [\d.]+ \| ([\d.]+) ± [\d.]+ \|", PAGE.read_text(),
                                 re.MULTILINE)}
    assert rows == ac.MEASURED
    pairs = ac.N_WEIGHTS * 200
    se = np.sqrt(np.array([0.25, 0.09]) / pairs)
    reference = np.array(ac.MEASURED["gibbs-horseshoe"])
    assert np.all(np.abs(reference - [0.5, 0.9]) < 3 * se), reference
    for name, cover in ac.MEASURED.items():
        if name != "gibbs-horseshoe":
            assert np.all(np.array(cover) < reference - 3 * se), name
    assert all(set(names) <= set(ac.MEASURED) for names in ac.CASES_BY_LABEL.values())
    assert ac.measured_coverage("nuts") == {}


@pytest.mark.slow  # about a minute
def test_the_constant_is_what_the_measurement_gives_and_labels_find_their_rows():
    """:func:`measure` at its defaults reproduces :data:`MEASURED` to its three decimals; each
    estimator's approximation draws carry a label that :func:`measured_coverage` finds."""
    frame = ac.measure()
    got = {name: (round(float(r.cover_50), 3), round(float(r.cover_90), 3)) for name, r in frame.iterrows()}
    assert got == ac.MEASURED
    from sparsebayes.inference import AdaptiveSparseRegressor, BLSRegressor, SparseProbitClassifier
    from sparsebayes.models import HorseshoePrior, LaplacePrior

    X = ac.design()
    y = X[:, 0] - X[:, 1] + np.random.default_rng(0).normal(size=X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {"em-laplace": AdaptiveSparseRegressor(prior=LaplacePrior(2.0), noise_var=1.0).fit(X, y),
                "em-horseshoe": AdaptiveSparseRegressor(prior=HorseshoePrior(0.5), noise_var=1.0).fit(X, y),
                "em-probit-laplace": SparseProbitClassifier(prior=LaplacePrior(2.0)).fit(X, y > 0),
                "type2-bls": BLSRegressor().fit(X, y)}
    for case, est in fits.items():
        attrs = est.to_inference_data(draws=10).posterior.attrs
        assert case in ac.measured_coverage(attrs["inference"], attrs.get("prior")), (case, dict(attrs))
