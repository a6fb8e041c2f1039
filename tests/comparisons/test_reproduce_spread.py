"""Every ``reproduce`` row with a paper counterpart carries each shared figure's SE and z, and the
report writer sets them beside the paper's."""
import json

import numpy as np
import pytest

from sparsebayes.comparisons import registry as reg
from sparsebayes.comparisons.cli import main
from sparsebayes.comparisons.experiments import figueiredo
from sparsebayes.comparisons.reproduce_report import write_report
from sparsebayes.comparisons.spread import add_spread, paper_figures, paper_row


def _recording(monkeypatch):
    """Record every repetition's ``{method: (test errors, kernels)}`` as the experiments compute it."""
    calls, run = [], figueiredo._kernel_classification_run

    def record(*args):
        calls.append(run(*args))
        return calls[-1]

    monkeypatch.setattr(figueiredo, "_kernel_classification_run", record)
    return calls


@pytest.mark.parametrize("exp_id, reps, n_test, per_rep", [
    ("figueiredo-table3-ripley", 2, 1000, {"error_rate": 0, "n_kernels": 1}),
    ("figueiredo-table4-crabs", 3, 120, {"errors": 0, "n_kernels": 1}),
])
def test_rows_carry_the_se_of_the_per_replication_figures_and_the_papers_z(tmp_path, monkeypatch, exp_id, reps,
                                                                            n_test, per_rep):
    calls = _recording(monkeypatch)
    payload, _ = reg.run_experiment(exp_id, reps=reps, seed=0, out=tmp_path)
    assert json.loads((tmp_path / f"{exp_id}.json").read_text())["rows"] == payload["rows"]
    assert len(calls) == reps
    checked = 0
    for row in payload["rows"]:
        theirs = paper_row(row, payload["paper"])
        if theirs is None:
            continue
        assert row["n_reps"] == reps
        for figure in paper_figures(theirs):
            if figure not in row or row[figure] is None:
                continue
            values = np.array([c[row["method"]][per_rep[figure]] for c in calls], dtype=float)
            if figure == "error_rate":
                values /= n_test
            se = values.std(ddof=1) / np.sqrt(reps)
            assert row[figure] == pytest.approx(values.mean())
            assert row[f"{figure}_se"] == pytest.approx(se, rel=1e-12, abs=1e-15), (row["method"], figure)
            expected_z = None if se == 0 else (values.mean() - theirs[figure]) / se
            assert row[f"{figure}_z"] == pytest.approx(expected_z), (row["method"], figure)
            checked += 1
    assert checked >= 3  # every method the paper also ran, each of its figures


def _payload():
    rows = [{"method": "ours", "dataset": "d", "errors": 10.0, "errors_sd": 2.0, "n_kernels": 4.0, "n_kernels_sd": 0.0},
            {"method": "near", "dataset": "d", "errors": 5.5, "errors_sd": 2.0},
            {"method": "baseline", "dataset": "d", "errors": 7.0, "errors_sd": 1.0}]
    paper = [{"method": "ours", "dataset": "d", "errors": 5, "n_kernels": 6},
             {"method": "near", "dataset": "d", "errors": 5}]
    add_spread(rows, paper, 4)
    return {"experiment": "toy-table", "settings": {"reps": 4}, "seconds": 1.0, "rows": rows, "paper": paper}


def test_spread_of_given_rows():
    rows = {r["method"]: r for r in _payload()["rows"]}
    assert rows["ours"]["errors_se"] == 1.0 and rows["ours"]["errors_z"] == 5.0
    assert rows["ours"]["n_kernels_se"] == 0.0 and rows["ours"]["n_kernels_z"] is None  # no spread: no z
    assert rows["near"]["errors_z"] == pytest.approx(0.5)
    assert "errors_se" not in rows["baseline"]  # no paper counterpart


def test_report_sets_ours_beside_the_paper_with_se_and_z_and_flags_what_is_off(tmp_path):
    path = write_report([_payload()], tmp_path / "report.md", command="sparsebayes reproduce toy-table")
    text = path.read_text()
    header = next(line for line in text.splitlines() if line.startswith("| method") and "| z" in line)
    cells = [c.strip() for c in header.strip("|").split("|")]
    table = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
             if line.startswith("| ours") or line.startswith("| near")]
    by = {(r[0], r[cells.index("figure")]): dict(zip(cells, r)) for r in table if len(r) == len(cells)}
    assert by["ours", "errors"]["ours"] == "10" and by["ours", "errors"]["paper"] == "5"
    assert by["ours", "errors"]["se"] == "1" and by["ours", "errors"]["z"] == "5"
    assert by["ours", "errors"]["off"] == "**yes**" and by["near", "errors"]["off"] == ""
    assert by["ours", "n_kernels"]["off"] == "**yes**"  # 4 against 6 with no spread at all
    assert "baseline" in text.split("no figure of the paper's to set beside them")[1]
    assert "More than 2 SE from the paper's" in text and "ours errors" in text


def test_the_reproduce_command_writes_the_report_of_the_rows_it_ran(tmp_path, monkeypatch):
    payload = _payload()
    seen = {}

    def fake_run(exp_id, **kw):
        seen.update(kw)
        return payload, reg.Result({}, payload["rows"], payload["paper"])

    monkeypatch.setattr(reg, "run_experiment", fake_run)
    report = tmp_path / "docs" / "reproductions.md"
    assert main(["--no-compile-cache", "reproduce", "figueiredo-table4-pima", "--n-jobs", "2", "--out",
                 str(tmp_path), "--report", str(report)]) == 0
    assert seen["n_jobs"] == 2
    assert "| z" in report.read_text() and "--report" in report.read_text()
