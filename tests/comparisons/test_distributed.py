"""Sweeps on a ``dask.distributed`` cluster through joblib give the serial numbers.

Two worker processes (spawned, never forked: JAX has started in this process) run SMLRCV's
cross-validation paths and a small ``reproduce`` run under ``joblib.parallel_backend("dask")``;
the scheduler is asked afterwards whether the tasks ran there.
"""
import json

import numpy as np
import pytest

pytest.importorskip("distributed")
import joblib  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from sparsebayes.comparisons.registry import run_experiment  # noqa: E402
from sparsebayes.inference.estimators.smlr_cv import SMLRCV  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def _tasks_run(client):
    """How many joblib task batches the cluster has computed so far."""
    prefixes = client.run_on_scheduler(lambda dask_scheduler: {name: tp.state_counts["memory"] for name, tp in
                                                              dask_scheduler.task_prefixes.items()})
    return sum(n for name, n in prefixes.items() if "_run_task" in name)


def test_smlrcv_cross_validation_on_the_cluster_equals_the_serial_fit(client):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    kw = dict(features="kernel", kernel_widths=[1.0, 2.0], n_lams=4, cv=3, random_state=0)
    serial = SMLRCV(**kw).fit(X, y)
    before = _tasks_run(client)
    with joblib.parallel_backend("dask"):
        spread = SMLRCV(**kw).fit(X, y)
    assert _tasks_run(client) > before  # the fold paths ran on the cluster
    np.testing.assert_array_equal(spread.cv_errors_, serial.cv_errors_)
    np.testing.assert_array_equal(spread.cv_log_loss_, serial.cv_log_loss_)
    assert (spread.lam_, spread.kernel_width_) == (serial.lam_, serial.kernel_width_)
    np.testing.assert_array_equal(spread.coef_, serial.coef_)


def test_a_reproduction_on_the_cluster_writes_the_serial_rows(client, tmp_path):
    """figueiredo-table3-ripley with two subsets: one task per subset (Jeffreys EM, SVM, RVM)."""
    serial, _ = run_experiment("figueiredo-table3-ripley", reps=2, seed=0, out=tmp_path / "serial")
    before = _tasks_run(client)
    with joblib.parallel_backend("dask"):
        spread, _ = run_experiment("figueiredo-table3-ripley", reps=2, seed=0, out=tmp_path / "dask")
    assert _tasks_run(client) > before
    assert spread["rows"] == serial["rows"]
    assert json.loads((tmp_path / "dask" / "figueiredo-table3-ripley.json").read_text())["rows"] == serial["rows"]
