"""How the package ``__init__`` files export their public names: each name written once.

A package lists its public names once, in a table ``name -> submodule that defines it``;
:func:`lazy_exports` turns that table into the package's ``__all__``, its PEP 562
``__getattr__`` (the submodule is imported when the name is first used, so that ``import
sparsebayes.inference`` does not load scikit-learn, NumPyro's samplers and every engine before
one is used) and its ``__dir__`` (``__all__`` and nothing else: not the modules the
``__init__`` itself imports).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys


def lazy_exports(package, table, own=()):
    """``(__all__, __getattr__, __dir__)`` for ``package`` exporting ``table`` and ``own``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    table : dict
        Public name -> the module defining it, relative to ``package`` (``"typeii_estimators"``),
        or ``(module, attribute)`` where the name differs from the attribute it is read from.
    own : iterable of str
        Public names the ``__init__`` defines itself (functions, submodules it exports by name).

    Returns
    -------
    all_ : list of str
        ``own`` then ``table``'s names, each once (a name in both is a ``ValueError``).
    getattr_ : callable
        The module ``__getattr__``: a name in ``table`` is imported from its module; any other
        non-dunder name that is a submodule of ``package`` is imported as one (attribute access
        such as ``sparsebayes.inference.engines.typeii`` works without an explicit import); anything else
        is an ``AttributeError``. The value is stored in the package's namespace, so each name is
        resolved once.
    dir_ : callable
        The module ``__dir__``: ``all_``, sorted.
    """
    own = list(own)
    twice = sorted(set(own) & set(table))
    if twice:
        raise ValueError(f"{package} exports {twice} both as its own and from a submodule")
    all_ = own + [name for name in table if name not in own]

    def __getattr__(name):
        if name in table:
            where = table[name]
            module, attribute = where if isinstance(where, tuple) else (where, name)
            value = getattr(importlib.import_module(f"{package}.{module}"), attribute)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        vars(sys.modules[package])[name] = value
        return value

    def __dir__():
        return sorted(all_)

    return all_, __getattr__, __dir__
