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
    ],
)
def test_usage_errors_exit_2_with_a_message_before_anything_runs(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(argv + ["--out", str(tmp_path)])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing ran: the valid id before the bad one wrote nothing


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
