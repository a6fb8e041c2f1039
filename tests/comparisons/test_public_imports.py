"""``sparsebayes.comparisons`` uses only the public names of ``sparsebayes.inference`` and
``sparsebayes.models`` (imports flow one way, through the public surface).

Every import in a comparisons module (``comparisons/**/*.py``, read with ``ast``, function-level
imports included) that reaches into ``inference`` or ``models`` must name a public module (no path
component starting with ``_``) and a public name: not starting with ``_``, and in the target
module's ``__all__`` (or one of its public submodules) where the module declares one; a module
without ``__all__`` exports its names not starting with ``_`` (Python's own rule for ``import *``).
"""
import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

COMPARISONS = Path(__file__).resolve().parents[2] / "comparisons"
TARGETS = ("sparsebayes.inference", "sparsebayes.models")


def imports_of(path):
    """``(line, module, name or None)`` for each import of ``inference`` / ``models`` in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(TARGETS):
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names if alias.name.startswith(TARGETS)]
    return found


def is_submodule(module, name):
    return hasattr(module, "__path__") and importlib.util.find_spec(f"{module.__name__}.{name}") is not None


def why_private(module_name, name):
    """``None`` when ``from module_name import name`` (or ``import module_name``) is public, else why not."""
    private = [part for part in module_name.split(".") if part.startswith("_")]
    if private:
        return f"module {module_name} is private ({private[0]})"
    if name is None:
        return None
    if name.startswith("_"):
        return f"{name} is private"
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    if exported is not None and name not in exported and not is_submodule(module, name):
        return f"{name} is not in {module_name}.__all__"
    return None


FILES = sorted(COMPARISONS.rglob("*.py"))


def test_the_walk_sees_the_comparisons_imports():
    seen = {(module, name) for path in FILES for _, module, name in imports_of(path)}
    assert ("sparsebayes.inference", "RVMRegressor") in seen  # a top-level import (baselines.py)
    assert any(module.startswith("sparsebayes.models") for module, _ in seen)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(COMPARISONS)) for p in FILES])
def test_comparisons_import_only_public_names(path):
    bad = [f"line {line}: from {module} import {name}: {why}" for line, module, name in imports_of(path)
           if (why := why_private(module, name)) is not None]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(("module", "name", "public"), [
    ("sparsebayes.inference.estimators._base", "raw_weights", False),
    ("sparsebayes.inference.estimators.smlr", "_MultinomialLogisticBase", False),
    ("sparsebayes.inference", "RVMClassifier", True),
    ("sparsebayes.inference.engines", "typeii", True),
    ("sparsebayes.inference", "NotExported", False),
    ("sparsebayes.inference.engines.em", "EMData", True),
    ("sparsebayes.inference.engines.em", "jnp", False),  # em declares __all__: an import it uses is not its export
])
def test_the_rule_tells_public_from_private(module, name, public):
    assert (why_private(module, name) is None) is public
