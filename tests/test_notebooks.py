"""Every notebook in notebooks/ runs top to bottom (public API only, small data) and is stored with the
outputs of such a run, which the documentation shows."""
import importlib.util
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


#: Executed by the default suite: the notebook that starts from a DataFrame; the others run with ``-m slow``
#: (their stored outputs are checked by default below).
DEFAULT_RUN = "compare_your_data.ipynb"


@pytest.mark.parametrize("path", [p if p.name == DEFAULT_RUN else pytest.param(p, marks=pytest.mark.slow)
                                  for p in NOTEBOOKS], ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    # a sampler's warning means its draws, which the prose reads, may be biased or unmixed
    stderr = "".join(o.get("text", "") for o in outputs if o.output_type == "stream" and o.get("name") == "stderr")
    assert "divergent transitions" not in stderr and "have not mixed" not in stderr, stderr


def _execute_script():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "docs" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_with_its_outputs(path):
    """The docs render the notebooks as stored: each file must carry the outputs of one run, top to
    bottom (``python docs/execute_notebooks.py`` writes them), none of them an error, and stay small."""
    assert path.stat().st_size <= _execute_script().MAX_BYTES, f"{path.name}: {path.stat().st_size} bytes"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name} was not executed top to bottom in one kernel (execution counts {counts}): "
        "run python docs/execute_notebooks.py")
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert outputs and not [o for o in outputs if o.output_type == "error"]
