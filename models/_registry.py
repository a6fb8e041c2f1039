"""What the two registries (hierarchies, :mod:`.priors`; likelihoods, :mod:`.likelihoods`) share:
registering a class under its ``name``, and asking an object for the pieces an engine needs."""
from __future__ import annotations

import importlib
from collections.abc import MutableMapping


class Registry(MutableMapping):
    """A registry: name -> class, whose built-in classes are a table read on first use.

    ``built_in`` lists ``(module, class name)`` pairs; the first read or write of the registry
    imports each module and registers its class under the class's ``name``, in the table's order,
    before anything registered by a user. The module that holds the registry then imports none of
    the modules that define the built-ins (they import it, for their base pieces), so there is no
    import circle, and every built-in name is reachable however the package was imported. A user's
    own class is added with the registry's ``register`` decorator (:func:`registrar`), which
    replaces a class registered under the same name.
    """

    def __init__(self, kind, built_in=()):
        self.kind = kind
        self.built_in = tuple(built_in)
        self._classes = {}
        self._loaded = False

    def _load(self):
        if self._loaded:
            return
        self._loaded = True  # first: a built-in module that reads the registry while loading does not recurse
        try:
            for module, attribute in self.built_in:
                cls = getattr(importlib.import_module(module), attribute)
                self._classes[check_name(cls, self.kind)] = cls
        except BaseException:
            self._loaded = False
            raise

    def __getitem__(self, name):
        self._load()
        return self._classes[name]

    def __setitem__(self, name, cls):
        self._load()
        self._classes[name] = cls

    def __delitem__(self, name):
        self._load()
        del self._classes[name]

    def __iter__(self):
        self._load()
        return iter(self._classes)

    def __len__(self):
        self._load()
        return len(self._classes)

    def __repr__(self):
        self._load()
        return repr(self._classes)


def check_name(cls, kind):
    """``cls.name``, a non-empty string (the registry key), else a ``ValueError`` saying a ``kind``
    needs one."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"a {kind} needs a class attribute 'name' (a non-empty string); {cls.__name__} has {name!r}")
    return name


def registrar(registry, kind):
    """A decorator adding a class to ``registry`` under its class attribute ``name`` (a non-empty
    string, else a ``ValueError`` saying a ``kind`` needs one)."""

    def register(cls):
        registry[check_name(cls, kind)] = cls
        return cls

    register.__name__ = register.__qualname__ = f"register_{kind}"
    register.__doc__ = f"Add a {kind} class to the registry under its ``name`` (usable as a decorator)."
    return register


def has_piece(obj, name):
    """Whether ``obj`` has the engine piece ``name``, asked of its class first: a piece that is a
    property (``LaplacePrior.bound_ridge_precision``) is then not evaluated, which on a float
    field would dispatch, and on a first fit compile, a program of its own."""
    return hasattr(type(obj), name) or hasattr(obj, name)


def missing_pieces(obj, pieces):
    """The names among ``pieces`` that ``obj`` lacks (:func:`has_piece`)."""
    return [m for m in pieces if not has_piece(obj, m)]


def able(registry, pieces):
    """The registered names whose classes have every one of ``pieces``, sorted."""
    return sorted(n for n, c in registry.items() if all(hasattr(c, m) for m in pieces))
