"""The hierarchy registry: built-ins from an explicit table, users' own by a decorator, no import circle.

:data:`sparsebayes.models.priors.BUILT_IN` names each built-in hierarchy's module and class; the
registry imports them on first use, so that ``priors`` (which every family module imports for its
base pieces) imports none of them back, and no module registers itself as a side effect of import.
"""
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from sparsebayes.models.priors import BUILT_IN, HIERARCHIES, make_prior, register_hierarchy

MODELS = Path(__file__).resolve().parents[2] / "models"


def _run(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_importing_priors_imports_no_family_module_until_the_registry_is_read():
    _run("import sys; from sparsebayes.models.priors import HIERARCHIES, BUILT_IN; "
         "families = sorted({m for m, _ in BUILT_IN} - {'sparsebayes.models.priors.registry'}); "
         "assert not [m for m in families if m in sys.modules], [m for m in families if m in sys.modules]; "
         "assert 'horseshoe' in HIERARCHIES; assert all(m in sys.modules for m in families)")


@pytest.mark.parametrize("first", sorted({module for module, _ in BUILT_IN}))
def test_each_built_in_module_imported_first_reaches_every_built_in(first):
    # Whichever module a process imports first, make_prior knows every built-in name, in the table's order.
    _run(f"import {first}; from sparsebayes.models.priors import BUILT_IN, HIERARCHIES, make_prior; "
         "import importlib; expected = [getattr(importlib.import_module(m), c) for m, c in BUILT_IN]; "
         "assert list(HIERARCHIES.values()) == expected, list(HIERARCHIES); "
         "assert all(type(make_prior(c.name)) is c for c in expected)")


def test_the_table_is_the_registry_and_no_module_registers_itself_on_import(assert_table_is_registry):
    assert_table_is_registry(BUILT_IN, HIERARCHIES, "register_hierarchy")


def test_a_users_hierarchy_registers_by_decorator_and_is_reached_by_name():
    @register_hierarchy
    class ToyPrior(NamedTuple):
        """A toy hierarchy (a name is all the registry asks for)."""
        scale: float = 2.0
        name = "toy-registry-check"

        def log_marginal(self, beta):
            return -abs(beta) / self.scale

    try:
        assert HIERARCHIES["toy-registry-check"] is ToyPrior
        assert make_prior("toy-registry-check") == ToyPrior(2.0)
        assert list(HIERARCHIES)[:len(BUILT_IN)] == [getattr(__import__(m, fromlist=[c]), c).name for m, c in BUILT_IN]
    finally:
        del HIERARCHIES["toy-registry-check"]
    assert "toy-registry-check" not in HIERARCHIES


def test_a_class_without_a_name_is_refused():
    class Nameless:
        pass

    with pytest.raises(ValueError, match="needs a class attribute 'name'"):
        register_hierarchy(Nameless)
