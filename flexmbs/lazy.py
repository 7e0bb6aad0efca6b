"""Imports paid for when used (issue 22, start-up): a package's public names loaded from their
submodules on first use, and a module imported at its first attribute.

Why: a command pays for every module it imports, used or not (``python -X importtime``):
``scipy.sparse`` or ``scipy.linalg`` cost about 0.25 s of CPU over numpy, because scipy's
array-API layer walks numpy's namespace (and so imports ``numpy.f2py`` and ``numpy.testing``),
which a rigid-body run on the compiled step never needs.  Both helpers import with
``importlib.import_module``, so a module is still imported once and a missing one raises the usual
``ModuleNotFoundError`` at its first use.
"""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


def lazy_package(package: str, public: dict[str, str]):
    """``(__getattr__, __dir__)`` for the package named ``package`` (PEP 562).

    ``public`` maps each public name to the module it comes from; a name equal to its module's
    last part is that module.  Another name that is a submodule of the package (``pkg.name``) is
    imported as such; anything else is an ``AttributeError`` naming it.  A name once loaded is
    set as the package's global, so later uses cost a dictionary look-up.
    """
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str):
        source = public.get(name)
        if source is None:
            if name.startswith("__") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")        # the import sets the attribute
        module = importlib.import_module(source)
        value = module if source.rpartition(".")[2] == name else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__


class LazyModule(ModuleType):
    """The module ``name``, imported at the first use of one of its attributes.

    ``sparse = LazyModule("scipy.sparse")`` in place of ``from scipy import sparse`` at a module's
    top: ``sparse.csr_array(...)`` then imports scipy.sparse the first time it runs.  Each
    attribute read is kept on this object, so a hot loop pays the import machinery once.
    """

    def __init__(self, name: str):
        super().__init__(name, f"{name}, imported at its first use")

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):            # copy/pickle/inspect probing: no import for them
            raise AttributeError(attribute)
        value = getattr(importlib.import_module(self.__name__), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (lazy)>"
