"""The README's Python example runs as written, in a fresh process, in an empty directory.

Every fenced ```python block of README.md is run in order in one script (so a later block may
use an earlier one's names), with nothing shortened: what a user pastes is what runs. The example
must also stay healthy: a sampler warning about divergences or unmixed chains in its output means
the README shows draws it should not.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text):
    """The bodies of the fenced ```python blocks of a Markdown text, in order."""
    return re.findall(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.S | re.M)


def test_the_readme_has_a_python_example_near_the_top():
    text = README.read_text(encoding="utf-8")
    blocks = python_blocks(text)
    assert blocks, "README.md has no ```python example"
    first_line = text[: text.index("```python")].count("\n") + 1
    assert first_line <= 40, f"the example starts on line {first_line}: keep it within the first 40 lines"


def test_the_readme_python_example_runs_as_written(tmp_path):
    script = tmp_path / "readme_example.py"
    script.write_text("\n\n".join(python_blocks(README.read_text(encoding="utf-8"))), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, f"the README example failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    assert "divergent transitions" not in done.stderr and "have not mixed" not in done.stderr, done.stderr
    if "cmp.save(" in script.read_text(encoding="utf-8"):
        assert (tmp_path / "report" / "report.md").is_file()
