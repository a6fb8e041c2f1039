"""The reproductions page tells apart rows that differ only in a setting the paper has no row for."""
from sparsebayes.comparisons.reproduce_report import write_report


def test_rows_without_a_paper_counterpart_show_their_basis(tmp_path):
    rows = [{"method": "smlr", "basis": "linear", "errors": 13, "n_reps": 2},
            {"method": "smlr", "basis": "rbf", "errors": 8, "n_reps": 2}]
    payload = {"experiment": "toy-digits", "seconds": 1.0, "rows": rows, "paper": []}
    text = write_report([payload], tmp_path / "report.md").read_text()
    table = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| smlr")]
    assert sorted((r[1], r[2]) for r in table) == [("basis = linear", "13"), ("basis = rbf", "8")]
