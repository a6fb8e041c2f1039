import pytest

from sparsebayes.comparisons.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce"], "name an experiment id"),
        (["reproduce", "figueiredo-fig3-varsel", "no-such-id"], "unknown experiment id(s) no-such-id"),
        (["reproduce", "figueiredo-fig3-varsel", "--reps", "0"], "--reps: must be at least 1, got 0"),
        (["reproduce", "figueiredo-fig3-varsel", "--reps", "two"], "--reps: 'two' is not an integer"),
        (["compare", "crabs", "--chains", "0"], "--chains: must be at least 1"),
        (["compare", "crabs", "--warmup", "-1"], "--warmup: must be at least 0"),
        (["compare", "crabs", "--draws", "2"], "--draws: must be at least 4"),
        (["compare", "crabs", "--seed", "-1"], "--seed: must be in [0, 2**32)"),
        (["reproduce", "figueiredo-fig3-varsel", "--seed", str(2**64)], "--seed: must be in [0, 2**32)"),
        (["reproduce", "--all", "no-such-id"], "pass experiment ids or --all, not both"),
    ],
)
def test_usage_errors_exit_2_with_a_message_before_anything_runs(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(argv + ["--out", str(tmp_path)])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing ran: the valid id before the bad one wrote nothing


def test_an_output_path_that_is_a_file_is_a_usage_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as stop:
        main(["reproduce", "figueiredo-fig3-varsel", "--out", str(blocker / "sub")])
    assert stop.value.code == 2 and "is a file, not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("argv, cached", [(["reproduce", "x"], True), (["--no-compile-cache", "reproduce", "x"], False),
                                          (["list"], False)])
def test_the_command_keeps_compiled_programs_unless_told_not_to(argv, cached, monkeypatch):
    import sparsebayes
    from sparsebayes.comparisons import cli

    calls = []
    monkeypatch.setattr(sparsebayes, "enable_compilation_cache", lambda: calls.append("cache"))
    monkeypatch.setattr(cli, "_cmd_reproduce", lambda args: calls.append("run") or 0)
    monkeypatch.setattr(cli, "_cmd_list", lambda args: calls.append("run") or 0)
    assert main(argv) == 0
    assert calls == (["cache", "run"] if cached else ["run"])


def test_an_unwritable_cache_directory_is_a_note_not_a_failure(monkeypatch, tmp_path, capsys):
    import sparsebayes
    from sparsebayes.comparisons import cli

    blocker = tmp_path / "file"
    blocker.write_text("")
    enable = sparsebayes.enable_compilation_cache
    monkeypatch.setattr(sparsebayes, "enable_compilation_cache", lambda: enable(blocker / "jax"))  # under a file
    monkeypatch.setattr(cli, "_cmd_reproduce", lambda args: 0)
    assert main(["reproduce", "x"]) == 0
    assert "compiled programs are not kept on disk" in capsys.readouterr().err


def test_reports_are_strict_json_and_markdown_sets_ours_beside_the_paper():
    """NumPy NaN / inf scalars became bare NaN / Infinity in the JSON (not JSON); the Markdown had
    our table and the paper's apart, where the contract promises them side by side."""
    import json

    import numpy as np

    from sparsebayes.comparisons.registry import Result, _markdown, jsonable

    rows = [{"method": "smlr", "errors": np.int64(3), "rmse": np.float64("nan"), "x": np.float32("inf")}]
    text = json.dumps(jsonable(rows), allow_nan=False)
    assert json.loads(text) == [{"method": "smlr", "errors": 3, "rmse": None, "x": None}]
    result = Result({"reps": 1}, [{"method": "smlr", "errors": 3.0}, {"method": "svm", "errors": 5.0}],
                    [{"method": "smlr", "errors": 1.0}])
    md = _markdown("demo", result, 1.0)
    joined = md.split("## Ours beside the paper")[1]
    assert "errors: ours / paper" in joined
    assert [line.replace(" ", "") for line in joined.splitlines() if "smlr" in line or "svm" in line] == \
        ["|smlr|3/1|", "|svm|5/–|"]
    assert "## Ours\n" not in md and "## Paper\n" not in md  # not repeated apart


def test_markdown_says_a_claim_the_paper_makes_of_every_row_once():
    from sparsebayes.comparisons.registry import Result, _markdown

    ours = [{"method": "jeffreys-em", "k": k, "n_nonzero": k + 0.5} for k in range(1, 6)]
    claims = [{"method": "jeffreys-em", "k": k, "claim": "close to the identity line"} for k in range(1, 6)]
    md = _markdown("demo", Result({}, ours, claims), 1.0)
    assert md.count("close to the identity line") == 1
    assert "- claim (the paper, for jeffreys-em): close to the identity line" in md
    assert md.count("| jeffreys-em |") == 5
    no_paper = _markdown("demo", Result({}, ours, []), 1.0)
    assert "## Ours\n" in no_paper and "gives no numbers for this experiment" in no_paper
