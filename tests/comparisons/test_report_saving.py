"""Saving never destroys a report: ``Comparison.save`` and ``sparsebayes compare`` refuse to write over
an earlier report (the user's edits included) unless told to overwrite, with a message naming the file
and the way to replace it, and they refuse before anything is fitted."""
import numpy as np
import pandas as pd
import pytest
from sparsebayes.comparisons.cli import main
from sparsebayes.comparisons.compare_any import Comparison


def test_save_refuses_before_touching_anything(tmp_path):
    """The refusal comes first: a Comparison with nothing in it (no draws, no estimator) is refused
    without a plot, a summary or a file being made; ``test_compare_any`` saves a real one twice."""
    (tmp_path / "report.html").write_text("edited", encoding="utf-8")
    empty = Comparison(estimator=None, idata=None, samples={}, names=[], design=np.zeros((0, 0)),
                       prior_beta=np.zeros((0, 0)), az=None)
    with pytest.raises(FileExistsError, match=r"report\.html already exists.*pass overwrite=True"):
        empty.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == "edited"


def test_the_command_refuses_a_second_report_into_the_same_folder_before_reading_the_table(tmp_path, capsys,
                                                                                           monkeypatch):
    from sparsebayes.comparisons import compare_csv

    csv = tmp_path / "trial.csv"
    pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.5, 1.0, 2.0]}).to_csv(csv, index=False)
    report = tmp_path / "out" / "compare-trial"
    report.mkdir(parents=True)
    (report / "draws.nc").write_text("an earlier run's draws", encoding="utf-8")

    def must_not_run(*args, **kwargs):
        raise AssertionError("the table was read although the report exists")
    monkeypatch.setattr(compare_csv, "read_table", must_not_run)
    argv = ["--no-compile-cache", "compare", str(csv), "--target", "y", "--no-progress", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "draws.nc already exists" in err and "--overwrite" in err
    assert (report / "draws.nc").read_text(encoding="utf-8") == "an earlier run's draws"
    with pytest.raises(AssertionError, match="the table was read"):  # --overwrite goes on to read it
        main([*argv, "--overwrite"])


def test_the_bundled_comparison_refuses_before_fitting(tmp_path, capsys, monkeypatch):
    """The quickstart (``sparsebayes compare diabetes`` into results/) run a second time: a message
    naming the earlier report and --overwrite, exit status 2, the earlier files untouched, and the data
    never read."""
    from sparsebayes.comparisons import compare

    def must_not_run(name):
        raise AssertionError("the data set was read although the report exists")
    monkeypatch.setattr(compare, "load", must_not_run)
    report = tmp_path / "compare-diabetes"
    report.mkdir()
    (report / "report.md").write_text("edited", encoding="utf-8")
    assert main(["--no-compile-cache", "compare", "diabetes", "--no-progress", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "compare-diabetes/report.md already exists" in err and "--overwrite" in err
    assert sorted(p.name for p in report.iterdir()) == ["report.md"]
    assert (report / "report.md").read_text(encoding="utf-8") == "edited"
