"""Fixtures shared by the model tests of this folder."""
import ast
from pathlib import Path

import pytest

#: The ``sparsebayes.models`` sources.
MODELS = Path(__file__).resolve().parents[2] / "models"


def _registers_on_import(function):
    """The ``models`` source files that call ``function`` (a registry's ``register_*``) when imported: a
    module-level call (a statement or a loop) or a decorator use."""
    found = []
    for path in sorted(MODELS.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)] if isinstance(node, (ast.Expr, ast.For)) else []
            names = [getattr(c.func, "id", getattr(c.func, "attr", None)) for c in calls]
            names += [getattr(d, "id", getattr(d, "attr", None)) for d in getattr(node, "decorator_list", [])]
            if function in names:
                found.append(path.relative_to(MODELS).as_posix())
                break
    return found


@pytest.fixture
def registers_on_import():
    """:func:`_registers_on_import`: which models modules register a class with ``function`` on import."""
    return _registers_on_import
