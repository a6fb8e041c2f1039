"""Sphinx configuration of the sparsebayes documentation.

Build locally (from the repository root, with ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The notebooks in ``notebooks/`` are copied into ``docs/notebooks/`` (git-ignored) at the start of
each build, because Sphinx only reads documents under its source directory; they are rendered as
stored and never executed (``nb_execution_mode = "off"``).
"""
import os
import re
import shutil
import tempfile
from pathlib import Path

import sparsebayes

ROOT = Path(__file__).resolve().parents[1]

project = "sparsebayes"
author = "the sparsebayes developers"
copyright = "the sparsebayes developers"  # noqa: A001  (Sphinx's name)
release = version = sparsebayes.__version__

extensions = [
    "myst_nb",  # Markdown pages (MyST) and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # numpydoc-style docstrings
    "sphinx.ext.mathjax",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints", "jupyter_execute"]

# MyST: "$...$" maths, heading anchors so that links such as guide.md#compilation-and-the-disk-cache resolve
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # render the notebooks as stored; the test suite executes them

# autodoc: document the objects where users import them from (``sparsebayes.inference.RVMRegressor``),
# in source order, with the docstrings of the methods they inherit
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_inherit_docstrings = True
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = "sparsebayes"
html_static_path = []
html_theme_options = {"description": "Sparse Bayesian learning: point estimates beside posteriors"}


def _copy_notebooks(app, config):
    """Copy ``notebooks/*.ipynb`` into ``docs/notebooks/`` where a copy is missing or stale."""
    target = Path(app.srcdir) / "notebooks"
    target.mkdir(exist_ok=True)
    for src in sorted((ROOT / "notebooks").glob("*.ipynb")):
        dst = target / src.name
        if dst.exists() and dst.read_bytes() == src.read_bytes():
            continue
        fd, tmp = tempfile.mkstemp(dir=target, suffix=".tmp")  # atomic: a concurrent build never reads half a file
        os.close(fd)
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out members scikit-learn defines (``get_params``, ``set_output``, metadata routing).

    They are documented by scikit-learn; their docstrings refer to labels of scikit-learn's own
    site that do not exist here.
    """
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "fget", None), "__module__", None)
    if module is not None and not module.startswith("sparsebayes"):
        return True
    return None


_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w\\])(\w*[A-Za-z0-9])(_+)(?=[\s.,;:)\]]|$)")
_LITERAL_SPAN = re.compile(r"(``.*?``|`[^`]*`_?_?)")


def _escape_names(text):
    """``coef_`` -> ``coef\\_`` outside literal spans, so that reST does not read a link reference."""
    parts = _LITERAL_SPAN.split(text)
    return "".join(p if i % 2 else _TRAILING_UNDERSCORE.sub(lambda m: m.group(1) + m.group(2).replace("_", "\\_"), p)
                   for i, p in enumerate(parts))


def _escape_fitted_attributes(app, what, name, obj, options, lines):
    """Escape scikit-learn style names (``coef_``, ``stalled_``) written in docstring prose.

    In reStructuredText a word ending in ``_`` is a hyperlink reference, so prose such as
    "stalled_ (stopped on a cycle)" fails the build with "Unknown target name". Runs after
    napoleon has turned the numpydoc sections into directives, leaves directive lines, field
    names, doctest lines and literal blocks as they are.
    """
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith(("..", ">>>", "... ")):
            if stripped.endswith("::") or stripped.startswith(".. code"):
                literal_indent = indent
            continue
        if stripped.startswith(":"):
            head, sep, rest = stripped[1:].partition(":")
            lines[i] = line[:indent] + ":" + head + sep + (_escape_names(rest) if sep else "")
        else:
            lines[i] = _escape_names(line)
        if stripped.endswith("::"):
            literal_indent = indent


def setup(app):
    app.connect("config-inited", _copy_notebooks)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-docstring", _escape_fitted_attributes)
