"""The documentation site builds with Sphinx, warnings as errors, and documents the public API.

The same command a user runs (``docs/index.md``), into a temporary directory: a docstring whose
reStructuredText does not parse, a page missing from the table of contents, a broken cross-page
link or an object autodoc cannot import fails the build. The notebooks are rendered as stored
(``nb_execution_mode = "off"``), with their stored outputs; ``tests/test_notebooks.py`` executes them.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_docs_build_without_warnings_and_document_the_public_api(tmp_path):
    html = tmp_path / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(html)]
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, f"sphinx-build failed:\n{done.stdout[-5000:]}\n{done.stderr[-10000:]}"

    for page in ("index", "concepts", "guide", "api", "reproducing", "benchmarks", "references", "changelog",
                 "notebooks/adaptive_sparseness", "notebooks/smlr", "notebooks/type2_and_bayesian_lasso"):
        assert (html / f"{page}.html").is_file(), f"{page}.html was not built"
    for page in sorted((ROOT / "notebooks").glob("*.ipynb")):  # shown with the outputs stored in the file
        rendered = (html / "notebooks" / f"{page.stem}.html").read_text(encoding="utf-8")
        assert "cell_output" in rendered, f"notebooks/{page.name} rendered without outputs"

    import sparsebayes.inference
    import sparsebayes.models

    api = (html / "api.html").read_text(encoding="utf-8")
    documented = ["sparsebayes.compare", "sparsebayes.comparisons.Comparison"]
    documented += [f"sparsebayes.inference.{name}" for name in sparsebayes.inference.__all__]
    documented += [f"sparsebayes.models.{name}" for name in sparsebayes.models.__all__]
    missing = [name for name in documented if f'id="{name}"' not in api]
    assert not missing, f"not in the API reference (docs/api.rst): {missing}"
