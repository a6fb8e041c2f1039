"""The first-fit benchmark's worker: one fresh process for one estimator gives a complete row."""
from sparsebayes.comparisons.bench import first_fit


def test_the_worker_returns_a_row_with_every_field(tmp_path):
    row = first_fit.run_worker("SMLRClassifier", threads=1, cache_dir=tmp_path / "cache")
    assert set(first_fit.FIELDS) <= set(row)
    assert row["estimator"] == "SMLRClassifier" and row["side"] == "ours" and row["cache"] == "on"
    for key in ("import_s", "first_fit_s", "second_fit_s"):
        assert isinstance(row[key], float) and row[key] >= 0.0
    assert any((tmp_path / "cache").iterdir())  # the switch reached the fresh process and it wrote the cache
    assert first_fit.table([row, {**row, "side": "peer", "cache": "off"}])[0]["estimator"] == "SMLRClassifier"
