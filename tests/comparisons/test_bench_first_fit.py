"""The first-fit benchmark's worker: one fresh process for one estimator gives a complete row."""
from sparsebayes.comparisons.bench import first_fit


def test_the_worker_returns_a_row_with_every_field(tmp_path):
    row = first_fit.run_worker("SMLRClassifier", threads=1, cache_dir=tmp_path / "cache")
    assert set(first_fit.FIELDS) <= set(row)
    assert row["estimator"] == "SMLRClassifier" and row["side"] == "ours" and row["cache"] == "on"
    for key in ("import_s", "first_fit_s", "second_fit_s"):
        assert isinstance(row[key], float) and row[key] >= 0.0
    assert row["programs"] >= 1 and row["compile_s"] > 0.0 and row["cache_hits"] == 0  # an empty cache: it compiles
    assert any((tmp_path / "cache").iterdir())  # the switch reached the fresh process and it wrote the cache
    assert first_fit.table([row, {**row, "side": "peer", "cache": "off"}])[0]["estimator"] == "SMLRClassifier"


def test_the_worker_environment_leaves_the_platform_to_jax_unless_named(monkeypatch, tmp_path):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARSEBAYES_COMPILATION_CACHE", "1")
    env = first_fit.worker_env(1)
    assert "JAX_PLATFORMS" not in env  # a GPU where there is one: the bench runs unchanged there
    assert "JAX_COMPILATION_CACHE_DIR" not in env and "SPARSEBAYES_COMPILATION_CACHE" not in env
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"
    env = first_fit.worker_env(2, cache_dir=tmp_path, platform="cpu")
    assert env["JAX_PLATFORMS"] == "cpu" and env["SPARSEBAYES_COMPILATION_CACHE"] == "1"
    assert env["SPARSEBAYES_CACHE_DIR"] == str(tmp_path) and env["MKL_NUM_THREADS"] == "2"


def test_one_failing_estimator_leaves_the_others_rows(monkeypatch):
    def fake(name, side="ours", threads=1, cache_dir=None, timeout=600, platform=None):
        if name == "RVMRegressor" and side == "ours":
            raise RuntimeError("ours RVMRegressor failed")
        first = {"ours": 3.0 if cache_dir is None else 0.4, "peer": 0.1}[side]
        return {"estimator": name, "side": side, "cache": "on" if cache_dir is not None else "off",
                "import_s": 1.0, "first_fit_s": first, "second_fit_s": 0.01, "cache_hits": 2, "pools": "",
                "backend": "cpu", "programs": 2, "compile_s": 0.5}

    monkeypatch.setattr(first_fit, "run_worker", fake)
    rows, failed = first_fit.bench(["SMLRClassifier", "RVMRegressor", "BLSRegressor"], cache="both")
    assert failed == ["RVMRegressor"]
    table = first_fit.table(rows)
    assert [r["estimator"] for r in table] == ["SMLRClassifier", "BLSRegressor"]
    assert table[0]["meets"] == "no/yes"  # 3 s cold against the 2 s aim, 0.4 s cached against 0.5 s
    assert table[0]["cold/peer"] == 3.0 / 0.1 and table[0]["programs"] == 2 and table[0]["XLA compile s"] == 0.5
