"""Execute the notebooks in ``notebooks/`` in place, so that the files carry their outputs.

The documentation renders each notebook as stored (``nb_execution_mode = "off"`` in
``docs/conf.py``), so the outputs a reader sees on the site are the ones saved in the file. Run
this after changing a notebook or an API a notebook calls, from the repository root::

    python docs/execute_notebooks.py                      # every notebook
    python docs/execute_notebooks.py notebooks/smlr.ipynb # some of them

Each notebook runs top to bottom in a fresh ``python3`` kernel, in a temporary working directory
(files a notebook writes, such as a compare report, are not left in the repository). A cell that
raises stops that notebook and leaves its file untouched. The executed notebook is written back
only if it is under :data:`MAX_BYTES` (figures are stored as PNG by the inline backend; a bigger
file means an output that does not belong in the repository, and the largest outputs are listed)
and only if the file did not change while it ran (someone else's edit is never overwritten).
Execution timings are not recorded, so re-running an unchanged notebook changes only what its
cells print and draw. The kernel ignores tqdm's warning that ipywidgets is not installed
(:data:`IGNORED_WARNINGS`): it says nothing about the notebook and would store a local path.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
#: Largest notebook file written back (bytes).
MAX_BYTES = 1_500_000
#: ``PYTHONWARNINGS`` entries added for the kernel (``action:message-start``).
IGNORED_WARNINGS = ("ignore:IProgress not found",)


def _largest_outputs(nb, n=3):
    sizes = [(len(json.dumps(o)), i, o.get("output_type"))
             for i, cell in enumerate(nb.cells) if cell.cell_type == "code" for o in cell.get("outputs", [])]
    return [f"cell {i}: {kind}, {size} bytes" for size, i, kind in sorted(sizes, reverse=True)[:n]]


def execute(path, *, timeout=900):
    """Execute the notebook at ``path`` and write it back with its outputs; returns a one-line status."""
    path = Path(path)
    before = path.read_bytes()
    nb = nbformat.reads(before.decode("utf-8"), as_version=4)
    env = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [env, *IGNORED_WARNINGS]))  # the kernel inherits it
    try:
        with tempfile.TemporaryDirectory() as work:
            NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": work}}).execute()
    finally:
        if env is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = env
    text = nbformat.writes(nb)
    if not text.endswith("\n"):
        text += "\n"
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise RuntimeError(f"{path}: {size} bytes executed, over {MAX_BYTES}; largest outputs: "
                           + "; ".join(_largest_outputs(nb)))
    if path.read_bytes() != before:
        return f"{path}: changed while it ran, not written (run it again)"
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # atomic: a reader never sees half a file
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, path.stat().st_mode)
    os.replace(tmp, path)
    return f"{path}: executed, {size} bytes"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to execute (default: notebooks/*.ipynb)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell (default 900)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    failed = 0
    for path in paths:
        try:
            print(execute(path, timeout=args.timeout), flush=True)
        except Exception as exc:  # noqa: BLE001  (report every notebook, then fail)
            failed += 1
            print(f"{path}: FAILED, file left as it was: {type(exc).__name__}: {str(exc)[-2000:]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
