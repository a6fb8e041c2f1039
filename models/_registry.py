"""What the two registries (hierarchies, :mod:`.priors`; likelihoods, :mod:`.likelihoods`) share:
registering a class under its ``name``, and asking an object for the pieces an engine needs."""
from __future__ import annotations


def registrar(registry, kind):
    """A decorator adding a class to ``registry`` under its class attribute ``name`` (a non-empty
    string, else a ``ValueError`` saying a ``kind`` needs one)."""

    def register(cls):
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {kind} needs a class attribute 'name' (a non-empty string); {cls.__name__} has {name!r}")
        registry[name] = cls
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
