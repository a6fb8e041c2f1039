"""The likelihood registry: built-ins from an explicit table (:data:`sparsebayes.models.likelihoods.BUILT_IN`),
no import circle between the registry, the likelihood modules and the rest of ``sparsebayes.models``:
whichever models module a process imports first, every built-in likelihood and hierarchy is reached by
name, as the class its module defines."""
import subprocess
import sys
from pathlib import Path

import pytest

from sparsebayes.models.likelihoods import BUILT_IN, LIKELIHOODS

MODELS = Path(__file__).resolve().parents[2] / "models"


def _modules():
    """Every module of ``sparsebayes.models`` (the package itself and its subpackage included)."""
    names = []
    for path in sorted(MODELS.rglob("*.py")):
        parts = ("sparsebayes", "models", *path.relative_to(MODELS).with_suffix("").parts)
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


#: After importing one module first: every built-in likelihood and hierarchy is registered, under its
#: name, as the class its own module defines, in the table's order.
CHECK = """
import importlib
from sparsebayes.models.likelihoods import BUILT_IN, LIKELIHOODS, make_likelihood
from sparsebayes.models.priors import BUILT_IN as HIERARCHY_TABLE, HIERARCHIES
for table, registry in ((BUILT_IN, LIKELIHOODS), (HIERARCHY_TABLE, HIERARCHIES)):
    expected = [getattr(importlib.import_module(m), c) for m, c in table]
    assert list(registry.values())[:len(expected)] == expected, (first, list(registry))
assert all(type(make_likelihood(c.name)) is c for c in LIKELIHOODS.values()), first
"""


def test_each_models_module_imported_first_in_one_process():
    """Each models module imported first (every ``sparsebayes.models`` module dropped from
    ``sys.modules`` before it), in one process: the fast form of the test below."""
    code = ("import sys\nfor first in %r:\n" % (_modules(),)
            + "    for m in [m for m in sys.modules if m.startswith('sparsebayes.models')]:\n"
            + "        del sys.modules[m]\n"
            + "    __import__(first)\n"
            + "".join(f"    {line}\n" for line in CHECK.strip().splitlines()))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # a fresh interpreter per module
@pytest.mark.parametrize("first", _modules())
def test_each_models_module_imported_first_in_a_fresh_process(first):
    done = subprocess.run([sys.executable, "-c", f"first = {first!r}\nimport {first}\n{CHECK}"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_the_table_is_the_registry_and_no_module_registers_a_likelihood_on_import(assert_table_is_registry):
    assert_table_is_registry(BUILT_IN, LIKELIHOODS, "register_likelihood")


def test_importing_the_registry_imports_no_likelihood_module_until_it_is_read():
    code = ("import sys\nimport sparsebayes.models._registry\n"
            "import importlib.util as u\n"
            "spec = u.spec_from_file_location('registry_alone', %r)\n"
            "mod = u.module_from_spec(spec); spec.loader.exec_module(mod)\n"
            "assert 'sparsebayes.models.likelihoods.multinomial' not in sys.modules\n"
            "assert 'multinomial' in mod.LIKELIHOODS and 'sparsebayes.models.likelihoods.multinomial' in sys.modules\n"
            % str(MODELS / "likelihoods" / "registry.py"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
