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
def assert_table_is_registry():
    """``assert_table_is_registry(built_in, registry, function)``: each ``(module, class)`` of a registry's
    built-in table is what the registry holds under the class's ``name``, and no models module calls
    ``function`` (the registry's ``register_*``) on import: the table alone registers the built-ins."""
    def check(built_in, registry, function):
        for module, attribute in built_in:
            cls = getattr(__import__(module, fromlist=[attribute]), attribute)
            assert registry[cls.name] is cls
        assert _registers_on_import(function) == []  # no module-level call, nor a decorator use

    return check
