"""Every public name has a docstring: the exports of the five packages and the public methods of
the public classes.

"Public" is what a user is told to import: a package's ``__all__``, the names it loads lazily
(``_LAZY``) and the functions and classes its ``__init__`` defines itself (not starting with
``_``); for each public class, every public method and property that sparsebayes defines (in the
class or one of its own base classes; what scikit-learn provides, ``get_params`` and the like, is
scikit-learn's to document). A method that overrides one with a docstring inherits it
(``inspect.getdoc``), as the documentation site shows it. Exported data (a registry dict) has no
docstring of its own: it must be described in ``docs/api.rst`` instead.
"""
import importlib
import inspect
from pathlib import Path

import pytest

PACKAGES = ("sparsebayes", "sparsebayes.models", "sparsebayes.inference", "sparsebayes.comparisons", "sparsebayes.testing")
API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.rst"

def exported_names(package):
    """The public names of ``package``: ``__all__``, ``_LAZY`` and what its ``__init__`` defines."""
    module = importlib.import_module(package)
    names = set(getattr(module, "__all__", ())) | set(getattr(module, "_LAZY", {}))
    for name, value in vars(module).items():
        if (not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
                and getattr(value, "__module__", None) == package):
            names.add(name)
    return sorted(names)


def _own_members(cls):
    """Public methods and properties that sparsebayes classes define on ``cls``: name -> (defined where, object).

    ``object`` is the attribute as ``cls`` sees it, so that ``inspect.getdoc`` finds a docstring an
    override inherits."""
    members = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("sparsebayes"):
            continue
        for name, raw in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(raw, property):
                members[name] = (f"{klass.__module__}.{klass.__qualname__}.{name}", raw)
            elif inspect.isfunction(raw) or isinstance(raw, (staticmethod, classmethod)):
                members[name] = (f"{klass.__module__}.{klass.__qualname__}.{name}", getattr(cls, name))
    return members


def public_objects():
    """``(public name, defined where, object or None for data)`` for every export (under each
    package that exports it) and every public class's members."""
    found = []

    def add(qualified, where, obj):
        found.append((qualified, where, obj))

    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in exported_names(package):
            obj = getattr(module, name)
            qualified = f"{package}.{name}"
            if inspect.ismodule(obj):
                continue
            if not callable(obj):
                add(qualified, qualified, None)
                continue
            add(qualified, f"{getattr(obj, '__module__', package)}.{getattr(obj, '__qualname__', name)}", obj)
            if inspect.isclass(obj):
                for member, (where, raw) in sorted(_own_members(obj).items()):
                    add(f"{qualified}.{member}", where, raw)
    return found


def docstring(obj):
    if isinstance(obj, property):
        return inspect.getdoc(obj.fget) or obj.__doc__
    return inspect.getdoc(obj)  # a method without its own docstring inherits the overridden one's


OBJECTS = public_objects()


def _param(qualified, where, obj):
    return pytest.param(qualified, where, obj, id=qualified)


def test_the_walk_finds_the_estimators_and_their_methods():
    names = {q for q, _, _ in OBJECTS}
    for expected in ("compare", "RVMRegressor", "SMLRClassifier.predict_proba", "LaplacePrior.from_lam",
                     "Comparison.summary", "LinearFeatures.transform", "BayesianLassoRegressor.fit"):
        assert any(name.endswith(f".{expected}") for name in names), expected


@pytest.mark.parametrize(("qualified", "where", "obj"), [_param(*found) for found in OBJECTS])
def test_public_name_has_a_docstring(qualified, where, obj):
    if obj is None:  # exported data: described on the API page
        assert qualified.rpartition(".")[2] in API_PAGE.read_text(encoding="utf-8"), \
            f"{qualified} is exported data: describe it in docs/api.rst"
        return
    doc = docstring(obj)
    assert doc and doc.strip(), f"{qualified} (defined as {where}) has no docstring"
